"""OpenVINO GenAI: the LLMPipeline's own generate loop on a stateful OpenVINO IR, one request at a time.

The model is an IR folder that optimum-intel exported (openvino_model.xml, stateful: the cache lives in the infer
request), or a Hugging Face folder that this engine exports once with optimum-intel, beside PBH's ONNX export of it
(keyed by the source's content and optimum-intel's version). The pipeline decodes greedily itself; a streamer takes
each token as it is ready, so PBH times every token, and the pipeline's own perf metrics (TTFT, TPOT) stand beside.
The pipeline gives no logits: perplexity is not measured on it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Any, Callable

os.environ.setdefault("USE_TF", "0")

import numpy as np
import openvino as ov
import openvino_genai as ov_genai

from pbh_worker import About, Engine, Loaded, Model, Precision, TensorSpec, WorkerError, serve
from pbh_worker.sources import build_home, hf_folder

IR = "openvino_model.xml"
HINTS = {"fp32": "f32", "bf16": "bf16"}
NAMES = {"f32": "fp32", "bf16": "bf16", "f16": "fp16"}


def _export(source: str, out: str, weight_format: str, group_size: int) -> None:
    """optimum-intel's exporter (its command line; NNCF compresses int8/int4 weights), written atomically."""
    partial = out + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    command = [sys.executable, "-m", "optimum.commands.optimum_cli", "export", "openvino", "--model", source, "--task", "text-generation-with-past", "--weight-format", weight_format]
    if weight_format == "int4":
        command += ["--group-size", str(group_size), "--ratio", "1.0"]
    command.append(partial)
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "USE_TF": "0"}, check=False)
    if done.returncode != 0 or not os.path.isfile(os.path.join(partial, IR)):
        said = " ".join(done.stderr.strip().splitlines()[-3:])
        raise WorkerError("unsupported_model", f"optimum-intel could not export {source} to OpenVINO IR: {said[-600:]}")
    os.replace(partial, out)


def _weights_read_back(xml: str) -> tuple[str | None, str]:
    """The IR's weight constants by element type: int4/int8 when compressed weights are there (NNCF's, read from the IR)."""
    census: dict[str, int] = {}
    for op in ov.Core().read_model(xml).get_ops():
        if op.get_type_name() == "Constant":
            kind = op.get_element_type().get_type_name()
            census[kind] = census.get(kind, 0) + 1
    said = ", ".join(f"{n} {k}" for k, n in sorted(census.items()))
    for kinds, name in ((("u4", "i4"), "int4"), (("u8", "i8"), "int8")):
        if any(census.get(k) for k in kinds):
            return name, f"IR weight constants: {said}"
    return None, f"IR weight constants: {said} (no compressed weights)"


class _Streamer(ov_genai.StreamerBase):
    def __init__(self, on_token: Callable[[int], None]) -> None:
        super().__init__()
        self.on_token = on_token

    def write(self, token: Any) -> Any:
        for t in token if isinstance(token, (list, tuple)) else [token]:
            self.on_token(int(t))
        return ov_genai.StreamingStatus.RUNNING

    def end(self) -> None:
        pass


class OpenVinoGenAI(Engine):
    def __init__(self) -> None:
        self.pipe: Any = None

    def about(self) -> About:
        return About(version=ov_genai.__version__, devices=[d.lower() for d in ov.Core().available_devices], details={"openvino": ov.get_version()})

    def _folder(self, model: Model) -> tuple[str, dict[str, Any]]:
        if os.path.isdir(model.path) and os.path.isfile(os.path.join(model.path, IR)):
            return model.path, {"exported": False}
        source = hf_folder(model.path, "openvino-genai")
        if source is None:
            raise WorkerError(
                "unsupported_model",
                f"{model.path} is neither an OpenVINO IR folder ({IR}, as optimum-cli export openvino writes) nor a Hugging Face folder: "
                "the OpenVINO GenAI pipeline runs a stateful IR. Name the Hugging Face folder in models[].path (PBH exports it once).",
            )
        from importlib.metadata import version  # noqa: PLC0415

        base = build_home(model.path, model.work_dir, "openvino-genai")
        weight_format = str(model.options.get("weightFormat") or "fp32")
        group = int(model.options.get("groupSize") or 128)
        detail = f"{weight_format}, group size {group}" if weight_format == "int4" else weight_format
        exporter = f"optimum-intel {version('optimum-intel')} (optimum-cli export openvino --weight-format {detail})"
        out = os.path.join(base, f"openvino-ir-{version('optimum-intel')}-{weight_format}" + (f"-g{group}" if weight_format == "int4" else ""))
        cached = os.path.isfile(os.path.join(out, IR))
        if not cached:
            _export(source, out, weight_format, group)
        return out, {"exported": not cached, "source": source, "exporter": exporter}

    def load(self, model: Model) -> Loaded:
        hint = HINTS.get(model.precision)
        if hint is None:
            raise WorkerError("unsupported", f"openvino-genai runs {sorted(HINTS)} here, not {model.precision}")
        folder, facts = self._folder(model)
        config: dict[str, Any] = {"INFERENCE_PRECISION_HINT": hint}
        if model.options.get("threads"):
            config["INFERENCE_NUM_THREADS"] = int(model.options["threads"])
        self.pipe = ov_genai.LLMPipeline(folder, model.device.upper(), **config)
        # The pipeline keeps its compiled model to itself: the same IR compiled with the same properties says what runs.
        compiled = ov.Core().compile_model(os.path.join(folder, IR), model.device.upper(), config)
        hinted = compiled.get_property("INFERENCE_PRECISION_HINT")
        executed = hinted.get_type_name() if isinstance(hinted, ov.Type) else str(hinted)
        threads = compiled.get_property("INFERENCE_NUM_THREADS")
        vocab = int(compiled.output("logits").get_partial_shape()[-1].get_length())
        del compiled
        weights, weights_evidence = _weights_read_back(os.path.join(folder, IR))
        return Loaded(
            inputs=[TensorSpec("input_ids", "int64", [None, None])],
            outputs=[TensorSpec("logits", "float32", [None, None, vocab])],
            precision=Precision(NAMES.get(executed, executed), f"INFERENCE_PRECISION_HINT of the IR compiled with the pipeline's properties; {weights_evidence}", weights),
            threads=int(threads) if isinstance(threads, int) and threads > 0 else None,
            facts={**facts, "folder": folder, "pipeline": "LLMPipeline, greedy (do_sample false), stateful IR"},
        )

    def bind(self, batch):
        raise WorkerError("unsupported", "openvino-genai runs the generate workload only (its pipeline owns the cache): add a generate: block to the config")

    def stream(self, ids: list[int], max_new_tokens: int, on_token: Callable[[int], None]) -> dict[str, float]:
        config = ov_genai.GenerationConfig()
        config.max_new_tokens = max_new_tokens
        config.min_new_tokens = max_new_tokens
        config.do_sample = False
        tokens = ov.Tensor(np.asarray([ids], dtype=np.int64))
        mask = ov.Tensor(np.ones((1, len(ids)), dtype=np.int64))
        result = self.pipe.generate(ov_genai.TokenizedInputs(tokens, mask), config, _Streamer(on_token))
        metrics = result.perf_metrics
        return {"ttft_ms": float(metrics.get_ttft().mean), "tpot_ms": float(metrics.get_tpot().mean)}


if __name__ == "__main__":
    serve(OpenVinoGenAI())
