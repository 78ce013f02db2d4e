"""LiteRT (ai-edge-litert's Interpreter) as a PBH engine (pbh-engine.json; the contract: pbh_worker/engine.py).

The harness gives every engine the ONNX export of a .tflite (python/model_convert); its metadata names the .tflite
(pbh.source.path, checked by sha256) and how each of its tensors is named and quantized at PBH's side
(pbh.source.io). This engine runs that .tflite.
- load: Interpreter(num_threads) with the default XNNPACK delegate (options.xnnpack, default true) or the builtin
  kernels alone; the input tensors resized to the cell's batch where it differs from the file's. What executed is read
  from the file's own graph: the element type of the activations the compute ops (convolutions, fully connected,
  batch matmul) take; int8 models run as int8. The interpreter applies the delegate to whichever nodes it supports:
  how many it took is read back (the DELEGATE nodes of the running graph).
- bind: an input the model quantizes (int8/uint8 with a scale) arrives float32 and is quantized here, once per
  resident batch, with the model's scale and zero point (round half to even, saturated); its call is set_tensor for
  each input and invoke(), what a deployment of the interpreter pays per request.
- outputs: get_tensor of each output, dequantized with the model's scale and zero point where it is quantized.
- layers: not offered. LiteRT's op profiler (benchmark_model --enable_op_profiling) is C++ only; the Python
  Interpreter of ai-edge-litert 2.3.0 exposes no profiler.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import numpy as np
from ai_edge_litert import __version__ as litert_version
from ai_edge_litert.interpreter import Interpreter, OpResolverType

from pbh_worker import About, Engine, Loaded, Model, Precision, TensorSpec, WorkerError, serve

# Ops whose activations set the precision a model computes in.
COMPUTE_OPS = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "BATCH_MATMUL", "TRANSPOSE_CONV", "CONV_3D"}
PRECISION = {"float32": "fp32", "float16": "fp16", "int8": "int8", "uint8": "int8", "int16": "int8"}


def sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def recorded_source(path: str) -> tuple[str, dict[str, Any]]:
    """The .tflite an ONNX export was made from, and its tensors as PBH names them (pbh.source.io)."""
    if path.endswith(".tflite"):
        raise WorkerError("bad_request", f"{path}: the harness gives engines the ONNX export of a .tflite; run it through pbh run")
    import onnx  # noqa: PLC0415

    meta = {p.key: p.value for p in onnx.load(path, load_external_data=False).metadata_props}
    source = meta.get("pbh.source.path")
    if meta.get("pbh.source.format") != "tflite" or not source:
        raise WorkerError("unsupported_model", f"LiteRT runs .tflite models, and {path} was not converted from one: name a .tflite file in models[].path")
    if not os.path.isfile(source) or sha256(source) != meta.get("pbh.source.sha256"):
        raise WorkerError("unsupported_model", f"{source}, which {path} was converted from, is gone or changed since: run pbh run again to convert it anew")
    return source, json.loads(meta["pbh.source.io"])


def executed(interpreter: Interpreter) -> tuple[str, str, dict[str, int]]:
    """What the file's compute ops take, read from its graph before any delegate rewrites it."""
    tensors = {t["index"]: t for t in interpreter.get_tensor_details()}
    census: dict[str, int] = {}
    kinds: dict[str, int] = {}
    for op in interpreter._get_ops_details():  # noqa: SLF001 - the only reader of the graph's ops in the Python API
        census[op["op_name"]] = census.get(op["op_name"], 0) + 1
        if op["op_name"] in COMPUTE_OPS and len(op["inputs"]) and op["inputs"][0] >= 0:
            dtype = np.dtype(tensors[op["inputs"][0]]["dtype"]).name
            kinds[dtype] = kinds.get(dtype, 0) + 1
    if not kinds:
        raise WorkerError("unsupported_model", f"the model has none of the compute ops {sorted(COMPUTE_OPS)}, so what precision it computes in cannot be read (its ops: {sorted(census)})")
    main = max(kinds, key=lambda k: kinds[k])
    if main not in PRECISION:
        raise WorkerError("unsupported_model", f"the model's compute ops take {main} activations, which PBH does not name as a precision")
    said = ", ".join(f"{n} take {k}" for k, n in sorted(kinds.items()))
    dequantized = census.get("DEQUANTIZE", 0)
    evidence = f"of the file's {sum(kinds.values())} compute ops (convolutions, fully connected), {said} activations"
    if dequantized:
        evidence += f"; {dequantized} DEQUANTIZE ops widen stored weights to the compute type"
    return PRECISION[main], evidence, census


