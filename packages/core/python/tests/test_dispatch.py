"""Protocol commands onto a fake engine: what the manifest declares is what the worker does."""

import json
import sys

import numpy as np
import pytest

from fake import FakeClock, FakeEngine
from pbh_worker import WorkerError
from pbh_worker.dispatch import Dispatcher
from pbh_worker.manifest import declared

US = 1_000


def _manifest(tmp_path, capabilities, **options):
    entry = {
        "name": "fake",
        "description": "a fake",
        "worker": "fake.py",
        "module": "numpy",
        "devices": ["cpu"],
        "precisions": ["fp32"],
        "capabilities": capabilities,
        "options": {"type": "object", "additionalProperties": False, "properties": {"threads": {"$ref": "#/$defs/threads"}, **options}},
    }
    path = tmp_path / "pbh-engine.json"
    path.write_text(json.dumps({"$defs": {"threads": {"type": "integer", "default": 2}}, "engines": [entry]}))
    return declared("fake", str(path))


def _loaded(tmp_path, capabilities=None, concurrency=1, service=(10 * US, 20 * US)):
    clock = FakeClock()
    engine = FakeEngine(clock, list(service), concurrency)
    dispatcher = Dispatcher(engine, _manifest(tmp_path, capabilities or {}, hint={"enum": ["a", "b"], "default": "a"}), clock)
    reply = dispatcher.handle({"cmd": "load", "model_path": "m.onnx", "batch_size": 1, "precision": "fp32"}, [])[0]
    return clock, engine, dispatcher, reply


def _batches(n):
    return [("x", np.full((1, 2), b, dtype=np.float32)) for b in range(n)]


def test_load_fills_the_manifest_defaults_and_times_the_load(tmp_path):
    _, engine, _, reply = _loaded(tmp_path)
    assert dict(engine.loaded_with.options) == {"threads": 2, "hint": "a"}
    assert reply["compile_ms"] == pytest.approx(5.0)
    assert reply["precision"] == {"executed": "fp32", "evidence": "the fake computes in float32"}
    assert reply["inputs"] == [{"name": "x", "dtype": "float32", "shape": [1, 2]}]
    assert reply["max_concurrency"] == 1


def test_an_option_the_manifest_does_not_declare_is_refused(tmp_path):
    clock = FakeClock()
    dispatcher = Dispatcher(FakeEngine(clock, [1]), _manifest(tmp_path, {}), clock)
    with pytest.raises(WorkerError, match=r"no options \['thread'\]"):
        dispatcher.handle({"cmd": "load", "model_path": "m", "batch_size": 1, "precision": "fp32", "options": {"thread": 1}}, [])


def test_a_declared_capability_needs_its_method(tmp_path):
    class Plain(FakeEngine):
        model_only = None

    with pytest.raises(WorkerError, match="declares capability 'modelOnly' but has no method model_only"):
        Dispatcher(Plain(FakeClock(), [1]), _manifest(tmp_path, {"modelOnly": True}))


def test_an_undeclared_capability_is_never_used_even_when_the_method_exists(tmp_path):
    _, _, dispatcher, _ = _loaded(tmp_path)
    with pytest.raises(WorkerError, match="declares no modelOnly"):
        dispatcher.handle({"cmd": "bench", "iterations": 3}, _batches(1))
    with pytest.raises(WorkerError, match="declares no layers"):
        dispatcher.handle({"cmd": "profile", "iterations": 3}, _batches(1))
    dispatcher.handle({"cmd": "load_samples", "batches": 1}, _batches(1))
    with pytest.raises(WorkerError, match="above what the model runs at once"):
        dispatcher.handle({"cmd": "run_schedule", "concurrency": 2}, [("batches", np.zeros(2, np.int32)), ("arrivals_ns", np.zeros(2, np.int64))])


def test_declared_capabilities_answer(tmp_path):
    _, _, dispatcher, _ = _loaded(tmp_path, {"modelOnly": True, "layers": True})
    assert dispatcher.handle({"cmd": "bench", "iterations": 3}, _batches(2)[1:])[0] == {"iteration_ns": [20 * US] * 3}
    layers = dispatcher.handle({"cmd": "profile", "iterations": 4}, _batches(1))[0]["layers"]
    assert layers == [{"name": "double", "op_type": "Mul", "mean_ns": 10 * US, "calls": 4, "exec_type": "fake"}]


