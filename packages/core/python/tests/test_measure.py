"""The measurement loop (pbh_worker/measure.py) on a simulated clock: every time it records is exact."""

import threading

import numpy as np
import pytest

from fake import FakeClock, FakeEngine
from pbh_worker import measure
from pbh_worker.clock import RealClock

US = 1_000


def _calls(engine, batches):
    return [engine.bind({"x": np.full((1, 2), b, dtype=np.float32)}) for b in range(batches)]


def test_closed_loop_times_each_call_alone_and_cycles_the_batches():
    clock = FakeClock()
    engine = FakeEngine(clock, [10 * US, 20 * US, 30 * US])
    engine_ns, wall_ns = measure.closed_loop(_calls(engine, 3), 3, min_queries=7, min_duration_ns=0, clock=clock)
    assert engine_ns.tolist() == [10 * US, 20 * US, 30 * US, 10 * US, 20 * US, 30 * US, 10 * US]
    assert engine.calls == [0, 1, 2, 0, 1, 2, 0]
    assert wall_ns == sum(engine_ns.tolist())
    assert engine_ns.dtype == np.dtype("<i8")


def test_closed_loop_runs_every_batch_and_its_minimum_duration():
    clock = FakeClock()
    engine = FakeEngine(clock, [10 * US] * 4)
    engine_ns, _ = measure.closed_loop(_calls(engine, 4), 4, min_queries=1, min_duration_ns=0, clock=clock)
    assert len(engine_ns) == 4, "every resident batch runs once even when fewer queries are asked for"
    engine_ns, wall_ns = measure.closed_loop(_calls(engine, 4), 2, min_queries=1, min_duration_ns=95 * US, clock=clock)
    assert len(engine_ns) == 10 and wall_ns == 100 * US, "the session stops at the first query ending past its duration"


def test_a_synchronous_schedule_issues_when_due_and_queues_fifo():
    clock = FakeClock()
    engine = FakeEngine(clock, [30 * US])
    starts = [measure.synchronous(call) for call in _calls(engine, 1)]
    # Arrivals 0, 100, 110, 120 us: the last two come while the one before still runs.
    issued, completed = measure.schedule(starts, [0, 0, 0, 0], [0, 100 * US, 110 * US, 120 * US], 1, False, clock)
    assert issued == [0, 100 * US, 130 * US, 160 * US]
    assert completed == [30 * US, 130 * US, 160 * US, 190 * US]
    assert clock.waits == [1_000_000 + 100 * US], "the loop waits only for a query not yet due"


def test_concurrent_starts_keep_at_most_the_concurrency_in_flight():
    clock = FakeClock()
    engine = FakeEngine(clock, [40 * US], concurrency=2)
    starts = [engine.bind_async({"x": np.zeros((1, 2), dtype=np.float32)})]
    # Offline: every query due at once.
    issued, completed = measure.schedule(starts, [0] * 5, [0] * 5, 2, True, clock)
    assert engine.peak == 2
    assert issued == [0, 0, 40 * US, 40 * US, 80 * US]
    assert completed == [40 * US, 40 * US, 80 * US, 80 * US, 120 * US]


def test_a_schedule_of_one_slot_matches_the_m_d_1_queue():
    """Seeded Poisson arrivals through one deterministic server: each query starts at max(arrival, previous end)."""
    clock = FakeClock()
    service = 50 * US
    engine = FakeEngine(clock, [service], concurrency=1)
    arrivals = np.cumsum(np.random.default_rng(7).exponential(60 * US, 400)).astype(np.int64).tolist()
    issued, completed = measure.schedule([engine.bind_async({"x": np.zeros((1, 2), dtype=np.float32)})], [0] * 400, arrivals, 1, True, clock)
    end = 0
    for q, arrival in enumerate(arrivals):
        begin = max(arrival, end)
        end = begin + service
        assert (issued[q], completed[q]) == (begin, end)


def test_the_real_synchronous_slots_refuse_a_call_that_did_not_complete():
    slots = RealClock.slots(1, False)
    slots.acquire()
    with pytest.raises(RuntimeError, match="must complete"):
        slots.acquire()


def test_the_real_threaded_slots_wait_for_a_release_from_another_thread():
    slots = RealClock.slots(1, True)
    slots.acquire()
    threading.Timer(0.01, slots.release).start()
    slots.acquire()
    threading.Timer(0.01, slots.release).start()
    slots.drain()


def test_a_failed_query_stops_the_schedule_once_the_others_end():
    clock = FakeClock()
    engine = FakeEngine(clock, [40 * US], concurrency=2)

    def start(done):
        if len(engine.calls) == 2:
            engine.calls.append(-1)
            clock.after(10 * US, lambda: done(RuntimeError("query 2 failed")))
            return
        engine.bind_async({"x": np.zeros((1, 2), dtype=np.float32)})(done)

    with pytest.raises(RuntimeError, match="query 2 failed"):
        measure.schedule([start], [0] * 6, [0, 0, 0, 100 * US, 200 * US, 300 * US], 2, True, clock)
    assert engine.in_flight == 0, "every query in flight ended before the error was raised"
    assert len(engine.calls) < 6, "no query is issued after a failure"
