"""digits_mobilenet_v2: MobileNet v2's inverted residuals (Sandler et al. 2018) scaled to 8x8 digits.

stem 3x3 conv 1->16, then inverted residual blocks (expand 1x1 -> depthwise 3x3 -> linear project 1x1, a residual
where stride 1 keeps the width), each conv with BatchNorm (folded on export) and ReLU6 except the projection,
a 1x1 head conv to 128, global average pool and a linear classifier.
"""

from __future__ import annotations

import numpy as np

from .study_layers import conv_bn, he_normal, init_conv_bn, relu6
from .study_onnx import Graph

FAMILY = 'mobilenet_v2'
STEM, HEAD, CLASSES = 16, 128, 10
# (expansion t, output channels c, stride s), as in the paper's table 2.
BLOCKS = ((1, 16, 1), (4, 24, 2), (4, 24, 1), (4, 32, 2), (4, 32, 1))


def _blocks():
    cin = STEM
    for i, (t, c, s) in enumerate(BLOCKS):
        yield f'b{i}', cin, cin * t, c, s, t != 1, s == 1 and cin == c
        cin = c


def init(rng: np.random.Generator) -> dict:
    p: dict = {}
    init_conv_bn(p, rng, 'stem', STEM, 1, 3)
    for name, cin, hidden, c, _, expand, _ in _blocks():
        if expand:
            init_conv_bn(p, rng, f'{name}.expand', hidden, cin, 1)
        init_conv_bn(p, rng, f'{name}.dw', hidden, 1, 3)
        init_conv_bn(p, rng, f'{name}.project', c, hidden, 1)
    init_conv_bn(p, rng, 'head', HEAD, BLOCKS[-1][1], 1)
    p['classifier.weight'] = he_normal(rng, (CLASSES, HEAD))
    p['classifier.bias'] = np.zeros(CLASSES, np.float32)
    return p


def forward(p: dict, x, train: bool):
    stats: dict = {}
    h = relu6(conv_bn(p, 'stem', x, 1, 1, 1, train, stats))
    for name, _, hidden, _, s, expand, residual in _blocks():
        y = relu6(conv_bn(p, f'{name}.expand', h, 1, 0, 1, train, stats)) if expand else h
        y = relu6(conv_bn(p, f'{name}.dw', y, s, 1, hidden, train, stats))
        y = conv_bn(p, f'{name}.project', y, 1, 0, 1, train, stats)
        h = h + y if residual else y
    h = relu6(conv_bn(p, 'head', h, 1, 0, 1, train, stats))
    return h.mean(axis=(2, 3)) @ p['classifier.weight'].T + p['classifier.bias'], stats


def export(g: Graph) -> str:
    h = g.relu6(g.conv('input', 'stem', 1, 1), 'stem.relu6')
    for name, _, hidden, _, s, expand, residual in _blocks():
        y = g.relu6(g.conv(h, f'{name}.expand', 1, 0), f'{name}.expand.relu6') if expand else h
        y = g.relu6(g.conv(y, f'{name}.dw', s, 1, groups=hidden), f'{name}.dw.relu6')
        y = g.conv(y, f'{name}.project', 1, 0)
        h = g.add(h, y, f'{name}.residual') if residual else y
    h = g.relu6(g.conv(h, 'head', 1, 0), 'head.relu6')
    return g.gemm(g.global_pool_flatten(h, 'pool'), 'classifier')
