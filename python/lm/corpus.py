"""The text the LM trains and is judged on: Python's own help topics (pydoc_data.topics, PSF licence, ships with
every CPython), so nothing is downloaded. Every tenth topic (sorted by name) is held out, never trained on."""

from __future__ import annotations

import numpy as np

HOLD_OUT_EVERY = 10


def _topics() -> list[tuple[str, str]]:
    from pydoc_data.topics import topics

    return sorted(topics.items())


def _bytes(texts: list[str]) -> np.ndarray:
    # Non-ASCII is rare in the topics; UTF-8 keeps it as bytes, which a byte-level model reads like any other.
    return np.frombuffer('\n\n'.join(texts).encode('utf-8'), dtype=np.uint8)


def splits() -> tuple[np.ndarray, np.ndarray]:
    """(train bytes, held-out bytes)."""
    items = _topics()
    train = [t for i, (_, t) in enumerate(items) if i % HOLD_OUT_EVERY != HOLD_OUT_EVERY - 1]
    held = [t for i, (_, t) in enumerate(items) if i % HOLD_OUT_EVERY == HOLD_OUT_EVERY - 1]
    return _bytes(train), _bytes(held)


def prompts(held_out: np.ndarray, count: int, min_len: int, max_len: int, seed: int) -> list[bytes]:
    """Prompts cut from the held-out text at line starts, lengths uniform in [min_len, max_len] bytes (seeded)."""
    rng = np.random.default_rng(seed)
    starts = np.flatnonzero(held_out[:-max_len - 1] == ord('\n')) + 1
    out: list[bytes] = []
    for _ in range(count):
        start = int(rng.choice(starts))
        length = int(rng.integers(min_len, max_len + 1))
        out.append(held_out[start:start + length].tobytes())
    return out
