"""ONNX Runtime's worker: the same libonnxruntime as onnxruntime-node, driven from Python's own binding.

Run as `python -m pbh_worker onnxruntime_worker.py`. Options arrive parsed by the engine's zod schema
(packages/engine-onnx/src/options.ts), with onnxruntime-node's names; they map one to one onto SessionOptions.
"""

from __future__ import annotations

import functools
import time
from typing import Any

import numpy as np
import onnxruntime as ort

from pbh_worker import Runtime, WorkerError, required_options, run_worker

_LEVELS = {
    "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "layout": ort.GraphOptimizationLevel.ORT_ENABLE_LAYOUT,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}
_MODES = {"sequential": ort.ExecutionMode.ORT_SEQUENTIAL, "parallel": ort.ExecutionMode.ORT_PARALLEL}
_PROVIDERS = {"cpu": "CPUExecutionProvider", "cuda": "CUDAExecutionProvider", "tensorrt": "TensorrtExecutionProvider"}
# onnxruntime's element type names against the protocol's dtypes.
_DTYPES = {
    "tensor(float)": "float32",
    "tensor(double)": "float64",
    "tensor(float16)": "float16",
    "tensor(int8)": "int8",
    "tensor(uint8)": "uint8",
    "tensor(int32)": "int32",
    "tensor(int64)": "int64",
    "tensor(bool)": "bool",
}


def _spec(arg: Any, what: str) -> dict[str, Any]:
    dtype = _DTYPES.get(arg.type)
    if dtype is None:
        raise WorkerError("unsupported_dtype", f"{what} {arg.name!r} is {arg.type}, which PBH cannot carry (it carries {', '.join(_DTYPES)})")
    shape = [d if isinstance(d, int) else (d or None) for d in arg.shape]
    return {"name": arg.name, "dtype": dtype, "shape": shape}


class OnnxRuntimeWorker(Runtime):
    def __init__(self) -> None:
        self.session: ort.InferenceSession | None = None
        self.samples: list[dict[str, np.ndarray]] = []

    def hello(self) -> dict[str, Any]:
        return {
            "runtime": "onnxruntime",
            "version": ort.__version__,
            "devices": sorted({d for d, p in _PROVIDERS.items() if p in ort.get_available_providers()}),
            "details": {"binding": "onnxruntime (Python)", "providers": ",".join(ort.get_available_providers())},
        }

    def load(self, model_path, batch_size, device, options, inputs, precision):
        required_options(options, "graphOptimizationLevel", "intraOpNumThreads", "interOpNumThreads", "executionMode", "enableCpuMemArena", "enableMemPattern")
        so = ort.SessionOptions()
        so.graph_optimization_level = _LEVELS[options["graphOptimizationLevel"]]
        so.intra_op_num_threads = options["intraOpNumThreads"]
        so.inter_op_num_threads = options["interOpNumThreads"]
        so.execution_mode = _MODES[options["executionMode"]]
        so.enable_cpu_mem_arena = options["enableCpuMemArena"]
        so.enable_mem_pattern = options["enableMemPattern"]
        so.log_severity_level = 3
        wanted = options.get("executionProviders") or [device]
        unknown = [p for p in wanted if p not in _PROVIDERS]
        if unknown:
            raise WorkerError("unsupported", f"onnxruntime's Python binding has no execution provider {unknown}: use one of {sorted(_PROVIDERS)}, or process: harness for onnxruntime-node's")
        providers = [_PROVIDERS[p] for p in wanted]
        start = time.perf_counter()
        try:
            self.session = ort.InferenceSession(model_path, sess_options=so, providers=providers)
        except Exception as e:  # noqa: BLE001 - onnxruntime raises its own exception types; the message is what matters
            raise WorkerError("runtime_error", f"onnxruntime cannot load {model_path}: {e}") from e
        compile_ms = (time.perf_counter() - start) * 1e3
        return {
            "compile_ms": compile_ms,
            "inputs": [_spec(i, "input") for i in self.session.get_inputs()],
            "outputs": [_spec(o, "output") for o in self.session.get_outputs()],
            "facts": {"executionProviders": self.session.get_providers(), "graphOptimizationLevel": options["graphOptimizationLevel"]},
            # 0 leaves the pool to onnxruntime (one thread per physical core), which it does not report back.
            "threads": options["intraOpNumThreads"] or None,
        }

    def infer(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        names = [o.name for o in self.session.get_outputs()]
        return dict(zip(names, self.session.run(names, inputs)))

    def load_samples(self, batches):
        self.samples = batches

    def run_sample(self, index):
        self.session.run(None, self.samples[index])

    def sample_call(self, index):
        # What a bare Python loop calls: session.run on feeds made once.
        return functools.partial(self.session.run, None, self.samples[index])

    def close(self) -> None:
        self.session = None


run_worker(OnnxRuntimeWorker())
