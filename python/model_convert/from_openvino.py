"""An OpenVINO IR folder that optimum-intel exported (openvino_model.xml, stateful or not) to the Optimum ONNX decoder the
other engines and the analysis read.

The IR keeps each weight as a constant named after the module's parameter (`self.model.layers.0.mlp.up_proj.weight`)
or, where the converter folded its name away (a norm's scale), feeding an operation named after the module
(`__module.model.norm/aten::mul/...`). A compressed weight (NNCF's int8 or int4, or fp16) is that constant through
its decompression (Convert, Subtract zero point, Multiply scale, Reshape): OpenVINO evaluates that chain, so the
weights come back as the values the IR computes with. They fill the architecture config.json names; the model's
logits on a probe must match the IR's (OpenVINO, f32, no dynamic quantization) or the folder is refused. Then
from_transformers exports it as it exports any folder; openvino-genai runs the IR itself, found through the export's
metadata.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from importlib.metadata import version
from typing import Any

from model_convert import BadInput, from_transformers

FRAMEWORK = "OpenVINO IR (read by openvino, rebuilt by transformers)"
INSTALL = "npx pbh doctor --fix --engine pytorch --engine llm"
IR = "openvino_model.xml"
# What optimum-intel writes beside the IR that a Hugging Face folder holds too (the tokenizer, the generation config).
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "generation_config.json", "vocab.json", "merges.txt", "tokenizer.model", "added_tokens.json")
# Operations a weight passes through before it is used: its decompression and a constant reshape.
DECOMPRESSION = {"Convert", "Subtract", "Multiply", "Reshape", "Unsqueeze", "Squeeze"}
# A parameter the IR lost the name of is found by the operation that consumes it: a scale multiplies, a bias adds.
CONSUMERS = {"weight": ("Multiply", "MatMul", "Gather", "Convolution"), "bias": ("Add",)}
PROBE = "def mean(xs):\n    return sum(xs) / len(xs)  # the average, 3.5 or 42! Été, naïve café"
# openvino-genai runs the IR at the path the export's metadata names: a copy elsewhere gets its own export.
KEYED_BY_PATH = True
# Logits of the rebuilt model against the IR's, relative to the largest logit: f32 on both sides differs by rounding.
TOLERANCE = 1e-4


def check(path: str) -> None:
    if not os.path.isdir(path) or not os.path.isfile(os.path.join(path, IR)):
        raise BadInput(f"an OpenVINO IR model is a folder with {IR} (optimum-cli export openvino writes one)")
    config = os.path.join(path, "config.json")
    if not os.path.isfile(config):
        raise BadInput(f"has {IR} but no config.json: PBH rebuilds the model from the architecture config.json names; export it with optimum-cli export openvino, which writes both")
    with open(config, encoding="utf-8") as f:
        architectures = json.load(f).get("architectures") or []
    if not any(a.endswith("ForCausalLM") or a.endswith("LMHeadModel") for a in architectures):
        raise BadInput(f"config.json names architectures {architectures}; PBH's generate workload runs decoder language models (…ForCausalLM, …LMHeadModel)")
    if not os.path.isfile(os.path.join(path, "tokenizer.json")):
        raise BadInput("has no tokenizer.json: PBH tokenizes prompts with the model's own tokenizer; optimum-cli export openvino copies it from the Hugging Face folder")


def framework_version() -> str:
    import openvino  # noqa: PLC0415 - the venv may lack it; the caller says how to install it
    import transformers  # noqa: PLC0415

    return f"openvino {openvino.get_version()}, transformers {transformers.__version__}, optimum-onnx {version('optimum-onnx')}"


def _constant_input(node: Any) -> bool:
    """Whether every input of `node` comes from constants alone (a decompression's zero point, scale or shape)."""
    for value in node.inputs():
        producer = value.get_source_output().get_node()
        if producer.get_type_name() != "Constant" and not (producer.get_type_name() in DECOMPRESSION and _constant_input(producer)):
            return False
    return True


def _chain_end(constant: Any) -> Any:
    """The last operation of a constant's decompression: where the weight the model computes with comes out."""
    node = constant
    while True:
        consumers = [t.get_node() for t in node.output(0).get_target_inputs()]
        if len(consumers) != 1 or consumers[0].get_type_name() not in DECOMPRESSION or not _constant_input(consumers[0]):
            return node
        node = consumers[0]


def _key(name: str, prefix: str, wanted: Any) -> str | None:
    """The wanted name that `name` (after `prefix`) ends with, dot by dot, longest first: an export that traced the model
    inside a wrapper names its parameters `self.model.KEY`."""
    if not name.startswith(prefix):
        return None
    parts = name[len(prefix) :].split(".")
    return next((".".join(parts[i:]) for i in range(len(parts)) if ".".join(parts[i:]) in wanted), None)


def _named(constant: Any, wanted: dict[str, tuple[int, ...]]) -> str | None:
    """The parameter a constant holds, by the name it or its decompression carries (`self.KEY`; an fp16 export names
    the constant `self.KEY_compressed` and its Convert `self.KEY`)."""
    node = constant
    while True:
        key = _key(node.get_friendly_name().removesuffix("_compressed"), "self.", wanted)
        if key is not None:
            return key
        consumers = [t.get_node() for t in node.output(0).get_target_inputs()]
        if len(consumers) != 1 or consumers[0].get_type_name() not in DECOMPRESSION or not _constant_input(consumers[0]):
            return None
        node = consumers[0]


def _transposed(end: Any) -> bool | None:
    """Whether a MatMul takes the weight transposed (transpose_b), where a MatMul takes it as its right operand."""
    for target in end.output(0).get_target_inputs():
        if target.get_node().get_type_name() == "MatMul" and target.get_index() == 1:
            return bool(target.get_node().get_attributes().get("transpose_b"))
    return None


def _weights(xml: str, wanted: dict[str, tuple[int, ...]]) -> tuple[dict[str, Any], dict[str, str], dict[str, bool | None]]:
    """Each wanted parameter's values as the IR computes with them (numpy), how each was found, and whether a MatMul
    takes it transposed."""
    import numpy as np  # noqa: PLC0415
    import openvino as ov  # noqa: PLC0415

    core = ov.Core()
    model = core.read_model(xml)
    ends: dict[str, Any] = {}
    found: dict[str, str] = {}
    unnamed: list[Any] = []
    for op in model.get_ops():
        if op.get_type_name() != "Constant":
            continue
        key = _named(op, wanted)
        if key is not None:
            ends[key] = _chain_end(op)
            found[key] = f"{op.get_element_type().get_type_name()} by name"
        elif op.get_output_partial_shape(0).is_static:
            unnamed.append(op)
    for key, shape in wanted.items():
        if key in ends:
            continue
        module, _, leaf = key.rpartition(".")
        candidates = []
        for op in unnamed:
            if math.prod(op.get_output_shape(0)) != math.prod(shape):
                continue
            end = _chain_end(op)
            users = [t.get_node() for t in end.output(0).get_target_inputs()]
            if any(_key(u.get_friendly_name().split("/", 1)[0], "__module.", {module}) == module and u.get_type_name() in CONSUMERS.get(leaf, ()) for u in users):
                candidates.append((op, end))
        if len(candidates) == 1:
            ends[key] = candidates[0][1]
            found[key] = f"{candidates[0][0].get_element_type().get_type_name()} by its consumer in __module.{module}"
    if ends:
        # One model of every chain's end, evaluated once: the weights exactly as the IR's decompression gives them.
        results = {key: ov.opset13.result(end.output(0)) if end.get_type_name() != "Constant" else None for key, end in ends.items()}
        computed = [k for k, r in results.items() if r is not None]
        values: dict[str, Any] = {}
        if computed:
            request = core.compile_model(ov.Model([results[k] for k in computed], [], "weights"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request()
            request.infer()
            values = {k: np.array(request.get_output_tensor(i).data) for i, k in enumerate(computed)}
        for key, end in ends.items():
            if key not in values:
                values[key] = np.array(end.get_data())
        return {k: v.astype(np.float32) for k, v in values.items()}, found, {k: _transposed(end) for k, end in ends.items()}
    return {}, found, {}


def _ir_logits(xml: str, ids: list[int]) -> Any:
    """The IR's logits for one prompt, the Optimum decoder's inputs fed (an empty cache where the IR takes it as
    inputs), f32, no dynamic quantization."""
    import numpy as np  # noqa: PLC0415
    import openvino as ov  # noqa: PLC0415

    compiled = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0", "KV_CACHE_PRECISION": "f32"})
    feeds = {"input_ids": np.array([ids], dtype=np.int64), "attention_mask": np.ones((1, len(ids)), dtype=np.int64), "position_ids": np.arange(len(ids), dtype=np.int64)[None], "beam_idx": np.zeros(1, dtype=np.int32)}
    names = {name for port in compiled.inputs for name in port.get_names()}
    # A stateless export (--disable-stateful) takes the cache as inputs: empty, batch 1, no positions yet.
    for port in compiled.inputs:
        if port.get_any_name().startswith("past_key_values"):
            dims = [d.get_length() if d.is_static else 1 if i == 0 else 0 for i, d in enumerate(port.get_partial_shape())]
            feeds[port.get_any_name()] = np.zeros(dims, dtype=port.get_element_type().to_dtype())
    request = compiled.create_infer_request()
    request.reset_state()
    request.infer({k: v for k, v in feeds.items() if k in names})
    return np.array(request.get_tensor("logits").data)


def _oriented(model: Any, key: str, value: Any, transposed: bool | None) -> Any:
    """A matrix a MatMul multiplies by, laid out as its module keeps it: a Linear [out, in], GPT-2's Conv1D [in, out]."""
    if transposed is None or value.ndim != 2:
        return value
    import torch  # noqa: PLC0415

    by_input = value.T if transposed else value  # [in, out]: the MatMul computes x @ by_input
    module = model.get_submodule(key.rpartition(".")[0])
    if isinstance(module, torch.nn.Linear):
        return by_input.T
    if type(module).__name__ == "Conv1D":
        return by_input
    return value


def rebuild(path: str, folder: str) -> str:
    """The Hugging Face folder of the IR at `path`, written into `folder`; returns how the weights were found and checked."""
    import numpy as np  # noqa: PLC0415
    import torch  # noqa: PLC0415
    from tokenizers import Tokenizer  # noqa: PLC0415
    from transformers import AutoConfig, AutoModelForCausalLM  # noqa: PLC0415

    config = AutoConfig.from_pretrained(path)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32).eval()
    state = model.state_dict()
    # Tied parameters (an LM head sharing the embedding) are one tensor: the IR has it once, under either name.
    groups: dict[int, list[str]] = {}
    for key, tensor in state.items():
        groups.setdefault(tensor.data_ptr(), []).append(key)
    xml = os.path.join(path, IR)
    values, found, transposed = _weights(xml, {k: tuple(t.shape) for k, t in state.items()})
    missing = []
    for keys in groups.values():
        have = [k for k in keys if k in values]
        if not have:
            # A buffer the model makes for itself (a causal mask, rotary frequencies) is not a weight: it stays as built.
            if not any(isinstance(getattr(model.get_submodule(k.rpartition(".")[0]), k.rpartition(".")[2], None), torch.nn.Parameter) for k in keys):
                continue
            missing.append(keys[0])
            continue
        value = _oriented(model, have[0], values[have[0]], transposed.get(have[0]))
        target = state[keys[0]]
        if [d for d in value.shape if d != 1] != [d for d in target.shape if d != 1]:
            raise BadInput(f"the IR's weight for {have[0]} has shape {list(value.shape)}, and {config.architectures[0]} of config.json needs {list(target.shape)}: the IR does not match its config.json")
        with torch.no_grad():
            target.copy_(torch.from_numpy(np.ascontiguousarray(value).reshape(target.shape)))
    # A parameter the converter folded away (a norm's scale of ones, a bias of zeros: multiplying by 1 and adding 0 are
    # removed) keeps the value the architecture starts it at; the logits below judge whether that was right.
    said_missing = f"{len(missing)} parameters absent from {IR} ({', '.join(missing[:4])}{', …' if len(missing) > 4 else ''})"
    ids = Tokenizer.from_file(os.path.join(path, "tokenizer.json")).encode(PROBE).ids[: config.max_position_embeddings if hasattr(config, "max_position_embeddings") else 64]
    with torch.no_grad():
        ours = model(torch.tensor([ids])).logits.numpy()
    theirs = _ir_logits(xml, ids)
    scale = max(1.0, float(np.abs(theirs).max()))
    diff = float(np.abs(ours - theirs).max()) if ours.shape == theirs.shape else math.inf
    if not diff <= TOLERANCE * scale:
        kept = f"; {said_missing} kept at their initial values" if missing else ""
        raise BadInput(f"the model rebuilt from {IR}'s weights gives other logits than the IR ({diff:.3g} apart on a {len(ids)}-token probe, largest logit {scale:.3g}{kept}): name the Hugging Face folder it was exported from instead")
    model.save_pretrained(folder)
    for name in TOKENIZER_FILES:
        if os.path.isfile(os.path.join(path, name)):
            shutil.copy2(os.path.join(path, name), os.path.join(folder, name))
    by_consumer = sum(1 for how in found.values() if "consumer" in how)
    kinds: dict[str, int] = {}
    for how in found.values():
        kinds[how.split(" ", 1)[0]] = kinds.get(how.split(" ", 1)[0], 0) + 1
    stored = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    decompressed = "; decompressed by OpenVINO as the IR computes them" if set(kinds) - {"f32"} else ""
    kept = f"; {said_missing} kept at the architecture's initial values" if missing else ""
    return f"{len(values)} weights read from the IR's constants ({stored}; {by_consumer} found by the operation consuming them{decompressed}{kept}), logits within {diff:.2g} of the IR's on a {len(ids)}-token probe"


def export(path: str, target: str) -> dict:
    with tempfile.TemporaryDirectory(dir=os.path.dirname(target)) as folder:
        how = rebuild(path, folder)
        summary = from_transformers.export(folder, target)
    return {
        **summary,
        "format": "openvino_ir",
        "exporter": f"the IR's weights into transformers ({how}), then {summary['exporter']}",
        "exporter_version": f"{summary['exporter_version']}, openvino {version('openvino')}",
    }
