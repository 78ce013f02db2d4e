"""Per-kernel timings from the Relax VM's instrument hook (vm.profile is gone since TVM 0.24).

The VM calls the hook before and after every Call instruction with the callee's symbol and its arguments. Kernels
(TIR PrimFuncs such as fused_conv2d_add_relu) are timed between the two calls; vm.builtin.* calls (allocation,
shape checks, reshape views) are not layers and are left out. Each timing includes one Python hook return and one
hook entry (about a microsecond), so tiny kernels read slightly high.
"""

from __future__ import annotations

import re
import time
from typing import Any, Callable

import tvm
from pbh_worker import Layer

_SUFFIX = re.compile(r"\d*(?:_|$)")


def _short_op_names() -> list[str]:
    """Names LegalizeOps gives kernels: the last component of each registered Relax op, longest first."""
    names = {name.rsplit(".", 1)[-1] for name in tvm.ir.Op.list_op_names() if name.startswith("relax.")}
    return sorted(names, key=len, reverse=True)


_OP_NAMES = _short_op_names()


def op_type(kernel: str) -> str:
    """The first (anchor) op of a kernel name: fused_conv2d8_add3_relu3 -> conv2d, max_pool2d1 -> max_pool2d."""
    name = kernel[len("fused_") :] if kernel.startswith("fused_") else kernel
    for op in _OP_NAMES:
        if name.startswith(op) and _SUFFIX.match(name, len(op)):
            return op
    return re.sub(r"\d+$", "", name.split("_", 1)[0]) or kernel


def _shape(arg: Any) -> str | None:
    shape = getattr(arg, "shape", None)
    return None if shape is None else "[" + ",".join(str(int(d)) for d in shape) + "]"


class KernelTimer:
    """Accumulates kernel time per symbol across VM runs while installed as the VM's instrument."""

    def __init__(self, output_counts: dict[str, int]):
        self.output_counts = output_counts
        self.total_ns: dict[str, int] = {}
        self.calls: dict[str, int] = {}
        self.shapes: dict[str, tuple[str, str]] = {}
        self._started = 0

    def hook(self) -> Callable[..., int]:
        def instrument(_func: Any, symbol: str, before_run: bool, _ret: Any, *args: Any) -> int:
            now = time.perf_counter_ns()
            if symbol.startswith("vm.builtin."):
                return 0
            if before_run:
                self._started = now
                return 0
            self.total_ns[symbol] = self.total_ns.get(symbol, 0) + now - self._started
            self.calls[symbol] = self.calls.get(symbol, 0) + 1
            if symbol not in self.shapes:
                self.shapes[symbol] = self._io_shapes(symbol, args)
            return 0

        return instrument

    def _io_shapes(self, symbol: str, args: tuple[Any, ...]) -> tuple[str, str]:
        shapes = [s for s in (_shape(a) for a in args) if s is not None]
        outputs = min(self.output_counts.get(symbol, 1), len(shapes))
        split = len(shapes) - outputs
        return ";".join(shapes[:split]), ";".join(shapes[split:])

    def layers(self, iterations: int) -> list[Layer]:
        rows = []
        for symbol, total in self.total_ns.items():
            inputs, outputs = self.shapes.get(symbol, ("", ""))
            rows.append(Layer(symbol, op_type(symbol), total / iterations, self.calls[symbol], {"input_shapes": inputs, "output_shapes": outputs}))
        return rows
