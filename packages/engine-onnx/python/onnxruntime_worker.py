"""ONNX Runtime's worker door: the same libonnxruntime as onnxruntime-node, driven from Python's own binding.

Options arrive validated against onnxruntime-worker.json, with onnxruntime-node's names (the harness door shares
them); they map one to one onto SessionOptions.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import tempfile
import time
from collections import Counter
from typing import Any, Iterator, Mapping

import onnxruntime as ort

from pbh_worker import About, Batch, Call, Done, Engine, Layer, Loaded, Model, Precision, Start, TensorSpec, WorkerError, serve
from pbh_worker.weights import file_names_any, weight_compression_of
from pbh_worker.measure import synchronous

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
# The precision a dtype is stored in (core's precisionOfDtypes): the first floating one decides, else fp32.
_PRECISION_OF = {"float32": "fp32", "float16": "fp16", "float64": "fp64"}

# Ops that mark a graph as quantized: the ones a QDQ or integer-ops model is written with.
_QUANTIZED_MARKERS = re.compile(r"^(QuantizeLinear|DequantizeLinear|DynamicQuantizeLinear|ConvInteger|MatMulInteger|QLinear\w+|QGemm)$")
# Kernels of onnxruntime's CPU provider that multiply-accumulate in 8-bit integers (ai.onnx and com.microsoft).
_INT8_COMPUTE = {"QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger", "QGemm", "DynamicQuantizeMatMul", "MatMulIntegerToFloat", "QAttention", "DynamicQuantizeLSTM"}
# Float kernels that do the same work (any domain: com.microsoft's fused ones, com.microsoft.nchwc's Conv).
_FLOAT_COMPUTE = {"Conv", "FusedConv", "ConvTranspose", "MatMul", "FusedMatMul", "Gemm", "FusedGemm", "Attention", "MultiHeadAttention"}


def _spec(arg: Any, what: str) -> TensorSpec:
    dtype = _DTYPES.get(arg.type)
    if dtype is None:
        raise WorkerError("unsupported_dtype", f"{what} {arg.name!r} is {arg.type}, which PBH cannot carry (it carries {', '.join(_DTYPES)})")
    # A symbolic axis keeps its name (the harness shows it); an unnamed one is None.
    return TensorSpec(arg.name, dtype, [d if isinstance(d, int) else (d or None) for d in arg.shape])


def _session_options(options: Mapping[str, Any]) -> ort.SessionOptions:
    so = ort.SessionOptions()
    so.graph_optimization_level = _LEVELS[options["graphOptimizationLevel"]]
    so.intra_op_num_threads = options["intraOpNumThreads"]
    so.inter_op_num_threads = options["interOpNumThreads"]
    so.execution_mode = _MODES[options["executionMode"]]
    so.enable_cpu_mem_arena = options["enableCpuMemArena"]
    so.enable_mem_pattern = options["enableMemPattern"]
    so.log_severity_level = 3
    return so


@contextlib.contextmanager
def _scratch(work_dir: str | None) -> Iterator[str]:
    """The harness's work folder, else a temporary one removed after."""
    if work_dir:
        yield work_dir
    else:
        with tempfile.TemporaryDirectory(prefix="pbh-ort-") as tmp:
            yield tmp


def graph_precision(inputs: list[TensorSpec], outputs: list[TensorSpec]) -> Precision:
    """onnxruntime runs the graph in its own element types: it has no option that converts precision, and PBH sets
    none. For a float graph the executed precision is therefore the graph's, read from the session's metadata."""
    tensors = [*outputs, *inputs]
    floats = [f"{t.name} {t.dtype}" for t in tensors if t.dtype.startswith("float")]
    executed = next((_PRECISION_OF[t.dtype] for t in tensors if t.dtype in _PRECISION_OF), "fp32")
    listed = ", ".join(floats) if floats else "no float inputs or outputs"
    return Precision(executed, f"onnxruntime executes the graph's own element types (no precision conversion); session metadata: {listed}")


def _census(nodes: Any, kinds: set[str]) -> Counter[str]:
    return Counter(n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}" for n in nodes if n.op_type in kinds)


def _listed(counts: Counter[str]) -> str:
    return ", ".join(f"{op} x{k}" for op, k in sorted(counts.items(), key=lambda item: -item[1])) or "none"


# What those op types (and weight-only MatMulNBits) have in common as bytes: a file holding none of them has no
# quantized node and no compressed weight (onnx is not imported). "DequantizeLinear" is spelled with a small q.
_QUANTIZED_BYTES = (b"QuantizeLinear", b"DequantizeLinear", b"ConvInteger", b"MatMulInteger", b"QLinear", b"QGemm", b"MatMulNBits")


