"""Greedy generation on the injected clock: admission by arrival and concurrency, one time per token."""

import numpy as np

from fake import FakeClock
import pytest

from pbh_worker import TensorSpec, WorkerError, generation
from pbh_worker.decoders import KvCacheGraph, PbhCacheGraph, graph_decoder

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
    arrival, tokens, token_ns = generation.generate(PbhCacheGraph(_lm(clock, 10 * US), CACHE), [[1, 2], [7]], 3, None, 1, clock)
    assert tokens == [[3, 4, 5], [8, 9, 10]]
    assert token_ns == [[10 * US, 20 * US, 30 * US], [40 * US, 50 * US, 60 * US]]
    assert arrival == [0, 30 * US]


def test_requests_wait_for_their_arrival_and_share_the_slots():
    clock = FakeClock()
    arrival, _, token_ns = generation.generate(PbhCacheGraph(_lm(clock, 10 * US), CACHE), [[1], [2]], 2, [0, 100 * US], 2, clock)
    assert arrival == [0, 100 * US]
    assert token_ns[0] == [10 * US, 20 * US]
    assert token_ns[1] == [110 * US, 120 * US], "the second request starts when it arrives, not before"


def _hf_inputs(layers=2, heads=2, dim=4, positions=True):
    specs = [TensorSpec("input_ids", "int64", [None, None]), TensorSpec("attention_mask", "int64", [None, None])]
    if positions:
        specs.append(TensorSpec("position_ids", "int64", [None, None]))
    specs += [TensorSpec(f"past_key_values.{i}.{kv}", "float32", [None, heads, None, dim]) for i in range(layers) for kv in ("key", "value")]
    return specs


def _hf_lm(seen):
    """The Optimum layout: the cache grows by the fed tokens; predicts the last token + 1 (mod 16)."""

    def infer(feeds):
        seen.append({k: v.copy() for k, v in feeds.items()})
        ids = feeds["input_ids"]
        out = {}
        for name, past in feeds.items():
            if name.startswith("past_key_values."):
                grown = np.concatenate([past, np.full((1, past.shape[1], ids.shape[1], past.shape[3]), 1.0, np.float32)], axis=2)
                out[name.replace("past_key_values", "present")] = grown
        logits = np.zeros((1, ids.shape[1], 16), dtype=np.float32)
        logits[0, np.arange(ids.shape[1]), (ids[0] + 1) % 16] = 1.0
        out["logits"] = logits
        return out

    return infer


def test_the_hugging_face_layout_grows_its_cache_and_counts_positions():
    seen = []
    decoder = KvCacheGraph(_hf_lm(seen), _hf_inputs(), "test")
    _, tokens, _ = generation.generate(decoder, [[3, 4, 5]], 3, None, 1, FakeClock())
    assert tokens == [[6, 7, 8]]
    assert [f["past_key_values.0.key"].shape[2] for f in seen] == [0, 3, 4], "the cache holds every token fed before"
    assert [f["attention_mask"].shape[1] for f in seen] == [3, 4, 5], "the mask covers past and new tokens"
    assert seen[0]["position_ids"].tolist() == [[0, 1, 2]] and seen[2]["position_ids"].tolist() == [[4]]


def test_a_decoder_without_position_ids_is_fed_none():
    seen = []
    decoder = KvCacheGraph(_hf_lm(seen), _hf_inputs(positions=False), "test")
    generation.generate(decoder, [[1]], 2, None, 1, FakeClock())
    assert all("position_ids" not in f for f in seen)


def test_interleaved_requests_keep_their_own_caches():
    seen = []
    decoder = KvCacheGraph(_hf_lm(seen), _hf_inputs(), "test")
    _, tokens, _ = generation.generate(decoder, [[1, 2], [9]], 3, [0, 0], 2, FakeClock())
    assert tokens == [[3, 4, 5], [10, 11, 12]]
    # Prefills first (2 and 1 tokens, empty caches), then decodes of both on caches of their own lengths.
    assert [f["past_key_values.1.value"].shape[2] for f in seen] == [0, 0, 2, 1, 3, 2]


def test_perplexity_scores_every_position_of_each_window():
    decoder = KvCacheGraph(_hf_lm([]), _hf_inputs(), "test")
    # Windows [1, 2, 3] and [4, 5], each from an empty cache: 2 + 1 predictions. The model puts logit 1 on token+1
    # and 0 elsewhere, so each prediction of a +1 sequence costs ln(15 + e) - 1.
    nll, predicted = generation.score_text(decoder, [1, 2, 3, 4, 5], 3)
    assert predicted == 3
    assert nll == pytest.approx(3 * (np.log(15 + np.e) - 1))


