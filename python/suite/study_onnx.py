"""A small ONNX graph builder for the study families: one method per block of study_layers, named as the params are."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .export import IR_VERSION, OPSET, checked


class Graph:
    def __init__(self, params: dict[str, np.ndarray]) -> None:
        self.params = params
        self.nodes: list[onnx.NodeProto] = []
        self.constants: dict[str, np.ndarray] = {}
        self.used: set[str] = set()

    def _node(self, op: str, inputs: list[str], name: str, **attrs) -> str:
        self.nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def param(self, key: str) -> str:
        if key not in self.params:
            raise KeyError(f'the exported graph uses {key!r}, which the trained params lack')
        self.used.add(key)
        return key

    def const(self, name: str, value: np.ndarray) -> str:
        self.constants[name] = value
        return name

    def conv(self, x: str, name: str, stride: int, pad: int, groups: int = 1) -> str:
        k = self.params[f'{name}.weight'].shape[-1]
        return self._node('Conv', [x, self.param(f'{name}.weight'), self.param(f'{name}.bias')], name,
                          kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, group=groups)

    def relu(self, x: str, name: str) -> str:
        return self._node('Relu', [x], name)

    def relu6(self, x: str, name: str) -> str:
        return self._node('Clip', [x, self.const('relu6.min', np.float32(0)), self.const('relu6.max', np.float32(6))], name)

    def add(self, a: str, b: str, name: str) -> str:
        return self._node('Add', [a, b], name)

    def mul(self, a: str, b: str, name: str) -> str:
        return self._node('Mul', [a, b], name)

    def global_pool_flatten(self, x: str, name: str) -> str:
        return self._node('Flatten', [self._node('GlobalAveragePool', [x], f'{name}.pool')], name, axis=1)

    def gemm(self, x: str, name: str) -> str:
        """A classifier: Gemm with the weight stored [out, in] (transB=1), as torch exports nn.Linear on 2-D input."""
        return self._node('Gemm', [x, self.param(f'{name}.weight'), self.param(f'{name}.bias')], name, transB=1)

    def linear(self, x: str, name: str) -> str:
        """MatMul (weight [in, out]) then Add: torch's export of nn.Linear on a 3-D input."""
        return self._node('Add', [self._node('MatMul', [x, self.param(f'{name}.weight')], f'{name}.matmul'), self.param(f'{name}.bias')], name)

    def layer_norm(self, x: str, name: str) -> str:
        return self._node('LayerNormalization', [x, self.param(f'{name}.scale'), self.param(f'{name}.bias')], name, axis=-1, epsilon=1e-5)

    def gelu(self, x: str, name: str) -> str:
        erf = self._node('Erf', [self._node('Div', [x, self.const('gelu.sqrt2', np.float32(np.sqrt(2.0)))], f'{name}.div')], f'{name}.erf')
        half = self._node('Mul', [x, self.const('gelu.half', np.float32(0.5))], f'{name}.half')
        return self._node('Mul', [half, self._node('Add', [erf, self.const('gelu.one', np.float32(1))], f'{name}.add')], name)

    def reshape(self, x: str, shape: list[int], name: str) -> str:
        return self._node('Reshape', [x, self.const(f'{name}.shape', np.array(shape, np.int64))], name)

    def transpose(self, x: str, perm: list[int], name: str) -> str:
        return self._node('Transpose', [x], name, perm=perm)

    def matmul(self, a: str, b: str, name: str) -> str:
        return self._node('MatMul', [a, b], name)

    def softmax(self, x: str, name: str) -> str:
        return self._node('Softmax', [x], name, axis=-1)

    def mean_tokens(self, x: str, name: str) -> str:
        return self._node('ReduceMean', [x], name, axes=[1], keepdims=0)

    def model(self, graph_name: str, x: str, logits: str, input_shape: list[int], classes: int, doc: str,
              metadata: dict[str, str]) -> onnx.ModelProto:
        unused = sorted(set(self.params) - self.used)
        if unused:
            raise AssertionError(f'{graph_name}: trained params {unused} are not in the exported graph')
        # The last node (the classifier) produces the graph output, named `logits` like every suite model's.
        self.nodes[-1].output[0] = 'logits'
        inits = [numpy_helper.from_array(np.asarray(self.params[k], np.float32), k) for k in sorted(self.used)]
        inits += [numpy_helper.from_array(v, k) for k, v in self.constants.items()]
        graph = helper.make_graph(
            self.nodes, graph_name,
            [helper.make_tensor_value_info(x, TensorProto.FLOAT, ['N', *input_shape])],
            [helper.make_tensor_value_info('logits', TensorProto.FLOAT, ['N', classes])],
            initializer=inits,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', OPSET)], producer_name='pbh-generate-suite')
        model.ir_version = IR_VERSION
        model.doc_string = doc
        helper.set_model_props(model, metadata)
        return checked(model)
