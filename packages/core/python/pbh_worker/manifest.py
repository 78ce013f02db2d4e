"""The engine's manifest entry, read by the worker from the same file the harness validates configs with."""

from __future__ import annotations

import json
import os
from typing import Any, Mapping

from .errors import WorkerError

MANIFEST_ENV = "PBH_ENGINE_MANIFEST"
NAME_ENV = "PBH_ENGINE"


def _resolve(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return defs.get(ref[len("#/$defs/"):], {})
    return schema


class Declaration:
    """One engine of a manifest: its name, capabilities and options schema."""

    def __init__(self, manifest: Mapping[str, Any], entry: Mapping[str, Any], path: str) -> None:
        self.path = path
        self.name: str = entry["name"]
        self.devices: list[str] = list(entry.get("devices") or ["cpu"])
        self.capabilities: dict[str, bool] = dict(entry.get("capabilities") or {})
        self.options_schema: Mapping[str, Any] = entry.get("options") or {"type": "object", "properties": {}}
        self.defs: Mapping[str, Any] = manifest.get("$defs") or {}

    def options(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """`given` with the schema's defaults filled in; a key the schema does not name is refused.

        The harness sends options its zod schema (made from this same JSON Schema) parsed; this makes a worker
        driven directly read the same defaults.
        """
        properties: Mapping[str, Any] = self.options_schema.get("properties") or {}
        unknown = sorted(set(given) - set(properties))
        if unknown and self.options_schema.get("additionalProperties") is False:
            raise WorkerError("bad_request", f"engine {self.name} has no options {unknown} (its options: {sorted(properties)}; {self.path})")
        filled = dict(given)
        for key, schema in properties.items():
            schema = _resolve(schema, self.defs)
            if key not in filled and "default" in schema:
                filled[key] = schema["default"]
        return filled


def declared(name: str | None = None, path: str | None = None) -> Declaration:
    """The entry `name` of the manifest at `path` (default: what the harness put in PBH_ENGINE / PBH_ENGINE_MANIFEST)."""
    path = path or os.environ.get(MANIFEST_ENV)
    name = name or os.environ.get(NAME_ENV)
    if not path or not name:
        raise WorkerError("bad_manifest", f"the worker needs its manifest: set {MANIFEST_ENV} (the pbh-engine.json path) and {NAME_ENV} (the engine's name)", fatal=True)
    try:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise WorkerError("bad_manifest", f"cannot read the engine manifest {path}: {e}", fatal=True) from e
    for entry in manifest.get("engines") or []:
        if entry.get("name") == name:
            return Declaration(manifest, entry, path)
    names = [entry.get("name") for entry in manifest.get("engines") or []]
    raise WorkerError("bad_manifest", f"{path} declares no engine {name!r} (it declares {names})", fatal=True)
