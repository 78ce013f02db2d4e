"""Protocol commands onto an engine (engine.py) and the measurement loop (measure.py)."""

from __future__ import annotations

import dataclasses
import importlib
import os
import platform
import sys
from typing import Any, Callable

import numpy as np

from . import generation, measure, serving
from .decoders import Decoder, graph_decoder
from .clock import REAL, Clock
from .engine import Call, Engine, Loaded, Model, Start, check_declared
from .errors import WorkerError
from .manifest import Declaration

PROTOCOL_VERSION = 10
COMMANDS = "hello, load, load_samples, unload_samples, run, run_closed_loop, run_schedule, generate, score_text, rank_tokens, infer, bench, profile, close"
_SESSION_COMMANDS = ("load_samples", "unload_samples", "run", "run_closed_loop", "run_schedule", "generate", "score_text", "rank_tokens", "infer", "bench", "profile")

Tensors = list[tuple[str, np.ndarray]]
Reply = tuple[dict[str, Any], dict[str, np.ndarray] | None]


def int_field(header: dict[str, Any], key: str, minimum: int = 0) -> int:
    value = header.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise WorkerError("bad_request", f'"{header.get("cmd")}" needs an integer "{key}" >= {minimum}, got {value!r}')
    return value


def named(tensors: Tensors, cmd: str) -> dict[str, np.ndarray]:
    result = dict(tensors)
    if len(result) != len(tensors):
        raise WorkerError("bad_request", f'"{cmd}" names a tensor twice: {[name for name, _ in tensors]}')
    return result


def _spec(spec: Any) -> dict[str, Any]:
    return dataclasses.asdict(spec)


