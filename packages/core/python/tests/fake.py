"""A simulated clock and a fake engine, so the measurement loop's tests run in microseconds with no runtime."""

from __future__ import annotations

import heapq
import itertools
from typing import Any, Callable

import numpy as np

from pbh_worker import About, Engine, Layer, Loaded, Model, Precision, TensorSpec


class FakeClock:
    """Time moves only when the code under test waits or an engine's call takes its service time."""

    def __init__(self) -> None:
        self.t = 1_000_000
        self.waits: list[int] = []
        # (due, order, callback): completions of queries in flight.
        self.events: list[tuple[int, int, Callable[[], None]]] = []
        self._order = itertools.count()

    def now(self) -> int:
        return self.t

    def advance(self, ns: int) -> None:
        self._run_until(self.t + ns)

    def after(self, ns: int, callback: Callable[[], None]) -> None:
        heapq.heappush(self.events, (self.t + ns, next(self._order), callback))

    def _run_until(self, due: int) -> None:
        while self.events and self.events[0][0] <= due:
            when, _, callback = heapq.heappop(self.events)
            self.t = max(self.t, when)
            callback()
        self.t = max(self.t, due)

    def wait_until(self, due_ns: int) -> None:
        self.waits.append(due_ns)
        self._run_until(due_ns)

    def slots(self, n: int, threaded: bool) -> "FakeSlots":
        return FakeSlots(self, n)


class FakeSlots:
    def __init__(self, clock: FakeClock, n: int) -> None:
        self.clock, self.n, self.free = clock, n, n

    def acquire(self) -> None:
        # A full house waits for the next completion, as the real slots wait on the runtime's callback.
        while self.free == 0:
            if not self.clock.events:
                raise AssertionError("every slot is taken and nothing is in flight to free one")
            self.clock._run_until(self.clock.events[0][0])
        self.free -= 1

    def release(self) -> None:
        self.free += 1
        assert self.free <= self.n, "a slot was released twice"

    def drain(self) -> None:
        while self.free < self.n:
            self.clock._run_until(self.clock.events[0][0])


class FakeEngine(Engine):
    """Doubles its input `x`; each call of batch b takes service[b] ns on the fake clock."""

    def __init__(self, clock: FakeClock, service: list[int], concurrency: int = 1) -> None:
        self.clock, self.service, self.concurrency = clock, service, concurrency
        self.calls: list[int] = []
        self.in_flight = self.peak = 0
        self.loaded_with: Model | None = None

    def about(self) -> About:
        return About(version="1.0", details={"fake": "yes"})

    def load(self, model: Model) -> Loaded:
        self.loaded_with = model
        self.clock.advance(5_000_000)
        return Loaded(
            inputs=[TensorSpec("x", "float32", [model.batch_size, 2])],
            outputs=[TensorSpec("y", "float32", [model.batch_size, 2])],
            precision=Precision("fp32", "the fake computes in float32"),
            threads=1,
        )

    def _index(self, batch: Any) -> int:
        return int(batch["x"].reshape(-1)[0]) % len(self.service)

    def bind(self, batch: Any) -> Callable[[], Any]:
        index, x = self._index(batch), batch["x"]

        def call() -> list[np.ndarray]:
            self.calls.append(index)
            self.clock.advance(self.service[index])
            return [x * 2]

        return call

    def max_concurrency(self) -> int:
        return self.concurrency

    def bind_async(self, batch: Any) -> Callable[[Callable[[], None]], None]:
        index = self._index(batch)

        def start(done: Callable[[], None]) -> None:
            self.calls.append(index)
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)

            def complete() -> None:
                self.in_flight -= 1
                done()

            self.clock.after(self.service[index], complete)

        return start

    def model_only(self, batch: Any, iterations: int) -> list[int]:
        return [self.service[self._index(batch)]] * iterations

    def layers(self, batch: Any, iterations: int) -> list[Layer]:
        return [Layer("double", "Mul", float(self.service[self._index(batch)]), iterations, {"exec_type": "fake"})]
