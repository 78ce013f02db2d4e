"""python -m quantize MODEL.onnx --out DIR [...]: the worker behind `pbh quantize` (which validates the flags first).

stdout carries exactly one JSON document, the summary `pbh quantize` reads (zod-checked there); progress goes to
stderr. Exit 2 means bad input (the message on stderr says which file or flag and what to do).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np  # noqa: E402
import onnx  # noqa: E402

from .calibration import InputError, batches, data_input, load_calibration  # noqa: E402
from .methods import METHODS, Variant, library_versions, preprocess, quantize, scratch_path  # noqa: E402
from .variants import CHECK_SAMPLES, check, finish  # noqa: E402
from .weight_only import METHODS as WEIGHT_ONLY, copy_tokenizer, is_decoder  # noqa: E402


def _log(msg: str) -> None:
    print(f'[quantize] {msg}', file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog='python -m quantize', description=__doc__.split('\n\n')[0])
    ap.add_argument('model')
    ap.add_argument('--out', required=True)
    ap.add_argument('--stem', required=True, help='output files are STEM.METHOD.TAG.onnx')
    ap.add_argument('--method', default='static', help=f'comma list of {", ".join(METHODS)}')
    ap.add_argument('--granularity', default='per_channel', help='comma list of per_channel, per_tensor (weight scales)')
    ap.add_argument('--calibration', help='.npy of preprocessed model inputs [count, ...]')
    ap.add_argument('--calibration-label', help='how to name the calibration source in messages and metadata')
    args = ap.parse_args(argv)
    # stdout is the summary's alone: anything a library prints goes to stderr with the progress lines.
    summary_out = os.fdopen(os.dup(1), 'w')
    os.dup2(2, 1)
    started = time.perf_counter()
    try:
        source = onnx.load(args.model)
    except Exception as e:  # onnx raises DecodeError, OSError, ...: all mean the file is not a loadable model
        raise InputError(f'{args.model}: cannot load as ONNX ({e})') from e
    granularities = [g for g in args.granularity.split(',') if g]
    methods = [m for m in args.method.split(',') if m]
    # Weight-only compression has its own granularity (blocks, or per channel for int8): one variant per method.
    variants = [Variant(m, True) for m in methods if m in WEIGHT_ONLY] + \
        [Variant(m, g == 'per_channel') for m in methods if m not in WEIGHT_ONLY for g in granularities]
    decoder = is_decoder(source)
    if decoder and any(v.method not in WEIGHT_ONLY for v in variants):
        raise InputError(f'{args.model} is a language model decoder (past_key_values inputs): pbh quantize compresses its '
                         f'weights only, with --method {",".join(WEIGHT_ONLY)} (activations stay float; no calibration)')
    samples, calibration = (None, None)
    if args.calibration:
        samples, calibration = load_calibration(args.calibration, args.calibration_label or args.calibration, source)
    versions = library_versions()
    os.makedirs(args.out, exist_ok=True)
    pre = scratch_path(args.out, args.stem, 'preprocessed')
    seconds: dict[str, float] = {}
    written = []
    try:
        t = time.perf_counter()
        if all(v.method in WEIGHT_ONLY for v in variants):
            # Weight-only compressors read the graph as exported; shape inference over a decoder's cache adds nothing.
            pre = args.model
        else:
            preprocess(args.model, pre, _log)
        seconds['preprocess'] = round(time.perf_counter() - t, 3)
        if decoder:
            copied = copy_tokenizer(args.model, args.out)
            _log(f'tokenizer files beside the variants: {", ".join(copied) or "already there"}')
        name = data_input(source).name if samples is not None else None
        check_chunks = batches(samples[:CHECK_SAMPLES], source, 16) if samples is not None else None
        for v in variants:
            out = os.path.join(args.out, f'{args.stem}.{v.method}.{v.tag}.onnx')
            t = time.perf_counter()
            facts = quantize(v, pre, out, samples)
            took = time.perf_counter() - t
            library = facts.pop('library')
            recorded = finish(args.model, source, out, {
                'method': v.method, **facts, 'library': {'name': library, 'version': versions['nncf' if library == 'nncf' else 'onnxruntime']},
                'calibration': calibration if v.method in ('static', 'nncf') else None,
                'check': check(args.model, out, name, check_chunks) if check_chunks else None,
            })
            seconds[f'{v.method}.{v.tag}'] = round(took, 3)
            scales = f'blocks of {recorded["block_size"]}' if recorded['block_size'] else 'per-channel' if recorded['per_channel'] else 'per-tensor'
            _log(f'{os.path.basename(out)}: weights {recorded["weight_dtype"]}, activations {recorded["activation_dtype"] or "float"}, {scales} in {took:.1f}s')
            written.append({'file': out, 'tag': v.tag, 'size_bytes': os.path.getsize(out),
                            **{k: recorded[k] for k in ('method', 'scheme', 'format', 'weight_dtype', 'activation_dtype',
                                                        'per_channel', 'block_size', 'quantized_ops', 'check', 'library')}})
    finally:
        if pre != args.model and os.path.exists(pre):
            os.remove(pre)
    json.dump({'variants': written, 'calibration': calibration, 'source_size_bytes': os.path.getsize(args.model),
               'versions': versions, 'seconds': {**seconds, 'total': round(time.perf_counter() - started, 3)}}, summary_out)
    summary_out.write('\n')
    summary_out.flush()
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main(sys.argv[1:]))
    except InputError as e:
        print(f'{e}', file=sys.stderr)
        sys.exit(2)
