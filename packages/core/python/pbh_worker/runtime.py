"""The interface each engine's worker implements: only its runtime calls, no protocol code."""

from __future__ import annotations

import functools
import time
from typing import Any, Callable

import numpy as np

from .clock import now, wait_until
from .errors import WorkerError


def required_options(options: dict[str, Any], *keys: str) -> None:
    """Reject options that skipped the engine's zod schema (which fills every default) with a bad_request naming them."""
    missing = [key for key in keys if key not in options]
    if missing:
        raise WorkerError(
            "bad_request",
            f"options lack {missing}: send the options parsed by the engine's optionsSchema (src/options.ts), which fills their defaults",
        )


class Runtime:
    """Base class of an engine runtime driven by `run_worker`.

    The loop sets `work_dir` (a scratch directory the engine may write into) and `seed` before each `load`.
    Arrays returned by `infer` only need to stay valid until the loop has written them, i.e. until the next call:
    a runtime may return views of its own output buffers without copying.
    """

    work_dir: str | None = None
    seed: int = 0
    _samples: list[dict[str, np.ndarray]] = []

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
        precision: str,
    ) -> dict[str, Any]:
        """Compile the model to execute in `precision` ("fp32", "bf16", ...).

        `options` arrive parsed by the engine's zod schema, defaults filled in: a worker neither re-validates them nor
        keeps defaults of its own (see `required_options`). Return {"compile_ms", "inputs", "outputs", "facts",
        "precision"?: {"executed", "evidence"}, "threads"?: int | None} (specs: name, dtype, shape), where precision
        and threads are read back from the runtime after compiling, not echoed from the request.
        """
        raise NotImplementedError

    def infer(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def load_samples(self, batches: list[dict[str, np.ndarray]]) -> None:
        """Keep these preprocessed batches (every model input each) for `run_sample`, replacing any kept earlier.

        A runtime checks them against the model here and wraps them as its call takes them (its own tensor type,
        device memory), so `run_sample` pays only what a deployment pays per request. The arrays are the worker's
        own (read from the pipe); a runtime may share their memory instead of copying.
        """
        self._samples = batches

    def run_sample(self, index: int) -> None:
        """Run resident batch `index` (the loop checked it) as a deployment serves a request: bind its inputs, run,
        and take the outputs as arrays the caller could read, then drop them. The loop times this call: it is the
        `engine` boundary of the resident runs. The default runs `infer` on the kept arrays."""
        self.infer(self._samples[index])

    def sample_call(self, index: int) -> Callable[[], Any]:
        """A call with no arguments that does exactly what `run_sample(index)` does, made once after `load_samples`.

        The loop times these in a session: a runtime whose per-call work fits a pre-bound call (e.g. a
        `functools.partial` over its binding's method and the batch's pre-made tensors) spares each query the Python
        method dispatch and lookups (about 1 us a call). The default binds `run_sample`.
        """
        return functools.partial(self.run_sample, index)

    def max_concurrency(self) -> int:
        """Queries the loaded model can run at once (`run_schedule`'s concurrency at most), read after `load`."""
        return 1

    def run_schedule(self, batches: list[int], arrivals_ns: list[int], concurrency: int) -> tuple[list[int], list[int]]:
        """Run query q on resident batch `batches[q]` once it is due (`arrivals_ns[q]` after the start) and fewer than
        `concurrency` queries are in flight, in order (FIFO). Returns (issued_ns, completed_ns) per query, ns after the
        start on perf_counter_ns. The loop checked the indices, the order of arrivals and the concurrency.

        The default runs one query at a time (max_concurrency 1): wait until due, run_sample, record. A query due
        while the one before still runs is issued when that one completes, and its issue delay shows it.
        """
        run = self.run_sample
        issued = [0] * len(batches)
        completed = [0] * len(batches)
        start = now()
        for query, (batch, arrival) in enumerate(zip(batches, arrivals_ns)):
            wait_until(start + arrival)
            issue = now()
            run(batch)
            completed[query] = now() - start
            issued[query] = issue - start
        return issued, completed

    def bench(self, inputs: dict[str, np.ndarray], iterations: int) -> list[int]:
        """Nanoseconds per iteration on a resident input, no IPC.

        A runtime that keeps several requests in flight returns the intervals between consecutive completions.
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
