"""The int8 .tflite's boundary, in process: LiteRT's bind quantizes a float input exactly as the export's
QuantizeLinear does, and the converter's Relu removal and uint8 activations change no value of the export.

Run by packages/engine-litert/test/quantized-io.test.ts with PYTHONPATH holding packages/core/python, this engine's
python folder and python/ (for model_convert); MODELS names the folder of python/generate_tf_models.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from litert_worker import LiteRT
from model_convert.from_tensorflow import drop_relu_before_quantize
from pbh_worker import Model

MODELS = os.environ["MODELS"]


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> str:
    cache = tmp_path_factory.mktemp("cache")
    source = os.path.join(MODELS, "models", "digits_cnn_int8.tflite")
    done = subprocess.run([sys.executable, "-m", "model_convert", "--cache", str(cache), "--from", "tensorflow", source], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])["onnx_path"]


def pixels(n: int) -> np.ndarray:
    return np.load(os.path.join(MODELS, "data", "digits_nhwc_x.npy"))[:n]


def test_bind_quantizes_as_the_exports_quantize_linear(export: str) -> None:
    engine = LiteRT()
    engine.load(Model(path=export, batch_size=1, device="cpu", precision="int8", options={"xnnpack": True}))
    graph = onnx.load(export)
    # The QuantizeLinear the converter put at the input, read out as a graph output of its own.
    node = next(n for n in graph.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == "pixels")
    zero = next(i for i in graph.graph.initializer if i.name == node.input[2])
    graph.graph.output.append(onnx.helper.make_tensor_value_info(node.output[0], zero.data_type, None))
    session = ort.InferenceSession(graph.SerializeToString(), providers=["CPUExecutionProvider"])
    index = engine.inputs["pixels"][0]
    for x in pixels(16):
        engine.bind({"pixels": x[None]})()
        # The export carries activations as uint8, 128 above the .tflite's int8.
        expected = session.run([node.output[0]], {"pixels": x[None]})[0].astype(np.int16) - 128
        np.testing.assert_array_equal(engine.interpreter.get_tensor(index).astype(np.int16), expected)


def test_dropping_relu_before_quantize_changes_no_value(export: str) -> None:
    graph = onnx.load(export)
    # Put one back before every QuantizeLinear that follows a convolution: the graph as tf2onnx wrote it.
    convs = {n.output[0] for n in graph.graph.node if n.op_type == "Conv"}
    for i, node in enumerate(list(graph.graph.node)):
        if node.op_type == "QuantizeLinear" and node.input[0] in convs:
            relu = onnx.helper.make_node("Relu", [node.input[0]], [f"{node.input[0]}__relu"], name=f"relu_{i}")
            node.input[0] = relu.output[0]
            graph.graph.node.insert(list(graph.graph.node).index(node), relu)
    with_relu = graph.SerializeToString()
    assert drop_relu_before_quantize(graph) == 2
    x = pixels(64)
    run = lambda model: [ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"pixels": s[None]})[0] for s in x]  # noqa: E731
    np.testing.assert_array_equal(np.stack(run(with_relu)), np.stack(run(graph.SerializeToString())))


def test_activations_as_uint8_change_no_value(export: str) -> None:
    from onnx import numpy_helper

    graph = onnx.load(export)
    # Undo the converter's shift: every activation zero point back to int8, 128 lower.
    for init in list(graph.graph.initializer):
        if init.name.endswith("__uint8"):
            back = numpy_helper.from_array((numpy_helper.to_array(init).astype(np.int16) - 128).astype(np.int8), init.name)
            graph.graph.initializer.remove(init)
            graph.graph.initializer.append(back)
    plain = ort.SessionOptions()
    plain.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    x = pixels(64)
    run = lambda model: np.stack([ort.InferenceSession(model, plain, providers=["CPUExecutionProvider"]).run(None, {"pixels": s[None]})[0] for s in x])  # noqa: E731
    np.testing.assert_array_equal(run(onnx.load(export).SerializeToString()), run(graph.SerializeToString()))
