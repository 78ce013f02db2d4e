"""Apache TVM (Relax) engine for PBH (the one-file contract: pbh_worker/engine.py; declared in ../pbh-engine.json).

- load: onnx.load -> relax.frontend.onnx.from_onnx with the concrete input shapes -> TVM's CPU Relax pipeline
  (tvm_compile.py) -> optional in-process MetaSchedule tuning (tvm_tuning.py) -> LLVM for the host CPU
  (-mcpu from LLVM's host CPU name, num-cores = threads) -> relax.VirtualMachine. Builds may be served from the
  compiled-library cache (tvm_cache.py); a hit reports the original build's compile_ms and cache_hit=true.
- bind: the batch checked against the built input shapes and dtypes and wrapped once as TVM tensors on the device
  (its own memory where TVM can take it); the call runs vm["main"] on them (the VM allocates the outputs and runs
  every kernel) and takes numpy views of the outputs (DLPack, no copy; tuple results give several outputs): what a
  Python deployment holding its inputs as TVM tensors pays per request. The VM runs one call at a time, on every
  thread of its pool, so the engine declares no concurrency.
- model_only: vm.time_evaluator on a saved closure over the input, number=1, repeat=iterations: one entry per
  model run, measured by TVM's own timer, no Python in the loop.
- layers: per-kernel times through vm.set_instrument (tvm_layers.py), mean per iteration.
"""

from __future__ import annotations

import os

# TVM sizes its thread pool once, from TVM_NUM_THREADS, on first use; its own default ignores half the logical CPUs
# (hyper-threading), i.e. 1 thread on a 2-vCPU machine. Size it for every core we may use; load narrows it.
os.environ.setdefault("TVM_NUM_THREADS", str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))

import gc  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import tvm  # noqa: E402
import tvm_ffi  # noqa: E402
from tvm import relax  # noqa: E402
from tvm.target import codegen  # noqa: E402

import tvm_cache  # noqa: E402
import tvm_compile  # noqa: E402
from pbh_worker import About, Engine, Layer, Loaded, Model, Precision, TensorSpec, WorkerError, serve  # noqa: E402
from tvm_layers import KernelTimer  # noqa: E402

# Bump when the pipeline changes what a build produces, what its timings cover or what its cache entry holds, so stale
# cache entries stop matching. 3: entries record the executed precision. 4: shape arithmetic folded before import.
PIPELINE_VERSION = 4
_AFFINITY_BIG_CORES = 1  # threading::ThreadGroup::kBig: TVM's default mode on x86


def _set_threads(threads: int) -> int:
    """Resize TVM's pool (it cannot grow past its first size, TVM_NUM_THREADS); returns the threads it now runs."""
    tvm.get_global_func("runtime.config_threadpool")(_AFFINITY_BIG_CORES, threads)
    return int(tvm.get_global_func("runtime.NumThreads")())


def _precision(census: dict[str, str] | None, requested: str, model_path: str) -> Precision:
    """The executed precision from the import's census (tvm_compile.executed_precision), refused unless requested."""
    executed = census["executed"] if census else None
    if requested == "int8" and executed != "int8":
        # Relax's ONNX frontend has no quantized kernels: QuantizeLinear/DequantizeLinear become float arithmetic.
        raise WorkerError(
            "bad_request",
            f"TVM cannot execute {model_path} in int8: its Relax ONNX importer turns the graph's QuantizeLinear/"
            f"DequantizeLinear pairs into float arithmetic and has no int8 convolution or matmul kernels "
            f"({census['evidence'] if census else 'no float arithmetic found'}). Set engines[].precision: fp32 to time "
            "the dequantized graph in fp32, or leave TVM out of int8 cells",
        )
    if census is None:
        # Integer-only graphs: no kernel computes in any float type, so none other than the requested one can run.
        return Precision(requested, "Relax module imported from the ONNX graph: main has no float tensors; compiled as imported (no mixed-precision pass)")
    if executed != requested:
        raise WorkerError(
            "bad_request",
            f"TVM compiles {model_path} in the graph's own precision, {executed}; it cannot execute it in {requested}: "
            "convert the model to that precision first, or leave engines[].precision unset",
        )
    return Precision(census["executed"], census["evidence"])


