"""Write numpy parameters as ONNX graphs (opset 17, IR 8) and validate them (checker, shape inference, reference evaluator)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from .numpy_nn import Params

OPSET = 17
# IR 8 is the IR of onnx 1.10-1.12 (opsets up to 17); every engine the harness drives loads it.
IR_VERSION = 8


def _model(nodes, inputs, outputs, params: Params, name: str, doc: str, metadata: dict[str, str]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        name,
        inputs,
        outputs,
        initializer=[numpy_helper.from_array(v, k) for k, v in params.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', OPSET)], producer_name='pbh-generate-suite')
    model.ir_version = IR_VERSION
    model.doc_string = doc
    helper.set_model_props(model, metadata)
    return checked(model)


def checked(model: onnx.ModelProto) -> onnx.ModelProto:
    """Full checker plus strict shape inference; returns the model with inferred value_info."""
    onnx.checker.check_model(model, full_check=True)
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    onnx.checker.check_model(inferred)
    return inferred


def cnn_to_onnx(params: Params, doc: str, metadata: dict[str, str]) -> onnx.ModelProto:
    conv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
    nodes = [
        helper.make_node('Conv', ['input', 'conv1.weight', 'conv1.bias'], ['conv1'], name='conv1', **conv),
        helper.make_node('Relu', ['conv1'], ['relu1'], name='relu1'),
        helper.make_node('Conv', ['relu1', 'conv2.weight', 'conv2.bias'], ['conv2'], name='conv2', **conv),
        helper.make_node('Relu', ['conv2'], ['relu2'], name='relu2'),
        helper.make_node('MaxPool', ['relu2'], ['pool'], name='pool', kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node('Flatten', ['pool'], ['flat'], name='flatten', axis=1),
        helper.make_node('Gemm', ['flat', 'fc1.weight', 'fc1.bias'], ['fc1'], name='fc1', transB=1),
        helper.make_node('Relu', ['fc1'], ['relu3'], name='relu3'),
        helper.make_node('Gemm', ['relu3', 'fc2.weight', 'fc2.bias'], ['logits'], name='fc2', transB=1),
    ]
    inputs = [helper.make_tensor_value_info('input', TensorProto.FLOAT, ['N', 1, 8, 8])]
    outputs = [helper.make_tensor_value_info('logits', TensorProto.FLOAT, ['N', 10])]
    return _model(nodes, inputs, outputs, params, 'digits_cnn', doc, metadata)


def mlp_to_onnx(params: Params, doc: str, metadata: dict[str, str]) -> onnx.ModelProto:
    nodes = [
        helper.make_node('Gemm', ['input', 'fc1.weight', 'fc1.bias'], ['fc1'], name='fc1', transB=1),
        helper.make_node('Relu', ['fc1'], ['relu1'], name='relu1'),
        helper.make_node('Gemm', ['relu1', 'fc2.weight', 'fc2.bias'], ['logits'], name='fc2', transB=1),
    ]
    inputs = [helper.make_tensor_value_info('input', TensorProto.FLOAT, ['N', 64])]
    outputs = [helper.make_tensor_value_info('logits', TensorProto.FLOAT, ['N', 10])]
    return _model(nodes, inputs, outputs, params, 'digits_mlp', doc, metadata)


def tabular_to_onnx(params: Params, n_features: int, doc: str, metadata: dict[str, str]) -> onnx.ModelProto:
    classes = params['fc2.weight'].shape[0]
    nodes = [
        helper.make_node('Gather', ['category.embedding', 'category'], ['category_embedding'], name='embed', axis=0),
        helper.make_node('Concat', ['features', 'category_embedding'], ['joined'], name='join', axis=1),
        helper.make_node('Gemm', ['joined', 'fc1.weight', 'fc1.bias'], ['fc1'], name='fc1', transB=1),
        helper.make_node('Relu', ['fc1'], ['relu1'], name='relu1'),
        helper.make_node('Gemm', ['relu1', 'fc2.weight', 'fc2.bias'], ['logits'], name='fc2', transB=1),
    ]
    # int64 indices: the type every ONNX exporter writes for Gather, and what onnxruntime, OpenVINO and TVM all import.
    inputs = [
        helper.make_tensor_value_info('features', TensorProto.FLOAT, ['N', n_features]),
        helper.make_tensor_value_info('category', TensorProto.INT64, ['N']),
    ]
    outputs = [helper.make_tensor_value_info('logits', TensorProto.FLOAT, ['N', classes])]
    return _model(nodes, inputs, outputs, params, 'wine_mlp', doc, metadata)


def check_reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray], expected: np.ndarray, atol: float = 1e-5) -> float:
    """The graph as the ONNX spec defines it (onnx's reference evaluator) against the numpy forward pass; returns max |diff|."""
    (got,) = ReferenceEvaluator(model).run(None, feeds)
    diff = float(np.abs(got - expected).max()) if got.shape == expected.shape else float('inf')
    if diff > atol:
        raise AssertionError(
            f'{model.graph.name}: the ONNX graph (reference evaluator) gives {got.shape} outputs that differ from the numpy forward '
            f'pass {expected.shape} by {diff:.3g} (> {atol:g}); the export does not match the trained network'
        )
    return diff