class LiteRT(Engine):
    def about(self) -> About:
        return About(litert_version, None, {"interpreter": "ai_edge_litert.interpreter.Interpreter", "layers": "not offered: LiteRT's op profiler is C++ only (benchmark_model)"})

    def load(self, model: Model) -> Loaded:
        if model.device != "cpu":
            raise WorkerError("bad_request", f"the LiteRT engine runs on cpu, not {model.device!r}")
        path, io = recorded_source(model.path)
        options = model.options
        resolver = OpResolverType.AUTO if options["xnnpack"] else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
        try:
            plain = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
            self.interpreter = Interpreter(model_path=path, num_threads=options.get("threads"), experimental_op_resolver_type=resolver)
        except (ValueError, RuntimeError) as e:
            raise WorkerError("unsupported_model", f"LiteRT cannot load {path}: {e}") from e
        precision, evidence, census = executed(plain)
        if model.precision != precision:
            raise WorkerError("unsupported_precision", f"LiteRT runs {path} in its own precision, {precision}, not {model.precision}: convert or quantize the model to {model.precision} with the LiteRT converter")
        details = {d["name"]: d for d in self.interpreter.get_input_details()}
        for spec in io["inputs"]:
            shape = list(details[spec["tensor"]]["shape"])
            if shape and shape[0] != model.batch_size:
                self.interpreter.resize_tensor_input(details[spec["tensor"]]["index"], [model.batch_size, *shape[1:]])
        try:
            self.interpreter.allocate_tensors()
        except RuntimeError as e:
            raise WorkerError("unsupported_model", f"LiteRT cannot run {path} at batch {model.batch_size}: {e}") from e
        inputs = {d["name"]: d for d in self.interpreter.get_input_details()}
        outputs = {d["name"]: d for d in self.interpreter.get_output_details()}
        # (index, dtype, scale, zero point) of each input and output in PBH's order and names.
        self.inputs = {s["name"]: (inputs[s["tensor"]]["index"], inputs[s["tensor"]]["dtype"], s["scale"], s["zero_point"]) for s in io["inputs"]}
        self.outputs_at = [(s["name"], outputs[s["tensor"]]["index"], s["scale"], s["zero_point"]) for s in io["outputs"]]
        running = [op["op_name"] for op in self.interpreter._get_ops_details()]  # noqa: SLF001 - as in executed()
        facts = {
            "source": path,
            "xnnpack": bool(options["xnnpack"]),
            "num_threads": options.get("threads"),
            "op_census": census,
            "delegate_nodes": running.count("DELEGATE"),
            "nodes_outside_delegate": len(running) - running.count("DELEGATE"),
            "quantized_inputs": {s["name"]: {"dtype": s["dtype"], "scale": s["scale"], "zero_point": s["zero_point"]} for s in io["inputs"] if s["scale"] is not None},
            "quantized_outputs": {s["name"]: {"dtype": s["dtype"], "scale": s["scale"], "zero_point": s["zero_point"]} for s in io["outputs"] if s["scale"] is not None},
        }
        if options["xnnpack"]:
            evidence += f"; XNNPACK took {facts['delegate_nodes']} delegate node(s), {facts['nodes_outside_delegate']} node(s) run on the builtin kernels"
        spec = lambda d, name, scale: TensorSpec(name, "float32" if scale is not None else np.dtype(d["dtype"]).name, [int(n) for n in d["shape"]])  # noqa: E731
        return Loaded(
            inputs=[spec(inputs[s["tensor"]], s["name"], s["scale"]) for s in io["inputs"]],
            outputs=[spec(outputs[s["tensor"]], s["name"], s["scale"]) for s in io["outputs"]],
            precision=Precision(precision, evidence),
            # The Interpreter says nothing of its pool: num_threads as set is in the facts, none read back.
            threads=None,
            facts=facts,
        )

    def bind(self, batch):
        feeds = []
        for name, array in batch.items():
            if name not in self.inputs:
                raise WorkerError("bad_request", f"input {name!r} is not one of the model's inputs {sorted(self.inputs)}")
            index, dtype, scale, zero = self.inputs[name]
            if scale is not None:
                info = np.iinfo(dtype)
                array = np.clip(np.round(array / np.float32(scale)) + zero, info.min, info.max).astype(dtype)
            feeds.append((index, np.ascontiguousarray(array)))
        set_tensor, invoke = self.interpreter.set_tensor, self.interpreter.invoke

        def call() -> None:
            for index, array in feeds:
                set_tensor(index, array)
            invoke()

        return call

    def outputs(self, result: Any) -> dict[str, np.ndarray]:
        named = {}
        for name, index, scale, zero in self.outputs_at:
            value = self.interpreter.get_tensor(index)
            named[name] = ((value.astype(np.float32) - zero) * np.float32(scale)) if scale is not None else value
        return named


if __name__ == "__main__":
    serve(LiteRT())
