"""Greedy generation and perplexity on a runtime's own `infer`, in the worker (protocol 5: `generate`, `score_text`).

The same loop as core's harness/generate/lm-loop.ts (onnxruntime runs that one in the harness's process): requests
are admitted when they have arrived and a slot is free (at most `concurrency` in flight); each pass runs the prefills
of newly admitted requests first, then one decode step of every other request in flight. The graph is PBH's LM
contract (contracts/generation.ts): input_ids, past_length, past_key, past_value -> logits, present_key, present_value.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .clock import REAL, Clock
from .errors import WorkerError

Infer = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]


def _feeds(ids: list[int], past: int, key: np.ndarray, value: np.ndarray) -> dict[str, np.ndarray]:
    return {
        'input_ids': np.asarray(ids, dtype=np.int64).reshape(1, -1),
        'past_length': np.asarray([past], dtype=np.int64),
        'past_key': key,
        'past_value': value,
    }


def _outputs(out: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    missing = [n for n in ('logits', 'present_key', 'present_value') if n not in out]
    if missing:
        raise WorkerError('runtime_error', f'the LM graph returned no {", ".join(missing)} (it returned {", ".join(out)}); the generate workload needs the outputs of contracts/generation.ts')
    return out['logits'], out['present_key'], out['present_value']


def generate(infer: Infer, prompts: list[list[int]], max_new_tokens: int, arrivals_ns: list[int] | None, concurrency: int,
             cache_shape: list[int], clock: Clock = REAL) -> tuple[list[int], list[list[int]], list[list[int]]]:
    """(arrival_ns, tokens, token_ns) per request, ns after the start on `clock`."""
    _now = clock.now
    n = len(prompts)
    arrival = [0] * n
    tokens: list[list[int]] = [[] for _ in range(n)]
    token_ns: list[list[int]] = [[] for _ in range(n)]
    # [index, past, key, value, next token or None]
    active: list[list[Any]] = []
    start = _now()
    nxt = 0
    while nxt < n or active:
        while len(active) < concurrency and nxt < n and (arrivals_ns is None or arrivals_ns[nxt] <= _now() - start):
            arrival[nxt] = _now() - start if arrivals_ns is None else arrivals_ns[nxt]
            zeros = np.zeros(cache_shape, dtype=np.float32)
            active.append([nxt, 0, zeros, zeros.copy(), None])
            nxt += 1
        if not active:
            clock.wait_until(start + arrivals_ns[nxt])
            continue
        for a in [a for a in active if a[4] is None] + [a for a in active if a[4] is not None]:
            ids = prompts[a[0]] if a[4] is None else [a[4]]
            logits, key, value = _outputs(infer(_feeds(ids, a[1], a[2], a[3])))
            token = int(np.argmax(logits.reshape(-1, logits.shape[-1])[-1]))
            token_ns[a[0]].append(_now() - start)
            tokens[a[0]].append(token)
            # Copies: a runtime may hand out views of buffers its next call overwrites.
            a[1], a[2], a[3], a[4] = a[1] + len(ids), np.array(key, dtype=np.float32), np.array(value, dtype=np.float32), token
            if len(tokens[a[0]]) >= max_new_tokens:
                active.remove(a)
    return arrival, tokens, token_ns


def score_text(infer: Infer, tokens: list[int], window: int, cache_shape: list[int]) -> tuple[float, int]:
    """Sum of -ln p(next token) over non-overlapping windows of `window` tokens, each from an empty cache."""
    nll, predicted = 0.0, 0
    for s in range(0, len(tokens) - 1, window):
        chunk = tokens[s:s + window]
        if len(chunk) < 2:
            break
        zeros = np.zeros(cache_shape, dtype=np.float32)
        logits = _outputs(infer(_feeds(chunk, 0, zeros, zeros.copy())))[0].reshape(len(chunk), -1).astype(np.float64)
        top = logits.max(axis=1, keepdims=True)
        logz = np.log(np.exp(logits - top).sum(axis=1)) + top[:, 0]
        targets = np.asarray(chunk[1:])
        nll += float(np.sum(logz[:-1] - logits[np.arange(len(chunk) - 1), targets]))
        predicted += len(chunk) - 1
    return nll, predicted
