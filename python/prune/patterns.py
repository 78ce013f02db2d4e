"""Which weights may be removed: the N:M grouping PBH's model inspector checks, and magnitude selection.

A weight is handled as a matrix W [rows, cols]: rows are output channels, cols the reduction axis (a Conv
weight [M, C/g, kh, kw] flattened row-major, so a row runs over (c, kh, kw); a MatMul/Gemm weight oriented so
that cols run over its input features). This is the orientation packages/core/src/model/sparsity.ts reads.

N:M, PBH's convention (sparsity.ts, python/suite/sparsity.py): every row is split into consecutive groups of m
along cols, the last group shorter when cols is not a multiple of m, and N:M holds when every group keeps AT
MOST n NONZEROS. So 2:4 keeps 2 of every 4 and 1:2 keeps 1 of every 2. (OBC's paper and code name the count
of zeros instead, "prune n of every m"; for 1:2, 2:4 and 4:8 both readings are the same 50% pattern.) A short
last group of length L must also keep at most n nonzeros, so it loses max(0, L - n) weights.
"""

from __future__ import annotations

import numpy as np


def group_ids(cols: int, m: int) -> np.ndarray:
    """Group index of every column: [0]*m + [1]*m + ...; the last group may be shorter."""
    return np.arange(cols) // m


def removal_quota(cols: int, n: int, m: int) -> np.ndarray:
    """Weights each group must lose so that it keeps at most n nonzeros."""
    sizes = np.bincount(group_ids(cols, m))
    return np.maximum(sizes - n, 0)


def nm_holds(w: np.ndarray, n: int, m: int) -> bool:
    nonzero = (w != 0).astype(np.int64)
    counts = np.zeros((w.shape[0], -(-w.shape[1] // m)), np.int64)
    np.add.at(counts, (slice(None), group_ids(w.shape[1], m)), nonzero)
    return bool((counts <= n).all())


def magnitude_unstructured(w: np.ndarray, target: float) -> np.ndarray:
    """W with the round(target * size) smallest-magnitude entries zeroed (ties broken by position)."""
    k = int(round(target * w.size))
    out = w.copy().ravel()
    out[np.argsort(np.abs(out), kind='stable')[:k]] = 0.0
    return out.reshape(w.shape)


def magnitude_nm(w: np.ndarray, n: int, m: int) -> np.ndarray:
    """W keeping the n largest-magnitude entries of every group of m along cols."""
    out = np.zeros_like(w)
    for start in range(0, w.shape[1], m):
        group = w[:, start:start + m]
        keep = np.argsort(-np.abs(group), axis=1, kind='stable')[:, :n]
        np.put_along_axis(out[:, start:start + m], keep, np.take_along_axis(group, keep, axis=1), axis=1)
    return out