def test_a_graph_without_a_cache_is_refused_naming_the_layouts():
    with pytest.raises(WorkerError, match="past_key_values.N.key/value"):
        graph_decoder(lambda f: f, [TensorSpec("input_ids", "int64", [1, 8])], None, "model.onnx")


def test_a_cache_with_open_heads_is_refused():
    specs = [TensorSpec("input_ids", "int64", [None, None]), TensorSpec("past_key_values.0.key", "float32", [None, None, None, 4]), TensorSpec("past_key_values.0.value", "float32", [None, None, None, 4])]
    with pytest.raises(WorkerError, match="kv_heads and head_dim fixed"):
        graph_decoder(lambda f: f, specs, None, "model.onnx")


def test_a_streaming_runtime_serves_one_request_at_a_time_timed_per_token():
    clock = FakeClock()

    def stream(ids, max_new, on_token):
        for k in range(max_new):
            clock.advance(10 * US)
            on_token(ids[-1] + k + 1)
        return {"ttft_ms": 0.01}

    arrival, tokens, token_ns, figures = generation.stream_requests(stream, [[1], [5, 6]], 2, [0, 5 * US], clock)
    assert tokens == [[2, 3], [7, 8]]
    assert arrival == [0, 5 * US]
    # The second request arrived at 5 µs but waits for the first to finish at 20 µs.
    assert token_ns == [[10 * US, 20 * US], [30 * US, 40 * US]]
    assert figures == [{"ttft_ms": 0.01}, {"ttft_ms": 0.01}]


def test_a_runtime_that_stops_early_is_named():
    with pytest.raises(WorkerError, match="streamed 1 tokens, 3 were asked"):
        generation.stream_requests(lambda ids, n, on: (on(1), {})[1], [[1]], 3, None, FakeClock())


class _Batching:
    """A continuous-batching runtime on the fake clock: each step takes step_ns and gives every request in flight one
    token (the last id + 1); adding a request takes add_ns."""

    def __init__(self, clock, step_ns, add_ns=0, stop_after=None):
        self.clock, self.step_ns, self.add_ns, self.stop_after = clock, step_ns, add_ns, stop_after
        self.flight = {}
        self.added = 0

    def add(self, ids, max_new):
        self.clock.advance(self.add_ns)
        self.added += 1
        key = self.added
        self.flight[key] = [ids[-1], max_new if self.stop_after is None else self.stop_after]
        return key

    def step(self):
        self.clock.advance(self.step_ns)
        moved = {}
        for key, state in list(self.flight.items()):
            state[0] += 1
            state[1] -= 1
            moved[key] = ([state[0]], state[1] == 0)
            if state[1] == 0:
                del self.flight[key]
        return moved

    def figures(self, key):
        return {"ttft_ms": 0.01}


def test_a_batching_runtime_takes_requests_between_steps_and_times_each_token_at_its_step():
    clock = FakeClock()
    arrival, tokens, token_ns, figures, late = generation.batch_requests(_Batching(clock, 10 * US), [[1], [5], [9]], 2, [0, 5 * US, 25 * US], 2, clock)
    assert tokens == [[2, 3], [6, 7], [10, 11]]
    # The scheduled arrivals: a wait for the step in progress counts in each request's latency.
    assert arrival == [0, 5 * US, 25 * US]
    # Request 1 arrived during the first step and joined the second, which also decoded request 0: both in one step.
    assert token_ns == [[10 * US, 20 * US], [20 * US, 30 * US], [40 * US, 50 * US]]
    assert [f["queue_ms"] for f in figures] == [0, 0.005, 0.005]
    assert all(f["ttft_ms"] == 0.01 and f["issue_late_ms"] == 0 for f in figures)
    assert late == [0, 0, 0]


def test_a_batching_runtime_request_added_late_by_the_loop_is_late():
    clock = FakeClock()
    arrival, _, token_ns, figures, late = generation.batch_requests(_Batching(clock, 10 * US, add_ns=2 * US), [[1], [5]], 1, [0, 0], 2, clock)
    # Both could go at 0; adding the first took 2 us, so the second went in 2 us late (the loop's own doing).
    assert late == [0, 2 * US]
    assert token_ns == [[14 * US], [14 * US]]
    assert [f["queue_ms"] for f in figures] == [0, 0.002]


def test_a_batching_runtime_that_stops_early_is_named():
    clock = FakeClock()
    with pytest.raises(WorkerError, match="produced 1 tokens, 3 were asked"):
        generation.batch_requests(_Batching(clock, US, stop_after=1), [[1]], 3, None, 1, clock)


def test_ranks_each_continuation_token_under_teacher_forcing():
    decoder = KvCacheGraph(_hf_lm([]), _hf_inputs(), "test")
    # The model predicts token + 1 with the top logit and ties everything else at 0 below it.
    assert generation.rank_continuation(decoder, [3, 4], [5, 6, 9]) == [0, 0, 1]
