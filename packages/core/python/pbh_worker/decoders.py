"""A causal language model as the generation loop drives it: a request's cache, fed tokens, logits back.

Three kinds, one interface (`start()` -> a request's state, `step(state, ids)` -> (logits [len(ids), vocab], state)):

- PBH's own cache graph (contracts/generation.ts): a fixed-capacity cache and `past_length`; the bundled byte LM.
- The Hugging Face ONNX decoder layout that Optimum exports (`--task text-generation-with-past`): `input_ids`,
  `attention_mask`, optionally `position_ids`, `past_key_values.N.key/value` -> `logits`, `present.N.key/value`,
  the cache growing one position per token. Any engine that runs ONNX runs it through its own `bind`.
- An engine's own decoder, declared in its manifest (capability `decoder`): transformers, an LLM runtime.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Protocol

import numpy as np

from .engine import TensorSpec
from .errors import WorkerError

Infer = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]

PBH_INPUTS = ("input_ids", "past_length", "past_key", "past_value")
_PAST = re.compile(r"^past_key_values\.(\d+)\.(key|value)$")


class Decoder(Protocol):
    """One model on one runtime; every request holds its own state (its cache), so requests interleave freely."""

    def start(self) -> Any: ...

    def step(self, state: Any, ids: list[int]) -> tuple[np.ndarray, Any]:
        """Feed `ids` after what `state` holds; the logits of each fed position ([len(ids), vocab]) and the new state.

        The arrays returned stay valid after later steps (the cache of one request outlives other requests' steps).
        """
        ...


class PbhCacheGraph:
    """contracts/generation.ts: input_ids, past_length, past_key, past_value -> logits, present_key, present_value."""

    def __init__(self, infer: Infer, cache_shape: list[int]) -> None:
        self.infer, self.cache_shape = infer, cache_shape

    def start(self) -> Any:
        zeros = np.zeros(self.cache_shape, dtype=np.float32)
        return 0, zeros, zeros.copy()

    def step(self, state: Any, ids: list[int]) -> tuple[np.ndarray, Any]:
        past, key, value = state
        out = self.infer({
            "input_ids": np.asarray(ids, dtype=np.int64).reshape(1, -1),
            "past_length": np.asarray([past], dtype=np.int64),
            "past_key": key,
            "past_value": value,
        })
        missing = [n for n in ("logits", "present_key", "present_value") if n not in out]
        if missing:
            raise WorkerError("runtime_error", f'the LM graph returned no {", ".join(missing)} (it returned {", ".join(out)}); PBH\'s cache graph returns logits, present_key, present_value')
        logits = out["logits"]
        return logits.reshape(-1, logits.shape[-1]), (past + len(ids), out["present_key"], out["present_value"])


def fed_positions(feeds: dict[str, np.ndarray], ids: list[int], past: int, mask: bool, positions: bool) -> None:
    """The Hugging Face decoder's inputs for `ids` fed after `past` positions: input_ids, and where the model takes them
    attention_mask (every position so far) and position_ids."""
    n = len(ids)
    feeds["input_ids"] = np.asarray(ids, dtype=np.int64).reshape(1, n)
    if mask:
        feeds["attention_mask"] = np.ones((1, past + n), dtype=np.int64)
    if positions:
        feeds["position_ids"] = np.arange(past, past + n, dtype=np.int64).reshape(1, n)


class KvCacheGraph:
    """The Optimum ONNX decoder layout: the cache grows by the fed tokens each step, one key and value per layer."""

    def __init__(self, infer: Infer, inputs: list[TensorSpec], where: str) -> None:
        self.infer = infer
        names = {s.name: s for s in inputs}
        layers = sorted({int(m.group(1)) for n in names if (m := _PAST.match(n))})
        if layers != list(range(len(layers))) or not all(f"past_key_values.{i}.{kv}" in names for i in layers for kv in ("key", "value")):
            raise WorkerError("unsupported_model", f"{where}: past_key_values.N.key/value inputs are not numbered 0..N-1 in pairs (found {sorted(n for n in names if _PAST.match(n))})")
        first = names["past_key_values.0.key"]
        if len(first.shape) != 4 or not isinstance(first.shape[1], int) or not isinstance(first.shape[3], int):
            raise WorkerError("unsupported_model", f"{where}: past_key_values.0.key has shape {first.shape}; PBH reads the Hugging Face layout [batch, kv_heads, past_sequence, head_dim] with kv_heads and head_dim fixed")
        known = {"input_ids", "attention_mask", "position_ids", "use_cache_branch"} | {f"past_key_values.{i}.{kv}" for i in layers for kv in ("key", "value")}
        unknown = sorted(set(names) - known)
        if unknown or "input_ids" not in names:
            raise WorkerError("unsupported_model", f"{where}: inputs {unknown or ['input_ids (missing)']} are not part of the Hugging Face decoder layout PBH feeds (input_ids, attention_mask, position_ids, past_key_values.N.key/value)")
        self.layers = len(layers)
        self.kv_shape = (1, first.shape[1], 0, first.shape[3])
        self.dtype = np.dtype(first.dtype)
        self.mask, self.positions, self.branch = "attention_mask" in names, "position_ids" in names, "use_cache_branch" in names
        self.past_names = [f"past_key_values.{i}.{kv}" for i in range(self.layers) for kv in ("key", "value")]
        self.present_names = [f"present.{i}.{kv}" for i in range(self.layers) for kv in ("key", "value")]

    def start(self) -> Any:
        empty = np.zeros(self.kv_shape, dtype=self.dtype)
        return 0, [empty] * len(self.past_names)

    def step(self, state: Any, ids: list[int]) -> tuple[np.ndarray, Any]:
        past, cache = state
        n = len(ids)
        feeds = dict(zip(self.past_names, cache))
        fed_positions(feeds, ids, past, self.mask, self.positions)
        if self.branch:
            feeds["use_cache_branch"] = np.asarray([past > 0])
        out = self.infer(feeds)
        missing = [name for name in ["logits", *self.present_names] if name not in out]
        if missing:
            raise WorkerError("runtime_error", f"the decoder returned no {', '.join(missing[:4])} (it returned {', '.join(list(out)[:6])}…); the Hugging Face layout returns logits and present.N.key/value")
        logits = out["logits"]
        return logits.reshape(-1, logits.shape[-1]), (past + n, [out[name] for name in self.present_names])


def graph_decoder(infer: Infer, inputs: list[TensorSpec], cache_shape: list[int] | None, where: str) -> Decoder:
    """The decoder for a graph the engine runs through `bind`, chosen by the graph's input names."""
    names = {s.name for s in inputs}
    if set(PBH_INPUTS) <= names:
        shape = cache_shape or next(s.shape for s in inputs if s.name == "past_key")
        if len(shape) != 4 or not all(isinstance(d, int) and d > 0 for d in shape):
            raise WorkerError("unsupported_model", f"{where}: past_key has shape {shape}; PBH's cache graph has a fixed [layers, heads, capacity, head_dim]")
        return PbhCacheGraph(infer, [int(d) for d in shape])
    if "past_key_values.0.key" in names:
        return KvCacheGraph(infer, inputs, where)
    raise WorkerError(
        "unsupported_model",
        f"{where} has inputs {sorted(names)}: no key-value cache PBH can drive. It runs PBH's cache graph "
        "(input_ids, past_length, past_key, past_value) and the Hugging Face decoder layout that Optimum exports "
        "(optimum-cli export onnx --task text-generation-with-past: past_key_values.N.key/value).",
    )
