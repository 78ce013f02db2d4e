"""The LM as one ONNX graph with a fixed-capacity key-value cache (static cache, as HF's StaticCache).

Inputs:  input_ids int64 [1, sequence]   the new tokens (a whole prompt for prefill, one token for a decode step)
         past_length int64 [1]           tokens already in the cache; the new ones take positions past_length..
         past_key, past_value float32 [layers, heads, context, head_dim]
Outputs: logits float32 [1, sequence, 256], present_key, present_value (the cache with the new tokens written in).

One graph for prefill and decode keeps one compiled model per engine; the cache's shape never changes, so only the
sequence axis is dynamic. New keys are written with a one-hot [context, sequence] MatMul and stale or empty slots are
masked by position, so the graph uses MatMul/Where/Softmax only (no ScatterND), which every engine here imports.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .model import Shape

OPSET = 17
IR_VERSION = 8


def to_onnx(params: dict[str, np.ndarray], shape: Shape, metadata: dict[str, str]) -> onnx.ModelProto:
    L, H, C, Dh, d = shape.layers, shape.heads, shape.context, shape.head_dim, shape.d_model
    nodes: list[onnx.NodeProto] = []
    consts: dict[str, np.ndarray] = {}

    def node(op: str, inputs: list[str], name: str, **attrs) -> str:
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def const(name: str, value) -> str:
        consts[name] = np.asarray(value)
        return name

    ids = node('Reshape', ['input_ids', const('shape.flat', np.array([-1], np.int64))], 'ids')
    start = node('Squeeze', ['past_length', const('axis0', np.array([0], np.int64))], 'start')
    count = node('Squeeze', [node('Shape', [ids], 'ids.shape'), 'axis0'], 'count')
    end = node('Add', [start, count], 'end')
    pos = node('Range', [start, end, const('one', np.int64(1))], 'pos')
    x = node('Add', [node('Gather', ['tok_emb', ids], 'tok'), node('Gather', ['pos_emb', pos], 'posemb')], 'x0')
    slots = const('slots', np.arange(C, dtype=np.int64).reshape(1, C))
    pos_col = node('Unsqueeze', [pos, const('axis1', np.array([1], np.int64))], 'pos_col')
    write = node('Cast', [node('Equal', [pos_col, slots], 'write.eq')], 'write', to=TensorProto.FLOAT)  # [T, C]
    write_t = node('Transpose', [write], 'write_t', perm=[1, 0])  # [C, T]
    keep = node('Sub', [const('f1', np.float32(1)), node('ReduceMax', [write_t], 'written', axes=[1], keepdims=1)], 'keep')  # [C, 1]
    bias = node('Where', [node('Less', [pos_col, slots], 'future'), const('neg', np.float32(-1e9)), const('f0', np.float32(0))], 'bias')  # [T, C]
    present_k, present_v = [], []
    for l in range(L):
        p = f'h{l}'
        h = node('LayerNormalization', [x, f'{p}.ln1.g', f'{p}.ln1.b'], f'{p}.ln1', axis=-1, epsilon=1e-5)
        qkv = node('Add', [node('MatMul', [h, f'{p}.qkv.w'], f'{p}.qkv.mm'), f'{p}.qkv.b'], f'{p}.qkv')
        nodes.append(helper.make_node('Split', [qkv, const('split3', np.array([d, d, d], np.int64))], [f'{p}.q2', f'{p}.k2', f'{p}.v2'], name=f'{p}.split', axis=1))
        heads = const('shape.heads', np.array([-1, H, Dh], np.int64))
        q, k, v = (node('Transpose', [node('Reshape', [f'{p}.{n}2', heads], f'{p}.{n}3')], f'{p}.{n}', perm=[1, 0, 2]) for n in 'qkv')
        layer = const(f'layer{l}', np.int64(l))
        caches = []
        for n, new, past in (('k', k, 'past_key'), ('v', v, 'past_value')):
            old = node('Gather', [past, layer], f'{p}.past_{n}', axis=0)  # [H, C, Dh]
            caches.append(node('Add', [node('Mul', [old, keep], f'{p}.kept_{n}'), node('MatMul', [write_t, new], f'{p}.new_{n}')], f'{p}.cache_{n}'))
        present_k.append(node('Unsqueeze', [caches[0], 'axis0'], f'{p}.present_k'))
        present_v.append(node('Unsqueeze', [caches[1], 'axis0'], f'{p}.present_v'))
        kt = node('Transpose', [caches[0]], f'{p}.kt', perm=[0, 2, 1])
        scores = node('Add', [node('Mul', [node('MatMul', [q, kt], f'{p}.qk'), const('scale', np.float32(1 / np.sqrt(Dh)))], f'{p}.scaled'), bias], f'{p}.scores')
        att = node('MatMul', [node('Softmax', [scores], f'{p}.softmax', axis=-1), caches[1]], f'{p}.att')
        merged = node('Reshape', [node('Transpose', [att], f'{p}.att_t', perm=[1, 0, 2]), const('shape.model', np.array([-1, d], np.int64))], f'{p}.merged')
        proj = node('Add', [node('MatMul', [merged, f'{p}.proj.w'], f'{p}.proj.mm'), f'{p}.proj.b'], f'{p}.proj')
        x = node('Add', [x, proj], f'{p}.res1')
        h = node('LayerNormalization', [x, f'{p}.ln2.g', f'{p}.ln2.b'], f'{p}.ln2', axis=-1, epsilon=1e-5)
        fc = node('Add', [node('MatMul', [h, f'{p}.fc.w'], f'{p}.fc.mm'), f'{p}.fc.b'], f'{p}.fc')
        erf = node('Erf', [node('Mul', [fc, const('rsqrt2', np.float32(1 / np.sqrt(2)))], f'{p}.fc.s')], f'{p}.erf')
        gelu = node('Mul', [node('Mul', [fc, const('half', np.float32(0.5))], f'{p}.fc.h'), node('Add', [erf, 'f1'], f'{p}.erf1')], f'{p}.gelu')
        out = node('Add', [node('MatMul', [gelu, f'{p}.out.w'], f'{p}.out.mm'), f'{p}.out.b'], f'{p}.out')
        x = node('Add', [x, out], f'{p}.res2')
    x = node('LayerNormalization', [x, 'ln_f.g', 'ln_f.b'], 'ln_f', axis=-1, epsilon=1e-5)
    logits = node('MatMul', [x, const('head', np.ascontiguousarray(params['tok_emb'].T))], 'head.mm')
    nodes.append(helper.make_node('Unsqueeze', [logits, 'axis0'], ['logits'], name='logits'))
    nodes.append(helper.make_node('Concat', present_k, ['present_key'], name='present_key', axis=0))
    nodes.append(helper.make_node('Concat', present_v, ['present_value'], name='present_value', axis=0))
    cache = [L, H, C, Dh]
    graph = helper.make_graph(
        nodes,
        'pbh_byte_lm',
        [
            helper.make_tensor_value_info('input_ids', TensorProto.INT64, [1, 'sequence']),
            helper.make_tensor_value_info('past_length', TensorProto.INT64, [1]),
            helper.make_tensor_value_info('past_key', TensorProto.FLOAT, cache),
            helper.make_tensor_value_info('past_value', TensorProto.FLOAT, cache),
        ],
        [
            helper.make_tensor_value_info('logits', TensorProto.FLOAT, [1, 'sequence', shape.vocab]),
            helper.make_tensor_value_info('present_key', TensorProto.FLOAT, cache),
            helper.make_tensor_value_info('present_value', TensorProto.FLOAT, cache),
        ],
        initializer=[numpy_helper.from_array(v.astype(v.dtype), k) for k, v in {**params, **consts}.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', OPSET)], producer_name='pbh-generate-lm')
    model.ir_version = IR_VERSION
    model.doc_string = __doc__.split('\n\n')[0]
    helper.set_model_props(model, metadata)
    onnx.checker.check_model(model, full_check=True)
    return model
