"""Generate PBH's bundled benchmark suite (models + datasets + manifest) into .cache/suite.

    .venv/bin/python python/generate_suite.py [--out .cache/suite] [--force] [--base-only]

Everything is derived from seed 0, scikit-learn's digits and wine data and the onnx package's light test models,
so the suite is rebuilt rather than stored in git. A stamp file holds the sha256 of this script and
python/suite/*.py; when it matches (and every manifest file is present) the run is a no-op.
Concurrent runs serialise on <out>.lock; the suite is built in a temporary sibling folder and swapped in,
so readers never see a half-written suite. `--base-only` leaves out the optional parts (the sparsity study's
jax-trained families, ~75 s on 2 cores): the demo uses it; the stamp records which parts a suite holds, and a run
that asks for more than the suite holds rebuilds it whole.

Models (see python/suite/sparsity.py for the N:M definition the TypeScript detector shares):
  digits_cnn            numpy-trained CNN, input `input` [N,1,8,8] = pixel/16, output `logits` [N,10]
  digits_cnn_sparse50   magnitude-pruned to 50% zeros in every Conv/Gemm weight, fine-tuned with the mask held
  digits_cnn_sparse80   same at 80%
  digits_cnn_2of4       2:4 (N:M with n=2, m=4) by magnitude, fine-tuned with the mask held
  digits_mlp            numpy-trained MLP, input `input` [N,64], output `logits` [N,10]
  wine_mlp              numpy-trained on load_wine, two inputs: `features` float32 [N,12] (standardised) and `category`
                        int64 [N] (proline in 8 quantile buckets, embedded by a Gather), output `logits` [N,3];
                        its test split is data/wine_features.npy, data/wine_category.npy, data/wine_y.npy
  resnet50, squeezenet  onnx light models with seeded RANDOM weights, input `input` [N,3,224,224], output `output`
  digits_mobilenet_v2, digits_resnet, digits_vit
                        the sparsity study's families (python/suite/study_build.py), trained with jax on load_digits,
                        input `input` [N,1,8,8] = pixel/16, output `logits` [N,10], metadata pbh.family; OBC's
                        calibration samples (train split) are data/digits_calibration_x.npy
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import hashlib
import json
import os
import shutil
import sys
import time

# One BLAS thread: training results then do not depend on the thread count, and the generator stays
# polite on a shared 2-core machine (the matrices are small, threads buy little). Set before numpy loads.
for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ.setdefault(_var, '1')

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)
STAMP = '.stamp'
MANIFEST = 'manifest.json'


def source_files() -> list[str]:
    return [os.path.abspath(__file__), *sorted(glob.glob(os.path.join(HERE, 'suite', '*.py')))]


def source_sha256() -> str:
    h = hashlib.sha256()
    for path in source_files():
        h.update(os.path.relpath(path, HERE).encode() + b'\0')
        with open(path, 'rb') as f:
            h.update(f.read())
        h.update(b'\0')
    return h.hexdigest()


def stamp_line(stamp: str, parts: frozenset[str]) -> str:
    return ' '.join([stamp, *sorted(parts)])


def up_to_date(out: str, stamp: str, parts: frozenset[str]) -> bool:
    """Same sources, every asked-for part built, and every manifest file present with its recorded size (hashing
    140 MB each run is not worth it)."""
    try:
        with open(os.path.join(out, STAMP)) as f:
            built_stamp, *built_parts = f.read().split()
            if built_stamp != stamp or not parts <= set(built_parts):
                return False
        with open(os.path.join(out, MANIFEST)) as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return False
    return all(
        os.path.isfile(os.path.join(out, entry['path'])) and os.path.getsize(os.path.join(out, entry['path'])) == entry['bytes']
        for entry in manifest['files']
    )


class Log:
    def __init__(self) -> None:
        self.t0 = time.perf_counter()

    def __call__(self, msg: str) -> None:
        print(f'[{time.perf_counter() - self.t0:6.1f}s] {msg}', flush=True)


def swap_in(tmp: str, out: str) -> None:
    old = f'{out}.old-{os.getpid()}'
    if os.path.exists(out):
        os.rename(out, old)
    os.rename(tmp, out)
    shutil.rmtree(old, ignore_errors=True)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--out', default=os.path.join(REPO_ROOT, '.cache', 'suite'), help='output folder (default: <repo>/.cache/suite)')
    ap.add_argument('--force', action='store_true', help='rebuild even when the stamp says the suite is current')
    ap.add_argument('--base-only', action='store_true', help='leave out the optional parts (the sparsity study families)')
    args = ap.parse_args(argv)
    # No __pycache__ next to the sources: .gitignore does not cover it and the tree is shared.
    sys.dont_write_bytecode = True
    sys.path.insert(0, HERE)
    from suite.parts import OPTIONAL_PARTS

    parts = frozenset() if args.base_only else frozenset(OPTIONAL_PARTS)
    out = os.path.abspath(args.out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    log = Log()
    stamp = source_sha256()
    with open(f'{out}.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not args.force and up_to_date(out, stamp, parts):
            log(f'suite at {out} is up to date (generator sha256 {stamp[:12]}); nothing to do (--force rebuilds)')
            return 0
        log(f'building suite into {out} (generator sha256 {stamp[:12]}, parts: base{"".join(", " + p for p in sorted(parts))}'
            f'{", forced" if args.force else ""})')
        # Imported here so the up-to-date path above costs milliseconds, not numpy/sklearn/onnx import time.
        from suite.build import build

        # Holding the lock means no other generator is writing: leftovers of a killed run are stale.
        for stale in glob.glob(f'{glob.escape(out)}.tmp-*') + glob.glob(f'{glob.escape(out)}.old-*'):
            shutil.rmtree(stale, ignore_errors=True)
        tmp = f'{out}.tmp-{os.getpid()}'
        try:
            build(tmp, stamp, log, parts)
            with open(os.path.join(tmp, STAMP), 'w') as f:
                f.write(stamp_line(stamp, parts) + '\n')
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        swap_in(tmp, out)
    log(f'done: suite at {out}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
