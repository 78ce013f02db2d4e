"""A PyTorch-born model (a TorchScript .pt or a torch.export .pt2) to ONNX.

dynamo's exporter (onnxscript) for a .pt2; the TorchScript-based one for a .pt, since torch.export does not trace a
ScriptModule. The batch axis stays symbolic ("batch"), so one export serves every batch size.
"""

from __future__ import annotations

import json
from importlib.metadata import version

from model_convert import BadInput

FRAMEWORK = "PyTorch"
INSTALL = "npx pbh doctor --fix --engine pytorch"
INPUTS_EXTRA_FILE = "pbh_inputs.json"


def check(path: str) -> None:
    if not path.endswith((".pt", ".pt2")):
        raise BadInput("a PyTorch model is a TorchScript .pt or a torch.export .pt2")


def framework_version() -> str:
    import torch  # noqa: PLC0415 - the venv may lack it; the caller says how to install it

    return torch.__version__


def example(specs, torch):
    tensors = []
    for spec in specs:
        shape = [2 if d is None else int(d) for d in spec["shape"]]
        dtype = getattr(torch, spec["dtype"]) if spec["dtype"] != "bool" else torch.bool
        tensors.append(torch.randn(shape, dtype=dtype) if dtype.is_floating_point else torch.zeros(shape, dtype=dtype))
    return tuple(tensors)


def export(path: str, target: str) -> dict:
    import torch  # noqa: PLC0415

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
        raise BadInput(f"a TorchScript file records no input shapes, and this one has no {INPUTS_EXTRA_FILE} extra file. Save it with torch.jit.save(m, path, _extra_files={{'{INPUTS_EXTRA_FILE}': json.dumps([{{'name': 'x', 'dtype': 'float32', 'shape': [None, 3, 224, 224]}}])}}), or export it with torch.export to a .pt2, which records them")
    specs = json.loads(extra[INPUTS_EXTRA_FILE])
    names = [a.name for a in module.forward.schema.arguments[1:]]
    if [s["name"] for s in specs] != names:
        raise BadInput(f"{INPUTS_EXTRA_FILE} names inputs {[s['name'] for s in specs]}, but forward takes {names}")
    returns = module.forward.schema.returns
    outputs = [f"output_{i}" for i in range(len(returns[0].type.elements()))] if len(returns) == 1 and str(returns[0].type).startswith("Tuple[") else ["output"]
    axes = {s["name"]: {i: f"{s['name']}_{i}" if i else "batch" for i, d in enumerate(s["shape"]) if d is None} for s in specs}
    axes.update({o: {0: "batch"} for o in outputs})
    # dynamo's exporter cannot take a ScriptModule (torch.export does not trace TorchScript): the TorchScript-based one can.
    torch.onnx.export(module, example(specs, torch), target, input_names=names, output_names=outputs, dynamic_axes=axes, dynamo=False)
    return {"format": "torchscript", "exporter": "torch.onnx.export(dynamo=False), TorchScript-based", "exporter_version": f"torch {torch.__version__}", "input_names": names, "output_names": outputs}
