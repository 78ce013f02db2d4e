"""The four architectures, each at a tiny size with the shape features that matter to a runtime: grouped-query or
multi-head attention, rotary or learned positions, fused or separate projections, tied or separate embeddings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

HIDDEN = 64
LAYERS = 2
HEADS = 4
FFN = 192
MAX_POSITIONS = 256


@dataclass(frozen=True)
class Architecture:
    name: str
    # transformers' config class and model class, made lazily: importing transformers takes seconds.
    make: Callable[[int, int], Any]
    about: str


def _llama_gqa(vocab: int, special: int):
    from transformers import LlamaConfig, LlamaForCausalLM

    return LlamaForCausalLM(LlamaConfig(
        vocab_size=vocab, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        num_key_value_heads=HEADS // 2, max_position_embeddings=MAX_POSITIONS, tie_word_embeddings=False,
        bos_token_id=special, eos_token_id=special, pad_token_id=special,
    ))


def _gpt2(vocab: int, special: int):
    from transformers import GPT2Config, GPT2LMHeadModel

    return GPT2LMHeadModel(GPT2Config(
        vocab_size=vocab, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, n_inner=FFN, n_positions=MAX_POSITIONS,
        # No dropout (GPT-2's default is 0.1, the others' 0): a few hundred steps on a tiny model need every update.
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=special, eos_token_id=special, pad_token_id=special,
    ))


def _qwen2(vocab: int, special: int):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    return Qwen2ForCausalLM(Qwen2Config(
        vocab_size=vocab, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        num_key_value_heads=HEADS // 2, max_position_embeddings=MAX_POSITIONS, tie_word_embeddings=True,
        use_sliding_window=False, bos_token_id=special, eos_token_id=special, pad_token_id=special,
    ))


def _phi3(vocab: int, special: int):
    from transformers import Phi3Config, Phi3ForCausalLM

    # original_max_position_embeddings equal to max_position_embeddings: plain RoPE (no LongRoPE scaling), the
    # variant ONNX Runtime GenAI's builder takes as Phi-3 mini 4k.
    return Phi3ForCausalLM(Phi3Config(
        vocab_size=vocab, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        num_key_value_heads=HEADS, max_position_embeddings=MAX_POSITIONS, original_max_position_embeddings=MAX_POSITIONS,
        sliding_window=None, tie_word_embeddings=False, bos_token_id=special, eos_token_id=special, pad_token_id=special,
    ))


ARCHITECTURES = (
    Architecture('llama_gqa', _llama_gqa, f'Llama: RoPE, RMSNorm, SwiGLU, grouped-query attention ({HEADS} heads, {HEADS // 2} key-value heads)'),
    Architecture('gpt2', _gpt2, f'GPT-2: learned positions, LayerNorm, GELU, fused QKV (Conv1D), multi-head attention ({HEADS} heads), tied embeddings'),
    Architecture('qwen2', _qwen2, f'Qwen2: RoPE, QKV biases, grouped-query attention ({HEADS} heads, {HEADS // 2} key-value heads), tied embeddings'),
    Architecture('phi3', _phi3, f'Phi-3: RoPE, fused QKV and gate-up projections, multi-head attention ({HEADS} heads)'),
)
