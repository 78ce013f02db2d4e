"""Writes PyTorch-born test models into argv[1] and prints their paths, one per line.

mlp.pt: a 16-32-4 MLP (seeded weights) traced with torch.jit.trace and saved with its input spec in the extra file
  pbh_inputs.json (TorchScript records no shapes); mlp.pt2: the same module through torch.export with a dynamic batch
  axis; hardmax.onnx: y = Hardmax(x), an op onnx2torch has no converter for.
"""

import json
import sys
from pathlib import Path

import onnx
import torch
from onnx import TensorProto, helper

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
torch.manual_seed(0)


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(features)))


module = MLP().eval()
example = torch.randn(3, 16)
spec = [{"name": "features", "dtype": "float32", "shape": [None, 16]}]
torch.jit.save(torch.jit.trace(module, (example,)), out / "mlp.pt", _extra_files={"pbh_inputs.json": json.dumps(spec)})
print(out / "mlp.pt")
program = torch.export.export(module, (example,), dynamic_shapes=({0: torch.export.Dim("batch")},))
torch.export.save(program, out / "mlp.pt2")
print(out / "mlp.pt2")

graph = helper.make_graph(
    [helper.make_node("Hardmax", ["x"], ["y"])],
    "hardmax",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 5])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, out / "hardmax.onnx")
print(out / "hardmax.onnx")
