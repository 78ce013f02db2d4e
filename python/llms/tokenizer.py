"""A byte-level BPE tokenizer (GPT-2's scheme: bytes mapped to printable characters, merges learned from text) trained
on the training split of the byte LM's corpus, saved as transformers' GPT2TokenizerFast (tokenizer.json,
tokenizer_config.json, vocab.json, merges.txt): the tokenizer class every LLM runtime here reads."""

from __future__ import annotations

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

VOCAB = 512
# One special token, GPT-2's: it begins nothing (no BOS is added) and ends a text; it also pads.
END = '<|endoftext|>'


def train(paragraphs: list[str], max_length: int):
    """A GPT2TokenizerFast of VOCAB tokens (id 0 is END) for models of `max_length` positions; BPE training is
    deterministic for the same text."""
    from transformers import GPT2TokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB, special_tokens=[END], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )
    tok.train_from_iterator(paragraphs, trainer=trainer)
    return GPT2TokenizerFast(
        tokenizer_object=tok, bos_token=END, eos_token=END, unk_token=END, pad_token=END, add_prefix_space=False,
        model_max_length=max_length,
    )
