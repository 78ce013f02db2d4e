"""A bare Python loop over onnxruntime, outside PBH: the reference for `npm run bench:overhead`.

Usage: ort_bare_loop.py MODEL.onnx SHAPE(comma-separated) THREADS BATCHES
Opens one session with the options PBH's ONNX Runtime engine resolves by default (all graph optimisations,
sequential, memory arena and pattern on) and the given intra-op threads, makes BATCHES random batches, prints
`ready`, then for every line ITERATIONS read from stdin runs the batches in turn that many times, each call timed
with perf_counter_ns, and prints `p50_ns=<n> mean_ns=<n>`.
"""

import sys
import time

import numpy as np
import onnxruntime as ort

model_path, shape, threads, count = sys.argv[1], [int(d) for d in sys.argv[2].split(",")], int(sys.argv[3]), int(sys.argv[4])
options = ort.SessionOptions()
options.intra_op_num_threads = threads
options.inter_op_num_threads = 0
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
options.log_severity_level = 3
session = ort.InferenceSession(model_path, sess_options=options, providers=["CPUExecutionProvider"])
name = session.get_inputs()[0].name
rng = np.random.default_rng(0)
feeds = [{name: rng.standard_normal(shape).astype(np.float32)} for _ in range(count)]
run = session.run
now = time.perf_counter_ns
print("ready", flush=True)
for line in sys.stdin:
    times = np.empty(int(line), dtype=np.int64)
    for i in range(len(times)):
        feed = feeds[i % count]
        start = now()
        run(None, feed)
        times[i] = now() - start
    print(f"p50_ns={np.median(times):.0f} mean_ns={times.mean():.0f}", flush=True)
