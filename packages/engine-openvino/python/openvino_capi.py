"""OpenVINO's C API (libopenvino_c, shipped in the openvino wheel) through ctypes: the worker's calls after `load`.

Why not the Python binding: its InferRequest.infer costs 5-12 us a call over the request's own C++ clock (the outputs
dict it builds, pybind dispatch, binding the input through it), which would sit in the headline of every small model.
Through ctypes, ov_infer_request_infer costs ~0.5 us a call over it (docs/worker-protocol.md, "Measured").
The model is compiled once, by the binding (whose runtime model and properties say what executed); the C API runs
that same compiled model (`CompiledModel`). The C API alone cannot say what executed: it has no access to a runtime
model's ops or rt_info and no serializer.

Element types are never spelled as C enum values here: the enum's numbering changed between releases, so each port's
value is read from the compiled model and reused for the tensors made for that port.
"""

from __future__ import annotations

import ctypes
import queue
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import openvino as ov
import openvino._pyopenvino as _pyov

from pbh_worker import WorkerError

_P = ctypes.c_void_p
_PP = ctypes.POINTER(_P)


class _Shape(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int64), ("dims", ctypes.POINTER(ctypes.c_int64))]


_CALLBACK = ctypes.CFUNCTYPE(None, _P)


class _Callback(ctypes.Structure):
    _fields_ = [("callback_func", _CALLBACK), ("args", _P)]


_SIGNATURES: dict[str, list[Any]] = {
    "ov_compiled_model_get_property": [_P, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)],
    "ov_compiled_model_inputs_size": [_P, ctypes.POINTER(ctypes.c_size_t)],
    "ov_compiled_model_outputs_size": [_P, ctypes.POINTER(ctypes.c_size_t)],
    "ov_compiled_model_input_by_index": [_P, ctypes.c_size_t, _PP],
    "ov_compiled_model_output_by_index": [_P, ctypes.c_size_t, _PP],
    "ov_compiled_model_create_infer_request": [_P, _PP],
    "ov_port_get_element_type": [_P, ctypes.POINTER(ctypes.c_int)],
    "ov_output_const_port_free": [_P],
    "ov_infer_request_free": [_P],
    "ov_infer_request_set_input_tensor_by_index": [_P, ctypes.c_size_t, _P],
    "ov_infer_request_set_output_tensor_by_index": [_P, ctypes.c_size_t, _P],
    "ov_infer_request_get_output_tensor_by_index": [_P, ctypes.c_size_t, _PP],
    "ov_infer_request_get_input_tensor_by_index": [_P, ctypes.c_size_t, _PP],
    "ov_infer_request_infer": [_P],
    "ov_infer_request_start_async": [_P],
    "ov_infer_request_wait": [_P],
    "ov_infer_request_set_callback": [_P, ctypes.POINTER(_Callback)],
    "ov_tensor_create_from_host_ptr": [ctypes.c_int, _Shape, _P, _PP],
    "ov_tensor_get_shape": [_P, ctypes.POINTER(_Shape)],
    "ov_tensor_get_byte_size": [_P, ctypes.POINTER(ctypes.c_size_t)],
    "ov_tensor_data": [_P, _PP],
    "ov_tensor_free": [_P],
    "ov_shape_free": [ctypes.POINTER(_Shape)],
    "ov_free": [ctypes.c_char_p],
}


def _load_library() -> ctypes.CDLL:
    libs = Path(ov.__file__).parent / "libs"
    found = sorted(libs.glob("libopenvino_c.so*")) or sorted(libs.glob("libopenvino_c*.dylib"))
    if not found:
        raise WorkerError("import_error", f"the openvino wheel at {libs} has no libopenvino_c (its C API): reinstall openvino from python/requirements.txt")
    lib = ctypes.CDLL(str(found[0]))
    for name, argtypes in _SIGNATURES.items():
        function = getattr(lib, name)
        function.argtypes = argtypes
        function.restype = None if name.endswith("_free") else ctypes.c_int
    lib.ov_get_last_err_msg.restype = ctypes.c_char_p
    return lib


_lib = _load_library()
_pyov_lib = ctypes.CDLL(_pyov.__file__)
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype, _capsule_new.argtypes = ctypes.py_object, [_P, ctypes.c_char_p, _P]
_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype, _capsule_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = _P, [ctypes.py_object, ctypes.c_char_p]


def _check(status: int, what: str) -> None:
    if status != 0:
        detail = (_lib.ov_get_last_err_msg() or b"").decode(errors="replace").strip()
        raise WorkerError("runtime_error", f"OpenVINO C API {what} failed (status {status}): {detail or 'no message'}")


