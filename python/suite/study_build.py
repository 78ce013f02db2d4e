"""The sparsity study's three trained families (MobileNet v2, ResNet and ViT style) on load_digits, and their calibration set.

Each family is trained with jax on the digits train split, BatchNorm statistics are taken over the whole split and
folded, and the deploy graph is exported to ONNX and checked three ways: the deploy forward in jax gives the same
top-1 as training-mode BatchNorm would not (so accuracy is the exported graph's), onnx's reference evaluator and
OpenVINO (f32) agree with jax's logits. The pruned variants are made by `pbh prune` (npm run study), not here:
OBC is the tool under study, and pruning stays out of the generator's time budget.
"""

from __future__ import annotations

import time
from types import ModuleType

import numpy as np

from . import jax_train, study_mobilenet, study_resnet, study_vit
from .datasets import TEST_SIZE, DigitsSplit
from .export import check_reference
from .study_layers import fold_batchnorm
from .study_onnx import Graph

# (module, model name, epochs, batch, peak learning rate, weight decay). The CNNs take big batches: XLA's CPU step
# costs about the same at 64 or 128 samples here (op overhead, not FLOPs), so fewer steps train faster. The ViT
# takes ViT-style weight decay against overfitting 1,257 images.
FAMILIES: tuple[tuple[ModuleType, str, int, int, float, float], ...] = (
    (study_mobilenet, 'digits_mobilenet_v2', 25, 128, 4e-3, 1e-4),
    (study_resnet, 'digits_resnet', 20, 128, 4e-3, 1e-4),
    (study_vit, 'digits_vit', 60, 64, 2e-3, 5e-2),
)
# OBC's calibration samples come from the train split, never the test split the study scores on.
CALIBRATION_SAMPLES = 1024
REFERENCE_CHECK_SAMPLES = 64


def jax_version() -> str:
    return jax_train.jax.__version__


def calibration_inputs(split: DigitsSplit) -> np.ndarray:
    return np.ascontiguousarray(DigitsSplit.scaled(split.train_pixels)[:CALIBRATION_SAMPLES, None])


def build_family(module: ModuleType, name: str, epochs: int, batch: int, lr: float, weight_decay: float, split: DigitsSplit,
                 seed: int, log):
    """Trains and exports one family; returns (onnx model, deploy logits on the test split, training facts)."""
    xtr = DigitsSplit.scaled(split.train_pixels)[:, None]
    xte = DigitsSplit.scaled(split.test_pixels)[:, None]
    started = time.perf_counter()
    trained, loss = jax_train.train(module.init(np.random.default_rng([seed, 20, len(name)])), module.forward, xtr,
                                    split.train_labels, seed, epochs, lr, batch=batch, weight_decay=weight_decay)
    stats = jax_train.batchnorm_statistics(trained, module.forward, xtr)
    deploy = fold_batchnorm(trained, stats)
    logits = jax_train.predict(deploy, module.forward, xte)
    top1 = float((logits.argmax(axis=1) == split.test_labels).mean())
    seconds = time.perf_counter() - started
    log(f'trained {name} ({module.FAMILY}): {epochs} epochs AdamW in {seconds:.1f}s, final train loss {loss:.4f}, test top1 {top1:.4f}')
    g = Graph(deploy)
    module.export(g)
    doc = (f'PBH bundled suite: {name}, a {module.FAMILY}-style network trained with jax on scikit-learn load_digits '
           f'(stratified split, seed {seed}, test size {TEST_SIZE}); input = pixel/16 [N,1,8,8]. '
           f'{module.__doc__.strip().splitlines()[0]}')
    model = g.model(name, 'input', 'logits', [1, 8, 8], 10, doc,
                    {'pbh.weights': 'trained', 'pbh.family': module.FAMILY, 'pbh.test_top1': f'{top1:.6f}'})
    reference_diff = check_reference(model, {'input': xte[:REFERENCE_CHECK_SAMPLES]}, logits[:REFERENCE_CHECK_SAMPLES], atol=1e-4)
    training = {'framework': 'jax', 'optimizer': 'adamw', 'weight_decay': weight_decay, 'epochs': epochs, 'lr': lr, 'batch': batch,
                'schedule': 'linear warmup 1 epoch, cosine', 'final_train_loss': round(loss, 6), 'seconds': round(seconds, 1),
                'batchnorm': 'statistics over the whole train split, folded into the convs' if stats else None,
                'onnx_reference_max_abs_logit_diff': reference_diff}
    return model, logits, top1, training
