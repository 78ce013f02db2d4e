"""PyTorch engines for PBH (engine contract: pbh_worker/engine.py): eager, TorchScript and torch.compile.

One class serves the manifest's three entries; the entry's name (self.name) picks what `load` builds:
- pytorch: the nn.Module as loaded (torch_source.py: an ONNX file through onnx2torch, a TorchScript .pt, a
  torch.export .pt2, or the PyTorch source an ONNX export names in its metadata), called under torch.inference_mode.
- torchscript: torch.jit.trace on an example batch, then torch.jit.freeze (a .pt is frozen as it is).
- torch-compile: torch.compile (inductor by default: C++ kernels built with the machine's compiler), compiled by two
  calls on an example batch inside `load`, so compile_ms holds the build and no session sees it.
The worker stays in torch.inference_mode (and under autocast for bf16) from the end of `load` on, so a bound call is
the module's call on tensors made once over the batch's memory (torch.from_numpy), nothing else.
- model_only: torch.utils.benchmark.Timer on the same call, one entry per model run, with the engine's threads.
- layers: forward hooks on every leaf module (eager); the profiler's self CPU time per operator otherwise.
"""

from __future__ import annotations

import time
import warnings
from importlib.metadata import version
from typing import Any

import numpy as np
import torch

import torch_layers
import torch_precision
import torch_source
from pbh_worker import About, Batch, Call, Engine, Layer, Loaded, Model, TensorSpec, WorkerError, serve

# The build each manifest entry makes of the model.
BUILDS = {"pytorch": "eager", "torchscript": "torchscript", "torch-compile": "compile"}
COMPILE_MS_COVERS = {
    "eager": "reading the model (load_ms: onnx2torch conversion, torch.jit.load or torch.export.load)",
    "torchscript": "reading the model (load_ms) + torch.jit.trace, freeze and two profiling runs (build_ms)",
    "compile": "reading the model (load_ms) + torch.compile and the two calls that build its kernels (build_ms)",
}
# Resident batches come from the pipe or a read-only /dev/shm mapping; the module never writes its inputs.
warnings.filterwarnings("ignore", message="The given NumPy array is not writable")


def _results(result: Any) -> list[torch.Tensor]:
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, dict):
        return list(result.values())
    return list(result)


