"""ONNX Runtime GenAI: its own decoder graph and key-value cache management, one Generator per request.

The model is a GenAI folder (genai_config.json, as `python -m onnxruntime_genai.models.builder` writes; the harness
hands over its export of the folder's decoder, whose metadata names the folder), or a Hugging Face folder that this
engine builds into one, once, beside PBH's ONNX export of it (keyed by that export's folder, so by the source's
content, and by the builder's version and precision). Each request holds a Generator.

Timed requests run the runtime's own loop (`stream`: append_tokens for the prompt, then generate_next_token with its
greedy search, each token timed as it is read back), as a user of the runtime writes it. Perplexity and the gate's
token ranks read logits (`decoder`: append_tokens of the fed tokens, the logits read back), outside the timed region.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Any, Callable

os.environ.setdefault("USE_TF", "0")

import numpy as np
import onnxruntime_genai as og

from pbh_worker import About, Engine, Loaded, Model, Precision, TensorSpec, WorkerError, serve
from pbh_worker.sources import build_home, hf_folder, recorded_source
from pbh_worker.weights import weight_compression

CONFIG = "genai_config.json"
# The builder's -p for each `weights` option: fp32 weights, or int4 (MatMulNBits, blocks of 32; activations fp32).
BUILDER_PRECISION = {"fp32": "fp32", "int4": "int4"}


def _build(source: str, out: str, precision: str) -> None:
    """ONNX Runtime GenAI's model builder on a Hugging Face folder (its command line: the stable interface), written
    atomically so a killed build leaves no folder behind."""
    partial = out + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    command = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", source, "-o", partial, "-p", BUILDER_PRECISION[precision], "-e", "cpu", "-c", os.path.join(partial, "cache")]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "USE_TF": "0"}, check=False)
    if done.returncode != 0:
        said = " ".join(line for line in done.stderr.strip().splitlines()[-3:])
        raise WorkerError("unsupported_model", f"onnxruntime-genai {og.__version__}'s model builder could not build {source}: {said[-600:]}. Run this model on onnxruntime, openvino or transformers")
    shutil.rmtree(os.path.join(partial, "cache"), ignore_errors=True)
    os.replace(partial, out)


class _Decoder:
    def __init__(self, model: Any, max_length: int) -> None:
        self.model, self.max_length = model, max_length

    def start(self) -> Any:
        params = og.GeneratorParams(self.model)
        params.set_search_options(max_length=self.max_length, do_sample=False)
        return og.Generator(self.model, params)

    def step(self, state: Any, ids: list[int]) -> tuple[np.ndarray, Any]:
        state.append_tokens(np.asarray(ids, dtype=np.int32))
        # The prompt's logits for every position (perplexity reads them all); one row per decode step.
        logits = state.get_output("logits") if len(ids) > 1 else state.get_logits()
        return np.asarray(logits, dtype=np.float32).reshape(len(ids) if len(ids) > 1 else 1, -1), state


class OnnxRuntimeGenAI(Engine):
    def __init__(self) -> None:
        self.model: Any = None
        self.max_length = 0

    def about(self) -> About:
        return About(version=og.__version__)

    def _folder(self, model: Model) -> tuple[str, dict[str, Any]]:
        if os.path.isdir(model.path) and os.path.isfile(os.path.join(model.path, CONFIG)):
            return model.path, {"built": False}
        given = recorded_source(model.path, "onnxruntime-genai")
        if given and given[1] == "onnxruntime_genai":
            # The folder the user named runs as its builder made it: the weights option builds from a Hugging Face folder only.
            if model.options.get("weights") == "int4":
                raise WorkerError("bad_request", f"options.weights int4 builds from a Hugging Face folder; {given[0]} is a GenAI folder, built already: drop the option (its weights are read from its graph) or name the Hugging Face folder")
            return given[0], {"built": False, "source": given[0], "builder": "none: the GenAI folder named in models[].path runs as it is"}
        source = hf_folder(model.path, "onnxruntime-genai")
        if source is None:
            raise WorkerError(
                "unsupported_model",
                f"{model.path} is neither an ONNX Runtime GenAI folder ({CONFIG}) nor a Hugging Face folder: onnxruntime-genai runs its own "
                "decoder graph. Name the Hugging Face folder in models[].path (PBH builds the GenAI model once), or build one with "
                "python -m onnxruntime_genai.models.builder -i HF_FOLDER -o OUT -p fp32 -e cpu.",
            )
        weights = str(model.options.get("weights") or "fp32")
        base = build_home(model.path, model.work_dir, "onnxruntime-genai")
        out = os.path.join(base, f"genai-{og.__version__}-{weights}")
        builder = f"onnxruntime_genai.models.builder {og.__version__} -p {BUILDER_PRECISION[weights]} -e cpu"
        if not os.path.isfile(os.path.join(out, CONFIG)):
            _build(source, out, weights)
            return out, {"built": True, "source": source, "builder": builder}
        return out, {"built": False, "source": source, "builder": f"{builder} (cached)"}

    def load(self, model: Model) -> Loaded:
        if model.precision != "fp32":
            raise WorkerError("unsupported", f"onnxruntime-genai runs fp32 activations here (int4 weights through the weights option), not {model.precision}")
        folder, facts = self._folder(model)
        with open(os.path.join(folder, CONFIG), encoding="utf-8") as f:
            genai = json.load(f)
        config = og.Config(folder)
        config.clear_providers()
        threads = model.options.get("threads")
        if threads:
            # The decoder's ONNX Runtime session options live in genai_config.json; overlay changes them for this load only.
            config.overlay(json.dumps({"model": {"decoder": {"session_options": {"intra_op_num_threads": int(threads)}}}}))
        self.model = og.Model(config)
        self.max_length = int(genai["model"]["context_length"])
        decoder = genai["model"]["decoder"]
        vocab = int(genai["model"]["vocab_size"])
        weights, weights_evidence, int8 = weight_compression(os.path.join(folder, str(decoder.get("filename") or "model.onnx")))
        return Loaded(
            inputs=[TensorSpec("input_ids", "int64", [None, None])],
            outputs=[TensorSpec("logits", "float32", [None, None, vocab])],
            precision=Precision("int8" if int8 else "fp32", f"fp32 inputs and outputs of the decoder in {CONFIG}; {weights_evidence}", weights),
            facts={**facts, "folder": folder, "decoder": str(decoder.get("filename")), "context_length": self.max_length, "search": "timed: the runtime's greedy search (generate_next_token, min_length the request's full length); perplexity and the gate's ranks: append_tokens, logits read back"},
        )

    def bind(self, batch):
        raise WorkerError("unsupported", "onnxruntime-genai runs the generate workload only (it manages its own cache): add a generate: block to the config")

    def decoder(self) -> _Decoder:
        return _Decoder(self.model, self.max_length)

    def stream(self, ids: list[int], max_new_tokens: int, on_token: Callable[[int], None]) -> dict[str, float]:
        # The request's Generator is made inside its time to first token, as a user's loop makes it. min_length keeps
        # the end-of-sequence token from stopping the run short (as openvino-genai's min_new_tokens does).
        params = og.GeneratorParams(self.model)
        length = len(ids) + max_new_tokens
        if length > self.max_length:
            raise WorkerError("bad_request", f"a request reaches {length} positions and the model's context_length is {self.max_length}: shorten the prompts or generate.max_new_tokens")
        params.set_search_options(max_length=length, min_length=length, do_sample=False)
        generator = og.Generator(self.model, params)
        generator.append_tokens(np.asarray(ids, dtype=np.int32))
        step, read = generator.generate_next_token, generator.get_next_tokens
        for _ in range(max_new_tokens):
            step()
            on_token(read()[0])
        return {}


if __name__ == "__main__":
    serve(OnnxRuntimeGenAI())
