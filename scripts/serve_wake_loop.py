"""The machine's own floor under bench:serve's issue lateness: an event loop that only wakes at the arrivals.

    python scripts/serve_wake_loop.py ARRIVALS.json

The same waits as PBH's serving loop (pbh_worker.serving.until) at the same arrivals (ns after the start), with no
request sent: how late a process that does nothing but wake is on this machine now. Prints one JSON line: late_ns.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "packages", "core", "python"))
from pbh_worker.serving import until  # noqa: E402 - after the path above


async def main(arrivals_ns: list[int]) -> list[int]:
    start = time.perf_counter_ns()
    late = []
    for a in arrivals_ns:
        await until(start + a)
        late.append(time.perf_counter_ns() - start - a)
    return late


if __name__ == "__main__":
    print(json.dumps({"late_ns": asyncio.run(main(json.load(open(sys.argv[1]))))}))
