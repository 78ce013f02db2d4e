"""Apache TVM (Relax) runtime for PBH's native worker protocol (docs/worker-protocol.md).

- load: onnx.load -> relax.frontend.onnx.from_onnx with the concrete input shapes -> TVM's CPU Relax pipeline
  (tvm_compile.py) -> optional in-process MetaSchedule tuning (tvm_tuning.py) -> LLVM for the host CPU
  (-mcpu from LLVM's host CPU name, num-cores = threads) -> relax.VirtualMachine. Builds may be served from the
  compiled-library cache (tvm_cache.py); a hit reports the original build's compile_ms and cache_hit=true.
- infer: numpy -> tvm tensors -> vm["main"] -> numpy views of the result tensors (DLPack, no copy; tuple results give
  several outputs).
- load_samples: each resident batch checked against the built input shapes and dtypes and copied once into TVM
  tensors on the device (tvm.runtime.tensor).
- run_sample (the `engine` boundary of resident runs, timed by the loop around this call): vm["main"] on the batch's
  tensors (the VM allocates the outputs and runs every kernel), then numpy views of the outputs (DLPack), which are
  dropped: what a Python deployment holding its inputs as TVM tensors pays per request.
- run_closed_loop: the loop's, run_sample back to back. run_schedule: the base Runtime's, one query at a time
  (max_concurrency 1: the VM runs one call at a time, on every thread of its pool): wait until due, run_sample, record.
- bench: vm.time_evaluator on a saved closure over the resident input, number=1, repeat=iterations: one entry per
  model run, measured by TVM's own timer, no Python in the loop.
- profile: per-kernel times through vm.set_instrument (tvm_layers.py), mean per iteration.
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
from pbh_worker import Runtime, WorkerError, required_options, run_worker  # noqa: E402
from tvm_layers import KernelTimer  # noqa: E402

# Bump when the pipeline changes what a build produces, what its timings cover or what its cache entry holds, so stale
# cache entries stop matching. 3: entries record the executed precision. 4: shape arithmetic folded before import.
PIPELINE_VERSION = 4
# Keys TVMOptionsSchema (src/options.ts) always fills; threads and mcpu may be unset, then the host's own values apply.
REQUIRED_OPTIONS = ("optLevel", "tune", "tuneTrialsPerTask", "tuneBudgetS", "cache", "cacheDir")
_AFFINITY_BIG_CORES = 1  # threading::ThreadGroup::kBig: TVM's default mode on x86


def _set_threads(threads: int) -> int:
    """Resize TVM's pool (it cannot grow past its first size, TVM_NUM_THREADS); returns the threads it now runs."""
    tvm.get_global_func("runtime.config_threadpool")(_AFFINITY_BIG_CORES, threads)
    return int(tvm.get_global_func("runtime.NumThreads")())


def _model_error(e: tvm_compile.ModelError) -> WorkerError:
    return WorkerError("unsupported_model", str(e))


def _check_precision(precision: dict[str, str] | None, requested: str, model_path: str) -> None:
    executed = precision["executed"] if precision else None
    if requested == "int8" and executed != "int8":
        # Relax's ONNX frontend has no quantized kernels: QuantizeLinear/DequantizeLinear become float arithmetic.
        raise WorkerError(
            "bad_request",
            f"TVM cannot execute {model_path} in int8: its Relax ONNX importer turns the graph's QuantizeLinear/"
            f"DequantizeLinear pairs into float arithmetic and has no int8 convolution or matmul kernels "
            f"({precision['evidence'] if precision else 'no float arithmetic found'}). Set engines[].precision: fp32 to time "
            "the dequantized graph in fp32, or leave TVM out of int8 cells",
        )
    if executed is not None and executed != requested:
        raise WorkerError(
            "bad_request",
            f"TVM compiles {model_path} in the graph's own precision, {executed}; it cannot execute it in {requested}: "
            "convert the model to that precision first, or leave engines[].precision unset",
        )