class Dispatcher:
    def __init__(self, engine: Engine, declaration: Declaration, clock: Clock = REAL) -> None:
        check_declared(engine, declaration.capabilities)
        engine.name = declaration.name
        self.engine = engine
        self.declaration = declaration
        self.clock = clock
        self.concurrent = bool(declaration.capabilities.get("concurrency"))
        self.loaded: Loaded | None = None
        # One pre-bound call (and, for a concurrent engine, one start) per resident batch, made at load_samples.
        self.calls: list[Call] = []
        self.starts: list[Start] = []
        self.max_concurrency = 1
        self.decoder: Decoder | None = None
        self.model_path = ""
        self.options: Any = {}

    def handle(self, header: dict[str, Any], tensors: Tensors) -> Reply:
        cmd = header["cmd"]
        if cmd == "hello":
            return self.hello(header), None
        if cmd == "load":
            return self.load(header), None
        if cmd == "close":
            self.engine.close()
            return {}, None
        if cmd not in _SESSION_COMMANDS:
            raise WorkerError("bad_request", f'unknown command "{cmd}" (known: {COMMANDS})')
        if self.loaded is None:
            raise WorkerError("bad_request", f'"{cmd}" before a successful "load": send load first')
        if cmd == "load_samples":
            return self.load_samples(header, tensors), None
        if cmd == "unload_samples":
            self.calls, self.starts = [], []
            return {}, None
        if cmd == "run":
            return {"engine_ns": self.run(int_field(header, "index"))}, None
        if cmd == "run_closed_loop":
            return self.run_closed_loop(header)
        if cmd == "run_schedule":
            return self.run_schedule(header, named(tensors, cmd))
        if cmd == "generate":
            return self.generate(header, named(tensors, cmd))
        if cmd == "score_text":
            return self.score_text(header, named(tensors, cmd)), None
        if cmd == "rank_tokens":
            return self.rank_tokens(header, named(tensors, cmd))
        if cmd == "infer":
            return self.infer(named(tensors, cmd))
        if cmd == "bench":
            return self.bench(named(tensors, cmd), int_field(header, "iterations", 1)), None
        return self.profile(named(tensors, cmd), int_field(header, "iterations", 1)), None

    def hello(self, header: dict[str, Any]) -> dict[str, Any]:
        for module in header.get("require") or []:
            try:
                importlib.import_module(module)
            except ImportError as e:
                raise WorkerError("import_error", f"python module {module!r} cannot be imported by {sys.executable}: {e}") from e
        about = self.engine.about()
        return {
            "protocol": PROTOCOL_VERSION,
            "pid": os.getpid(),
            "python": platform.python_version(),
            "runtime": self.declaration.name,
            "version": about.version,
            "devices": about.devices if about.devices is not None else self.declaration.devices,
            "details": about.details,
        }

    def load(self, header: dict[str, Any]) -> dict[str, Any]:
        path = header.get("model_path")
        if not isinstance(path, str):
            raise WorkerError("bad_request", f'"load" needs a string "model_path", got {path!r}')
        precision = header.get("precision")
        if not isinstance(precision, str) or not precision:
            raise WorkerError("bad_request", f'"load" needs a string "precision" (the precision to execute in, e.g. "fp32"), got {precision!r}')
        model = Model(
            path=path,
            batch_size=int_field(header, "batch_size", 0),
            device=str(header.get("device") or "cpu"),
            precision=precision,
            options=self.declaration.options(dict(header.get("options") or {})),
            inputs=list(header.get("inputs") or []),
            work_dir=header.get("work_dir"),
            seed=int(header.get("seed") or 0),
        )
        self.options = model.options
        # Samples were bound to the model being replaced.
        self.loaded, self.calls, self.starts, self.decoder, self.model_path = None, [], [], None, path
        start = self.clock.now()
        loaded = self.engine.load(model)
        compile_ms = (self.clock.now() - start) / 1e6 if loaded.compile_ms is None else loaded.compile_ms
        self.max_concurrency = int(self.engine.max_concurrency()) if self.concurrent else 1  # type: ignore[attr-defined]
        self.engine.loaded_outputs = loaded.outputs
        self.engine.loaded_output_names = [s.name for s in loaded.outputs]
        self.loaded = loaded
        return {
            "compile_ms": compile_ms,
            "inputs": [_spec(s) for s in loaded.inputs],
            "outputs": [_spec(s) for s in loaded.outputs],
            "facts": loaded.facts,
            # weights only when the engine read compressed weights back: the reply stays as before for every other model.
            "precision": {k: v for k, v in _spec(loaded.precision).items() if not (k == "weights" and v is None)},
            "threads": loaded.threads,
            "max_concurrency": self.max_concurrency,
        }

    def load_samples(self, header: dict[str, Any], tensors: Tensors) -> dict[str, Any]:
        # A refused set replaces the earlier one too: runs must never silently use batches the caller meant to replace.
        self.calls, self.starts = [], []
        count = int_field(header, "batches", 1)
        if not tensors or len(tensors) % count:
            raise WorkerError("bad_request", f'"load_samples" announced {count} batches but sent {len(tensors)} tensors: send the same inputs for every batch, batch-major')
        per_batch = len(tensors) // count
        batches = [named(tensors[b * per_batch : (b + 1) * per_batch], "load_samples") for b in range(count)]
        for index, batch in enumerate(batches):
            if set(batch) != set(batches[0]):
                raise WorkerError("bad_request", f'"load_samples" batch {index} has inputs {sorted(batch)}, batch 0 has {sorted(batches[0])}')
        calls = [self._bound(self.engine.bind, batch, index) for index, batch in enumerate(batches)]
        bind_async: Callable[[Any], Start] | None = getattr(self.engine, "bind_async", None) if self.concurrent else None
        self.starts = [self._bound(bind_async, batch, i) for i, batch in enumerate(batches)] if bind_async else [measure.synchronous(call) for call in calls]
        self.calls = calls
        return {"batches": count, "bytes": sum(a.nbytes for _, a in tensors)}

    @staticmethod
    def _bound(bind: Callable[[Any], Any], batch: dict[str, np.ndarray], index: int) -> Any:
        try:
            return bind(batch)
        except WorkerError as e:
            raise WorkerError(e.kind, f"resident batch {index}: {e.message}", e.fatal) from e

    def _resident(self, cmd: str, count: int = 1) -> None:
        if not self.calls:
            raise WorkerError("bad_request", f'"{cmd}" before "load_samples": load the batches first')
        if count > len(self.calls):
            raise WorkerError("bad_request", f'"{cmd}" uses {count} batches but {len(self.calls)} are resident')

    def run(self, index: int) -> int:
        """Runs resident batch `index` once; the ns of its call."""
        self._resident("run")
        if index >= len(self.calls):
            raise WorkerError("bad_request", f'"run" index {index} is not a resident batch: {len(self.calls)} are loaded')
        call, now = self.calls[index], self.clock.now
        start = now()
        call()
        return now() - start

    def run_closed_loop(self, header: dict[str, Any]) -> Reply:
        batches = int_field(header, "batches", 1)
        self._resident("run_closed_loop", batches)
        engine_ns, wall_ns = measure.closed_loop(self.calls, batches, int_field(header, "min_queries"), int_field(header, "min_duration_ns"), self.clock)
        return {"queries": len(engine_ns), "wall_ns": wall_ns}, {"engine_ns": engine_ns}

    def run_schedule(self, header: dict[str, Any], tensors: dict[str, np.ndarray]) -> Reply:
        concurrency = int_field(header, "concurrency", 1)
        if concurrency > self.max_concurrency:
            raise WorkerError("bad_request", f'"run_schedule" concurrency {concurrency} is above what the model runs at once (max_concurrency {self.max_concurrency} in the load reply)')
        batches, arrivals = tensors.get("batches"), tensors.get("arrivals_ns")
        if batches is None or arrivals is None or set(tensors) != {"batches", "arrivals_ns"}:
            raise WorkerError("bad_request", f'"run_schedule" takes two tensors, "batches" (int32) and "arrivals_ns" (int64), got {sorted(tensors)}')
        if batches.dtype != np.int32 or arrivals.dtype != np.int64 or batches.ndim != 1 or batches.shape != arrivals.shape or not len(batches):
            raise WorkerError("bad_request", f'"run_schedule" needs batches int32[n] and arrivals_ns int64[n], n >= 1, got {batches.dtype}{list(batches.shape)} and {arrivals.dtype}{list(arrivals.shape)}')
        self._resident("run_schedule")
        if batches.min() < 0 or batches.max() >= len(self.calls):
            raise WorkerError("bad_request", f'"run_schedule" batches must be resident indices (0..{len(self.calls) - 1}), got {batches.min()}..{batches.max()}')
        if arrivals[0] < 0 or (np.diff(arrivals) < 0).any():
            raise WorkerError("bad_request", '"run_schedule" arrivals_ns must be >= 0 and in issue order (non-decreasing): queries are issued FIFO')
        # Lists: indexing them per query costs a fraction of what numpy scalars do.
        issued, completed = measure.schedule(self.starts, batches.tolist(), arrivals.tolist(), concurrency, self.concurrent, self.clock)
        return {"queries": len(batches)}, {"issued_ns": np.asarray(issued, dtype="<i8"), "completed_ns": np.asarray(completed, dtype="<i8")}

    def _infer(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return self.engine.outputs(self.engine.bind(inputs)())

    def infer(self, tensors: dict[str, np.ndarray]) -> Reply:
        call = self.engine.bind(tensors)
        start = self.clock.now()
        outputs = self.engine.outputs(call())
        return {"engine_ns": self.clock.now() - start}, outputs

    def bench(self, tensors: dict[str, np.ndarray], iterations: int) -> dict[str, Any]:
        if not self.declaration.capabilities.get("modelOnly"):
            raise WorkerError("unsupported", f"engine {self.declaration.name} declares no modelOnly capability (its own timing loop)")
        return {"iteration_ns": [int(t) for t in self.engine.model_only(tensors, iterations)]}  # type: ignore[attr-defined]

    def profile(self, tensors: dict[str, np.ndarray], iterations: int) -> dict[str, Any]:
        if not self.declaration.capabilities.get("layers"):
            raise WorkerError("unsupported", f"engine {self.declaration.name} declares no layers capability (a per-layer profiler)")
        layers = self.engine.layers(tensors, iterations)  # type: ignore[attr-defined]
        return {"layers": [{"name": l.name, "op_type": l.op_type, "mean_ns": l.mean_ns, "calls": l.calls, **l.extra} for l in layers]}

    def _decoder(self, header: dict[str, Any]) -> Decoder:
        """The engine's own decoder when it declares one and has one for this model, else a decoder over its `bind`
        chosen by the graph's inputs."""
        if self.decoder is None:
            assert self.loaded is not None
            if self.declaration.capabilities.get("decoder"):
                self.decoder = self.engine.decoder()  # type: ignore[attr-defined]
            if self.decoder is None:
                shape = header.get("cache_shape")
                cache_shape = shape if isinstance(shape, list) and all(isinstance(d, int) for d in shape) else None
                self.decoder = graph_decoder(self._infer, self.loaded.inputs, cache_shape, f"the model {self.model_path}")
        return self.decoder

    def generate(self, header: dict[str, Any], tensors: dict[str, np.ndarray]) -> Reply:
        """Greedy generation of every prompt (generation.py): per request its arrival, tokens and each token's time."""
        max_new = int_field(header, "max_new_tokens", 1)
        concurrency = int_field(header, "concurrency", 1)
        flat, lengths = tensors.get("prompt_tokens"), tensors.get("prompt_lengths")
        arrivals = tensors.get("arrivals_ns")
        if flat is None or lengths is None or flat.dtype != np.int64 or lengths.dtype != np.int64 or int(lengths.sum()) != len(flat) or (lengths < 1).any():
            raise WorkerError("bad_request", '"generate" takes int64 "prompt_tokens" (every prompt, concatenated) and int64 "prompt_lengths" (each >= 1, summing to its length), and optionally int64 "arrivals_ns"')
        if arrivals is not None and (arrivals.dtype != np.int64 or arrivals.shape != lengths.shape or (np.diff(arrivals) < 0).any()):
            raise WorkerError("bad_request", '"generate" arrivals_ns must be int64, one per prompt, non-decreasing')
        ends = np.cumsum(lengths).tolist()
        prompts = [flat[e - n : e].tolist() for e, n in zip(ends, lengths.tolist())]
        schedule = None if arrivals is None else arrivals.tolist()
        if self.declaration.capabilities.get("serve"):
            return self._serve(header, prompts, max_new, schedule, concurrency)
        header_out: dict[str, Any]
        if self.declaration.capabilities.get("batchStream"):
            # Made for this call before the clock starts, sized for its longest request.
            runtime = self.engine.batch_runtime(concurrency, max((len(p) for p in prompts), default=0) + max_new)  # type: ignore[attr-defined]
            arrival, tokens, token_ns, figures, late = generation.batch_requests(runtime, prompts, max_new, schedule, concurrency, self.clock)
            header_out = {"requests": len(prompts), "served": "batched", "runtime_figures": figures}
            if schedule is not None:
                # Requests on a schedule: how late the loop added them, judged like a server's client.
                header_out["issue"] = self._issue(late)
        elif self.declaration.capabilities.get("stream"):
            arrival, tokens, token_ns, figures = generation.stream_requests(self.engine.stream, prompts, max_new, schedule, self.clock)  # type: ignore[attr-defined]
            header_out = {"requests": len(prompts), "served": "one_at_a_time", "runtime_figures": figures}
        else:
            arrival, tokens, token_ns = generation.generate(self._decoder(header), prompts, max_new, schedule, concurrency, self.clock)
            header_out = {"requests": len(prompts), "served": "interleaved"}
        return header_out, {
            "arrival_ns": np.asarray(arrival, dtype="<i8"),
            "tokens": np.asarray(tokens, dtype="<i8").reshape(-1),
            "token_ns": np.asarray(token_ns, dtype="<i8").reshape(-1),
        }

    def _issue(self, late: list[int]) -> dict[str, Any]:
        """Each request's lateness against the engine's option late_ms (its manifest declares it), else 1 ms: lateness
        past it makes a served run INVALID."""
        late_ms = self.options.get("late_ms")
        late_ns = int(float(late_ms) * 1e6) if isinstance(late_ms, (int, float)) and not isinstance(late_ms, bool) and late_ms > 0 else 1_000_000
        lates = [i for i, ns in enumerate(late) if ns > late_ns]
        return {"late_threshold_ns": late_ns, "max_late_ns": max(late), "late_requests": len(lates), "first_late": lates[0] if lates else None}

    def _serve(self, header: dict[str, Any], prompts: list[list[int]], max_new: int, schedule: list[int] | None, concurrency: int) -> Reply:
        """A server's whole schedule through the engine's client (serving.py): variable tokens and chunks per request."""
        texts = header.get("prompt_texts")
        if not isinstance(texts, list) or len(texts) != len(prompts) or not all(isinstance(t, str) for t in texts):
            raise WorkerError("bad_request", f'"generate" on engine {self.declaration.name} (capability serve) needs "prompt_texts", one string per prompt ({len(prompts)})')
        served = serving.serve_schedule(self.engine.serve_session, texts, prompts, max_new, schedule, concurrency)  # type: ignore[attr-defined]
        tokens: list[list[int]] = []
        sources: set[str] = set()
        for e in served.exchanges:
            ids = self.engine.output_tokens("".join(e.texts))  # type: ignore[attr-defined]
            if ids is not None:
                tokens.append([int(t) for t in ids])
                sources.add("tokenizer")
            elif e.usage_tokens is not None:
                # Ids unknown: the server's count, as -1 placeholders.
                tokens.append([-1] * e.usage_tokens)
                sources.add("server_usage")
            else:
                tokens.append([-1] * len(e.chunk_ns))
                sources.add("chunks")
        start = served.start_ns
        late = served.late_ns

        def figures(e: serving.Exchange, late_ns_: int) -> dict[str, float]:
            out = {"queue_ms": (e.issued_ns - e.scheduled_ns) / 1e6, "issue_late_ms": late_ns_ / 1e6}
            if e.connected_ns is not None:
                out["connect_ms"] = (e.connected_ns - e.issued_ns) / 1e6
            if e.first_byte_ns is not None:
                out["ttfb_ms"] = (e.first_byte_ns - e.issued_ns) / 1e6
            return out

        header_out = {
            "requests": len(prompts),
            "served": "server",
            # The weakest count any request needed.
            "token_count": next(k for k in ("chunks", "server_usage", "tokenizer") if k in sources),
            "issue": self._issue(late),
            "runtime_figures": [figures(e, l) for e, l in zip(served.exchanges, late)],
        }
        return header_out, {
            "arrival_ns": np.asarray([e.scheduled_ns - start for e in served.exchanges], dtype="<i8"),
            "token_counts": np.asarray([len(t) for t in tokens], dtype="<i8"),
            "tokens": np.asarray([t for ts in tokens for t in ts], dtype="<i8"),
            "chunk_counts": np.asarray([len(e.chunk_ns) for e in served.exchanges], dtype="<i8"),
            "token_ns": np.asarray([ns - start for e in served.exchanges for ns in e.chunk_ns], dtype="<i8"),
        }

    def _own_loop(self) -> bool:
        """The runtime's own generate loop (stream, batchStream or serve) and no decoder: it gives no logits."""
        caps = self.declaration.capabilities
        return bool(caps.get("stream") or caps.get("batchStream") or caps.get("serve")) and not caps.get("decoder")

    def score_text(self, header: dict[str, Any], tensors: dict[str, np.ndarray]) -> dict[str, Any]:
        tokens = tensors.get("tokens")
        if tokens is None or tokens.dtype != np.int64 or tokens.ndim != 1:
            raise WorkerError("bad_request", '"score_text" takes one int64 tensor "tokens"')
        if self._own_loop():
            raise WorkerError("unsupported", f"engine {self.declaration.name} runs its runtime's own generate loop and gives no logits: it cannot score text")
        nll, predicted = generation.score_text(self._decoder(header), tokens.tolist(), int_field(header, "window", 2))
        return {"nll_sum": nll, "predicted": predicted}

    def rank_tokens(self, header: dict[str, Any], tensors: dict[str, np.ndarray]) -> Reply:
        """Per position, the rank of each continuation token under the model fed the prompt and that continuation."""
        prompt, continuation = tensors.get("prompt"), tensors.get("continuation")
        if prompt is None or continuation is None or prompt.dtype != np.int64 or continuation.dtype != np.int64 or len(prompt) < 1 or len(continuation) < 1:
            raise WorkerError("bad_request", '"rank_tokens" takes int64 tensors "prompt" and "continuation", each non-empty')
        if self._own_loop():
            raise WorkerError("unsupported", f"engine {self.declaration.name} runs its runtime's own generate loop and gives no logits to rank")
        ranks = generation.rank_continuation(self._decoder(header), prompt.tolist(), continuation.tolist())
        return {"positions": len(ranks)}, {"ranks": np.asarray(ranks, dtype="<i8")}

