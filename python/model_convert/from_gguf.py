"""A GGUF file (llama.cpp's format) to the Optimum ONNX decoder the other engines and the analysis read.

transformers reads the GGUF's weights (dequantized to fp32 where the file holds a quant type) and config into a
Hugging Face folder, which from_transformers exports as it exports any folder; llama-cpp runs the GGUF itself,
found through the export's metadata. The tokenizer.json beside the export is the GGUF's own vocabulary: a byte-level
BPE (tokenizer.ggml.model gpt2, pre-tokenizer gpt-2) is built from its tokens and merges with Hugging Face tokenizers,
since transformers' GGUF reader takes such a vocabulary in a Llama or Phi-3 file for SentencePiece. Either way the
ids are checked against llama.cpp's own tokenization of a probe text, and a vocabulary they differ on is refused.
"""

from __future__ import annotations

import json
import os
import tempfile
from importlib.metadata import version

from model_convert import BadInput, from_transformers

FRAMEWORK = "llama.cpp GGUF (read by transformers and llama-cpp-python)"
INSTALL = "npx pbh doctor --fix --engine llama-cpp"
PROBE = "def mean(xs):\n    return sum(xs) / len(xs)  # the average, 3.5 or 42!\n\tÉté, naïve café; 你好 🙂"
CONTROL = 3
# llama-cpp runs the GGUF at the path the export's metadata names: a copy elsewhere gets its own export.
KEYED_BY_PATH = True


def check(path: str) -> None:
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic != b"GGUF":
        raise BadInput(f"does not start with the GGUF magic (read {magic!r}): a .gguf file is what llama.cpp's converters write")


def framework_version() -> str:
    import llama_cpp  # noqa: PLC0415, F401 - the venv may lack it; the caller says how to install it
    import transformers  # noqa: PLC0415

    return f"transformers {transformers.__version__}, gguf {version('gguf')}, llama-cpp-python {version('llama_cpp_python')}"


def _bpe_tokenizer(fields: dict) -> object:
    """tokenizer.json of a GGUF byte-level BPE vocabulary (GPT-2's pre-tokenizer), with its control tokens as specials."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers  # noqa: PLC0415

    tokens, types = fields["tokenizer.ggml.tokens"], fields.get("tokenizer.ggml.token_type") or []
    merges = [tuple(m.split(" ", 1)) for m in fields["tokenizer.ggml.merges"]]
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(t, special=True) for t, kind in zip(tokens, types) if kind == CONTROL])
    return tok


def _fields(path: str) -> dict:
    from gguf import GGUFReader  # noqa: PLC0415

    out = {}
    for name, field in GGUFReader(path).fields.items():
        if name.startswith("tokenizer.ggml.") and name not in ("tokenizer.ggml.scores",):
            out[name] = field.contents()
    return out


def export(path: str, target: str) -> dict:
    import llama_cpp  # noqa: PLC0415
    from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415

    fields = _fields(path)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(target)) as folder:
        model = AutoModelForCausalLM.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path))
        model.save_pretrained(folder)
        if fields.get("tokenizer.ggml.model") == "gpt2" and fields.get("tokenizer.ggml.pre") == "gpt-2":
            _bpe_tokenizer(fields).save(os.path.join(folder, "tokenizer.json"))
            made = "tokenizers BPE from the GGUF's tokens and merges"
        else:
            AutoTokenizer.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path)).save_pretrained(folder)
            made = "transformers' GGUF tokenizer"
        from tokenizers import Tokenizer  # noqa: PLC0415

        ours = Tokenizer.from_file(os.path.join(folder, "tokenizer.json")).encode(PROBE).ids
        vocab = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
        theirs = vocab.tokenize(PROBE.encode(), add_bos=fields.get("tokenizer.ggml.add_bos_token", False) is True, special=False)
        if ours != theirs:
            raise BadInput(f"its vocabulary ({fields.get('tokenizer.ggml.model')}, pre-tokenizer {fields.get('tokenizer.ggml.pre')}) tokenizes differently in {made} than in llama.cpp: name the Hugging Face folder it was converted from instead")
        with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
            architectures = json.load(f).get("architectures")
        summary = from_transformers.export(folder, target)
    return {
        **summary,
        "format": "gguf",
        "exporter": f"transformers from_pretrained(gguf_file=) ({', '.join(architectures or [])}; tokenizer.json: {made}), then {summary['exporter']}",
        "exporter_version": f"{summary['exporter_version']}, gguf {version('gguf')}",
    }
