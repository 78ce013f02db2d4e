"""transformers: a Hugging Face decoder folder run by its own modeling code on PyTorch, one request's cache each.

The model is the folder the config names, or the folder an ONNX export names in its metadata (pbh.source.path,
written when PBH converted the folder for the ONNX engines). The decoder calls the model's forward with its
key-value cache (a DynamicCache per request), the step `generate` repeats, so every token is timed on its own.
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("USE_TF", "0")

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM, DynamicCache

from pbh_worker import About, Engine, Loaded, Model, Precision, TensorSpec, WorkerError, serve
from pbh_worker.sources import hf_folder

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
NAMES = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}


def source_folder(path: str) -> str:
    """The Hugging Face folder to load: `path` itself, or the one an ONNX export that PBH made names."""
    folder = hf_folder(path, "transformers")
    if folder is None:
        raise WorkerError(
            "unsupported_model",
            f"{path} is not a Hugging Face folder (config.json, weights, tokenizer.json) nor PBH's export of one: the "
            "transformers engine runs the folder save_pretrained wrote. Name that folder in models[].path, or run this file on onnxruntime or openvino.",
        )
    return folder


class _Decoder:
    def __init__(self, model: Any) -> None:
        self.model = model

    def start(self) -> Any:
        return None

    def step(self, state: Any, ids: list[int]) -> tuple[np.ndarray, Any]:
        cache = DynamicCache() if state is None else state
        with torch.inference_mode():
            out = self.model(input_ids=torch.tensor([ids], dtype=torch.long), past_key_values=cache, use_cache=True)
        return out.logits[0].float().numpy(), out.past_key_values


class Transformers(Engine):
    def __init__(self) -> None:
        self.model: Any = None

    def about(self) -> About:
        return About(version=f"transformers {transformers.__version__}, torch {torch.__version__}", details={"torch": torch.__version__})

    def load(self, model: Model) -> Loaded:
        folder = source_folder(model.path)
        threads = model.options.get("threads")
        if threads:
            torch.set_num_threads(int(threads))
        dtype = DTYPES.get(model.precision)
        if dtype is None:
            raise WorkerError("unsupported", f"transformers runs fp32 or bf16 here, not {model.precision}")
        try:
            self.model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, local_files_only=True).eval()
        except (OSError, ValueError) as e:
            raise WorkerError("unsupported_model", f"transformers cannot load {folder}: {e}") from e
        executed = {p.dtype for p in self.model.parameters()}
        names = sorted(NAMES.get(d, str(d)) for d in executed)
        config = self.model.config
        return Loaded(
            inputs=[TensorSpec("input_ids", "int64", [None, None])],
            outputs=[TensorSpec("logits", "float32", [None, None, int(config.vocab_size)])],
            precision=Precision("+".join(names), "the dtypes of the loaded model's parameters"),
            threads=torch.get_num_threads(),
            facts={"source": folder, "architecture": type(self.model).__name__, "cache": "DynamicCache per request", "attn_implementation": str(getattr(config, "_attn_implementation", "unknown"))},
        )

    def bind(self, batch):
        ids = torch.from_numpy(np.ascontiguousarray(batch["input_ids"], dtype=np.int64))

        def call() -> Any:
            with torch.inference_mode():
                return self.model(input_ids=ids, use_cache=False).logits

        return call

    def outputs(self, result: Any) -> dict[str, np.ndarray]:
        return {"logits": result.float().numpy()}

    def decoder(self) -> _Decoder:
        return _Decoder(self.model)


if __name__ == "__main__":
    serve(Transformers())
