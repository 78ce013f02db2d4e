"""The worker's clock: perf_counter_ns, waiting for a query's arrival, and the slots that cap queries in flight.

The measurement loop (measure.py) and generation take a clock as an argument, so their unit tests run them on a
simulated one (packages/core/python/tests/fake.py) in microseconds of real time.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

# Below this much time left, sleeping is too coarse: a sleep's wake-up overshoots by tens of us on a VM, so the last
# stretch is a spin. Above it the worker sleeps, leaving the cores to the runtime's own threads.
SPIN_NS = 200_000


class Slots(Protocol):
    """At most n queries in flight: `acquire` waits for a free one, `release` (from any thread) frees one."""

    def acquire(self) -> None: ...
    def release(self) -> None: ...
    def drain(self) -> None:
        """Wait until every acquired slot is released."""
        ...


class Clock(Protocol):
    def now(self) -> int: ...
    def wait_until(self, due_ns: int) -> None: ...
    def slots(self, n: int, threaded: bool) -> Slots: ...


class _Counter:
    """Slots for a runtime whose calls complete before they return: a free slot is always there when asked."""

    def __init__(self, n: int) -> None:
        self.free = n

    def acquire(self) -> None:
        if self.free <= 0:
            raise RuntimeError("a synchronous runtime's slot was taken twice: its call must complete before the next starts")
        self.free -= 1

    def release(self) -> None:
        self.free += 1

    def drain(self) -> None:
        pass


class _ThreadSlots:
    """Slots released by a runtime's completion callback on its own thread; waiting releases the GIL."""

    def __init__(self, n: int) -> None:
        self.n = self.free = n
        self.cond = threading.Condition()

    def acquire(self) -> None:
        with self.cond:
            while self.free == 0:
                self.cond.wait()
            self.free -= 1

    def release(self) -> None:
        with self.cond:
            self.free += 1
            self.cond.notify_all()

    def drain(self) -> None:
        with self.cond:
            while self.free < self.n:
                self.cond.wait()


class RealClock:
    # The builtin itself, not a method: the closed loop calls it twice a query.
    now = staticmethod(time.perf_counter_ns)

    @staticmethod
    def wait_until(due_ns: int) -> None:
        """Return at `due_ns` or right after it: sleep for the bulk of a long gap, spin the rest.

        The spin calls sleep(0), which releases the GIL on every turn: a runtime's completion callback (run on its
        own thread, under the GIL) is never held up behind the spinning issuer.
        """
        wait = due_ns - time.perf_counter_ns()
        if wait > SPIN_NS:
            time.sleep((wait - SPIN_NS) / 1e9)
        while time.perf_counter_ns() < due_ns:
            time.sleep(0)

    @staticmethod
    def slots(n: int, threaded: bool) -> Slots:
        return _ThreadSlots(n) if threaded else _Counter(n)


REAL = RealClock()
