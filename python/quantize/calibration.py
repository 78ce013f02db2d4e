"""Calibration samples for static quantization: an .npy of preprocessed model inputs [count, ...], checked against the
model's one data input, and the facts the metadata records about it (source, size, sha256)."""

from __future__ import annotations

import hashlib

import numpy as np
import onnx


class InputError(Exception):
    """Bad input (a file, a flag, the model): exit 2, the message says which and what to do."""


def data_input(model: onnx.ModelProto) -> onnx.ValueInfoProto:
    inits = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    if len(inputs) != 1:
        raise InputError(f'pbh quantize calibrates models with one data input; this one has {len(inputs)} '
                         f'({", ".join(i.name for i in inputs)}): quantize it with --method dynamic, which needs no data')
    return inputs[0]


def load_calibration(path: str, label: str, model: onnx.ModelProto) -> tuple[np.ndarray, dict]:
    try:
        samples = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise InputError(f'--calibration {label}: cannot read {path} as .npy ({e})') from e
    if samples.dtype != np.float32 or samples.ndim < 2:
        raise InputError(f'--calibration {label}: needs float32 samples [count, ...], got {samples.dtype} {list(samples.shape)}')
    inp = data_input(model)
    want = [d.dim_value or None for d in inp.type.tensor_type.shape.dim][1:]
    if len(want) != samples.ndim - 1 or any(w is not None and w != got for w, got in zip(want, samples.shape[1:])):
        raise InputError(f'--calibration {label}: samples are {list(samples.shape[1:])} each, the model input {inp.name} takes '
                         f'{["?" if d is None else d for d in want]}; give samples preprocessed the way the model expects')
    with open(path, 'rb') as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return samples, {'source': label, 'samples': int(len(samples)), 'sha256': digest}


def batches(samples: np.ndarray, model: onnx.ModelProto, size: int) -> list[np.ndarray]:
    """The samples in the batches the model accepts: its own fixed batch, else `size` at a time."""
    dim0 = data_input(model).type.tensor_type.shape.dim[0].dim_value
    step = dim0 if dim0 > 0 else size
    return [samples[i:i + step] for i in range(0, len(samples) - step + 1, step)] or [samples[:step]]
