"""ONNX -> Relax -> a VM executable for the host CPU, in the steps PBH times separately.

The Relax pipeline is TVM's own CPU pipeline (relax.backend.cpu_generic.pipeline), split in two halves so MetaSchedule can
run between them when tuning is on:
  fuse:  DecomposeOpsForInference, then library dispatch + legalize passes (LegalizeOps, AnnotateTIROpPattern,
         FoldConstant, FuseOps, FuseTIR): one TIR PrimFunc per fused kernel, e.g. fused_conv2d_add_relu.
  lower: dataflow lowering + finalize passes, then TIR codegen with LLVM (tvm.compile with that half as relax_pipeline).
Untuned kernels keep TOPI's default loop nests: TVM 0.27 attaches no CPU schedule to them (no parallel loops,
no vectorisation unless LLVM finds it), which is what "TVM without tuning" means on a CPU.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import tvm
from tvm import relax
# The package __init__ does not re-export dataflow_lower_passes, so relax.pipeline's own dispatcher fails for llvm.
from tvm.relax.backend.cpu_generic import pipeline as cpu_pipeline
from tvm.relax.frontend.onnx import from_onnx
from tvm.target import codegen

ONNX_DTYPES = {
    onnx.TensorProto.FLOAT: "float32",
    onnx.TensorProto.DOUBLE: "float64",
    onnx.TensorProto.FLOAT16: "float16",
    onnx.TensorProto.INT8: "int8",
    onnx.TensorProto.UINT8: "uint8",
    onnx.TensorProto.INT32: "int32",
    onnx.TensorProto.INT64: "int64",
    onnx.TensorProto.BOOL: "bool",
}


class ModelError(Exception):
    """The model cannot be read, imported or built by TVM; the message carries TVM's own words."""


class RequestError(Exception):
    """The load request does not fit the model (unknown input names, shapes left symbolic)."""


@dataclass
class GraphInput:
    name: str
    dtype: str
    # A str is an axis left symbolic (its ONNX dim_param): TVM's frontend imports it as a shape variable.
    shape: list[int | str]

    @property
    def symbolic(self) -> bool:
        return any(isinstance(d, str) for d in self.shape)


def host_cpu() -> str:
    """LLVM's name for this machine's CPU (e.g. znver3), as -mcpu takes it."""
    return str(codegen.llvm_get_system_cpu())


def make_target(mcpu: str, num_cores: int) -> tvm.target.Target:
    # 0.27 accepts only the JSON-dict form ("llvm -mcpu=..." strings were removed).
    return tvm.target.Target({"kind": "llvm", "mcpu": mcpu, "num-cores": num_cores})


def read_onnx(model_path: str) -> onnx.ModelProto:
    try:
        return onnx.load(model_path)
    except Exception as e:  # noqa: BLE001 - protobuf raises several unrelated types for a bad file
        raise ModelError(f"onnx cannot read {model_path}: {type(e).__name__}: {e}") from e


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """Inputs the caller feeds: graph inputs that are not initializers (older exporters list weights as inputs)."""
    initializers = {init.name for init in model.graph.initializer}
    return [value for value in model.graph.input if value.name not in initializers]


def resolve_inputs(model: onnx.ModelProto, batch_size: int, requested: list[dict[str, Any]], model_path: str) -> list[GraphInput]:
    """Input shapes: the request's where given, else the model's with a symbolic leading dim = batch size; another
    symbolic axis the request leaves symbolic stays symbolic (a language model's sequence axis), for TVM to judge."""
    declared = graph_inputs(model)
    by_name = {spec["name"]: spec for spec in requested}
    known = [value.name for value in declared]
    missing = sorted(set(by_name) - set(known))
    if missing:
        raise RequestError(f"{model_path} has no inputs named {missing} (it has {known})")
    resolved: list[GraphInput] = []
    for value in declared:
        tensor_type = value.type.tensor_type
        dtype = ONNX_DTYPES.get(tensor_type.elem_type)
        if dtype is None:
            raise ModelError(f"{model_path} input {value.name!r} has ONNX element type {tensor_type.elem_type}, which PBH cannot feed")
        spec = by_name.get(value.name)
        shape: list[int] = []
        for axis, dim in enumerate(tensor_type.shape.dim):
            fed = spec["shape"][axis] if spec and axis < len(spec["shape"]) else None
            if isinstance(fed, int):
                shape.append(fed)
            elif dim.HasField("dim_value"):
                shape.append(dim.dim_value)
            elif axis == 0:
                shape.append(batch_size)
            elif dim.dim_param:
                shape.append(dim.dim_param)
            else:
                raise RequestError(
                    f"{model_path} input {value.name!r} axis {axis} is symbolic without a name: "
                    "pass concrete shapes in the load request's inputs"
                )
        if spec and spec.get("dtype") and spec["dtype"] != dtype:
            raise RequestError(f"{model_path} input {value.name!r} is {dtype}, the request says {spec['dtype']}")
        resolved.append(GraphInput(value.name, dtype, shape))
    return resolved


