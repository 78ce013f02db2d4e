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
from typing import Any, NoReturn

import numpy as np

from .channel import Channel, claim_stdio
from .errors import ProtocolError, WorkerError
from .runtime import Runtime

PROTOCOL_VERSION = 2
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


class _Dispatcher:
    def __init__(self, runtime: Runtime):
        self.runtime = runtime
        self.loaded = False

    def handle(self, header: dict[str, Any], tensors: dict[str, np.ndarray]) -> tuple[dict[str, Any], dict[str, np.ndarray] | None]:
        cmd = header["cmd"]
        if cmd == "hello":
            return self.hello(header), None
        if cmd == "load":
            return self.load(header), None
        if cmd == "close":
            self.runtime.close()
            return {}, None
        if cmd in ("infer", "bench", "profile"):
            if not self.loaded:
                raise WorkerError("bad_request", f'"{cmd}" before a successful "load": send load first')
            if cmd == "infer":
                return self.infer(tensors)
            if cmd == "bench":
                return self.bench(tensors, _int_field(header, "iterations", 1)), None
            return {"layers": self.runtime.profile(tensors, _int_field(header, "iterations", 1))}, None
        raise WorkerError("bad_request", f'unknown command "{cmd}" (known: hello, load, infer, bench, profile, close)')

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
        result = self.runtime.load(
            model_path,
            _int_field(header, "batch_size", 0),
            str(header.get("device") or "cpu"),
            dict(header.get("options") or {}),
            list(header.get("inputs") or []),
            precision,
        )
        self.loaded = True
        return result

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
    try:
        return _serve(channel, _Dispatcher(runtime))
    except (BrokenPipeError, ConnectionResetError):
        # The parent stopped reading: nobody is left to answer.
        _close_quietly(runtime)
        return 0


def _serve(channel: Channel, dispatcher: _Dispatcher) -> int:
    runtime = dispatcher.runtime
    while True:
        try:
            request = channel.read_request()
        except ProtocolError as e:
            channel.write_reply(_error_reply(None, e, "bad_request", fatal=True))
            return 2
        if request is None:
            _close_quietly(runtime)
            return 0
        header, tensors = request
        request_id = header.get("id")
        fatal = False
        try:
            reply, outputs = dispatcher.handle(header, tensors)
            del tensors
            channel.write_reply({"id": request_id, "ok": True, **reply, "rss_peak_bytes": rss_peak_bytes()}, outputs)
        except WorkerError as e:
            fatal = e.fatal
            channel.write_reply(_error_reply(request_id, e, e.kind, fatal))
        except MemoryError as e:
            channel.write_reply(_error_reply(request_id, e, "out_of_memory", fatal=False))
        except (BrokenPipeError, ConnectionResetError):
            raise
        except Exception as e:  # noqa: BLE001 - any runtime failure becomes an error reply; the worker stays up
            channel.write_reply(_error_reply(request_id, e, "runtime_error", fatal=False))
        if fatal:
            return 1
        if header["cmd"] == "close":
            return 0


def _close_quietly(runtime: Runtime) -> None:
    try:
        runtime.close()
    except Exception:  # noqa: BLE001 - the parent is gone; nobody can receive this error
        traceback.print_exc()
