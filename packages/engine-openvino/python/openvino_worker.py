"""OpenVINO runtime for PBH's native worker protocol (docs/worker-protocol.md).

Reads the ONNX file directly (core.read_model), reshapes it to the concrete batch, compiles it for the device.
Every call after load goes through OpenVINO's C API (openvino_capi.py), not the Python binding's requests.
- load: INFERENCE_PRECISION_HINT is always set from the requested precision: the CPU plugin's own default is bf16
  wherever the CPU has AMX or AVX-512 BF16, which would change the numbers with the machine. The binding compiles the
  model, and what executed is read back through it (openvino_precision.py): the compiled model's
  INFERENCE_PRECISION_HINT and the runtime precision of every compute op. That compilation is released, then the C API
  reads, reshapes and compiles the model with the same properties, and the two compilations' properties are compared
  (a difference is an error): the worker never holds two compiled models.
- infer: one request; each input wrapped as a tensor over the array's memory, outputs copied out.
- load_samples: each resident batch's arrays wrapped once as C API tensors over their own memory, in the compiled
  model's input order, after checking names, element types and shapes against it.
- run_sample / sample_call (the `engine` boundary of resident runs, timed by the loop around the pre-bound call):
  inputs of at most capi.COPY_BYTES a batch copied into the request's own input tensors, larger ones bound
  (ov_infer_request_set_input_tensor_by_index), then ov_infer_request_infer; outputs of a static shape land in buffers
  bound to the request once (a C++ deployment's own output buffers), dynamic ones stay in the request. That is what
  a deployment pays per request when its inputs are already in memory.
- max_concurrency: the compiled model's OPTIMAL_NUMBER_OF_INFER_REQUESTS (1 with hint=latency; with hint=throughput
  one per stream, the streams chosen by the hint unless options.streams sets them).
- run_schedule: `concurrency` requests started with start_async over the resident tensors. Per query: wait until due
  (pbh_worker.clock: sleep, then spin the last 200 us), wait for an idle request (GIL released), take the issue
  time, copy or bind the batch's inputs (as run_sample does) and start. The completion time is taken in the request's callback, on OpenVINO's
  thread, as soon as it finishes.
- bench, hint=latency: the request on one resident input, bound once (as benchmark_app does), a perf_counter_ns
  clock around each ov_infer_request_infer.
- bench, hint=throughput: OPTIMAL_NUMBER_OF_INFER_REQUESTS requests on a resident input. iteration_ns are the
  intervals between consecutive completions (the first from the start of the bench), so they sum to the wall time and
  their mean is wall time / iterations.
- profile: a second compilation (through the binding) with PERF_COUNT on, so timed runs never pay for the counters;
  real_time of EXECUTED nodes from get_profiling_info(), averaged over the iterations.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import openvino as ov
import openvino.properties as props
import openvino.properties.hint as hints

from pbh_worker import Runtime, WorkerError, required_options, run_worker
from pbh_worker.channel import dtype_name
from pbh_worker.clock import now, wait_until
import openvino_capi as capi
from openvino_precision import executed_precision, precision_hint

HINTS = {"latency": hints.PerformanceMode.LATENCY, "throughput": hints.PerformanceMode.THROUGHPUT}


def _version() -> str:
    # get_version() is "2026.4.1-22982-e213a147257-releases/2026/4"; profiles compare on the release.
    return ov.get_version().split("-", 1)[0]


def _spec(port: Any) -> dict[str, Any]:
    shape = port.get_partial_shape()
    dims = [d.get_length() if d.is_static else None for d in shape] if shape.rank.is_static else []
    return {"name": port.get_any_name(), "dtype": dtype_name(np.dtype(port.get_element_type().to_dtype())), "shape": dims}


def _config(options: dict[str, Any], precision: ov.Type, profiling: bool) -> dict[Any, Any]:
    """Options arrive parsed by OpenVINOOptionsSchema (src/options.ts): unset keys mean "let OpenVINO decide"."""
    config: dict[Any, Any] = {hints.performance_mode: HINTS[options["hint"]], hints.inference_precision: precision}
    if options.get("streams") is not None:
        streams = options["streams"]
        config[props.num_streams] = props.streams.Num.AUTO if streams == "auto" else props.streams.Num(int(streams))
    if options.get("threads") is not None:
        config[props.inference_num_threads] = int(options["threads"])
    if profiling:
        config[props.enable_profiling] = True
    return config


def _c_properties(options: dict[str, Any], precision: ov.Type) -> dict[str, str]:
    """_config as the C API's strings, for its compilation of the model."""
    c = {hints.performance_mode(): options["hint"].upper(), hints.inference_precision(): precision.get_type_name()}
    if options.get("streams") is not None:
        c[props.num_streams()] = "AUTO" if options["streams"] == "auto" else str(int(options["streams"]))
    if options.get("threads") is not None:
        c[props.inference_num_threads()] = str(int(options["threads"]))
    return c


# Read from both compilations: they must run the same way.
_SAME_PROPERTIES = ("PERFORMANCE_HINT", "INFERENCE_PRECISION_HINT", "NUM_STREAMS", "INFERENCE_NUM_THREADS", "OPTIMAL_NUMBER_OF_INFER_REQUESTS")


