"""Frame I/O over private copies of the worker's stdin/stdout.

A frame is one UTF-8 JSON header line followed by the raw little-endian bytes of the tensors it announces
(`header["tensors"]`: name, dtype, shape, nbytes), concatenated in header order.
"""

from __future__ import annotations

import json
import math
import mmap
import os
import sys
from typing import Any, BinaryIO

import numpy as np

from .errors import ProtocolError, WorkerError

DTYPES: dict[str, np.dtype] = {
    "float32": np.dtype("<f4"),
    "float64": np.dtype("<f8"),
    "float16": np.dtype("<f2"),
    "int8": np.dtype("i1"),
    "uint8": np.dtype("u1"),
    "int32": np.dtype("<i4"),
    "int64": np.dtype("<i8"),
    "bool": np.dtype("?"),
}
_NAME_OF_KIND = {(dt.kind, dt.itemsize): name for name, dt in DTYPES.items()}

# A header is small JSON; a line this long means the stream is not ours.
MAX_HEADER_BYTES = 64 << 20
# One encoder for every reply (json.dumps with arguments builds one per call); NaN is not JSON, so refuse it here
# and the reply becomes an error instead of a frame the client cannot parse.
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


# Each tensor of a request starts at a multiple of this in the frame's block (cache line; what runtimes want of a
# buffer they share instead of copying).
TENSOR_ALIGN = 64
# Where a request's tensor bytes may lie instead of on the stream (`bytes_file`: tensor-file.ts on the client).
TENSOR_FILE_FOLDER = "/dev/shm"
TENSOR_FILE_PREFIX = "pbh-tensors-"


def _tensor_spec(spec: Any) -> tuple[str, np.dtype, tuple[int, ...], int]:
    try:
        name, dtype, shape, nbytes = spec["name"], spec["dtype"], spec["shape"], spec["nbytes"]
        shape = tuple(int(d) for d in shape)
        nbytes = int(nbytes)
    except (TypeError, KeyError, ValueError) as e:
        raise ProtocolError(f"tensor header {spec!r} lacks name/dtype/shape/nbytes ({e})") from None
    np_dtype = DTYPES.get(dtype)
    if np_dtype is None:
        raise ProtocolError(f"tensor {name!r}: unknown dtype {dtype!r} (supported: {', '.join(DTYPES)})")
    expected = math.prod(shape) * np_dtype.itemsize
    if expected != nbytes or any(d < 0 for d in shape):
        raise ProtocolError(f"tensor {name!r}: shape {list(shape)} of {dtype} is {expected} bytes, header says {nbytes}")
    return name, np_dtype, shape, nbytes


def _mapped(path: Any, size: int) -> np.ndarray:
    """The bytes of a request's tensor file (the client's tensor-file.ts), mapped in place and the file unlinked.

    Pages are populated here, so no timed run later takes a fault on a resident batch."""
    if not isinstance(path, str) or os.path.dirname(path) != TENSOR_FILE_FOLDER or not os.path.basename(path).startswith(TENSOR_FILE_PREFIX):
        raise ProtocolError(f'"bytes_file" must be a {TENSOR_FILE_FOLDER}/{TENSOR_FILE_PREFIX}* file the client wrote, got {path!r}')
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError as e:
        raise ProtocolError(f"cannot open the request's tensor file {path}: {e}") from None
    try:
        os.unlink(path)
        held = os.fstat(fd).st_size
        if held < size:
            raise ProtocolError(f"tensor file {path} holds {held} bytes; the header's tensors need {size}")
        if size == 0:
            return np.empty(0, dtype=np.uint8)
        return np.frombuffer(mmap.mmap(fd, size, flags=mmap.MAP_SHARED | mmap.MAP_POPULATE), dtype=np.uint8)
    finally:
        os.close(fd)


def dtype_name(dtype: np.dtype) -> str:
    name = _NAME_OF_KIND.get((dtype.kind, dtype.itemsize))
    if name is None:
        raise WorkerError(
            "unsupported_dtype",
            f"numpy dtype {dtype} has no protocol dtype (supported: {', '.join(DTYPES)}); cast it in the runtime",
        )
    return name


