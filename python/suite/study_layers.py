"""jax building blocks of the study families, each with the ONNX node(s) it exports to (study_onnx.Graph).

Parameter names are ONNX initializer names. A Conv followed by BatchNorm trains as `<name>.weight` (no bias) plus
`<name>.bn.scale`/`<name>.bn.bias` on batch statistics, and deploys folded, as torch.onnx.export does in eval mode:
`<name>.weight` scaled per output channel and `<name>.bias`. The deploy forward is the exported graph, op for op.
"""

from __future__ import annotations

import numpy as np

from .jax_train import jax, jnp

BN_EPS = 1e-5
LN_EPS = 1e-5


def he_normal(rng: np.random.Generator, shape: tuple[int, ...], fan_in: int | None = None) -> np.ndarray:
    fan = fan_in if fan_in is not None else int(np.prod(shape[1:]))
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan)).astype(np.float32)


def init_conv_bn(p: dict, rng: np.random.Generator, name: str, cout: int, cin_per_group: int, k: int) -> None:
    p[f'{name}.weight'] = he_normal(rng, (cout, cin_per_group, k, k))
    p[f'{name}.bn.scale'] = np.ones(cout, np.float32)
    p[f'{name}.bn.bias'] = np.zeros(cout, np.float32)


def init_linear(p: dict, rng: np.random.Generator, name: str, fan_in: int, fan_out: int) -> None:
    """A MatMul weight stored [in, out], as torch exports nn.Linear applied to a 3-D input."""
    p[f'{name}.weight'] = (rng.standard_normal((fan_in, fan_out)) * np.sqrt(1.0 / fan_in)).astype(np.float32)
    p[f'{name}.bias'] = np.zeros(fan_out, np.float32)


def conv(x, w, stride: int, pad: int, groups: int):
    if groups > 1 and groups == x.shape[1] == w.shape[0]:
        return _depthwise(x, w, stride, pad)
    if w.shape[-1] == 1 and stride == 1 and pad == 0 and groups == 1:
        # A pointwise conv is a matrix product over channels; XLA's CPU convolution is several times slower here.
        return jnp.einsum('nchw,oc->nohw', x, w[:, :, 0, 0])
    return jax.lax.conv_general_dilated(x, w, (stride, stride), [(pad, pad), (pad, pad)],
                                        dimension_numbers=('NCHW', 'OIHW', 'NCHW'), feature_group_count=groups)


def _depthwise(x, w, stride: int, pad: int):
    """A depthwise conv as a sum over its kernel taps of shifted, channel-scaled inputs: the same arithmetic as ONNX's
    Conv with group = channels, but XLA's CPU grouped convolution (and its gradient) is ~10x slower at these sizes."""
    k = w.shape[-1]
    xp = jnp.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho = (x.shape[2] + 2 * pad - k) // stride + 1
    wo = (x.shape[3] + 2 * pad - k) // stride + 1
    out = 0.0
    for i in range(k):
        for j in range(k):
            tap = xp[:, :, i:i + (ho - 1) * stride + 1:stride, j:j + (wo - 1) * stride + 1:stride]
            out = out + tap * w[None, :, 0, i, j, None, None]
    return out


def conv_bn(p: dict, name: str, x, stride: int, pad: int, groups: int, train: bool, stats: dict):
    """Conv then BatchNorm while training (statistics recorded in `stats`); the folded Conv when deployed."""
    if not train:
        return conv(x, p[f'{name}.weight'], stride, pad, groups) + p[f'{name}.bias'][None, :, None, None]
    y = conv(x, p[f'{name}.weight'], stride, pad, groups)
    mean = y.mean(axis=(0, 2, 3))
    var = y.var(axis=(0, 2, 3))
    stats[name] = (mean, var)
    y = (y - mean[None, :, None, None]) / jnp.sqrt(var[None, :, None, None] + BN_EPS)
    return y * p[f'{name}.bn.scale'][None, :, None, None] + p[f'{name}.bn.bias'][None, :, None, None]


def fold_batchnorm(params: dict, stats: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict:
    """Training params + population statistics -> deploy params: W' = W * g / sqrt(var + eps), b' = beta - mean * g / sqrt(var + eps)."""
    out = {k: v for k, v in params.items() if '.bn.' not in k}
    for name, (mean, var) in stats.items():
        factor = params[f'{name}.bn.scale'] / np.sqrt(var + BN_EPS)
        out[f'{name}.weight'] = (params[f'{name}.weight'] * factor[:, None, None, None]).astype(np.float32)
        out[f'{name}.bias'] = (params[f'{name}.bn.bias'] - mean * factor).astype(np.float32)
    return out


def relu6(x):
    return jnp.clip(x, 0.0, 6.0)


def layer_norm(p: dict, name: str, x):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + LN_EPS) * p[f'{name}.scale'] + p[f'{name}.bias']


def linear(p: dict, name: str, x):
    return x @ p[f'{name}.weight'] + p[f'{name}.bias']


def gelu(x):
    """The exact (erf) GELU, exported as Div, Erf, Add, Mul, Mul."""
    return 0.5 * x * (1.0 + jax.lax.erf(x / np.float32(np.sqrt(2.0))))
