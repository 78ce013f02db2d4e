"""The small MLP npm run bench:native measures the per-call cost on: Gemm 32->64, Relu, Gemm 64->10, input `input`
[N,32] float32, output `logits` [N,10]. Random weights (seed 0): its speed is the point, not its answers.

Usage: make_bench_mlp.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
weights = {
    "fc1.weight": (rng.standard_normal((32, 64)) * 0.1).astype(np.float32),
    "fc1.bias": np.zeros(64, np.float32),
    "fc2.weight": (rng.standard_normal((64, 10)) * 0.1).astype(np.float32),
    "fc2.bias": np.zeros(10, np.float32),
}
nodes = [
    helper.make_node("Gemm", ["input", "fc1.weight", "fc1.bias"], ["fc1"]),
    helper.make_node("Relu", ["fc1"], ["relu1"]),
    helper.make_node("Gemm", ["relu1", "fc2.weight", "fc2.bias"], ["logits"]),
]
graph = helper.make_graph(
    nodes,
    "bench_mlp",
    [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 32])],
    [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
    [numpy_helper.from_array(array, name) for name, array in weights.items()],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="pbh bench:native")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