def _shape(dims: tuple[int, ...]) -> tuple[_Shape, Any]:
    values = (ctypes.c_int64 * len(dims))(*dims)
    return _Shape(len(dims), values), values


class Tensor:
    """An ov_tensor_t over a numpy array's own memory (no copy); the array is kept alive with it."""

    def __init__(self, array: np.ndarray, element_type: int) -> None:
        if not array.flags.c_contiguous:
            array = np.ascontiguousarray(array)
        self.array = array
        shape, self._dims = _shape(array.shape)
        self.handle = _P()
        _check(_lib.ov_tensor_create_from_host_ptr(element_type, shape, array.ctypes.data_as(_P), ctypes.byref(self.handle)), "ov_tensor_create_from_host_ptr")

    def __del__(self) -> None:
        if self.handle:
            _lib.ov_tensor_free(self.handle)
            self.handle = _P()


# Inputs of at most this many bytes a batch are copied into the request's own input tensors; larger ones are bound
# where they lie. Binding another tensor costs the CPU plugin ~3-4 us a call (it re-points its graph's input
# memory), copying costs the bytes at memory speed: the two meet at a few tens of KiB here.
COPY_BYTES = 32 * 1024


class Request:
    """An ov_infer_request_t. Outputs of a static shape are bound once to arrays of this request's own, which the
    plugin writes on every call (as a C++ deployment binds its output buffers); the rest are read after each call.
    Its own input tensors (static shapes) are kept for `call`'s copies."""

    def __init__(self, compiled: "CompiledModel") -> None:
        self.compiled = compiled
        self.handle = _P()
        _check(_lib.ov_compiled_model_create_infer_request(compiled.handle, ctypes.byref(self.handle)), "create_infer_request")
        # Per input: (its tensor handle, data address, bytes), None where the shape is dynamic.
        self.own_inputs: list[tuple[Any, int, int] | None] = []
        for i, shape in enumerate(compiled.input_shapes):
            if shape is None:
                self.own_inputs.append(None)
                continue
            tensor, data, size = _P(), _P(), ctypes.c_size_t()
            _check(_lib.ov_infer_request_get_input_tensor_by_index(self.handle, i, ctypes.byref(tensor)), f"get_input_tensor_by_index({i})")
            _check(_lib.ov_tensor_data(tensor, ctypes.byref(data)), "ov_tensor_data")
            _check(_lib.ov_tensor_get_byte_size(tensor, ctypes.byref(size)), "ov_tensor_get_byte_size")
            self.own_inputs.append((tensor, data.value or 0, size.value))
        self.outputs: list[Tensor | None] = []
        for i, (dtype, shape) in enumerate(compiled.output_specs):
            if shape is None:
                self.outputs.append(None)
                continue
            tensor = Tensor(np.empty(shape, dtype=dtype), compiled.output_types[i])
            _check(_lib.ov_infer_request_set_output_tensor_by_index(self.handle, i, tensor.handle), f"set_output_tensor_by_index({i})")
            self.outputs.append(tensor)

    def bind(self, tensors: tuple[Tensor, ...]) -> None:
        for i, tensor in enumerate(tensors):
            _check(_lib.ov_infer_request_set_input_tensor_by_index(self.handle, i, tensor.handle), f"set_input_tensor_by_index({i})")

    def copies(self, tensors: tuple[Tensor, ...]) -> bool:
        """Whether `call` copies these inputs into the request's own tensors (small, static) rather than binding them."""
        own = self.own_inputs
        return all(o is not None and o[2] == t.array.nbytes for o, t in zip(own, tensors)) and sum(t.array.nbytes for t in tensors) <= COPY_BYTES

    def feed(self, tensors: tuple[Tensor, ...]) -> None:
        """These inputs for the next run, as `call` takes them: copied into the request's own tensors or bound."""
        if not self.copies(tensors):
            self.bind(tensors)
            return
        for own, tensor in zip(self.own_inputs, tensors):
            if own is not None:
                ctypes.memmove(own[1], tensor.array.ctypes.data, own[2])

    def call(self, tensors: tuple[Tensor, ...]) -> Callable[[], None]:
        """The per-query call on resident tensors, every argument bound ahead: copy (`copies`) or bind each input,
        then infer; a nonzero status raises. Copying calls expect the request's own inputs bound, as they are unless
        `bind` replaced them."""
        run = self._call(tensors)
        # The call reads the tensors' memory by address: it holds them (and their arrays) for as long as it lives.
        run.tensors = tensors  # type: ignore[attr-defined]
        return run

    def _call(self, tensors: tuple[Tensor, ...]) -> Callable[[], None]:
        bind, infer, request = _lib.ov_infer_request_set_input_tensor_by_index, _lib.ov_infer_request_infer, self.handle
        if self.copies(tensors):
            copy = ctypes.memmove
            moves = [(own[1], t.array.ctypes.data, own[2]) for own, t in zip(self.own_inputs, tensors) if own is not None]
            if len(moves) == 1:
                ((dst, src, size),) = moves

                def copy_one() -> None:
                    copy(dst, src, size)
                    status = infer(request)
                    if status:
                        _check(status, "ov_infer_request_infer")

                return copy_one

            def copy_all() -> None:
                for dst, src, size in moves:
                    copy(dst, src, size)
                _check(infer(request), "ov_infer_request_infer")

            return copy_all
        if len(tensors) == 1:
            only = tensors[0].handle

            def run_one() -> None:
                status = bind(request, 0, only) or infer(request)
                if status:
                    _check(status, "set_input_tensor_by_index + infer")

            return run_one
        handles = [(i, t.handle) for i, t in enumerate(tensors)]

        def run() -> None:
            for i, handle in handles:
                _check(bind(request, i, handle), f"set_input_tensor_by_index({i})")
            _check(infer(request), "ov_infer_request_infer")

        return run

    def timed_infer(self, iterations: int) -> list[int]:
        """ov_infer_request_infer on whatever is bound, back to back, each call timed on perf_counter_ns."""
        infer, request, clock = _lib.ov_infer_request_infer, self.handle, time.perf_counter_ns
        timings = [0] * iterations
        for i in range(iterations):
            begin = clock()
            status = infer(request)
            timings[i] = clock() - begin
            if status:
                _check(status, "ov_infer_request_infer")
        return timings

    def infer(self) -> None:
        _check(_lib.ov_infer_request_infer(self.handle), "ov_infer_request_infer")

    def read_outputs(self) -> list[np.ndarray]:
        """Every output as an array of its own (a copy: the request reuses its buffers on the next call)."""
        arrays = []
        for i, bound in enumerate(self.outputs):
            if bound is not None:
                arrays.append(bound.array.copy())
                continue
            tensor, shape, size, data = _P(), _Shape(), ctypes.c_size_t(), _P()
            _check(_lib.ov_infer_request_get_output_tensor_by_index(self.handle, i, ctypes.byref(tensor)), f"get_output_tensor_by_index({i})")
            try:
                _check(_lib.ov_tensor_get_shape(tensor, ctypes.byref(shape)), "ov_tensor_get_shape")
                dims = tuple(shape.dims[d] for d in range(shape.rank))
                _lib.ov_shape_free(ctypes.byref(shape))
                _check(_lib.ov_tensor_get_byte_size(tensor, ctypes.byref(size)), "ov_tensor_get_byte_size")
                _check(_lib.ov_tensor_data(tensor, ctypes.byref(data)), "ov_tensor_data")
                # One copy, straight into the array (a bytes object between them would be a second).
                array = np.empty(dims, dtype=self.compiled.output_specs[i][0])
                if array.nbytes != size.value:
                    raise WorkerError("runtime_error", f"output {i}: OpenVINO reports {size.value} bytes for shape {dims} of {array.dtype} ({array.nbytes} bytes)")
                if size.value:
                    ctypes.memmove(array.ctypes.data, data.value, size.value)
                arrays.append(array)
            finally:
                _lib.ov_tensor_free(tensor)
        return arrays

    def __del__(self) -> None:
        for own in self.own_inputs:
            if own is not None:
                _lib.ov_tensor_free(own[0])
        self.own_inputs = []
        if self.handle:
            _lib.ov_infer_request_free(self.handle)
            self.handle = _P()


