"""A Hugging Face decoder folder (config.json, safetensors weights, tokenizer.json) to the ONNX decoder Optimum exports.

optimum-onnx's `main_export` with task text-generation-with-past: input_ids, attention_mask, position_ids (where the
architecture takes them), past_key_values.N.key/value -> logits, present.N.key/value, batch and sequence axes open.
The tokenizer and config files are copied beside the export, so the harness finds the model's tokenizer next to
the ONNX file as it does for an Optimum export a user brings.
"""

from __future__ import annotations

import json
import os
import tempfile
from importlib.metadata import version

from model_convert import BadInput, copy_beside

FRAMEWORK = "Hugging Face transformers"
INSTALL = "npx pbh doctor --fix --engine llm"
TASK = "text-generation-with-past"
BESIDE = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")

# transformers imports TensorFlow when it is installed (the TensorFlow engines put it in the venv): not needed here.
os.environ.setdefault("USE_TF", "0")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")


def check(path: str) -> None:
    config = os.path.join(path, "config.json")
    if not os.path.isdir(path) or not os.path.isfile(config):
        raise BadInput("a Hugging Face model is a folder with config.json (save_pretrained writes one)")
    names = os.listdir(path)
    if not any(n.endswith(".safetensors") or n in ("pytorch_model.bin", "pytorch_model.bin.index.json") for n in names):
        raise BadInput("has config.json but no weights (model.safetensors, model-*.safetensors or pytorch_model.bin): save the model with save_pretrained")
    with open(config, encoding="utf-8") as f:
        architectures = json.load(f).get("architectures") or []
    if not any(a.endswith("ForCausalLM") or a.endswith("LMHeadModel") for a in architectures):
        raise BadInput(f"config.json names architectures {architectures}; PBH's generate workload runs decoder language models (…ForCausalLM, …LMHeadModel)")


def framework_version() -> str:
    import transformers  # noqa: PLC0415 - the venv may lack it; the caller says how to install it

    return f"transformers {transformers.__version__}, optimum-onnx {version('optimum-onnx')}"


def export(path: str, target: str) -> dict:
    from optimum.exporters.onnx import main_export  # noqa: PLC0415
    import onnx  # noqa: PLC0415

    with tempfile.TemporaryDirectory(dir=os.path.dirname(target)) as out:
        main_export(path, out, task=TASK, device="cpu", local_files_only=True, do_validation=False)
        exported = os.path.join(out, "model.onnx")
        if not os.path.isfile(exported):
            raise RuntimeError(f"optimum-onnx wrote {sorted(os.listdir(out))}, no model.onnx")
        model = onnx.load(exported)
        # One file: the harness hashes and the engines read model.onnx alone (a 2 GB model would need external data).
        onnx.save(model, target)
    copy_beside(path, BESIDE, target)
    return {
        "format": "hf_transformers",
        "exporter": f"optimum-onnx main_export (task {TASK})",
        "exporter_version": f"optimum-onnx {version('optimum-onnx')}, optimum {version('optimum')}, transformers {version('transformers')}, torch {version('torch')}",
        "input_names": [i.name for i in model.graph.input],
        "output_names": [o.name for o in model.graph.output],
    }
