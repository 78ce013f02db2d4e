"""Pruning masks and the N:M sparsity definition shared with the TypeScript detector.

N:M DEFINITION (the TypeScript model inspector implements exactly this):
  A weight tensor is any initializer of rank >= 2 whose first axis is the output channel
  (Conv W [M, C, kh, kw]; Gemm with transB=1 W [out, in]).
  Reshape it to [dim0, K] with K = prod(dims[1:]) (row-major, so a Conv row is ordered c, kh, kw)
  and split every row into consecutive groups of m along K: [0..m), [m..2m), ...
  If K is not a multiple of m the last group of a row is shorter; it is checked by the same rule.
  N:M holds for the tensor when every group has at most n nonzero values, and holds for the model
  when it holds for every weight tensor.
  Example: conv1 W [16, 1, 3, 3] -> [16, 9] -> groups of 4, 4, 1 per row.
"""

from __future__ import annotations

import numpy as np


def magnitude_mask(w: np.ndarray, target: float) -> np.ndarray:
    """0/1 mask zeroing the round(target * size) smallest-magnitude entries of w (ties broken by position)."""
    k = int(round(target * w.size))
    mask = np.ones(w.size, np.float32)
    mask[np.argsort(np.abs(w).ravel(), kind='stable')[:k]] = 0.0
    return mask.reshape(w.shape)


def _row_groups(w: np.ndarray, m: int) -> list[np.ndarray]:
    """Views of w as [dim0, K] split into column blocks of m (the last may be narrower)."""
    flat = w.reshape(w.shape[0], -1)
    return [flat[:, start:start + m] for start in range(0, flat.shape[1], m)]


def n_m_mask(w: np.ndarray, n: int, m: int) -> np.ndarray:
    """0/1 mask keeping the n largest-magnitude entries in every group of m (see the module docstring)."""
    mask = np.zeros(w.shape, np.float32)
    mask_groups = _row_groups(mask, m)
    for group, mgroup in zip(_row_groups(w, m), mask_groups):
        keep = np.argsort(-np.abs(group), axis=1, kind='stable')[:, :n]
        np.put_along_axis(mgroup, keep, 1.0, axis=1)
    return mask


def n_m_holds(w: np.ndarray, n: int, m: int) -> bool:
    return all(int((group != 0).sum(axis=1).max()) <= n for group in _row_groups(w, m))


def zero_fraction(weights: list[np.ndarray]) -> float:
    total = sum(w.size for w in weights)
    return float(sum(int((w == 0).sum()) for w in weights) / total) if total else 0.0
