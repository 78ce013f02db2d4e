"""On-disk cache of compiled models: one shared library plus the facts of the build that produced it.

Key: sha256 of (model file sha256, input names/dtypes/shapes, target, every option that changes the code, the tuning
seed, TVM's version, this worker's pipeline version). A hit skips import, tuning and build; the worker then reports
the ORIGINAL build's compile_ms and timings with cache_hit=true, so a Profile's compile figure always describes a
real compilation of exactly this code. Entries are written to a temporary folder and renamed into place, so a
crashed or concurrent writer never leaves a half entry behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

LIBRARY = "model.so"
META = "meta.json"


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def cache_key(parts: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def lookup(cache_dir: str, key: str) -> tuple[str, dict[str, Any]] | None:
    """(library path, stored meta) when a complete entry exists."""
    entry = Path(cache_dir) / key
    library, meta = entry / LIBRARY, entry / META
    if not (library.is_file() and meta.is_file()):
        return None
    try:
        return str(library), json.loads(meta.read_text())
    except (OSError, ValueError):
        return None


def store(cache_dir: str, key: str, executable: Any, meta: dict[str, Any]) -> str:
    """Export the executable's library and meta under cache_dir/key; returns the entry folder."""
    root = Path(cache_dir)
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=root))
    try:
        staging.chmod(0o755)
        executable.export_library(str(staging / LIBRARY))
        (staging / META).write_text(json.dumps(meta, indent=2, sort_keys=True))
        final = root / key
        try:
            os.rename(staging, final)
        except OSError:
            # Another worker stored the same key first: its entry is equivalent, keep it.
            shutil.rmtree(staging, ignore_errors=True)
        return str(final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
