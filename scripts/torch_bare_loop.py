"""A bare torch.utils.benchmark loop beside PBH's PyTorch engines (npm run bench:pytorch): the same module, built the
same way (onnx2torch, then trace + freeze or torch.compile), on the same input, in a plain process with no PBH code.

Usage: torch_bare_loop.py MODEL.onnx SHAPE(comma-separated) THREADS MODE(eager|torchscript|compile)
Prints "ready" once built, then for each line N on stdin runs N timed calls as blocks (Timer.timeit(block), the loop
torch.utils.benchmark times) and prints the median of the blocks' per-call means as "median_ns=...". A block lasts
about 300 µs (1 to 20 calls): long enough that Timer's ~3 µs a timeit() call is amortized below 0.2 µs on an MLP,
short enough that one stall of a busy machine lands in few blocks, so their median is comparable to a p50 of calls.
"""

import math
import statistics
import sys

import numpy as np
import onnx
import onnx2torch
import torch
from torch.utils.benchmark import Timer

path, shape, threads, mode = sys.argv[1], [int(d) for d in sys.argv[2].split(",")], int(sys.argv[3]), sys.argv[4]
torch.set_num_threads(threads)
module = onnx2torch.convert(onnx.load(path)).eval()
x = torch.from_numpy(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
if mode == "torchscript":
    with torch.no_grad():
        module = torch.jit.freeze(torch.jit.trace(module, (x,), check_trace=False).eval())
        module(x), module(x)
elif mode == "compile":
    module = torch.compile(module, dynamic=False)
    with torch.inference_mode():
        module(x), module(x)
with torch.inference_mode():
    module(x)
    timer = Timer(stmt="m(x)", globals={"m": module, "x": x}, num_threads=threads)
    estimate = min(timer.timeit(1).times[0] for _ in range(5))
    block = max(1, min(20, math.ceil(300e-6 / estimate)))
    print("ready", flush=True)
    for line in sys.stdin:
        n = int(line)
        times = [timer.timeit(block).mean for _ in range(max(1, n // block))]
        print(f"median_ns={round(statistics.median(times) * 1e9)}", flush=True)
