"""Builds the tokenizer, the data files and, per architecture, the Hugging Face folder and its exports; returns the
summary that generate_llms.py writes as llms.json (paths relative to the output folder)."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np

from lm import corpus

from . import exports, tokenizer
from .architectures import ARCHITECTURES, MAX_POSITIONS
from .train import STEPS, held_out_nll, train

SEED = 0
# Held-out text for perplexity: the first HELD_OUT_BYTES of the byte LM's held-out topics (never trained on).
HELD_OUT_BYTES = 16 * 1024
# Prompts cut from the held-out topics at line starts, lengths uniform in [PROMPT_MIN, PROMPT_MAX] bytes (about 15
# to 60 tokens), so a prompt and 128 new tokens fit MAX_POSITIONS.
PROMPTS, PROMPT_MIN, PROMPT_MAX = 16, 32, 128
GREEDY_TOKENS = 32


def _greedy(model, tok, prompt: str) -> dict:
    import torch

    ids = tok(prompt, return_tensors='pt').input_ids
    with torch.no_grad():
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=GREEDY_TOKENS, do_sample=False,
                             min_new_tokens=GREEDY_TOKENS, pad_token_id=tok.pad_token_id)
    new = out[0, ids.shape[1]:].tolist()
    return {'prompt_ids': ids[0].tolist(), 'output_ids': new, 'output': tok.decode(new)}


def _relative(part: dict, out: str) -> dict:
    return {k: os.path.relpath(v, out) if k in ('path', 'config') else v for k, v in part.items()}


def build(out: str, log) -> dict:
    import torch

    torch.set_num_threads(1)
    train_bytes, held = corpus.splits()
    paragraphs = train_bytes.tobytes().decode('utf-8').split('\n\n')
    tok = tokenizer.train(paragraphs, MAX_POSITIONS)
    train_ids = np.asarray(tok.backend_tokenizer.encode('\n\n'.join(paragraphs)).ids, dtype=np.int32)
    held_text = held[:HELD_OUT_BYTES].tobytes().decode('utf-8', errors='ignore')
    held_ids = np.asarray(tok.backend_tokenizer.encode(held_text).ids, dtype=np.int32)
    log(f'tokenizer: byte-level BPE, {len(tok)} tokens; {len(train_ids)} training tokens '
        f'({len(train_bytes) / len(train_ids):.2f} bytes/token), {len(held_ids)} held-out tokens')

    os.makedirs(os.path.join(out, 'data'), exist_ok=True)
    with open(os.path.join(out, 'data', 'held_out.txt'), 'w', encoding='utf-8') as f:
        f.write(held_text)
    prompts = [p.decode('utf-8', errors='ignore') for p in corpus.prompts(held, PROMPTS, PROMPT_MIN, PROMPT_MAX, SEED)]
    with open(os.path.join(out, 'data', 'prompts.jsonl'), 'w', encoding='utf-8') as f:
        for p in prompts:
            f.write(json.dumps({'prompt': p}) + '\n')

    models: dict[str, dict] = {}
    for arch in ARCHITECTURES:
        log(f'{arch.name}: {arch.about}')
        torch.manual_seed(SEED)
        model = arch.make(len(tok), tok.eos_token_id)
        loss = train(model, train_ids, SEED, log)
        nll = held_out_nll(model, held_ids, MAX_POSITIONS)
        log(f'{arch.name}: train loss {loss:.3f}, held-out {nll:.3f} nats/token (uniform {np.log(len(tok)):.3f})')
        folder = os.path.join(out, arch.name)
        hf_dir = os.path.join(folder, 'hf')
        model.generation_config.pad_token_id = tok.pad_token_id
        model.save_pretrained(hf_dir, safe_serialization=True)
        tok.save_pretrained(hf_dir)
        cfg = model.config
        heads = cfg.num_attention_heads
        entry = {
            'architecture': cfg.architectures[0], 'about': arch.about,
            'parameters': sum(p.numel() for p in model.parameters()),
            'shape': {'layers': cfg.num_hidden_layers, 'hidden': cfg.hidden_size, 'heads': heads,
                      'kv_heads': getattr(cfg, 'num_key_value_heads', None) or heads, 'head_dim': cfg.hidden_size // heads,
                      'vocab': cfg.vocab_size, 'max_positions': MAX_POSITIONS},
            'train': {'loss': loss, 'steps': STEPS},
            'held_out_nll': nll, 'uniform_nll': float(np.log(len(tok))),
            'greedy': _greedy(model, tok, prompts[0]),
            'hf': {'path': hf_dir},
        }
        log(f'{arch.name}: greedy {entry["greedy"]["output"]!r}')
        del model
        entry['onnx'] = exports.optimum_onnx(hf_dir, os.path.join(folder, 'onnx'))
        log(f'{arch.name}: Optimum ONNX inputs {[i["name"] for i in entry["onnx"]["inputs"]][:4]}...')
        entry['openvino'] = exports.openvino_ir(hf_dir, os.path.join(folder, 'openvino'))
        log(f'{arch.name}: OpenVINO IR {entry["openvino"].get("skipped") or entry["openvino"]["inputs"]}')
        entry['genai'] = exports.ort_genai(hf_dir, os.path.join(folder, 'genai'), os.path.join(out, '.genai-cache'))
        log(f'{arch.name}: ONNX Runtime GenAI {entry["genai"].get("skipped") or "built"}')
        models[arch.name] = {k: _relative(v, out) if isinstance(v, dict) and 'path' in v else v for k, v in entry.items()}
    shutil.rmtree(os.path.join(out, '.genai-cache'), ignore_errors=True)
    return {
        'tokenizer': {'kind': 'byte-level BPE (GPT2TokenizerFast)', 'vocab': len(tok), 'special': tokenizer.END,
                      'special_id': tok.eos_token_id},
        'held_out': 'data/held_out.txt', 'prompts': 'data/prompts.jsonl',
        'prompt_lengths': {'distribution': 'uniform', 'min': PROMPT_MIN, 'max': PROMPT_MAX, 'count': PROMPTS, 'unit': 'bytes'},
        'seed': SEED, 'models': models,
    }
