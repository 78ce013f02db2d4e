"""The folder behind a model path, for engines that run the folder itself (transformers, the LLM runtimes, OpenVINO's IR).

The harness hands worker engines the ONNX file it analysed: for a Hugging Face or ONNX Runtime GenAI folder that is
the export PBH made (python/model_convert), whose metadata names the folder (pbh.source.path) and its kind
(pbh.source.format: hf_transformers, onnxruntime_genai, openvino_ir, gguf).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Any

from .errors import WorkerError

# The model file of an OpenVINO IR folder as optimum-cli export openvino writes it.
IR = "openvino_model.xml"


def build_home(path: str, work_dir: str | None, engine: str) -> str:
    """Where an engine keeps what it builds from a Hugging Face folder: beside PBH's export of it (the conversion cache,
    keyed by the source's content), else the cell's scratch folder; never inside a folder the user owns."""
    home = os.path.dirname(path) if os.path.isfile(path) else work_dir
    if home is None:
        raise WorkerError("bad_request", f"{engine} builds {path} into a scratch folder: send work_dir with load")
    return home


def recorded_source(path: str, engine: str) -> tuple[str, str] | None:
    """(folder, format) an export of PBH's was made from (pbh.source.path, pbh.source.format), where that folder is
    still there; None for any other path, and for a file made from the export (pbh.optimization: quantized, pruned)."""
    if not path.endswith(".onnx") or not os.path.isfile(path):
        return None
    try:
        import onnx  # noqa: PLC0415
    except ImportError as e:
        raise WorkerError("import_error", f"{engine} reads the export's metadata with onnx: {e}") from e
    meta = {p.key: p.value for p in onnx.load(path, load_external_data=False).metadata_props}
    folder, kind = meta.get("pbh.source.path"), meta.get("pbh.source.format")
    # A file pbh quantize or prune made from the export keeps its metadata, but the folder no longer is that model.
    if "pbh.optimization" in meta:
        return None
    return (folder, kind) if folder and kind and os.path.isdir(folder) else None


def hf_folder(path: str, engine: str) -> str | None:
    """`path` when it is a folder with config.json, the folder an export of PBH's names, else None."""
    if os.path.isdir(path):
        return path if os.path.isfile(os.path.join(path, "config.json")) else None
    source = recorded_source(path, engine)
    return source[0] if source and source[1] == "hf_transformers" else None


def exported_ir(source: str, home: str, weight_format: str = "fp32", group_size: int = 128) -> tuple[str, dict[str, Any]]:
    """(folder, facts) of optimum-intel's stateful IR of the Hugging Face folder `source` (its command line; NNCF
    compresses int8/int4 weights), exported once into `home`, keyed by optimum-intel's version and the weight format,
    written atomically: the OpenVINO engines share it."""
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        exporter_version = version("optimum-intel")
    except PackageNotFoundError as e:
        raise WorkerError("import_error", f"exporting {source} to OpenVINO IR needs optimum-intel: npx pbh doctor --fix --engine pytorch --engine llm") from e
    detail = f"{weight_format}, group size {group_size}" if weight_format == "int4" else weight_format
    out = os.path.join(home, f"openvino-ir-{exporter_version}-{weight_format}" + (f"-g{group_size}" if weight_format == "int4" else ""))
    facts: dict[str, Any] = {"exported": not os.path.isfile(os.path.join(out, IR)), "source": source, "exporter": f"optimum-intel {exporter_version} (optimum-cli export openvino --weight-format {detail})"}
    if not facts["exported"]:
        return out, facts
    partial = out + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    command = [sys.executable, "-m", "optimum.commands.optimum_cli", "export", "openvino", "--model", source, "--task", "text-generation-with-past", "--weight-format", weight_format]
    if weight_format == "int4":
        command += ["--group-size", str(group_size), "--ratio", "1.0"]
    command.append(partial)
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "USE_TF": "0"}, check=False)
    if done.returncode != 0 or not os.path.isfile(os.path.join(partial, IR)):
        said = " ".join(done.stderr.strip().splitlines()[-3:])
        raise WorkerError("unsupported_model", f"optimum-intel could not export {source} to OpenVINO IR: {said[-600:]}")
    os.replace(partial, out)
    return out, facts
