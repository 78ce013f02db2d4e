"""Turn the onnx package's "light" test models into runnable random-weight models.

The light models (onnx/backend/test/data/light/light_*.onnx) are caffe2 exports at opset 9 / IR 3 whose
weights were stripped: every weight is a ConstantOfShape node (value 0.02) fed by an int64 `<name>__SHAPE`
initializer, initializers are also listed as graph inputs, and the batch is fixed at 1 (resnet50 flattens
with a Reshape to the constant [1, 2048]). This module rebuilds them as opset 17 / IR 8 graphs with:
  - every parameter a seeded initializer: He-normal Conv/Gemm weights, zero biases, BatchNormalization
    scale 1 / bias 0 / mean 0 / var 1, except the last BN of each ResNet residual branch (`*branch2c_bn*`)
    whose scale is RESIDUAL_BRANCH_SCALE so the residual sum does not double the activation variance
    per block (16 blocks would be a 2**16 variance growth and a one-hot softmax);
  - the few real-valued parameters the file still carries (some BN statistics, some biases) reset to the
    same rule, so the whole network is one consistent random initialisation;
  - one graph input `input` float32 [N, 3, 224, 224] with a symbolic batch and output `output` [N, ...];
  - the batch-1 Reshape constant replaced by [-1, K] and unused initializers dropped.
The opset bump from 9 to 17 is done by hand, not with onnx.version_converter (which wraps Softmax in a
Shape/Flatten/Reshape chain): for the ops these graphs use, opsets 10-17 only add optional features, except
Softmax (13 changed the axis semantics; both graphs apply it to [N, 1000(, 1, 1)] with axis 1, where the old
coerce-to-2D and the new single-axis meaning agree, so axis=1 is written explicitly) and Dropout (12 moved
`ratio` to an optional input whose default is the same 0.5, and inference ignores it).
"""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .export import IR_VERSION, OPSET, checked

RESIDUAL_BRANCH_SCALE = 0.25

# Ops the rebuilt graphs may contain; anything else means the onnx package's light model changed and the
# opset-bump reasoning above must be redone.
_SUPPORTED_OPS = {
    'Conv', 'Relu', 'BatchNormalization', 'Sum', 'MaxPool', 'AveragePool', 'GlobalAveragePool',
    'Reshape', 'Gemm', 'Softmax', 'Concat', 'Dropout',
}


def light_model_path(name: str) -> str:
    path = os.path.join(os.path.dirname(onnx.__file__), 'backend', 'test', 'data', 'light', f'light_{name}.onnx')
    if not os.path.exists(path):
        raise FileNotFoundError(
            f'{path} is missing: the installed onnx package ({onnx.__version__}) does not ship light_{name}.onnx; '
            'install the pinned onnx from python/requirements.txt into .venv'
        )
    return path


def _shape_placeholders(graph: onnx.GraphProto) -> dict[str, tuple[int, ...]]:
    """Parameter name -> shape for every ConstantOfShape placeholder."""
    inits = {i.name: i for i in graph.initializer}
    shapes = {}
    for node in graph.node:
        if node.op_type != 'ConstantOfShape':
            continue
        src = node.input[0]
        if src not in inits:
            raise ValueError(f'ConstantOfShape {node.output[0]!r} takes its shape from {src!r}, which is not an initializer')
        shapes[node.output[0]] = tuple(int(d) for d in numpy_helper.to_array(inits[src]))
    return shapes


def _param_role(graph: onnx.GraphProto, name: str) -> str:
    for node in graph.node:
        for slot, inp in enumerate(node.input):
            if inp != name:
                continue
            if node.op_type in ('Conv', 'Gemm'):
                return 'weight' if slot == 1 else 'bias'
            if node.op_type == 'BatchNormalization':
                return ('bn_scale', 'bn_bias', 'bn_mean', 'bn_var')[slot - 1]
            if node.op_type == 'Reshape' and slot == 1:
                return 'reshape_shape'
            raise ValueError(f'parameter {name!r} feeds {node.op_type} input {slot}; no initialisation rule for that')
    return 'unused'


