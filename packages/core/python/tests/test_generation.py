"""Greedy generation on the injected clock: admission by arrival and concurrency, one time per token."""

import numpy as np

from fake import FakeClock
from pbh_worker import generation

US = 1_000
CACHE = [1, 1, 8, 2]


def _lm(clock, step_ns):
    """Predicts the last token + 1; each call takes step_ns."""

    def infer(feeds):
        clock.advance(step_ns)
        ids = feeds["input_ids"]
        logits = np.zeros((1, ids.shape[1], 16), dtype=np.float32)
        logits[0, -1, (int(ids[0, -1]) + 1) % 16] = 1.0
        return {"logits": logits, "present_key": feeds["past_key"], "present_value": feeds["past_value"]}

    return infer


def test_tokens_come_greedily_one_call_each():
    clock = FakeClock()
    arrival, tokens, token_ns = generation.generate(_lm(clock, 10 * US), [[1, 2], [7]], 3, None, 1, CACHE, clock)
    assert tokens == [[3, 4, 5], [8, 9, 10]]
    assert token_ns == [[10 * US, 20 * US, 30 * US], [40 * US, 50 * US, 60 * US]]
    assert arrival == [0, 30 * US]


def test_requests_wait_for_their_arrival_and_share_the_slots():
    clock = FakeClock()
    arrival, _, token_ns = generation.generate(_lm(clock, 10 * US), [[1], [2]], 2, [0, 100 * US], 2, CACHE, clock)
    assert arrival == [0, 100 * US]
    assert token_ns[0] == [10 * US, 20 * US]
    assert token_ns[1] == [110 * US, 120 * US], "the second request starts when it arrives, not before"
