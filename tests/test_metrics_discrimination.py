"""AUROC (hand values, sklearn ``roc_auc_score`` as reference) and PhysioNet 2012 min(Se, PPV) (test
vector S12 and the MATLAB ``min``-ignores-NaN cases)."""

from __future__ import annotations

import numpy as np
import pytest
from references import require

from automd_analysis.metrics import UndefinedMetricWarning, auroc, min_se_ppv

# --- AUROC -------------------------------------------------------------------------------------


def test_auroc_hand_values():
    # pairs (pos, neg): (0.8 vs 0.1) 1, (0.8 vs 0.4) 1, (0.4 vs 0.1) 1, (0.4 vs 0.4) 1/2 -> 3.5 / 4
    assert auroc([1, 0, 1, 0], [0.8, 0.1, 0.4, 0.4]) == 3.5 / 4
    assert auroc([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4]) == 1.0
    assert auroc([1, 1, 0, 0], [0.1, 0.2, 0.3, 0.4]) == 0.0
    assert auroc([1, 0], [0.5, 0.5]) == 0.5
    assert auroc(np.array([True, False, True]), [2.0, -1.0, 0.5]) == 1.0  # any finite scores


@pytest.mark.reference
def test_auroc_equals_sklearn_on_random_inputs_with_ties():
    metrics = require("sklearn.metrics")
    rng = np.random.default_rng(123)
    max_diff = 0.0
    for _ in range(300):
        n = int(rng.integers(2, 400))
        y = rng.integers(0, 2, n)
        if y.min() == y.max():
            y[0] = 1 - y[0]
        p = (
            rng.choice(np.linspace(0, 1, int(rng.integers(2, 30))), n)
            if rng.random() < 0.5
            else rng.random(n)
        )
        max_diff = max(max_diff, abs(auroc(y, p) - metrics.roc_auc_score(y, p)))
    assert max_diff <= 1e-12


def test_auroc_single_class_is_nan_with_warning():
    with pytest.warns(UndefinedMetricWarning, match="only one class"):
        assert np.isnan(auroc([1, 1, 1], [0.2, 0.4, 0.5]))


@pytest.mark.parametrize(
    ("y", "p", "match"),
    [
        ([0, 1], [0.5, np.inf], r"y_prob must be finite; y_prob\[1\] is inf"),
        ([0, 2], [0.5, 0.5], r"y_true\[1\] is 2"),
        ([0, 1], [0.5], "same length"),
        ([[0, 1]], [[0.1, 0.2]], "one-dimensional"),
        (["0", "1"], [0.1, 0.2], "y_true must contain only 0 and 1, got dtype"),
    ],
)
def test_auroc_malformed(y, p, match):
    with pytest.raises(ValueError, match=match):
        auroc(y, p)


# --- min(Se, PPV) ----------------------------------------------------------------------------


def test_s12_vector():
    # docs/reference_values.md, S12: Se = 2/3, PPV = 1/2 -> 0.5
    assert min_se_ppv([1, 1, 1, 0, 0, 0, 0, 0], [1, 1, 0, 1, 0, 0, 0, 1]) == 0.5


def test_se_is_the_minimum():
    # TP 1, FN 2, FP 0: Se = 1/3, PPV = 1
    assert min_se_ppv([1, 1, 1, 0], [1, 0, 0, 0]) == 1 / 3


def test_no_predicted_positive_gives_se():
    # PPV = 0/0 is ignored like MATLAB's min ignores NaN: score = Se = 0
    assert min_se_ppv([1, 0, 1], [0, 0, 0]) == 0.0


def test_no_death_gives_ppv():
    assert min_se_ppv([0, 0, 0], [1, 0, 0]) == 0.0


def test_no_death_and_no_predicted_positive_is_nan_with_warning():
    with pytest.warns(UndefinedMetricWarning, match="no deaths and no predicted positives"):
        assert np.isnan(min_se_ppv([0, 0], [0, 0]))


def test_min_se_ppv_rejects_probabilities():
    with pytest.raises(ValueError, match=r"y_pred_label\[0\] is 0.7"):
        min_se_ppv([1, 0], [0.7, 0.0])
