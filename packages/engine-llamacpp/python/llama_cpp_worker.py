"""llama.cpp through llama-cpp-python: its own greedy generate loop on a GGUF, one request at a time.

The model is a Hugging Face folder (or PBH's ONNX export of one, whose metadata names it) that llama.cpp's own
converter turns into a GGUF once, kept beside PBH's export and keyed by the converter's release and the output type:
f32 for precision fp32, f16 for fp16. The precision that runs is read back from the GGUF's file type. Each request
starts from an empty cache (llama-cpp-python would otherwise reuse a cached prefix of the previous prompt); the loop
samples greedily and hands every token over as it is sampled, so PBH times each one, and llama.cpp's own counters
(llama_perf_context: prompt eval and eval times) stand beside. Perplexity and the gate's ranks read llama.cpp's
logits of every position through the same context (capability decoder), outside any timed region.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any, Callable

import llama_cpp
import numpy as np

from pbh_worker import About, Engine, Loaded, Model, Precision, TensorSpec, WorkerError, serve
from pbh_worker.sources import build_home, hf_folder

# The GGUF output type per precision asked for, and what each GGUF file type executes as on ggml's CPU backend
# (f16 weights multiply against activations converted to f16).
OUTTYPES = {"fp32": "f32", "fp16": "f16"}
FILE_TYPES = {0: ("fp32", "f32", None), 1: ("fp16", "f16", None)}
CONVERTER = os.path.join(os.path.dirname(os.path.realpath(__file__)), "hf_to_gguf.py")


def _convert(source: str, out: str, outtype: str) -> None:
    """llama.cpp's convert_hf_to_gguf.py (hf_to_gguf.py beside this file runs it), written atomically."""
    partial = out + ".partial"
    command = [sys.executable, CONVERTER, "--outtype", outtype, "--outfile", partial, source]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not os.path.isfile(partial):
        said = " ".join(line for line in done.stderr.strip().splitlines()[-4:] if line.strip())
        raise WorkerError("unsupported_model", f"llama.cpp's convert_hf_to_gguf.py could not convert {source} to GGUF: {said[-700:]}. Run this model on onnxruntime, openvino or transformers")
    os.replace(partial, out)


def _file_type(metadata: dict[str, str], path: str) -> tuple[str, str, str | None]:
    """(executed, the GGUF type's name, weight compression) from general.file_type, as llama.cpp read the file."""
    raw = metadata.get("general.file_type")
    if raw is None or int(raw) not in FILE_TYPES:
        raise WorkerError("unsupported_model", f"{path} has GGUF file type {raw}; this engine runs f32 and f16 GGUFs (general.file_type 0 or 1)")
    return FILE_TYPES[int(raw)]


