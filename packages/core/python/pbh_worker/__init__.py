"""Shared request loop of PBH's native runtime workers (protocol: docs/worker-protocol.md)."""

from .errors import WorkerError
from .loop import run_worker
from .runtime import Runtime, required_options

__all__ = ["Runtime", "WorkerError", "required_options", "run_worker"]
