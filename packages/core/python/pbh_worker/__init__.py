"""Shared request loop of PBH's native runtime workers (protocol: docs/worker-protocol.md)."""

from .errors import WorkerError
from .loop import run_worker
from .runtime import Runtime

__all__ = ["Runtime", "WorkerError", "run_worker"]
