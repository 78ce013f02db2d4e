"""PyTorch for PBH's native worker protocol (docs/worker-protocol.md): eager, TorchScript and torch.compile.

PBH_TORCH_MODE (set by the engine, src/engines.ts) picks what `load` builds from the model:
- eager: the nn.Module as loaded (torch_source.py: an ONNX file through onnx2torch, a TorchScript .pt, a torch.export
  .pt2, or the PyTorch source an ONNX export names in its metadata), called under torch.inference_mode.
- torchscript: torch.jit.trace on an example batch, then torch.jit.freeze (a .pt is frozen as it is).
- compile: torch.compile (inductor by default: C++ kernels built with the machine's compiler), compiled by two calls
  on an example batch inside `load`, so compile_ms holds the build and no session sees it.
The worker stays in torch.inference_mode (and under autocast for bf16) from the end of `load` on, so a resident
run is the module's call on tensors made once over the batch's memory (torch.from_numpy), nothing else.
- bench: torch.utils.benchmark.Timer on the same call, one entry per model run, with the engine's threads.
- profile: forward hooks on every leaf module (eager); the profiler's self CPU time per operator otherwise.
"""

from __future__ import annotations

import os
import time
import warnings
from importlib.metadata import version
from typing import Any

import numpy as np
import torch

import torch_layers
import torch_precision
import torch_source
from pbh_worker import Runtime, WorkerError, required_options, run_worker

MODES = ("eager", "torchscript", "compile")
MODE = os.environ.get("PBH_TORCH_MODE", "")
# Resident batches come from the pipe or a read-only /dev/shm mapping; the module never writes its inputs.
warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
REQUIRED = {"eager": ("preferSource",), "torchscript": ("preferSource", "freeze", "optimizeForInference"), "compile": ("preferSource", "backend", "compileMode", "fullgraph")}


def _outputs(result: Any) -> list[torch.Tensor]:
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, dict):
        return list(result.values())
    return list(result)


