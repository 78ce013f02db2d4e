"""The Hugging Face folder behind a model path, for engines that run the folder itself (transformers, LLM runtimes).

The harness hands worker engines the ONNX file it analysed: for a Hugging Face folder that is the export PBH made
(python/model_convert), whose metadata names the folder (pbh.source.path, pbh.source.format hf_transformers).
"""

from __future__ import annotations

import os

from .errors import WorkerError


def build_home(path: str, work_dir: str | None, engine: str) -> str:
    """Where an engine keeps what it builds from a Hugging Face folder: beside PBH's export of it (the conversion cache,
    keyed by the source's content), else the cell's scratch folder; never inside a folder the user owns."""
    home = os.path.dirname(path) if os.path.isfile(path) else work_dir
    if home is None:
        raise WorkerError("bad_request", f"{engine} builds {path} into a scratch folder: send work_dir with load")
    return home


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
