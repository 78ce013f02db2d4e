"""The engine contract: what one Python file implements to put a runtime under PBH's measurement loop.

An engine is declared once, in its manifest (`pbh-engine.json`: name, devices, precisions, options as JSON Schema,
capabilities); the harness validates configs against it and this worker reads the same file. The file then holds
one `Engine` subclass with three required methods:

    about()        -> About        the runtime's version (and devices it sees, details for the Profile)
    load(model)    -> Loaded       read or compile `model.path` for `model.batch_size`, `model.precision`
    bind(batch)    -> call         a call with no arguments that runs one batch as a deployment serves a request

`bind` is made once per resident batch, before any timing; the loop times `call()` alone. The call returns what
the runtime returns; `outputs(result)` turns that into named arrays when the harness needs them (the correctness
gate, scoring): by default a dict is taken as is and a list or tuple is named by `Loaded.outputs` in order.

What an engine can do beyond that is declared under `capabilities` in the manifest, never guessed from which
methods a class has; a declared capability whose method is missing is refused when the worker starts:

    modelOnly    model_only(batch, iterations) -> [ns]     the runtime's own timing loop (benchmark_app's, time_evaluator)
    layers       layers(batch, iterations) -> [Layer]      per-layer timings from the runtime's profiler
    concurrency  max_concurrency() -> int and bind_async(batch) -> start(done)
                                                          several queries in flight: start(done) returns at once
                                                          and the runtime calls done() when that query completes,
                                                          done(error) when it failed
    decoder      decoder() -> decoders.Decoder | None     the runtime's own prefill/decode of a language model
                                                          (transformers, an LLM runtime, a stateful IR); without it,
                                                          or where it returns None for the model loaded, the
                                                          generate workload drives the graph through bind
                                                          (decoders.py)
    stream       stream(ids, max_new_tokens, on_token) -> {name: figure}
                                                          a runtime whose generate loop is its own (a pipeline):
                                                          it calls on_token(id) as each token is ready and returns
                                                          its own figures; requests are served one at a time and
                                                          perplexity is not measured (no logits)
    batchStream  batch_runtime(concurrency, max_tokens) -> BatchRuntime
                                                          a runtime that batches concurrent requests itself
                                                          (continuous batching): the worker's loop
                                                          (generation.batch_requests) adds each request at its
                                                          arrival, up to `concurrency` in flight, and steps the
                                                          runtime; made before the clock starts, sized for
                                                          `concurrency` requests of up to `max_tokens` tokens
                                                          (no logits: perplexity is not measured)
    serve        serve_session(concurrency) -> async context of send(text, ids, max_new_tokens, exchange)
                 output_tokens(text) -> [int] | None
                                                          a server behind a client (serving.py): the worker issues
                                                          the whole schedule itself, concurrently, send streams one
                                                          request and records each chunk's arrival into the
                                                          exchange; output_tokens counts a completion with the
                                                          model's tokenizer (None: the engine has none)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

import numpy as np

from .errors import WorkerError

Batch = Mapping[str, np.ndarray]
Call = Callable[[], Any]
# done() when the query completed, done(error) when it failed; from any thread.
Done = Callable[..., None]
Start = Callable[[Done], None]


class BatchRuntime(Protocol):
    """A continuous-batching runtime as `batch_runtime` returns it: requests added between steps, each step advancing
    every request in flight (a prefill or one decode token each, as the runtime schedules them)."""

    def add(self, ids: list[int], max_new_tokens: int) -> int:
        """Queue a greedy request of exactly `max_new_tokens` tokens; returns its key."""
        ...

    def step(self) -> dict[int, tuple[list[int], bool]]:
        """One step of the runtime: per request key that moved, the tokens this step produced and whether it finished."""
        ...

    def figures(self, key: int) -> dict[str, float]:
        """The runtime's own figures for a finished request (e.g. its TTFT and TPOT), {} where it has none."""
        ...


@dataclass(frozen=True)
class Model:
    """What the harness asks `load` for. `options` are the manifest's options, validated, defaults filled."""

    path: str
    batch_size: int
    device: str
    precision: str
    options: Mapping[str, Any]
    # The model's inputs at this cell: [{"name", "dtype", "shape"}], concrete where the harness knows them.
    inputs: list[Mapping[str, Any]] = field(default_factory=list)
    # A scratch folder the engine may write into (converted graphs, profiler files); None when the harness gave none.
    work_dir: str | None = None
    seed: int = 0


@dataclass(frozen=True)
class TensorSpec:
    name: str
    dtype: str
    # None for an axis left open.
    shape: list[int | None]


@dataclass(frozen=True)
class Precision:
    """What executed, read back from the runtime after compiling (never echoed from the request), and how it was read."""

    executed: str
    evidence: str
    # Weight-only compression the model carries under that arithmetic ("int8", "int4"), read from the model; None: none.
    weights: str | None = None


@dataclass
class Loaded:
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    precision: Precision
    # Threads the runtime resolved, read back; None when the runtime does not say.
    threads: int | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    # None: the loop's own time around `load`. An engine that serves a cached build reports that build's time.
    compile_ms: float | None = None


@dataclass(frozen=True)
class About:
    version: str
    # Devices the runtime sees here; None: the manifest's devices.
    devices: list[str] | None = None
    details: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Layer:
    name: str
    op_type: str
    mean_ns: float
    calls: int
    extra: dict[str, Any] = field(default_factory=dict)


class Engine:
    """Base of an engine. The worker sets `name` (the manifest entry it serves, so one file may serve several)."""

    name: str = ""

    def about(self) -> About:
        raise NotImplementedError

    def load(self, model: Model) -> Loaded:
        raise NotImplementedError

    def bind(self, batch: Batch) -> Call:
        raise NotImplementedError

    def outputs(self, result: Any) -> dict[str, np.ndarray]:
        """Named output arrays of one call's result, valid after the next call (a decoder keeps them as a cache)."""
        # A decoder calls this once a token: the plain type test first, before the ABC's.
        if isinstance(result, (list, tuple)):
            return dict(zip(self.loaded_output_names, result))
        if isinstance(result, Mapping):
            return dict(result)
        raise WorkerError("runtime_error", f"{type(self).__name__}.bind's call returned {type(result).__name__}: override outputs(result) to name its arrays")

    def close(self) -> None:
        """Release the runtime's resources; the process exits right after."""

    # Set by the worker after `load`, for the default `outputs`.
    loaded_outputs: list[TensorSpec] = []
    loaded_output_names: list[str] = []


# Each capability a manifest may declare, and the methods it requires.
CAPABILITY_METHODS: dict[str, tuple[str, ...]] = {
    "modelOnly": ("model_only",),
    "layers": ("layers",),
    "concurrency": ("max_concurrency", "bind_async"),
    "decoder": ("decoder",),
    "stream": ("stream",),
    "batchStream": ("batch_runtime",),
    "serve": ("serve_session", "output_tokens"),
}


def check_declared(engine: Engine, capabilities: Mapping[str, bool]) -> None:
    """Refuse an engine that declares a capability it does not implement (names the method to write)."""
    unknown = sorted(set(capabilities) - set(CAPABILITY_METHODS))
    if unknown:
        raise WorkerError("bad_manifest", f"capabilities {unknown} are unknown (known: {sorted(CAPABILITY_METHODS)})", fatal=True)
    for capability, on in capabilities.items():
        for method in CAPABILITY_METHODS[capability] if on else ():
            if not callable(getattr(engine, method, None)):
                raise WorkerError("bad_manifest", f"{type(engine).__name__} declares capability {capability!r} but has no method {method}()", fatal=True)
