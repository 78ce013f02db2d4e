"""Token ids with a model's own tokenizer, so every engine of a generate cell is fed the same ids.

The harness runs this once per model and dataset, before anything is timed: `python -m tokenize_text` reads one JSON
request on stdin and writes one JSON answer on stdout. The tokenizer is the model's `tokenizer.json`, read by
Hugging Face tokenizers (the library transformers' fast tokenizers are), so ids match what `AutoTokenizer` gives:
prompts get the tokenizer's own special tokens (a Llama's BOS), held-out text none.

Request:  {"tokenizer": PATH, "prompts": [str] | null, "random": {"count", "input_len", "range_ratio", "seed"} | null,
           "held_out": str | null, "window": int}
Answer:   {"tokenizer": {...}, "prompts": [[int]], "prompt_texts": [str], "held_out": [int] | null,
           "held_out_bytes_predicted": int | null}
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

import numpy as np


def _random_prompts(tok: Any, spec: dict[str, Any]) -> list[list[int]]:
    """vLLM's random dataset: lengths uniform in input_len * [1 - range_ratio, 1 + range_ratio], ids uniform over the
    vocabulary without its special tokens, seeded."""
    rng = np.random.default_rng(int(spec["seed"]))
    special = {int(i) for i in tok.get_added_tokens_decoder()}
    ordinary = np.asarray([i for i in range(tok.get_vocab_size(with_added_tokens=True)) if i not in special], dtype=np.int64)
    low = max(1, int(np.floor(spec["input_len"] * (1 - spec["range_ratio"]))))
    high = max(low, int(np.ceil(spec["input_len"] * (1 + spec["range_ratio"]))))
    lengths = rng.integers(low, high + 1, size=int(spec["count"]))
    return [rng.choice(ordinary, size=int(n)).tolist() for n in lengths]


def _predicted_bytes(text: str, offsets: list[tuple[int, int]], window: int) -> int:
    """UTF-8 bytes of the text whose tokens the perplexity scorer predicts: each window's tokens after its first."""
    total = 0
    for s in range(0, len(offsets) - 1, window):
        chunk = offsets[s:s + window]
        if len(chunk) < 2:
            break
        total += len(text[chunk[0][1]:chunk[-1][1]].encode("utf-8"))
    return total


def main() -> int:
    request = json.load(sys.stdin)
    from tokenizers import Tokenizer, __version__

    path = request["tokenizer"]
    with open(path, "rb") as f:
        raw = f.read()
    tok = Tokenizer.from_str(raw.decode("utf-8"))
    answer: dict[str, Any] = {
        "tokenizer": {
            "path": path,
            "sha256": hashlib.sha256(raw).hexdigest(),
            "library": f"tokenizers {__version__}",
            "model": type(tok.model).__name__,
            "vocab_size": tok.get_vocab_size(with_added_tokens=True),
        },
    }
    if request.get("random"):
        ids = _random_prompts(tok, request["random"])
        answer["prompts"] = ids
        answer["prompt_texts"] = [tok.decode(p, skip_special_tokens=False) for p in ids]
    else:
        texts = request.get("prompts") or []
        answer["prompts"] = [e.ids for e in tok.encode_batch(texts, add_special_tokens=True)]
        answer["prompt_texts"] = texts
    held = request.get("held_out")
    if held:
        encoded = tok.encode(held, add_special_tokens=False)
        answer["held_out"] = encoded.ids
        answer["held_out_bytes_predicted"] = _predicted_bytes(held, encoded.offsets, int(request.get("window") or 2))
    else:
        answer["held_out"] = None
        answer["held_out_bytes_predicted"] = None
    json.dump(answer, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
