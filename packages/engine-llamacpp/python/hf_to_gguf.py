"""A Hugging Face decoder folder to GGUF, by llama.cpp's own converter (convert_hf_to_gguf.py), for the llama-cpp engine.

    python hf_to_gguf.py --outtype f32|f16 --outfile OUT.gguf FOLDER     (the llama-cpp worker runs it)

No package on PyPI ships the converter (gguf 0.19 has the writer and gguf-dump, llama-cpp-python's wheel the
runtime only), so `pbh doctor --fix --engine llama-cpp` keeps convert_hf_to_gguf.py, its conversion/ package and the
gguf-py it is written against (newer than gguf 0.19 on PyPI: its LazyChunkedTensor) from the llama-cpp-python sdist
it builds, as the package llama_cpp_converter (python/llama_cpp_converter_install.py).

Two adaptations. llama.cpp names a BPE pre-tokenizer by hashing the ids a known model's tokenizer gives a test text,
so a tokenizer trained by the user is never recognized: where tokenizer.json's pre-tokenizer is GPT-2's (ByteLevel
with its regex, no normalizer), "gpt-2" is written, the pre-tokenizer that is; anything else fails as upstream does.
And its GPT-2 class reads the context length from `n_ctx`, which transformers' GPT2Config no longer writes (where it
is absent, `n_positions`, the same figure, stands in), and writes the MLP width as 4 x n_embd (a set `n_inner` is
written instead).
"""

from __future__ import annotations

import json
import os
import runpy
import sys

ADAPTED = "tokenizer.ggml.pre 'gpt-2' for a GPT-2 byte-level pre-tokenizer llama.cpp's hash table does not list; GPT-2's n_ctx from n_positions where config.json has no n_ctx, its MLP width from n_inner where set"


def converter_dir() -> str:
    import llama_cpp_converter  # noqa: PLC0415 - installed by pbh doctor --fix --engine llama-cpp

    return os.path.dirname(llama_cpp_converter.__file__)


def converter_version() -> str:
    import llama_cpp_converter  # noqa: PLC0415

    return str(llama_cpp_converter.SOURCE)


def _gpt2_pre_tokenizer(folder: str) -> bool:
    path = os.path.join(folder, "tokenizer.json")
    if not os.path.isfile(path):
        return False
    with open(path, encoding="utf-8") as f:
        tokenizer = json.load(f)
    pre = tokenizer.get("pre_tokenizer") or {}
    return tokenizer.get("normalizer") is None and pre.get("type") == "ByteLevel" and pre.get("use_regex", True) and not pre.get("add_prefix_space")


def main() -> None:
    folder = sys.argv[-1]
    here = converter_dir()
    # The converter's own gguf-py first, as convert_hf_to_gguf.py puts it (it is ahead of gguf 0.19 on PyPI).
    sys.path[:0] = [here, os.path.join(here, "gguf-py")]
    from conversion import base  # noqa: PLC0415 - the converter's own package, importable once its folder is on the path

    upstream = base.TextModel.get_vocab_base_pre

    def get_vocab_base_pre(self, tokenizer) -> str:  # noqa: ANN001 - the converter's signature
        try:
            return upstream(self, tokenizer)
        except NotImplementedError:
            if _gpt2_pre_tokenizer(folder):
                return "gpt-2"
            raise

    base.TextModel.get_vocab_base_pre = get_vocab_base_pre

    from conversion import gpt2  # noqa: PLC0415

    set_parameters = gpt2.GPT2Model.set_gguf_parameters

    def set_gguf_parameters(self) -> None:  # noqa: ANN001 - the converter's signature
        if "n_ctx" not in self.hparams and "n_positions" in self.hparams:
            self.hparams["n_ctx"] = self.hparams["n_positions"]
        inner = self.hparams.get("n_inner")
        if inner:
            # The class writes 4 x n_embd, GPT2Config's default for an unset n_inner; a set one is the MLP's width.
            write = self.gguf_writer.add_feed_forward_length
            self.gguf_writer.add_feed_forward_length = lambda _default: write(int(inner))
        set_parameters(self)

    gpt2.GPT2Model.set_gguf_parameters = set_gguf_parameters
    sys.argv = [os.path.join(here, "convert_hf_to_gguf.py"), *sys.argv[1:]]
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
