"""An ONNX Runtime GenAI folder (genai_config.json and its decoder, as `onnxruntime_genai.models.builder` writes) to
the ONNX file the analysis and the ONNX engines read: the folder's own decoder graph, copied whole (external data
joined into one file), with genai_config.json (the decoder's context length) and the tokenizer files beside it. onnxruntime-genai runs the folder itself, found through
the export's metadata (pbh.source.path); ONNX Runtime and OpenVINO run the decoder graph where they take its
operators (the builder's GroupQueryAttention and fused norms are ONNX Runtime contrib ops).
"""

from __future__ import annotations

import json
import os

from model_convert import BadInput, copy_beside

FRAMEWORK = "ONNX Runtime GenAI folder (read with onnx)"
INSTALL = "npx pbh doctor --fix --engine llm"
CONFIG = "genai_config.json"
BESIDE = (CONFIG, "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json", "generation_config.json")
# onnxruntime-genai runs the folder at the path the export's metadata names: a copy elsewhere gets its own export.
KEYED_BY_PATH = True


def _config(path: str) -> dict:
    with open(os.path.join(path, CONFIG), encoding="utf-8") as f:
        return (json.load(f).get("model") or {}).get("decoder") or {}


def _decoder(path: str) -> str:
    filename = _config(path).get("filename")
    if not isinstance(filename, str) or not filename:
        raise BadInput(f"{CONFIG} names no model.decoder.filename: a GenAI folder's decoder is what PBH analyses and the ONNX engines run")
    return os.path.join(path, filename)


def check(path: str) -> None:
    if not os.path.isdir(path) or not os.path.isfile(os.path.join(path, CONFIG)):
        raise BadInput(f"an ONNX Runtime GenAI model is a folder with {CONFIG} (python -m onnxruntime_genai.models.builder writes one)")
    decoder = _decoder(path)
    if not os.path.isfile(decoder):
        raise BadInput(f"{CONFIG} names the decoder {os.path.basename(decoder)}, which is not in the folder")
    if not os.path.isfile(os.path.join(path, "tokenizer.json")):
        raise BadInput("has no tokenizer.json: PBH tokenizes prompts with the model's own tokenizer; copy the Hugging Face tokenizer.json into the folder")


def framework_version() -> str:
    import onnx  # noqa: PLC0415

    return f"onnx {onnx.__version__}"


def _fix_head_size(model, head_size: object) -> None:
    """The builder leaves the cache's last axis open (kv_cache_dim); genai_config.json states it (decoder.head_size),
    and the cache layout PBH reads takes it fixed, as every Optimum export has it."""
    if not isinstance(head_size, int) or head_size <= 0:
        return
    for value in [*model.graph.input, *model.graph.output]:
        if not value.name.startswith(("past_key_values.", "present.")):
            continue
        dims = value.type.tensor_type.shape.dim
        if len(dims) == 4 and dims[3].dim_param:
            dims[3].dim_value = head_size


def export(path: str, target: str) -> dict:
    import onnx  # noqa: PLC0415

    model = onnx.load(_decoder(path))
    _fix_head_size(model, _config(path).get("head_size"))
    onnx.save(model, target)
    copy_beside(path, BESIDE, target)
    return {
        "format": "onnxruntime_genai",
        "exporter": f"the GenAI folder's own decoder ({os.path.basename(_decoder(path))}), copied",
        "exporter_version": framework_version(),
        "input_names": [i.name for i in model.graph.input],
        "output_names": [o.name for o in model.graph.output],
    }
