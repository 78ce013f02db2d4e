"""Per-layer timings: forward hooks on every leaf module (the paper's method) for eager models; the PyTorch profiler's
self CPU time per operator for TorchScript and torch.compile, whose graphs have no modules left to hook."""

from __future__ import annotations

import gc
import time
from collections import defaultdict
from typing import Any, Callable

import torch

from pbh_worker import Layer


def _shapes(value: Any) -> str | None:
    tensors = [value] if isinstance(value, torch.Tensor) else [v for v in value if isinstance(v, torch.Tensor)] if isinstance(value, (tuple, list)) else []
    if not tensors:
        return None
    return ";".join("[" + ",".join(str(d) for d in t.shape) + "]" for t in tensors)


def hooked(module: torch.nn.Module, call: Callable[[], Any], iterations: int) -> list[Layer]:
    """Time each leaf module between its forward pre-hook and its forward hook, `iterations` calls of `call`."""
    clock = time.perf_counter_ns
    starts: dict[str, int] = {}
    total: dict[str, int] = defaultdict(int)
    calls: dict[str, int] = defaultdict(int)
    shapes: dict[str, tuple[str | None, str | None]] = {}
    types: dict[str, str] = {}
    handles = []
    for name, sub in module.named_modules():
        if next(sub.children(), None) is not None:
            continue
        label = name or type(sub).__name__
        types[label] = type(sub).__name__

        def pre(_mod: Any, args: Any, label: str = label) -> None:
            starts[label] = clock()

        def post(_mod: Any, args: Any, output: Any, label: str = label) -> None:
            end = clock()
            total[label] += end - starts[label]
            calls[label] += 1
            if label not in shapes:
                shapes[label] = (_shapes(args), _shapes(output))

        handles.append(sub.register_forward_pre_hook(pre))
        handles.append(sub.register_forward_hook(post))
    gc.collect()
    gc.disable()
    try:
        for _ in range(iterations):
            call()
    finally:
        gc.enable()
        for h in handles:
            h.remove()
    return [
        Layer(label, types[label], total[label] / iterations, calls[label], {"input_shapes": shapes[label][0], "output_shapes": shapes[label][1]})
        for label in total
    ]


def profiled(call: Callable[[], Any], iterations: int) -> list[Layer]:
    """Self CPU time per operator from torch.profiler over `iterations` calls (self times add up to the model's)."""
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(iterations):
            call()
    layers = []
    for event in prof.key_averages(group_by_input_shape=True):
        if event.self_cpu_time_total <= 0:
            continue
        shapes = [s for s in (event.input_shapes or []) if s]
        layers.append(
            Layer(
                event.key,
                event.key.split("::")[-1],
                # The profiler reports microseconds.
                event.self_cpu_time_total * 1000 / iterations,
                int(event.count),
                {"input_shapes": ";".join("[" + ",".join(str(d) for d in s) + "]" for s in shapes) or None, "output_shapes": None},
            )
        )
    return layers
