"""The models python/generate_llms.py builds, checked as an LLM engine would use them: each Hugging Face folder loads
with transformers and generates non-trivial greedy text; each Optimum ONNX export reproduces transformers' logits
through a prefill and a cached decode step under ONNX Runtime; the OpenVINO IR and the ONNX Runtime GenAI folder,
where built, reproduce the prefill logits; grouped-query models carry fewer key-value heads than attention heads.

    .venv/bin/python -m pytest python/tests/test_generate_llms.py   (PBH_LLMS=folder, default .cache/llms)

The generator must have run first (test/generate-llms.test.ts runs it, a no-op when current)."""

from __future__ import annotations

import json
import os

os.environ.setdefault('USE_TF', '0')
os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')

import numpy as np
import pytest

ROOT = os.environ.get('PBH_LLMS') or os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), '.cache', 'llms')
# fp32 on both sides: ONNX Runtime runs the same graph transformers traced (the brief's bound); OpenVINO and ORT GenAI
# rebuild attention with their own fused kernels, whose summation order differs more.
ONNX_TOLERANCE = 1e-4
REBUILT_TOLERANCE = 1e-3
GREEDY_TOKENS = 24

with open(os.path.join(ROOT, 'llms.json')) as f:
    SUMMARY = json.load(f)
NAMES = sorted(SUMMARY['models'])
with open(os.path.join(ROOT, SUMMARY['prompts'])) as f:
    PROMPTS = [json.loads(line)['prompt'] for line in f]


def at(path: str) -> str:
    return os.path.join(ROOT, path)


@pytest.fixture(scope='module', params=NAMES)
def hf(request):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    entry = SUMMARY['models'][request.param]
    model = AutoModelForCausalLM.from_pretrained(at(entry['hf']['path'])).eval()
    tok = AutoTokenizer.from_pretrained(at(entry['hf']['path']))
    return request.param, entry, model, tok


def reference(model, ids: np.ndarray) -> np.ndarray:
    import torch

    with torch.no_grad():
        return model(input_ids=torch.from_numpy(ids)).logits.numpy()


def test_the_expected_architectures_were_built():
    assert NAMES == ['gpt2', 'llama_gqa', 'phi3', 'qwen2']
    archs = {n: SUMMARY['models'][n]['architecture'] for n in NAMES}
    assert archs == {'gpt2': 'GPT2LMHeadModel', 'llama_gqa': 'LlamaForCausalLM', 'phi3': 'Phi3ForCausalLM', 'qwen2': 'Qwen2ForCausalLM'}
    assert len(PROMPTS) == SUMMARY['prompt_lengths']['count']
    assert len(open(at(SUMMARY['held_out']), encoding='utf-8').read()) > 1000


def test_hf_folder_generates_non_trivial_greedy_text(hf):
    import torch

    name, entry, model, tok = hf
    assert model.config.architectures == [entry['architecture']]
    assert len(tok) == SUMMARY['tokenizer']['vocab'] and tok.decode(tok(PROMPTS[0]).input_ids) == PROMPTS[0]
    assert entry['held_out_nll'] < entry['uniform_nll'] - 1.5, 'training lowered held-out loss well below uniform'
    non_trivial = []
    for prompt in PROMPTS:
        ids = tok(prompt, return_tensors='pt').input_ids
        with torch.no_grad():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=GREEDY_TOKENS, min_new_tokens=GREEDY_TOKENS,
                                 do_sample=False, pad_token_id=tok.pad_token_id)[0, ids.shape[1]:].tolist()
        non_trivial.append(len(set(out)) > 2)
    # A trained model continues most prompts with varied tokens; an untrained or broken one repeats one token.
    assert sum(non_trivial) >= len(PROMPTS) // 2, f'{name}: only {sum(non_trivial)} of {len(PROMPTS)} greedy continuations vary'


