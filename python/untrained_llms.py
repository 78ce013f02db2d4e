"""Hugging Face folders of more decoder architectures, untrained, for the test that PBH runs what users bring.

    .venv/bin/python python/untrained_llms.py OUT TOKENIZER_FOLDER [NAME ...]

Each NAME (default: all of ARCHITECTURES) is built by transformers from seed 0 at a tiny size, its weights drawn
with a wide initializer (std 0.3) so that greedy choices are far from ties, and saved with save_pretrained into
OUT/NAME, with the tokenizer files of TOKENIZER_FOLDER (a byte-level BPE of vocabulary 512, as python/generate_llms.py
trains). The four trained architectures of python/llms/architectures.py are not repeated here: these add the
features they lack (multi-query attention, ALiBi, learned positions with an offset, parallel attention and MLP,
partial rotary). Prints the names built.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any, Callable

os.environ.setdefault("USE_TF", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

HIDDEN, LAYERS, HEADS, FFN, POSITIONS = 64, 2, 4, 192, 256
INIT_STD = 0.3
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.json", "merges.txt", "generation_config.json")


def _configs() -> dict[str, Callable[[dict[str, Any]], Any]]:
    import transformers as t  # noqa: PLC0415 - seconds to import: only when building

    return {
        # Gemma: multi-query attention (one key-value head), an explicit head_dim, scaled embeddings, GeLU (tanh).
        "gemma": lambda ids: t.GemmaConfig(hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=1, head_dim=16, max_position_embeddings=POSITIONS, **ids),
        # OPT: learned positions offset by 2, ReLU, LayerNorm before each block.
        "opt": lambda ids: t.OPTConfig(hidden_size=HIDDEN, ffn_dim=FFN, num_hidden_layers=LAYERS, num_attention_heads=HEADS, max_position_embeddings=POSITIONS, word_embed_proj_dim=HIDDEN, **ids),
        # Falcon (7B layout): multi-query attention in one fused QKV projection, attention and MLP in parallel, rotary.
        "falcon": lambda ids: t.FalconConfig(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS, new_decoder_architecture=False, multi_query=True, **ids),
        # BLOOM: ALiBi position biases instead of position embeddings, fused QKV.
        "bloom": lambda ids: t.BloomConfig(hidden_size=HIDDEN, n_layer=LAYERS, n_head=HEADS, **ids),
        # GPT-NeoX (Pythia): rotary on a quarter of each head, parallel residual.
        "gpt_neox": lambda ids: t.GPTNeoXConfig(hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS, num_attention_heads=HEADS, max_position_embeddings=POSITIONS, **ids),
    }


ARCHITECTURES = ("gemma", "opt", "falcon", "bloom", "gpt_neox")


def build(out: str, tokenizer: str, names: list[str]) -> list[str]:
    import torch  # noqa: PLC0415
    from transformers import AutoModelForCausalLM  # noqa: PLC0415

    configs = _configs()
    unknown = sorted(set(names) - set(configs))
    if unknown:
        raise SystemExit(f"untrained_llms: unknown architectures {unknown}; known: {', '.join(ARCHITECTURES)}")
    ids = {"vocab_size": 512, "bos_token_id": 0, "eos_token_id": 0, "pad_token_id": 0}
    for name in names:
        torch.manual_seed(0)
        config = configs[name](ids)
        config.initializer_range = INIT_STD
        model = AutoModelForCausalLM.from_config(config).eval()
        folder = os.path.join(out, name)
        shutil.rmtree(folder, ignore_errors=True)
        model.save_pretrained(folder)
        for file in TOKENIZER_FILES:
            if os.path.isfile(os.path.join(tokenizer, file)):
                shutil.copyfile(os.path.join(tokenizer, file), os.path.join(folder, file))
    return names


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    print("\n".join(build(sys.argv[1], sys.argv[2], sys.argv[3:] or list(ARCHITECTURES))))
