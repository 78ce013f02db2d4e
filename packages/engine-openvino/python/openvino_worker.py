"""OpenVINO runtime for PBH's native worker protocol (docs/worker-protocol.md).

Reads the ONNX file directly (core.read_model), reshapes it to the concrete batch, compiles it for the device.
- load: INFERENCE_PRECISION_HINT is always set from the requested precision: the CPU plugin's own default is bf16
  wherever the CPU has AMX or AVX-512 BF16, which would change the numbers with the machine. What executed is read
  back (openvino_precision.py): the compiled model's INFERENCE_PRECISION_HINT and the runtime precision of every compute op.
- infer: one synchronous InferRequest, inputs and outputs shared with numpy (no copies).
- load_samples: each resident batch's arrays wrapped once as ov.Tensor over their own memory (shared_memory=True),
  in the compiled model's input order, after checking names, element types and shapes against it.
- run_sample / sample_call (the `engine` boundary of resident runs, timed by the loop around the pre-bound call):
  bind the batch's tensors to the request (one binding call for a one-input model: a functools.partial of the
  binding's infer(tensor, share_outputs); else set_input_tensor per input, then infer), ov::InferRequest::infer, and the outputs as numpy views of the request's output tensors (share_outputs),
  which are dropped. That is what a Python deployment pays per request when its inputs are already OpenVINO tensors;
  the Python wrapper's infer() adds data dispatch and an OVDict on top, and copies outputs unless share_outputs.
- max_concurrency: the compiled model's OPTIMAL_NUMBER_OF_INFER_REQUESTS (1 with hint=latency; with hint=throughput
  one per stream, the streams chosen by the hint unless options.streams sets them).
- run_schedule: an AsyncInferQueue of `concurrency` requests over the resident tensors. Per query: wait until due
  (pbh_worker.clock: sleep, then spin the last 200 us), wait for an idle request (get_idle_request_id, GIL released),
  take the issue time, start_async with the batch's tensors (the binding's call, no Python data dispatch). The
  completion time is taken in the queue's callback, on OpenVINO's thread, as soon as the request finishes.
- bench, hint=latency: the same InferRequest on a resident input, one entry per iteration, timed by OpenVINO's own
  per-request timer (InferRequest.latency: the binding's clock around ov::InferRequest::infer, in C++), which is
  the figure benchmark_app reports. A Python clock around the call would add the binding's own cost (5-8 us a call
  here, over what the C++ clock says), which is what made model-only trail benchmark_app.
- bench, hint=throughput: an AsyncInferQueue with OPTIMAL_NUMBER_OF_INFER_REQUESTS requests on a resident input.
  iteration_ns are the intervals between consecutive completions (the first from the start of the bench), so they
  sum to the wall time and their mean is wall time / iterations.
- profile: a second compilation with PERF_COUNT on, so timed runs never pay for the counters; real_time of
  EXECUTED nodes from get_profiling_info(), averaged over the iterations.
"""

from __future__ import annotations

import functools
import time
from typing import Any

import numpy as np
import openvino as ov
import openvino.properties as props
import openvino.properties.hint as hints

from pbh_worker import Runtime, WorkerError, required_options, run_worker
from pbh_worker.channel import dtype_name
from pbh_worker.clock import now, wait_until
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