class TorchRuntime(Runtime):
    def __init__(self) -> None:
        if MODE not in MODES:
            raise WorkerError("bad_request", f"PBH_TORCH_MODE is {MODE!r}; the engine sets one of {', '.join(MODES)}")
        self.fn: Any = None
        self.device = "cpu"
        self.input_specs: list[dict[str, Any]] = []
        self.output_specs: list[dict[str, Any]] = []
        self.samples: list[list[torch.Tensor]] = []
        self.contexts: list[Any] = []
        self.source: torch_source.Source | None = None

    def hello(self) -> dict[str, Any]:
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
        details = {"mode": MODE, "cpu_capability": torch.backends.cpu.get_cpu_capability(), "default_threads": str(torch.get_num_threads()), "cuda_build": str(torch.version.cuda)}
        for package in ("onnx2torch", "onnxscript"):
            try:
                details[package] = version(package)
            except Exception:  # noqa: BLE001 - an optional package that is absent is reported as such
                details[package] = "not installed"
        return {"runtime": "torch", "version": torch.__version__, "devices": devices, "details": details}

    def load(self, model_path, batch_size, device, options, inputs, precision):
        required_options(options, *REQUIRED[MODE])
        if device not in ("cpu", "cuda"):
            raise WorkerError("bad_request", f"the PyTorch engines run on cpu or cuda, not {device!r}")
        if device == "cuda" and not torch.cuda.is_available():
            raise WorkerError("bad_request", f"device cuda: torch {torch.__version__} sees no CUDA device here; use device cpu")
        self.device = device
        if options.get("threads"):
            torch.set_num_threads(int(options["threads"]))
        if options.get("interopThreads"):
            torch.set_num_interop_threads(int(options["interopThreads"]))
        autocast = torch_precision.autocast_for(precision, device, model_path)
        support = torch_precision.bf16_support(device)[1]

        source = torch_source.load(model_path, prefer_source=bool(options["preferSource"]))
        self.source = source
        self.input_specs = self._input_specs(source, inputs, model_path)
        example = [self._example(spec) for spec in self.input_specs]
        census = torch_precision.compute_census(source.module, example, autocast, device)
        if device == "cuda":
            source.module.to(device)

        start = time.perf_counter()
        facts: dict[str, Any] = {"mode": MODE, "device": device, "torch_version": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(), **source.facts}
        self.fn = self._build(source, example, autocast, options, facts)
        build_ms = (time.perf_counter() - start) * 1000
        # The runs from here on: no autograd, and bf16 kernels where asked (a traced graph has its casts baked in).
        self.contexts = [torch.inference_mode()]
        if autocast is not None and MODE != "torchscript":
            self.contexts.append(torch.autocast(device, dtype=autocast))
        for context in self.contexts:
            context.__enter__()
        start = time.perf_counter()
        outputs = _outputs(self.fn(*example))
        self._sync()
        facts["first_run_ms"] = (time.perf_counter() - start) * 1000
        if len(outputs) != len(source.output_names):
            source.output_names = [f"output_{i}" for i in range(len(outputs))]
        self.output_specs = [{"name": n, "dtype": torch_source.DTYPES.get(t.dtype, "float32"), "shape": list(t.shape)} for n, t in zip(source.output_names, outputs)]
        facts["build_ms"] = build_ms
        facts["load_ms"] = source.load_ms
        facts["compile_ms_covers"] = {
            "eager": "reading the model (load_ms: onnx2torch conversion, torch.jit.load or torch.export.load)",
            "torchscript": "reading the model (load_ms) + torch.jit.trace, freeze and two profiling runs (build_ms)",
            "compile": "reading the model (load_ms) + torch.compile and the two calls that build its kernels (build_ms)",
        }[MODE]
        output_dtype = outputs[0].dtype if outputs else torch.float32
        return {
            "compile_ms": source.load_ms + build_ms,
            "inputs": self.input_specs,
            "outputs": self.output_specs,
            "facts": facts,
            "threads": torch.get_num_threads(),
            "precision": torch_precision.executed(census, autocast, output_dtype, support),
        }

    def _build(self, source, example, autocast, options, facts):
        module = source.module
        if MODE == "eager":
            return module
        if MODE == "torchscript":
            with torch.no_grad():
                if isinstance(module, torch.jit.ScriptModule):
                    scripted = module
                    facts["torchscript"] = "the .pt as saved"
                else:
                    # Record autocast's casts in the trace rather than re-applying autocast to the frozen graph.
                    torch._C._jit_set_autocast_mode(False)
                    with torch.autocast(self.device, dtype=autocast or torch.bfloat16, enabled=autocast is not None):
                        scripted = torch.jit.trace(module, tuple(example), check_trace=False)
                    facts["torchscript"] = "torch.jit.trace on an example batch"
                scripted = scripted.eval()
                if options["freeze"]:
                    scripted = torch.jit.freeze(scripted)
                if options["optimizeForInference"]:
                    scripted = torch.jit.optimize_for_inference(scripted)
                facts.update({"freeze": bool(options["freeze"]), "optimize_for_inference": bool(options["optimizeForInference"])})
                # The profiling executor specializes the graph over its first runs: part of the build, not of a session.
                for _ in range(2):
                    scripted(*example)
            return scripted
        if isinstance(module, torch.jit.ScriptModule):
            raise WorkerError("unsupported_model", "torch.compile cannot compile a TorchScript module (a .pt file): give the torch-compile engine the model as a torch.export .pt2 or an ONNX file")
        compiled = torch.compile(module, backend=options["backend"], mode=options["compileMode"], fullgraph=bool(options["fullgraph"]), dynamic=False)
        facts.update({"backend": options["backend"], "compile_mode": options["compileMode"], "fullgraph": bool(options["fullgraph"])})
        try:
            with torch.inference_mode(), torch.autocast(self.device, dtype=autocast or torch.bfloat16, enabled=autocast is not None):
                for _ in range(2):
                    compiled(*example)
                    self._sync()
        except Exception as e:  # noqa: BLE001 - dynamo and inductor raise many types; the message names the failing part
            raise WorkerError("unsupported_model", f"torch.compile (backend {options['backend']}) failed on the model: {type(e).__name__}: {str(e)[:2000]}") from e
        return compiled

    def _input_specs(self, source, inputs, model_path):
        by_name = {spec["name"]: spec for spec in inputs}
        missing = [n for n in source.input_names if n not in by_name]
        if missing:
            raise WorkerError("bad_request", f"{model_path} takes inputs {source.input_names}, but the harness sends {list(by_name)}: {missing} missing")
        specs = []
        for name in source.input_names:
            spec = by_name[name]
            if any(not isinstance(d, int) for d in spec["shape"]):
                raise WorkerError("bad_request", f"input {name!r} has shape {spec['shape']} with an unresolved axis; the harness resolves every axis before load")
            if spec["dtype"] not in torch_source.TORCH_DTYPES:
                raise WorkerError("unsupported_dtype", f"input {name!r} is {spec['dtype']}, which torch cannot take from the protocol")
            specs.append({"name": name, "dtype": spec["dtype"], "shape": list(spec["shape"])})
        return specs

    def _example(self, spec):
        generator = torch.Generator().manual_seed(self.seed)
        dtype = torch_source.TORCH_DTYPES[spec["dtype"]]
        if dtype.is_floating_point:
            return torch.randn(spec["shape"], generator=generator, dtype=dtype).to(self.device)
        return torch.zeros(spec["shape"], dtype=dtype, device=self.device)

    def _sync(self):
        if self.device == "cuda":
            torch.cuda.synchronize()

    def _tensors(self, batch: dict[str, np.ndarray], label: str) -> list[torch.Tensor]:
        tensors = []
        for spec in self.input_specs:
            array = batch.get(spec["name"])
            if array is None:
                raise WorkerError("bad_request", f"{label}: missing input {spec['name']!r} (the model takes {[s['name'] for s in self.input_specs]})")
            if list(array.shape) != spec["shape"] or str(array.dtype) != spec["dtype"]:
                raise WorkerError("bad_request", f"{label}: input {spec['name']!r} is {array.dtype}{list(array.shape)}, but the model was loaded for {spec['dtype']}{spec['shape']}")
            tensor = torch.from_numpy(np.ascontiguousarray(array))
            tensors.append(tensor.to(self.device) if self.device != "cpu" else tensor)
        return tensors

    def infer(self, inputs):
        outputs = _outputs(self.fn(*self._tensors(inputs, "infer")))
        self._sync()
        result = {}
        for spec, tensor in zip(self.output_specs, outputs):
            # bf16 has no protocol dtype: the harness compares and scores in the model's own float32.
            if tensor.dtype not in torch_source.DTYPES:
                tensor = tensor.float()
            result[spec["name"]] = tensor.detach().cpu().numpy()
        return result

    def load_samples(self, batches):
        self.samples = [self._tensors(batch, f"resident batch {i}") for i, batch in enumerate(batches)]

    def run_sample(self, index):
        self.fn(*self.samples[index])
        self._sync()

    def sample_call(self, index):
        # The module's call on the batch's tensors, bound once: what a bare loop over `m(x)` runs.
        fn, args = self.fn, self.samples[index]
        if self.device == "cuda":
            sync = torch.cuda.synchronize
            return lambda: (fn(*args), sync())
        return lambda: fn(*args)

    def bench(self, inputs, iterations):
        from torch.utils.benchmark import Timer  # noqa: PLC0415

        args = self._tensors(inputs, "bench")
        stmt = "fn(*args); sync()" if self.device == "cuda" else "fn(*args)"
        timer = Timer(stmt=stmt, globals={"fn": self.fn, "args": args, "sync": torch.cuda.synchronize}, num_threads=torch.get_num_threads())
        # timeit(1) runs two untimed warm-up calls before its timed one: each entry is one model run.
        return [round(timer.timeit(1).times[0] * 1e9) for _ in range(iterations)]

    def profile(self, inputs, iterations):
        args = self._tensors(inputs, "profile")
        call = lambda: self.fn(*args)  # noqa: E731
        call()
        if MODE == "eager" and isinstance(self.fn, torch.nn.Module) and not isinstance(self.fn, torch.jit.ScriptModule):
            return torch_layers.hooked(self.fn, call, iterations)
        return torch_layers.profiled(call, iterations)

    def close(self) -> None:
        for context in reversed(self.contexts):
            context.__exit__(None, None, None)
        self.contexts = []
        self.fn = None
        self.samples = []


if __name__ == "__main__":
    run_worker(TorchRuntime())