# onnxslim passes PBH keeps: only what removes shape arithmetic at the cell's concrete shapes. Fusions (Conv+BN,
# Gemm, Reshape chains), weight tying and subexpression elimination are skipped so the kernels TVM builds are the
# graph's own: on a model without shape arithmetic the folded graph computes the same ops as the file.
FOLD_SKIPPED = ["graph_fusion", "weight_tying", "subexpression_elimination"]
FOLD_KEPT = ["constant_folding", "dead_node_elimination", "shape_inference"]
SHAPE_OPS = {"Shape", "Size", "If", "Loop", "ConstantOfShape", "Range", "NonZero"}


def _census(model: onnx.ModelProto) -> Counter[str]:
    return Counter(node.op_type for node in model.graph.node)


def fold_shapes(model: onnx.ModelProto, inputs: list[GraphInput]) -> tuple[onnx.ModelProto, dict[str, Any]]:
    """The graph with its shape arithmetic folded at the cell's concrete input shapes (onnxslim: constant folding,
    dead nodes, shape inference), and what was done, for the Profile's engine facts. Exporters from Paddle and
    TensorFlow compute Reshape targets as Shape -> Gather -> Concat; TVM's frontend takes a Reshape target only as a
    constant or a Relax shape, so those graphs import only once the concrete shapes have folded them. Folding that
    fails leaves the graph as it was, and the facts say why."""
    import onnxslim  # noqa: PLC0415 - only a build needs it

    before = _census(model)
    fed = [i for i in inputs if not i.symbolic and len(i.shape) > 0]
    facts: dict[str, Any] = {
        "library": f"onnxslim {onnxslim.__version__}",
        "passes": FOLD_KEPT,
        "skipped": FOLD_SKIPPED,
        "input_shapes": {i.name: i.shape for i in fed},
        "nodes_before": sum(before.values()),
    }
    start = time.perf_counter()
    try:
        folded = onnxslim.slim(model, input_shapes=[f"{i.name}:{','.join(map(str, i.shape))}" for i in fed] or None, skip_optimizations=FOLD_SKIPPED)
    except Exception as e:  # noqa: BLE001 - any failure of the library keeps the graph as it was
        facts.update({"applied": False, "error": f"{type(e).__name__}: {e}"[:500], "fold_ms": (time.perf_counter() - start) * 1000})
        return model, facts
    if folded is None:
        facts.update({"applied": False, "error": "onnxslim returned no model", "fold_ms": (time.perf_counter() - start) * 1000})
        return model, facts
    after = _census(folded)
    removed = {op: before[op] - after.get(op, 0) for op in sorted(before) if before[op] > after.get(op, 0)}
    facts.update(
        {
            "applied": True,
            "fold_ms": (time.perf_counter() - start) * 1000,
            "nodes_after": sum(after.values()),
            "removed": removed,
            "shape_ops_left": {op: after[op] for op in sorted(after) if op in SHAPE_OPS},
        }
    )
    return folded, facts


def fold_summary(facts: dict[str, Any]) -> str:
    """One line on what fold_shapes did, for an import error: the graph TVM refused is the folded one."""
    if not facts.get("applied"):
        return f"graph imported as stored: {facts['library']} could not fold it ({facts.get('error')})"
    shapes = ", ".join(f"{name} {shape}" for name, shape in facts["input_shapes"].items())
    return f"after {facts['library']} folded shape arithmetic at {shapes or 'the model shapes'}: {facts['nodes_before']} -> {facts['nodes_after']} nodes"


def import_onnx(model: onnx.ModelProto, inputs: list[GraphInput], model_path: str) -> tvm.IRModule:
    try:
        return from_onnx(
            model,
            # An input with a symbolic axis keeps the model's own dims (the frontend makes them shape variables).
            shape_dict={i.name: i.shape for i in inputs if not i.symbolic},
            dtype_dict={i.name: i.dtype for i in inputs},
        )
    except Exception as e:  # noqa: BLE001 - the frontend raises whatever its converters raise
        raise ModelError(f"TVM's ONNX frontend cannot import {model_path}: {type(e).__name__}: {e}") from e


def fuse(mod: tvm.IRModule, target: tvm.target.Target, opt_level: int) -> tvm.IRModule:
    """Legalize every Relax op to TIR and fuse them into kernels (FuseOps is skipped below opt_level 1)."""
    with target, tvm.transform.PassContext(opt_level=opt_level):
        passes = [relax.transform.DecomposeOpsForInference(), relax.transform.CanonicalizeBindings()]
        passes += cpu_pipeline.library_dispatch_passes(target) + cpu_pipeline.legalize_passes(target)
        return tvm.transform.Sequential(passes)(mod)


