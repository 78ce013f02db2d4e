"""Precision of the PyTorch engines: fp32 as the model is, bf16 through torch.autocast on a CPU that has bf16 units.

What is executed is read back, not echoed: the output dtypes of the model's compute modules (convolutions, linear
layers, matmuls) on one example run under the same autocast the engine runs with.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import torch

from pbh_worker import Precision, WorkerError

_NAMES = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16", torch.float64: "fp64"}
_COMPUTE = ("Conv", "Linear", "MatMul", "Gemm", "Bilinear")
# Least precise first: the executed precision of a census is the first one present.
_ORDER = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def bf16_support(device: str) -> tuple[bool, str]:
    """Whether this device runs bf16 natively, and what says so."""
    if device == "cuda":
        ok = torch.cuda.is_bf16_supported()
        return ok, f"torch.cuda.is_bf16_supported()={ok}"
    flags = sorted(f for f in cpu_flags() if f in {"avx512_bf16", "amx_bf16", "avx_vnni_bf16"} or f.startswith("amx_bf16"))
    mkldnn = bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    return bool(flags) and mkldnn, f"CPU flags: {', '.join(flags) or 'no avx512_bf16/amx_bf16'}; oneDNN bf16 supported: {mkldnn}"


def autocast_for(precision: str, device: str, model_path: str) -> torch.dtype | None:
    """The autocast dtype a request needs (None: run as stored), or a refusal naming why."""
    if precision == "fp32":
        return None
    if precision != "bf16":
        raise WorkerError("bad_request", f"the PyTorch engines execute fp32 or bf16 (autocast), not {precision}: leave engines[].precision unset or use bf16")
    ok, evidence = bf16_support(device)
    if not ok:
        raise WorkerError(
            "bad_request",
            f"bf16 on {device} is emulated here ({evidence}): autocast would run it in software, so PBH refuses it for {model_path}; use fp32 on this machine",
        )
    return torch.bfloat16


def compute_census(module: Any, example: list[torch.Tensor], dtype: torch.dtype | None, device: str) -> Counter:
    """Output dtypes of the compute modules of `module` on one example run under autocast(dtype)."""
    census: Counter = Counter()
    handles = []

    def hook(mod: Any, _inputs: Any, output: Any) -> None:
        if isinstance(output, torch.Tensor):
            census[output.dtype] += 1

    if isinstance(module, torch.nn.Module) and not isinstance(module, torch.jit.ScriptModule):
        for sub in module.modules():
            if any(word in type(sub).__name__ for word in _COMPUTE):
                handles.append(sub.register_forward_hook(hook))
    try:
        with torch.inference_mode(), torch.autocast(device, dtype=dtype or torch.bfloat16, enabled=dtype is not None):
            module(*example)
    finally:
        for h in handles:
            h.remove()
    return census


def executed(census: Counter, dtype: torch.dtype | None, output_dtype: torch.dtype, support: str) -> Precision:
    counts = ", ".join(f"{_NAMES.get(d, str(d))} x{n}" for d, n in census.most_common())
    if census:
        least = next(d for d in _ORDER if d in census)
        name = _NAMES.get(least, "fp32")
        seen = f"outputs of {sum(census.values())} compute modules on an example run: {counts}"
    else:
        # A TorchScript source has no modules to hook: its output's dtype is the evidence.
        name = _NAMES.get(output_dtype, "fp32")
        seen = f"no compute modules to hook (TorchScript); the model's output is {output_dtype}"
    mode = f"torch.autocast(bfloat16) around every call ({support})" if dtype is not None else "no autocast, weights as stored"
    return Precision(name, f"{mode}; {seen}")
