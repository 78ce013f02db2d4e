"""A tiny numpy CNN/MLP and a two-input tabular MLP with hand-written forward and backward passes.

Layouts match ONNX so export is a plain copy: activations are NCHW, Conv weights are [M, C, kh, kw],
Gemm weights are [out, in] (exported with transB=1), Flatten after MaxPool is C-major (c, h, w),
an embedding table is [categories, dim] (exported as the data of a Gather on axis 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

Params = dict[str, np.ndarray]
# One array, or one per model input (all with the samples on axis 0).
Inputs = np.ndarray | tuple[np.ndarray, ...]

# Parameter names double as ONNX initializer names; weights (rank >= 2) are the prunable ones.
CNN_WEIGHTS = ('conv1.weight', 'conv2.weight', 'fc1.weight', 'fc2.weight')
MLP_WEIGHTS = ('fc1.weight', 'fc2.weight')


def he_normal(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    fan_in = int(np.prod(shape[1:]))
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def init_cnn(rng: np.random.Generator) -> Params:
    return {
        'conv1.weight': he_normal(rng, (16, 1, 3, 3)),
        'conv1.bias': np.zeros(16, np.float32),
        'conv2.weight': he_normal(rng, (32, 16, 3, 3)),
        'conv2.bias': np.zeros(32, np.float32),
        'fc1.weight': he_normal(rng, (64, 512)),
        'fc1.bias': np.zeros(64, np.float32),
        'fc2.weight': he_normal(rng, (10, 64)),
        'fc2.bias': np.zeros(10, np.float32),
    }


def init_mlp(rng: np.random.Generator, hidden: int = 128) -> Params:
    return {
        'fc1.weight': he_normal(rng, (hidden, 64)),
        'fc1.bias': np.zeros(hidden, np.float32),
        'fc2.weight': he_normal(rng, (10, hidden)),
        'fc2.bias': np.zeros(10, np.float32),
    }


def init_tabular(rng: np.random.Generator, features: int, categories: int, classes: int, embed: int = 4, hidden: int = 32) -> Params:
    return {
        'category.embedding': (rng.standard_normal((categories, embed)) * 0.1).astype(np.float32),
        'fc1.weight': he_normal(rng, (hidden, features + embed)),
        'fc1.bias': np.zeros(hidden, np.float32),
        'fc2.weight': he_normal(rng, (classes, hidden)),
        'fc2.bias': np.zeros(classes, np.float32),
    }


def _im2col_3x3(x: np.ndarray) -> np.ndarray:
    """[N, C, H, W] -> [N*H*W, C*9] for a 3x3 kernel, stride 1, pad 1; columns ordered (c, kh, kw) like W.reshape(M, -1)."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))  # [N, C, H, W, 3, 3]
    return np.ascontiguousarray(win.transpose(0, 2, 3, 1, 4, 5)).reshape(n * h * w, c * 9)


def _col2im_3x3(dcols: np.ndarray, shape: tuple[int, int, int, int]) -> np.ndarray:
    n, c, h, w = shape
    d = dcols.reshape(n, h, w, c, 3, 3)
    dxp = np.zeros((n, c, h + 2, w + 2), np.float32)
    for i in range(3):
        for j in range(3):
            dxp[:, :, i:i + h, j:j + w] += d[:, :, :, :, i, j].transpose(0, 3, 1, 2)
    return dxp[:, :, 1:-1, 1:-1]


