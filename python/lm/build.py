"""Trains the byte LM, exports it, checks the export and writes the held-out split and the prompts."""

from __future__ import annotations

import json
import os

import numpy as np
import onnx

from . import corpus
from .model import Shape, forward, train
from .onnx_graph import to_onnx

SEED = 0
STEPS = 500
BATCH = 16
LR = 4e-3
# Prompts: PROMPTS of them, lengths uniform in [PROMPT_MIN, PROMPT_MAX] bytes; with max_new_tokens up to
# context - PROMPT_MAX (64 here) a request fits the cache.
PROMPTS, PROMPT_MIN, PROMPT_MAX = 64, 16, 64
# Held-out bytes written for perplexity (the first of the held-out topics): 32 windows of the context.
HELD_OUT_BYTES = 32 * 128


def _nll(params, shape: Shape, text: np.ndarray) -> float:
    """Mean next-byte negative log-likelihood (nats) over non-overlapping windows of the context, as PBH scores it."""
    import jax
    import jax.numpy as jnp

    T = shape.context
    windows = np.stack([text[i:i + T] for i in range(0, len(text) - T + 1, T)]).astype(np.int32)
    logp = jax.nn.log_softmax(forward({k: jnp.asarray(v) for k, v in params.items()}, windows[:, :-1], shape))
    return float(-np.mean(np.take_along_axis(np.asarray(logp), windows[:, 1:, None], axis=-1)))


def _check_export(path: str, params, shape: Shape, text: np.ndarray) -> float:
    """Full-window logits against jax, and prefill + one-token decode steps against the full window; returns the max error."""
    from onnx.reference import ReferenceEvaluator

    sess = ReferenceEvaluator(path)
    cache = np.zeros((shape.layers, shape.heads, shape.context, shape.head_dim), np.float32)
    window = text[:shape.context].astype(np.int64)[None]
    full = sess.run(['logits'], {'input_ids': window, 'past_length': np.array([0], np.int64), 'past_key': cache, 'past_value': cache})[0]
    ref = np.asarray(forward(params, window.astype(np.int32), shape))
    err = float(np.max(np.abs(full - ref)))
    split = 40
    logits, k, v = sess.run(None, {'input_ids': window[:, :split], 'past_length': np.array([0], np.int64), 'past_key': cache, 'past_value': cache})
    err = max(err, float(np.max(np.abs(logits[0] - full[0, :split]))))
    for t in range(split, split + 8):
        logits, k, v = sess.run(None, {'input_ids': window[:, t:t + 1], 'past_length': np.array([t], np.int64), 'past_key': k, 'past_value': v})
        err = max(err, float(np.max(np.abs(logits[0, 0] - full[0, t]))))
    if err > 1e-3:
        raise RuntimeError(f'the exported LM disagrees with its jax forward (or cached decoding with the full window) by {err:g}')
    return err


def build(out: str, stamp: str, log) -> None:
    os.makedirs(os.path.join(out, 'models'), exist_ok=True)
    os.makedirs(os.path.join(out, 'data'), exist_ok=True)
    shape = Shape()
    train_bytes, held = corpus.splits()
    log(f'lm corpus: pydoc_data.topics, {len(train_bytes)} training bytes, {len(held)} held-out bytes')
    params, loss = train(shape, train_bytes, SEED, STEPS, BATCH, LR, log)
    held_text = held[:HELD_OUT_BYTES]
    nll = _nll(params, shape, held_text)
    log(f'lm trained: train loss {loss:.3f}, held-out {nll:.3f} nats/byte (uniform {np.log(256):.3f})')
    model_path = os.path.join(out, 'models', 'byte_lm.onnx')
    meta = {
        'pbh.family': 'byte_lm', 'pbh.lm.context': str(shape.context), 'pbh.lm.vocab': str(shape.vocab),
        'pbh.lm.layers': str(shape.layers), 'pbh.lm.heads': str(shape.heads), 'pbh.lm.head_dim': str(shape.head_dim),
        'pbh.lm.held_out_nll': f'{nll:.6f}', 'pbh.generator_sha256': stamp,
    }
    onnx.save(to_onnx(params, shape, meta), model_path)
    err = _check_export(model_path, params, shape, held_text)
    log(f'lm export checked: max |onnx reference - jax| and |cached - full window| {err:.2e}')
    with open(os.path.join(out, 'data', 'held_out.txt'), 'wb') as f:
        f.write(held_text.tobytes())
    with open(os.path.join(out, 'data', 'prompts.jsonl'), 'w') as f:
        for p in corpus.prompts(held, PROMPTS, PROMPT_MIN, PROMPT_MAX, SEED):
            f.write(json.dumps({'prompt': p.decode('utf-8', errors='replace')}) + '\n')
    with open(os.path.join(out, 'lm.json'), 'w') as f:
        json.dump({
            'model': 'models/byte_lm.onnx', 'held_out': 'data/held_out.txt', 'prompts': 'data/prompts.jsonl',
            'prompt_lengths': {'distribution': 'uniform', 'min': PROMPT_MIN, 'max': PROMPT_MAX, 'count': PROMPTS, 'unit': 'bytes'},
            'train': {'steps': STEPS, 'batch': BATCH, 'lr': LR, 'seed': SEED, 'loss': loss},
            'held_out_nll': nll, 'uniform_nll': float(np.log(256)), 'export_max_error': err,
        }, f, indent=2)
