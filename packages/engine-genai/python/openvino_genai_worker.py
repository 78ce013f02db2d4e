"""OpenVINO GenAI: the ContinuousBatchingPipeline on a stateful OpenVINO IR, concurrent requests batched by the runtime.

The model is an IR folder that optimum-intel exported (openvino_model.xml, stateful: the cache lives in the infer
request), or a Hugging Face folder that this engine exports once with optimum-intel, beside PBH's ONNX export of it
(keyed by the source's content and optimum-intel's version). The worker's loop (generation.batch_requests) adds each
request at its arrival and steps the pipeline, which schedules every request in flight into one batch per step
(paged KV cache); the pipeline decodes greedily itself, each handle's tokens are read after the step that made them,
and its own perf metrics (TTFT, TPOT) stand beside. The pipeline gives no logits: perplexity is not measured on it.
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("USE_TF", "0")

import numpy as np
import openvino as ov
import openvino_genai as ov_genai

from pbh_worker import About, Engine, Loaded, Model, Precision, TensorSpec, WorkerError, serve
from pbh_worker.sources import IR, build_home, exported_ir, hf_folder, recorded_source
from pbh_worker.weights import ir_weight_compression

HINTS = {"fp32": "f32", "bf16": "bf16"}
NAMES = {"f32": "fp32", "bf16": "bf16", "f16": "fp16"}
# Tokens per KV block counted for sizing: the smallest block size a device uses (CPU's blocks hold 32), so the cache
# holds every request in flight and none is refused or preempted for want of blocks.
BLOCK_TOKENS = 16


class _Batch:
    """The pipeline as generation.batch_requests drives it: one handle per request, read after each step."""

    def __init__(self, pipe: Any) -> None:
        self.pipe = pipe
        self.handles: dict[int, Any] = {}
        self.done: dict[int, Any] = {}
        self.configs: dict[int, Any] = {}
        # Tokens each request in flight has still to produce.
        self.left: dict[int, int] = {}
        self.next_key = 0

    def add(self, ids: list[int], max_new_tokens: int) -> int:
        # Made once per length, not per request: adding a request is on the timed path.
        config = self.configs.get(max_new_tokens)
        if config is None:
            config = self.configs[max_new_tokens] = ov_genai.GenerationConfig()
            config.max_new_tokens = max_new_tokens
            config.min_new_tokens = max_new_tokens
            config.do_sample = False
        key, self.next_key = self.next_key, self.next_key + 1
        self.handles[key] = self.pipe.add_request(key, ov.Tensor(np.asarray([ids], dtype=np.int64)), config)
        self.left[key] = max_new_tokens
        return key

    def step(self) -> dict[int, tuple[list[int], bool]]:
        self.pipe.step()
        moved: dict[int, tuple[list[int], bool]] = {}
        for key, handle in list(self.handles.items()):
            produced: list[int] = []
            while handle.can_read():
                for output in handle.read().values():
                    produced += output.generated_ids
            if produced:
                # min_new_tokens = max_new_tokens: a request finishes with its last token, so counting them tells,
                # without reading each output's finish_reason every step.
                left = self.left[key] = self.left[key] - len(produced)
                finished = left <= 0
            else:
                # Nothing this step: a prompt still in prefill, or a request the pipeline dropped. Only then is the
                # status asked: asking after every step made the steps 2-4% slower (docs/measurements.md).
                status = handle.get_status()
                if status in (ov_genai.GenerationStatus.IGNORED, ov_genai.GenerationStatus.CANCEL, ov_genai.GenerationStatus.STOP):
                    raise WorkerError("runtime_error", f"the ContinuousBatchingPipeline dropped request {key} (status {status.name}): its KV cache could not hold it")
                finished = status == ov_genai.GenerationStatus.FINISHED
            if produced or finished:
                moved[key] = (produced, finished)
            if finished:
                self.done[key] = self.handles.pop(key)
        return moved

    def figures(self, key: int) -> dict[str, float]:
        metrics = self.done.pop(key).get_perf_metrics()
        return {"ttft_ms": float(metrics.get_ttft().mean), "tpot_ms": float(metrics.get_tpot().mean)}


class OpenVinoGenAI(Engine):
    def __init__(self) -> None:
        self.folder = ""
        self.device = "CPU"
        self.config: dict[str, Any] = {}
        self.pipe: Any = None
        # (max_num_seqs, num_kv_blocks) of the pipeline built, which serves any call that fits it.
        self.sized = (0, 0)

    def about(self) -> About:
        return About(version=ov_genai.__version__, devices=[d.lower() for d in ov.Core().available_devices], details={"openvino": ov.get_version()})

    def _folder(self, model: Model) -> tuple[str, dict[str, Any]]:
        given = recorded_source(model.path, "openvino-genai")
        if given and given[1] == "openvino_ir":
            # The IR the user named runs as it was exported: weightFormat compresses a Hugging Face folder's export only.
            if str(model.options.get("weightFormat") or "fp32") != "fp32":
                raise WorkerError("bad_request", f"options.weightFormat={model.options['weightFormat']} exports a Hugging Face folder compressed; {given[0]} is an IR already, run as exported: drop weightFormat, or export it with optimum-cli export openvino --weight-format")
            return given[0], {"exported": False}
        if os.path.isdir(model.path) and os.path.isfile(os.path.join(model.path, IR)):
            return model.path, {"exported": False}
        source = hf_folder(model.path, "openvino-genai")
        if source is None:
            raise WorkerError(
                "unsupported_model",
                f"{model.path} is neither an OpenVINO IR folder ({IR}, as optimum-cli export openvino writes) nor a Hugging Face folder: "
                "the OpenVINO GenAI pipeline runs a stateful IR. Name the Hugging Face folder in models[].path (PBH exports it once).",
            )
        home = build_home(model.path, model.work_dir, "openvino-genai")
        return exported_ir(source, home, str(model.options.get("weightFormat") or "fp32"), int(model.options.get("groupSize") or 128))

    def load(self, model: Model) -> Loaded:
        hint = HINTS.get(model.precision)
        if hint is None:
            raise WorkerError("unsupported", f"openvino-genai runs {sorted(HINTS)} here, not {model.precision}")
        folder, facts = self._folder(model)
        ir = ov.Core().read_model(os.path.join(folder, IR))
        if not ir.get_variables():
            raise WorkerError("unsupported_model", f"{folder} holds a stateless IR (the cache as inputs, as optimum-cli export openvino --disable-stateful writes it): the OpenVINO GenAI pipeline runs a stateful one. Export it again without --disable-stateful, or run this one on onnxruntime or openvino")
        # The cache in the requested precision too, as the openvino engine holds it: the plugin's own default (f16 on
        # CPU, even under an f32 hint) would otherwise set it.
        config: dict[str, Any] = {"INFERENCE_PRECISION_HINT": hint, "KV_CACHE_PRECISION": hint}
        if model.options.get("threads"):
            config["INFERENCE_NUM_THREADS"] = int(model.options["threads"])
        self.folder, self.device, self.config, self.pipe, self.sized = folder, model.device.upper(), config, None, (0, 0)
        # The pipeline is built per the generate call's sizing (batch_runtime) and keeps its compiled model to itself:
        # the same IR compiled with the same properties says what runs.
        compiled = ov.Core().compile_model(ir, model.device.upper(), config)
        hinted = compiled.get_property("INFERENCE_PRECISION_HINT")
        executed = hinted.get_type_name() if isinstance(hinted, ov.Type) else str(hinted)
        threads = compiled.get_property("INFERENCE_NUM_THREADS")
        vocab = int(compiled.output("logits").get_partial_shape()[-1].get_length())
        kv = compiled.get_property("KV_CACHE_PRECISION") if "KV_CACHE_PRECISION" in compiled.get_property("SUPPORTED_PROPERTIES") else None
        del compiled
        weights, weights_evidence = ir_weight_compression(ir)
        del ir
        return Loaded(
            inputs=[TensorSpec("input_ids", "int64", [None, None])],
            outputs=[TensorSpec("logits", "float32", [None, None, vocab])],
            precision=Precision(NAMES.get(executed, executed), f"INFERENCE_PRECISION_HINT of the IR compiled with the pipeline's properties; {weights_evidence}", weights),
            threads=int(threads) if isinstance(threads, int) and threads > 0 else None,
            facts={
                **facts,
                "folder": folder,
                "pipeline": "ContinuousBatchingPipeline, greedy (do_sample false), stateful IR",
                "scheduler": f"SchedulerConfig per generate call: max_num_seqs = its concurrency, num_kv_blocks = concurrency x ceil(longest request's tokens / {BLOCK_TOKENS}), rebuilt only when a call needs more; the rest the runtime's defaults",
                # The cache's element type as the compiled model reports it.
                "kv_cache_precision": kv.get_type_name() if isinstance(kv, ov.Type) else None if kv is None else str(kv),
            },
        )

    def bind(self, batch):
        raise WorkerError("unsupported", "openvino-genai runs the generate workload only (its pipeline owns the cache): add a generate: block to the config")

    def batch_runtime(self, concurrency: int, max_tokens: int) -> _Batch:
        """The pipeline sized for `concurrency` requests of up to `max_tokens` tokens, built before the caller's clock starts."""
        need = (concurrency, concurrency * -(-max_tokens // BLOCK_TOKENS))
        if need[0] > self.sized[0] or need[1] > self.sized[1]:
            self.pipe = None
            scheduler = ov_genai.SchedulerConfig()
            scheduler.max_num_seqs, scheduler.num_kv_blocks = max(need[0], self.sized[0]), max(need[1], self.sized[1])
            self.pipe = ov_genai.ContinuousBatchingPipeline(self.folder, scheduler, self.device, self.config)
            self.sized = (scheduler.max_num_seqs, scheduler.num_kv_blocks)
            # A fresh pipeline's first step is also its first inference: one token through it here, off the clock.
            warm = _Batch(self.pipe)
            warm.add([0], 1)
            while self.pipe.has_non_finished_requests():
                warm.step()
        return _Batch(self.pipe)


if __name__ == "__main__":
    serve(OpenVinoGenAI())