def _conv_forward(x: np.ndarray, wt: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n, _, h, w = x.shape
    cols = _im2col_3x3(x)
    out = cols @ wt.reshape(wt.shape[0], -1).T + b
    return out.reshape(n, h, w, -1).transpose(0, 3, 1, 2), cols


def _conv_backward(dout: np.ndarray, cols: np.ndarray, wt: np.ndarray, x_shape) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m = wt.shape[0]
    d = dout.transpose(0, 2, 3, 1).reshape(-1, m)
    dw = (d.T @ cols).reshape(wt.shape)
    db = d.sum(axis=0)
    dx = _col2im_3x3(d @ wt.reshape(m, -1), x_shape)
    return dx, dw, db


def _maxpool2_forward(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n, c, h, w = x.shape
    win = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, h // 2, w // 2, 4)
    arg = win.argmax(axis=-1)
    return np.take_along_axis(win, arg[..., None], axis=-1)[..., 0], arg


def _maxpool2_backward(dout: np.ndarray, arg: np.ndarray, x_shape) -> np.ndarray:
    n, c, h, w = x_shape
    dwin = np.zeros((n, c, h // 2, w // 2, 4), np.float32)
    np.put_along_axis(dwin, arg[..., None], dout[..., None], axis=-1)
    return dwin.reshape(n, c, h // 2, w // 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(x_shape)


def cnn_forward(p: Params, x: np.ndarray, keep: bool = False):
    """x [N,1,8,8] -> logits [N,10]; with keep=True also returns the cache backward needs."""
    z1, cols1 = _conv_forward(x, p['conv1.weight'], p['conv1.bias'])
    a1 = np.maximum(z1, 0)
    z2, cols2 = _conv_forward(a1, p['conv2.weight'], p['conv2.bias'])
    a2 = np.maximum(z2, 0)
    pooled, arg = _maxpool2_forward(a2)
    flat = pooled.reshape(len(x), -1)
    z3 = flat @ p['fc1.weight'].T + p['fc1.bias']
    a3 = np.maximum(z3, 0)
    logits = a3 @ p['fc2.weight'].T + p['fc2.bias']
    if not keep:
        return logits
    return logits, (x, cols1, z1, a1, cols2, z2, arg, pooled, flat, z3, a3)


def cnn_backward(p: Params, cache, dlogits: np.ndarray) -> Params:
    x, cols1, z1, a1, cols2, z2, arg, pooled, flat, z3, a3 = cache
    g: Params = {}
    g['fc2.weight'] = dlogits.T @ a3
    g['fc2.bias'] = dlogits.sum(0)
    dz3 = (dlogits @ p['fc2.weight']) * (z3 > 0)
    g['fc1.weight'] = dz3.T @ flat
    g['fc1.bias'] = dz3.sum(0)
    dpooled = (dz3 @ p['fc1.weight']).reshape(pooled.shape)
    dz2 = _maxpool2_backward(dpooled, arg, z2.shape) * (z2 > 0)
    da1, g['conv2.weight'], g['conv2.bias'] = _conv_backward(dz2, cols2, p['conv2.weight'], a1.shape)
    dz1 = da1 * (z1 > 0)
    _, g['conv1.weight'], g['conv1.bias'] = _conv_backward(dz1, cols1, p['conv1.weight'], x.shape)
    return g


def mlp_forward(p: Params, x: np.ndarray, keep: bool = False):
    z1 = x @ p['fc1.weight'].T + p['fc1.bias']
    a1 = np.maximum(z1, 0)
    logits = a1 @ p['fc2.weight'].T + p['fc2.bias']
    return (logits, (x, z1, a1)) if keep else logits


def mlp_backward(p: Params, cache, dlogits: np.ndarray) -> Params:
    x, z1, a1 = cache
    dz1 = (dlogits @ p['fc2.weight']) * (z1 > 0)
    return {
        'fc2.weight': dlogits.T @ a1,
        'fc2.bias': dlogits.sum(0),
        'fc1.weight': dz1.T @ x,
        'fc1.bias': dz1.sum(0),
    }


def tabular_forward(p: Params, inputs: tuple[np.ndarray, np.ndarray], keep: bool = False):
    """(features [N,F], category [N] int) -> logits [N,classes]: the category's embedding row joins the features."""
    features, category = inputs
    joined = np.concatenate([features, p['category.embedding'][category]], axis=1)
    z1 = joined @ p['fc1.weight'].T + p['fc1.bias']
    a1 = np.maximum(z1, 0)
    logits = a1 @ p['fc2.weight'].T + p['fc2.bias']
    return (logits, (features.shape[1], category, joined, z1, a1)) if keep else logits


def tabular_backward(p: Params, cache, dlogits: np.ndarray) -> Params:
    n_features, category, joined, z1, a1 = cache
    dz1 = (dlogits @ p['fc2.weight']) * (z1 > 0)
    dembedding = np.zeros_like(p['category.embedding'])
    # add.at, not fancy-index assignment: a category that occurs twice in a batch must collect both gradients.
    np.add.at(dembedding, category, (dz1 @ p['fc1.weight'])[:, n_features:])
    return {
        'fc2.weight': dlogits.T @ a1,
        'fc2.bias': dlogits.sum(0),
        'fc1.weight': dz1.T @ joined,
        'fc1.bias': dz1.sum(0),
        'category.embedding': dembedding,
    }


def _rows(x: Inputs, idx: np.ndarray) -> Inputs:
    return tuple(a[idx] for a in x) if isinstance(x, tuple) else x[idx]


def softmax_xent_grad(logits: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy and its gradient with respect to the logits."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    prob = np.exp(shifted)
    prob /= prob.sum(axis=1, keepdims=True)
    n = len(y)
    loss = float(-np.log(prob[np.arange(n), y] + 1e-12).mean())
    prob[np.arange(n), y] -= 1.0
    return loss, (prob / n).astype(np.float32)


@dataclass
class Adam:
    lr: float
    b1: float = 0.9
    b2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.0
    t: int = 0
    m: Params = field(default_factory=dict)
    v: Params = field(default_factory=dict)

    def step(self, p: Params, g: Params) -> None:
        self.t += 1
        for k, grad in g.items():
            if self.weight_decay and p[k].ndim >= 2:
                grad = grad + self.weight_decay * p[k]
            m = self.m.setdefault(k, np.zeros_like(grad))
            v = self.v.setdefault(k, np.zeros_like(grad))
            m *= self.b1
            m += (1 - self.b1) * grad
            v *= self.b2
            v += (1 - self.b2) * grad * grad
            mhat = m / (1 - self.b1 ** self.t)
            vhat = v / (1 - self.b2 ** self.t)
            p[k] -= (self.lr * mhat / (np.sqrt(vhat) + self.eps)).astype(np.float32)


def train(
    p: Params,
    forward,
    backward,
    x: Inputs,
    y: np.ndarray,
    rng: np.random.Generator,
    epochs: int,
    lr: float,
    batch: int = 32,
    masks: Params | None = None,
) -> float:
    """Adam with a cosine learning rate; masks (name -> 0/1 array) are re-applied after every step so pruned weights stay zero.

    Returns the final epoch's mean training loss.
    """
    opt = Adam(lr=lr, weight_decay=1e-4)
    steps_per_epoch = -(-len(y) // batch)
    total = epochs * steps_per_epoch
    loss_sum = 0.0
    for epoch in range(epochs):
        order = rng.permutation(len(y))
        loss_sum = 0.0
        for s in range(steps_per_epoch):
            idx = order[s * batch:(s + 1) * batch]
            logits, cache = forward(p, _rows(x, idx), keep=True)
            loss, dlogits = softmax_xent_grad(logits, y[idx])
            loss_sum += loss
            g = backward(p, cache, dlogits)
            opt.lr = lr * 0.5 * (1 + np.cos(np.pi * (epoch * steps_per_epoch + s) / total))
            opt.step(p, g)
            if masks:
                for k, mask in masks.items():
                    p[k] *= mask
    return loss_sum / steps_per_epoch


def accuracy(logits: np.ndarray, y: np.ndarray) -> float:
    return float((logits.argmax(axis=1) == y).mean())
