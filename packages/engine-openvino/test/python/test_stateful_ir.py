"""optimum-intel's stateful IR as the openvino engine's decoder, in process: interleaved requests each keep their own
cache (an infer request of their own), and every step's logits match ONNX Runtime on the model's Optimum ONNX export;
that export itself, run by the engine as a decoder fed through the binding, matches ONNX Runtime too.

Run by packages/engine-openvino/test/stateful-ir.test.ts with PYTHONPATH holding packages/core/python and this
engine's python folder; LLMS names the folder of python/generate_llms.py.
"""

from __future__ import annotations

import os

import numpy as np
import onnxruntime as ort
import pytest

from openvino_worker import OpenVINO
from pbh_worker import Model, TensorSpec
from pbh_worker.decoders import KvCacheGraph
from pbh_worker.generation import generate

LLMS = os.environ["LLMS"]
# f32 on both runtimes: the same arithmetic up to summation order, against logits of order 10.
TOLERANCE = 1e-3
PROMPTS = [[5, 6, 7, 8, 9], [10, 11], [12, 13, 14, 15, 16, 17, 18], [3, 4, 5], [40, 41, 42, 43]]


def onnx_runtime_reference(model: str) -> KvCacheGraph:
    """The model's Optimum ONNX export on a plain ONNX Runtime session, one thread."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(os.path.join(LLMS, model, "onnx", "model.onnx"), options, providers=["CPUExecutionProvider"])
    outputs = [o.name for o in session.get_outputs()]
    types = {"tensor(float)": "float32", "tensor(int64)": "int64"}
    specs = [TensorSpec(i.name, types[i.type], list(i.shape)) for i in session.get_inputs()]
    return KvCacheGraph(lambda feeds: dict(zip(outputs, session.run(None, feeds))), specs, "the ONNX export")


@pytest.fixture(scope="module", params=["qwen2", "gpt2"])
def engines(request):
    engine = OpenVINO()
    loaded = engine.load(Model(path=os.path.join(LLMS, request.param, "openvino", "openvino_model.xml"), batch_size=1, device="cpu", precision="fp32",
                      options={"hint": "latency", "threads": 1}, inputs=[], work_dir=None, seed=0))
    yield engine, onnx_runtime_reference(request.param), loaded
    engine.close()


def test_the_ir_runs_on_its_own_decoder_with_its_cache_in_fp32(engines):
    engine, _, loaded = engines
    assert engine.decoder() is not None
    # The CPU plugin's own default would hold the cache in f16.
    assert loaded.facts["kv_cache_precision"] == "f32"
    assert (loaded.precision.executed, loaded.precision.weights) == ("fp32", None)
    assert {s.name for s in loaded.inputs} >= {"input_ids", "attention_mask", "beam_idx"}


def assert_steps_match(decoder, reference) -> None:
    """Six greedy steps from one prompt: every step's logits within TOLERANCE of the reference's."""
    ours, theirs = decoder.start(), reference.start()
    fed = PROMPTS[2]
    for _ in range(6):
        a, ours = decoder.step(ours, fed)
        b, theirs = reference.step(theirs, fed)
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, atol=TOLERANCE, rtol=0)
        fed = [int(np.argmax(a[-1]))]


def test_every_step_matches_onnx_runtime_on_the_export(engines):
    engine, reference, _ = engines
    assert_steps_match(engine.decoder(), reference)


def test_interleaved_requests_keep_their_own_cache(engines):
    engine, _, _ = engines
    decoder = engine.decoder()
    _, one_at_a_time, _ = generate(decoder, PROMPTS, 6, None, 1)
    # Every request arrives at once, three in flight: each step of one request falls between steps of the others.
    _, interleaved, _ = generate(decoder, PROMPTS, 6, [0] * len(PROMPTS), 3)
    assert interleaved == one_at_a_time
    # An infer request per request in flight, each given back when its request ended.
    assert len(decoder.free) == 3


@pytest.fixture(scope="module")
def optimum_export():
    engine = OpenVINO()
    engine.load(Model(path=os.path.join(LLMS, "llama_gqa", "onnx", "model.onnx"), batch_size=1, device="cpu", precision="fp32",
                      options={"hint": "latency", "threads": 1}, inputs=[], work_dir=None, seed=0))
    yield engine, onnx_runtime_reference("llama_gqa")
    engine.close()


def test_an_optimum_export_is_fed_through_the_binding_and_matches_onnx_runtime(optimum_export):
    engine, reference = optimum_export
    decoder = engine.decoder()
    assert isinstance(decoder, KvCacheGraph)
    assert_steps_match(decoder, reference)
    # One infer request serves every request in flight: each request's cache is its own arrays, copied out each step.
    _, one_at_a_time, _ = generate(decoder, PROMPTS, 6, None, 1)
    _, interleaved, _ = generate(decoder, PROMPTS, 6, [0] * len(PROMPTS), 3)
    assert interleaved == one_at_a_time
