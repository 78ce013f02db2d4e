"""transformers: a Hugging Face decoder folder run by its own modeling code on PyTorch, one request's cache each.

The model is the folder the config names, or the folder an ONNX export names in its metadata (pbh.source.path,
written when PBH converted the folder for the ONNX engines). The decoder calls the model's forward with its
key-value cache, the step `generate` repeats, so every token is timed on its own. The cache is a DynamicCache per
request (growing), or with `cache: static` a StaticCache of `maxCacheLen` positions (transformers' fixed-shape cache);
`compile: true` then runs the one-token decode step through torch.compile (inductor; fixed shapes, so one graph), as
gpt-fast and transformers' own static-cache recipe do, while prefills of varying length stay eager. The compile
happens at load, on a throwaway request, so no timed token pays it.

The same file serves `transformers-generate`, which declares `stream`: its timed requests run transformers' own
`generate` (greedy, min_new_tokens the request's length, a streamer stamping each token as generate picks it), one at
a time, as users of transformers run it; the decoder above still scores perplexity and the gate's ranks.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable

os.environ.setdefault("USE_TF", "0")

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM, DynamicCache, GenerationConfig, StaticCache

from pbh_worker import About, Engine, Loaded, Model, Precision, TensorSpec, WorkerError, serve
from pbh_worker.manifest import declared
from pbh_worker.sources import hf_folder, recorded_source

# pbh.source.format of PBH's exports, as a user names the thing.
FORMATS = {"openvino_ir": "an OpenVINO IR folder", "onnxruntime_genai": "an ONNX Runtime GenAI folder"}

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
NAMES = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}


def source_folder(path: str) -> str:
    """The Hugging Face folder to load: `path` itself, or the one an ONNX export that PBH made names."""
    folder = hf_folder(path, "transformers")
    given = recorded_source(path, "transformers") if folder is None else None
    if given is not None:
        # PBH's export of another folder format (an OpenVINO IR, a GenAI folder): there is no Hugging Face folder to load.
        raise WorkerError(
            "unsupported_model",
            f"{given[0]} is {FORMATS.get(given[1], f'a {given[1]} model')}, not a Hugging Face folder: the transformers engine runs the folder save_pretrained wrote. "
            "Name the Hugging Face folder it was made from in models[].path, or run this model on onnxruntime or openvino.",
        )
    if folder is None:
        raise WorkerError(
            "unsupported_model",
            f"{path} is not a Hugging Face folder (config.json, weights, tokenizer.json) nor PBH's export of one: the "
            "transformers engine runs the folder save_pretrained wrote. Name that folder in models[].path, or run this file on onnxruntime or openvino.",
        )
    return folder


class _Decoder:
    """A request's state: (cache, positions fed). `decode` runs one-token steps (the compiled forward, or the model)."""

    def __init__(self, model: Any, max_cache_len: int | None, decode: Any) -> None:
        self.model, self.max_cache_len, self.decode = model, max_cache_len, decode

    def start(self) -> Any:
        if self.max_cache_len is None:
            return DynamicCache(), 0
        return StaticCache(config=self.model.config, max_cache_len=self.max_cache_len), 0

    def step(self, state: Any, ids: list[int]) -> tuple[np.ndarray, Any]:
        cache, past = state
        n = len(ids)
        if self.max_cache_len is not None and past + n > self.max_cache_len:
            raise WorkerError("bad_request", f"a request reaches {past + n} positions and the static cache holds {self.max_cache_len}: raise options.maxCacheLen")
        forward = self.decode if n == 1 else self.model
        # Inference mode is on for the worker's life (Transformers.load): a context per step costs ~18 µs a token.
        out = forward(input_ids=torch.tensor([ids], dtype=torch.long), past_key_values=cache, cache_position=torch.arange(past, past + n), use_cache=True)
        return out.logits[0].float().numpy(), (cache, past + n)


class _TokenStreamer:
    """generate's streamer: put() receives the prompt first, then each new token as generate picks it."""

    def __init__(self, on_token: Callable[[int], None]) -> None:
        self.on_token, self.prompt_seen = on_token, False

    def put(self, value: Any) -> None:
        if not self.prompt_seen:
            self.prompt_seen = True
            return
        self.on_token(int(value.reshape(-1)[0]))

    def end(self) -> None:
        pass


