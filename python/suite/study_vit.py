"""digits_vit: a small Vision Transformer (Dosovitskiy et al. 2021) for 8x8 digits.

2x2 patches embedded by a strided conv to 16 tokens of width 32, learned position embeddings, two pre-norm encoder
blocks (multi-head self-attention with 4 heads of 8, then an MLP 32-64-32 with exact GELU, each with a residual),
a final LayerNorm, the mean over tokens and a linear classifier. Linear layers export as MatMul + Add with the
weight stored [in, out], as torch exports nn.Linear on 3-D input.
"""

from __future__ import annotations

import numpy as np

from .jax_train import jax, jnp
from .study_layers import gelu, he_normal, init_linear, layer_norm, linear
from .study_onnx import Graph

FAMILY = 'vit'
PATCH, WIDTH, HEADS, MLP, DEPTH, CLASSES = 2, 32, 4, 64, 2, 10
TOKENS = (8 // PATCH) ** 2
HEAD_DIM = WIDTH // HEADS


def init(rng: np.random.Generator) -> dict:
    p: dict = {
        'patch.weight': he_normal(rng, (WIDTH, 1, PATCH, PATCH)),
        'patch.bias': np.zeros(WIDTH, np.float32),
        'pos_embedding': (rng.standard_normal((1, TOKENS, WIDTH)) * 0.02).astype(np.float32),
    }
    for i in range(DEPTH):
        for ln in ('ln1', 'ln2'):
            p[f'b{i}.{ln}.scale'] = np.ones(WIDTH, np.float32)
            p[f'b{i}.{ln}.bias'] = np.zeros(WIDTH, np.float32)
        for proj in ('q', 'k', 'v', 'out'):
            init_linear(p, rng, f'b{i}.attn.{proj}', WIDTH, WIDTH)
        init_linear(p, rng, f'b{i}.mlp.fc1', WIDTH, MLP)
        init_linear(p, rng, f'b{i}.mlp.fc2', MLP, WIDTH)
    p['ln.scale'] = np.ones(WIDTH, np.float32)
    p['ln.bias'] = np.zeros(WIDTH, np.float32)
    p['classifier.weight'] = he_normal(rng, (CLASSES, WIDTH))
    p['classifier.bias'] = np.zeros(CLASSES, np.float32)
    return p


def _heads(x):
    return x.reshape(x.shape[0], TOKENS, HEADS, HEAD_DIM).transpose(0, 2, 1, 3)


def forward(p: dict, x, train: bool):
    patches = jax.lax.conv_general_dilated(x, p['patch.weight'], (PATCH, PATCH), 'VALID', dimension_numbers=('NCHW', 'OIHW', 'NCHW'))
    h = (patches + p['patch.bias'][None, :, None, None]).reshape(x.shape[0], WIDTH, TOKENS).transpose(0, 2, 1)
    h = h + p['pos_embedding']
    for i in range(DEPTH):
        y = layer_norm(p, f'b{i}.ln1', h)
        q, k, v = (_heads(linear(p, f'b{i}.attn.{proj}', y)) for proj in ('q', 'k', 'v'))
        att = jax.nn.softmax((q @ k.transpose(0, 1, 3, 2)) * np.float32(1 / np.sqrt(HEAD_DIM)), axis=-1)
        o = (att @ v).transpose(0, 2, 1, 3).reshape(x.shape[0], TOKENS, WIDTH)
        h = h + linear(p, f'b{i}.attn.out', o)
        y = layer_norm(p, f'b{i}.ln2', h)
        h = h + linear(p, f'b{i}.mlp.fc2', gelu(linear(p, f'b{i}.mlp.fc1', y)))
    h = layer_norm(p, 'ln', h).mean(axis=1)
    return h @ p['classifier.weight'].T + p['classifier.bias'], {}


def export(g: Graph) -> str:
    patches = g.conv('input', 'patch', PATCH, 0)
    h = g.transpose(g.reshape(patches, [0, WIDTH, TOKENS], 'patch.flatten'), [0, 2, 1], 'tokens')
    h = g.add(h, g.param('pos_embedding'), 'tokens.pos')
    scale = g.const('attn.scale', np.float32(1 / np.sqrt(HEAD_DIM)))
    for i in range(DEPTH):
        b = f'b{i}'
        y = g.layer_norm(h, f'{b}.ln1')
        q, k, v = (g.transpose(g.reshape(g.linear(y, f'{b}.attn.{proj}'), [0, TOKENS, HEADS, HEAD_DIM], f'{b}.attn.{proj}.split'),
                               [0, 2, 1, 3], f'{b}.attn.{proj}.heads') for proj in ('q', 'k', 'v'))
        scores = g.mul(g.matmul(q, g.transpose(k, [0, 1, 3, 2], f'{b}.attn.kT'), f'{b}.attn.scores'), scale, f'{b}.attn.scaled')
        o = g.matmul(g.softmax(scores, f'{b}.attn.softmax'), v, f'{b}.attn.context')
        o = g.reshape(g.transpose(o, [0, 2, 1, 3], f'{b}.attn.merge'), [0, TOKENS, WIDTH], f'{b}.attn.concat')
        h = g.add(h, g.linear(o, f'{b}.attn.out'), f'{b}.attn.residual')
        y = g.layer_norm(h, f'{b}.ln2')
        h = g.add(h, g.linear(g.gelu(g.linear(y, f'{b}.mlp.fc1'), f'{b}.mlp.gelu'), f'{b}.mlp.fc2'), f'{b}.mlp.residual')
    h = g.mean_tokens(g.layer_norm(h, 'ln'), 'pool')
    return g.gemm(h, 'classifier')
