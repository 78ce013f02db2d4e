"""Weight-only compression an ONNX graph or an OpenVINO IR carries, read from its nodes (never from the option that asked
for it).

Weight-only means the arithmetic stays float and only the stored weights are integers: com.microsoft.MatMulNBits
(ONNX Runtime's int4 quantizer, the GenAI builder, NNCF's int4) or DequantizeLinear of constant integer weights with
no activation quantized anywhere (NNCF's int8 compress_weights). A graph that also quantizes activations is an int8
model, which the engines' own precision read-back handles.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

# Integer element types of ONNX's TensorProto: INT8, UINT8, INT4, UINT4.
_BITS = {3: 8, 2: 8, 22: 4, 21: 4}


def weight_compression(path: str) -> tuple[str | None, str, bool]:
    """weight_compression_of the ONNX file's graph (its external weights left unread)."""
    import onnx  # noqa: PLC0415 - only models that may be compressed pay for it

    return weight_compression_of(onnx.load(path, load_external_data=False).graph)


def weight_compression_of(graph: Any) -> tuple[str | None, str, bool]:
    """("int4" | "int8" | None, evidence, int8 activations): the integer width holding most compressed weights, what
    was found, and whether a MatMulNBits asks ONNX Runtime for int8 arithmetic (accuracy_level 4, the GenAI builder's
    default on CPU: activations quantized per block at run time)."""
    initializers = {i.name: i for i in graph.initializer}
    ops = Counter(n.op_type for n in graph.node)
    if ops["QuantizeLinear"] or ops["DynamicQuantizeLinear"]:
        return None, "activations are quantized too: not weight-only", False
    bits: Counter[int] = Counter()
    levels: Counter[int] = Counter()
    for node in graph.node:
        if node.op_type == "MatMulNBits":
            attrs = {a.name: a.i for a in node.attribute}
            bits[attrs.get("bits", 4)] += attrs.get("K", 0) * attrs.get("N", 0)
            levels[attrs.get("accuracy_level", 0)] += 1
        elif node.op_type == "DequantizeLinear" and node.input[0] in initializers:
            weight = initializers[node.input[0]]
            if weight.data_type in _BITS and len(weight.dims) >= 2:
                count = 1
                for d in weight.dims:
                    count *= d
                bits[_BITS[weight.data_type]] += count
    if not bits:
        return None, "no MatMulNBits or dequantized integer weights in the graph: float weights", False
    width = bits.most_common(1)[0][0]
    found = ", ".join(f"{n} int{b} weights" for b, n in sorted(bits.items()))
    int8 = levels[4] > 0
    level = f"; accuracy_level 4 on {levels[4]} MatMulNBits: ONNX Runtime computes them in int8" if int8 else ""
    return f"int{width}", f"weight-only compression read from the graph ({ops['MatMulNBits']} MatMulNBits, {ops['DequantizeLinear']} DequantizeLinear): {found}{level}", int8


def ir_weight_compression(ir: Any) -> tuple[str | None, str]:
    """("int4" | "int8" | None, evidence) of an OpenVINO IR (an ov.Model): its weight constants by element type, int4 or
    int8 where compressed weights are there (NNCF's u4/i4, u8/i8 constants)."""
    census: Counter[str] = Counter(op.get_element_type().get_type_name() for op in ir.get_ops() if op.get_type_name() == "Constant")
    said = ", ".join(f"{n} {k}" for k, n in sorted(census.items()))
    for kinds, name in ((("u4", "i4"), "int4"), (("u8", "i8"), "int8")):
        if any(census.get(k) for k in kinds):
            return name, f"IR weight constants: {said}"
    return None, f"IR weight constants: {said} (no compressed weights)"


def file_names_any(path: str, markers: tuple[bytes, ...]) -> bool:
    """Whether the file's bytes hold any of `markers` (op type names): a cheap test that spares importing onnx for
    plain float models; a hit (an op, or only a name that contains one) is settled by reading the graph."""
    import mmap  # noqa: PLC0415

    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return any(data.find(marker) >= 0 for marker in markers)


def may_be_compressed(path: str) -> bool:
    """Whether the file's bytes name an op weight-only compression uses."""
    return file_names_any(path, (b"MatMulNBits", b"DequantizeLinear"))
