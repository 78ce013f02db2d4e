"""The request loop of every worker engine: read a frame, dispatch it (dispatch.py), answer a frame."""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
import traceback
from typing import Any, Callable, NoReturn

import numpy as np

from .channel import Channel, claim_stdio
from .dispatch import Dispatcher
from .engine import Engine
from .errors import ProtocolError, WorkerError
from .manifest import declared

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


def serve(engine: Engine) -> NoReturn:
    """Serve the harness's requests with `engine`, declared by the manifest entry the harness names, on stdin/stdout
    until close or end of input, then exit the process. The last line of an engine's file."""
    channel = claim_stdio()
    # Ctrl-C reaches the whole process group; the harness decides when we stop, not the terminal.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    _exit(serve_channel(channel, engine))


def serve_channel(channel: Channel, engine: Engine) -> int:
    """The loop proper; returns the exit code. A manifest that cannot be read is the first request's answer."""
    try:
        dispatcher = Dispatcher(engine, declared())
    except WorkerError as e:
        line = channel.read_line()
        request_id = channel.read_request(line)[0].get("id") if line else None
        channel.write_reply(_error_reply(request_id, e, e.kind, fatal=True))
        return 2
    try:
        return _serve(channel, dispatcher)
    except (BrokenPipeError, ConnectionResetError):
        # The parent stopped reading: nobody is left to answer.
        _close_quietly(engine)
        return 0


def _serve(channel: Channel, dispatcher: Dispatcher) -> int:
    runtime = dispatcher.engine
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


def _write_handled(channel: Channel, dispatcher: Dispatcher, header: dict[str, Any], tensors: list[tuple[str, np.ndarray]]) -> None:
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


def _close_quietly(runtime: Engine) -> None:
    try:
        runtime.close()
    except Exception:  # noqa: BLE001 - the parent is gone; nobody can receive this error
        traceback.print_exc()
