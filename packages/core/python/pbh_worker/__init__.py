"""PBH's worker engines: the engine contract (engine.py), the one measurement loop (measure.py) and the request loop
that serves them (protocol: docs/worker-protocol.md). An engine file ends with `serve(MyEngine())`."""

from .engine import About, Batch, Call, Done, Engine, Layer, Loaded, Model, Precision, Start, TensorSpec
from .errors import WorkerError
from .loop import serve

__all__ = ["About", "Batch", "Call", "Done", "Engine", "Layer", "Loaded", "Model", "Precision", "Start", "TensorSpec", "WorkerError", "serve"]
