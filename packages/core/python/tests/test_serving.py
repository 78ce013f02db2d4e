"""The serve capability's loop (serving.py) on an in-process fake server: the schedule, the cap, lateness, failures."""

import asyncio
import gc
from contextlib import asynccontextmanager

import pytest

from pbh_worker import WorkerError, serving


def _session(chunks=3, fail=None, peak=None):
    """A server that streams `chunks` text chunks per request, yielding to the loop between them."""

    @asynccontextmanager
    async def session(concurrency):
        flight = [0]

        async def send(text, ids, max_new_tokens, exchange):
            flight[0] += 1
            if peak is not None:
                peak.append(flight[0])
            try:
                exchange.first_byte()
                if fail is not None and text == fail:
                    raise ConnectionError("server closed the stream")
                for _ in range(chunks):
                    await asyncio.sleep(0)
                    exchange.chunk(" tok")
            finally:
                flight[0] -= 1

        yield send

    return session


def test_closed_loop_keeps_the_cap_and_times_every_chunk_after_its_arrival():
    peak = []
    texts = [f"p{i}" for i in range(7)]
    served = serving.serve_schedule(_session(peak=peak), texts, [[1]] * 7, 3, None, 2)
    assert max(peak) <= 2
    assert len(served.exchanges) == 7 and len(served.late_ns) == 7
    for e in served.exchanges:
        assert e.texts == [" tok"] * 3
        assert e.scheduled_ns <= e.issued_ns <= e.first_byte_ns <= e.chunk_ns[0] <= e.chunk_ns[-1]
    assert all(ns >= 0 for ns in served.late_ns)


def test_open_loop_schedules_from_the_arrivals_not_from_when_requests_were_sent():
    arrivals = [0, 0, 1_000_000, 2_000_000]
    served = serving.serve_schedule(_session(), ["a", "b", "c", "d"], [[1]] * 4, 3, arrivals, 1)
    assert [e.scheduled_ns - served.start_ns for e in served.exchanges] == arrivals
    # With one slot the second request waits for the first: queueing, in its latency, not lateness.
    assert served.exchanges[1].issued_ns >= served.exchanges[0].chunk_ns[-1]


def test_a_failed_request_fails_the_schedule_naming_it():
    with pytest.raises(WorkerError, match=r"1 of 3 requests failed; first: request 1: ConnectionError"):
        serving.serve_schedule(_session(fail="b"), ["a", "b", "c"], [[1]] * 3, 3, None, 3)


def test_an_empty_completion_is_refused():
    with pytest.raises(WorkerError, match="request 0: the server streamed no output text"):
        serving.serve_schedule(_session(chunks=0), ["a"], [[1]], 3, None, 1)


def test_waiting_for_a_slot_is_queueing_even_when_several_slots_free_at_once():
    # Two slots, six requests due at once, each held by the server a while: requests 2-5 queue for slots that free in
    # pairs. Their lateness runs from when a slot freed, never from their arrival (that wait is queueing).
    @asynccontextmanager
    async def session(concurrency):
        async def send(text, ids, max_new_tokens, exchange):
            exchange.first_byte()
            await asyncio.sleep(0.02)
            exchange.chunk(" tok")

        yield send

    served = serving.serve_schedule(session, list("abcdef"), [[1]] * 6, 1, [0] * 6, 2)
    first_end = min(e.chunk_ns[-1] for e in served.exchanges)
    for e, late in list(zip(served.exchanges, served.late_ns))[2:]:
        assert e.issued_ns - late >= first_end, "a queued request's lateness started before any slot freed"


def test_no_collection_runs_while_the_schedule_does_and_the_collector_is_back_after():
    seen = []

    @asynccontextmanager
    async def session(concurrency):
        async def send(text, ids, max_new_tokens, exchange):
            seen.append(gc.isenabled())
            exchange.first_byte()
            exchange.chunk(" tok")

        yield send

    assert gc.isenabled()
    serving.serve_schedule(session, ["a", "b"], [[1]] * 2, 1, None, 1)
    assert seen == [False, False]
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_failed_schedule_gives_the_collector_back_too():
    with pytest.raises(WorkerError):
        serving.serve_schedule(_session(fail="a"), ["a"], [[1]], 3, None, 1)
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_until_sleeps_in_short_stretches_and_returns_at_its_time(monkeypatch):
    # Long waits are cut into sleeps of at most 100 ms: the kernel may run a poll 0.1% past its timeout.
    asked = []
    real_sleep = asyncio.sleep

    async def recording_sleep(delay):
        asked.append(delay)
        await real_sleep(delay)

    monkeypatch.setattr(serving.asyncio, "sleep", recording_sleep)
    due = serving.time.perf_counter_ns() + 350_000_000
    asyncio.run(serving.until(due))
    assert serving.time.perf_counter_ns() >= due
    # Without the cap the first sleep would ask for about 0.348 s.
    long_sleeps = [d for d in asked if d > 0]
    assert long_sleeps and max(long_sleeps) <= 0.1