class AsyncQueue:
    """Requests run with start_async; each one's `done` is called from OpenVINO's callback (its own thread, which
    ctypes gives the GIL) as soon as it completes, then the request is handed back. `next_idle` blocks, the GIL
    released, until a request is free."""

    def __init__(self, compiled: "CompiledModel", size: int) -> None:
        self.requests = [Request(compiled) for _ in range(size)]
        self.idle: queue.SimpleQueue[int] = queue.SimpleQueue()
        self.done: list[Callable[[], None]] = [_nothing] * size

        def completed(slot: int) -> None:
            self.done[slot]()
            self.idle.put(slot)

        # One C function object and one struct per request, kept here: OpenVINO keeps the struct's address.
        self._functions = [_CALLBACK(lambda _args, slot=slot: completed(slot)) for slot in range(size)]
        self._callbacks = [_Callback(function, None) for function in self._functions]
        for slot, (request, callback) in enumerate(zip(self.requests, self._callbacks)):
            _check(_lib.ov_infer_request_set_callback(request.handle, ctypes.byref(callback)), "ov_infer_request_set_callback")
            self.idle.put(slot)

    def next_idle(self) -> int:
        slot = self.idle.get()
        # The finished run's own status: an error in a request surfaces here rather than being lost in the callback.
        _check(_lib.ov_infer_request_wait(self.requests[slot].handle), "ov_infer_request_wait")
        return slot

    def start(self, slot: int, tensors: tuple[Tensor, ...] | None, done: Callable[[], None]) -> None:
        """Starts request `slot` on these inputs (copied or bound, as `Request.call` would), or on what it has."""
        request = self.requests[slot]
        if tensors is not None:
            request.feed(tensors)
        self.done[slot] = done
        _check(_lib.ov_infer_request_start_async(request.handle), "ov_infer_request_start_async")

    def wait_all(self) -> None:
        for request in self.requests:
            _check(_lib.ov_infer_request_wait(request.handle), "ov_infer_request_wait")


