"""A bare torch.utils.benchmark loop beside PBH's PyTorch engines (npm run bench:pytorch): the same module, built the
same way (onnx2torch, then trace + freeze or torch.compile), on the same input, in a plain process with no PBH code.

Usage: torch_bare_loop.py MODEL.onnx SHAPE(comma-separated) THREADS MODE(eager|torchscript|compile)
Prints "ready" once built, then for each line N on stdin runs N timed calls as blocks of BLOCK (Timer.timeit(BLOCK),
the loop torch.utils.benchmark times: its per-call overhead amortized over the block) and prints the median of the
blocks' per-call means as "median_ns=...".
"""

import statistics
import sys

import numpy as np
import onnx
import onnx2torch
import torch
from torch.utils.benchmark import Timer

BLOCK = 20
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
    print("ready", flush=True)
    for line in sys.stdin:
        n = int(line)
        times = [timer.timeit(BLOCK).mean for _ in range(max(1, n // BLOCK))]
        print(f"median_ns={round(statistics.median(times) * 1e9)}", flush=True)