class TVMRuntime(Runtime):
    def __init__(self) -> None:
        self.device = tvm.cpu()
        self.vm: relax.VirtualMachine | None = None
        self.main: Any = None
        self.inputs: list[tvm_compile.GraphInput] = []
        self.outputs: list[dict[str, Any]] = []
        self.output_counts: dict[str, int] = {}
        self.input_buffers: list[Any] = []
        # Per resident batch: its device tensors in the model's input order.
        self.samples: list[list[Any]] = []

    def hello(self) -> dict[str, Any]:
        return {
            "runtime": "tvm",
            "version": tvm.__version__,
            "devices": ["cpu"],
            "details": {
                "llvm": str(codegen.llvm_version_major()),
                "host_cpu": tvm_compile.host_cpu(),
                "tvm_ffi": str(tvm_ffi.__version__),
                "tvm_num_threads": os.environ.get("TVM_NUM_THREADS", ""),
            },
        }

    def load(self, model_path, batch_size, device, options, inputs, precision):
        required_options(options, *REQUIRED_OPTIONS)
        if device.lower() != "cpu":
            raise WorkerError("bad_request", f"the tvm engine builds for the host CPU (llvm) only; device {device!r} is not supported: use device cpu")
        threads = _set_threads(int(options.get("threads") or tvm_compile.available_cores()))
        mcpu = str(options.get("mcpu") or tvm_compile.host_cpu())
        target = tvm_compile.make_target(mcpu, threads)
        self.vm = self.main = None
        self.input_buffers = []
        self.samples = []

        read_start = time.perf_counter()
        try:
            model = tvm_compile.read_onnx(model_path)
            read_ms = (time.perf_counter() - read_start) * 1000
            self.inputs = tvm_compile.resolve_inputs(model, batch_size, inputs, model_path)
        except tvm_compile.ModelError as e:
            raise _model_error(e) from e
        except tvm_compile.RequestError as e:
            raise WorkerError("bad_request", str(e)) from e

        facts: dict[str, Any] = {
            "device": "cpu",
            "target": str(target),
            "mcpu": mcpu,
            "host_cpu": tvm_compile.host_cpu(),
            "opt_level": options["optLevel"],
            "tune": bool(options["tune"]),
            "tvm_version": tvm.__version__,
            "requested": options,
            "compile_ms_covers": "onnx.load + onnxslim folding at the concrete shapes + from_onnx (import_ms) + MetaSchedule tuning (tune_ms) + Relax pipeline, LLVM codegen and loading the VM (build_ms)",
        }
        if options["tune"]:
            facts.update({"tune_trials_per_task": options["tuneTrialsPerTask"], "tune_budget_s": options["tuneBudgetS"], "tune_seed": self.seed})
        key_parts = {
            "model_sha256": tvm_cache.file_sha256(model_path),
            "inputs": [[i.name, i.dtype, i.shape] for i in self.inputs],
            "target": str(target),
            "opt_level": options["optLevel"],
            "tune": [options["tuneTrialsPerTask"], options["tuneBudgetS"], self.seed] if options["tune"] else False,
            "tvm": tvm.__version__,
            "pipeline": PIPELINE_VERSION,
        }
        key = tvm_cache.cache_key(key_parts)
        cache_dir = os.path.abspath(options["cacheDir"])
        facts.update({"cache": bool(options["cache"]), "cache_key": key})
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
            self.outputs = meta["outputs"]
            self.output_counts = meta["kernel_output_counts"]
            executed = meta["precision"]
            _check_precision(executed, precision, model_path)
            compile_ms = float(meta["compile_ms"])
        else:
            executable, build_facts, executed, compile_ms = self._build(model, read_ms, model_path, target, options, threads, precision)
            facts.update(build_facts)
            facts["cache_hit"] = False
            if options["cache"]:
                start = time.perf_counter()
                meta = {
                    "compile_ms": compile_ms,
                    "facts": build_facts,
                    "outputs": self.outputs,
                    "kernel_output_counts": self.output_counts,
                    "precision": executed,
                    "key": key_parts,
                }
                tvm_cache.store(cache_dir, key, executable, meta)
                facts["cache_write_ms"] = (time.perf_counter() - start) * 1000
        self.main = self.vm["main"]
        return {
            "compile_ms": compile_ms,
            "inputs": [{"name": i.name, "dtype": i.dtype, "shape": i.shape} for i in self.inputs],
            "outputs": self.outputs,
            "facts": facts,
            "threads": threads,
            **({"precision": executed} if executed else {}),
        }

    def _build(self, model, read_ms, model_path, target, options, threads, precision) -> tuple[Any, dict[str, Any], dict[str, str] | None, float]:
        """Import, check the precision, fuse, (tune), lower and codegen, and start the VM on the result (self.vm)."""
        facts: dict[str, Any] = {}
        start = time.perf_counter()
        # The frontend gets the graph with its shape arithmetic folded at this cell's shapes (tvm_compile.fold_shapes).
        model, facts["graph_prep"] = tvm_compile.fold_shapes(model, self.inputs)
        try:
            mod = tvm_compile.import_onnx(model, self.inputs, model_path)
        except tvm_compile.ModelError as e:
            raise WorkerError("unsupported_model", f"{e} [{tvm_compile.fold_summary(facts['graph_prep'])}]") from e
        dynamic = [f"{i.name} {i.shape}" for i in self.inputs if i.symbolic]
        if dynamic:
            raise WorkerError("unsupported_model", f"TVM imported {model_path} with symbolic axes ({', '.join(dynamic)}), but PBH's TVM runtime binds fixed-shape input buffers: export the model with fixed shapes")
        self.outputs = tvm_compile.output_specs(mod, model)
        facts["import_ms"] = read_ms + (time.perf_counter() - start) * 1000
        executed = tvm_compile.executed_precision(mod)
        _check_precision(executed, precision, model_path)

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
                    fused, target, threads=threads, trials_per_task=options["tuneTrialsPerTask"], budget_s=float(options["tuneBudgetS"]), seed=self.seed
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
        return executable, facts, executed, compile_ms

    def _args(self, inputs: dict[str, np.ndarray], reuse: bool = False, shared: bool = False) -> list[Any]:
        """Device tensors for `inputs`; reuse=True copies into buffers kept across infer calls (no allocation),
        shared=True wraps the arrays' own memory where TVM can (resident batches, which the worker keeps)."""
        if reuse and len(self.input_buffers) != len(self.inputs):
            self.input_buffers = [tvm.runtime.empty(spec.shape, spec.dtype, self.device) for spec in self.inputs]
        args = []
        for index, spec in enumerate(self.inputs):
            array = inputs.get(spec.name)
            if array is None:
                raise WorkerError("bad_request", f"missing input {spec.name!r} (the model takes {[i.name for i in self.inputs]})")
            if list(array.shape) != spec.shape or str(array.dtype) != spec.dtype:
                raise WorkerError(
                    "bad_request",
                    f"input {spec.name!r} is {array.dtype}{list(array.shape)} but the model was built for {spec.dtype}{spec.shape}: "
                    "TVM compiles static shapes, prepare the model again for this batch size",
                )
            if reuse:
                self.input_buffers[index].copyfrom(np.asarray(array, order="C"))
                args.append(self.input_buffers[index])
            elif shared:
                args.append(tvm_compile.shared_on_device(array, self.device))
            else:
                args.append(tvm_compile.to_device(array, self.device))
        return args

    def _outputs(self, result: Any) -> dict[str, np.ndarray]:
        # Views, not copies (Tensor.numpy() copies: ~10 us for a [1,10] result here); each holds its tensor alive.
        tensors = [result] if isinstance(result, tvm.runtime.Tensor) else list(result)
        return {spec["name"]: np.from_dlpack(tensor) for spec, tensor in zip(self.outputs, tensors)}

    def infer(self, inputs):
        return self._outputs(self.main(*self._args(inputs, reuse=True)))

    def load_samples(self, batches):
        samples = []
        for index, batch in enumerate(batches):
            try:
                samples.append(self._args(batch, shared=True))
            except WorkerError as e:
                raise WorkerError(e.kind, f"resident batch {index}: {e.message}") from e
        self.samples = samples

    def run_sample(self, index):
        self._outputs(self.main(*self.samples[index]))

    def sample_call(self, index):
        # The same two calls with the VM function, the batch's device tensors and the wrapper bound once.
        main, args, outputs = self.main, self.samples[index], self._outputs
        return lambda: outputs(main(*args))

    def bench(self, inputs, iterations):
        self.vm.save_function("main", "pbh_bench", *self._args(inputs), include_return=False)
        # time_evaluator runs once untimed first, then `repeat` timed runs of `number` calls each.
        result = self.vm.time_evaluator("pbh_bench", self.device, number=1, repeat=iterations)()
        return [round(seconds * 1e9) for seconds in result.results]

    def profile(self, inputs, iterations):
        args = self._args(inputs)
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
        self.samples = []


if __name__ == "__main__":
    run_worker(TVMRuntime())
