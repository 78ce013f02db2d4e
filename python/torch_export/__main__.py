"""Exports a PyTorch-born model (a TorchScript .pt or a torch.export .pt2) to ONNX for the engines that read ONNX.

Usage: python -m torch_export --cache DIR MODEL   (PYTHONPATH=python, the venv with python/requirements-pytorch.txt)
Prints one JSON object: {onnx_path, format, source_sha256, exporter, exporter_version, torch_version, export_ms,
cache_hit, input_names, output_names}. The export is kept under DIR/<key>/model.onnx, the key hashing the source's
bytes, torch's version and EXPORT_VERSION, so every cell of a model and every later sweep reuses it. The batch axis
stays symbolic ("batch"), so one export serves every batch size. The ONNX file names its source in its metadata
(pbh.source.path, pbh.source.sha256, pbh.source.format): the PyTorch engines load that source instead.
Errors go to stderr with exit 2 (bad input) or 1 (export failed), one line naming the file and what to do.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from importlib.metadata import version

# Bump when what an export holds changes, so stale cache entries stop matching.
EXPORT_VERSION = 1
INPUTS_EXTRA_FILE = "pbh_inputs.json"


def sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def fail(code: int, message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.exit(code)


def example(specs, torch):
    tensors = []
    for spec in specs:
        shape = [2 if d is None else int(d) for d in spec["shape"]]
        dtype = getattr(torch, spec["dtype"]) if spec["dtype"] != "bool" else torch.bool
        tensors.append(torch.randn(shape, dtype=dtype) if dtype.is_floating_point else torch.zeros(shape, dtype=dtype))
    return tuple(tensors)


def export(path: str, target: str) -> dict:
    import torch  # noqa: PLC0415 - the venv may lack it; the caller says how to install it

    if path.endswith(".pt2"):
        program = torch.export.load(path)
        user = list(program.graph_signature.user_inputs)
        outputs = [str(o) for o in program.graph_signature.user_outputs]
        specs = []
        for node in program.graph.nodes:
            if node.op == "placeholder" and node.name in user:
                value = node.meta["val"]
                specs.append({"name": node.name, "dtype": str(value.dtype).removeprefix("torch."), "shape": [int(d) if str(d).isdigit() else None for d in value.shape]})
        # The program keeps its own dynamic dims (torch.export's Dim): dynamo's exporter writes them as symbolic axes.
        torch.onnx.export(program, example(specs, torch), target, input_names=user, output_names=outputs, dynamo=True, verbose=False)
        return {"format": "torch_export", "exporter": "torch.onnx.export(dynamo=True) with onnxscript", "exporter_version": f"torch {torch.__version__}, onnxscript {version('onnxscript')}", "input_names": user, "output_names": outputs}
    extra = {INPUTS_EXTRA_FILE: ""}
    module = torch.jit.load(path, map_location="cpu", _extra_files=extra).eval()
    if not extra[INPUTS_EXTRA_FILE]:
        fail(2, f"{path}: a TorchScript file records no input shapes, and this one has no {INPUTS_EXTRA_FILE} extra file. Save it with torch.jit.save(m, path, _extra_files={{'{INPUTS_EXTRA_FILE}': json.dumps([{{'name': 'x', 'dtype': 'float32', 'shape': [None, 3, 224, 224]}}])}}), or export it with torch.export to a .pt2, which records them")
    specs = json.loads(extra[INPUTS_EXTRA_FILE])
    names = [a.name for a in module.forward.schema.arguments[1:]]
    if [s["name"] for s in specs] != names:
        fail(2, f"{path}: {INPUTS_EXTRA_FILE} names inputs {[s['name'] for s in specs]}, but forward takes {names}")
    returns = module.forward.schema.returns
    outputs = [f"output_{i}" for i in range(len(returns[0].type.elements()))] if len(returns) == 1 and str(returns[0].type).startswith("Tuple[") else ["output"]
    axes = {s["name"]: {i: f"{s['name']}_{i}" if i else "batch" for i, d in enumerate(s["shape"]) if d is None} for s in specs}
    axes.update({o: {0: "batch"} for o in outputs})
    # dynamo's exporter cannot take a ScriptModule (torch.export does not trace TorchScript): the TorchScript-based one can.
    torch.onnx.export(module, example(specs, torch), target, input_names=names, output_names=outputs, dynamic_axes=axes, dynamo=False)
    return {"format": "torchscript", "exporter": "torch.onnx.export(dynamo=False), TorchScript-based", "exporter_version": f"torch {torch.__version__}", "input_names": names, "output_names": outputs}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m torch_export")
    parser.add_argument("--cache", required=True)
    parser.add_argument("model")
    args = parser.parse_args()
    path = os.path.abspath(args.model)
    if not os.path.isfile(path):
        fail(2, f"{args.model}: no such file")
    if not path.endswith((".pt", ".pt2")):
        fail(2, f"{args.model}: a PyTorch model is a TorchScript .pt or a torch.export .pt2")
    try:
        import torch  # noqa: PLC0415
    except ImportError as e:
        fail(2, f"{args.model} is a PyTorch model, and this venv has no torch ({e}): npx pbh doctor --fix --engine pytorch")
    source_sha = sha256(path)
    key = hashlib.sha256(json.dumps([source_sha, torch.__version__, EXPORT_VERSION]).encode()).hexdigest()[:32]
    folder = os.path.join(os.path.abspath(args.cache), key)
    target, summary_path = os.path.join(folder, "model.onnx"), os.path.join(folder, "export.json")
    if os.path.isfile(target) and os.path.isfile(summary_path):
        with open(summary_path, encoding="utf-8") as f:
            summary = json.load(f)
        print(json.dumps({**summary, "cache_hit": True}))
        return
    os.makedirs(folder, exist_ok=True)
    start = time.perf_counter()
    partial = target + ".partial"
    try:
        summary = export(path, partial)
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - the exporters raise many types; the message names the part that failed
        fail(1, f"{args.model}: torch.onnx.export failed: {type(e).__name__}: {str(e)[:2000]}")
    import onnx  # noqa: PLC0415

    model = onnx.load(partial)
    for k, v in {"pbh.source.path": path, "pbh.source.sha256": source_sha, "pbh.source.format": summary["format"], "pbh.exporter": f"{summary['exporter']} ({summary['exporter_version']})"}.items():
        model.metadata_props.add(key=k, value=v)
    onnx.save(model, target)
    os.remove(partial)
    if os.path.exists(partial + ".data"):
        os.remove(partial + ".data")
    summary = {**summary, "onnx_path": target, "source_sha256": source_sha, "torch_version": torch.__version__, "export_ms": (time.perf_counter() - start) * 1000}
    with open(summary_path, "w", encoding="utf-8") as f:
        json.dump(summary, f)
    print(json.dumps({**summary, "cache_hit": False}))


if __name__ == "__main__":
    main()