class TVM(Engine):
    def __init__(self) -> None:
        self.device = tvm.cpu()
        self.vm: relax.VirtualMachine | None = None
        self.main: Any = None
        self.inputs: list[tvm_compile.GraphInput] = []
        self.output_specs: list[dict[str, Any]] = []
        self.output_counts: dict[str, int] = {}

    def about(self) -> About:
        return About(
            version=tvm.__version__,
            details={
                "llvm": str(codegen.llvm_version_major()),
                "host_cpu": tvm_compile.host_cpu(),
                "tvm_ffi": str(tvm_ffi.__version__),
                "tvm_num_threads": os.environ.get("TVM_NUM_THREADS", ""),
            },
        )

    def load(self, model: Model) -> Loaded:
        options, model_path = model.options, model.path
        if model.device.lower() != "cpu":
            raise WorkerError("bad_request", f"the tvm engine builds for the host CPU (llvm) only; device {model.device!r} is not supported: use device cpu")
        # threads and mcpu have no default: unset means every core this process may use, and LLVM's name for the host.
        threads = _set_threads(options.get("threads") or tvm_compile.available_cores())
        mcpu = options.get("mcpu") or tvm_compile.host_cpu()
        target = tvm_compile.make_target(mcpu, threads)
        self.vm = self.main = None

        read_start = time.perf_counter()
        try:
            graph = tvm_compile.read_onnx(model_path)
            read_ms = (time.perf_counter() - read_start) * 1000
            self.inputs = tvm_compile.resolve_inputs(graph, model.batch_size, list(model.inputs), model_path)
        except tvm_compile.ModelError as e:
            raise WorkerError("unsupported_model", str(e)) from e
        except tvm_compile.RequestError as e:
            raise WorkerError("bad_request", str(e)) from e

        facts: dict[str, Any] = {
            "device": "cpu",
            "target": str(target),
            "mcpu": mcpu,
            "host_cpu": tvm_compile.host_cpu(),
            "opt_level": options["optLevel"],
            "tune": options["tune"],
            "tvm_version": tvm.__version__,
            "requested": dict(options),
            "compile_ms_covers": "onnx.load + onnxslim folding at the concrete shapes + from_onnx (import_ms) + MetaSchedule tuning (tune_ms) + Relax pipeline, LLVM codegen and loading the VM (build_ms)",
        }
        if options["tune"]:
            facts.update({"tune_trials_per_task": options["tuneTrialsPerTask"], "tune_budget_s": options["tuneBudgetS"], "tune_seed": model.seed})
        key_parts = {
            "model_sha256": tvm_cache.file_sha256(model_path),
            "inputs": [[i.name, i.dtype, i.shape] for i in self.inputs],
            "target": str(target),
            "opt_level": options["optLevel"],
            "tune": [options["tuneTrialsPerTask"], options["tuneBudgetS"], model.seed] if options["tune"] else False,
            "tvm": tvm.__version__,
            "pipeline": PIPELINE_VERSION,
        }
        key = tvm_cache.cache_key(key_parts)
        cache_dir = os.path.abspath(options["cacheDir"])
        facts.update({"cache": options["cache"], "cache_key": key})
        if options["cache"]:
            facts["cache_dir"] = cache_dir

        hit = tvm_cache.lookup(cache_dir, key) if options["cache"] else None
        if hit is not None:
            start = time.perf_counter()
            try:
                self.vm = relax.VirtualMachine(tvm.runtime.load_module(hit[0]), self.device)
            except Exception as e:  # noqa: BLE001 - an unreadable entry is a miss; the build below replaces nothing
                facts["cache_error"] = f"cannot load {hit[0]}: {type(e).__name__}: {e}; delete that folder to rebuild it"
                hit = None
        if hit is not None:
            meta = hit[1]
            facts.update(meta["facts"])
            facts.update({"cache_hit": True, "cache_load_ms": (time.perf_counter() - start) * 1000})
            self.output_specs = meta["outputs"]
            self.output_counts = meta["kernel_output_counts"]
            census = meta["precision"]
            precision = _precision(census, model.precision, model_path)
            # The original build's time: a Profile's compile figure always describes a real compilation of this code.
            compile_ms = float(meta["compile_ms"])
        else:
            executable, build_facts, census, precision, compile_ms = self._build(graph, read_ms, model, target, threads)
            facts.update(build_facts)
            facts["cache_hit"] = False
            if options["cache"]:
                start = time.perf_counter()
                meta = {
                    "compile_ms": compile_ms,
                    "facts": build_facts,
                    "outputs": self.output_specs,
                    "kernel_output_counts": self.output_counts,
                    "precision": census,
                    "key": key_parts,
                }
                tvm_cache.store(cache_dir, key, executable, meta)
                facts["cache_write_ms"] = (time.perf_counter() - start) * 1000
        self.main = self.vm["main"]
        return Loaded(
            inputs=[TensorSpec(i.name, i.dtype, i.shape) for i in self.inputs],  # type: ignore[arg-type]
            outputs=[TensorSpec(s["name"], s["dtype"], s["shape"]) for s in self.output_specs],
            precision=precision,
            threads=threads,
            facts=facts,
            compile_ms=compile_ms,
        )

    def _build(self, graph: Any, read_ms: float, model: Model, target: Any, threads: int) -> tuple[Any, dict[str, Any], dict[str, str] | None, Precision, float]:
        """Import, check the precision, fuse, (tune), lower and codegen, and start the VM on the result (self.vm)."""
        options, model_path = model.options, model.path
        facts: dict[str, Any] = {}
        start = time.perf_counter()
        # The frontend gets the graph with its shape arithmetic folded at this cell's shapes (tvm_compile.fold_shapes).
        graph, facts["graph_prep"] = tvm_compile.fold_shapes(graph, self.inputs)
        try:
            mod = tvm_compile.import_onnx(graph, self.inputs, model_path)
        except tvm_compile.ModelError as e:
            raise WorkerError("unsupported_model", f"{e} [{tvm_compile.fold_summary(facts['graph_prep'])}]") from e
        dynamic = [f"{i.name} {i.shape}" for i in self.inputs if i.symbolic]
        if dynamic:
            raise WorkerError("unsupported_model", f"TVM imported {model_path} with symbolic axes ({', '.join(dynamic)}), but PBH's TVM runtime binds fixed-shape input buffers: export the model with fixed shapes")
        self.output_specs = tvm_compile.output_specs(mod, graph)
        facts["import_ms"] = read_ms + (time.perf_counter() - start) * 1000
        census = tvm_compile.executed_precision(mod)
        precision = _precision(census, model.precision, model_path)

        start = time.perf_counter()
        try:
            fused = tvm_compile.fuse(mod, target, options["optLevel"])
        except Exception as e:  # noqa: BLE001 - TVM raises many types (TVMError, ValueError, InternalError)
            raise WorkerError("unsupported_model", f"TVM cannot legalize/fuse {model_path}: {type(e).__name__}: {e}") from e
        fuse_s = time.perf_counter() - start
        self.output_counts = tvm_compile.kernel_output_counts(fused)
        facts["kernels"] = len(tvm_compile.kernel_names(fused))

        tune_s = 0.0
        if options["tune"]:
            start = time.perf_counter()
            import tvm_tuning  # noqa: PLC0415 - MetaSchedule is only needed when tuning

            try:
                fused, report = tvm_tuning.tune(
                    fused, target, threads=threads, trials_per_task=options["tuneTrialsPerTask"], budget_s=float(options["tuneBudgetS"]), seed=model.seed
                )
            except Exception as e:  # noqa: BLE001 - any MetaSchedule failure is reported with its own message
                raise WorkerError("runtime_error", f"MetaSchedule tuning of {model_path} failed: {type(e).__name__}: {e}") from e
            tune_s = time.perf_counter() - start
            facts.update(report.facts())
            facts["tune_ms"] = tune_s * 1000
            facts["pipeline"] = "relax cpu_generic (DecomposeOpsForInference, legalize, FuseOps/FuseTIR) + MetaSchedule schedules + LLVM"
        else:
            facts["pipeline"] = "relax cpu_generic (DecomposeOpsForInference, legalize, FuseOps/FuseTIR) + LLVM; kernels unscheduled"

        start = time.perf_counter()
        try:
            executable = tvm_compile.lower_and_build(fused, target, options["optLevel"])
            # LLVM emits machine code when the module is first loaded (seconds for ResNet-50): part of the build.
            self.vm = relax.VirtualMachine(executable, self.device)
        except Exception as e:  # noqa: BLE001 - as above
            raise WorkerError("unsupported_model", f"TVM cannot build {model_path} for {target}: {type(e).__name__}: {e}") from e
        facts["build_ms"] = (fuse_s + time.perf_counter() - start) * 1000
        compile_ms = facts["import_ms"] + facts["build_ms"] + tune_s * 1000
        return executable, facts, census, precision, compile_ms

    def _args(self, batch: Any, shared: bool) -> list[Any]:
        """Device tensors for `batch` in the model's input order; shared=True wraps the arrays' own memory where TVM
        can (the worker keeps the batches it binds), else they are copied."""
        args = []
        for spec in self.inputs:
            array = batch.get(spec.name)
            if array is None:
                raise WorkerError("bad_request", f"missing input {spec.name!r} (the model takes {[i.name for i in self.inputs]})")
            if list(array.shape) != spec.shape or str(array.dtype) != spec.dtype:
                raise WorkerError(
                    "bad_request",
                    f"input {spec.name!r} is {array.dtype}{list(array.shape)} but the model was built for {spec.dtype}{spec.shape}: "
                    "TVM compiles static shapes, prepare the model again for this batch size",
                )
            args.append(tvm_compile.shared_on_device(array, self.device) if shared else tvm_compile.to_device(array, self.device))
        return args

    def _views(self, result: Any) -> dict[str, np.ndarray]:
        # Views, not copies (Tensor.numpy() copies: ~10 us for a [1,10] result here); each holds its tensor alive.
        tensors = [result] if isinstance(result, tvm.runtime.Tensor) else list(result)
        return {spec["name"]: np.from_dlpack(tensor) for spec, tensor in zip(self.output_specs, tensors)}

    def bind(self, batch):
        # The VM function, the batch's device tensors and the view-taking bound once; the timed call includes the
        # views, so it returns the named arrays and the default outputs() takes them as they are.
        main, args, views = self.main, self._args(batch, shared=True), self._views
        return lambda: views(main(*args))

    def model_only(self, batch, iterations):
        self.vm.save_function("main", "pbh_bench", *self._args(batch, shared=False), include_return=False)
        # time_evaluator runs once untimed first, then `repeat` timed runs of `number` calls each.
        result = self.vm.time_evaluator("pbh_bench", self.device, number=1, repeat=iterations)()
        return [round(seconds * 1e9) for seconds in result.results]

    def layers(self, batch, iterations) -> list[Layer]:
        args = self._args(batch, shared=False)
        self.main(*args)
        timer = KernelTimer(self.output_counts)
        # The hook allocates Python objects for every call's arguments; a GC pass there would land inside a kernel's time.
        gc.collect()
        gc.disable()
        self.vm.set_instrument(timer.hook())
        try:
            for _ in range(iterations):
                self.main(*args)
        finally:
            self.vm.set_instrument(None)
            gc.enable()
        return timer.layers(iterations)

    def close(self) -> None:
        self.vm = self.main = None


if __name__ == "__main__":
    serve(TVM())
