"""Requests to a server issued on their schedule: the `serve` capability's loop, one asyncio event loop in the worker.

Every request is issued at its scheduled arrival (or, closed loop, when a slot frees) with at most `concurrency` in
flight; waiting for a slot is queueing and counts in its latency, which runs from the scheduled arrival, never from
when it was sent (no coordinated omission). Issue lateness is what the client itself adds: the time from when the
request could go (arrival, or a slot freed) to when it went. A request later than `late_ns` makes the run INVALID:
the client could not keep its schedule, so what it measured is not the server's.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections import deque
from contextlib import AbstractAsyncContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Iterator

from .errors import WorkerError

# asyncio's timers wake up to a millisecond late (epoll's resolution): the last stretch before an arrival yields
# to the loop instead of sleeping, so other requests' chunks are still read while it waits.
_SPIN_NS = 2_000_000
# Linux lets a poll or epoll wait run 0.1% past its timeout (fs/select.c, select_estimate_accuracy): one sleep of
# 2 s woke up to 3 ms late, past the spin, and made slow Poisson rates INVALID for the client's lateness. Sleeps
# of at most 100 ms keep that slack under 0.1 ms (docs/measurements.md).
_SLEEP_MAX_NS = 100_000_000


@dataclass
class Exchange:
    """One request's record; the engine calls `connected`, `first_byte`, `chunk` as they happen (ns, perf_counter)."""

    scheduled_ns: int = 0
    issued_ns: int = 0
    connected_ns: int | None = None
    first_byte_ns: int | None = None
    chunk_ns: list[int] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    # The server's usage block (completion_tokens), where it sends one.
    usage_tokens: int | None = None

    def connected(self) -> None:
        self.connected_ns = time.perf_counter_ns()

    def first_byte(self) -> None:
        if self.first_byte_ns is None:
            self.first_byte_ns = time.perf_counter_ns()

    def chunk(self, text: str) -> None:
        """A streamed chunk that carried output text, timed on arrival."""
        self.chunk_ns.append(time.perf_counter_ns())
        self.texts.append(text)


# send(prompt text, prompt ids, max new tokens, exchange): one request, streamed, recorded into the exchange.
Send = Callable[[str, list[int], int, Exchange], Awaitable[None]]
# serve_session(concurrency): an async context holding the client (its connection pool) for one schedule.
Session = Callable[[int], AbstractAsyncContextManager[Send]]


@dataclass
class Served:
    start_ns: int
    exchanges: list[Exchange]
    # Per request: ns from when it could go (its arrival, or the slot it waited for) to when it was sent.
    late_ns: list[int]


async def until(due_ns: int) -> None:
    """Return at due_ns (perf_counter ns), keeping the loop running meanwhile."""
    while (left := due_ns - time.perf_counter_ns()) > _SPIN_NS:
        await asyncio.sleep(min(left - _SPIN_NS, _SLEEP_MAX_NS) / 1e9)
    while time.perf_counter_ns() < due_ns:
        await asyncio.sleep(0)


async def _schedule(session: Session, texts: list[str], prompts: list[list[int]], max_new_tokens: int, arrivals_ns: list[int] | None, concurrency: int) -> Served:
    n = len(prompts)
    exchanges = [Exchange() for _ in range(n)]
    ready = [0] * n
    slots = asyncio.Semaphore(concurrency)
    # When each free slot became free, oldest first (None: free since the start). A request could go at the later of
    # its arrival and the oldest free slot's time: checking only whether it had to wait at its turn would count the
    # wait of a request queued behind others, whose slots then freed together, as the client's lateness.
    free_since: deque[int | None] = deque([None] * concurrency)
    errors: list[str] = []
    async with session(concurrency) as send:

        async def one(i: int) -> None:
            exchanges[i].issued_ns = time.perf_counter_ns()
            try:
                await send(texts[i], prompts[i], max_new_tokens, exchanges[i])
            except Exception as e:  # noqa: BLE001 - any failure of a request is reported, with its index
                errors.append(f"request {i}: {type(e).__name__}: {e}")
            finally:
                free_since.append(time.perf_counter_ns())
                slots.release()

        tasks = []
        start = time.perf_counter_ns()
        for i in range(n):
            if arrivals_ns is not None:
                await until(start + arrivals_ns[i])
            await slots.acquire()
            now = time.perf_counter_ns()
            since = free_since.popleft()
            if arrivals_ns is None:
                # Closed loop: a request arrives when a slot is free.
                scheduled = now if since is None else since
            else:
                scheduled = start + arrivals_ns[i]
            ready_ns = scheduled if since is None else max(scheduled, since)
            exchanges[i].scheduled_ns = scheduled
            ready[i] = ready_ns
            tasks.append(asyncio.create_task(one(i)))
        # One at a time, not gather(*tasks): gather's setup over every task runs before the last request's task starts
        # (about 1 ms for 1,000 tasks), which made the last request the latest of all.
        for task in tasks:
            await task
    if errors:
        raise WorkerError("runtime_error", f"{len(errors)} of {n} requests failed; first: {errors[0]}")
    for i, e in enumerate(exchanges):
        if not e.chunk_ns:
            raise WorkerError("runtime_error", f"request {i}: the server streamed no output text (an empty completion): raise max_tokens or check the endpoint")
    return Served(start, exchanges, [e.issued_ns - r for e, r in zip(exchanges, ready)])


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No garbage collection while the schedule runs, as timeit times: a collection stops the one event loop that
    issues and times every request, so each request in flight or due then would carry its pause (a full collection
    took milliseconds; docs/measurements.md). What was alive before is frozen out of later collections; whatever
    garbage the schedule leaves is collected after it, outside the timed region."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
        gc.unfreeze()
        gc.collect()


def serve_schedule(session: Session, texts: list[str], prompts: list[list[int]], max_new_tokens: int, arrivals_ns: list[int] | None, concurrency: int) -> Served:
    """Run the whole schedule on a fresh event loop (the client's pool lives and dies with it)."""
    with _collector_paused():
        return asyncio.run(_schedule(session, texts, prompts, max_new_tokens, arrivals_ns, concurrency))