class _Decoder:
    """llama.cpp's logits of every fed position, for perplexity and the gate's ranks (never for timing): one request's
    tokens in the context at a time, re-fed from the start when another request's were there."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm
        self.held: list[int] = []

    def start(self) -> list[int]:
        return []

    def step(self, state: list[int], ids: list[int]) -> tuple[np.ndarray, list[int]]:
        llm, vocab = self.llm, self.llm.n_vocab()
        fed = state + ids
        if len(fed) > llm.n_ctx():
            raise WorkerError("bad_request", f"{len(fed)} tokens do not fit llama-cpp's context of {llm.n_ctx()}: raise the engine option contextLength")
        start = len(state) if self.held == state else 0
        llm.reset()
        llm._ctx.kv_cache_seq_rm(-1, start, -1)  # noqa: SLF001 - llama-cpp-python keeps its context private; eval() would keep one row of logits only
        rows: list[np.ndarray] = []
        for i in range(start, len(fed), llm.n_batch):
            chunk = fed[i:i + llm.n_batch]
            llm._batch.set_batch(batch=chunk, n_past=i, logits_all=True)  # noqa: SLF001
            llm._ctx.decode(llm._batch)  # noqa: SLF001
            rows.append(np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(len(chunk) * vocab,)).reshape(len(chunk), vocab).copy())  # noqa: SLF001
        self.held = fed
        return np.concatenate(rows)[-len(ids):], fed


class LlamaCpp(Engine):
    def __init__(self) -> None:
        self.llm: Any = None
        self.scorer: _Decoder | None = None

    def about(self) -> About:
        system = llama_cpp.llama_print_system_info().decode()
        return About(version=llama_cpp.__version__, details={"system_info": system.strip()})

    def _gguf(self, model: Model) -> tuple[str, dict[str, Any]]:
        if model.path.endswith(".gguf") and os.path.isfile(model.path):
            return model.path, {"converted": False}
        source = hf_folder(model.path, "llama-cpp")
        if source is None:
            raise WorkerError(
                "unsupported_model",
                f"{model.path} is neither a GGUF file nor a Hugging Face folder: llama.cpp runs a GGUF. Name the Hugging Face folder in models[].path (PBH converts it once).",
            )
        import llama_cpp_converter  # noqa: PLC0415 - kept by pbh doctor --fix --engine llama-cpp

        outtype = OUTTYPES[model.precision]
        base = build_home(model.path, model.work_dir, "llama-cpp")
        out = os.path.join(base, f"model-llama-cpp-{llama_cpp.__version__}-{outtype}.gguf")
        cached = os.path.isfile(out)
        if not cached:
            _convert(source, out, outtype)
        return out, {"converted": not cached, "source": source, "converter": f"{llama_cpp_converter.SOURCE} (--outtype {outtype}, with its own gguf-py)"}

    def load(self, model: Model) -> Loaded:
        if model.precision not in OUTTYPES:
            raise WorkerError("unsupported", f"llama-cpp runs {sorted(OUTTYPES)} here, not {model.precision}")
        path, facts = self._gguf(model)
        threads = model.options.get("threads")
        kwargs: dict[str, Any] = {"n_threads": int(threads), "n_threads_batch": int(threads)} if threads else {}
        self.llm = llama_cpp.Llama(model_path=path, n_ctx=int(model.options.get("contextLength") or 512), seed=model.seed, verbose=False, **kwargs)
        executed, type_name, weights = _file_type(self.llm.metadata, path)
        if executed != model.precision:
            raise WorkerError("unsupported_model", f"{path} is a {type_name} GGUF, which runs as {executed}; precision {model.precision} was asked for: name a {OUTTYPES[model.precision]} GGUF, or the Hugging Face folder")
        return Loaded(
            inputs=[TensorSpec("input_ids", "int32", [None])],
            outputs=[TensorSpec("logits", "float32", [None, self.llm.n_vocab()])],
            precision=Precision(executed, f"the GGUF's general.file_type as llama.cpp loaded it: {type_name}", weights),
            threads=int(llama_cpp.llama_n_threads(self.llm.ctx)),
            facts={**facts, "gguf": path, "architecture": self.llm.metadata.get("general.architecture"), "loop": "Llama.generate, greedy (temp 0), cache cleared per request"},
        )

    def bind(self, batch):
        raise WorkerError("unsupported", "llama-cpp runs the generate workload only (llama.cpp owns the cache): add a generate: block to the config")

    def decoder(self) -> _Decoder:
        self.scorer = self.scorer or _Decoder(self.llm)
        return self.scorer

    def stream(self, ids: list[int], max_new_tokens: int, on_token: Callable[[int], None]) -> dict[str, float]:
        llm = self.llm
        # An empty cache per request: llama-cpp-python keeps the last prompt's cache and would skip a shared prefix.
        llm.reset()
        if self.scorer is not None:
            self.scorer.held = []
        llama_cpp.llama_perf_context_reset(llm.ctx)
        n = 0
        for token in llm.generate(ids, top_k=1, top_p=1.0, min_p=0.0, typical_p=1.0, temp=0.0, repeat_penalty=1.0, reset=True):
            on_token(int(token))
            n += 1
            if n >= max_new_tokens:
                break
        perf = llama_cpp.llama_perf_context(llm.ctx)
        return {
            "prompt_eval_ms": float(perf.t_p_eval_ms),
            "prompt_eval_tokens": float(perf.n_p_eval),
            "eval_ms_per_token": float(perf.t_eval_ms) / max(int(perf.n_eval), 1),
            "eval_tokens": float(perf.n_eval),
        }

    def close(self) -> None:
        if self.llm is not None:
            self.llm.close()


if __name__ == "__main__":
    serve(LlamaCpp())