def _as_c_string(value: Any) -> str:
    """A property as the binding returns it, spelled as the C API's get_property does."""
    if isinstance(value, ov.Type):
        return value.get_type_name()
    return str(getattr(value, "name", value))


@dataclass(frozen=True)
class _Witnessed:
    """What the C API's compilation takes from the binding's: port shapes and the properties it must match."""

    inputs: list[list[int] | None]
    outputs: list[tuple[np.dtype, list[int] | None]]
    properties: dict[str, str]

    @staticmethod
    def of(witness: ov.CompiledModel) -> "_Witnessed":
        static = lambda port: [int(d) for d in port.get_shape()] if port.get_partial_shape().is_static else None  # noqa: E731
        return _Witnessed(
            [static(port) for port in witness.inputs],
            [(np.dtype(port.get_element_type().to_dtype()), static(port)) for port in witness.outputs],
            {key: _as_c_string(witness.get_property(key)) for key in _SAME_PROPERTIES},
        )


def _compiled_here(model_path: str, inputs: list[dict[str, Any]], device: str, c_props: dict[str, str], witnessed: _Witnessed) -> capi.CompiledModel:
    """The model compiled through the C API, checked to run as the binding's compilation does."""
    shapes = {spec["name"]: [int(d) for d in spec["shape"]] for spec in inputs if all(isinstance(d, int) for d in spec["shape"])}
    input_shapes, outputs, expected = witnessed.inputs, witnessed.outputs, witnessed.properties
    try:
        compiled = capi.CompiledModel(model_path, shapes, device, c_props, input_shapes, outputs)
    except WorkerError as e:
        raise WorkerError("unsupported_model", f"OpenVINO's C API cannot compile {model_path} for {device}: {e}") from e
    differ = [f"{key}: {value} vs {compiled.property(key)}" for key, value in expected.items() if compiled.property(key) != value]
    if differ:
        compiled.close()
        raise WorkerError("runtime_error", f"OpenVINO's C API compiled {model_path} to run differently from the binding's compilation its facts were read from: {'; '.join(differ)}")
    return compiled


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

    def checked(self, array: np.ndarray, what: str) -> np.ndarray:
        fits = self.dims is None or (array.ndim == len(self.dims) and all(d is None or d == n for d, n in zip(self.dims, array.shape)))
        if array.dtype != self.dtype or not fits:
            raise WorkerError("bad_request", f"{what}: input {self.name!r} is {array.dtype}{list(array.shape)}, the compiled model takes {self.dtype}{self.shown}")
        return array


