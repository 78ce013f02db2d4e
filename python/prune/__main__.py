"""python -m prune MODEL.onnx --out DIR [...]: the worker behind `pbh prune` (which validates the flags first).

stdout carries exactly one JSON document, the summary `pbh prune` reads (zod-checked there); progress goes to stderr.
Exit 2 means bad input (the message on stderr says which file, flag or layer and what to do).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time

# One BLAS thread: results do not depend on the thread count, and a shared 2-core machine stays usable.
for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ.setdefault(_var, '1')

import numpy as np  # noqa: E402
import onnx  # noqa: E402

from .hessians import capture_hessians  # noqa: E402
from .layers import PRUNABLE_OPS, LayerSelectionError, find_layers  # noqa: E402
from .variants import Variant, prune_variants  # noqa: E402


class InputError(Exception):
    pass


def _log(msg: str) -> None:
    print(f'[prune] {msg}', file=sys.stderr, flush=True)


def _variants(args: argparse.Namespace) -> list[Variant]:
    out = []
    for method in args.method.split(','):
        for text in filter(None, args.unstructured.split(',')):
            out.append(Variant(method, 'unstructured', float(text)))
        for text in filter(None, args.nm.split(',')):
            n, m = (int(part) for part in text.split(':'))
            out.append(Variant(method, 'n_m', 1 - n / m, n, m))
    return out


def _calibration(path: str, label: str, model: onnx.ModelProto) -> tuple[np.ndarray, dict]:
    try:
        samples = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise InputError(f'--calibration {label}: cannot read {path} as .npy ({e})') from e
    if samples.dtype != np.float32 or samples.ndim < 2:
        raise InputError(f'--calibration {label}: needs float32 samples [count, ...], got {samples.dtype} {list(samples.shape)}')
    inits = {i.name for i in model.graph.initializer}
    (inp,) = [i for i in model.graph.input if i.name not in inits] or [None]
    if inp is not None:
        dims = [d.dim_value or None for d in inp.type.tensor_type.shape.dim]
        want = dims[1:]
        if len(want) != samples.ndim - 1 or any(w is not None and w != got for w, got in zip(want, samples.shape[1:])):
            raise InputError(f'--calibration {label}: samples are {list(samples.shape[1:])} each, the model input {inp.name} takes '
                             f'{["?" if d is None else d for d in want]}; give samples preprocessed the way the model expects')
    with open(path, 'rb') as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return samples, {'source': label, 'samples': int(len(samples)), 'sha256': digest}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog='python -m prune', description=__doc__.split('\n\n')[0])
    ap.add_argument('model')
    ap.add_argument('--out', required=True)
    ap.add_argument('--stem', required=True, help='output files are STEM.METHOD.TAG.onnx')
    ap.add_argument('--method', default='obc', help='comma list of magnitude, obc')
    ap.add_argument('--unstructured', default='', help='comma list of zero fractions')
    ap.add_argument('--nm', default='', help='comma list of N:M (at most N nonzeros in every M)')
    ap.add_argument('--layers', default=','.join(PRUNABLE_OPS))
    ap.add_argument('--calibration', help='.npy of preprocessed model inputs [count, ...]')
    ap.add_argument('--calibration-label', help='how to name the calibration source in messages and metadata')
    ap.add_argument('--damping', type=float, default=0.01)
    args = ap.parse_args(argv)
    # stdout is the summary's alone: anything a library prints goes to stderr with the progress lines.
    summary_out = os.fdopen(os.dup(1), 'w')
    os.dup2(2, 1)
    started = time.perf_counter()
    try:
        model = onnx.load(args.model)
    except Exception as e:  # onnx raises DecodeError, OSError, ...: all mean the file is not a loadable model
        raise InputError(f'{args.model}: cannot load as ONNX ({e})') from e
    variants = _variants(args)
    layers, skipped = find_layers(model, [s for s in args.layers.split(',') if s])
    if not layers:
        raise InputError(f'{args.model}: no prunable layer among --layers {args.layers}'
                         + (f' ({"; ".join(s["node"] + ": " + s["reason"] for s in skipped)})' if skipped else ''))
    _log(f'{len(layers)} layer(s) to prune, {len(skipped)} skipped; variants: {", ".join(f"{v.method}:{v.tag}" for v in variants)}')
    hessians, calibration, capture_s = None, None, 0.0
    if args.calibration:
        samples, calibration = _calibration(args.calibration, args.calibration_label or args.calibration, model)
        t = time.perf_counter()
        try:
            hessians = capture_hessians(model, layers, samples)
        except ValueError as e:
            raise InputError(f'--calibration {calibration["source"]}: {e}') from e
        capture_s = time.perf_counter() - t
        _log(f'Hessians from {len(samples)} calibration sample(s) in {capture_s:.1f}s')
    elif any(v.method == 'obc' for v in variants):
        raise InputError('--method obc needs --calibration (OBC builds each layer\'s Hessian from calibration inputs); '
                         'use --method magnitude to prune without data')
    os.makedirs(args.out, exist_ok=True)
    written, seconds = prune_variants(args.model, model, layers, skipped, variants, args.out, args.stem, hessians, calibration,
                                      args.damping, _log)
    json.dump({'variants': written, 'skipped_layers': skipped, 'calibration': calibration,
               'seconds': {'calibration': round(capture_s, 3), **seconds, 'total': round(time.perf_counter() - started, 3)}},
              summary_out)
    summary_out.write('\n')
    summary_out.flush()
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main(sys.argv[1:]))
    except (InputError, LayerSelectionError) as e:
        print(f'{e}', file=sys.stderr)
        sys.exit(2)
