"""The Hugging Face folder behind a model path, for engines that run the folder itself (transformers, LLM runtimes).

The harness hands worker engines the ONNX file it analysed: for a Hugging Face folder that is the export PBH made
(python/model_convert), whose metadata names the folder (pbh.source.path, pbh.source.format hf_transformers).
"""

from __future__ import annotations

import os

from .errors import WorkerError


def hf_folder(path: str, engine: str) -> str | None:
    """`path` when it is a folder with config.json, the folder an export of PBH's names, else None."""
    if os.path.isdir(path):
        return path if os.path.isfile(os.path.join(path, "config.json")) else None
    if not path.endswith(".onnx") or not os.path.isfile(path):
        return None
    try:
        import onnx  # noqa: PLC0415
    except ImportError as e:
        raise WorkerError("import_error", f"{engine} reads the export's metadata with onnx: {e}") from e
    meta = {p.key: p.value for p in onnx.load(path, load_external_data=False).metadata_props}
    folder = meta.get("pbh.source.path")
    if meta.get("pbh.source.format") == "hf_transformers" and folder and os.path.isdir(folder):
        return folder
    return None
