"""The openvino engine's decoders (pbh_worker.decoders), fed through the binding as optimum-intel feeds OpenVINO.

optimum-intel's stateful IR: the key-value cache lives in an infer request's state (the IR's ReadValue/Assign pairs),
not in inputs and outputs, so each request in flight holds an infer request of its own. A request's state takes one
from a pool at start() and gives it back when that state is dropped (the generation loop drops a request's state when
the request ends); step() advances the state in place, so a state is stepped once from each point, as the generation
loop and the scorers do. The inputs fed are the ones optimum-intel's export takes: input_ids, attention_mask (every
position so far), position_ids (where the export has them) and beam_idx (0: one sequence, never reordered).

A graph whose cache is inputs and outputs (`cache_io_decoder`): its inputs change shape every step, so there is nothing
to bind ahead, and the binding's infer(share_inputs=True) makes its tensors in C++ where the engine's C API path
would make each one through ctypes.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from pbh_worker import TensorSpec, WorkerError
from pbh_worker.decoders import KvCacheGraph, fed_positions

KNOWN = ("input_ids", "attention_mask", "position_ids", "beam_idx")


class _Request:
    """One request's cache: its infer request and how many positions that request's state holds."""

    __slots__ = ("infer", "past", "__weakref__")

    def __init__(self, infer: Any) -> None:
        self.infer, self.past = infer, 0


class StatefulIr:
    def __init__(self, compiled: Any, where: str) -> None:
        names = {name for port in compiled.inputs for name in port.get_names()}
        unknown = sorted(names - set(KNOWN))
        if unknown or "input_ids" not in names:
            raise WorkerError("unsupported_model", f"{where}: inputs {unknown or ['input_ids (missing)']} are not part of the stateful decoder optimum-intel exports (input_ids, attention_mask, position_ids, beam_idx)")
        if not any("logits" in port.get_names() for port in compiled.outputs):
            raise WorkerError("unsupported_model", f"{where} has no output named logits (it has {[p.get_any_name() for p in compiled.outputs]}): PBH reads the logits optimum-intel's export returns")
        self.compiled = compiled
        self.mask, self.positions, self.beam = "attention_mask" in names, "position_ids" in names, "beam_idx" in names
        self.beam_idx = np.zeros(1, dtype=np.int32)
        # Infer requests no request in flight holds, their state reset when taken.
        self.free: list[Any] = []

    def start(self) -> _Request:
        infer = self.free.pop() if self.free else self.compiled.create_infer_request()
        infer.reset_state()
        state = _Request(infer)
        weakref.finalize(state, self.free.append, infer)
        return state

    def step(self, state: _Request, ids: list[int]) -> tuple[np.ndarray, _Request]:
        feeds: dict[str, np.ndarray] = {}
        fed_positions(feeds, ids, state.past, self.mask, self.positions)
        if self.beam:
            feeds["beam_idx"] = self.beam_idx
        # share_outputs=False (the default): the logits are copied out, so they outlive the next step on this request.
        logits = state.infer.infer(feeds, share_inputs=True)["logits"]
        state.past += len(ids)
        return logits.reshape(-1, logits.shape[-1]), state


def cache_io_decoder(compiled: Any, inputs: list[TensorSpec], output_names: list[str], where: str) -> KvCacheGraph | None:
    """A graph whose cache is inputs and outputs (an Optimum ONNX export, a stateless IR) fed as optimum-intel feeds
    its request: inputs shared, outputs copied out (so the cache outlives the next step), one infer request for every
    request in flight, since each request's cache travels in its own arrays. None for any other graph."""
    if not any(spec.name == "past_key_values.0.key" for spec in inputs):
        return None
    request = compiled.create_infer_request()

    def infer(feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return dict(zip(output_names, request.infer(feeds, share_inputs=True).to_tuple()))

    return KvCacheGraph(infer, inputs, where)
