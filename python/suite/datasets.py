"""The digits split and the dataset files written from it (PNG folder, npy, csv, synthetic vision inputs)."""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

TEST_SIZE = 0.3


@dataclass(frozen=True)
class DigitsSplit:
    """Pixels are the raw 0..16 integers of load_digits; model inputs are pixels / 16."""

    train_pixels: np.ndarray  # [n, 8, 8] int
    train_labels: np.ndarray  # [n] int64
    test_pixels: np.ndarray
    test_labels: np.ndarray

    @staticmethod
    def scaled(pixels: np.ndarray) -> np.ndarray:
        return (pixels / 16.0).astype(np.float32)


def digits_split(seed: int) -> DigitsSplit:
    d = load_digits()
    pixels = d.images.astype(np.int64)
    labels = d.target.astype(np.int64)
    tr_x, te_x, tr_y, te_y = train_test_split(pixels, labels, test_size=TEST_SIZE, stratify=labels, random_state=seed)
    return DigitsSplit(tr_x, tr_y, te_x, te_y)


def png_grey8(image: np.ndarray) -> bytes:
    """Encode a 2-D uint8 array as an 8-bit greyscale PNG (colour type 0, no interlace, filter 0 on every row)."""
    if image.dtype != np.uint8 or image.ndim != 2:
        raise ValueError(f'png_grey8 needs a 2-D uint8 array, got {image.dtype} {image.shape}')
    h, w = image.shape

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b''.join(b'\x00' + image[row].tobytes() for row in range(h))
    return (
        b'\x89PNG\r\n\x1a\n'
        + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 0, 0, 0, 0))
        + chunk(b'IDAT', zlib.compress(raw, 9))
        + chunk(b'IEND', b'')
    )


def write_digits_folder(root: str, pixels: np.ndarray, labels: np.ndarray) -> list[str]:
    """images/<idx:04d>.png (value = round(pixel * 255 / 16)) + labels.csv; returns the paths written."""
    os.makedirs(os.path.join(root, 'images'), exist_ok=True)
    grey = np.rint(pixels * 255.0 / 16.0).astype(np.uint8)
    rows = ['file,label']
    written = []
    for idx, (img, label) in enumerate(zip(grey, labels)):
        rel = f'images/{idx:04d}.png'
        path = os.path.join(root, rel)
        with open(path, 'wb') as f:
            f.write(png_grey8(img))
        written.append(path)
        rows.append(f'{rel},{int(label)}')
    labels_path = os.path.join(root, 'labels.csv')
    with open(labels_path, 'w', newline='\n') as f:
        f.write('\n'.join(rows) + '\n')
    written.append(labels_path)
    return written


def write_digits_csv(path: str, features: np.ndarray, labels: np.ndarray) -> None:
    """Header p0..p63,label; features are pixel/16, multiples of 1/16 that repr() prints exactly."""
    flat = features.reshape(len(features), -1)
    with open(path, 'w', newline='\n') as f:
        f.write(','.join([f'p{i}' for i in range(flat.shape[1])] + ['label']) + '\n')
        for row, label in zip(flat, labels):
            f.write(','.join(repr(float(v)) for v in row) + f',{int(label)}\n')


def synthetic_vision_inputs(seed: int, n: int = 64) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 3, 224, 224), dtype=np.float32)
