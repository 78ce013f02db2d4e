"""Generate PBH's bundled tiny language model and its data into .cache/lm.

    .venv/bin/python python/generate_lm.py [--out .cache/lm] [--force]

A byte-level decoder-only transformer (python/lm/) trained with jax from seed 0 on Python's own help topics
(pydoc_data.topics), exported as one ONNX graph with a fixed-capacity key-value cache:
  models/byte_lm.onnx   input_ids int64 [1, sequence], past_length int64 [1], past_key/past_value [2, 4, 128, 16]
                        -> logits [1, sequence, 256], present_key, present_value
  data/held_out.txt     held-out bytes (topics never trained on) for perplexity
  data/prompts.jsonl    {"prompt": ...} per line, cut from the held-out topics, lengths uniform in [16, 64] bytes
  lm.json               training facts, held-out NLL, the prompt length distribution
Its own stamp (sha256 of this script and python/lm/*.py) makes a current build a no-op, apart from the suite's.
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import hashlib
import os
import shutil
import sys
import time

for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ.setdefault(_var, '1')
# One XLA thread: results independent of the thread count, polite on a shared machine (set before jax loads).
os.environ.setdefault('XLA_FLAGS', '--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1')

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)
OUTPUTS = ('models/byte_lm.onnx', 'data/held_out.txt', 'data/prompts.jsonl', 'lm.json')


def source_sha256() -> str:
    h = hashlib.sha256()
    for path in [os.path.abspath(__file__), *sorted(glob.glob(os.path.join(HERE, 'lm', '*.py')))]:
        h.update(os.path.relpath(path, HERE).encode() + b'\0')
        with open(path, 'rb') as f:
            h.update(f.read())
        h.update(b'\0')
    return h.hexdigest()


def up_to_date(out: str, stamp: str) -> bool:
    try:
        with open(os.path.join(out, '.stamp')) as f:
            current = f.read().strip() == stamp
    except OSError:
        return False
    return current and all(os.path.isfile(os.path.join(out, p)) for p in OUTPUTS)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--out', default=os.path.join(REPO_ROOT, '.cache', 'lm'))
    ap.add_argument('--force', action='store_true', help='rebuild even when the stamp matches')
    args = ap.parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    t0 = time.perf_counter()

    def log(msg: str) -> None:
        print(f'[{time.perf_counter() - t0:6.1f}s] {msg}', flush=True)

    stamp = source_sha256()
    with open(f'{out}.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not args.force and up_to_date(out, stamp):
            log(f'lm at {out} is up to date (generator sha256 {stamp[:12]}); nothing to do (--force rebuilds)')
            return 0
        sys.dont_write_bytecode = True
        sys.path.insert(0, HERE)
        from lm.build import build

        tmp = f'{out}.tmp-{os.getpid()}'
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            build(tmp, stamp, log)
            with open(os.path.join(tmp, '.stamp'), 'w') as f:
                f.write(stamp + '\n')
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        old = f'{out}.old-{os.getpid()}'
        if os.path.exists(out):
            os.rename(out, old)
        os.rename(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    log(f'done: lm at {out}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
