"""Prune every layer for every requested variant and write one ONNX file per variant with its facts in the metadata.

The facts live under the metadata key `pbh.optimization` as JSON (schema 1), which packages/core/src/model/
optimization.ts reads back for `pbh inspect` and `pbh run`:
  {schema, tool, method, kind, target, n, m, actual, layers: [{weight, node, op, shape, elements, zeros, sparsity,
   relative_error}], skipped_layers, calibration: {source, samples, sha256} | null, damping, source: {file, sha256}}
`actual` is the zero fraction over the pruned layers (what `target` asks for); `relative_error` is
||W X - W' X||^2 / ||W X||^2 on the calibration inputs, null without calibration.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import numpy_helper

from . import obc
from .hessians import HessianAccumulator
from .layers import Layer, read_weight
from .patterns import magnitude_nm, magnitude_unstructured, nm_holds

METADATA_KEY = 'pbh.optimization'
SCHEMA = 1
# Metadata of the source that describes its dense weights and would be wrong on a pruned copy.
STALE_KEYS = (METADATA_KEY, 'pbh.sparsity', 'pbh.test_top1')


@dataclass(frozen=True)
class Variant:
    method: str
    kind: str  # 'unstructured' | 'n_m'
    target: float
    n: int | None = None
    m: int | None = None

    @property
    def tag(self) -> str:
        return f'sparse{round(self.target * 100)}' if self.kind == 'unstructured' else f'{self.n}of{self.m}'


def _pruned_matrices(layer: Layer, w: np.ndarray, variants: list[Variant], hessians: HessianAccumulator | None,
                     damping: float) -> dict[Variant, np.ndarray]:
    out: dict[Variant, np.ndarray] = {}
    obc_unstructured = [v for v in variants if v.method == 'obc' and v.kind == 'unstructured']
    if obc_unstructured:
        assert hessians is not None
        by_target = obc.prune_unstructured(hessians.problem(layer, w), [v.target for v in obc_unstructured], damping)
        out.update({v: by_target[v.target] for v in obc_unstructured})
    for v in variants:
        if v in out:
            continue
        if v.method == 'obc':
            assert hessians is not None and v.n is not None and v.m is not None
            out[v] = obc.prune_nm(hessians.problem(layer, w), v.n, v.m, damping)
        elif v.kind == 'unstructured':
            out[v] = magnitude_unstructured(w, v.target)
        else:
            assert v.n is not None and v.m is not None
            out[v] = magnitude_nm(w, v.n, v.m)
    return out


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            h.update(block)
    return h.hexdigest()


def prune_variants(model_path: str, model: onnx.ModelProto, layers: list[Layer], skipped: list[dict], variants: list[Variant],
                   out_dir: str, stem: str, hessians: HessianAccumulator | None, calibration: dict | None,
                   damping: float, log) -> tuple[list[dict], dict[str, float]]:
    """Writes every variant; returns what was written and the seconds each method spent pruning."""
    weights = {layer.weight: layer.matrix(read_weight(model, layer.weight)) for layer in layers}
    pruned: dict[Variant, dict[str, np.ndarray]] = {v: {} for v in variants}
    layer_facts: dict[Variant, list[dict]] = {v: [] for v in variants}
    seconds: dict[str, float] = {}
    for layer in layers:
        w = weights[layer.weight]
        for method in sorted({v.method for v in variants}):
            started = time.perf_counter()
            mine = [v for v in variants if v.method == method]
            for v, wp in _pruned_matrices(layer, w, mine, hessians, damping).items():
                if v.kind == 'n_m' and not nm_holds(wp, v.n, v.m):
                    raise AssertionError(f'{layer.weight}: {v.method} {v.n}:{v.m} left a group with more than {v.n} nonzeros')
                pruned[v][layer.weight] = wp
                error = obc.relative_error(hessians.problem(layer, w), wp) if hessians else None
                layer_facts[v].append({
                    'weight': layer.weight, 'node': layer.node, 'op': layer.op, 'shape': list(layer.shape),
                    'elements': int(wp.size), 'zeros': int((wp == 0).sum()), 'sparsity': float((wp == 0).mean()),
                    'relative_error': error,
                })
            seconds[method] = seconds.get(method, 0.0) + time.perf_counter() - started
        log(f'{layer.node} ({layer.op} {list(layer.shape)}): pruned for {len(variants)} variant(s)')

    source = {'file': os.path.basename(model_path), 'sha256': _sha256(model_path)}
    by_weight = {layer.weight: layer for layer in layers}
    written = []
    for v in variants:
        facts = layer_facts[v]
        elements = sum(f['elements'] for f in facts)
        zeros = sum(f['zeros'] for f in facts)
        optimization = {
            'schema': SCHEMA, 'tool': 'pbh prune', 'method': v.method, 'kind': v.kind, 'target': v.target, 'n': v.n, 'm': v.m,
            'actual': zeros / elements if elements else 0.0, 'layers': facts, 'skipped_layers': skipped,
            'calibration': calibration,
            'damping': damping if v.method == 'obc' else None, 'source': source,
        }
        variant_model = onnx.ModelProto()
        variant_model.CopyFrom(model)
        replacements = {name: by_weight[name].stored(wp) for name, wp in pruned[v].items()}
        for i, init in enumerate(variant_model.graph.initializer):
            if init.name in replacements:
                variant_model.graph.initializer[i].CopyFrom(numpy_helper.from_array(replacements[init.name], init.name))
        props = {p.key: p.value for p in variant_model.metadata_props if p.key not in STALE_KEYS}
        props[METADATA_KEY] = json.dumps(optimization, separators=(',', ':'))
        del variant_model.metadata_props[:]
        onnx.helper.set_model_props(variant_model, props)
        pattern = f'{v.n}:{v.m} (at most {v.n} nonzeros in every {v.m})' if v.kind == 'n_m' else f'{v.target:.0%} unstructured'
        variant_model.doc_string = (model.doc_string + '\n' if model.doc_string else '') + \
            f'Pruned by pbh prune: {v.method}, {pattern}, {len(facts)} layer(s), actual {optimization["actual"]:.4f}.'
        path = os.path.join(out_dir, f'{stem}.{v.method}.{v.tag}.onnx')
        onnx.save(variant_model, path)
        written.append({'file': path, 'tag': v.tag, **{k: optimization[k] for k in ('method', 'kind', 'target', 'n', 'm', 'actual')},
                        'layers': facts})
    return written, {method: round(s, 3) for method, s in seconds.items()}
