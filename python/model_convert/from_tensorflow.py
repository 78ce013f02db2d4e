"""A TensorFlow-born model (a SavedModel folder, a Keras .keras file or a LiteRT .tflite file) to ONNX with tf2onnx.

What each ONNX input and output is named, and what the TensorFlow and LiteRT engines read back from the export's
metadata (pbh.source.io), is decided here once:
- SavedModel: the `serving_default` signature, inputs and outputs named by its keys.
- Keras: the model's inputs by their names; outputs by the model's own dict keys, else by model.output_names.
- .tflite: the model's only signature's keys where it has one (the tensors' names otherwise). An input or output
  that the model quantizes (int8/uint8 with a scale) is float32 at PBH's side: the export quantizes and dequantizes
  with the model's own scale and zero point (QuantizeLinear/DequantizeLinear), and the LiteRT engine does the same
  arithmetic in numpy, so the model itself runs as int8 on every engine and the gate compares floats.
The batch axis stays open for SavedModel and Keras; a .tflite keeps the batch its tensors were converted with.
"""

from __future__ import annotations

import json
import os
from importlib.metadata import version

from model_convert import BadInput

FRAMEWORK = "TensorFlow"
INSTALL = "npx pbh doctor --fix --engine tensorflow"
OPSET = 17
# Bump when what an export holds changes (its names, its quantized boundary), so stale cache entries stop matching.
VERSION = 2
SIGNATURE = "serving_default"


class Unconvertible(BadInput):
    """tf2onnx cannot convert this model; the message names the op."""


def kind(path: str) -> str:
    if os.path.isdir(path):
        if os.path.isfile(os.path.join(path, "saved_model.pb")):
            return "savedmodel"
        raise BadInput("a folder is a TensorFlow SavedModel only when it holds saved_model.pb (tf.saved_model.save or keras Model.export writes one)")
    if path.endswith(".keras"):
        return "keras"
    if path.endswith(".tflite"):
        return "tflite"
    raise BadInput("a TensorFlow model is a SavedModel folder, a Keras .keras file or a LiteRT .tflite file")


def check(path: str) -> None:
    kind(path)


def framework_version() -> str:
    import tensorflow as tf  # noqa: PLC0415 - the venv may lack it; the caller says how to install it

    return tf.__version__


def exporter_version() -> str:
    return f"tf2onnx {version('tf2onnx')}, tensorflow {version('tensorflow-cpu')}, opset {OPSET}"


def tflite_io(interpreter) -> tuple[list[dict], list[dict]]:
    """Each input and output of a .tflite: PBH's name, the tensor's name and index, dtype and quantization."""
    details = {"inputs": interpreter.get_input_details(), "outputs": interpreter.get_output_details()}
    signatures = interpreter.get_signature_list()
    keys: dict[str, str] = {}
    if len(signatures) == 1:
        runner = interpreter.get_signature_runner(next(iter(signatures)))
        for side, found in (("inputs", runner.get_input_details()), ("outputs", runner.get_output_details())):
            by_index = {d["index"]: name for name, d in found.items()}
            keys.update({d["name"]: by_index[d["index"]] for d in details[side] if d["index"] in by_index})

    def one(d: dict) -> dict:
        scale, zero = d["quantization"]
        quantized = d["dtype"].__name__ in ("int8", "uint8", "int16") and scale != 0
        return {"name": keys.get(d["name"], d["name"]), "tensor": d["name"], "dtype": d["dtype"].__name__, "scale": float(scale) if quantized else None, "zero_point": int(zero) if quantized else None}

    return [one(d) for d in details["inputs"]], [one(d) for d in details["outputs"]]


def rename(graph, names: dict[str, str]) -> None:
    """Renames values of an ONNX graph everywhere they appear (graph inputs, outputs, node inputs and outputs)."""
    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        value.name = names.get(value.name, value.name)
    for node in graph.node:
        node.input[:] = [names.get(n, n) for n in node.input]
        node.output[:] = [names.get(n, n) for n in node.output]


