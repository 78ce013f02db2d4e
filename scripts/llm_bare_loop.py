"""A bare greedy-generation loop over one runtime's own API, for npm run bench:llm to set beside PBH's figures.

    .venv/bin/python scripts/llm_bare_loop.py ENGINE FOLDER PROMPTS.json MAX_NEW THREADS

ENGINE is transformers (model.generate with a streamer), onnxruntime (optimum's ORTModelForCausalLM.generate on the
Optimum export in FOLDER/onnx... given as the export folder), onnxruntime-genai (its generate_next_token loop) or
openvino (a compiled model fed by hand, OpenVINO having no generate of its own for an ONNX decoder). PROMPTS.json
holds the token ids PBH fed. Prints {"ttft_ms": [...], "tpot_ms": [...]} per request: TTFT from the call to the first
new token, TPOT the mean gap of the rest, as PBH reports them.
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("USE_TF", "0")
ns = time.perf_counter_ns


class Stamps:
    """A transformers streamer that timestamps each new token (put() first receives the prompt)."""

    def __init__(self) -> None:
        self.times: list[int] = []
        self.prompt_seen = False

    def put(self, value) -> None:
        if not self.prompt_seen:
            self.prompt_seen = True
            return
        self.times.append(ns())

    def end(self) -> None:
        pass


def figures(start: int, times: list[int]) -> tuple[float, float]:
    return (times[0] - start) / 1e6, (times[-1] - times[0]) / max(1, len(times) - 1) / 1e6


def hf_generate(model, prompts, max_new, torch):
    out = []
    for ids in prompts:
        stamps = Stamps()
        x = torch.tensor([ids])
        start = ns()
        model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=max_new, min_new_tokens=max_new, do_sample=False, streamer=stamps, pad_token_id=0)
        out.append(figures(start, stamps.times))
    return out


def main() -> None:
    engine, folder, prompts_file, max_new, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    with open(prompts_file, encoding="utf-8") as f:
        prompts = json.load(f)
    import numpy as np

    if engine == "transformers":
        import torch
        from transformers import AutoModelForCausalLM

        torch.set_num_threads(threads)
        model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True).eval()
        with torch.inference_mode():
            rows = hf_generate(model, prompts, max_new, torch)
    elif engine == "onnxruntime":
        import onnxruntime as ort
        import torch
        from optimum.onnxruntime import ORTModelForCausalLM

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        model = ORTModelForCausalLM.from_pretrained(folder, session_options=options, use_cache=True, use_io_binding=False)
        rows = hf_generate(model, prompts, max_new, torch)
    elif engine == "onnxruntime-genai":
        import onnxruntime_genai as og

        config = og.Config(folder)
        config.clear_providers()
        config.overlay(json.dumps({"model": {"decoder": {"session_options": {"intra_op_num_threads": threads}}}}))
        model = og.Model(config)
        rows = []
        for ids in prompts:
            params = og.GeneratorParams(model)
            params.set_search_options(max_length=len(ids) + max_new, do_sample=False)
            gen = og.Generator(model, params)
            start = ns()
            gen.append_tokens(np.asarray(ids, dtype=np.int32))
            times = []
            for _ in range(max_new):
                gen.generate_next_token()
                gen.get_next_tokens()
                times.append(ns())
            rows.append(figures(start, times))
    elif engine == "openvino":
        import openvino as ov

        compiled = ov.Core().compile_model(os.path.join(folder, "model.onnx"), "CPU", {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY"})
        request = compiled.create_infer_request()
        names = [p.get_any_name() for p in compiled.inputs]
        pasts = [n for n in names if n.startswith("past_key_values.")]
        shape = compiled.input(pasts[0]).get_partial_shape()
        heads, dim = shape[1].get_length(), shape[3].get_length()
        rows = []
        for ids in prompts:
            cache = {n: np.zeros((1, heads, 0, dim), dtype=np.float32) for n in pasts}
            fed, past, times = list(ids), 0, []
            start = ns()
            for _ in range(max_new):
                n = len(fed)
                feeds = {"input_ids": np.asarray([fed], dtype=np.int64), "attention_mask": np.ones((1, past + n), dtype=np.int64), **cache}
                if "position_ids" in names:
                    feeds["position_ids"] = np.arange(past, past + n, dtype=np.int64)[None]
                result = request.infer(feeds)
                out = {k.get_any_name(): v for k, v in result.items()}
                token = int(np.argmax(out["logits"][0, -1]))
                times.append(ns())
                cache = {n: out[n.replace("past_key_values", "present")].copy() for n in pasts}
                past, fed = past + n, [token]
            rows.append(figures(start, times))
    else:
        raise SystemExit(f"unknown engine {engine}")
    print(json.dumps({"ttft_ms": [r[0] for r in rows], "tpot_ms": [r[1] for r in rows]}))


if __name__ == "__main__":
    main()
