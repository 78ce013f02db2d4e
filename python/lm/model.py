"""A pre-LayerNorm decoder-only transformer over bytes, written in jax.numpy for training.

onnx_graph.py writes the same arithmetic as an ONNX graph with a fixed-capacity key-value cache; build.py checks the
two agree (full-window logits, and incremental decoding against the full window).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Shape:
    vocab: int = 256
    d_model: int = 64
    heads: int = 4
    layers: int = 2
    # Positions the model knows, and the key-value cache's capacity: a prompt plus its continuation fit in it.
    context: int = 128

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads


def init(shape: Shape, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    d = shape.d_model

    def w(*dims: int, scale: float = 0.02) -> np.ndarray:
        return (rng.standard_normal(dims) * scale).astype(np.float32)

    p = {'tok_emb': w(shape.vocab, d), 'pos_emb': w(shape.context, d), 'ln_f.g': np.ones(d, np.float32), 'ln_f.b': np.zeros(d, np.float32)}
    for l in range(shape.layers):
        p |= {
            f'h{l}.ln1.g': np.ones(d, np.float32), f'h{l}.ln1.b': np.zeros(d, np.float32),
            f'h{l}.qkv.w': w(d, 3 * d), f'h{l}.qkv.b': np.zeros(3 * d, np.float32),
            f'h{l}.proj.w': w(d, d, scale=0.02 / np.sqrt(2 * shape.layers)), f'h{l}.proj.b': np.zeros(d, np.float32),
            f'h{l}.ln2.g': np.ones(d, np.float32), f'h{l}.ln2.b': np.zeros(d, np.float32),
            f'h{l}.fc.w': w(d, 4 * d), f'h{l}.fc.b': np.zeros(4 * d, np.float32),
            f'h{l}.out.w': w(4 * d, d, scale=0.02 / np.sqrt(2 * shape.layers)), f'h{l}.out.b': np.zeros(d, np.float32),
        }
    return p


def forward(params, tokens, shape: Shape):
    """Logits [B, T, vocab] of a window starting at position 0 (causal attention)."""
    import jax
    import jax.numpy as jnp

    def ln(x, g, b):
        mean = jnp.mean(x, -1, keepdims=True)
        var = jnp.mean((x - mean) ** 2, -1, keepdims=True)
        return (x - mean) / jnp.sqrt(var + 1e-5) * g + b

    B, T = tokens.shape
    H, Dh = shape.heads, shape.head_dim
    x = params['tok_emb'][tokens] + params['pos_emb'][:T]
    causal = jnp.tril(jnp.ones((T, T), bool))
    for l in range(shape.layers):
        h = ln(x, params[f'h{l}.ln1.g'], params[f'h{l}.ln1.b'])
        qkv = h @ params[f'h{l}.qkv.w'] + params[f'h{l}.qkv.b']
        q, k, v = (a.reshape(B, T, H, Dh).transpose(0, 2, 1, 3) for a in jnp.split(qkv, 3, axis=-1))
        scores = jnp.where(causal, q @ k.transpose(0, 1, 3, 2) / np.sqrt(Dh), -1e9)
        att = (jax.nn.softmax(scores, -1) @ v).transpose(0, 2, 1, 3).reshape(B, T, shape.d_model)
        x = x + att @ params[f'h{l}.proj.w'] + params[f'h{l}.proj.b']
        h = ln(x, params[f'h{l}.ln2.g'], params[f'h{l}.ln2.b'])
        x = x + jax.nn.gelu(h @ params[f'h{l}.fc.w'] + params[f'h{l}.fc.b'], approximate=False) @ params[f'h{l}.out.w'] + params[f'h{l}.out.b']
    x = ln(x, params['ln_f.g'], params['ln_f.b'])
    return x @ params['tok_emb'].T


def train(shape: Shape, data: np.ndarray, seed: int, steps: int, batch: int, lr: float, log) -> tuple[dict[str, np.ndarray], float]:
    """AdamW, linear warmup then cosine, random windows of `context` bytes; returns params and the last 50 steps' mean loss."""
    import jax
    import jax.numpy as jnp

    T = shape.context
    b1, b2, eps, wd, warmup = 0.9, 0.95, 1e-8, 0.01, max(1, steps // 20)

    def loss_fn(p, xb):
        logits = forward(p, xb[:, :-1], shape)
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, xb[:, 1:, None], axis=-1))

    decays = {k: k.endswith('.w') for k in init(shape, 0)}

    @jax.jit
    def step(p, m, v, t, xb):
        loss, g = jax.value_and_grad(loss_fn)(p, xb)
        rate = lr * jnp.where(t < warmup, (t + 1) / warmup, 0.5 * (1 + jnp.cos(jnp.pi * (t - warmup) / max(1, steps - warmup))))
        m = {k: b1 * m[k] + (1 - b1) * g[k] for k in p}
        v = {k: b2 * v[k] + (1 - b2) * g[k] * g[k] for k in p}
        bc1, bc2 = 1 - b1 ** (t + 1), 1 - b2 ** (t + 1)
        p = {k: p[k] - rate * ((m[k] / bc1) / (jnp.sqrt(v[k] / bc2) + eps) + (wd * p[k] if decays[k] else 0.0)) for k in p}
        return p, m, v, loss

    rng = np.random.default_rng(seed)
    p = {k: jnp.asarray(a) for k, a in init(shape, seed).items()}
    m = {k: jnp.zeros_like(a) for k, a in p.items()}
    v = {k: jnp.zeros_like(a) for k, a in p.items()}
    losses = []
    for t in range(steps):
        starts = rng.integers(0, len(data) - T - 1, size=batch)
        xb = np.stack([data[s:s + T + 1] for s in starts]).astype(np.int32)
        p, m, v, loss = step(p, m, v, t, xb)
        losses.append(loss)
        if (t + 1) % 100 == 0:
            log(f'lm step {t + 1}/{steps}: loss {float(np.mean(np.asarray(losses[-100:]))):.3f} nats/byte')
    return {k: np.asarray(a, dtype=np.float32) for k, a in p.items()}, float(np.mean(np.asarray(losses[-50:])))
