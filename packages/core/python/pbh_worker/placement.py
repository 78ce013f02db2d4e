"""Where the worker's main thread and the client's run while both poll the doorbell, beside a runtime that pins threads.

OpenVINO and TVM pin their pool threads to CPUs (OpenVINO's oneTBB worker, TVM's pool worker) and leave the calling
thread free. With the client polling the page on one CPU, the scheduler moved the worker's main thread onto the CPU of
the runtime's pinned thread, which then shared it: OpenVINO digits b1 runs of ~32 us took ~105 us, rang past the
page's wait and a probe's transport p50 came to 200 us-1.2 ms (measured on a 2-vCPU VM, docs/worker-protocol.md).
Pinning the main thread to a CPU no runtime thread is pinned to, and the client's main thread off it, for as long as
runs come through the page kept those rounds at 5-7 us (misses 2-5 in 1000 runs instead of 71-161).

Both are undone before the worker handles any other command (so sessions, benches and loads run where the scheduler
puts them) and when it exits; the client restores its own CPUs if the worker dies first (client.ts).
"""

from __future__ import annotations

import os


def parse_cpu_list(text: str) -> set[int]:
    """A kernel CPU list ("0-3,6") as a set; empty where it cannot be read."""
    cpus: set[int] = set()
    try:
        for part in text.strip().split(","):
            if not part:
                continue
            low, _, high = part.partition("-")
            cpus.update(range(int(low), int(high or low) + 1))
    except ValueError:
        return set()
    return cpus


def set_cpus(pid: int, cpu_list: str) -> None:
    """The client's way back (worker/placement.ts) when a worker died placed: `pid`'s main thread on `cpu_list`."""
    os.sched_setaffinity(pid, parse_cpu_list(cpu_list))


def _pinned_elsewhere(allowed: set[int]) -> set[int]:
    """CPUs that threads of this process other than the main one are pinned to (affinity narrower than the main's)."""
    pinned: set[int] = set()
    main = os.getpid()
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return pinned
    for tid in tasks:
        if tid == str(main):
            continue
        try:
            cpus = os.sched_getaffinity(int(tid))
        except OSError:
            continue
        if cpus < allowed:
            pinned |= cpus
    return pinned


def _current_cpu() -> int | None:
    try:
        with open(f"/proc/self/task/{os.getpid()}/stat", "rb") as stat:
            # Field 39 (processor): the fields after the command name's closing parenthesis start at field 3.
            return int(stat.read().rsplit(b")", 1)[1].split()[36])
    except (OSError, ValueError, IndexError):
        return None


class Placement:
    """Places the worker's main thread and the client's main thread (the parent) on different CPUs, and undoes it."""

    def __init__(self, parent_pid: int, client_cpus: set[int]) -> None:
        self._parent = parent_pid
        self._client_cpus = client_cpus
        self._enabled = hasattr(os, "sched_setaffinity") and parent_pid > 1 and len(client_cpus) >= 2
        self._own_cpus: set[int] | None = None
        # Whether this stretch of polled runs looked already (one look at the threads per stretch, not per run).
        self._looked = False

    def place(self) -> None:
        """Looks once per stretch of polled runs; places nothing where no runtime thread is pinned, where every CPU
        has one, or where the client would have no CPU left."""
        if not self._enabled or self._looked:
            return
        self._looked = True
        allowed = os.sched_getaffinity(0)
        free = allowed - _pinned_elsewhere(allowed)
        if not free or free == allowed:
            return
        here = _current_cpu()
        main_cpu = here if here in free else min(free)
        client = (self._client_cpus & allowed) - {main_cpu}
        if not client:
            return
        try:
            os.sched_setaffinity(0, {main_cpu})
            self._own_cpus = allowed
            os.sched_setaffinity(self._parent, client)
        except OSError:
            # Not allowed here (a cpuset, another user's parent): both stay where they were, and this stretch stops asking.
            self.release()
            self._looked = True

    def release(self) -> None:
        self._looked = False
        if self._own_cpus is None:
            return
        own, self._own_cpus = self._own_cpus, None
        for pid, cpus in ((self._parent, self._client_cpus), (0, own)):
            try:
                os.sched_setaffinity(pid, cpus)
            except OSError:
                pass
