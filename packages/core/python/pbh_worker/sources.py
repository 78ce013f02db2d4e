"""The folder behind a model path, for engines that run the folder itself (transformers, the LLM runtimes).

The harness hands worker engines the ONNX file it analysed: for a Hugging Face or ONNX Runtime GenAI folder that is
the export PBH made (python/model_convert), whose metadata names the folder (pbh.source.path) and its kind
(pbh.source.format: hf_transformers, onnxruntime_genai, openvino_ir, gguf).
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


def recorded_source(path: str, engine: str) -> tuple[str, str] | None:
    """(folder, format) an export of PBH's was made from (pbh.source.path, pbh.source.format), where that folder is
    still there; None for any other path."""
    if not path.endswith(".onnx") or not os.path.isfile(path):
        return None
    try:
        import onnx  # noqa: PLC0415
    except ImportError as e:
        raise WorkerError("import_error", f"{engine} reads the export's metadata with onnx: {e}") from e
    meta = {p.key: p.value for p in onnx.load(path, load_external_data=False).metadata_props}
    folder, kind = meta.get("pbh.source.path"), meta.get("pbh.source.format")
    return (folder, kind) if folder and kind and os.path.isdir(folder) else None


def hf_folder(path: str, engine: str) -> str | None:
    """`path` when it is a folder with config.json, the folder an export of PBH's names, else None."""
    if os.path.isdir(path):
        return path if os.path.isfile(os.path.join(path, "config.json")) else None
    source = recorded_source(path, engine)
    return source[0] if source and source[1] == "hf_transformers" else None
