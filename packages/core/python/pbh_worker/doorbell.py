"""`run` through shared memory: the client's file (PBH_DOORBELL, under /dev/shm) mapped here, both sides polling it.

A round trip through the frame stream costs two process wake-ups (37-62 us on a VM, docs/worker-protocol.md); polling
a shared page costs neither while both processes are running. After answering a `run` of at most POLL_AFTER_NS (or
SPARE_CORE_POLL_MAX_NS, where the last session left a core idle), the worker polls the page for IDLE_NS for the next
one (saying so in word 6), then goes back to blocking on the frame stream. The client writes a request there only
while word 6 says the worker polls, waits a bounded time, and otherwise sends the same run, with the same `seq`, on
the frame stream: a `seq` served here is answered there from what it measured, never run twice.

The page, little-endian int64 words: 0-2 the request (index, seq, check), 3-5 the reply (engine_ns, seq, check),
6 whether the worker polls (1) or not (0). A check is MAGIC ^ the two words before it; a torn or reordered read
fails it and is read again.
"""

from __future__ import annotations

import mmap
import os
import select
import time
from typing import Callable

from .placement import Placement, parse_cpu_list

MAGIC = 0x5042485F444F4F52
IDLE_NS = 20_000_000
# Polls after runs this short; the client rings the page only while word 6 says the worker polls, so other runs go
# as frames. A client polling through a run competes with the runtime's threads for the cores: beside a runtime
# filling both vCPUs here it slowed runs of ~0.5 ms to several (`pbh run` of digits b32 on OpenVINO), and runs of
# ~140 us often enough past the page's wait to put 1.4-1.6 ms transports at p90, where frames cost them 32-36 us.
# Nothing that keeps a core awake beside such a runtime is harmless either (a nice-19 or SCHED_IDLE busy loop slowed
# OpenVINO's squeezenet runs by 40-120%: oneTBB's waiting threads yield to it).
POLL_AFTER_NS = 100_000
# ... and after runs up to this long where the last session left a core idle (SPARE_CORE): the client then polls on
# a core the runtime does not use. A frame after a run of milliseconds costs 200-700 us here, not a ping-pong's two
# wake-ups: the reader's vCPU has halted meanwhile, and waking it goes through the host. The bound is the client's
# event loop, which it holds while it polls (at most 3 x the fastest run + 1 ms, WorkerClient.run).
SPARE_CORE_POLL_MAX_NS = 20_000_000
# A session left a core idle when its process CPU time was at most this many cores below the ones it may use, over
# its wall time (a runtime's spinning threads count as busy).
SPARE_CORE = 0.75
# Failed runs answer engine_ns -1: the client sends the run on the frame stream, where its error reply goes.
FAILED = -1
_POLL_EVERY = 64
_WORDS = 7


class Doorbell:
    def __init__(self, path: str, frame_fd: int) -> None:
        fd = os.open(path, os.O_RDWR)
        try:
            self._map = mmap.mmap(fd, _WORDS * 8)
        finally:
            os.close(fd)
        self._words = memoryview(self._map).cast("q")
        self._frames = select.poll()
        self._frames.register(frame_fd, select.POLLIN)
        # The last seq answered (here or on the frame stream) and what it measured.
        self.served_seq = 0
        self.served_ns = 0
        self._cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        # The longest run after which the worker polls: SPARE_CORE_POLL_MAX_NS once the last session on this resident
        # set left a core idle.
        self._poll_bound = POLL_AFTER_NS
        # Keeps the main thread and the client apart while runs come through the page beside a runtime's pinned
        # threads (placement.py); released before any other command. The parent is the client: a worker whose
        # parent is not PBH_PARENT_PID has exited before serving (loop._die_with_parent).
        self.placement = Placement(os.getppid(), parse_cpu_list(os.environ.get("PBH_CLIENT_CPUS", "")))

    def observed_session(self, cpu_ns: int, wall_ns: int) -> None:
        """The process CPU time of a session and its wall time: whether long runs leave the client a core."""
        spare = self._cores >= 2 and wall_ns > 0 and cpu_ns <= (self._cores - SPARE_CORE) * wall_ns
        self._poll_bound = SPARE_CORE_POLL_MAX_NS if spare else POLL_AFTER_NS

    def forget_session(self) -> None:
        """A new resident set or model: no session has shown yet what its runs leave idle."""
        self._poll_bound = POLL_AFTER_NS

    def announce(self, engine_ns: int) -> bool:
        """Says the worker polls the page after this run, if it was short enough; poll() clears it when it stops."""
        polls = 0 <= engine_ns <= self._poll_bound
        self._words[6] = 1 if polls else 0
        # Where a session left a core idle the client polls on it already; elsewhere three things spin on the cores.
        if polls and self._poll_bound == POLL_AFTER_NS:
            self.placement.place()
        return polls

    def answered(self, seq: int, engine_ns: int) -> None:
        self.served_seq, self.served_ns = seq, engine_ns

    def poll(self, run: Callable[[int], int]) -> None:
        """Answers runs written to the page until none came for IDLE_NS or a frame is waiting on the stream."""
        words, clock = self._words, time.perf_counter_ns
        idle_until = clock() + IDLE_NS
        turns = 0
        while True:
            index, seq, check = words[0], words[1], words[2]
            # Newer only: the words keep the last request written, which may predate runs sent as frames since.
            if seq > self.served_seq and check == MAGIC ^ index ^ seq:
                words[6] = 1
                try:
                    engine_ns = run(index)
                except Exception:  # noqa: BLE001 - the same run on the frame stream gets the error reply
                    words[6] = 0
                    self._reply(FAILED, seq)
                    self.served_seq = seq
                    self.served_ns = FAILED
                    return
                long_run = engine_ns > self._poll_bound
                if long_run:
                    # Before the reply: the client that reads it must find the page unwatched for the next run.
                    words[6] = 0
                self._reply(engine_ns, seq)
                self.answered(seq, engine_ns)
                if long_run:
                    return
                idle_until = clock() + IDLE_NS
                continue
            turns += 1
            if turns % _POLL_EVERY == 0 and (clock() > idle_until or self._frames.poll(0)):
                if words[6]:
                    # Said before the last look: a request written meanwhile is still answered here.
                    words[6] = 0
                    continue
                return

    def _reply(self, engine_ns: int, seq: int) -> None:
        words = self._words
        # The check last: a client that sees it consistent has both words.
        words[3] = engine_ns
        words[4] = seq
        words[5] = MAGIC ^ engine_ns ^ seq