def test_resident_sessions_and_infer(tmp_path):
    _, engine, dispatcher, _ = _loaded(tmp_path)
    assert dispatcher.handle({"cmd": "load_samples", "batches": 2}, _batches(2))[0]["batches"] == 2
    header, tensors = dispatcher.handle({"cmd": "run_closed_loop", "batches": 2, "min_queries": 4, "min_duration_ns": 0}, [])
    assert header == {"queries": 4, "wall_ns": 60 * US}
    assert tensors["engine_ns"].tolist() == [10 * US, 20 * US, 10 * US, 20 * US]
    assert dispatcher.handle({"cmd": "run", "index": 1}, [])[0] == {"engine_ns": 20 * US}
    header, outputs = dispatcher.handle({"cmd": "infer"}, [("x", np.full((1, 2), 3, dtype=np.float32))])
    assert outputs["y"].tolist() == [[6.0, 6.0]] and header["engine_ns"] == 20 * US
    with pytest.raises(WorkerError, match="not a resident batch"):
        dispatcher.handle({"cmd": "run", "index": 2}, [])
    dispatcher.handle({"cmd": "unload_samples"}, [])
    with pytest.raises(WorkerError, match="before \"load_samples\""):
        dispatcher.handle({"cmd": "run_closed_loop", "batches": 1, "min_queries": 1, "min_duration_ns": 0}, [])


def test_a_concurrent_engine_runs_its_schedule_through_its_starts(tmp_path):
    _, engine, dispatcher, reply = _loaded(tmp_path, {"concurrency": True}, concurrency=3, service=(30 * US,))
    assert reply["max_concurrency"] == 3
    dispatcher.handle({"cmd": "load_samples", "batches": 1}, _batches(1))
    _, times = dispatcher.handle({"cmd": "run_schedule", "concurrency": 3}, [("batches", np.zeros(6, np.int32)), ("arrivals_ns", np.zeros(6, np.int64))])
    assert times["completed_ns"].tolist() == [30 * US] * 3 + [60 * US] * 3
    assert engine.peak == 3


def test_schedules_are_checked_before_they_run(tmp_path):
    _, _, dispatcher, _ = _loaded(tmp_path)
    dispatcher.handle({"cmd": "load_samples", "batches": 1}, _batches(1))
    with pytest.raises(WorkerError, match="non-decreasing"):
        dispatcher.handle({"cmd": "run_schedule", "concurrency": 1}, [("batches", np.zeros(2, np.int32)), ("arrivals_ns", np.array([5, 1], np.int64))])
    with pytest.raises(WorkerError, match="resident indices"):
        dispatcher.handle({"cmd": "run_schedule", "concurrency": 1}, [("batches", np.ones(1, np.int32)), ("arrivals_ns", np.zeros(1, np.int64))])


def test_commands_before_load_and_unknown_ones(tmp_path):
    clock = FakeClock()
    dispatcher = Dispatcher(FakeEngine(clock, [1]), _manifest(tmp_path, {}), clock)
    with pytest.raises(WorkerError, match="before a successful"):
        dispatcher.handle({"cmd": "run", "index": 0}, [])
    with pytest.raises(WorkerError, match="unknown command"):
        dispatcher.handle({"cmd": "warp"}, [])
    hello = dispatcher.handle({"cmd": "hello", "require": ["numpy"]}, [])[0]
    assert (hello["runtime"], hello["version"], hello["devices"]) == ("fake", "1.0", ["cpu"])


def test_a_missing_manifest_entry_is_named(tmp_path):
    path = _manifest(tmp_path, {}).path
    with pytest.raises(WorkerError, match="declares no engine 'other'"):
        declared("other", path)


def test_no_runtime_was_imported():
    assert not {"openvino", "tvm", "torch", "onnxruntime"} & set(sys.modules)
