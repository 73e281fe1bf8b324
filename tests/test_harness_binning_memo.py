"""The demo harness's memo of HistGradientBoosting bin thresholds changes no result, only the
time: the same predictions bit for bit, and a second fit on the same columns and weights reuses
the thresholds (issue 29 item 7)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.ensemble._hist_gradient_boosting import binning

from automd_demo.harness import binning_memo


@pytest.fixture
def restore_binning():
    original = binning._find_binning_thresholds
    yield
    binning._find_binning_thresholds = original


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3000, 4))
    x[rng.random(x.shape) < 0.05] = np.nan  # missing values take their own bin
    y = (x[:, 0] + rng.normal(size=3000) > 1).astype(int)
    weights = np.where(y == 1, len(y) / (2 * y.sum()), len(y) / (2 * (len(y) - y.sum())))
    return x, y, weights


def _fit_predict(x, y, weights, **params):
    model = HistGradientBoostingClassifier(random_state=0, max_iter=20, **params)
    return model.fit(x, y, sample_weight=weights).predict_proba(x)[:, 1]


def test_memoised_fits_predict_exactly_what_unmemoised_fits_predict(restore_binning):
    x, y, weights = _data()
    plain = [_fit_predict(x, y, weights, learning_rate=lr) for lr in (0.1, 0.3)]
    calls = []
    original = binning._find_binning_thresholds

    def counted(col, max_bins, sample_weight=None):
        calls.append(1)
        return original(col, max_bins, sample_weight=sample_weight)

    binning._find_binning_thresholds = counted
    binning_memo.install()
    binning_memo.install()  # idempotent: one memo layer
    memo = [_fit_predict(x, y, weights, learning_rate=lr) for lr in (0.1, 0.3)]
    for a, b in zip(plain, memo, strict=True):
        assert np.array_equal(a, b)  # bit for bit
    assert len(calls) == x.shape[1]  # the second fit binned nothing again
    other_weights = np.ones_like(weights)
    _fit_predict(x, y, other_weights)
    assert len(calls) == 2 * x.shape[1]  # other weights: other thresholds


def test_a_returned_threshold_array_cannot_change_the_memo():
    def edges(col, max_bins, sample_weight=None):
        return np.quantile(col, [0.25, 0.5, 0.75])

    fast = binning_memo.memoised(edges)
    col = np.arange(20.0)
    first = fast(col, 4)
    first[:] = -1
    assert fast(col, 4).tolist() == edges(col, 4).tolist()
