"""What a quantized file holds, read from its graph (not from what the tool was asked): the integer types of its
weights and activations, whether weight scales are per channel, and the quantization ops by type."""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
from onnx import numpy_helper

INTEGER_OPS = {'ConvInteger', 'MatMulInteger', 'DynamicQuantizeLinear', 'QLinearConv', 'QLinearMatMul'}
DTYPE = {onnx.TensorProto.INT8: 'int8', onnx.TensorProto.UINT8: 'uint8', onnx.TensorProto.INT4: 'int4',
         onnx.TensorProto.UINT4: 'uint4', onnx.TensorProto.INT16: 'int16', onnx.TensorProto.UINT16: 'uint16'}


def _most(counter: Counter[str]) -> str | None:
    return counter.most_common(1)[0][0] if counter else None


def census(model: onnx.ModelProto) -> dict:
    inits = {i.name: i for i in model.graph.initializer}
    weights: Counter[str] = Counter()
    activations: Counter[str] = Counter()
    per_channel: Counter[bool] = Counter()
    ops: Counter[str] = Counter()
    blocks: Counter[int] = Counter()
    for node in model.graph.node:
        if node.op_type in ('QuantizeLinear', 'DequantizeLinear', 'MatMulNBits') or node.op_type in INTEGER_OPS:
            ops[node.op_type] += 1
        if node.op_type == 'MatMulNBits':
            # Weight-only blocks of `bits` (com.microsoft): K x N weights, one scale per block of a column.
            attrs = {a.name: a.i for a in node.attribute}
            weights[f'int{attrs.get("bits", 4)}'] += attrs.get('K', 0) * attrs.get('N', 0)
            per_channel[False] += 1
            blocks[attrs.get('block_size', 0)] += 1
        if node.op_type == 'DequantizeLinear' and node.input[0] in inits:
            weight = inits[node.input[0]]
            if weight.data_type in DTYPE and len(weight.dims) >= 2:
                weights[DTYPE[weight.data_type]] += int(np.prod(weight.dims))
                scale = inits.get(node.input[1])
                per_channel[bool(scale is not None and numpy_helper.to_array(scale).size > 1)] += 1
        elif node.op_type == 'QuantizeLinear' and node.input[0] not in inits:
            zero = inits.get(node.input[2]) if len(node.input) > 2 else None
            activations[DTYPE.get(zero.data_type, 'uint8') if zero is not None else 'uint8'] += 1
        elif node.op_type in ('ConvInteger', 'MatMulInteger'):
            weight = inits.get(node.input[1])
            if weight is not None and weight.data_type in DTYPE:
                weights[DTYPE[weight.data_type]] += int(np.prod(weight.dims))
                scale_source = node.input[3] if len(node.input) > 3 else ''
                zp = inits.get(scale_source)
                per_channel[bool(zp is not None and numpy_helper.to_array(zp).size > 1)] += 1
        elif node.op_type == 'DynamicQuantizeLinear':
            activations['uint8 (dynamic)'] += 1
    return {
        'weight_dtype': _most(weights),
        'activation_dtype': _most(activations),
        'per_channel': bool(per_channel[True]) and per_channel[True] >= per_channel[False],
        'quantized_ops': dict(sorted(ops.items())),
        # Weight-only blocks (MatMulNBits): one scale per `block_size` weights of a column; None without such blocks.
        'block_size': blocks.most_common(1)[0][0] if blocks else None,
    }
