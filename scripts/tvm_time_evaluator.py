"""TVM's own timing of one model, outside PBH: the reference for `npm run bench:native`.

Usage: tvm_time_evaluator.py MODEL.onnx SHAPE(comma-separated) THREADS
Builds the model with the same compile steps as PBH's TVM worker (packages/engine-tvm/python/tvm_compile.py: same
target, pipeline and opt level, no tuning, no cache), prints `ready`, then for every line ITERATIONS read from stdin
times the model with the Relax VM's time_evaluator (number=1, repeat=ITERATIONS) in this plain process and prints
`median_ns=<n>`. One build serves every round of the interleaved benchmark.
"""

import os
import sys

threads = int(sys.argv[3])
os.environ.setdefault("TVM_NUM_THREADS", str(threads))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "packages", "engine-tvm", "python"))

import numpy as np  # noqa: E402
import tvm  # noqa: E402
from tvm import relax  # noqa: E402

import tvm_compile  # noqa: E402

model_path, shape = sys.argv[1], [int(d) for d in sys.argv[2].split(",")]
tvm.get_global_func("runtime.config_threadpool")(1, threads)
target = tvm_compile.make_target(tvm_compile.host_cpu(), threads)
model = tvm_compile.read_onnx(model_path)
inputs = tvm_compile.resolve_inputs(model, shape[0], [{"name": "input", "dtype": "float32", "shape": shape}], model_path)
mod = tvm_compile.fuse(tvm_compile.import_onnx(model, inputs, model_path), target, 3)
executable = tvm_compile.lower_and_build(mod, target, 3)
device = tvm.cpu()
vm = relax.VirtualMachine(executable, device)
x = tvm_compile.to_device(np.random.default_rng(0).standard_normal(shape).astype(np.float32), device)
vm.save_function("main", "timed", x, include_return=False)
print("ready", flush=True)
for line in sys.stdin:
    result = vm.time_evaluator("timed", device, number=1, repeat=int(line))()
    print(f"median_ns={float(np.median(result.results)) * 1e9:.0f}", flush=True)
