"""OpenVINO as a PBH engine (pbh-engine.json; the contract: packages/core/python/pbh_worker/engine.py).

Reads the ONNX file directly (core.read_model), reshapes it to the concrete batch, compiles it for the device once.
A language model runs as an OpenVINO IR instead (_model_file): an IR folder's own, or a Hugging Face folder's exported
once by optimum-intel; a stateful IR is the engine's decoder (openvino_decoder.py), its cache in each request's state.
Every call after load goes through OpenVINO's C API (openvino_capi.py) on that same compiled model, not the Python
binding's requests.
- load: INFERENCE_PRECISION_HINT is always set from the requested precision: the CPU plugin's own default is bf16
  wherever the CPU has AMX or AVX-512 BF16, which would change the numbers with the machine. The binding compiles the
  model and what executed is read back through it (openvino_precision.py): the compiled model's
  INFERENCE_PRECISION_HINT and the runtime precision of every compute op. The C API then runs that compiled model.
- bind: the batch's arrays wrapped once as C API tensors over their own memory, in the compiled model's input order,
  after checking names, element types and shapes against it. Its call copies inputs of at most capi.COPY_BYTES a
  batch into the request's own input tensors and binds larger ones (ov_infer_request_set_input_tensor_by_index), then
  ov_infer_request_infer; outputs of a static shape land in buffers bound to the request once (a C++ deployment's own
  output buffers), dynamic ones stay in the request. That is what a deployment pays per request when its inputs are
  already in memory. `outputs` reads that request's outputs.
- max_concurrency: the compiled model's OPTIMAL_NUMBER_OF_INFER_REQUESTS (1 with hint=latency; with hint=throughput
  one per stream, the streams chosen by the hint unless options.streams sets them).
- bind_async: that many requests run with start_async; a start takes an idle request, copies or binds the batch's
  inputs (as bind's call does) and starts it; done() is called in the request's callback, on OpenVINO's thread.
- model_only, hint=latency: one request on the input, bound once (as benchmark_app does), a perf_counter_ns clock
  around each ov_infer_request_infer.
- model_only, hint=throughput: OPTIMAL_NUMBER_OF_INFER_REQUESTS requests on the input. The timings are the intervals
  between consecutive completions (the first from the start), so they sum to the wall time and their mean is wall
  time / iterations.
- layers: a second compilation (through the binding) with PERF_COUNT on, so timed runs never pay for the counters;
  real_time of EXECUTED nodes from get_profiling_info(), averaged over the iterations.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import openvino as ov
import openvino.properties as props
import openvino.properties.hint as hints

from pbh_worker import About, Engine, Layer, Loaded, Model, Precision, TensorSpec, WorkerError, serve
from pbh_worker.channel import dtype_name
from pbh_worker.decoders import Decoder
from pbh_worker.sources import IR, build_home, exported_ir, recorded_source
from pbh_worker.weights import file_names_any, ir_weight_compression, may_be_compressed, weight_compression
import openvino_capi as capi
from openvino_decoder import StatefulIr, cache_io_decoder
from openvino_precision import executed_precision, precision_hint

HINTS = {"latency": hints.PerformanceMode.LATENCY, "throughput": hints.PerformanceMode.THROUGHPUT}


def _model_file(model: Model) -> tuple[str, dict[str, Any]]:
    """(the file OpenVINO reads, facts): where the path is PBH's ONNX export of an LLM folder, OpenVINO's own form of
    that model: an OpenVINO IR folder's IR as exported (its own weights, compressed or not, and its state), a Hugging
    Face folder's stateful IR from optimum-intel, exported once (as OpenVINO runs LLMs: optimum-intel, OpenVINO GenAI);
    any other path as it is."""
    # The metadata key's bytes first: every other model skips importing onnx.
    if not (model.path.endswith(".onnx") and file_names_any(model.path, (b"pbh.source.format",))):
        return model.path, {}
    source = recorded_source(model.path, "openvino")
    if source is None or source[1] not in ("openvino_ir", "hf_transformers"):
        return model.path, {}
    folder, kind = source
    if kind == "openvino_ir":
        return os.path.join(folder, IR), {"folder": folder}
    out, facts = exported_ir(folder, build_home(model.path, model.work_dir, "openvino"))
    return os.path.join(out, IR), {**facts, "folder": out}


def _version() -> str:
    # get_version() is "2026.4.1-22982-e213a147257-releases/2026/4"; profiles compare on the release.
    return ov.get_version().split("-", 1)[0]


def _spec(port: Any, name: str) -> TensorSpec:
    shape = port.get_partial_shape()
    dims = [d.get_length() if d.is_static else None for d in shape] if shape.rank.is_static else []
    return TensorSpec(name, dtype_name(np.dtype(port.get_element_type().to_dtype())), dims)


def _names(read: Any, compiled: Any) -> list[str]:
    """Each compiled port named as the model file names it: compiling can merge an inner tensor's name into an
    output's (silero-vad's If branch), and get_any_name() may then return that one instead."""
    return [r.get_any_name() if r.get_any_name() in c.get_names() else c.get_any_name() for r, c in zip(read, compiled)]


def _config(options: dict[str, Any], precision: ov.Type, profiling: bool, kv_cache: bool = False) -> dict[Any, Any]:
    """Unset options mean "let OpenVINO decide". A stateful model's cache is held in the requested precision too: the
    plugin's own default (f16 on CPU, even under an f32 hint) would otherwise set it."""
    config: dict[Any, Any] = {hints.performance_mode: HINTS[options["hint"]], hints.inference_precision: precision}
    if kv_cache:
        config[hints.kv_cache_precision] = precision
    if options.get("streams") is not None:
        streams = options["streams"]
        config[props.num_streams] = props.streams.Num.AUTO if streams == "auto" else props.streams.Num(int(streams))
    if options.get("threads") is not None:
        config[props.inference_num_threads] = int(options["threads"])
    if profiling:
        config[props.enable_profiling] = True
    return config