def _graph(path: str) -> Any:
    """The graph of an ONNX file, its external weights left unread."""
    import onnx  # here, not at the top: the probe (hello) has no use for it

    return onnx.load(path, load_external_data=False).graph


def optimized_graph_precision(model: Model, providers: list[str], scratch: str, float_: Precision) -> Precision:
    """A quantized graph (QDQ, integer ops) runs int8 only where onnxruntime's optimizer fused a quantized pattern
    into an integer kernel (QLinearConv, QGemm, ConvInteger, ...); elsewhere it dequantizes and computes in float.
    So the witness is the optimized graph onnxruntime writes: a second session with the same options writes it (the
    measured session stays exactly as deployed) and its compute kernels are counted. Any int8 kernel makes it int8
    (the least precise arithmetic bounds the outputs' error), with the float kernels beside it in the evidence."""
    file = os.path.join(scratch, "ort_optimized_witness.onnx")
    data = "ort_optimized_witness.data"
    so = _session_options(model.options)
    so.optimized_model_filepath = file
    # Weights go beside the graph: it is read for its nodes only, and one protobuf cannot hold over 2 GB.
    so.add_session_config_entry("session.optimized_model_external_initializers_file_name", data)
    try:
        ort.InferenceSession(model.path, sess_options=so, providers=providers)
        nodes = _graph(file).node
    finally:
        for leftover in (file, os.path.join(scratch, data)):
            with contextlib.suppress(FileNotFoundError):
                os.remove(leftover)
    int8, floats = _census(nodes, _INT8_COMPUTE), _census(nodes, _FLOAT_COMPUTE)
    where = f"onnxruntime's optimized graph (graphOptimizationLevel {model.options['graphOptimizationLevel']}, written by a witness session with the same options)"
    if not int8:
        return Precision(float_.executed, f"{where} has no int8 kernel: its quantized ops are dequantized and computed in float ({_listed(floats)}); {float_.evidence}")
    return Precision("int8", f"{where}: int8 kernels {_listed(int8)}; float compute kernels {_listed(floats)}")


def check_precision(precision: Precision, requested: str, model_path: str) -> None:
    """Refuses a precision other than the one onnxruntime executes the graph in."""
    if precision.executed == requested:
        return
    if requested == "int8":
        raise WorkerError(
            "unsupported_precision",
            f"onnxruntime executes {model_path} in {precision.executed}, not int8 ({precision.evidence}): quantize the model first (pbh quantize), or for a quantized model raise graphOptimizationLevel so onnxruntime fuses its QDQ pairs into int8 kernels",
        )
    raise WorkerError(
        "unsupported_precision",
        f"onnxruntime executes {model_path} in the graph's own precision, {precision.executed}; it cannot execute it in {requested}: convert the model first, or leave engines[].precision unset",
    )


def _finished(_results: Any, done: Done, error: str) -> None:
    """run_async's callback, on an intra-op pool thread; user_data is the query's done()."""
    done(WorkerError("runtime_error", f"onnxruntime's asynchronous run failed: {error}") if error else None)