def _nothing() -> None:
    pass


def _pybind11_abi() -> str:
    # pybind11 names its function-record type after the platform ABI id its conduit checks.
    return type(_pyov.Core.read_model.__self__).__name__.removeprefix("pybind11_detail_function_record_v1_")


def _cpp_pointer(compiled: ov.CompiledModel) -> int:
    """The address of the ov::CompiledModel the binding's object holds, through pybind11's conduit (its interface
    for handing a C++ object across extensions), asked with the binding's own type_info for ov::CompiledModel."""
    abi = _pybind11_abi()
    try:
        type_info = ctypes.addressof(ctypes.c_void_p.in_dll(_pyov_lib, "_ZTIN2ov13CompiledModelE"))
        found = compiled._pybind11_conduit_v1_(abi.encode(), _capsule_new(type_info, b"St9type_info", None), b"raw_pointer_ephemeral")
    except (AttributeError, ValueError) as e:
        found, why = None, str(e)
    else:
        why = f"the conduit declined ABI {abi!r}"
    if found is None:
        raise WorkerError("runtime_error", f"openvino {ov.get_version()}'s Python binding cannot hand its compiled model to the C API through pybind11's conduit ({why})")
    return _capsule_pointer(found, _capsule_name(found))


class CompiledModel:
    """The binding's compiled model, run through the C API: one compilation, read by the binding, run by ctypes.

    ov_compiled_model_t is a struct whose one member is a std::shared_ptr<ov::CompiledModel> (the C API's
    src/common.h). This one is {the binding's pointer, no control block}: a non-owning shared_ptr, as the aliasing
    constructor makes from an empty one. Every C API call on it only dereferences it; the binding's object owns the
    model (kept here) and the handle is never given to ov_compiled_model_free.
    """

    def __init__(self, compiled: ov.CompiledModel) -> None:
        self.owner = compiled
        self._struct = (_P * 2)(_cpp_pointer(compiled), None)
        self.handle = _P(ctypes.addressof(self._struct))
        static = lambda port: [int(d) for d in port.get_shape()] if port.get_partial_shape().is_static else None  # noqa: E731
        # Static shapes per input and (dtype, static shape) per output; None where dynamic.
        self.input_shapes = [static(port) for port in compiled.inputs]
        self.output_specs = [(np.dtype(port.get_element_type().to_dtype()), static(port)) for port in compiled.outputs]
        counts = []
        for function in (_lib.ov_compiled_model_inputs_size, _lib.ov_compiled_model_outputs_size):
            size = ctypes.c_size_t()
            _check(function(self.handle, ctypes.byref(size)), function.__name__)
            counts.append(size.value)
        if counts != [len(self.input_shapes), len(self.output_specs)]:
            raise WorkerError("runtime_error", f"the C API sees {counts[0]} inputs and {counts[1]} outputs of the binding's compiled model, which has {len(self.input_shapes)} and {len(self.output_specs)}")
        self.input_types = [self._port_type(_lib.ov_compiled_model_input_by_index, i) for i in range(len(self.input_shapes))]
        self.output_types = [self._port_type(_lib.ov_compiled_model_output_by_index, i) for i in range(len(self.output_specs))]

    def _port_type(self, by_index: Any, index: int) -> int:
        port, element = _P(), ctypes.c_int()
        _check(by_index(self.handle, index, ctypes.byref(port)), "port by index")
        try:
            _check(_lib.ov_port_get_element_type(port, ctypes.byref(element)), "ov_port_get_element_type")
        finally:
            _lib.ov_output_const_port_free(port)
        return element.value

    def tensors(self, arrays: list[np.ndarray]) -> tuple[Tensor, ...]:
        return tuple(Tensor(array, self.input_types[i]) for i, array in enumerate(arrays))