def lower_and_build(mod: tvm.IRModule, target: tvm.target.Target, opt_level: int) -> Any:
    @tvm.transform.module_pass(opt_level=0)
    def lower(module: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        with target:
            passes = cpu_pipeline.dataflow_lower_passes(target) + cpu_pipeline.finalize_passes(target)
            return tvm.transform.Sequential(passes)(module)

    with tvm.transform.PassContext(opt_level=opt_level):
        return tvm.compile(mod, target, relax_pipeline=lower)


def kernel_output_counts(mod: tvm.IRModule) -> dict[str, int]:
    """{kernel symbol: number of outputs}: a kernel's last N arguments are its outputs (destination passing)."""
    call_tir = tvm.ir.Op.get("relax.call_tir")
    counts: dict[str, int] = {}
    for _, func in mod.functions_items():
        if not isinstance(func, relax.Function):
            continue
        for block in func.body.blocks:
            for binding in block.bindings:
                value = binding.value
                if isinstance(value, relax.Call) and value.op.same_as(call_tir):
                    out = value.ty_args[0]
                    counts[value.args[0].name_hint] = len(out.fields) if isinstance(out, relax.TupleType) else 1
    return counts


def kernel_names(mod: tvm.IRModule) -> list[str]:
    return sorted(gvar.name_hint for gvar, func in mod.functions_items() if isinstance(func, tvm.tirx.PrimFunc))


def output_specs(mod: tvm.IRModule, model: onnx.ModelProto) -> list[dict[str, Any]]:
    """Output specs from the imported function's return type, named after the ONNX graph outputs."""
    ret = mod["main"].ret_ty
    fields = list(ret.fields) if isinstance(ret, relax.TupleType) else [ret]
    names = [value.name for value in model.graph.output]
    if len(names) != len(fields):
        names = [f"output_{i}" for i in range(len(fields))]
    specs = []
    for name, ty in zip(names, fields):
        shape = [int(d) if isinstance(d, tvm.tirx.IntImm) else str(d) for d in ty.shape.values] if ty.shape is not None else []
        specs.append({"name": name, "dtype": str(ty.dtype), "shape": shape})
    return specs


# Relax dtype names -> PBH precisions, least precise first (the order that bounds the outputs' error).
PRECISION_OF_DTYPE = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "float64": "fp64"}
LEAST_PRECISE_FIRST = ["bf16", "fp16", "fp32", "fp64"]


def _is_compute_op(value: Any) -> bool:
    if not isinstance(value, relax.Call) or not isinstance(value.op, tvm.ir.Op):
        return False
    name = value.op.name
    return name == "relax.matmul" or name.startswith("relax.nn.conv")


def executed_precision(mod: tvm.IRModule) -> dict[str, str] | None:
    """The float type the imported model computes in: a census of the dtypes its convolutions and matmuls produce
    (every float tensor of main when it has none). TVM's pipeline compiles these types as they are: PBH runs no
    mixed-precision pass, so the import is where the executed precision is decided. None: no float arithmetic."""
    compute: Counter[str] = Counter()
    every: Counter[str] = Counter()
    for block in mod["main"].body.blocks:
        for binding in block.bindings:
            ty = binding.var.ty
            dtype = str(ty.dtype) if isinstance(ty, relax.TensorType) else None
            if dtype in PRECISION_OF_DTYPE:
                every[dtype] += 1
                if _is_compute_op(binding.value):
                    compute[dtype] += 1
    census = compute or every
    if not census:
        return None
    executed = min((PRECISION_OF_DTYPE[d] for d in census), key=LEAST_PRECISE_FIRST.index)
    counts = ", ".join(f"{dtype} x{count}" for dtype, count in census.most_common())
    found = (
        f"the {sum(census.values())} convolutions and matmuls of main produce {counts}"
        if compute
        else f"main has no convolution or matmul; its {sum(census.values())} float tensors are {counts}"
    )
    return {"executed": executed, "evidence": f"Relax module imported from the ONNX graph: {found}; compiled as imported (no mixed-precision pass)"}


def to_device(array: np.ndarray, device: tvm.runtime.Device) -> Any:
    # np.asarray(order="C"), not ascontiguousarray, which turns a scalar (0-d) input into shape [1].
    return tvm.runtime.tensor(np.asarray(array, order="C"), device)


def shared_on_device(array: np.ndarray, device: tvm.runtime.Device) -> Any:
    """A device tensor over `array`'s own memory where TVM can take it (the CPU, C order, 64-byte aligned: the worker
    aligns resident batches so), else a copy. Resident batches are read in place as a deployment hands TVM its own
    buffers; a copy of a large performance set into fresh memory cost ~15 ms per 64 MiB here."""
    if device.dlpack_device_type() == tvm.cpu().dlpack_device_type() and array.flags.c_contiguous and array.flags.writeable and array.ctypes.data % 64 == 0:
        return tvm.runtime.from_dlpack(array)
    return to_device(array, device)


def available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
