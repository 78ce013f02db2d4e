"""Launcher: `python -m pbh_worker SCRIPT` claims stdio before SCRIPT imports anything.

Import-time prints of a runtime library then land on stderr, and a SCRIPT that fails to start (a runtime module
that is not installed) still answers requests with a structured error instead of dying silently.
"""

from __future__ import annotations

import os
import runpy
import sys

from .channel import claim_stdio
from .loop import _error_reply, _exit, rss_peak_bytes


def _serve_startup_failure(error: BaseException) -> int:
    import traceback

    traceback.print_exception(error)
    kind = "import_error" if isinstance(error, ImportError) else "startup_failed"
    channel = claim_stdio()
    line = None
    request_id = None
    try:
        line = channel.read_line()
        request_id = channel.read_request(line)[0].get("id") if line else None
    except Exception:  # noqa: BLE001 - whatever was sent, the answer is the startup failure
        pass
    reply = _error_reply(request_id, error, kind, fatal=True)
    reply["error"] = f"worker script {sys.argv[0]} failed to start: {type(error).__name__}: {error}"
    reply["rss_peak_bytes"] = rss_peak_bytes()
    if line:
        channel.write_reply(reply)
    return 1


def main() -> None:
    if len(sys.argv) < 2:
        print("usage: python -m pbh_worker WORKER_SCRIPT [ARGS...]", file=sys.stderr)
        _exit(64)
    claim_stdio()
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    # As `python SCRIPT` would: the script's own folder comes first on sys.path.
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit:
        raise
    except BaseException as e:  # noqa: BLE001 - reported to the harness as a structured startup error
        _exit(_serve_startup_failure(e))
    _exit(0)


if __name__ == "__main__":
    main()