class Channel:
    def __init__(self, reader: BinaryIO, writer: BinaryIO):
        self._reader = reader
        self._writer = writer

    def fileno(self) -> int:
        """The request stream's descriptor (to poll it; reads go through read_line)."""
        return self._reader.fileno()

    def read_line(self) -> bytes | None:
        """The next request's header line (ending in a newline), or None at end of input (the parent closed stdin or died)."""
        line = self._reader.readline(MAX_HEADER_BYTES + 1)
        if not line:
            return None
        if not line.endswith(b"\n"):
            if len(line) > MAX_HEADER_BYTES:
                raise ProtocolError(f"request header longer than {MAX_HEADER_BYTES} bytes without a newline")
            raise ProtocolError(f"input ended inside a request header: {line[:200]!r}")
        return line

    def read_request(self, line: bytes) -> tuple[dict[str, Any], list[tuple[str, np.ndarray]]]:
        """Parse a header line and read the tensors it announces, in header order (names may repeat: load_samples)."""
        try:
            header = json.loads(line)
        except ValueError as e:
            raise ProtocolError(f"request header is not JSON ({e}): {line[:200]!r}") from None
        if not isinstance(header, dict) or not isinstance(header.get("cmd"), str):
            raise ProtocolError(f'request header must be an object with a string "cmd": {line[:200]!r}')
        specs = header.get("tensors") or []
        if not isinstance(specs, list):
            raise ProtocolError(f'request "tensors" must be a list, got {type(specs).__name__}')
        parsed = [_tensor_spec(spec) for spec in specs]
        # One block for the whole frame, each tensor a view at an aligned offset: the mapped tensor file, or for bytes
        # on the stream a block the kernel backs with huge pages, where an array per batch costs a page fault per
        # 4 KiB on first touch (64 MiB: ~25 ms as one block, 100-160 ms as 107 arrays, here).
        offsets = []
        total = 0
        for _, _, _, nbytes in parsed:
            offsets.append(total)
            total += -(-nbytes // TENSOR_ALIGN) * TENSOR_ALIGN
        bytes_file = header.get("bytes_file")
        if bytes_file is not None:
            block, start = _mapped(bytes_file, offsets[-1] + parsed[-1][3] if parsed else 0), 0
        else:
            block = np.empty(total + TENSOR_ALIGN, dtype=np.uint8)
            start = -block.ctypes.data % TENSOR_ALIGN
        tensors = []
        for (name, np_dtype, shape, nbytes), offset in zip(parsed, offsets):
            raw = block[start + offset : start + offset + nbytes]
            if nbytes and bytes_file is None:
                # Read straight into the tensor's memory: the only copy is the kernel's.
                self._read_exact(memoryview(raw), name)
            tensors.append((name, raw.view(np_dtype).reshape(shape)))
        return header, tensors

    def _read_exact(self, view: memoryview, name: str) -> None:
        filled = 0
        total = len(view)
        while filled < total:
            n = self._reader.readinto(view[filled:])
            if not n:
                raise ProtocolError(f"input ended after {filled} of {total} bytes of tensor {name!r}")
            filled += n

    def write_reply(self, header: dict[str, Any], tensors: dict[str, np.ndarray] | None = None) -> None:
        arrays: list[np.ndarray] = []
        specs: list[dict[str, Any]] = []
        for name, value in (tensors or {}).items():
            array = value if isinstance(value, np.ndarray) and value.flags.c_contiguous else np.ascontiguousarray(value)
            if array.dtype.byteorder == ">":
                array = array.astype(array.dtype.newbyteorder("<"))
            specs.append(
                {"name": name, "dtype": dtype_name(array.dtype), "shape": list(array.shape), "nbytes": array.nbytes}
            )
            arrays.append(array)
        header = {**header, "tensors": specs}
        self._writer.write(_ENCODER.encode(header).encode() + b"\n")
        for array in arrays:
            if array.nbytes:
                self._writer.write(memoryview(array).cast("B"))
        self._writer.flush()

    def write_bytes(self, data: bytes) -> None:
        """Bytes straight onto the frame stream: a reply encoded by the caller (the `run` fast path), or, in tests,
        garbage that proves the client rejects it."""
        self._writer.write(data)
        self._writer.flush()


_channel: Channel | None = None


def claim_stdio() -> Channel:
    """Take private copies of fds 0 and 1 for frames; point fd 1 at stderr and fd 0 at /dev/null.

    After this, anything a library prints (Python print or C-level write(1, ...)) lands on stderr and
    nothing can read the request stream by accident. Idempotent: the launcher claims before importing
    the engine's script, and serve() claims again.
    """
    global _channel
    if _channel is not None:
        return _channel
    sys.stdout.flush()
    frame_out = os.dup(1)
    frame_in = os.dup(0)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(line_buffering=True)
    reader = os.fdopen(frame_in, "rb", buffering=1 << 16)
    writer = os.fdopen(frame_out, "wb", buffering=1 << 16)
    _channel = Channel(reader, writer)  # type: ignore[arg-type]
    return _channel


def current_channel() -> Channel | None:
    return _channel
