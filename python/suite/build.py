"""Build every suite file into a folder and write its manifest; generate_suite.py owns stamps, locking and swapping."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Callable

import numpy as np
import onnx
import sklearn
from onnx import numpy_helper

from . import numpy_nn as nn
from .datasets import (
    TEST_SIZE,
    DigitsSplit,
    digits_split,
    synthetic_vision_inputs,
    write_digits_csv,
    write_digits_folder,
)
from .export import check_reference, cnn_to_onnx, mlp_to_onnx, tabular_to_onnx
from .light_models import RESIDUAL_BRANCH_SCALE, realize_light_model
from .ov_check import OpenVinoChecker
from .sparsity import magnitude_mask, n_m_holds, n_m_mask, zero_fraction
from .study_build import FAMILIES, build_family, calibration_inputs, jax_version
from .wine import CATEGORIES, CATEGORY_FEATURE, WineSplit, wine_split

SEED = 0
MANIFEST = 'manifest.json'

CNN_EPOCHS, CNN_LR = 12, 2e-3
FINE_TUNE_EPOCHS, FINE_TUNE_LR = 8, 2e-3
MLP_EPOCHS, MLP_LR = 30, 2e-3
# 124 training rows: small batches give enough steps; 60 epochs take about 0.1 s.
WINE_EPOCHS, WINE_LR, WINE_BATCH = 60, 1e-2, 16

Log = Callable[[str], None]


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            h.update(block)
    return h.hexdigest()


def tensor_specs(values) -> list[dict]:
    return [
        {
            'name': v.name,
            'dtype': onnx.helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type).name,
            'shape': [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim],
        }
        for v in values
    ]


def weight_tensors(model: onnx.ModelProto) -> list[np.ndarray]:
    """Rank >= 2 initializers: the tensors sparsity is measured over (same rule as the Profile's `actual`)."""
    return [a for a in (numpy_helper.to_array(i) for i in model.graph.initializer) if a.ndim >= 2]


def model_entry(name: str, rel: str, model: onnx.ModelProto, *, family: str, weights: str, framework: str, sparsity: dict) -> dict:
    ws = weight_tensors(model)
    kind, n, m = sparsity['kind'], sparsity.get('n'), sparsity.get('m')
    return {
        'name': name,
        'path': rel,
        'family': family,
        'framework': framework,
        'weights': weights,
        'opset': model.opset_import[0].version,
        'ir_version': model.ir_version,
        'inputs': tensor_specs(model.graph.input),
        'outputs': tensor_specs(model.graph.output),
        'parameters': int(sum(int(np.prod(i.dims)) for i in model.graph.initializer if i.data_type == onnx.TensorProto.FLOAT)),
        'sparsity': {
            'kind': kind,
            'target': sparsity.get('target'),
            'n': n,
            'm': m,
            'actual': round(zero_fraction(ws), 6),
            'nm_pattern_holds': all(n_m_holds(w, n, m) for w in ws) if kind == 'n_m' else None,
        },
    }


class SuiteBuilder:
    def __init__(self, root: str, log: Log) -> None:
        self.root = root
        self.log = log
        self.files: list[dict] = []
        self.models: list[dict] = []

    def path(self, rel: str) -> str:
        full = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        return full

    def record(self, full: str, quiet: bool = False) -> dict:
        rel = os.path.relpath(full, self.root).replace(os.sep, '/')
        entry = {'path': rel, 'sha256': file_sha256(full), 'bytes': os.path.getsize(full)}
        self.files.append(entry)
        if not quiet:
            self.log(f'wrote {rel:38s} {entry["bytes"] / 1024:10.1f} KiB  sha256 {entry["sha256"][:12]}')
        return entry

    def save_model(self, rel: str, model: onnx.ModelProto) -> str:
        full = self.path(rel)
        onnx.save(model, full)
        self.record(full)
        return full


def accuracy_entry(dataset: str, numpy_top1: float, openvino: dict, samples: int) -> dict:
    return {
        'dataset': dataset,
        'samples': samples,
        'numpy_top1': round(numpy_top1, 6),
        'openvino_top1': round(openvino['top1'], 6),
        'openvino_inference_precision': openvino['inference_precision'],
        'max_abs_logit_diff_vs_numpy': openvino['max_abs_logit_diff_vs_numpy'],
    }


def build_digits_models(b: SuiteBuilder, split: DigitsSplit, ov: OpenVinoChecker) -> None:
    xtr = DigitsSplit.scaled(split.train_pixels)[:, None]
    xte = DigitsSplit.scaled(split.test_pixels)[:, None]
    ytr, yte = split.train_labels, split.test_labels

    dense = nn.init_cnn(np.random.default_rng([SEED, 1]))
    loss = nn.train(dense, nn.cnn_forward, nn.cnn_backward, xtr, ytr, np.random.default_rng([SEED, 2]), CNN_EPOCHS, CNN_LR)
    b.log(f'trained digits_cnn: {CNN_EPOCHS} epochs Adam, final train loss {loss:.4f}')
    dense_training = {'optimizer': 'adam', 'epochs': CNN_EPOCHS, 'lr': CNN_LR, 'batch': 32, 'schedule': 'cosine',
                      'final_train_loss': round(loss, 6)}

    variants = [
        ('digits_cnn', None, {'kind': 'dense', 'target': 0.0}),
        ('digits_cnn_sparse50', lambda w: magnitude_mask(w, 0.5), {'kind': 'unstructured', 'target': 0.5}),
        ('digits_cnn_sparse80', lambda w: magnitude_mask(w, 0.8), {'kind': 'unstructured', 'target': 0.8}),
        ('digits_cnn_2of4', lambda w: n_m_mask(w, 2, 4), {'kind': 'n_m', 'target': 0.5, 'n': 2, 'm': 4}),
    ]
    for k, (name, make_mask, sparsity) in enumerate(variants):
        params = {key: v.copy() for key, v in dense.items()}
        training = dict(dense_training)
        if make_mask is not None:
            masks = {key: make_mask(params[key]) for key in nn.CNN_WEIGHTS}
            for key, mask in masks.items():
                params[key] *= mask
            pruned_acc = nn.accuracy(nn.cnn_forward(params, xte), yte)
            loss = nn.train(params, nn.cnn_forward, nn.cnn_backward, xtr, ytr, np.random.default_rng([SEED, 10 + k]),
                            FINE_TUNE_EPOCHS, FINE_TUNE_LR, masks=masks)
            training['fine_tune'] = {'from': 'digits_cnn', 'epochs': FINE_TUNE_EPOCHS, 'lr': FINE_TUNE_LR, 'mask': 'held',
                                     'top1_after_pruning_before_fine_tune': round(pruned_acc, 6),
                                     'final_train_loss': round(loss, 6)}
            b.log(f'pruned {name}: top1 {pruned_acc:.4f} right after pruning, fine-tuned {FINE_TUNE_EPOCHS} epochs, loss {loss:.4f}')
        logits = nn.cnn_forward(params, xte)
        acc = nn.accuracy(logits, yte)
        doc = (f'PBH bundled suite: {name}, CNN trained in numpy on scikit-learn load_digits (stratified split, seed {SEED}, '
               f'test size {TEST_SIZE}); input = pixel/16 [N,1,8,8]. Sparsity: {json.dumps(sparsity)}.')
        model = cnn_to_onnx(params, doc, {'pbh.weights': 'trained', 'pbh.sparsity': json.dumps(sparsity),
                                          'pbh.test_top1': f'{acc:.6f}'})
        rel = f'models/{name}.onnx'
        full = b.save_model(rel, model)
        checked_ov = ov.check_trained(full, {'input': xte}, yte, logits)
        entry = model_entry(name, rel, model, family='cnn', weights='trained', framework='numpy', sparsity=sparsity)
        entry['training'] = training
        entry['accuracy'] = accuracy_entry('digits test split', acc, checked_ov, len(yte))
        b.models.append(entry)
        b.log(f'  {name}: top1 numpy {acc:.4f}, openvino {checked_ov["inference_precision"]} {checked_ov["top1"]:.4f} (max |logit diff| '
              f'{checked_ov["max_abs_logit_diff_vs_numpy"]:.1e}), zeros {entry["sparsity"]["actual"]:.3f}'
              + (f', 2:4 holds {entry["sparsity"]["nm_pattern_holds"]}' if sparsity['kind'] == 'n_m' else ''))

    mlp = nn.init_mlp(np.random.default_rng([SEED, 3]))
    xtr_flat, xte_flat = xtr.reshape(len(xtr), -1), xte.reshape(len(xte), -1)
    loss = nn.train(mlp, nn.mlp_forward, nn.mlp_backward, xtr_flat, ytr, np.random.default_rng([SEED, 4]), MLP_EPOCHS, MLP_LR)
    logits = nn.mlp_forward(mlp, xte_flat)
    acc = nn.accuracy(logits, yte)
    model = mlp_to_onnx(mlp, 'PBH bundled suite: digits_mlp (64-128-10) trained in numpy on load_digits; input = pixel/16 [N,64].',
                        {'pbh.weights': 'trained', 'pbh.test_top1': f'{acc:.6f}'})
    full = b.save_model('models/digits_mlp.onnx', model)
    checked_ov = ov.check_trained(full, {'input': xte_flat}, yte, logits)
    entry = model_entry('digits_mlp', 'models/digits_mlp.onnx', model, family='mlp', weights='trained', framework='numpy',
                        sparsity={'kind': 'dense', 'target': 0.0})
    entry['training'] = {'optimizer': 'adam', 'epochs': MLP_EPOCHS, 'lr': MLP_LR, 'batch': 32, 'schedule': 'cosine',
                         'final_train_loss': round(loss, 6)}
    entry['accuracy'] = accuracy_entry('digits test split', acc, checked_ov, len(yte))
    b.models.append(entry)
    b.log(f'  digits_mlp: top1 numpy {acc:.4f}, openvino {checked_ov["inference_precision"]} {checked_ov["top1"]:.4f}')


def build_wine_model(b: SuiteBuilder, wine: WineSplit, ov: OpenVinoChecker) -> None:
    train, test = wine.train, wine.test
    classes = int(train.labels.max()) + 1
    params = nn.init_tabular(np.random.default_rng([SEED, 5]), train.features.shape[1], CATEGORIES, classes)
    loss = nn.train(params, nn.tabular_forward, nn.tabular_backward, train.inputs(), train.labels, np.random.default_rng([SEED, 6]),
                    WINE_EPOCHS, WINE_LR, batch=WINE_BATCH)
    logits = nn.tabular_forward(params, test.inputs())
    acc = nn.accuracy(logits, test.labels)
    # What the category input is worth: the same network with every sample's category forced to 0.
    acc_category_0 = nn.accuracy(nn.tabular_forward(params, (test.features, np.zeros_like(test.category))), test.labels)
    n_features, embed, hidden = train.features.shape[1], params['category.embedding'].shape[1], params['fc1.weight'].shape[0]
    model = tabular_to_onnx(
        params, n_features,
        f'PBH bundled suite: wine_mlp trained in numpy on scikit-learn load_wine (stratified split, seed {SEED}, test size {TEST_SIZE}). '
        f'Inputs: features [N,{n_features}] float32 (standardised with the train split), category [N] int64 ({CATEGORY_FEATURE} in '
        f'{CATEGORIES} train-split quantile buckets), embedded (Gather) and concatenated with the features, then {n_features}+{embed}-{hidden}-{classes}.',
        {'pbh.weights': 'trained', 'pbh.test_top1': f'{acc:.6f}'},
    )
    rel = 'models/wine_mlp.onnx'
    full = b.save_model(rel, model)
    reference_diff = check_reference(model, test.feeds(), logits)
    checked_ov = ov.check_trained(full, test.feeds(), test.labels, logits)
    entry = model_entry('wine_mlp', rel, model, family='mlp', weights='trained', framework='numpy', sparsity={'kind': 'dense', 'target': 0.0})
    entry['training'] = {'optimizer': 'adam', 'epochs': WINE_EPOCHS, 'lr': WINE_LR, 'batch': WINE_BATCH, 'schedule': 'cosine',
                         'final_train_loss': round(loss, 6)}
    entry['accuracy'] = {**accuracy_entry('wine test split', acc, checked_ov, len(test.labels)),
                         'onnx_reference_max_abs_logit_diff_vs_numpy': reference_diff,
                         'numpy_top1_with_category_fixed_0': round(acc_category_0, 6)}
    b.models.append(entry)
    b.log(f'  wine_mlp: {WINE_EPOCHS} epochs Adam, loss {loss:.4f}; top1 numpy {acc:.4f} ({acc_category_0:.4f} with category fixed to 0), '
          f'onnx reference max |logit diff| {reference_diff:.1e}, openvino {checked_ov["inference_precision"]} {checked_ov["top1"]:.4f} '
          f'(max |logit diff| {checked_ov["max_abs_logit_diff_vs_numpy"]:.1e})')


def build_light_models(b: SuiteBuilder, ov: OpenVinoChecker, vision_x: np.ndarray) -> None:
    for k, name in enumerate(('resnet50', 'squeezenet')):
        model = realize_light_model(name, seed=100 + k)
        rel = f'models/{name}.onnx'
        full = b.save_model(rel, model)
        check = ov.check_random(full, vision_x[:4])
        entry = model_entry(name, rel, model, family='cnn', weights='random', framework='onnx-light-model',
                            sparsity={'kind': 'dense', 'target': 0.0})
        entry['random_init'] = {'seed': 100 + k, 'conv_gemm_weights': 'he-normal', 'biases': 0.0,
                                'batchnorm': {'scale': 1.0, 'bias': 0.0, 'mean': 0.0, 'var': 1.0,
                                              'residual_branch_last_scale': RESIDUAL_BRANCH_SCALE}}
        entry['openvino_check'] = check
        b.models.append(entry)
        b.log(f'  {name}: openvino {check["inference_precision"]} batch {check["batches"]} finite, output {check["output_shape"]}, '
              f'max std across inputs {check["max_std_across_inputs"]:.2e}')


def build_study_models(b: SuiteBuilder, split: DigitsSplit, ov: OpenVinoChecker) -> None:
    """The sparsity study's dense models (python/suite/study_build.py); `npm run study` prunes them with pbh prune."""
    xte = DigitsSplit.scaled(split.test_pixels)[:, None]
    for module, name, *hyper in FAMILIES:
        model, logits, top1, training = build_family(module, name, *hyper, split, SEED, b.log)
        rel = f'models/{name}.onnx'
        full = b.save_model(rel, model)
        checked_ov = ov.check_trained(full, {'input': xte}, split.test_labels, logits)
        entry = model_entry(name, rel, model, family=module.FAMILY, weights='trained', framework='jax',
                            sparsity={'kind': 'dense', 'target': 0.0})
        entry['training'] = training
        entry['accuracy'] = {'dataset': 'digits test split', 'samples': int(len(split.test_labels)), 'jax_top1': round(top1, 6),
                             'openvino_top1': round(checked_ov['top1'], 6),
                             'openvino_inference_precision': checked_ov['inference_precision'],
                             'max_abs_logit_diff_vs_jax': checked_ov['max_abs_logit_diff_vs_numpy']}
        b.models.append(entry)
        b.log(f'  {name}: top1 jax {top1:.4f}, openvino {checked_ov["inference_precision"]} {checked_ov["top1"]:.4f} '
              f'(max |logit diff| {checked_ov["max_abs_logit_diff_vs_numpy"]:.1e})')


def build_datasets(b: SuiteBuilder, split: DigitsSplit, wine: WineSplit, vision_x: np.ndarray) -> dict:
    images = write_digits_folder(os.path.join(b.root, 'data', 'digits'), split.test_pixels, split.test_labels)
    for path in images[:-1]:
        b.record(path, quiet=True)
    b.log(f'wrote data/digits/images/*.png ({len(images) - 1} 8x8 greyscale PNGs)')
    b.record(images[-1])
    xte = DigitsSplit.scaled(split.test_pixels)
    np.save(b.path('data/digits_x.npy'), xte[:, None])
    b.record(b.path('data/digits_x.npy'))
    np.save(b.path('data/digits_y.npy'), split.test_labels.astype(np.int64))
    b.record(b.path('data/digits_y.npy'))
    write_digits_csv(b.path('data/digits.csv'), xte, split.test_labels)
    b.record(b.path('data/digits.csv'))
    np.save(b.path('data/digits_calibration_x.npy'), calibration_inputs(split))
    b.record(b.path('data/digits_calibration_x.npy'))
    # Named after the model inputs, so a config maps each input to the file of the same name.
    wine_files = {'features': 'data/wine_features.npy', 'category': 'data/wine_category.npy', 'y': 'data/wine_y.npy'}
    for key, array in (*wine.test.feeds().items(), ('y', wine.test.labels)):
        np.save(b.path(wine_files[key]), array)
        b.record(b.path(wine_files[key]))
    np.save(b.path('data/vision_x.npy'), vision_x)
    b.record(b.path('data/vision_x.npy'))
    return {
        'digits': {
            'source': 'sklearn.datasets.load_digits',
            'split': {'test_size': TEST_SIZE, 'stratified': True, 'random_state': SEED, 'part': 'test'},
            'samples': int(len(split.test_labels)),
            'train_samples': int(len(split.train_labels)),
            'classes': 10,
            'image_folder': 'data/digits',
            'png_value': 'round(pixel * 255 / 16), pixel in 0..16',
            'npy': {'x': 'data/digits_x.npy', 'y': 'data/digits_y.npy', 'x_value': 'pixel / 16'},
            'csv': 'data/digits.csv',
            'calibration': {'x': 'data/digits_calibration_x.npy', 'part': 'train', 'samples': int(len(calibration_inputs(split))),
                            'x_value': 'pixel / 16', 'use': 'pbh prune --calibration (OBC), never scored'},
        },
        'wine': {
            'source': 'sklearn.datasets.load_wine',
            'split': {'test_size': TEST_SIZE, 'stratified': True, 'random_state': SEED, 'part': 'test'},
            'samples': int(len(wine.test.labels)),
            'train_samples': int(len(wine.train.labels)),
            'classes': int(wine.train.labels.max()) + 1,
            'npy': wine_files,
            'features': {'names': wine.feature_names, 'value': '(x - train mean) / train std', 'dtype': 'float32'},
            'category': {'feature': CATEGORY_FEATURE, 'categories': CATEGORIES, 'dtype': 'int64',
                         'value': 'index of the train-split quantile bucket (numpy.digitize over the inner edges)',
                         'edges': wine.category_edges},
        },
        'vision': {'path': 'data/vision_x.npy', 'shape': list(vision_x.shape), 'dtype': 'float32',
                   'distribution': 'standard normal', 'seed': SEED, 'labels': None},
    }


def build(root: str, stamp: str, log: Log, parts: frozenset[str]) -> None:
    b = SuiteBuilder(root, log)
    split = digits_split(SEED)
    log(f'digits split: {len(split.train_labels)} train / {len(split.test_labels)} test')
    ov = OpenVinoChecker()
    build_digits_models(b, split, ov)
    if 'study' in parts:
        build_study_models(b, split, ov)
    wine = wine_split(SEED)
    log(f'wine split: {len(wine.train.labels)} train / {len(wine.test.labels)} test, {len(wine.feature_names)} features + {CATEGORY_FEATURE} '
        f'as a category of {CATEGORIES}')
    build_wine_model(b, wine, ov)
    vision_x = synthetic_vision_inputs(SEED)
    build_light_models(b, ov, vision_x)
    datasets = build_datasets(b, split, wine, vision_x)
    manifest = {
        'generator': {
            'script': 'python/generate_suite.py',
            'source_sha256': stamp,
            'parts': sorted(parts),
            'seed': SEED,
            'versions': {'python': sys.version.split()[0], 'numpy': np.__version__, 'onnx': onnx.__version__,
                         'scikit-learn': sklearn.__version__, 'openvino': ov.version, 'jax': jax_version()},
        },
        'models': b.models,
        'datasets': datasets,
        'files': b.files,
    }
    with open(os.path.join(root, MANIFEST), 'w') as f:
        json.dump(manifest, f, indent=2)
        f.write('\n')
    log(f'wrote {MANIFEST} ({len(b.files)} files, {len(b.models)} models)')