def _compression(path: str, read: ov.Model) -> tuple[str | None, str]:
    """The weight-only compression of the model file: an IR's constants, an ONNX graph's nodes."""
    if path.endswith(".xml"):
        return ir_weight_compression(read)
    if not may_be_compressed(path):
        return None, ""
    weights, evidence, _ = weight_compression(path)
    return weights, evidence


def _with_weights(precision: Precision, compression: tuple[str | None, str], compiled: ov.CompiledModel, requested: str) -> Precision:
    """The weight-only compression the model carries, and what it makes the arithmetic: OpenVINO's CPU plugin
    keeps compressed weights as such (their FullyConnected layers report the weights' type, u8/u4), and with
    DYNAMIC_QUANTIZATION_GROUP_SIZE above 0 it quantizes those layers' activations to int8 at run time, in groups."""
    weights, evidence = compression
    if not weights:
        return precision
    try:
        group = int(compiled.get_property(hints.dynamic_quantization_group_size))
    except RuntimeError:
        group = 0
    if group > 0:
        executed, how = "int8", f"DYNAMIC_QUANTIZATION_GROUP_SIZE={group}: activations of the layers with compressed weights quantized to int8 at run time"
    else:
        executed, how = requested, "DYNAMIC_QUANTIZATION_GROUP_SIZE=0: compressed weights decompressed, activations as hinted"
    return Precision(executed, f"{precision.evidence}; {evidence}; {how}", weights)


