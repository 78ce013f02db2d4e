"""The folder behind an export: PBH's own export names it; a file made from that export (pbh quantize, pbh prune) does
not, because the folder is no longer that model."""

import json

import onnx
from onnx import TensorProto, helper

from pbh_worker.sources import hf_folder, recorded_source


def _export(path, folder, **extra):
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    model = helper.make_model(graph)
    for key, value in {"pbh.source.path": str(folder), "pbh.source.format": "hf_transformers", **extra}.items():
        model.metadata_props.add(key=key, value=value)
    onnx.save(model, str(path))
    return str(path)


def test_an_export_names_its_folder(tmp_path):
    folder = tmp_path / "hf"
    folder.mkdir()
    export = _export(tmp_path / "model.onnx", folder)
    assert recorded_source(export, "test") == (str(folder), "hf_transformers")
    assert hf_folder(export, "test") == str(folder)


def test_a_file_made_from_the_export_names_none(tmp_path):
    folder = tmp_path / "hf"
    folder.mkdir()
    quantized = _export(tmp_path / "model.int4.onnx", folder, **{"pbh.optimization": json.dumps({"kind": "quantization", "method": "int4"})})
    assert recorded_source(quantized, "test") is None
    assert hf_folder(quantized, "test") is None


def test_a_folder_that_is_gone_is_none(tmp_path):
    assert recorded_source(_export(tmp_path / "model.onnx", tmp_path / "gone"), "test") is None
