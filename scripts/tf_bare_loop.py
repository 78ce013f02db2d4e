"""A bare loop beside PBH's LiteRT and TensorFlow engines (npm run bench:litert): the same model file, built the way
the engine builds it, on a seeded input of the same shape, in a plain process with no PBH code.

Usage: tf_bare_loop.py litert MODEL.tflite THREADS            set_tensor + invoke() on an Interpreter (XNNPACK default)
       tf_bare_loop.py tensorflow SAVEDMODEL THREADS JIT(0|1) a tf.function over the serving_default signature
Prints "ready" once built, then for each line N on stdin runs N calls as blocks of consecutive calls timed with
perf_counter_ns and prints the median of the blocks' per-call means as "median_ns=...". A block lasts about 300 µs
(1 to 20 calls), so the clock's own cost is amortized and one stall of a busy machine lands in few blocks.
"""

import math
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402

kind, path, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(0)
if kind == "litert":
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=path, num_threads=threads)
    interpreter.allocate_tensors()
    feeds = []
    for d in interpreter.get_input_details():
        x = rng.random(d["shape"], dtype=np.float32)
        scale, zero = d["quantization"]
        if scale:
            info = np.iinfo(d["dtype"])
            x = np.clip(np.round(x / np.float32(scale)) + zero, info.min, info.max)
        feeds.append((d["index"], x.astype(d["dtype"])))
    set_tensor, invoke = interpreter.set_tensor, interpreter.invoke

    def call():
        for index, x in feeds:
            set_tensor(index, x)
        invoke()
else:
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(threads)
    saved = tf.saved_model.load(path)
    signature = saved.signatures["serving_default"]
    specs = signature.structured_input_signature[1]
    names = list(specs)
    args = [tf.constant(rng.random([1, *specs[n].shape[1:]], dtype=np.float32)) for n in names]
    # A plain tf.function (jit_compile unset) as a deployment writes it, or XLA on request.
    function = tf.function(lambda *xs: signature(**dict(zip(names, xs))), jit_compile=True if sys.argv[4] == "1" else None)

    def call():
        return function(*args)

for _ in range(20):
    call()
start = time.perf_counter_ns()
call()
estimate = time.perf_counter_ns() - start
block = max(1, min(20, math.ceil(300e3 / max(estimate, 1))))
clock = time.perf_counter_ns
print("ready", flush=True)
for line in sys.stdin:
    n = int(line)
    means = []
    for _ in range(max(1, n // block)):
        start = clock()
        for _ in range(block):
            call()
        means.append((clock() - start) / block)
    print(f"median_ns={round(statistics.median(means))}", flush=True)