class PyTorch(Engine):
    def __init__(self) -> None:
        self.fn: Any = None
        self.device = "cpu"
        self.input_specs: list[TensorSpec] = []
        self.contexts: list[Any] = []

    @property
    def build(self) -> str:
        if self.name not in BUILDS:
            raise WorkerError("bad_manifest", f"pytorch_worker.py serves the engines {', '.join(BUILDS)}, not {self.name!r}", fatal=True)
        return BUILDS[self.name]

    def about(self) -> About:
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
        details = {"mode": self.build, "cpu_capability": torch.backends.cpu.get_cpu_capability(), "default_threads": str(torch.get_num_threads()), "cuda_build": str(torch.version.cuda)}
        for package in ("onnx2torch", "onnxscript"):
            try:
                details[package] = version(package)
            except Exception:  # noqa: BLE001 - an optional package that is absent is reported as such
                details[package] = "not installed"
        return About(torch.__version__, devices, details)

    def load(self, model: Model) -> Loaded:
        build, device, options = self.build, model.device, model.options
        if device not in ("cpu", "cuda"):
            raise WorkerError("bad_request", f"the PyTorch engines run on cpu or cuda, not {device!r}")
        if device == "cuda" and not torch.cuda.is_available():
            raise WorkerError("bad_request", f"device cuda: torch {torch.__version__} sees no CUDA device here; use device cpu")
        # The contexts of a model this load replaces.
        self._leave()
        self.device = device
        if options.get("threads"):
            torch.set_num_threads(int(options["threads"]))
        if options.get("interopThreads"):
            torch.set_num_interop_threads(int(options["interopThreads"]))
        autocast = torch_precision.autocast_for(model.precision, device, model.path)
        support = torch_precision.bf16_support(device)[1]

        source = torch_source.load(model.path, prefer_source=bool(options["preferSource"]))
        self.input_specs = self._input_specs(source, model.inputs, model.path)
        example = [self._example(spec, model.seed) for spec in self.input_specs]
        census = torch_precision.compute_census(source.module, example, autocast, device)
        if device == "cuda":
            source.module.to(device)

        start = time.perf_counter()
        facts: dict[str, Any] = {"mode": build, "device": device, "torch_version": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(), **source.facts}
        self.fn = self._build(build, source, example, autocast, options, facts)
        build_ms = (time.perf_counter() - start) * 1000
        # The runs from here on: no autograd, and bf16 kernels where asked (a traced graph has its casts baked in).
        self.contexts = [torch.inference_mode()]
        if autocast is not None and build != "torchscript":
            self.contexts.append(torch.autocast(device, dtype=autocast))
        for context in self.contexts:
            context.__enter__()
        start = time.perf_counter()
        results = _results(self.fn(*example))
        self._sync()
        facts["first_run_ms"] = (time.perf_counter() - start) * 1000
        names = source.output_names if len(results) == len(source.output_names) else [f"output_{i}" for i in range(len(results))]
        outputs = [TensorSpec(n, torch_source.DTYPES.get(t.dtype, "float32"), list(t.shape)) for n, t in zip(names, results)]
        facts.update({"build_ms": build_ms, "load_ms": source.load_ms, "compile_ms_covers": COMPILE_MS_COVERS[build]})
        output_dtype = results[0].dtype if results else torch.float32
        return Loaded(
            inputs=self.input_specs,
            outputs=outputs,
            precision=torch_precision.executed(census, autocast, output_dtype, support),
            threads=torch.get_num_threads(),
            facts=facts,
            # The census and the first run are checks, not part of building the model.
            compile_ms=source.load_ms + build_ms,
        )

    def _build(self, build: str, source: torch_source.Source, example: list[torch.Tensor], autocast: torch.dtype | None, options: Any, facts: dict[str, Any]) -> Any:
        module = source.module
        if build == "eager":
            return module
        if build == "torchscript":
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

    def _input_specs(self, source: torch_source.Source, inputs: list[Any], model_path: str) -> list[TensorSpec]:
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
            specs.append(TensorSpec(name, spec["dtype"], list(spec["shape"])))
        return specs

    def _example(self, spec: TensorSpec, seed: int) -> torch.Tensor:
        generator = torch.Generator().manual_seed(seed)
        dtype = torch_source.TORCH_DTYPES[spec.dtype]
        if dtype.is_floating_point:
            return torch.randn(spec.shape, generator=generator, dtype=dtype).to(self.device)
        return torch.zeros(spec.shape, dtype=dtype, device=self.device)

    def _sync(self) -> None:
        if self.device == "cuda":
            torch.cuda.synchronize()

    def _tensors(self, batch: Batch, label: str) -> list[torch.Tensor]:
        tensors = []
        for spec in self.input_specs:
            array = batch.get(spec.name)
            if array is None:
                raise WorkerError("bad_request", f"{label}: missing input {spec.name!r} (the model takes {[s.name for s in self.input_specs]})")
            if list(array.shape) != spec.shape or str(array.dtype) != spec.dtype:
                raise WorkerError("bad_request", f"{label}: input {spec.name!r} is {array.dtype}{list(array.shape)}, but the model was loaded for {spec.dtype}{spec.shape}")
            tensor = torch.from_numpy(np.ascontiguousarray(array))
            tensors.append(tensor.to(self.device) if self.device != "cpu" else tensor)
        return tensors

    def bind(self, batch: Batch) -> Call:
        # The module's call on the batch's tensors, bound once: what a bare loop over `m(x)` runs.
        fn, args = self.fn, self._tensors(batch, "batch")
        if self.device == "cuda":
            sync = torch.cuda.synchronize
            return lambda: (fn(*args), sync())[0]
        return lambda: fn(*args)

    def outputs(self, result: Any) -> dict[str, np.ndarray]:
        named = {}
        for spec, tensor in zip(self.loaded_outputs, _results(result)):
            # bf16 has no protocol dtype: the harness compares and scores in the model's own float32.
            if tensor.dtype not in torch_source.DTYPES:
                tensor = tensor.float()
            named[spec.name] = tensor.detach().cpu().numpy()
        return named

    def model_only(self, batch: Batch, iterations: int) -> list[int]:
        from torch.utils.benchmark import Timer  # noqa: PLC0415

        args = self._tensors(batch, "model_only")
        stmt = "fn(*args); sync()" if self.device == "cuda" else "fn(*args)"
        timer = Timer(stmt=stmt, globals={"fn": self.fn, "args": args, "sync": torch.cuda.synchronize}, num_threads=torch.get_num_threads())
        # timeit(1) runs two untimed warm-up calls before its timed one: each entry is one model run.
        return [round(timer.timeit(1).times[0] * 1e9) for _ in range(iterations)]

    def layers(self, batch: Batch, iterations: int) -> list[Layer]:
        call = self.bind(batch)
        call()
        if self.build == "eager" and isinstance(self.fn, torch.nn.Module) and not isinstance(self.fn, torch.jit.ScriptModule):
            return torch_layers.hooked(self.fn, call, iterations)
        return torch_layers.profiled(call, iterations)

    def _leave(self) -> None:
        for context in reversed(self.contexts):
            context.__exit__(None, None, None)
        self.contexts = []

    def close(self) -> None:
        self._leave()
        self.fn = None


if __name__ == "__main__":
    serve(PyTorch())
