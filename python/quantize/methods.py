"""The three quantizers, each a call of a kept library with the settings pbh quantize documents; nothing here
computes a scale or rounds a weight itself.

- static:  onnxruntime.quantization.quantize_static, QDQ format, MinMax calibration, U8S8 (activations uint8
           asymmetric, weights int8 symmetric: the pair ONNX Runtime's x86 kernels fuse into QLinearConv/QGemm; with
           S8S8 its CPU provider leaves convolutions in float here), per-channel or per-tensor weights. Every op type
           the tool quantizes by default except Softmax (KEPT_FLOAT), as NNCF does: one uint8 scale over [0, 1] rounds
           a classifier's small probabilities to a few steps (ResNet-50's outputs were 5 steps off between runtimes).
- dynamic: onnxruntime.quantization.quantize_dynamic, int8 weights, activations quantized at run time
           (DynamicQuantizeLinear + ConvInteger/MatMulInteger); no calibration.
- nncf:    nncf.quantize (NNCF's post-training quantization, ONNX backend): its default preset, statistics from the
           calibration samples, fast bias correction.
Each model first goes through onnxruntime's quant_pre_process (shape inference and its graph cleanup), as its docs ask.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

import numpy as np
import onnx

from .calibration import InputError, batches, data_input

from . import weight_only

METHODS = ('static', 'dynamic', 'nncf') + weight_only.METHODS
# Batch the calibration samples are fed in where the model's batch axis is free.
CALIBRATION_BATCH = 16
# Op types static quantization leaves in float (see the module's docstring).
KEPT_FLOAT = ('Softmax',)


@dataclass(frozen=True)
class Variant:
    method: str
    per_channel: bool

    @property
    def tag(self) -> str:
        if self.method in weight_only.METHODS:
            return 'int4' if self.method.endswith('int4') else 'int8'
        return 'int8' if self.per_channel else 'int8_pt'


def library_versions() -> dict[str, str]:
    import onnxruntime
    out = {'onnxruntime': onnxruntime.__version__}
    try:
        import nncf
        out['nncf'] = nncf.__version__
    except ImportError:
        pass
    return out


def preprocess(src: str, dst: str, log: Callable[[str], None]) -> str:
    from onnxruntime.quantization.shape_inference import quant_pre_process
    try:
        quant_pre_process(src, dst, skip_symbolic_shape=False)
    except Exception as e:  # the symbolic shape pass refuses some graphs; the ONNX one is enough for QDQ placement
        log(f'quant_pre_process with symbolic shapes failed ({type(e).__name__}: {e}); retrying without them')
        quant_pre_process(src, dst, skip_symbolic_shape=True)
    return dst


def _reader(model: onnx.ModelProto, samples: np.ndarray):
    from onnxruntime.quantization import CalibrationDataReader
    name = data_input(model).name
    chunks = batches(samples, model, CALIBRATION_BATCH)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter(chunks)

        def get_next(self):
            chunk = next(self.it, None)
            return None if chunk is None else {name: chunk}

        def rewind(self) -> None:
            self.it = iter(chunks)

    return Reader()


def ort_static(pre: str, out: str, v: Variant, samples: np.ndarray) -> dict:
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.registry import QDQRegistry, QLinearOpsRegistry
    model = onnx.load(pre)
    # The tool's own default set (QLinear and QDQ registries), less the kept-float ops.
    op_types = sorted((set(QLinearOpsRegistry) | set(QDQRegistry)) - set(KEPT_FLOAT))
    quantize_static(pre, out, _reader(model, samples), quant_format=QuantFormat.QDQ, per_channel=v.per_channel, op_types_to_quantize=op_types,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                    extra_options={'ActivationSymmetric': False, 'WeightSymmetric': True})
    return {'library': 'onnxruntime.quantization', 'call': f'quantize_static (op types but {", ".join(KEPT_FLOAT)})', 'format': 'qdq',
            'scheme': 'static', 'calibration_method': 'minmax'}


def ort_dynamic(pre: str, out: str, v: Variant, samples: np.ndarray | None) -> dict:
    from onnxruntime.quantization import QuantType, quantize_dynamic
    quantize_dynamic(pre, out, per_channel=v.per_channel, weight_type=QuantType.QInt8)
    return {'library': 'onnxruntime.quantization', 'call': 'quantize_dynamic', 'format': 'integer_ops', 'scheme': 'dynamic',
            'calibration_method': None}


def nncf_ptq(pre: str, out: str, v: Variant, samples: np.ndarray) -> dict:
    try:
        import nncf
        from nncf.quantization.advanced_parameters import AdvancedQuantizationParameters, QuantizationParameters
    except ImportError as e:
        raise InputError(f'--method nncf needs NNCF in the venv ({e}); run pbh doctor --fix (python/requirements.txt pins it)') from e
    model = onnx.load(pre)
    name = data_input(model).name
    chunks = batches(samples, model, 1)
    advanced = None if v.per_channel else AdvancedQuantizationParameters(weights_quantization_params=QuantizationParameters(per_channel=False))
    quantized = nncf.quantize(model, nncf.Dataset(chunks, lambda x: {name: x}), subset_size=len(chunks),
                              **({'advanced_parameters': advanced} if advanced else {}))
    onnx.save(quantized, out)
    return {'library': 'nncf', 'call': 'nncf.quantize', 'format': 'qdq', 'scheme': 'static',
            'calibration_method': 'nncf default (min/max statistics, fast bias correction)'}


def quantize(v: Variant, pre: str, out: str, samples: np.ndarray | None) -> dict:
    if v.method in weight_only.METHODS:
        return weight_only.compress(v.method, pre, out)
    if v.method != 'dynamic' and samples is None:
        raise InputError(f'--method {v.method} needs --calibration (static quantization sets activation scales from '
                         'calibration inputs); --method dynamic needs none')
    if v.method == 'static':
        return ort_static(pre, out, v, samples)
    if v.method == 'dynamic':
        return ort_dynamic(pre, out, v, samples)
    if v.method == 'nncf':
        return nncf_ptq(pre, out, v, samples)
    raise InputError(f'--method {v.method}: pbh quantize knows {", ".join(METHODS)}')


def scratch_path(out_dir: str, stem: str, what: str) -> str:
    return os.path.join(out_dir, f'.{stem}.{what}.tmp.onnx')
