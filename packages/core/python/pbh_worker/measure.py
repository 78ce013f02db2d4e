"""The one measurement loop of every worker engine: closed-loop sessions and open schedules, on an injected clock.

Every ranked figure of a worker engine is a time taken here, around a call the engine bound before any timing
(engine.py). Nothing else in the worker or in an engine times a session.
"""

from __future__ import annotations

from array import array
from typing import Sequence

import numpy as np

from .clock import Clock
from .engine import Call, Done, Start


def closed_loop(calls: Sequence[Call], batches: int, min_queries: int, min_duration_ns: int, clock: Clock) -> tuple[np.ndarray, int]:
    """Single/multi stream: calls 0..batches-1 back to back, cycling, until at least `min_queries` ran,
    `min_duration_ns` passed and every batch ran once. Returns each query's ns (int64) and the session's wall ns.

    Each query is timed around its pre-bound call alone; between two queries there is only this loop's bookkeeping.
    """
    now = clock.now
    # An int64 array, not a list: a 600 s session of 10 us queries is 60 M entries (480 MB here, 2+ GB as ints).
    engine_ns = array("q")
    record = engine_ns.append
    queries = index = 0
    first = end = now()
    while queries < min_queries or queries < batches or end - first < min_duration_ns:
        call = calls[index]
        start = now()
        call()
        end = now()
        record(end - start)
        queries += 1
        index = index + 1 if index + 1 < batches else 0
    return np.frombuffer(engine_ns, dtype="<i8"), end - first


def synchronous(call: Call) -> Start:
    """A call that completes before it returns, as a start: what a runtime without the concurrency capability offers."""

    def start(done: Done) -> None:
        call()
        done()

    return start


def schedule(starts: Sequence[Start], batches: Sequence[int], arrivals_ns: Sequence[int], concurrency: int, threaded: bool, clock: Clock) -> tuple[list[int], list[int]]:
    """Server/offline: query q runs resident batch batches[q] once it is due (arrivals_ns[q] after the start) and
    fewer than `concurrency` queries are in flight, in order (FIFO). Returns (issued_ns, completed_ns) per query, after
    the start. A query due while every slot is busy is issued when one frees, and its issue delay shows it.

    `threaded`: the starts return before their query completes and call done() from the runtime's own thread; a
    query that failed calls done(error), and the schedule raises the first such error once every query has ended.
    """
    now = clock.now
    slots = clock.slots(concurrency, threaded)
    issued = [0] * len(batches)
    completed = [0] * len(batches)
    failures: list[BaseException] = []
    start = now()

    def finisher(query: int) -> Done:
        def done(error: BaseException | None = None) -> None:
            completed[query] = now() - start
            if error is not None:
                failures.append(error)
            slots.release()

        return done

    for query, (batch, arrival) in enumerate(zip(batches, arrivals_ns)):
        due = start + arrival
        if now() < due:
            clock.wait_until(due)
        # FIFO: the query waits for a free slot after it is due; its issue time is after both waits.
        slots.acquire()
        issued[query] = now() - start
        try:
            starts[batch](finisher(query))
        except BaseException:
            # A start that raised never calls done: its slot is freed here, and no query outlives the schedule.
            slots.release()
            slots.drain()
            raise
        if failures:
            break
    slots.drain()
    if failures:
        raise failures[0]
    return issued, completed