class Transformers(Engine):
    def __init__(self) -> None:
        self.model: Any = None
        self.max_cache_len: int | None = None
        self.decode: Any = None
        self.greedy: Any = None
        self.inference: Any = None

    def about(self) -> About:
        return About(version=f"transformers {transformers.__version__}, torch {torch.__version__}", details={"torch": torch.__version__})

    def load(self, model: Model) -> Loaded:
        # The worker only infers, on its main thread: inference mode stays on from here (torch keeps it per thread),
        # so no timed step enters and leaves it.
        if self.inference is None:
            self.inference = torch.inference_mode()
            self.inference.__enter__()
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
        cache_facts = self._cache(model.options, config)
        eos = config.eos_token_id[0] if isinstance(config.eos_token_id, list) else config.eos_token_id
        pad = config.pad_token_id if config.pad_token_id is not None else eos if eos is not None else 0
        # Greedy and nothing else: a folder's generation_config.json (repetition penalty, sampling) does not apply.
        self.greedy = GenerationConfig(do_sample=False, num_beams=1, pad_token_id=pad, eos_token_id=eos)
        loop = "transformers' generate (greedy, min_new_tokens the request's length), a streamer stamping each token" if declared().capabilities.get("stream") else "the model's forward per step with its cache, the harness picking each token"
        return Loaded(
            inputs=[TensorSpec("input_ids", "int64", [None, None])],
            outputs=[TensorSpec("logits", "float32", [None, None, int(config.vocab_size)])],
            precision=Precision("+".join(names), "the dtypes of the loaded model's parameters"),
            threads=torch.get_num_threads(),
            facts={"source": folder, "architecture": type(self.model).__name__, **cache_facts, "attn_implementation": str(getattr(config, "_attn_implementation", "unknown")), "timed_loop": loop},
        )

    def _cache(self, options: Any, config: Any) -> dict[str, Any]:
        """The cache kind and, with compile, the compiled decode step (compiled here, on a throwaway request)."""
        self.decode = self.model
        if options.get("cache", "dynamic") == "dynamic":
            if options.get("compile"):
                raise WorkerError("bad_request", "options.compile needs options.cache: static: a compiled decode step needs the fixed shapes of a static cache")
            return {"cache": "DynamicCache per request"}
        positions = int(getattr(config, "max_position_embeddings", 0) or 0)
        self.max_cache_len = int(options.get("maxCacheLen") or min(positions or 2048, 4096))
        facts: dict[str, Any] = {"cache": f"StaticCache per request, {self.max_cache_len} positions", "compiled": None}
        if options.get("compile"):
            start = time.perf_counter()
            self.decode = torch.compile(self.model, dynamic=False)
            decoder = self.decoder()
            state = decoder.start()
            for ids in ([0, 0], [0], [0]):
                _, state = decoder.step(state, ids)
            facts["compiled"] = f"torch.compile (inductor, dynamic=False) of the one-token decode step; prefill eager; compiled at load in {time.perf_counter() - start:.1f} s"
        return facts

    def bind(self, batch):
        ids = torch.from_numpy(np.ascontiguousarray(batch["input_ids"], dtype=np.int64))

        def call() -> Any:
            return self.model(input_ids=ids, use_cache=False).logits

        return call

    def outputs(self, result: Any) -> dict[str, np.ndarray]:
        return {"logits": result.float().numpy()}

    def decoder(self) -> _Decoder:
        return _Decoder(self.model, self.max_cache_len, self.decode)

    def stream(self, ids: list[int], max_new_tokens: int, on_token: Callable[[int], None]) -> dict[str, float]:
        x = torch.tensor([ids], dtype=torch.long)
        cache: dict[str, Any] = {}
        if self.max_cache_len is not None:
            if len(ids) + max_new_tokens > self.max_cache_len:
                raise WorkerError("bad_request", f"a request reaches {len(ids) + max_new_tokens} positions and the static cache holds {self.max_cache_len}: raise options.maxCacheLen")
            cache["past_key_values"] = StaticCache(config=self.model.config, max_cache_len=self.max_cache_len)
        self.model.generate(x, attention_mask=torch.ones_like(x), generation_config=self.greedy, max_new_tokens=max_new_tokens, min_new_tokens=max_new_tokens, streamer=_TokenStreamer(on_token), **cache)
        return {}


if __name__ == "__main__":
    serve(Transformers())
