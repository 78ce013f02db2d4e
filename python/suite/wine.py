"""The wine split as a two-input problem: standardised numeric features plus one feature turned into a category index."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.datasets import load_wine
from sklearn.model_selection import train_test_split

from .datasets import TEST_SIZE

# Proline separates class 0 from the rest almost on its own, so the model has a reason to learn its embedding.
CATEGORY_FEATURE = 'proline'
CATEGORIES = 8


@dataclass(frozen=True)
class WinePart:
    features: np.ndarray  # [n, F] float32, standardised with the train split's mean and std
    category: np.ndarray  # [n] int64 in 0..CATEGORIES-1
    labels: np.ndarray  # [n] int64

    def inputs(self) -> tuple[np.ndarray, np.ndarray]:
        return self.features, self.category

    def feeds(self) -> dict[str, np.ndarray]:
        """Keyed by the ONNX input names, which the dataset files are named after too."""
        return {'features': self.features, 'category': self.category}


@dataclass(frozen=True)
class WineSplit:
    train: WinePart
    test: WinePart
    feature_names: list[str]
    category_edges: list[float]


def wine_split(seed: int) -> WineSplit:
    d = load_wine()
    x = d.data.astype(np.float64)
    y = d.target.astype(np.int64)
    tr_x, te_x, tr_y, te_y = train_test_split(x, y, test_size=TEST_SIZE, stratify=y, random_state=seed)
    column = d.feature_names.index(CATEGORY_FEATURE)
    # Edges and scaling come from the train split alone, as they would for data the model has never seen.
    edges = np.quantile(tr_x[:, column], np.linspace(0, 1, CATEGORIES + 1)[1:-1])
    numeric = [i for i in range(x.shape[1]) if i != column]
    mean, std = tr_x[:, numeric].mean(axis=0), tr_x[:, numeric].std(axis=0)

    def part(rows: np.ndarray, labels: np.ndarray) -> WinePart:
        return WinePart(
            # Column selection leaves a Fortran-order array, and np.save would write it so: core's .npy reader refuses those.
            features=np.ascontiguousarray((rows[:, numeric] - mean) / std, dtype=np.float32),
            category=np.digitize(rows[:, column], edges).astype(np.int64),
            labels=labels,
        )

    return WineSplit(
        train=part(tr_x, tr_y),
        test=part(te_x, te_y),
        feature_names=[d.feature_names[i] for i in numeric],
        category_edges=[float(e) for e in edges],
    )