def _initial_value(role: str, name: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    if role == 'weight':
        fan_in = int(np.prod(shape[1:]))
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    if role == 'bn_scale':
        scale = RESIDUAL_BRANCH_SCALE if 'branch2c_bn' in name else 1.0
        return np.full(shape, scale, np.float32)
    if role == 'bn_var':
        return np.ones(shape, np.float32)
    return np.zeros(shape, np.float32)  # biases, BN bias and mean


def realize_light_model(name: str, seed: int) -> onnx.ModelProto:
    """Load light_<name>.onnx and return the runnable random-weight model described in the module docstring."""
    src = onnx.load(light_model_path(name))
    g = src.graph
    placeholder_shapes = _shape_placeholders(g)
    real_inits = {i.name: numpy_helper.to_array(i) for i in g.initializer if not i.name.endswith('__SHAPE')}
    init_names = set(placeholder_shapes) | set(real_inits)
    data_inputs = [i for i in g.input if i.name not in init_names and not i.name.endswith('__SHAPE')]
    if len(data_inputs) != 1 or len(g.output) != 1:
        raise ValueError(f'light_{name}: expected one data input and one output, got {[i.name for i in data_inputs]} / {len(g.output)}')
    data_in, data_out = data_inputs[0].name, g.output[0].name

    rng = np.random.default_rng(seed)
    initializers = []
    # Sorted so the random stream does not depend on the file's initializer order.
    for pname in sorted(init_names):
        role = _param_role(g, pname)
        if role == 'unused':
            continue
        if role == 'reshape_shape':
            target = real_inits[pname].astype(np.int64).copy()
            target[0] = -1
            initializers.append(numpy_helper.from_array(target, pname))
            continue
        shape = placeholder_shapes.get(pname) or real_inits[pname].shape
        initializers.append(numpy_helper.from_array(_initial_value(role, pname, shape, rng), pname))

    rename = {data_in: 'input', data_out: 'output'}
    nodes = []
    for node in g.node:
        if node.op_type == 'ConstantOfShape':
            continue
        if node.op_type not in _SUPPORTED_OPS:
            raise ValueError(f'light_{name}: op {node.op_type} is not covered by the opset 9 -> {OPSET} reasoning')
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        outputs = list(node.output)
        if node.op_type == 'Softmax':
            attrs['axis'] = 1
        if node.op_type == 'Dropout':
            attrs.pop('ratio', None)
            outputs = outputs[:1]  # the mask output is unused and only exists in training mode
        if node.op_type == 'BatchNormalization':
            attrs.pop('spatial', None)
            attrs.pop('is_test', None)
        nodes.append(helper.make_node(
            node.op_type,
            [rename.get(i, i) for i in node.input],
            [rename.get(o, o) for o in outputs],
            name=node.name or f'{node.op_type.lower()}_{len(nodes)}',
            **attrs,
        ))

    in_shape = [d.dim_value for d in data_inputs[0].type.tensor_type.shape.dim]
    out_shape = [d.dim_value for d in g.output[0].type.tensor_type.shape.dim]
    graph = helper.make_graph(
        nodes,
        f'{name}_random',
        [helper.make_tensor_value_info('input', TensorProto.FLOAT, ['N', *in_shape[1:]])],
        [helper.make_tensor_value_info('output', TensorProto.FLOAT, ['N', *out_shape[1:]])],
        initializer=initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', OPSET)], producer_name='pbh-generate-suite')
    model.ir_version = IR_VERSION
    model.doc_string = (
        f'onnx light_{name} (caffe2 export) with seeded random weights (seed {seed}); NOT trained: outputs are '
        'meaningless as predictions and exist for throughput/latency benchmarks only.'
    )
    helper.set_model_props(model, {'pbh.weights': 'random', 'pbh.source': f'onnx {onnx.__version__} light_{name}.onnx'})
    return checked(model)