@dataclass(frozen=True)
class _Input:
    name: str
    names: frozenset[str]
    dtype: np.dtype
    # One entry per dimension, None where it is dynamic; None for a dynamic rank.
    dims: tuple[int | None, ...] | None
    shown: str

    @staticmethod
    def of(port: Any) -> "_Input":
        shape = port.get_partial_shape()
        dims = tuple(d.get_length() if d.is_static else None for d in shape) if shape.rank.is_static else None
        return _Input(port.get_any_name(), frozenset(port.get_names()), np.dtype(port.get_element_type().to_dtype()), dims, str(shape))

    def checked(self, array: np.ndarray) -> np.ndarray:
        fits = self.dims is None or (array.ndim == len(self.dims) and all(d is None or d == n for d, n in zip(self.dims, array.shape)))
        if array.dtype != self.dtype or not fits:
            raise WorkerError("bad_request", f"input {self.name!r} is {array.dtype}{list(array.shape)}, the compiled model takes {self.dtype}{self.shown}")
        return array


class OpenVINO(Engine):
    def __init__(self) -> None:
        self.core = ov.Core()
        # The model file and the input shapes it was loaded with, for the layers probe's own compilation.
        self.source: tuple[str, list[Any]] = ("", [])
        self.compiled: capi.CompiledModel | None = None
        # `session` runs every bound call (and so infer); `request` only model_only, which binds its input once.
        self.session: capi.Request | None = None
        self.request: capi.Request | None = None
        # bind_async's requests, made at its first call.
        self.pool: capi.AsyncQueue | None = None
        # The compiled model's inputs as the binding read them (plain values, in compiled input order).
        self.inputs: list[_Input] = []
        self.position: dict[str, int] = {}
        self.output_names: list[str] = []
        self.concurrency = 1
        self.device = "CPU"
        self.options: dict[str, Any] = {}
        self.precision: ov.Type | None = None
        self.profiled: ov.CompiledModel | None = None
        # A stateful IR's decoder (its cache in each infer request's state); any other graph's is made when asked.
        self.stateful: StatefulIr | None = None
        # The compiled model as the binding holds it, its input specs and file: what the cache-IO decoder is made from.
        self.binding: tuple[ov.CompiledModel, list[TensorSpec], str] | None = None
        # The tensors model_only bound last: the request refers to their memory until the next bind.
        self._bound: tuple[capi.Tensor, ...] = ()

    def about(self) -> About:
        devices = list(self.core.available_devices)
        details = {"build": ov.get_version()}
        for device in devices:
            try:
                details[f"{device}.FULL_DEVICE_NAME"] = str(self.core.get_property(device, props.device.full_name))
            except RuntimeError:
                pass
        return About(_version(), devices, details)

    def load(self, model: Model) -> Loaded:
        self.precision = precision_hint(model.precision)
        self.options = dict(model.options)
        self.device = str(self.options.get("device") or model.device).upper()
        self.close()
        path, source_facts = _model_file(model)
        start = time.perf_counter()
        read = self._read(path, model.inputs)
        stateful = bool(read.get_variables())
        kv_cache = stateful and "KV_CACHE_PRECISION" in self.core.get_property(self.device, props.supported_properties)
        try:
            compiled = self.core.compile_model(read, self.device, _config(self.options, self.precision, profiling=False, kv_cache=kv_cache))
        except RuntimeError as e:
            raise WorkerError("unsupported_model", f"OpenVINO cannot compile {path} for {self.device}: {e}") from e
        compile_ms = (time.perf_counter() - start) * 1000
        input_names, self.output_names = _names(read.inputs, compiled.inputs), _names(read.outputs, compiled.outputs)
        compression = _compression(path, read)
        del read
        self.stateful = StatefulIr(compiled, path) if stateful else None
        input_specs = [_spec(p, n) for p, n in zip(compiled.inputs, input_names)]
        self.binding = (compiled, input_specs, path)
        self.compiled = capi.CompiledModel(compiled)
        self.inputs = [_Input.of(port) for port in compiled.inputs]
        self.position = {name: i for i, spec in enumerate(self.inputs) for name in spec.names}
        self.concurrency = int(compiled.get_property(props.optimal_number_of_infer_requests))
        self.session = capi.Request(self.compiled)
        self.request = capi.Request(self.compiled)
        self.source = (path, model.inputs)
        facts = self._facts(compiled)
        if source_facts:
            facts.update(source_facts)
            facts["ran"] = f"{path}, the IR ({'stateful: each request in flight holds an infer request whose state is its cache' if stateful else 'stateless: the cache as inputs and outputs'}), not PBH's ONNX export of the model"
        if kv_cache:
            facts["kv_cache_precision"] = compiled.get_property(hints.kv_cache_precision).get_type_name()
        return Loaded(
            inputs=input_specs,
            outputs=[_spec(p, n) for p, n in zip(compiled.outputs, self.output_names)],
            precision=_with_weights(Precision(**executed_precision(self.core, compiled, self.device, model.precision)), compression, compiled, model.precision),
            threads=self._threads(compiled),
            facts=facts,
            compile_ms=compile_ms,
        )

    def _read(self, model_path: str, inputs: list[Any]) -> ov.Model:
        try:
            model = self.core.read_model(model_path)
        except RuntimeError as e:
            raise WorkerError("unsupported_model", f"OpenVINO cannot read {model_path}: {e}") from e
        shapes = {
            spec["name"]: ov.PartialShape([int(d) for d in spec["shape"]])
            for spec in inputs
            if all(isinstance(d, int) for d in spec["shape"])
        }
        if shapes:
            known = {name for port in model.inputs for name in port.get_names()}
            missing = sorted(set(shapes) - known)
            if missing:
                raise WorkerError("bad_request", f"{model_path} has no inputs named {missing} (it has {sorted(known)})")
            model.reshape(shapes)
        return model

    def _facts(self, compiled: ov.CompiledModel) -> dict[str, Any]:
        facts: dict[str, Any] = {
            "device": self.device,
            "requested": self.options,
            "compile_ms_covers": "read_model + reshape + compile_model through the binding; the C API runs that compiled model",
            "api": "OpenVINO C API through ctypes",
        }
        for key, prop in [
            ("performance_hint", hints.performance_mode),
            ("num_streams", props.num_streams),
            ("optimal_number_of_infer_requests", props.optimal_number_of_infer_requests),
        ]:
            try:
                value = compiled.get_property(prop)
            except RuntimeError:
                continue
            facts[key] = value if isinstance(value, (int, float, bool)) else str(value)
        try:
            facts["device_name"] = str(self.core.get_property(self.device, props.device.full_name))
        except RuntimeError:
            pass
        return facts

    @staticmethod
    def _threads(compiled: ov.CompiledModel) -> int | None:
        try:
            threads = compiled.get_property(props.inference_num_threads)
        except RuntimeError:
            return None
        # 0 is OpenVINO's "not decided here" (devices that do not run host threads).
        return int(threads) if isinstance(threads, int) and threads > 0 else None

    def _tensors(self, named: dict[str, np.ndarray]) -> tuple[capi.Tensor, ...]:
        """The arrays as C API tensors in compiled input order, each checked against its port (the C API reads their
        memory as is)."""
        assert self.compiled is not None
        ordered: list[np.ndarray | None] = [None] * len(self.inputs)
        for name, array in named.items():
            i = self.position.get(name)
            if i is None or ordered[i] is not None:
                raise WorkerError("bad_request", f"input {name!r} is not one of the model's inputs {[spec.name for spec in self.inputs]} (or is fed twice)")
            # np.asarray(order="C"), not ascontiguousarray, which turns a scalar (0-d) input into shape [1].
            ordered[i] = self.inputs[i].checked(np.asarray(array, order="C"))
        missing = [self.inputs[i].name for i, a in enumerate(ordered) if a is None]
        if missing:
            raise WorkerError("bad_request", f"the batch lacks inputs {missing}")
        return self.compiled.tensors([a for a in ordered if a is not None])

    def bind(self, batch):
        assert self.session is not None
        return self.session.call(self._tensors(dict(batch)))

    def outputs(self, result: Any) -> dict[str, np.ndarray]:
        # Bound calls return nothing: the outputs are the session request's, from its last call.
        assert self.session is not None
        return dict(zip(self.output_names, self.session.read_outputs()))

    def max_concurrency(self) -> int:
        return self.concurrency

    def decoder(self) -> Decoder | None:
        """A stateful IR's own decoder, or an Optimum decoder's fed through the binding; None for any other graph (PBH's
        cache graph: the generate workload then drives it through bind). Made when asked (the worker asks once a load), so a
        graph the decoder layout refuses fails the generate workload that needs it, not the load."""
        if self.stateful is not None or self.binding is None:
            return self.stateful
        compiled, inputs, path = self.binding
        return cache_io_decoder(compiled, inputs, self.output_names, path)

    def bind_async(self, batch):
        tensors = self._tensors(dict(batch))
        if self.pool is None:
            assert self.compiled is not None
            self.pool = capi.AsyncQueue(self.compiled, self.concurrency)
        next_idle, start = self.pool.next_idle, self.pool.start

        def begin(done: Callable[[], None]) -> None:
            # The loop leaves a free slot for every start: the idle request is there, or on its way back.
            start(next_idle(), tensors, done)

        return begin

    def model_only(self, batch, iterations):
        assert self.request is not None and self.compiled is not None
        tensors = self._tensors(dict(batch))
        if self.options["hint"] == "throughput":
            return self._queue_intervals(tensors, iterations)
        self._bound = tensors
        self.request.bind(tensors)
        return self.request.timed_infer(iterations)

    def _queue_intervals(self, tensors: tuple[capi.Tensor, ...], iterations: int) -> list[int]:
        # A queue of its own: binding the input would leave bind_async's requests copying into unbound tensors.
        completions: list[int] = []
        pool = capi.AsyncQueue(self.compiled, self.concurrency)
        for request in pool.requests:
            request.bind(tensors)
        record = lambda: completions.append(time.perf_counter_ns())  # noqa: E731
        start = time.perf_counter_ns()
        for _ in range(iterations):
            pool.start(pool.next_idle(), None, record)
        pool.wait_all()
        completions.sort()
        return [b - a for a, b in zip([start, *completions[:-1]], completions)]

    def layers(self, batch, iterations):
        if self.profiled is None:
            model = self._read(*self.source)
            self.profiled = self.core.compile_model(model, self.device, _config(self.options, self.precision, profiling=True))
        request = self.profiled.create_infer_request()
        for name, array in batch.items():
            request.set_tensor(name, ov.Tensor(array, shared_memory=True))
        totals: dict[str, list[Any]] = {}
        for _ in range(iterations):
            request.infer()
            for info in request.profiling_info:
                if info.status != ov.ProfilingInfo.Status.EXECUTED:
                    continue
                entry = totals.setdefault(info.node_name, [info.node_type, info.exec_type, 0, 0])
                entry[2] += info.real_time.total_seconds() * 1e9
                entry[3] += 1
        shapes = self._runtime_shapes(self.profiled)
        return [
            Layer(name, node_type, total_ns / iterations, calls, {"exec_type": exec_type, **shapes.get(name, {})})
            for name, (node_type, exec_type, total_ns, calls) in totals.items()
        ]

    @staticmethod
    def _runtime_shapes(compiled: ov.CompiledModel) -> dict[str, dict[str, str]]:
        shapes: dict[str, dict[str, str]] = {}
        for op in compiled.get_runtime_model().get_ordered_ops():
            shapes[op.get_friendly_name()] = {
                "input_shapes": ";".join(str(op.input_value(i).get_partial_shape()) for i in range(op.get_input_size())),
                "output_shapes": ";".join(str(op.get_output_partial_shape(i)) for i in range(op.get_output_size())),
            }
        return shapes

    def close(self) -> None:
        if self.pool is not None:
            # A callback may still be handing its request back after the loop's last done().
            self.pool.wait_all()
        self.pool, self._bound = None, ()
        self.request = self.session = None
        self.compiled = None
        self.profiled = None
        self.stateful = self.binding = None


if __name__ == "__main__":
    serve(OpenVINO())
