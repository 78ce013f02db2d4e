"""The prunable layers of an ONNX graph and each weight as the matrix W [rows, cols] that pruning works on.

A layer is a Conv, Gemm or MatMul node whose weight input is a float32 initializer of rank >= 2 (the weights PBH's
inspector counts). W's orientation is the one packages/core/src/model/sparsity.ts checks N:M in: a Conv weight
[M, C/g, kh, kw] as [M, C/g*kh*kw] (stored order); a Gemm weight with transB=1 as stored [out, in]; a MatMul weight
or a Gemm weight with transB=0, stored [in, out], transposed to [out, in].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

PRUNABLE_OPS = ('Conv', 'Gemm', 'MatMul')


@dataclass(frozen=True)
class Layer:
    weight: str
    node: str
    op: str
    shape: tuple[int, ...]
    transposed: bool
    # The activation the weight multiplies (the node's input 0) and the attributes that shape it into X.
    activation: str
    attrs: dict

    def matrix(self, stored: np.ndarray) -> np.ndarray:
        w = stored.T if self.transposed else stored.reshape(stored.shape[0], -1)
        return np.ascontiguousarray(w, dtype=np.float64)

    def stored(self, matrix: np.ndarray) -> np.ndarray:
        w = matrix.T if self.transposed else matrix.reshape(self.shape)
        return np.ascontiguousarray(w, dtype=np.float32)


class LayerSelectionError(ValueError):
    pass


def _node_name(node: onnx.NodeProto, index: int) -> str:
    return node.name or f'{node.op_type}_{index}'


def find_layers(model: onnx.ModelProto, select: list[str]) -> tuple[list[Layer], list[dict]]:
    """Layers matched by `select` (op types, node names or weight names); also the matched ones that cannot be pruned.

    Every node or weight name in `select` must match, so a typo is an error that lists what the model has; an op type
    the model does not use matches nothing quietly (the default names all three).
    """
    inits = {i.name: i for i in model.graph.initializer}
    candidates: list[tuple[onnx.NodeProto, str, str, bool]] = []
    for index, node in enumerate(model.graph.node):
        if node.domain not in ('', 'ai.onnx') or node.op_type not in PRUNABLE_OPS or len(node.input) < 2:
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        transposed = node.op_type == 'MatMul' or (node.op_type == 'Gemm' and attrs.get('transB', 0) == 0)
        # A product of two activations (attention's Q K^T and weights-times-V) has no weight to prune.
        if node.input[1] not in inits:
            continue
        candidates.append((node, _node_name(node, index), node.input[1], transposed))

    matched_tokens: set[str] = set()
    layers: list[Layer] = []
    skipped: list[dict] = []
    seen: set[str] = set()
    for node, name, weight, transposed in candidates:
        hits = {s for s in select if s in (node.op_type, name, weight)}
        if not hits:
            continue
        matched_tokens |= hits
        if weight in seen:
            continue
        seen.add(weight)
        init = inits[weight]
        reason = None
        if init.data_type != onnx.TensorProto.FLOAT:
            reason = f'its weight is {onnx.helper.tensor_dtype_to_np_dtype(init.data_type).name}, only float32 weights are pruned'
        elif len(init.dims) < 2:
            reason = f'its weight has rank {len(init.dims)}'
        elif node.op_type == 'Conv' and len(init.dims) != 4:
            reason = f'{len(init.dims) - 2}-D convolutions are not supported, only 2-D'
        elif node.op_type == 'Gemm' and _attr(node, 'transA', 0) == 1:
            reason = 'Gemm with transA=1 is not supported'
        elif node.op_type == 'MatMul' and len(init.dims) != 2:
            reason = f'a rank-{len(init.dims)} MatMul weight is not supported, only 2-D'
        if reason:
            skipped.append({'weight': weight, 'node': name, 'op': node.op_type, 'reason': reason})
            continue
        layers.append(Layer(weight, name, node.op_type, tuple(int(d) for d in init.dims), transposed, node.input[0],
                            {a.name: helper.get_attribute_value(a) for a in node.attribute}))

    unknown = [s for s in select if s not in matched_tokens and s not in PRUNABLE_OPS]
    if unknown:
        ops = sorted({c[0].op_type for c in candidates})
        names = [c[1] for c in candidates][:12]
        raise LayerSelectionError(
            f'--layers {",".join(unknown)} matches no Conv/Gemm/MatMul node of the model (by op type, node name or weight name); '
            f'it has op types {", ".join(ops) or "none"} and nodes {", ".join(names) or "none"}{" ..." if len(candidates) > 12 else ""}'
        )
    return layers, skipped


def _attr(node: onnx.NodeProto, name: str, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def read_weight(model: onnx.ModelProto, name: str) -> np.ndarray:
    for init in model.graph.initializer:
        if init.name == name:
            return numpy_helper.to_array(init)
    raise KeyError(name)