def test_optimum_onnx_prefill_and_decode_match_transformers(hf):
    import onnxruntime as ort

    name, entry, model, tok = hf
    onnx = entry['onnx']
    names = [i['name'] for i in onnx['inputs']]
    assert names[0] == 'input_ids' and 'attention_mask' in names and [o['name'] for o in onnx['outputs']][0] == 'logits'
    layers = entry['shape']['layers']
    assert [n for n in names if n.startswith('past_key_values.')] == [f'past_key_values.{i}.{kv}' for i in range(layers) for kv in ('key', 'value')]
    sess = ort.InferenceSession(at(onnx['path']), providers=['CPUExecutionProvider'])
    ids = np.asarray([tok(PROMPTS[1]).input_ids], dtype=np.int64)
    T = ids.shape[1]
    kv = entry['shape']['kv_heads']
    past = {n: np.zeros((1, kv, 0, entry['shape']['head_dim']), np.float32) for n in names if n.startswith('past_key_values.')}

    def feed(step_ids: np.ndarray, start: int, cache: dict) -> dict:
        x = {'input_ids': step_ids, 'attention_mask': np.ones((1, start + step_ids.shape[1]), np.int64), **cache}
        if 'position_ids' in names:
            x['position_ids'] = np.arange(start, start + step_ids.shape[1], dtype=np.int64)[None]
        return x

    out_names = [o.name for o in sess.get_outputs()]
    prefill = dict(zip(out_names, sess.run(None, feed(ids, 0, past))))
    nxt = np.asarray([[int(prefill['logits'][0, -1].argmax())]], np.int64)
    cache = {n.replace('present.', 'past_key_values.'): v for n, v in prefill.items() if n.startswith('present.')}
    assert cache['past_key_values.0.key'].shape == (1, kv, T, entry['shape']['head_dim'])
    decode = dict(zip(out_names, sess.run(None, feed(nxt, T, cache))))
    ref = reference(model, np.concatenate([ids, nxt], axis=1))
    np.testing.assert_allclose(prefill['logits'], ref[:, :T], atol=ONNX_TOLERANCE, rtol=0)
    np.testing.assert_allclose(decode['logits'], ref[:, T:], atol=ONNX_TOLERANCE, rtol=0)
    assert decode['present.0.key'].shape[2] == T + 1


def test_grouped_query_attention_has_fewer_kv_heads():
    import torch
    from transformers import AutoModelForCausalLM

    gqa = SUMMARY['models']['llama_gqa']
    shape = gqa['shape']
    assert shape['kv_heads'] < shape['heads']
    past = [i for i in gqa['onnx']['inputs'] if i['name'] == 'past_key_values.0.key'][0]
    assert past['shape'][1] == shape['kv_heads']
    model = AutoModelForCausalLM.from_pretrained(at(gqa['hf']['path']))
    assert model.config.num_key_value_heads == shape['kv_heads'] < model.config.num_attention_heads == shape['heads']
    with torch.no_grad():
        cache = model(input_ids=torch.tensor([[1, 2, 3]]), use_cache=True).past_key_values
    assert tuple(cache.layers[0].keys.shape) == (1, shape['kv_heads'], 3, shape['head_dim'])
    # The multi-head ones keep as many key-value heads as attention heads.
    for name in ('gpt2', 'phi3'):
        s = SUMMARY['models'][name]['shape']
        assert s['kv_heads'] == s['heads']


def test_openvino_ir_prefill_matches_transformers(hf):
    name, entry, model, tok = hf
    if 'skipped' in entry['openvino']:
        pytest.skip(entry['openvino']['skipped'])
    import openvino as ov

    assert entry['openvino']['stateful'] and entry['openvino']['tokenizer']
    core = ov.Core()
    compiled = core.compile_model(at(entry['openvino']['path']), 'CPU', {'INFERENCE_PRECISION_HINT': 'f32', 'INFERENCE_NUM_THREADS': 1})
    request = compiled.create_infer_request()
    ids = np.asarray([tok(PROMPTS[2]).input_ids], dtype=np.int64)
    T = ids.shape[1]
    request.reset_state()
    logits = request.infer({'input_ids': ids, 'attention_mask': np.ones((1, T), np.int64), 'position_ids': np.arange(T, dtype=np.int64)[None],
                            'beam_idx': np.zeros(1, np.int32)})['logits']
    np.testing.assert_allclose(logits, reference(model, ids), atol=REBUILT_TOLERANCE, rtol=0)


def test_ort_genai_folder_prefill_matches_transformers(hf):
    name, entry, model, tok = hf
    if 'skipped' in entry['genai']:
        assert name == 'gpt2', f'{name}: {entry["genai"]["skipped"]}'
        pytest.skip(entry['genai']['skipped'])
    import onnxruntime_genai as og

    m = og.Model(at(os.path.dirname(entry['genai']['path'])))
    ids = tok(PROMPTS[3]).input_ids
    assert og.Tokenizer(m).encode(PROMPTS[3]).tolist() == ids, 'ORT GenAI reads tokenizer.json as transformers does'
    params = og.GeneratorParams(m)
    params.set_search_options(max_length=len(ids) + 4, do_sample=False)
    gen = og.Generator(m, params)
    gen.append_tokens(np.asarray(ids, np.int32))
    np.testing.assert_allclose(gen.get_output('logits'), reference(model, np.asarray([ids], np.int64)), atol=REBUILT_TOLERANCE, rtol=0)