def add_quantization(model, inputs: list[dict], outputs: list[dict]) -> None:
    """Float32 at the boundary of a quantized input or output, with the model's own scale and zero point."""
    import onnx  # noqa: PLC0415
    from onnx import TensorProto, helper  # noqa: PLC0415

    graph = model.graph
    elem = {"int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "int16": TensorProto.INT16}
    for io in inputs:
        if io["scale"] is None:
            continue
        value = next(v for v in graph.input if v.name == io["name"])
        inner = f"{io['name']}__quantized"
        rename(graph, {io["name"]: inner})
        value.name = io["name"]
        value.type.tensor_type.elem_type = TensorProto.FLOAT
        graph.initializer.extend([helper.make_tensor(f"{inner}_scale", TensorProto.FLOAT, [], [io["scale"]]), helper.make_tensor(f"{inner}_zero_point", elem[io["dtype"]], [], [io["zero_point"]])])
        graph.node.insert(0, helper.make_node("QuantizeLinear", [io["name"], f"{inner}_scale", f"{inner}_zero_point"], [inner], name=f"{inner}_quantize"))
    for io in outputs:
        if io["scale"] is None:
            continue
        value = next(v for v in graph.output if v.name == io["name"])
        inner = f"{io['name']}__quantized"
        rename(graph, {io["name"]: inner})
        value.name = io["name"]
        value.type.tensor_type.elem_type = TensorProto.FLOAT
        graph.initializer.extend([helper.make_tensor(f"{inner}_scale", TensorProto.FLOAT, [], [io["scale"]]), helper.make_tensor(f"{inner}_zero_point", elem[io["dtype"]], [], [io["zero_point"]])])
        graph.node.append(helper.make_node("DequantizeLinear", [inner, f"{inner}_scale", f"{inner}_zero_point"], [io["name"]], name=f"{inner}_dequantize"))
    onnx.checker.check_model(model)


def drop_relu_before_quantize(model) -> int:
    """Removes each Relu whose only reader is a QuantizeLinear with the type's lowest zero point (int8 -128, uint8 0).

    tf2onnx writes a .tflite's fused activation as Conv -> Relu -> QuantizeLinear; with that zero point the quantize
    already clamps below zero, so the Relu changes no value, and without it the graph is the plain QDQ pattern that
    runtimes fuse into int8 kernels. Returns how many it removed.
    """
    from onnx import TensorProto, numpy_helper  # noqa: PLC0415

    graph = model.graph
    constants = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    lowest = {TensorProto.INT8: -128, TensorProto.UINT8: 0}
    readers: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    outputs = {o.name for o in graph.output}
    removed = []
    for node in graph.node:
        if node.op_type != "Relu" or node.output[0] in outputs:
            continue
        after = readers.get(node.output[0], [])
        if len(after) != 1 or after[0].op_type != "QuantizeLinear" or len(after[0].input) < 3 or after[0].input[2] not in constants:
            continue
        zero = next(i for i in graph.initializer if i.name == after[0].input[2])
        if zero.data_type in lowest and constants[zero.name].size == 1 and int(constants[zero.name].reshape(-1)[0]) == lowest[zero.data_type]:
            after[0].input[0] = node.input[0]
            removed.append(node)
    for node in removed:
        graph.node.remove(node)
    return len(removed)


def unconvertible_ops(interpreter) -> list[str]:
    """The .tflite's ops that tf2onnx has no handler for (it reads every op as TFL_<NAME>)."""
    from tf2onnx import tflite_handlers  # noqa: F401, PLC0415 - registers the TFL_ handlers
    from tf2onnx.handler import tf_op  # noqa: PLC0415

    handled = {name for opsets in tf_op.get_opsets().values() for table in opsets for name in table}
    ops = {op["op_name"] for op in interpreter._get_ops_details()}  # noqa: SLF001 - the Python API's only op list
    return sorted(op for op in ops if f"TFL_{op}" not in handled)


def densified(path: str, interpreter) -> bytes:
    """The .tflite with each DENSIFY op replaced by the dense constant it computes, as LiteRT itself computes it.

    DENSIFY turns a sparse constant (weights stored in a sparse format) into a dense one at load; tf2onnx reads no
    sparse tensor. LiteRT runs the model once on zeros keeping every tensor, each DENSIFY output becomes a constant
    buffer holding those values and the op is dropped: the same numbers, dense.
    """
    import flatbuffers  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    from ai_edge_litert import schema_py_generated as schema  # noqa: PLC0415
    from ai_edge_litert.interpreter import Interpreter, OpResolverType  # noqa: PLC0415

    with open(path, "rb") as f:
        buf = f.read()
    model = schema.ModelT.InitFromPackedBuf(buf, 0)
    codes = [max(c.builtinCode, c.deprecatedBuiltinCode) for c in model.operatorCodes]
    keeper = Interpreter(model_content=buf, experimental_preserve_all_tensors=True, experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    keeper.allocate_tensors()
    for d in keeper.get_input_details():
        keeper.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
    keeper.invoke()
    if len(model.subgraphs) != 1:
        raise Unconvertible("DENSIFY in a .tflite of several subgraphs: only one subgraph's tensors can be read back")
    graph = model.subgraphs[0]
    kept = []
    for op in graph.operators:
        if codes[op.opcodeIndex] != schema.BuiltinOperator.DENSIFY:
            kept.append(op)
            continue
        dense = schema.BufferT()
        dense.data = np.frombuffer(np.ascontiguousarray(keeper.get_tensor(op.outputs[0])).tobytes(), np.uint8)
        model.buffers.append(dense)
        graph.tensors[op.outputs[0]].buffer = len(model.buffers) - 1
        # The sparse constant is read by no op now: it keeps its index but no longer its data.
        graph.tensors[op.inputs[0]].buffer = 0
        graph.tensors[op.inputs[0]].sparsity = None
    graph.operators = kept
    builder = flatbuffers.Builder(len(buf) * 2)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def activations_to_uint8(model) -> int:
    """Re-expresses every int8 activation (the QuantizeLinear outputs and what dequantizes them) as uint8, its zero
    point moved up by 128: the same real values, since int8 [-128, 127] and uint8 [0, 255] differ by that shift alone.

    Weights stay int8. x86 runtimes fuse a QDQ convolution or matmul into an int8 kernel for uint8 activations with
    int8 weights (ONNX Runtime's default; int8 activations need its session.qdqisint8allowed), the layout the
    LiteRT converter's int8 activations are not. Returns how many zero points it moved.
    """
    from onnx import TensorProto, numpy_helper  # noqa: PLC0415

    graph = model.graph
    initializers = {i.name: i for i in graph.initializer}
    activation_zero_points = set()
    for node in graph.node:
        if len(node.input) < 3 or node.input[2] not in initializers or initializers[node.input[2]].data_type != TensorProto.INT8:
            continue
        if node.op_type == "QuantizeLinear" or (node.op_type == "DequantizeLinear" and node.input[0] not in initializers):
            activation_zero_points.add(node.input[2])
    moved = {}
    for name in activation_zero_points:
        shifted = (numpy_helper.to_array(initializers[name]).astype("int16") + 128).astype("uint8")
        moved[name] = f"{name}__uint8"
        graph.initializer.append(numpy_helper.from_array(shifted, moved[name]))
    for node in graph.node:
        activation = node.op_type == "QuantizeLinear" or (node.op_type == "DequantizeLinear" and node.input[0] not in initializers)
        if activation and len(node.input) >= 3 and node.input[2] in moved:
            node.input[2] = moved[node.input[2]]
    # Shapes recorded for int8 tensors between a quantize and a dequantize would now lie about their type.
    for value in [v for v in graph.value_info if v.type.tensor_type.elem_type == TensorProto.INT8]:
        graph.value_info.remove(value)
    used = {n for node in graph.node for n in node.input}
    for name in activation_zero_points - used:
        graph.initializer.remove(initializers[name])
    return len(moved)


def export(path: str, target: str) -> dict:
    import onnx  # noqa: PLC0415
    import tensorflow as tf  # noqa: PLC0415
    import tf2onnx  # noqa: PLC0415

    source = kind(path)
    if source == "tflite":
        from ai_edge_litert.interpreter import Interpreter  # noqa: PLC0415

        from ai_edge_litert.interpreter import OpResolverType  # noqa: PLC0415

        interpreter = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
        inputs, outputs = tflite_io(interpreter)
        readable = path
        densify = "DENSIFY" in {op["op_name"] for op in interpreter._get_ops_details()}  # noqa: SLF001 - as in unconvertible_ops
        if densify:
            readable = target + ".dense.tflite"
            with open(readable, "wb") as f:
                f.write(densified(path, interpreter))
            interpreter = Interpreter(model_path=readable, experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
        missing = unconvertible_ops(interpreter)
        if missing:
            raise Unconvertible(f"tf2onnx {version('tf2onnx')} has no converter for op {', '.join(missing)} of this .tflite, and every engine (LiteRT too) is given the model's ONNX export: convert the model to .tflite without that op")
        try:
            model, _ = tf2onnx.convert.from_tflite(readable, opset=OPSET)
        finally:
            if densify:
                os.remove(readable)
        rename(model.graph, {io["tensor"]: io["name"] for io in inputs + outputs})
        add_quantization(model, inputs, outputs)
        relus = drop_relu_before_quantize(model)
        shifted = activations_to_uint8(model)
        onnx.checker.check_model(model)
        onnx.save(model, target)
        io = {"inputs": inputs, "outputs": outputs, "relu_folded_into_quantize": relus, "activations_as_uint8": shifted, "densified": densify}
    else:
        if source == "savedmodel":
            loaded = tf.saved_model.load(path)
            if SIGNATURE not in loaded.signatures:
                raise BadInput(f"the SavedModel has no {SIGNATURE} signature (it has {sorted(loaded.signatures)}): save it with a serving_default signature, e.g. keras Model.export")
            signature = loaded.signatures[SIGNATURE]
            specs = [tf.TensorSpec(s.shape, s.dtype, name=k) for k, s in signature.structured_input_signature[1].items()]
            call = lambda *xs: signature(**{s.name: x for s, x in zip(specs, xs)})  # noqa: E731
        else:
            import keras  # noqa: PLC0415

            net = keras.saving.load_model(path, compile=False)
            specs = [tf.TensorSpec([None, *t.shape[1:]], t.dtype, name=t.name) for t in net.inputs]
            names = list(net.output_names)

            def call(*xs):
                out = net(list(xs) if len(xs) > 1 else xs[0], training=False)
                return out if isinstance(out, dict) else dict(zip(names, out if isinstance(out, (list, tuple)) else [out]))

        model, _ = tf2onnx.convert.from_function(tf.function(call, input_signature=specs), input_signature=specs, opset=OPSET, output_path=target)
        inputs = [{"name": s.name, "tensor": s.name, "dtype": s.dtype.name, "scale": None, "zero_point": None} for s in specs]
        outputs = [{"name": o.name, "tensor": o.name, "dtype": None, "scale": None, "zero_point": None} for o in model.graph.output]
        io = {"inputs": inputs, "outputs": outputs}
    model = onnx.load(target)
    model.metadata_props.add(key="pbh.source.io", value=json.dumps(io))
    onnx.save(model, target)
    how = "from_function" if source != "tflite" else "from_tflite, its DENSIFY ops first made dense constants by LiteRT" if io.get("densified") else "from_tflite"
    return {"format": source, "exporter": f"tf2onnx ({how})", "exporter_version": exporter_version(), "input_names": [i["name"] for i in inputs], "output_names": [o["name"] for o in outputs]}
