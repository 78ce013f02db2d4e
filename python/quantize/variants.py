"""One ONNX file per variant with what was done in its metadata, under `pbh.optimization` (schema 1, kind
"quantization"), which packages/core/src/model/optimization.ts reads back for `pbh inspect` and `pbh run`:
  {schema, tool, kind: "quantization", method, scheme, format, weight_dtype, activation_dtype, per_channel,
   calibration: {source, samples, sha256} | null, calibration_method, library: {name, version}, call, quantized_ops,
   check: {samples, agreement, max_abs_error} | null, source: {file, sha256}, pruned: <the source's pbh prune facts> | null}
The dtypes and per_channel are read from the written graph (census.py); `check` compares the variant's outputs with
the source's on calibration samples under ONNX Runtime (a sanity figure; the gate of pbh run is what decides).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import onnx

from .census import census

METADATA_KEY = 'pbh.optimization'
SCHEMA = 1
# Metadata of the source that describes its float weights and would be wrong on a quantized copy.
STALE_KEYS = (METADATA_KEY, 'pbh.test_top1')
CHECK_SAMPLES = 256


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            h.update(block)
    return h.hexdigest()


def source_pruning(model: onnx.ModelProto) -> dict | None:
    """The source's pbh prune facts, kept so a pruned-then-quantized file still says how its zeros were made."""
    props = {p.key: p.value for p in model.metadata_props}
    try:
        facts = json.loads(props.get(METADATA_KEY, 'null'))
    except json.JSONDecodeError:
        return None
    if isinstance(facts, dict) and facts.get('kind') == 'quantization':
        return facts.get('pruned')
    return facts if isinstance(facts, dict) else None


def _outputs(path: str, name: str, chunks: list[np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(path, options, providers=['CPUExecutionProvider'])
    return [session.run(None, {name: c})[0] for c in chunks]


def check(source: str, variant: str, name: str, chunks: list[np.ndarray]) -> dict:
    ref = np.concatenate(_outputs(source, name, chunks))
    got = np.concatenate(_outputs(variant, name, chunks))
    agreement = float((ref.reshape(len(ref), -1).argmax(1) == got.reshape(len(got), -1).argmax(1)).mean())
    return {'samples': int(len(ref)), 'agreement': agreement, 'max_abs_error': float(np.abs(ref - got).max()),
            'max_abs_reference': float(np.abs(ref).max())}


def finish(source_path: str, source: onnx.ModelProto, written: str, facts: dict) -> dict:
    """Writes the metadata into the quantized file and returns the facts recorded."""
    model = onnx.load(written)
    optimization = {'schema': SCHEMA, 'tool': 'pbh quantize', 'kind': 'quantization', **facts, **census(model),
                    'source': {'file': source_path.rsplit('/', 1)[-1], 'sha256': sha256(source_path)},
                    'pruned': source_pruning(source)}
    props = {p.key: p.value for p in source.metadata_props if p.key not in STALE_KEYS}
    props[METADATA_KEY] = json.dumps(optimization, separators=(',', ':'))
    del model.metadata_props[:]
    onnx.helper.set_model_props(model, props)
    model.doc_string = (source.doc_string + '\n' if source.doc_string else '') + \
        f'Quantized by pbh quantize: {facts["method"]} ({facts["library"]["name"]} {facts["library"]["version"]}), ' \
        f'weights {optimization["weight_dtype"]}, activations {optimization["activation_dtype"]}.'
    onnx.save(model, written)
    return optimization