class OnnxRuntime(Engine):
    def __init__(self) -> None:
        self.session: ort.InferenceSession | None = None
        self.model: Model | None = None
        self.providers: list[str] = []

    def about(self) -> About:
        available = ort.get_available_providers()
        return About(
            version=ort.__version__,
            devices=sorted(d for d, p in _PROVIDERS.items() if p in available),
            details={"binding": "onnxruntime (Python)", "providers": ",".join(available)},
        )

    def load(self, model: Model) -> Loaded:
        options = model.options
        wanted = options.get("executionProviders") or [model.device]
        unknown = [p for p in wanted if p not in _PROVIDERS]
        if unknown:
            raise WorkerError("unsupported", f"onnxruntime's Python binding has no execution provider {unknown}: use one of {sorted(_PROVIDERS)}, or process: harness for onnxruntime-node's")
        if options["parallelRuns"] > 1 and options["intraOpNumThreads"] == 1:
            raise WorkerError("unsupported", "onnxruntime's Python binding runs concurrent queries (run_async) on threads of the intra-op pool, and intraOpNumThreads 1 gives that pool none besides the caller: set intraOpNumThreads to 0 or 2+, parallelRuns to 1, or use process: harness")
        self.providers = [_PROVIDERS[p] for p in wanted]
        start = time.perf_counter()
        try:
            self.session = ort.InferenceSession(model.path, sess_options=_session_options(options), providers=self.providers)
        except Exception as e:  # noqa: BLE001 - onnxruntime raises its own exception types; the message is what matters
            raise WorkerError("runtime_error", f"onnxruntime cannot load {model.path}: {e}") from e
        compile_ms = (time.perf_counter() - start) * 1e3
        self.model = model
        inputs = [_spec(i, "input") for i in self.session.get_inputs()]
        outputs = [_spec(o, "output") for o in self.session.get_outputs()]
        precision = graph_precision(inputs, outputs)
        # Read after the session: a file onnxruntime refuses is reported in its words.
        graph = _graph(model.path) if file_names_any(model.path, _QUANTIZED_BYTES) else None
        if graph is not None and any(_QUANTIZED_MARKERS.match(n.op_type) for n in graph.node):
            with _scratch(model.work_dir) as scratch:
                precision = optimized_graph_precision(model, self.providers, scratch, precision)
        check_precision(precision, model.precision, model.path)
        if graph is not None:
            weights, evidence, int8 = weight_compression_of(graph)
            if weights:
                precision = Precision("int8" if int8 else precision.executed, f"{precision.evidence}; {evidence}", weights)
        return Loaded(
            inputs=inputs,
            outputs=outputs,
            precision=precision,
            # 0 leaves the pool to onnxruntime (one thread per physical core), which it does not report back.
            threads=options["intraOpNumThreads"] or None,
            facts={"executionProviders": self.session.get_providers(), "graphOptimizationLevel": options["graphOptimizationLevel"]},
            # The session's creation; the precision witness after it is not the runtime's compile.
            compile_ms=compile_ms,
        )

    def bind(self, batch: Batch) -> Call:
        # What a bare Python loop calls: session.run on feeds made once.
        return functools.partial(self.session.run, None, batch)

    def max_concurrency(self) -> int:
        # onnxruntime's Run is thread-safe on one session: concurrent runs are what a server scenario asks of it.
        return self.model.options["parallelRuns"]

    def bind_async(self, batch: Batch) -> Start:
        if self.model.options["parallelRuns"] == 1:
            # One query at a time runs on the issuing thread, exactly as the closed loop calls it.
            return synchronous(self.bind(batch))
        run_async, feeds = self.session.run_async, dict(batch)

        def start(done: Done) -> None:
            try:
                run_async(None, feeds, _finished, done)
            except Exception as e:  # noqa: BLE001 - e.g. an intra-op pool of one thread (0 on a one-core host)
                raise WorkerError("runtime_error", f"onnxruntime cannot run queries concurrently here: {e}; set parallelRuns to 1 or use process: harness") from e

        return start

    def layers(self, batch: Batch, iterations: int) -> list[Layer]:
        """Per-node timings from onnxruntime's profiler, on a second session with the same options (the measured one
        is never profiled). Per-op events have cat "Node", names ending "_kernel_time", dur in us."""
        so = _session_options(self.model.options)
        so.enable_profiling = True
        with _scratch(self.model.work_dir) as scratch:
            so.profile_file_prefix = os.path.join(scratch, "ort_profile")
            profiled = ort.InferenceSession(self.model.path, sess_options=so, providers=self.providers)
            for _ in range(iterations):
                profiled.run(None, dict(batch))
            file = profiled.end_profiling()
            try:
                with open(file, encoding="utf-8") as f:
                    events = json.load(f)
            finally:
                os.remove(file)
        rows: dict[str, dict[str, Any]] = {}
        for e in events:
            name = e.get("name")
            if e.get("cat") != "Node" or not isinstance(name, str) or not name.endswith("_kernel_time") or not isinstance(e.get("dur"), (int, float)):
                continue
            args = e.get("args") or {}
            row = rows.setdefault(name[: -len("_kernel_time")], {"op_type": args.get("op_name", "unknown"), "us": 0.0, "calls": 0, "args": args})
            row["us"] += e["dur"]
            row["calls"] += 1

        def shapes(args: Mapping[str, Any], key: str) -> str | None:
            return json.dumps(args[key], separators=(",", ":")) if key in args else None

        layers = [
            Layer(name, row["op_type"], row["us"] * 1000 / iterations, int(row["calls"] / iterations + 0.5),
                  {"input_shapes": shapes(row["args"], "input_type_shape"), "output_shapes": shapes(row["args"], "output_type_shape")})
            for name, row in rows.items()
        ]
        return sorted(layers, key=lambda layer: -layer.mean_ns)

    def close(self) -> None:
        # Every schedule drains its queries before it returns, so no run outlives the session.
        self.session = None


if __name__ == "__main__":
    serve(OnnxRuntime())
