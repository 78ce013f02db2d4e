"""Converts a model file born in another framework to ONNX, once, for the engines that read ONNX and the analysis.

Usage: python -m model_convert --cache DIR --from CONVERTER MODEL   (PYTHONPATH=python)
CONVERTER names a module of this package (CONVERTERS below; packages/core/src/model/convert.ts holds the same table
with the paths each takes). Prints one JSON object: {onnx_path, format, source_sha256, exporter, exporter_version,
framework_version, export_ms, cache_hit, input_names, output_names}. The export is kept under DIR/<key>/model.onnx,
the key hashing the source's bytes (every file of a folder), the converter, the framework's version and
EXPORT_VERSION (and the source's path for a converter with KEYED_BY_PATH), so every cell of a model and every later sweep reuses it. The ONNX file names its source in its
metadata (pbh.source.path, pbh.source.sha256, pbh.source.format, pbh.exporter): an engine that runs the source
natively (the PyTorch and TensorFlow engines) loads that source instead.
Errors go to stderr with exit 2 (bad input, the framework not installed) or 1 (export failed), one line naming the
file and what to do.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import sys
import time

from model_convert import BadInput

# Bump when what an export holds changes, so stale cache entries stop matching.
EXPORT_VERSION = 1
# Each converter module has FRAMEWORK (what it needs), INSTALL (how to get it), VERSION (optional: as EXPORT_VERSION,
# for its own exports), check(path) (raises BadInput), framework_version() (imports the framework) and
# export(path, target) -> {format, exporter, exporter_version, input_names, output_names}.
CONVERTERS = {"pytorch": "model_convert.from_pytorch", "tensorflow": "model_convert.from_tensorflow", "transformers": "model_convert.from_transformers", "gguf": "model_convert.from_gguf", "genai": "model_convert.from_genai", "openvino": "model_convert.from_openvino"}


def sha256(path: str) -> str:
    """The bytes of a file, or of every file in a folder (with their relative paths, in sorted order)."""
    digest = hashlib.sha256()
    files = [path] if os.path.isfile(path) else sorted(os.path.join(d, f) for d, _, names in os.walk(path) for f in names)
    for file in files:
        if file != path:
            digest.update(os.path.relpath(file, path).encode() + b"\0")
        with open(file, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def fail(code: int, message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.exit(code)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m model_convert")
    parser.add_argument("--cache", required=True)
    parser.add_argument("--from", dest="converter", required=True, choices=sorted(CONVERTERS))
    parser.add_argument("model")
    args = parser.parse_args()
    path = os.path.abspath(args.model)
    if not os.path.exists(path):
        fail(2, f"{args.model}: no such file or folder")
    converter = importlib.import_module(CONVERTERS[args.converter])
    try:
        converter.check(path)
        framework_version = converter.framework_version()
    except BadInput as e:
        fail(2, f"{args.model}: {e}")
    except ImportError as e:
        fail(2, f"{args.model} is a {converter.FRAMEWORK} model, and this venv cannot import it ({e}): {converter.INSTALL}")
    source_sha = sha256(path)
    # A converter's own VERSION (bumped when what its exports hold changes) keys its rows alone; 0 where it has none.
    # A converter whose source an engine runs by the path the export names (KEYED_BY_PATH) keys its rows by that path too.
    key = hashlib.sha256(json.dumps([source_sha, args.converter, framework_version, EXPORT_VERSION, *([converter.VERSION] if getattr(converter, "VERSION", 0) else []), *([path] if getattr(converter, "KEYED_BY_PATH", False) else [])]).encode()).hexdigest()[:32]
    folder = os.path.join(os.path.abspath(args.cache), key)
    target, summary_path = os.path.join(folder, "model.onnx"), os.path.join(folder, "export.json")
    if os.path.isfile(target) and os.path.isfile(summary_path):
        with open(summary_path, encoding="utf-8") as f:
            summary = json.load(f)
        print(json.dumps({**summary, "cache_hit": True}))
        return
    os.makedirs(folder, exist_ok=True)
    start = time.perf_counter()
    partial = target + ".partial"
    try:
        summary = converter.export(path, partial)
    except BadInput as e:
        fail(2, f"{args.model}: {e}")
    except Exception as e:  # noqa: BLE001 - the exporters raise many types; the message names the part that failed
        fail(1, f"{args.model}: {converter.FRAMEWORK} to ONNX failed: {type(e).__name__}: {str(e)[:2000]}")
    import onnx  # noqa: PLC0415

    model = onnx.load(partial)
    for k, v in {"pbh.source.path": path, "pbh.source.sha256": source_sha, "pbh.source.format": summary["format"], "pbh.exporter": f"{summary['exporter']} ({summary['exporter_version']})"}.items():
        model.metadata_props.add(key=k, value=v)
    onnx.save(model, target)
    os.remove(partial)
    if os.path.exists(partial + ".data"):
        os.remove(partial + ".data")
    summary = {**summary, "onnx_path": target, "source_sha256": source_sha, "framework_version": framework_version, "export_ms": (time.perf_counter() - start) * 1000}
    with open(summary_path, "w", encoding="utf-8") as f:
        json.dump(summary, f)
    print(json.dumps({**summary, "cache_hit": False}))


if __name__ == "__main__":
    main()
