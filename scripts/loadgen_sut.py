"""MLPerf LoadGen driving PBH's own OpenVINO runtime (scripts/bench-loadgen.mjs runs it).

argv[1] is a JSON request: {"model", "data", "options" (parsed by the engine's optionsSchema, defaults filled, exactly
as PBH's worker receives them), "precision", "scenario" ("single_stream" | "server"), "min_duration_ms",
"min_query_count", "target_qps"?, "latency_bound_ms"?, "out_dir"}. The system under test is the OpenVINO engine class
of packages/engine-openvino/python/openvino_worker.py, loaded and compiled by its own `load`, each resident sample
bound by its own `bind` / `bind_async` (LoadGen's LoadSamplesToRam), so LoadGen times the same infer path PBH's
worker does:
- single stream: issue_queries runs the sample's bound call (the call PBH's `engine` timer covers) and completes the
  sample right after, on LoadGen's issue thread;
- server: the sample's `bind_async` start, over the model's OPTIMAL_NUMBER_OF_INFER_REQUESTS C API requests
  (openvino_capi.AsyncQueue), as the worker's run_schedule starts them; each query is started on LoadGen's issue
  thread (waiting for a free request there, GIL released) and completed from the request's callback.
Writes LoadGen's logs to out_dir and out_dir/result.json: the summary's percentiles (ns, nearest rank), its
validity and the queries it counted.
"""

from __future__ import annotations

import json
import os
import re
import sys

import numpy as np

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(root, "packages", "core", "python"), os.path.join(root, "packages", "engine-openvino", "python")]

import mlperf_loadgen as lg  # noqa: E402 - after the path set-up, like the worker's own imports
from openvino_worker import OpenVINO  # noqa: E402
from pbh_worker import Model  # noqa: E402

SCENARIOS = {"single_stream": lg.TestScenario.SingleStream, "server": lg.TestScenario.Server}
# "50.00 percentile latency (ns)   : 41234" in mlperf_log_summary.txt
PERCENTILE = re.compile(r"^(\d+\.\d+) percentile latency \(ns\)\s*:\s*(\d+)", re.M)


def main() -> None:
    request = json.loads(sys.argv[1])
    data = np.load(request["data"]).astype(np.float32, copy=False)
    engine = OpenVINO()
    engine.name = "openvino"
    spec = [{"name": "input", "dtype": "float32", "shape": [1, *data.shape[1:]]}]
    engine.load(Model(request["model"], 1, "cpu", request["precision"], request["options"], spec))
    # Sample index -> position in the resident set, filled by LoadGen's load callback.
    position: dict[int, int] = {}
    # Per resident sample: its bound call (single stream) or its start (server).
    bound: list = []
    bind = engine.bind if request["scenario"] == "single_stream" else engine.bind_async

    def load_samples(indices: list[int]) -> None:
        position.clear()
        position.update({index: i for i, index in enumerate(indices)})
        bound[:] = [bind({"input": np.ascontiguousarray(data[index : index + 1])}) for index in indices]

    def unload_samples(_indices: list[int]) -> None:
        position.clear()

    if request["scenario"] == "single_stream":
        complete = lg.QuerySamplesComplete
        response = lg.QuerySampleResponse

        def issue(samples: list) -> None:
            for sample in samples:
                bound[position[sample.index]]()
                complete([response(sample.id, 0, 0)])
    else:

        def issue(samples: list) -> None:
            for sample in samples:
                bound[position[sample.index]](lambda sample_id=sample.id: lg.QuerySamplesComplete([lg.QuerySampleResponse(sample_id, 0, 0)]))

    settings = lg.TestSettings()
    settings.scenario = SCENARIOS[request["scenario"]]
    settings.mode = lg.TestMode.PerformanceOnly
    settings.min_duration_ms = int(request["min_duration_ms"])
    settings.min_query_count = int(request["min_query_count"])
    if request["scenario"] == "server":
        settings.server_target_qps = float(request["target_qps"])
        settings.server_target_latency_ns = int(request["latency_bound_ms"] * 1e6)
    else:
        # LoadGen sizes its single-stream query count from this; digits at batch 1 is tens of µs.
        settings.single_stream_expected_latency_ns = 50_000
    log = lg.LogSettings()
    log.log_output.outdir = request["out_dir"]
    log.enable_trace = False

    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(len(data), len(data), load_samples, unload_samples)
    lg.StartTestWithLogSettings(sut, qsl, settings, log)
    lg.DestroyQSL(qsl)
    lg.DestroySUT(sut)
    # Waits for every request still in flight.
    engine.close()

    summary = open(os.path.join(request["out_dir"], "mlperf_log_summary.txt")).read()
    percentiles = {float(p): int(ns) for p, ns in PERCENTILE.findall(summary)}
    valid = re.search(r"^Result is\s*:\s*(\S+)", summary, re.M)
    queries = re.search(r"^(?:Completed samples per second|Samples per second|QPS w/o loadgen overhead)\s*:\s*(\S+)", summary, re.M)
    result = {
        "p50_ns": percentiles.get(50.0),
        "p90_ns": percentiles.get(90.0),
        "p99_ns": percentiles.get(99.0),
        "valid": valid[1] if valid else None,
        "rate": float(queries[1]) if queries else None,
    }
    with open(os.path.join(request["out_dir"], "result.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
