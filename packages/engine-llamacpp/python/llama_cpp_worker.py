"""llama.cpp through llama-cpp-python: its own greedy generate loop on a GGUF, one request at a time.

The model is a GGUF, or a Hugging Face folder that llama.cpp's own converter turns into a GGUF once (f32 for
precision fp32, f16 for fp16), kept beside PBH's export and keyed by the converter's release and the output type; the
harness hands PBH's ONNX export of either, whose metadata names the source. Option quant makes a GGUF quant type of
it with llama.cpp's own quantizer. What runs is read back from the GGUF's tensor types. Each request
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

# The GGUF output type per precision asked for (on ggml's CPU backend f16 weights multiply f16 activations).
OUTTYPES = {"fp32": "f32", "fp16": "f16"}
# GGUF quant types (engine option quant) as llama_model_quantize takes them. Their dot products run on 8-bit
# quantized activation blocks (ggml's q8_0/q8_K vec_dot types), so they execute as int8 whatever the weights' bits.
QUANTS = {"Q8_0": llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0, "Q4_0": llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_0, "Q4_K_M": llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_K_M, "Q5_K_M": llama_cpp.LLAMA_FTYPE_MOSTLY_Q5_K_M}
QUANT_BITS = {"Q8": "int8", "Q6": "int6", "Q5": "int5", "Q4": "int4"}
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


def _gguf_source(path: str) -> str | None:
    """The GGUF a user named, behind PBH's ONNX export of it (its metadata: pbh.source.format gguf)."""
    if not path.endswith(".onnx") or not os.path.isfile(path):
        return None
    import onnx  # noqa: PLC0415

    meta = {p.key: p.value for p in onnx.load(path, load_external_data=False).metadata_props}
    source = meta.get("pbh.source.path")
    return source if meta.get("pbh.source.format") == "gguf" and source and os.path.isfile(source) else None


def _quantize(source: str, out: str, quant: str) -> None:
    """llama.cpp's own quantizer (llama_model_quantize) from the f32/f16 GGUF, written atomically."""
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = QUANTS[quant]
    partial = out + ".partial"
    if llama_cpp.llama_model_quantize(source.encode(), partial.encode(), params) != 0 or not os.path.isfile(partial):
        raise WorkerError("unsupported_model", f"llama_model_quantize could not make a {quant} GGUF of {source}")
    os.replace(partial, out)


def _weights_read_back(path: str) -> tuple[str, str | None, str]:
    """(executed, weight compression, evidence) from the GGUF's tensor types as written: llama.cpp falls back to
    another type for a tensor whose rows do not fit a type's blocks, so the file type alone does not say what is there."""
    from gguf import GGUFReader  # noqa: PLC0415 - the gguf package of requirements-llama-cpp.txt

    census: dict[str, int] = {}
    for tensor in GGUFReader(path).tensors:
        kind = tensor.tensor_type.name
        census[kind] = census.get(kind, 0) + 1
    said = "GGUF tensor types: " + ", ".join(f"{n} {k}" for k, n in sorted(census.items()))
    quantized = {k: n for k, n in census.items() if k[:2] in QUANT_BITS}
    if quantized:
        # The weights' bits: the type most tensors have (a Q4_K_M file keeps some tensors at Q6_K).
        top = max(sorted(quantized), key=lambda k: quantized[k])
        return "int8", QUANT_BITS[top[:2]], said
    for kind, executed in (("F16", "fp16"), ("BF16", "bf16")):
        if census.get(kind):
            return executed, None, said
    return "fp32", None, said


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
        """The GGUF to run: the one the user named, else the Hugging Face folder's converted once; option quant's of it."""
        out, facts = self._source_gguf(model)
        quant = model.options.get("quant")
        if not quant:
            return out, facts
        quantized = os.path.join(build_home(model.path, model.work_dir, "llama-cpp"), os.path.basename(out)[: -len(".gguf")] + f"-{quant}.gguf")
        if not os.path.isfile(quantized):
            _quantize(out, quantized, str(quant))
        return quantized, {**facts, "quantizer": f"llama_model_quantize {quant} (llama-cpp-python {llama_cpp.__version__}) of {os.path.basename(out)}"}

    def _source_gguf(self, model: Model) -> tuple[str, dict[str, Any]]:
        named = model.path if model.path.endswith(".gguf") and os.path.isfile(model.path) else _gguf_source(model.path)
        if named is not None:
            return named, {"converted": False, "source": named}
        source = hf_folder(model.path, "llama-cpp")
        if source is None:
            raise WorkerError(
                "unsupported_model",
                f"{model.path} is neither a GGUF file nor a Hugging Face folder: llama.cpp runs a GGUF. Name either in models[].path (PBH converts a folder once).",
            )
        import llama_cpp_converter  # noqa: PLC0415 - kept by pbh doctor --fix --engine llama-cpp

        outtype = OUTTYPES[model.precision]
        out = os.path.join(build_home(model.path, model.work_dir, "llama-cpp"), f"model-llama-cpp-{llama_cpp.__version__}-{outtype}.gguf")
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
        executed, weights, evidence = _weights_read_back(path)
        if weights is None and executed != model.precision:
            fix = f"set precision: {executed} on this engine" if executed in OUTTYPES else "convert it to an f32 or f16 GGUF"
            raise WorkerError("unsupported_model", f"{path} runs as {executed} ({evidence}); precision {model.precision} was asked for: {fix}, or name the Hugging Face folder")
        return Loaded(
            inputs=[TensorSpec("input_ids", "int32", [None])],
            outputs=[TensorSpec("logits", "float32", [None, self.llm.n_vocab()])],
            precision=Precision(executed, f"{evidence}; general.file_type {self.llm.metadata.get('general.file_type')}" + ("; quantized dot products run on 8-bit activation blocks" if weights else ""), weights),
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
