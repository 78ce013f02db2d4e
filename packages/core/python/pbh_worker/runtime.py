"""The interface each engine's worker implements: only its runtime calls, no protocol code."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .errors import WorkerError


class Runtime:
    """Base class of an engine runtime driven by `run_worker`.

    The loop sets `work_dir` (a scratch directory the engine may write into) and `seed` before each `load`.
    Arrays returned by `infer` only need to stay valid until the loop has written them, i.e. until the next call:
    a runtime may return views of its own output buffers without copying.
    """

    work_dir: str | None = None
    seed: int = 0

    def hello(self) -> dict[str, Any]:
        """{"runtime": name, "version": str, "devices": [str], "details"?: {str: str}}."""
        raise NotImplementedError

    def load(
        self,
        model_path: str,
        batch_size: int,
        device: str,
        options: dict[str, Any],
        inputs: list[dict[str, Any]],
    ) -> dict[str, Any]:
        """Compile the model; return {"compile_ms", "inputs", "outputs", "facts"} (specs: name, dtype, shape)."""
        raise NotImplementedError

    def infer(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def bench(self, inputs: dict[str, np.ndarray], iterations: int) -> list[int] | dict[str, Any]:
        """Nanoseconds per iteration on a resident input, no IPC.

        May return a dict {"iteration_ns": [...], "request_latency_ns"?: [...], "concurrency"?: int} when the
        runtime keeps several requests in flight and a per-request latency differs from the per-iteration time.
        """
        timings: list[int] = []
        for _ in range(iterations):
            start = time.perf_counter_ns()
            self.infer(inputs)
            timings.append(time.perf_counter_ns() - start)
        return timings

    def profile(self, inputs: dict[str, np.ndarray], iterations: int) -> list[dict[str, Any]]:
        """[{"name", "op_type", "mean_ns", "calls", "input_shapes"?, "output_shapes"?}] from the runtime's profiler."""
        raise WorkerError("unsupported", f"{type(self).__name__} has no per-layer profiler")

    def close(self) -> None:
        """Release the runtime's resources; the process exits right after."""
