"""Waiting for a query's arrival time in a schedule (`run_schedule`), on the worker's perf_counter_ns clock."""

from __future__ import annotations

import time

now = time.perf_counter_ns

# Below this much time left, sleeping is too coarse: a sleep's wake-up overshoots by tens of us on a VM, so the last
# stretch is a spin. Above it the worker sleeps, leaving the cores to the runtime's own threads.
SPIN_NS = 200_000


def wait_until(due_ns: int) -> None:
    """Return at `due_ns` (perf_counter_ns) or right after it: sleep for the bulk of a long gap, spin the rest.

    The spin calls sleep(0), which releases the GIL on every turn: a runtime's completion callback (OpenVINO's
    AsyncInferQueue runs it on its own thread, under the GIL) is never held up behind the spinning issuer.
    """
    wait = due_ns - now()
    if wait > SPIN_NS:
        time.sleep((wait - SPIN_NS) / 1e9)
    while now() < due_ns:
        time.sleep(0)
