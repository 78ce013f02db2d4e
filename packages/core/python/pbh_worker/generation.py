"""Greedy generation and perplexity on a decoder (decoders.py), in the worker (`generate`, `score_text`).

The same loop as core's harness/generate/lm-loop.ts (onnxruntime-node runs that one in the harness's process):
requests are admitted when they have arrived and a slot is free (at most `concurrency` in flight); each pass runs
the prefills of newly admitted requests first, then one decode step of every other request in flight.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable

import numpy as np

from .clock import REAL, Clock
from .decoders import Decoder
from .engine import BatchRuntime
from .errors import WorkerError


def generate(decoder: Decoder, prompts: list[list[int]], max_new_tokens: int | list[int], arrivals_ns: list[int] | None,
             concurrency: int, clock: Clock = REAL) -> tuple[list[int], list[list[int]], list[list[int]]]:
    """(arrival_ns, tokens, token_ns) per request, ns after the start on `clock`; `max_new_tokens` per request or one for all."""
    _now = clock.now
    n = len(prompts)
    budget = max_new_tokens if isinstance(max_new_tokens, list) else [max_new_tokens] * n
    arrival = [0] * n
    tokens: list[list[int]] = [[] for _ in range(n)]
    token_ns: list[list[int]] = [[] for _ in range(n)]
    # [index, state, next token or None]
    active: list[list[Any]] = []
    start = _now()
    nxt = 0
    while nxt < n or active:
        while len(active) < concurrency and nxt < n and (arrivals_ns is None or arrivals_ns[nxt] <= _now() - start):
            arrival[nxt] = _now() - start if arrivals_ns is None else arrivals_ns[nxt]
            active.append([nxt, decoder.start(), None])
            nxt += 1
        if not active:
            clock.wait_until(start + arrivals_ns[nxt])
            continue
        for a in [a for a in active if a[2] is None] + [a for a in active if a[2] is not None]:
            logits, a[1] = decoder.step(a[1], prompts[a[0]] if a[2] is None else [a[2]])
            token = int(np.argmax(logits[-1]))
            token_ns[a[0]].append(_now() - start)
            tokens[a[0]].append(token)
            a[2] = token
            if len(tokens[a[0]]) >= budget[a[0]]:
                active.remove(a)
    return arrival, tokens, token_ns


# stream(ids, max_new_tokens, on_token) -> the runtime's own figures for the request.
Stream = Callable[[list[int], int, Callable[[int], None]], dict[str, float]]


def stream_requests(stream: Stream, prompts: list[list[int]], max_new_tokens: int, arrivals_ns: list[int] | None,
                    clock: Clock = REAL) -> tuple[list[int], list[list[int]], list[list[int]], list[dict[str, float]]]:
    """A runtime's own generate loop, one request at a time in arrival order: (arrival_ns, tokens, token_ns, figures)."""
    _now = clock.now
    n = len(prompts)
    arrival = [0] * n
    tokens: list[list[int]] = [[] for _ in range(n)]
    token_ns: list[list[int]] = [[] for _ in range(n)]
    figures: list[dict[str, float]] = []
    start = _now()
    for i, ids in enumerate(prompts):
        if arrivals_ns is not None:
            clock.wait_until(start + arrivals_ns[i])
            arrival[i] = arrivals_ns[i]
        else:
            arrival[i] = _now() - start

        def on_token(token: int, stamp: Callable[[int], None] = token_ns[i].append, keep: Callable[[int], None] = tokens[i].append) -> None:
            stamp(_now() - start)
            keep(int(token))

        figures.append(stream(ids, max_new_tokens, on_token))
        if len(tokens[i]) != max_new_tokens:
            raise WorkerError("runtime_error", f"request {i}: the runtime streamed {len(tokens[i])} tokens, {max_new_tokens} were asked for (its generate stopped early: set min_new_tokens)")
    return arrival, tokens, token_ns, figures


