"""Calibration: each layer's input on the calibration samples, as the Hessians H = 2 X X^T that OBC needs.

The dense model runs once (OpenVINO CPU, f32 pinned) with every layer's input activation added as a graph output, in
chunks, and X X^T is accumulated per chunk, so memory stays at one chunk's activations whatever the sample count.
Every layer sees the DENSE model's activations: OBC's independent layer-wise problems.

X per layer: a Conv's im2col columns (pads, strides, dilations and groups as the node says; one Hessian per group, so a
depthwise Conv has one per channel); a Gemm/MatMul's input rows (all leading axes are samples).
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import onnx
from onnx import helper

from .layers import Layer
from .obc import LayerProblem

CHUNK = 64


def _conv_pads(layer: Layer, height: int, width: int) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) as ONNX Conv defines them, auto_pad included."""
    kh, kw = layer.shape[2], layer.shape[3]
    sh, sw = layer.attrs.get('strides', [1, 1])
    dh, dw = layer.attrs.get('dilations', [1, 1])
    auto = layer.attrs.get('auto_pad', b'NOTSET')
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto in ('NOTSET', ''):
        t, l, b, r = layer.attrs.get('pads', [0, 0, 0, 0])
        return t, l, b, r
    if auto == 'VALID':
        return 0, 0, 0, 0
    pads = []
    for size, k, s, d in ((height, kh, sh, dh), (width, kw, sw, dw)):
        total = max(0, (-(-size // s) - 1) * s + (k - 1) * d + 1 - size)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if auto == 'SAME_UPPER' else (big, small))
    return pads[0][0], pads[1][0], pads[0][1], pads[1][1]


def conv_columns(layer: Layer, x: np.ndarray) -> np.ndarray:
    """[N, C, H, W] -> [N*Ho*Wo, groups, C/g*kh*kw], columns ordered (c, kh, kw) like the weight's rows."""
    n, c, h, w = x.shape
    kh, kw = layer.shape[2], layer.shape[3]
    sh, sw = layer.attrs.get('strides', [1, 1])
    dh, dw = layer.attrs.get('dilations', [1, 1])
    groups = int(layer.attrs.get('group', 1))
    t, l, b, r = _conv_pads(layer, h, w)
    xp = np.pad(x, ((0, 0), (0, 0), (t, b), (l, r)))
    ho = (h + t + b - (kh - 1) * dh - 1) // sh + 1
    wo = (w + l + r - (kw - 1) * dw - 1) // sw + 1
    taps = [xp[:, :, i * dh:i * dh + (ho - 1) * sh + 1:sh, j * dw:j * dw + (wo - 1) * sw + 1:sw]
            for i in range(kh) for j in range(kw)]
    cols = np.stack(taps, axis=2)  # [N, C, kh*kw, Ho, Wo]
    cols = cols.reshape(n, groups, c // groups, kh * kw, ho, wo).transpose(0, 4, 5, 1, 2, 3)
    return cols.reshape(n * ho * wo, groups, (c // groups) * kh * kw)


def layer_columns(layer: Layer, activation: np.ndarray) -> np.ndarray:
    """The samples X^T of one layer as [samples, groups, cols]."""
    if layer.op == 'Conv':
        if activation.ndim != 4:
            raise ValueError(f'Conv {layer.node}: input {layer.activation} has shape {activation.shape}, a 2-D Conv needs [N, C, H, W]')
        return conv_columns(layer, activation.astype(np.float64))
    k = layer.shape[0] if layer.transposed else layer.shape[1]
    return activation.astype(np.float64).reshape(-1, 1, k)


class HessianAccumulator:
    def __init__(self, layers: list[Layer]) -> None:
        self.layers = layers
        self.sums: dict[str, np.ndarray] = {}

    def add(self, layer: Layer, activation: np.ndarray) -> None:
        cols = layer_columns(layer, activation)
        h = 2.0 * np.einsum('pgi,pgj->gij', cols, cols, optimize=True)
        self.sums[layer.weight] = self.sums[layer.weight] + h if layer.weight in self.sums else h

    def problem(self, layer: Layer, matrix: np.ndarray) -> LayerProblem:
        hessians = self.sums[layer.weight]
        rows_per_group = matrix.shape[0] // hessians.shape[0]
        return LayerProblem(matrix, hessians, np.arange(matrix.shape[0]) // rows_per_group)


def capture_hessians(model: onnx.ModelProto, layers: list[Layer], samples: np.ndarray) -> HessianAccumulator:
    """Runs the dense model on `samples` (its only input) and accumulates every layer's Hessian."""
    import openvino as ov
    import openvino.properties.hint as hints

    graph_inputs = [i.name for i in model.graph.input if i.name not in {init.name for init in model.graph.initializer}]
    if len(graph_inputs) != 1:
        raise ValueError(f'calibration feeds one input; the model has {len(graph_inputs)}: {", ".join(graph_inputs)}')
    (input_name,) = graph_inputs
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    outputs = {o.name for o in probe.graph.output}
    wanted = sorted({layer.activation for layer in layers} - {input_name})
    # OpenVINO wants typed outputs: the inferred value_info where shape inference knows the tensor, else float32 of
    # unknown shape (a Conv/Gemm/MatMul input with a float32 weight is float32).
    inferred = {v.name: v for v in onnx.shape_inference.infer_shapes(model).graph.value_info}
    for name in wanted:
        if name not in outputs:
            probe.graph.output.append(inferred.get(name) or helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    acc = HessianAccumulator(layers)
    core = ov.Core()
    with tempfile.TemporaryDirectory(prefix='pbh-prune-') as tmp:
        path = os.path.join(tmp, 'probe.onnx')
        onnx.save(probe, path)
        ov_model = core.read_model(path)
        compiled = core.compile_model(ov_model, 'CPU', {hints.inference_precision: ov.Type.f32})
        ports = {name: compiled.output(name) for name in wanted}
        for start in range(0, len(samples), CHUNK):
            chunk = np.ascontiguousarray(samples[start:start + CHUNK])
            result = compiled({input_name: chunk})
            values = {name: np.asarray(result[port]) for name, port in ports.items()}
            values[input_name] = chunk
            for layer in layers:
                acc.add(layer, values[layer.activation])
    return acc
