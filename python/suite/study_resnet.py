"""digits_resnet: ResNet's basic residual blocks (He et al. 2016) scaled to 8x8 digits.

stem 3x3 conv 1->16, two stages of two basic blocks (3x3 conv, BN, ReLU, 3x3 conv, BN, add the shortcut, ReLU):
16 channels at 8x8, then 32 at 4x4 with a strided first conv and a 1x1 strided projection shortcut (ResNet's option
B); global average pool and a linear classifier. BatchNorm is folded into each conv on export.
"""

from __future__ import annotations

import numpy as np

from .jax_train import jnp
from .study_layers import conv_bn, he_normal, init_conv_bn
from .study_onnx import Graph

FAMILY = 'resnet'
STEM, CLASSES = 16, 10
# (name, input channels, output channels, stride)
BLOCKS = (('l1.0', 16, 16, 1), ('l1.1', 16, 16, 1), ('l2.0', 16, 32, 2), ('l2.1', 32, 32, 1))


def init(rng: np.random.Generator) -> dict:
    p: dict = {}
    init_conv_bn(p, rng, 'stem', STEM, 1, 3)
    for name, cin, cout, stride in BLOCKS:
        init_conv_bn(p, rng, f'{name}.conv1', cout, cin, 3)
        init_conv_bn(p, rng, f'{name}.conv2', cout, cout, 3)
        # Zero-init of the last BN scale in each block (Goyal et al.): every block starts as the identity.
        p[f'{name}.conv2.bn.scale'][:] = 0.0
        if stride != 1 or cin != cout:
            init_conv_bn(p, rng, f'{name}.downsample', cout, cin, 1)
    p['classifier.weight'] = he_normal(rng, (CLASSES, BLOCKS[-1][2]))
    p['classifier.bias'] = np.zeros(CLASSES, np.float32)
    return p


def forward(p: dict, x, train: bool):
    stats: dict = {}
    h = jnp.maximum(conv_bn(p, 'stem', x, 1, 1, 1, train, stats), 0)
    for name, cin, cout, stride in BLOCKS:
        y = jnp.maximum(conv_bn(p, f'{name}.conv1', h, stride, 1, 1, train, stats), 0)
        y = conv_bn(p, f'{name}.conv2', y, 1, 1, 1, train, stats)
        shortcut = conv_bn(p, f'{name}.downsample', h, stride, 0, 1, train, stats) if stride != 1 or cin != cout else h
        h = jnp.maximum(y + shortcut, 0)
    return h.mean(axis=(2, 3)) @ p['classifier.weight'].T + p['classifier.bias'], stats


def export(g: Graph) -> str:
    h = g.relu(g.conv('input', 'stem', 1, 1), 'stem.relu')
    for name, cin, cout, stride in BLOCKS:
        y = g.relu(g.conv(h, f'{name}.conv1', stride, 1), f'{name}.conv1.relu')
        y = g.conv(y, f'{name}.conv2', 1, 1)
        shortcut = g.conv(h, f'{name}.downsample', stride, 0) if stride != 1 or cin != cout else h
        h = g.relu(g.add(y, shortcut, f'{name}.add'), f'{name}.relu')
    return g.gemm(g.global_pool_flatten(h, 'pool'), 'classifier')