class OpenVINORuntime(Runtime):
    def __init__(self) -> None:
        self.core = ov.Core()
        self.model: ov.Model | None = None
        self.compiled: ov.CompiledModel | None = None
        self.request: ov.InferRequest | None = None
        self.outputs: list[tuple[str, Any]] = []
        self.device = "CPU"
        self.options: dict[str, Any] = {}
        self.precision: ov.Type | None = None
        self.profiled: ov.CompiledModel | None = None
        # The binding's own InferRequest.infer(inputs, share_outputs, decode_strings), below the Python wrapper.
        self._infer: Any = None
        # Per resident batch: its tensors in compiled input order, and the arrays they share memory with.
        self.samples: list[tuple[ov.Tensor, ...]] = []
        self._sample_arrays: list[dict[str, np.ndarray]] = []

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
        start = time.perf_counter()
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
        try:
            self.compiled = self.core.compile_model(model, self.device, _config(options, self.precision, profiling=False))
        except RuntimeError as e:
            raise WorkerError("unsupported_model", f"OpenVINO cannot compile {model_path} for {self.device}: {e}") from e
        self.request = self.compiled.create_infer_request()
        self._infer = super(ov.InferRequest, self.request).infer
        compile_ms = (time.perf_counter() - start) * 1000
        self.samples, self._sample_arrays = [], []
        self.model = model
        self.profiled = None
        self.outputs = [(port.get_any_name(), port) for port in self.compiled.outputs]
        return {
            "compile_ms": compile_ms,
            "inputs": [_spec(p) for p in self.compiled.inputs],
            "outputs": [_spec(p) for p in self.compiled.outputs],
            "facts": self._facts(),
            "precision": executed_precision(self.core, self.compiled, self.device, precision),
            "threads": self._threads(),
        }

    def _facts(self) -> dict[str, Any]:
        compiled = self.compiled
        facts: dict[str, Any] = {"device": self.device, "requested": self.options, "compile_ms_covers": "read_model + reshape + compile_model"}
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

    def _threads(self) -> int | None:
        try:
            threads = self.compiled.get_property(props.inference_num_threads)
        except RuntimeError:
            return None
        # 0 is OpenVINO's "not decided here" (devices that do not run host threads).
        return int(threads) if isinstance(threads, int) and threads > 0 else None

    def infer(self, inputs):
        results = self.request.infer(inputs, share_inputs=True, share_outputs=True)
        return {name: results[port] for name, port in self.outputs}

    def load_samples(self, batches):
        ports = list(self.compiled.inputs)
        position = {name: i for i, port in enumerate(ports) for name in port.get_names()}
        samples = []
        for index, batch in enumerate(batches):
            tensors: list[ov.Tensor | None] = [None] * len(ports)
            for name, array in batch.items():
                i = position.get(name)
                if i is None or tensors[i] is not None:
                    raise WorkerError("bad_request", f"resident batch {index}: input {name!r} is not one of the model's inputs {[p.get_any_name() for p in ports]} (or is fed twice)")
                tensors[i] = ov.Tensor(self._checked(ports[i], array, index), shared_memory=True)
            missing = [ports[i].get_any_name() for i, t in enumerate(tensors) if t is None]
            if missing:
                raise WorkerError("bad_request", f"resident batch {index} lacks inputs {missing}")
            samples.append(tuple(tensors))
        self.samples, self._sample_arrays = samples, batches

    @staticmethod
    def _checked(port: Any, array: np.ndarray, index: int) -> np.ndarray:
        expected = np.dtype(port.get_element_type().to_dtype())
        shape = port.get_partial_shape()
        if array.dtype != expected or (shape.is_static and list(array.shape) != list(port.get_shape())):
            raise WorkerError(
                "bad_request",
                f"resident batch {index}: input {port.get_any_name()!r} is {array.dtype}{list(array.shape)}, the compiled model takes {expected}{shape}",
            )
        return array

    def run_sample(self, index):
        self.sample_call(index)()

    def sample_call(self, index):
        tensors = self.samples[index]
        if len(tensors) == 1:
            # The binding binds and infers in one C++ call; partial spares the Python frame around it.
            return functools.partial(self._infer, tensors[0], True, True)
        bind, infer = self.request.set_input_tensor, self._infer

        def run() -> None:
            for port, tensor in enumerate(tensors):
                bind(port, tensor)
            infer({}, True, True)

        return run

    def max_concurrency(self):
        return int(self.compiled.get_property(props.optimal_number_of_infer_requests))

    def run_schedule(self, batches, arrivals_ns, concurrency):
        queue = ov.AsyncInferQueue(self.compiled, concurrency)
        # The binding's start_async(Tensor | {port: Tensor}, userdata), below the Python wrapper's data dispatch.
        start_async = super(ov.AsyncInferQueue, queue).start_async
        next_idle = queue.get_idle_request_id
        inputs = [tensors[0] if len(tensors) == 1 else dict(enumerate(tensors)) for tensors in self.samples]
        issued = [0] * len(batches)
        completed = [0] * len(batches)

        def done(_request: Any, query: int) -> None:
            completed[query] = now()

        queue.set_callback(done)
        start = now()
        for query, (batch, arrival) in enumerate(zip(batches, arrivals_ns)):
            due = start + arrival
            if now() < due:
                wait_until(due)
            # FIFO: the query waits for a free request after it is due; the issue time is after both waits.
            next_idle()
            issued[query] = now()
            start_async(inputs[batch], query)
        queue.wait_all()
        return [t - start for t in issued], [t - start for t in completed]

    def bench(self, inputs, iterations):
        if self.options["hint"] == "throughput":
            return self._bench_queue(inputs, iterations)
        request, infer = self.request, self._infer
        for name, array in inputs.items():
            request.set_tensor(name, ov.Tensor(array, shared_memory=True))
        timings = []
        for _ in range(iterations):
            infer({}, True, True)
            # latency is in ms, a double: ns precision survives the round.
            timings.append(round(request.latency * 1e6))
        return timings

    def _bench_queue(self, inputs, iterations):
        jobs = int(self.compiled.get_property(props.optimal_number_of_infer_requests))
        queue = ov.AsyncInferQueue(self.compiled, jobs)
        for i in range(jobs):
            for name, array in inputs.items():
                queue[i].set_tensor(name, ov.Tensor(array, shared_memory=True))
        completions: list[int] = []
        queue.set_callback(lambda _request, _userdata: completions.append(time.perf_counter_ns()))
        start = time.perf_counter_ns()
        for _ in range(iterations):
            queue.start_async()
        queue.wait_all()
        completions.sort()
        return [b - a for a, b in zip([start, *completions[:-1]], completions)]

    def profile(self, inputs, iterations):
        if self.profiled is None:
            self.profiled = self.core.compile_model(self.model, self.device, _config(self.options, self.precision, profiling=True))
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
        self.request = self._infer = None
        self.compiled = None
        self.profiled = None
        self.samples, self._sample_arrays = [], []


if __name__ == "__main__":
    run_worker(OpenVINORuntime())
