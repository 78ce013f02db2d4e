"""Weight-only compression, the kind a language model's decoder takes (its activations stay float): each a call of a
kept library, nothing here rounds a weight itself.

- int4:      onnxruntime.quantization.matmul_nbits_quantizer.MatMulNBitsQuantizer, round to nearest, symmetric, blocks
             of BLOCK weights per column: every MatMul with a constant weight becomes com.microsoft.MatMulNBits
             (ONNX Runtime runs it natively; OpenVINO's ONNX reader decompresses it into its own int4 weights).
- nncf-int8: nncf.compress_weights(mode=INT8_ASYM), per output channel: uint8 weights behind DequantizeLinear.
- nncf-int4: nncf.compress_weights(mode=INT4_SYM, group_size=BLOCK, ratio=1.0): MatMulNBits, with the embeddings and
             the last MatMul kept at int8 as NNCF does by default.
They need no calibration data. A decoder's tokenizer files are copied beside the written file, as Optimum writes them,
so `pbh run` feeds the compressed decoder the same ids.
"""

from __future__ import annotations

import os
import shutil

import onnx

from .calibration import InputError

METHODS = ('int4', 'nncf-int8', 'nncf-int4')
# Weights per scale along a column: the block ONNX Runtime GenAI's builder and NNCF's int4 examples use for small models.
BLOCK = 32
# What save_pretrained and optimum-cli export write beside a decoder, and the harness reads (tokenizer.json above all).
TOKENIZER_FILES = ('tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'vocab.json', 'merges.txt',
                   'config.json', 'generation_config.json')


def is_decoder(model: onnx.ModelProto) -> bool:
    """The Hugging Face decoder layout (optimum-cli export onnx --task text-generation-with-past)."""
    return any(i.name == 'past_key_values.0.key' for i in model.graph.input)


def compress(method: str, src: str, out: str) -> dict:
    if method == 'int4':
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
        quantizer = MatMulNBitsQuantizer(onnx.load(src), block_size=BLOCK, is_symmetric=True)
        quantizer.process()
        quantizer.model.save_model_to_file(out, use_external_data_format=False)
        return {'library': 'onnxruntime.quantization', 'call': f'MatMulNBitsQuantizer(block_size={BLOCK}, is_symmetric=True)',
                'format': 'matmul_nbits', 'scheme': 'weight_only', 'calibration_method': None}
    try:
        import nncf
    except ImportError as e:
        raise InputError(f'--method {method} needs NNCF in the venv ({e}); run pbh doctor --fix (python/requirements.txt pins it)') from e
    if method == 'nncf-int8':
        options, call = {'mode': nncf.CompressWeightsMode.INT8_ASYM}, 'compress_weights(mode=INT8_ASYM)'
    else:
        options, call = {'mode': nncf.CompressWeightsMode.INT4_SYM, 'group_size': BLOCK, 'ratio': 1.0}, f'compress_weights(mode=INT4_SYM, group_size={BLOCK}, ratio=1.0)'
    try:
        compressed = nncf.compress_weights(onnx.load(src), **options)
    except Exception as e:  # NNCF raises its own types for shapes it cannot group; the message says which
        raise InputError(f'--method {method}: NNCF cannot compress {src} ({type(e).__name__}: {e}); a weight narrower than '
                         f'{BLOCK} columns cannot take int4 groups of {BLOCK}: use --method nncf-int8 or int4') from e
    onnx.save(compressed, out)
    return {'library': 'nncf', 'call': f'nncf.{call}', 'format': 'matmul_nbits' if method == 'nncf-int4' else 'qdq',
            'scheme': 'weight_only', 'calibration_method': None}


def copy_tokenizer(src: str, out_dir: str) -> list[str]:
    """The decoder's tokenizer files, copied beside the compressed files; refuses to replace a different tokenizer."""
    folder = os.path.dirname(os.path.abspath(src))
    if not os.path.exists(os.path.join(folder, 'tokenizer.json')):
        raise InputError(f'{src} is a decoder with no tokenizer.json beside it: pbh run feeds a decoder ids from its own '
                         'tokenizer; put the tokenizer files beside the model (optimum-cli export onnx writes them) and run again')
    copied = []
    for name in TOKENIZER_FILES:
        source, target = os.path.join(folder, name), os.path.join(out_dir, name)
        if not os.path.exists(source) or os.path.abspath(source) == os.path.abspath(target):
            continue
        with open(source, 'rb') as f:
            data = f.read()
        if os.path.exists(target):
            with open(target, 'rb') as f:
                if f.read() != data:
                    raise InputError(f'{target} already holds a different {name}: write the variants of this model to another --out folder')
            continue
        shutil.copyfile(source, target)
        copied.append(name)
    return copied
