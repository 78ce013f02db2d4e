"""Which precision OpenVINO executes a compiled model in, read back from the runtime rather than assumed.

Two witnesses: the compiled model's INFERENCE_PRECISION_HINT (what the plugin settled on for the whole model) and the
execution graph's per-node rt_info "runtimePrecision" over the compute ops, where the arithmetic is. A plugin may keep
some nodes in f32 under a bf16 hint, or quantized nodes in u8/i8 under any hint; executed is the least precise
precision a compute op runs in, because that is what bounds the error of the outputs.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import openvino as ov
import openvino.properties as props
import openvino.properties.hint as hints

from pbh_worker import WorkerError

# int8 is not a hint value: the CPU plugin runs a quantized graph's FakeQuantize regions (QDQ pairs as read) in u8/i8
# under any hint, and the hint sets the arithmetic of what lies outside them. An int8 request keeps that f32, so the
# int8 figure is not also a bf16 one; the census below says whether any compute op did run in i8/u8.
HINTS = {"fp32": ov.Type.f32, "bf16": ov.Type.bf16, "fp16": ov.Type.f16, "int8": ov.Type.f32}
# OpenVINO element type names (as rt_info and Type.get_type_name() spell them) -> PBH precisions.
PBH_NAME = {"f64": "fp64", "f32": "fp32", "bf16": "bf16", "f16": "fp16", "i8": "int8", "u8": "int8"}
LEAST_PRECISE_FIRST = ["int8", "bf16", "fp16", "fp32", "fp64"]
# Execution-graph layer types that do the multiply-accumulates; reorders, pooling and activations follow them.
COMPUTE_OPS = ("Convolution", "GroupConvolution", "Deconvolution", "FullyConnected", "MatMul", "Gemm")


def precision_hint(precision: str) -> ov.Type:
    hint = HINTS.get(precision)
    if hint is None:
        raise WorkerError(
            "bad_request", f"OpenVINO's INFERENCE_PRECISION_HINT takes {', '.join(HINTS)}; it cannot be asked to execute {precision!r}"
        )
    return hint


def _rt_str(rt_info: Any, key: str) -> str | None:
    return rt_info[key].astype(str) if key in rt_info else None


def compute_op_census(compiled: ov.CompiledModel) -> Counter[str]:
    """{runtime precision: number of compute ops that run in it} over the compiled model's execution graph."""
    census: Counter[str] = Counter()
    for op in compiled.get_runtime_model().get_ordered_ops():
        rt_info = op.get_rt_info()
        if _rt_str(rt_info, "layerType") in COMPUTE_OPS:
            census[_rt_str(rt_info, "runtimePrecision") or "unknown"] += 1
    return census


def executed_precision(core: ov.Core, compiled: ov.CompiledModel, device: str, requested: str) -> dict[str, str]:
    """{"executed": PBH precision, "evidence": what OpenVINO reported} for a model compiled with precision_hint(requested)."""
    reported = compiled.get_property(hints.inference_precision).get_type_name()
    census = compute_op_census(compiled)
    evidence = [f"INFERENCE_PRECISION_HINT={HINTS[requested].get_type_name()} set{' (int8 asked: the ops outside quantized regions)' if requested == 'int8' else ''}, compiled model reports {reported}"]
    ran = [PBH_NAME[name] for name in census if name in PBH_NAME]
    if ran:
        executed = min(ran, key=LEAST_PRECISE_FIRST.index)
        counts = ", ".join(f"{name} x{count}" for name, count in census.most_common())
        evidence.append(f"runtime precisions of {sum(census.values())} compute ops: {counts}")
    else:
        executed = PBH_NAME[reported]
        evidence.append(f"no compute ops ({', '.join(COMPUTE_OPS)}) in the execution graph: the compiled model's report decides")
    if executed != requested:
        try:
            capabilities = ", ".join(core.get_property(device, props.device.capabilities))
            evidence.append(f"{device} OPTIMIZATION_CAPABILITIES: {capabilities}")
        except RuntimeError:
            pass
    return {"executed": executed, "evidence": "; ".join(evidence)}
