"""A bare greedy-generation loop over one runtime's own API, for npm run bench:llm to set beside PBH's figures.

    .venv/bin/python scripts/llm_bare_loop.py ENGINE FOLDER PROMPTS.json MAX_NEW THREADS

ENGINE is transformers (model.generate with a streamer and a greedy GenerationConfig made once, on the Hugging Face
FOLDER), transformers-steps (the model's forward per step with a DynamicCache, the token picked by argmax: what the
transformers engine times), onnxruntime or openvino-onnx (an InferenceSession or a compiled model on FOLDER/model.onnx,
an Optimum export, fed by hand: neither runtime has a generate of its own for it), openvino (optimum-intel's stateful
IR in FOLDER, fed by hand, its cache in the request's state), onnxruntime-genai (its generate_next_token loop on a
GenAI FOLDER), openvino-genai (a ContinuousBatchingPipeline on the IR FOLDER, one request at a time: add_request, step,
each handle's tokens read after the step that made them), or llama-cpp (llama-cpp-python's Llama.generate, greedy, on
the GGUF file FOLDER). One untimed request warms each up. PROMPTS.json holds the token ids PBH fed. Prints {"ttft_ms":
[...], "tpot_ms": [...]} per request: TTFT from the call to the first new token, TPOT the mean gap of the rest, as PBH
reports them.
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


def hf_generate(model, prompts, max_new, torch, greedy):
    out = []
    for ids in prompts:
        stamps = Stamps()
        x = torch.tensor([ids])
        start = ns()
        model.generate(x, attention_mask=torch.ones_like(x), generation_config=greedy, max_new_tokens=max_new, min_new_tokens=max_new, streamer=stamps)
        out.append(figures(start, stamps.times))
    return out


def greedy_config(model):
    """Greedy decoding as a GenerationConfig made once, as the transformers engine makes it: keyword arguments alone make
    generate merge them into the model's own config on every call, 4-10% of a small model's TTFT (docs/measurements.md)."""
    from transformers import GenerationConfig

    config = model.config
    eos = config.eos_token_id[0] if isinstance(config.eos_token_id, list) else config.eos_token_id
    pad = config.pad_token_id if config.pad_token_id is not None else eos if eos is not None else 0
    return GenerationConfig(do_sample=False, num_beams=1, pad_token_id=pad, eos_token_id=eos)


def hand_fed(run, names: list[str], kv_shape: tuple[int, int], prompts, max_new, np):
    """Greedy decoding of an Optimum decoder fed by hand: what a user's loop over a plain session looks like."""
    pasts = [n for n in names if n.startswith("past_key_values.")]
    rows = []
    for ids in prompts:
        start = ns()
        cache = {n: np.zeros((1, kv_shape[0], 0, kv_shape[1]), dtype=np.float32) for n in pasts}
        fed, past, times = list(ids), 0, []
        for _ in range(max_new):
            n = len(fed)
            feeds = {"input_ids": np.asarray([fed], dtype=np.int64), "attention_mask": np.ones((1, past + n), dtype=np.int64), **cache}
            if "position_ids" in names:
                feeds["position_ids"] = np.arange(past, past + n, dtype=np.int64)[None]
            out = run(feeds)
            token = int(np.argmax(out["logits"][0, -1]))
            times.append(ns())
            cache = {p: out[p.replace("past_key_values", "present")] for p in pasts}
            past, fed = past + n, [token]
        rows.append(figures(start, times))
    return rows


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
            greedy = greedy_config(model)
            hf_generate(model, prompts[:1], max_new, torch, greedy)  # warmup
            rows = hf_generate(model, prompts, max_new, torch, greedy)
    elif engine == "transformers-steps":
        import torch
        from transformers import AutoModelForCausalLM, DynamicCache

        torch.set_num_threads(threads)
        model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True).eval()

        def steps(ids):
            start, cache, fed, past, times = ns(), DynamicCache(), list(ids), 0, []
            for _ in range(max_new):
                out = model(input_ids=torch.tensor([fed]), past_key_values=cache, cache_position=torch.arange(past, past + len(fed)), use_cache=True)
                token = int(out.logits[0, -1].argmax())
                times.append(ns())
                past, fed = past + len(fed), [token]
            return figures(start, times)

        with torch.inference_mode():
            steps(prompts[0])  # warmup
            rows = [steps(ids) for ids in prompts]
    elif engine == "onnxruntime":
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        session = ort.InferenceSession(os.path.join(folder, "model.onnx"), options, providers=["CPUExecutionProvider"])
        outputs = [o.name for o in session.get_outputs()]
        past = next(i for i in session.get_inputs() if i.name == "past_key_values.0.key")
        run = lambda feeds: dict(zip(outputs, session.run(None, feeds)))  # noqa: E731
        names = [i.name for i in session.get_inputs()]
        hand_fed(run, names, (past.shape[1], past.shape[3]), prompts[:1], max_new, np)  # warmup
        rows = hand_fed(run, names, (past.shape[1], past.shape[3]), prompts, max_new, np)
    elif engine == "onnxruntime-genai":
        import onnxruntime_genai as og

        config = og.Config(folder)
        config.clear_providers()
        config.overlay(json.dumps({"model": {"decoder": {"session_options": {"intra_op_num_threads": threads}}}}))
        model = og.Model(config)
        def one(ids):
            # The request's state is part of its time to first token, as it is in PBH's loop.
            start = ns()
            params = og.GeneratorParams(model)
            params.set_search_options(max_length=len(ids) + max_new, do_sample=False)
            gen = og.Generator(model, params)
            gen.append_tokens(np.asarray(ids, dtype=np.int32))
            times = []
            for _ in range(max_new):
                gen.generate_next_token()
                gen.get_next_tokens()
                times.append(ns())
            return figures(start, times)

        one(prompts[0])  # warmup
        rows = [one(ids) for ids in prompts]
    elif engine == "openvino-onnx":
        import openvino as ov

        # f32 as PBH asks for it: the CPU plugin's own default is bf16 where the CPU has AMX or AVX-512 BF16.
        compiled = ov.Core().compile_model(os.path.join(folder, "model.onnx"), "CPU", {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32"})
        request = compiled.create_infer_request()
        names = [p.get_any_name() for p in compiled.inputs]
        shape = compiled.input("past_key_values.0.key").get_partial_shape()

        def run(feeds):
            # Inputs shared, as optimum-intel's OVModelForCausalLM feeds its request; outputs come back as copies.
            return {k.get_any_name(): v for k, v in request.infer(feeds, share_inputs=True).items()}

        kv = (shape[1].get_length(), shape[3].get_length())
        hand_fed(run, names, kv, prompts[:1], max_new, np)  # warmup
        rows = hand_fed(run, names, kv, prompts, max_new, np)
    elif engine == "openvino":
        import openvino as ov

        # FOLDER is optimum-intel's stateful IR: the cache lives in the request's state, reset per request; f32 and the
        # cache in f32, as PBH's openvino engine asks for them; inputs shared, as optimum-intel feeds its request.
        config = {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32"}
        request = ov.Core().compile_model(os.path.join(folder, "openvino_model.xml"), "CPU", config).create_infer_request()
        beam = np.zeros(1, dtype=np.int32)

        def one(ids):
            start, fed, past, times = ns(), list(ids), 0, []
            request.reset_state()
            for _ in range(max_new):
                n = len(fed)
                feeds = {"input_ids": np.asarray([fed], dtype=np.int64), "attention_mask": np.ones((1, past + n), dtype=np.int64),
                         "position_ids": np.arange(past, past + n, dtype=np.int64)[None], "beam_idx": beam}
                token = int(np.argmax(request.infer(feeds, share_inputs=True)["logits"][0, -1]))
                times.append(ns())
                past, fed = past + n, [token]
            return figures(start, times)

        one(prompts[0])  # warmup
        rows = [one(ids) for ids in prompts]
    elif engine == "llama-cpp":
        import llama_cpp

        # FOLDER is the GGUF the llama-cpp engine converted (its facts name it).
        llm = llama_cpp.Llama(model_path=folder, n_ctx=512, n_threads=threads, n_threads_batch=threads, verbose=False)

        def one(ids):
            llm.reset()
            start, times = ns(), []
            for _ in llm.generate(ids, top_k=1, top_p=1.0, min_p=0.0, typical_p=1.0, temp=0.0, repeat_penalty=1.0, reset=True):
                times.append(ns())
                if len(times) >= max_new:
                    break
            return figures(start, times)

        one(prompts[0])  # warmup
        rows = [one(ids) for ids in prompts]
    elif engine == "openvino-genai":
        import openvino as ov
        import openvino_genai as ov_genai

        # FOLDER is the stateful IR the openvino-genai engine ran (its facts name it); one request in flight, as a
        # single-stream session has, its paged cache sized for the longest, as the engine sizes it.
        scheduler = ov_genai.SchedulerConfig()
        scheduler.max_num_seqs = 1
        scheduler.num_kv_blocks = -(-(max(len(p) for p in prompts) + max_new) // 16)
        pipe = ov_genai.ContinuousBatchingPipeline(folder, scheduler, "CPU", {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32", "INFERENCE_NUM_THREADS": threads})
        config = ov_genai.GenerationConfig()
        config.max_new_tokens = config.min_new_tokens = max_new
        config.do_sample = False

        def one(ids):
            start, times = ns(), []
            handle = pipe.add_request(0, ov.Tensor(np.asarray([ids], dtype=np.int64)), config)
            while pipe.has_non_finished_requests():
                pipe.step()
                while handle.can_read():
                    for output in handle.read().values():
                        stamp = ns()
                        times.extend(stamp for _ in output.generated_ids)
            return figures(start, times)

        one(prompts[0])  # warmup
        rows = [one(ids) for ids in prompts]
    else:
        raise SystemExit(f"unknown engine {engine}")
    print(json.dumps({"ttft_ms": [r[0] for r in rows], "tpot_ms": [r[1] for r in rows]}))


if __name__ == "__main__":
    main()