class OpenVINORuntime(Runtime):
    def __init__(self) -> None:
        self.core = ov.Core()
        # The model file and the input shapes it was loaded with, for profile's own compilation.
        self.source: tuple[str, list[dict[str, Any]]] = ("", [])
        self.compiled: capi.CompiledModel | None = None
        # `request` serves infer and bench; `session` only the resident calls, so its own inputs stay bound.
        self.request: capi.Request | None = None
        self.session: capi.Request | None = None
        # The compiled model's inputs as the binding read them (plain values: a port would keep its model alive).
        self.inputs: list[_Input] = []
        self.position: dict[str, int] = {}
        self.output_names: list[str] = []
        self.concurrency = 1
        self.device = "CPU"
        self.options: dict[str, Any] = {}
        self.precision: ov.Type | None = None
        self.profiled: ov.CompiledModel | None = None
        # Per resident batch: its tensors in compiled input order (each keeps the array it shares memory with).
        self.samples: list[tuple[capi.Tensor, ...]] = []
        # The tensors last bound by infer: the request refers to their memory until the next bind.
        self._bound: tuple[capi.Tensor, ...] = ()

    def hello(self) -> dict[str, Any]:
        devices = list(self.core.available_devices)
        details = {"build": ov.get_version()}
        for device in devices:
            try:
                details[f"{device}.FULL_DEVICE_NAME"] = str(self.core.get_property(device, props.device.full_name))
            except RuntimeError:
                pass
        return {"runtime": "openvino", "version": _version(), "devices": devices, "details": details}

    def load(self, model_path, batch_size, device, options, inputs, precision):
        required_options(options, "hint")
        self.precision = precision_hint(precision)
        self.options = options
        self.device = str(options.get("device") or device).upper()
        self.close()
        # The binding's compilation is the witness its facts and executed precision are read from; released before
        # the C API compiles the one that runs, so the two never hold the weights at once.
        witness_start = time.perf_counter()
        model = self._read(model_path, inputs)
        try:
            compiled = self.core.compile_model(model, self.device, _config(options, self.precision, profiling=False))
        except RuntimeError as e:
            raise WorkerError("unsupported_model", f"OpenVINO cannot compile {model_path} for {self.device}: {e}") from e
        del model
        reply = {
            "inputs": [_spec(p) for p in compiled.inputs],
            "outputs": [_spec(p) for p in compiled.outputs],
            "facts": self._facts(compiled),
            "precision": executed_precision(self.core, compiled, self.device, precision),
            "threads": self._threads(compiled),
        }
        self.inputs = [_Input.of(port) for port in compiled.inputs]
        self.position = {name: i for i, spec in enumerate(self.inputs) for name in spec.names}
        self.output_names = [port.get_any_name() for port in compiled.outputs]
        self.concurrency = int(compiled.get_property(props.optimal_number_of_infer_requests))
        reply["facts"]["witness_compile_ms"] = (time.perf_counter() - witness_start) * 1000
        witnessed = _Witnessed.of(compiled)
        del compiled
        start = time.perf_counter()
        self.compiled = _compiled_here(model_path, inputs, self.device, _c_properties(options, self.precision), witnessed)
        compile_ms = (time.perf_counter() - start) * 1000
        self.request = capi.Request(self.compiled)
        self.session = capi.Request(self.compiled)
        self.source = (model_path, inputs)
        return {"compile_ms": compile_ms, **reply}

    def _read(self, model_path: str, inputs: list[dict[str, Any]]) -> ov.Model:
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
            "compile_ms_covers": "the C API's read_model + reshape + compile_model (witness_compile_ms: the binding's compilation its facts are read from)",
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

    def _ordered(self, named: dict[str, np.ndarray], what: str) -> list[np.ndarray]:
        """The arrays in compiled input order, each checked against its port (the C API reads their memory as is)."""
        ordered: list[np.ndarray | None] = [None] * len(self.inputs)
        for name, array in named.items():
            i = self.position.get(name)
            if i is None or ordered[i] is not None:
                raise WorkerError("bad_request", f"{what}: input {name!r} is not one of the model's inputs {[spec.name for spec in self.inputs]} (or is fed twice)")
            # np.asarray(order="C"), not ascontiguousarray, which turns a scalar (0-d) input into shape [1].
            ordered[i] = self.inputs[i].checked(np.asarray(array, order="C"), what)
        missing = [self.inputs[i].name for i, a in enumerate(ordered) if a is None]
        if missing:
            raise WorkerError("bad_request", f"{what} lacks inputs {missing}")
        return [a for a in ordered if a is not None]

    def infer(self, inputs):
        self._bound = self.compiled.tensors(self._ordered(inputs, "infer"))
        self.request.bind(self._bound)
        self.request.infer()
        return dict(zip(self.output_names, self.request.read_outputs()))

    def load_samples(self, batches):
        self.samples = [self.compiled.tensors(self._ordered(batch, f"resident batch {index}")) for index, batch in enumerate(batches)]

    def run_sample(self, index):
        self.sample_call(index)()

    def sample_call(self, index):
        return self.session.call(self.samples[index])

    def max_concurrency(self):
        return self.concurrency

    def run_schedule(self, batches, arrivals_ns, concurrency):
        issued = [0] * len(batches)
        completed = [0] * len(batches)

        def done(query: int) -> None:
            completed[query] = now()

        pool = capi.AsyncQueue(self.compiled, concurrency, done)
        samples = self.samples
        start = now()
        for query, (batch, arrival) in enumerate(zip(batches, arrivals_ns)):
            due = start + arrival
            if now() < due:
                wait_until(due)
            # FIFO: the query waits for a free request after it is due; the issue time is after both waits.
            slot = pool.next_idle()
            issued[query] = now()
            pool.start(slot, samples[batch], query)
        pool.wait_all()
        return [t - start for t in issued], [t - start for t in completed]

    def bench(self, inputs, iterations):
        tensors = self.compiled.tensors(self._ordered(inputs, "bench"))
        if self.options["hint"] == "throughput":
            return self._bench_queue(tensors, iterations)
        self._bound = tensors
        self.request.bind(tensors)
        return self.request.timed_infer(iterations)

    def _bench_queue(self, tensors, iterations):
        completions: list[int] = []
        pool = capi.AsyncQueue(self.compiled, self.concurrency, lambda _query: completions.append(time.perf_counter_ns()))
        for request in pool.requests:
            request.bind(tensors)
        start = time.perf_counter_ns()
        for _ in range(iterations):
            pool.start(pool.next_idle(), None, None)
        pool.wait_all()
        completions.sort()
        return [b - a for a, b in zip([start, *completions[:-1]], completions)]

    def profile(self, inputs, iterations):
        if self.profiled is None:
            model = self._read(*self.source)
            self.profiled = self.core.compile_model(model, self.device, _config(self.options, self.precision, profiling=True))
        request = self.profiled.create_infer_request()
        for name, array in inputs.items():
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
        layers = []
        for name, (node_type, exec_type, total_ns, calls) in totals.items():
            layer = {"name": name, "op_type": node_type, "exec_type": exec_type, "mean_ns": total_ns / iterations, "calls": calls}
            layer.update(shapes.get(name, {}))
            layers.append(layer)
        return layers

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
        self.samples, self._bound = [], ()
        self.request = self.session = None
        if self.compiled is not None:
            self.compiled.close()
        self.compiled = None
        self.profiled = None


if __name__ == "__main__":
    run_worker(OpenVINORuntime())
