"""The request loop shared by every native worker: read a frame, call the runtime, answer a frame."""

from __future__ import annotations

import ctypes
import importlib
import os
import platform
import resource
import signal
import sys
import time
import traceback
from array import array
from typing import Any, Callable, NoReturn

import numpy as np

from . import generation
from .channel import Channel, claim_stdio
from .errors import ProtocolError, WorkerError
from .runtime import Runtime

PROTOCOL_VERSION = 8
_now = time.perf_counter_ns
_PR_SET_PDEATHSIG = 1
# ru_maxrss is KiB on Linux and bytes on macOS.
_RSS_UNIT = 1 if sys.platform == "darwin" else 1024


def rss_peak_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * _RSS_UNIT


def _die_with_parent() -> None:
    """Ask the kernel to SIGKILL us when the parent dies, so a hung runtime call cannot outlive the harness."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
    parent = os.environ.get("PBH_PARENT_PID")
    if parent and parent.isdigit() and os.getppid() != int(parent):
        # The parent died before prctl took effect.
        os._exit(3)


def _exit(code: int) -> NoReturn:
    # os._exit: native runtimes' atexit/thread-pool teardown can take seconds or hang; the parent waits on us.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)


def _int_field(header: dict[str, Any], key: str, minimum: int = 0) -> int:
    value = header.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise WorkerError("bad_request", f'"{header.get("cmd")}" needs an integer "{key}" >= {minimum}, got {value!r}')
    return value


_COMMANDS = "hello, load, load_samples, unload_samples, run, run_closed_loop, run_schedule, generate, score_text, infer, bench, profile, close"
_SESSION_COMMANDS = ("load_samples", "unload_samples", "run", "run_closed_loop", "run_schedule", "generate", "score_text", "infer", "bench", "profile")


def _named(tensors: list[tuple[str, np.ndarray]], cmd: str) -> dict[str, np.ndarray]:
    named = dict(tensors)
    if len(named) != len(tensors):
        raise WorkerError("bad_request", f'"{cmd}" names a tensor twice: {[name for name, _ in tensors]}')
    return named


class _Dispatcher:
    def __init__(self, runtime: Runtime):
        self.runtime = runtime
        self.loaded = False
        # Batches the runtime holds from the last load_samples; `run` indexes them.
        self.resident = 0
        # One pre-bound call per resident batch (Runtime.sample_call): what `run` and the sessions time.
        self.calls: list[Callable[[], Any]] = []
        # What the loaded model can run at once (announced in the load reply); run_schedule stays below it.
        self.max_concurrency = 1

    def handle(self, header: dict[str, Any], tensors: list[tuple[str, np.ndarray]]) -> tuple[dict[str, Any], dict[str, np.ndarray] | None]:
        cmd = header["cmd"]
        if cmd == "hello":
            return self.hello(header), None
        if cmd == "load":
            return self.load(header), None
        if cmd == "close":
            self.runtime.close()
            return {}, None
        if cmd in _SESSION_COMMANDS:
            if not self.loaded:
                raise WorkerError("bad_request", f'"{cmd}" before a successful "load": send load first')
            if cmd == "load_samples":
                return self.load_samples(header, tensors), None
            if cmd == "unload_samples":
                self._drop_resident()
                self.runtime.load_samples([])
                return {}, None
            if cmd == "run":
                return {"engine_ns": self.run(_int_field(header, "index"))}, None
            if cmd == "run_closed_loop":
                return self.run_closed_loop(header)
            if cmd == "run_schedule":
                return self.run_schedule(header, _named(tensors, cmd))
            if cmd == "generate":
                return self.generate(header, _named(tensors, cmd))
            if cmd == "score_text":
                return self.score_text(header, _named(tensors, cmd)), None
            if cmd == "infer":
                return self.infer(_named(tensors, cmd))
            if cmd == "bench":
                return self.bench(_named(tensors, cmd), _int_field(header, "iterations", 1)), None
            return {"layers": self.runtime.profile(_named(tensors, cmd), _int_field(header, "iterations", 1))}, None
        raise WorkerError("bad_request", f'unknown command "{cmd}" (known: {_COMMANDS})')

    def hello(self, header: dict[str, Any]) -> dict[str, Any]:
        for module in header.get("require") or []:
            try:
                importlib.import_module(module)
            except ImportError as e:
                raise WorkerError("import_error", f"python module {module!r} cannot be imported by {sys.executable}: {e}") from e
        info = self.runtime.hello()
        return {"protocol": PROTOCOL_VERSION, "pid": os.getpid(), "python": platform.python_version(), **info}

    def load(self, header: dict[str, Any]) -> dict[str, Any]:
        model_path = header.get("model_path")
        if not isinstance(model_path, str):
            raise WorkerError("bad_request", f'"load" needs a string "model_path", got {model_path!r}')
        precision = header.get("precision")
        if not isinstance(precision, str) or not precision:
            raise WorkerError("bad_request", f'"load" needs a string "precision" (the precision to execute in, e.g. "fp32"), got {precision!r}')
        self.runtime.work_dir = header.get("work_dir")
        self.runtime.seed = int(header.get("seed") or 0)
        self.loaded = False
        # Samples were made for the model being replaced.
        self._drop_resident()
        result = self.runtime.load(
            model_path,
            _int_field(header, "batch_size", 0),
            str(header.get("device") or "cpu"),
            dict(header.get("options") or {}),
            list(header.get("inputs") or []),
            precision,
        )
        self.max_concurrency = int(self.runtime.max_concurrency())
        self.loaded = True
        return {**result, "max_concurrency": self.max_concurrency}

    def load_samples(self, header: dict[str, Any], tensors: list[tuple[str, np.ndarray]]) -> dict[str, Any]:
        # A refused set replaces the earlier one too: runs must never silently use batches the caller meant to replace.
        self._drop_resident()
        count = _int_field(header, "batches", 1)
        if not tensors or len(tensors) % count:
            raise WorkerError("bad_request", f'"load_samples" announced {count} batches but sent {len(tensors)} tensors: send the same inputs for every batch, batch-major')
        per_batch = len(tensors) // count
        batches = [_named(tensors[b * per_batch : (b + 1) * per_batch], "load_samples") for b in range(count)]
        names = set(batches[0])
        for index, batch in enumerate(batches):
            if set(batch) != names:
                raise WorkerError("bad_request", f'"load_samples" batch {index} has inputs {sorted(batch)}, batch 0 has {sorted(names)}')
        self.runtime.load_samples(batches)
        self.calls = [self.runtime.sample_call(index) for index in range(count)]
        self.resident = count
        return {"batches": count, "bytes": sum(array.nbytes for _, array in tensors)}

    def _drop_resident(self) -> None:
        self.resident = 0
        self.calls = []

    def run(self, index: int) -> int:
        """Runs resident batch `index`; the time of the runtime's call in ns (the runtime wraps inputs and outputs)."""
        if index >= self.resident or index < 0:
            raise WorkerError(
                "bad_request",
                f'"run" index {index} is not a resident batch: {self.resident} are loaded' if self.resident else '"run" before "load_samples": load the batches first',
            )
        call = self.calls[index]
        start = _now()
        call()
        return _now() - start

    def _check_resident(self, cmd: str, count: int) -> None:
        if not self.resident:
            raise WorkerError("bad_request", f'"{cmd}" before "load_samples": load the batches first')
        if count > self.resident:
            raise WorkerError("bad_request", f'"{cmd}" uses {count} batches but {self.resident} are resident')

    def run_closed_loop(self, header: dict[str, Any]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """A single/multi-stream session: resident batches 0..batches-1 back to back, cycling, until at least
        min_queries queries ran, min_duration_ns passed and every batch ran once. Each query is timed around
        the batch's `sample_call` (what `run_sample` does, pre-bound) alone; between two queries there is only this loop's bookkeeping (no I/O, no wait)."""
        batches = _int_field(header, "batches", 1)
        min_queries = _int_field(header, "min_queries", 0)
        min_duration_ns = _int_field(header, "min_duration_ns", 0)
        self._check_resident("run_closed_loop", batches)
        calls = self.calls
        # An int64 array, not a list: a 600 s session of 10 us queries is 60 M entries (480 MB here, 2+ GB as ints).
        engine_ns = array("q")
        record = engine_ns.append
        queries = index = 0
        first = end = _now()
        while queries < min_queries or queries < batches or end - first < min_duration_ns:
            call = calls[index]
            start = _now()
            call()
            end = _now()
            record(end - start)
            queries += 1
            index = index + 1 if index + 1 < batches else 0
        return {"queries": queries, "wall_ns": end - first}, {"engine_ns": np.frombuffer(engine_ns, dtype="<i8")}

    def run_schedule(self, header: dict[str, Any], tensors: dict[str, np.ndarray]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """A server/offline schedule: the runtime issues query q on batch batches[q] when it is due (arrivals_ns[q])
        and a slot is free, FIFO, at most `concurrency` in flight; issued/completed come back per query."""
        concurrency = _int_field(header, "concurrency", 1)
        if concurrency > self.max_concurrency:
            raise WorkerError("bad_request", f'"run_schedule" concurrency {concurrency} is above what the model runs at once (max_concurrency {self.max_concurrency} in the load reply)')
        batches, arrivals = tensors.get("batches"), tensors.get("arrivals_ns")
        if batches is None or arrivals is None or set(tensors) != {"batches", "arrivals_ns"}:
            raise WorkerError("bad_request", f'"run_schedule" takes two tensors, "batches" (int32) and "arrivals_ns" (int64), got {sorted(tensors)}')
        if batches.dtype != np.int32 or arrivals.dtype != np.int64 or batches.ndim != 1 or batches.shape != arrivals.shape or not len(batches):
            raise WorkerError("bad_request", f'"run_schedule" needs batches int32[n] and arrivals_ns int64[n], n >= 1, got {batches.dtype}{list(batches.shape)} and {arrivals.dtype}{list(arrivals.shape)}')
        if not self.resident:
            raise WorkerError("bad_request", '"run_schedule" before "load_samples": load the batches first')
        if batches.min() < 0 or batches.max() >= self.resident:
            raise WorkerError("bad_request", f'"run_schedule" batches must be resident indices (0..{self.resident - 1}), got {batches.min()}..{batches.max()}')
        if arrivals[0] < 0 or (np.diff(arrivals) < 0).any():
            raise WorkerError("bad_request", '"run_schedule" arrivals_ns must be >= 0 and in issue order (non-decreasing): queries are issued FIFO')
        # Lists: indexing them per query costs a fraction of what numpy scalars do.
        issued, completed = self.runtime.run_schedule(batches.tolist(), arrivals.tolist(), concurrency)
        issued_ns, completed_ns = np.asarray(issued, dtype="<i8"), np.asarray(completed, dtype="<i8")
        if issued_ns.shape != batches.shape or completed_ns.shape != batches.shape:
            raise WorkerError("runtime_error", f"{type(self.runtime).__name__}.run_schedule returned {len(issued)} issue and {len(completed)} completion times for {len(batches)} queries")
        return {"queries": len(batches)}, {"issued_ns": issued_ns, "completed_ns": completed_ns}

    def _cache_shape(self, header: dict[str, Any], cmd: str) -> list[int]:
        shape = header.get("cache_shape")
        if not isinstance(shape, list) or len(shape) != 4 or not all(isinstance(d, int) and d > 0 for d in shape):
            raise WorkerError("bad_request", f'"{cmd}" needs "cache_shape": [layers, heads, capacity, head_dim] of positive ints, got {shape!r}')
        return shape

    def generate(self, header: dict[str, Any], tensors: dict[str, np.ndarray]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Greedy generation of every prompt (generation.py): per request its arrival, tokens and each token's time."""
        max_new = _int_field(header, "max_new_tokens", 1)
        concurrency = _int_field(header, "concurrency", 1)
        flat, lengths = tensors.get("prompt_tokens"), tensors.get("prompt_lengths")
        arrivals = tensors.get("arrivals_ns")
        if flat is None or lengths is None or flat.dtype != np.int64 or lengths.dtype != np.int64 or int(lengths.sum()) != len(flat) or (lengths < 1).any():
            raise WorkerError("bad_request", '"generate" takes int64 "prompt_tokens" (every prompt, concatenated) and int64 "prompt_lengths" (each >= 1, summing to its length), and optionally int64 "arrivals_ns"')
        if arrivals is not None and (arrivals.dtype != np.int64 or arrivals.shape != lengths.shape or (np.diff(arrivals) < 0).any()):
            raise WorkerError("bad_request", '"generate" arrivals_ns must be int64, one per prompt, non-decreasing')
        ends = np.cumsum(lengths).tolist()
        prompts = [flat[e - l:e].tolist() for e, l in zip(ends, lengths.tolist())]
        arrival, tokens, token_ns = generation.generate(self.runtime.infer, prompts, max_new, None if arrivals is None else arrivals.tolist(), concurrency, self._cache_shape(header, "generate"))
        return {"requests": len(prompts)}, {
            "arrival_ns": np.asarray(arrival, dtype="<i8"),
            "tokens": np.asarray(tokens, dtype="<i8").reshape(-1),
            "token_ns": np.asarray(token_ns, dtype="<i8").reshape(-1),
        }

    def score_text(self, header: dict[str, Any], tensors: dict[str, np.ndarray]) -> dict[str, Any]:
        tokens = tensors.get("tokens")
        if tokens is None or tokens.dtype != np.int64 or tokens.ndim != 1:
            raise WorkerError("bad_request", '"score_text" takes one int64 tensor "tokens"')
        nll, predicted = generation.score_text(self.runtime.infer, tokens.tolist(), _int_field(header, "window", 2), self._cache_shape(header, "score_text"))
        return {"nll_sum": nll, "predicted": predicted}

    def infer(self, tensors: dict[str, np.ndarray]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        start = time.perf_counter_ns()
        outputs = self.runtime.infer(tensors)
        engine_ns = time.perf_counter_ns() - start
        return {"engine_ns": engine_ns}, outputs

    def bench(self, tensors: dict[str, np.ndarray], iterations: int) -> dict[str, Any]:
        return {"iteration_ns": [int(t) for t in self.runtime.bench(tensors, iterations)]}


def _error_reply(request_id: Any, error: BaseException, kind: str, fatal: bool) -> dict[str, Any]:
    return {
        "id": request_id,
        "ok": False,
        "kind": kind,
        "error": str(error) or type(error).__name__,
        "traceback": "".join(traceback.format_exception(error)),
        "fatal": fatal,
        "rss_peak_bytes": rss_peak_bytes(),
    }


def run_worker(runtime: Runtime) -> NoReturn:
    """Serve requests on stdin/stdout until close or end of input, then exit the process."""
    channel = claim_stdio()
    # Ctrl-C reaches the whole process group; the harness decides when we stop, not the terminal.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    _exit(serve(channel, runtime))


def serve(channel: Channel, runtime: Runtime) -> int:
    """The loop proper; returns the exit code."""
    dispatcher = _Dispatcher(runtime)
    try:
        return _serve(channel, dispatcher)
    except (BrokenPipeError, ConnectionResetError):
        # The parent stopped reading: nobody is left to answer.
        _close_quietly(runtime)
        return 0


def _serve(channel: Channel, dispatcher: _Dispatcher) -> int:
    runtime = dispatcher.runtime
    while True:
        try:
            line = channel.read_line()
            if line is None:
                _close_quietly(runtime)
                return 0
            header, tensors = channel.read_request(line)
        except ProtocolError as e:
            channel.write_reply(_error_reply(None, e, "bad_request", fatal=True))
            return 2
        if _answer(channel, header.get("id"), _write_handled, channel, dispatcher, header, tensors):
            return 1
        del tensors
        if header["cmd"] == "close":
            return 0


def _write_handled(channel: Channel, dispatcher: _Dispatcher, header: dict[str, Any], tensors: list[tuple[str, np.ndarray]]) -> None:
    reply, outputs = dispatcher.handle(header, tensors)
    channel.write_reply({"id": header.get("id"), "ok": True, **reply, "rss_peak_bytes": rss_peak_bytes()}, outputs)


def _answer(channel: Channel, request_id: Any, respond: Callable[..., None], *args: Any) -> bool:
    """Runs `respond(*args)`, which writes the reply; an error becomes an error reply. True when the worker must exit."""
    try:
        respond(*args)
    except WorkerError as e:
        channel.write_reply(_error_reply(request_id, e, e.kind, e.fatal))
        return e.fatal
    except MemoryError as e:
        channel.write_reply(_error_reply(request_id, e, "out_of_memory", fatal=False))
    except (BrokenPipeError, ConnectionResetError):
        raise
    except Exception as e:  # noqa: BLE001 - any runtime failure becomes an error reply; the worker stays up
        channel.write_reply(_error_reply(request_id, e, "runtime_error", fatal=False))
    return False


def _close_quietly(runtime: Runtime) -> None:
    try:
        runtime.close()
    except Exception:  # noqa: BLE001 - the parent is gone; nobody can receive this error
        traceback.print_exc()