def batch_requests(runtime: BatchRuntime, prompts: list[list[int]], max_new_tokens: int, arrivals_ns: list[int] | None,
                   concurrency: int, clock: Clock = REAL) -> tuple[list[int], list[list[int]], list[list[int]], list[dict[str, float]], list[int]]:
    """A runtime that batches requests itself (capability batchStream): each request added when it has arrived and a
    slot is free (at most `concurrency` in flight), the runtime stepped, each token timed when the step that made it
    returns. Returns (arrival_ns, tokens, token_ns, figures, late_ns) per request, ns after the start on `clock`.

    The arrival is the scheduled one, so a wait for a slot or for the step in progress counts in the latencies. The
    runtime takes new requests only between steps, as its own scheduler does; what the loop itself adds is lateness:
    from when the request could go (its arrival, the slot it waited for, or the end of the step it arrived during)
    to when it was added."""
    _now = clock.now
    n = len(prompts)
    arrival = [0] * n
    tokens: list[list[int]] = [[] for _ in range(n)]
    token_ns: list[list[int]] = [[] for _ in range(n)]
    figures: list[dict[str, float]] = [{} for _ in range(n)]
    late = [0] * n
    # When each free slot became free, oldest first (0: free since the start).
    slots = deque([0] * concurrency)
    request: dict[int, int] = {}
    step_start = step_end = 0
    start = _now()
    nxt = 0
    while nxt < n or request:
        while slots and nxt < n and (arrivals_ns is None or arrivals_ns[nxt] <= _now() - start):
            free = slots.popleft()
            added = _now() - start
            due = added if arrivals_ns is None else max(arrivals_ns[nxt], free)
            could = step_end if step_start <= due < step_end else due
            request[runtime.add(prompts[nxt], max_new_tokens)] = nxt
            arrival[nxt] = added if arrivals_ns is None else arrivals_ns[nxt]
            late[nxt] = max(0, added - could)
            figures[nxt] = {"queue_ms": (added - arrival[nxt]) / 1e6, "issue_late_ms": late[nxt] / 1e6}
            nxt += 1
        if not request:
            assert arrivals_ns is not None
            clock.wait_until(start + arrivals_ns[nxt])
            continue
        step_start = _now() - start
        moved = runtime.step()
        step_end = _now() - start
        for key, (produced, finished) in moved.items():
            i = request[key]
            tokens[i] += produced
            token_ns[i].extend([step_end] * len(produced))
            if len(tokens[i]) > max_new_tokens or (finished and len(tokens[i]) != max_new_tokens):
                raise WorkerError("runtime_error", f"request {i}: the runtime produced {len(tokens[i])} tokens, {max_new_tokens} were asked for (its generate stopped early or ran on: set min_new_tokens)")
            if finished:
                figures[i].update(runtime.figures(key))
                del request[key]
                slots.append(step_end)
    return arrival, tokens, token_ns, figures, late


def score_text(decoder: Decoder, tokens: list[int], window: int) -> tuple[float, int]:
    """Sum of -ln p(next token) over non-overlapping windows of `window` tokens, each from an empty cache."""
    nll, predicted = 0.0, 0
    for s in range(0, len(tokens) - 1, window):
        chunk = tokens[s:s + window]
        if len(chunk) < 2:
            break
        logits = decoder.step(decoder.start(), chunk)[0].reshape(len(chunk), -1).astype(np.float64)
        top = logits.max(axis=1, keepdims=True)
        logz = np.log(np.exp(logits - top).sum(axis=1)) + top[:, 0]
        targets = np.asarray(chunk[1:])
        nll += float(np.sum(logz[:-1] - logits[np.arange(len(chunk) - 1), targets]))
        predicted += len(chunk) - 1
    return nll, predicted


def rank_continuation(decoder: Decoder, prompt: list[int], continuation: list[int]) -> list[int]:
    """Each continuation token's rank (0: the argmax) among the model's logits, the model fed the continuation itself
    (teacher forcing): how far a lower-precision engine's choices stray from a reference continuation."""
    logits = decoder.step(decoder.start(), prompt + continuation[:-1])[0]
    rows = logits.reshape(len(prompt) + len(continuation) - 1, -1)[len(prompt) - 1:]
    return [int((row > row[token]).sum()) for row, token in zip(rows, continuation)]
