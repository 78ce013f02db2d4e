"""Training for the study families with jax autograd: AdamW with a cosine learning rate, mini-batches, seeded.

The families (study_*.py) write their forward passes in jax.numpy once, for training (BatchNorm on batch statistics)
and for deployment (BatchNorm folded into the Conv, the graph that is exported), and let jax differentiate them:
hand-written backward passes for depthwise convs, residual BatchNorm blocks and attention would be most of the code.
"""

from __future__ import annotations

import os
from typing import Callable

import numpy as np

# XLA's CPU client sizes its thread pool from the machine: one thread keeps the shared 2-core machine usable and the
# results independent of the thread count (set before jax is imported).
os.environ.setdefault('XLA_FLAGS', '--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1')

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update('jax_platforms', 'cpu')

Params = dict[str, jnp.ndarray]
# forward(params, x, train) -> (logits, batch statistics of every BatchNorm: name -> (mean, var))
Forward = Callable[[Params, jnp.ndarray, bool], tuple[jnp.ndarray, dict]]


def cross_entropy(logits: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


def train(params: Params, forward: Forward, x: np.ndarray, y: np.ndarray, seed: int, epochs: int, lr: float,
          batch: int = 64, weight_decay: float = 1e-4, warmup_epochs: int = 1) -> tuple[Params, float]:
    """AdamW (decoupled decay on rank >= 2 weights) with linear warmup then cosine; returns params and the last epoch's mean loss."""
    steps_per_epoch = len(y) // batch  # whole batches only: one compiled step shape
    total, warmup = epochs * steps_per_epoch, warmup_epochs * steps_per_epoch
    b1, b2, eps = 0.9, 0.999, 1e-8
    decays = {k: v.ndim >= 2 for k, v in params.items()}

    def loss_fn(p, xb, yb):
        logits, _ = forward(p, xb, True)
        return cross_entropy(logits, yb)

    @jax.jit
    def step(p, m, v, t, xb, yb):
        loss, g = jax.value_and_grad(loss_fn)(p, xb, yb)
        rate = lr * jnp.where(t < warmup, (t + 1) / warmup, 0.5 * (1 + jnp.cos(jnp.pi * (t - warmup) / max(1, total - warmup))))
        m = {k: b1 * m[k] + (1 - b1) * g[k] for k in p}
        v = {k: b2 * v[k] + (1 - b2) * g[k] * g[k] for k in p}
        bc1, bc2 = 1 - b1 ** (t + 1), 1 - b2 ** (t + 1)
        p = {k: p[k] - rate * ((m[k] / bc1) / (jnp.sqrt(v[k] / bc2) + eps) + (weight_decay * p[k] if decays[k] else 0.0)) for k in p}
        return p, m, v, loss

    p = {k: jnp.asarray(v) for k, v in params.items()}
    m = {k: jnp.zeros_like(v) for k, v in p.items()}
    v = {k: jnp.zeros_like(a) for k, a in p.items()}
    rng = np.random.default_rng(seed)
    t = 0
    last = 0.0
    for _ in range(epochs):
        order = rng.permutation(len(y))
        losses = []
        for s in range(steps_per_epoch):
            idx = order[s * batch:(s + 1) * batch]
            p, m, v, loss = step(p, m, v, t, x[idx], y[idx])
            losses.append(loss)
            t += 1
        last = float(np.mean(np.asarray(losses)))
    return {k: np.asarray(a) for k, a in p.items()}, last


def batchnorm_statistics(params: Params, forward: Forward, x: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every BatchNorm's mean and variance over the whole training split with the final weights (precise BN statistics)."""
    _, stats = jax.jit(lambda p, xb: forward(p, xb, True))(params, x)
    return {k: (np.asarray(mean), np.asarray(var)) for k, (mean, var) in stats.items()}


def predict(params: Params, forward: Forward, x: np.ndarray) -> np.ndarray:
    logits, _ = jax.jit(lambda p, xb: forward(p, xb, False))(params, x)
    return np.asarray(logits)
