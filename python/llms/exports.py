"""Each model's exports as users make them: Optimum ONNX (optimum-onnx), the stateful OpenVINO IR (optimum-intel) and
an ONNX Runtime GenAI folder (onnxruntime_genai.models.builder). The last two are optional: when their package is not
installed or it refuses an architecture, the part is skipped and the reason recorded."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil

TASK = 'text-generation-with-past'
TOKENIZER_FILES = ('tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'vocab.json', 'merges.txt')


def _io(model_path: str) -> dict:
    """Input and output names, element types and shapes (symbolic dimensions by name) of an ONNX graph."""
    import onnx

    g = onnx.load(model_path, load_external_data=False).graph

    def desc(v) -> dict:
        t = v.type.tensor_type
        dims = [d.dim_param or d.dim_value for d in t.shape.dim]
        return {'name': v.name, 'dtype': onnx.helper.tensor_dtype_to_np_dtype(t.elem_type).name, 'shape': dims}

    return {'inputs': [desc(v) for v in g.input], 'outputs': [desc(v) for v in g.output]}


def copy_tokenizer(src: str, dst: str) -> None:
    for name in TOKENIZER_FILES:
        if os.path.isfile(os.path.join(src, name)) and not os.path.isfile(os.path.join(dst, name)):
            shutil.copy2(os.path.join(src, name), os.path.join(dst, name))


def optimum_onnx(hf_dir: str, out: str) -> dict:
    """Optimum's decoder export with the key-value cache in and out; the tokenizer files beside it."""
    from optimum.exporters.onnx import main_export

    # Optimum's own validation (onnxruntime against torch on dummy inputs) stays on: an export it cannot reproduce fails here.
    main_export(hf_dir, output=out, task=TASK, device='cpu', dtype='fp32', local_files_only=True)
    copy_tokenizer(hf_dir, out)
    return {'path': os.path.join(out, 'model.onnx'), 'exporter': f'optimum-onnx {_version("optimum-onnx")}', **_io(os.path.join(out, 'model.onnx'))}


def openvino_ir(hf_dir: str, out: str) -> dict:
    """optimum-intel's stateful IR (the cache lives in the model's state; inputs input_ids, attention_mask,
    position_ids, beam_idx), fp32 weights, with OpenVINO tokenizer and detokenizer models for OpenVINO GenAI."""
    if importlib.util.find_spec('optimum.intel') is None:
        return {'skipped': 'optimum-intel is not installed (npx pbh doctor --fix --engine llm)'}
    from optimum.exporters.openvino import main_export
    from optimum.intel import OVConfig

    main_export(hf_dir, output=out, task=TASK, stateful=True, convert_tokenizer=True, ov_config=OVConfig(dtype='fp32'), local_files_only=True)
    copy_tokenizer(hf_dir, out)
    import openvino as ov

    m = ov.Core().read_model(os.path.join(out, 'openvino_model.xml'))
    return {
        'path': os.path.join(out, 'openvino_model.xml'), 'exporter': f'optimum-intel {_version("optimum-intel")}', 'stateful': len(m.get_sinks()) > 0,
        'inputs': [p.get_any_name() for p in m.inputs], 'outputs': [p.get_any_name() for p in m.outputs],
        'tokenizer': os.path.isfile(os.path.join(out, 'openvino_tokenizer.xml')) and os.path.isfile(os.path.join(out, 'openvino_detokenizer.xml')),
    }


def ort_genai(hf_dir: str, out: str, cache: str) -> dict:
    """ONNX Runtime GenAI's model builder at fp32 for the CPU: model.onnx, genai_config.json, the tokenizer files."""
    if importlib.util.find_spec('onnxruntime_genai') is None:
        return {'skipped': 'onnxruntime-genai is not installed (npx pbh doctor --fix --engine llm)'}
    from onnxruntime_genai.models import builder

    options = builder.parse_extra_options(None, hf_dir, out, 'fp32', 'cpu', cache, [])
    try:
        builder.create_model(None, hf_dir, out, 'fp32', 'cpu', cache, **options)
    except NotImplementedError:
        shutil.rmtree(out, ignore_errors=True)
        with open(os.path.join(hf_dir, 'config.json')) as f:
            architecture = json.load(f)['architectures'][0]
        return {'skipped': f'the model builder of onnxruntime-genai {_version("onnxruntime-genai")} does not take {architecture} ("not currently supported")'}
    copy_tokenizer(hf_dir, out)
    return {'path': os.path.join(out, 'model.onnx'), 'config': os.path.join(out, 'genai_config.json'),
            'exporter': f'onnxruntime-genai {_version("onnxruntime-genai")}', **_io(os.path.join(out, 'model.onnx'))}


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)
