"""Generate small decoder LMs of real architectures, as users have them, into .cache/llms.

    .venv/bin/python python/generate_llms.py [--out .cache/llms] [--force]

Needs the LLM packages: npx pbh doctor --fix --engine llm (python/requirements-llm.txt). Llama with grouped-query
attention, GPT-2, Qwen2 and Phi-3 (python/llms/architectures.py), tiny, built by transformers from seed 0 and trained
a few hundred steps on the byte LM's local text (python/lm/corpus.py), with a byte-level BPE tokenizer trained on the
same text. Per model NAME:
  NAME/hf/         the Hugging Face folder: config.json, model.safetensors, generation_config.json, tokenizer.json,
                   tokenizer_config.json (GPT2TokenizerFast), vocab.json, merges.txt, special_tokens_map.json
  NAME/onnx/       Optimum ONNX (--task text-generation-with-past): model.onnx, config.json, the tokenizer files
  NAME/openvino/   optimum-intel's stateful IR (openvino_model.xml/.bin, openvino_tokenizer.xml/openvino_detokenizer.xml)
  NAME/genai/      ONNX Runtime GenAI's builder at fp32 for the CPU (model.onnx, genai_config.json), where it takes NAME
  data/held_out.txt    held-out text (topics never trained on) for perplexity
  data/prompts.jsonl   {"prompt": ...} per line, cut from the held-out topics
  llms.json        what was built or skipped and why, each export's input and output names, training facts
The JSON summary is also printed. A stamp (sha256 of this script, python/llms/*.py and python/lm/corpus.py, and the
versions of the packages that build) makes a current build a no-op; --force rebuilds.
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

for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ.setdefault(_var, '1')
# transformers would import a TensorFlow it finds in the venv (seconds, and noise); nothing is fetched from the Hub.
os.environ.setdefault('USE_TF', '0')
os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)
SUMMARY = 'llms.json'
# The packages whose versions shape the outputs; an optional one that is absent is recorded as such.
PACKAGES = ('torch', 'transformers', 'tokenizers', 'optimum', 'optimum-onnx', 'onnx', 'optimum-intel', 'openvino',
            'openvino-tokenizers', 'onnxruntime-genai')


def stamp() -> str:
    from importlib.metadata import PackageNotFoundError, version

    h = hashlib.sha256()
    for path in [os.path.abspath(__file__), *sorted(glob.glob(os.path.join(HERE, 'llms', '*.py'))), os.path.join(HERE, 'lm', 'corpus.py')]:
        h.update(os.path.relpath(path, HERE).encode() + b'\0')
        with open(path, 'rb') as f:
            h.update(f.read())
        h.update(b'\0')
    for dist in PACKAGES:
        try:
            h.update(f'{dist}=={version(dist)}\0'.encode())
        except PackageNotFoundError:
            h.update(f'{dist} absent\0'.encode())
    return h.hexdigest()


def up_to_date(out: str, current: str) -> bool:
    try:
        with open(os.path.join(out, '.stamp')) as f:
            if f.read().strip() != current:
                return False
        with open(os.path.join(out, SUMMARY)) as f:
            summary = json.load(f)
    except (OSError, ValueError):
        return False
    paths = [summary['held_out'], summary['prompts']]
    paths += [part['path'] for m in summary['models'].values() for part in m.values() if isinstance(part, dict) and 'path' in part]
    return all(os.path.exists(os.path.join(out, p)) for p in paths)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--out', default=os.path.join(REPO_ROOT, '.cache', 'llms'))
    ap.add_argument('--force', action='store_true', help='rebuild even when the stamp matches')
    args = ap.parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    t0 = time.perf_counter()

    def log(msg: str) -> None:
        print(f'[{time.perf_counter() - t0:6.1f}s] {msg}', file=sys.stderr, flush=True)

    for module in ('transformers', 'tokenizers', 'optimum.exporters.onnx'):
        try:
            if __import__('importlib.util').util.find_spec(module) is None:
                raise ModuleNotFoundError(module)
        except ModuleNotFoundError:
            print(f'generate_llms: python module {module} is not installed; install the LLM packages with: '
                  'npx pbh doctor --fix --engine llm', file=sys.stderr)
            return 2
    current = stamp()
    with open(f'{out}.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not args.force and up_to_date(out, current):
            log(f'llms at {out} are up to date (stamp {current[:12]}); nothing to do (--force rebuilds)')
            with open(os.path.join(out, SUMMARY)) as f:
                print(f.read())
            return 0
        sys.dont_write_bytecode = True
        sys.path.insert(0, HERE)
        from llms.build import build

        tmp = f'{out}.tmp-{os.getpid()}'
        shutil.rmtree(tmp, ignore_errors=True)
        # The exporters print progress to stdout (some from native code): fd 1 points at stderr while they run, so
        # stdout carries only the JSON summary.
        sys.stdout.flush()
        saved_stdout = os.dup(1)
        os.dup2(2, 1)
        try:
            summary = build(tmp, log)
            summary['generator_stamp'] = current
            text = json.dumps(summary, indent=2)
            with open(os.path.join(tmp, SUMMARY), 'w') as f:
                f.write(text + '\n')
            with open(os.path.join(tmp, '.stamp'), 'w') as f:
                f.write(current + '\n')
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        finally:
            sys.stdout.flush()
            os.dup2(saved_stdout, 1)
            os.close(saved_stdout)
        old = f'{out}.old-{os.getpid()}'
        if os.path.exists(out):
            os.rename(out, old)
        os.rename(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    log(f'done: llms at {out}')
    print(text)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
