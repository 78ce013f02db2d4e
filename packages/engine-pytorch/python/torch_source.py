"""What the PyTorch engines load: an ONNX file through onnx2torch, a TorchScript .pt, or a torch.export .pt2.

An ONNX file that PBH exported from a PyTorch model (python/torch_export) names its source in its metadata
(pbh.source.*): the engines then load that source natively, as long as its sha256 still matches, and the ONNX file
is only what the other engines and the model analysis read.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import zipfile
from dataclasses import dataclass, field
from typing import Any

import torch

from pbh_worker import WorkerError

# torch dtypes against the protocol's names (pbh_worker/channel.py DTYPES).
DTYPES: dict[torch.dtype, str] = {
    torch.float32: "float32",
    torch.float64: "float64",
    torch.float16: "float16",
    torch.int8: "int8",
    torch.uint8: "uint8",
    torch.int32: "int32",
    torch.int64: "int64",
    torch.bool: "bool",
}
TORCH_DTYPES = {name: dtype for dtype, name in DTYPES.items()}
# A TorchScript file records no input shapes; PBH's exporter and test models store them in this extra file.
INPUTS_EXTRA_FILE = "pbh_inputs.json"


@dataclass
class Source:
    """A model ready to call: `module(*inputs)` in `input_names` order returns a tensor or a tuple in `output_names` order."""

    module: Any
    kind: str  # "onnx" | "torchscript" | "torch_export"
    input_names: list[str]
    output_names: list[str]
    load_ms: float
    facts: dict[str, Any] = field(default_factory=dict)


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def kind_of(path: str) -> str:
    if path.endswith(".pt2"):
        return "torch_export"
    if path.endswith(".pt"):
        return "torchscript"
    if zipfile.is_zipfile(path):
        # torch.jit.save and torch.export.save both write zip archives; an ONNX file is a protobuf.
        names = zipfile.ZipFile(path).namelist()
        return "torch_export" if any(n.endswith("serialized_exported_program.json") or "/models/" in n for n in names) else "torchscript"
    return "onnx"


def load(path: str, prefer_source: bool) -> Source:
    kind = kind_of(path)
    if kind == "onnx":
        recorded = _recorded_source(path) if prefer_source else None
        if recorded is not None:
            source = load(recorded["path"], prefer_source=False)
            source.facts.update({"onnx_export": path, "source_from_onnx_metadata": True})
            return source
        return _load_onnx(path)
    if kind == "torchscript":
        return _load_torchscript(path)
    return _load_exported(path)


def _recorded_source(onnx_path: str) -> dict[str, str] | None:
    """The PyTorch file an ONNX export was made from, when its metadata names one that still has the same content."""
    import onnx  # noqa: PLC0415 - only ONNX inputs need it

    model = onnx.load(onnx_path, load_external_data=False)
    meta = {p.key: p.value for p in model.metadata_props}
    path = meta.get("pbh.source.path")
    # Exports of other frameworks' models (a .tflite, a SavedModel) are run from the ONNX file, through onnx2torch.
    if meta.get("pbh.source.format") not in ("torchscript", "torch_export"):
        return None
    if not path or not os.path.isfile(path) or file_sha256(path) != meta.get("pbh.source.sha256"):
        return None
    return {"path": path}


def _load_onnx(path: str) -> Source:
    import onnx  # noqa: PLC0415
    import onnx2torch  # noqa: PLC0415
    from importlib.metadata import version  # noqa: PLC0415

    start = time.perf_counter()
    model = onnx.load(path)
    initializers = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in initializers]
    outputs = [o.name for o in model.graph.output]
    try:
        module = onnx2torch.convert(model)
    except NotImplementedError as e:
        # onnx2torch's message: "Converter is not implemented (OperationDescription(domain='', operation_type='X', version=N))".
        op = re.search(r"domain='([^']*)', operation_type='([^']+)', version=(\d+)", str(e))
        what = f"op {op.group(2)} (opset {op.group(3)}{', domain ' + op.group(1) if op.group(1) else ''})" if op else str(e)
        raise WorkerError(
            "unsupported_model",
            f"onnx2torch {version('onnx2torch')} has no converter for {what} in {path}: run this model on an ONNX engine, or give the PyTorch engines a TorchScript .pt or torch.export .pt2 of it",
        ) from e
    except Exception as e:  # noqa: BLE001 - onnx2torch raises plain exceptions for malformed or unusual graphs
        raise WorkerError("unsupported_model", f"onnx2torch {version('onnx2torch')} cannot convert {path}: {type(e).__name__}: {e}") from e
    module.eval()
    load_ms = (time.perf_counter() - start) * 1000
    facts = {"source_format": "onnx", "converter": "onnx2torch", "converter_version": version("onnx2torch"), "convert_ms": load_ms}
    return Source(module, "onnx", inputs, outputs, load_ms, facts)


def _load_torchscript(path: str) -> Source:
    start = time.perf_counter()
    extra = {INPUTS_EXTRA_FILE: ""}
    try:
        module = torch.jit.load(path, map_location="cpu", _extra_files=extra)
    except Exception as e:  # noqa: BLE001 - torch.jit.load raises RuntimeError for anything it cannot read
        raise WorkerError("unsupported_model", f"torch.jit.load cannot read {path}: {type(e).__name__}: {e}") from e
    module.eval()
    names = [a.name for a in module.forward.schema.arguments[1:]]
    facts: dict[str, Any] = {"source_format": "torchscript", "loader": "torch.jit.load"}
    if extra[INPUTS_EXTRA_FILE]:
        facts["recorded_inputs"] = json.loads(extra[INPUTS_EXTRA_FILE])
    return Source(module, "torchscript", names, _output_names(module), (time.perf_counter() - start) * 1000, facts)


def _output_names(module: Any) -> list[str]:
    returns = module.forward.schema.returns
    if len(returns) == 1 and str(returns[0].type).startswith("Tuple["):
        count = len(returns[0].type.elements())
        return [f"output_{i}" for i in range(count)]
    return ["output"]


def _load_exported(path: str) -> Source:
    start = time.perf_counter()
    try:
        program = torch.export.load(path)
    except Exception as e:  # noqa: BLE001 - as above
        raise WorkerError("unsupported_model", f"torch.export.load cannot read {path}: {type(e).__name__}: {e}") from e
    signature = program.graph_signature
    inputs = list(signature.user_inputs)
    outputs = [str(o) for o in signature.user_outputs]
    module = program.module()
    facts = {"source_format": "torch_export", "loader": "torch.export.load(...).module()", "recorded_inputs": exported_inputs(program)}
    return Source(module, "torch_export", inputs, outputs, (time.perf_counter() - start) * 1000, facts)


def exported_inputs(program: Any) -> list[dict[str, Any]]:
    """Name, dtype and shape of each user input of an ExportedProgram (symbolic dims as None)."""
    user = set(program.graph_signature.user_inputs)
    specs = []
    for node in program.graph.nodes:
        if node.op == "placeholder" and node.name in user:
            value = node.meta["val"]
            shape = [int(d) if isinstance(d, int) or str(d).isdigit() else None for d in value.shape]
            specs.append({"name": node.name, "dtype": DTYPES.get(value.dtype, str(value.dtype)), "shape": shape})
    return specs
