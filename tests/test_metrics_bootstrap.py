"""Bootstrap replicates: every metric called with the resample weights returns, for each replicate,
the plain metric (and pycox / sklearn) on its rows, including the ties duplicated rows create; the
resampling scheme; bootstrap_ci against scipy."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from references import require
from scipy import stats

from automd_analysis.metrics import (
    UndefinedMetricWarning,
    auroc,
    bca_interval,
    bootstrap_ci,
    bootstrap_indices,
    bootstrap_weights,
    brier,
    concordance_td,
    ece,
    min_se_ppv,
    percentile_interval,
    sepsis_utility,
    survival_ece,
)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return fn(*args, **kwargs)


def counts(idx, n: int) -> np.ndarray:
    """The weight matrix of explicit resamples: row b counts the rows drawn in ``idx[b]``."""
    return np.stack([np.bincount(np.asarray(r), minlength=n) for r in np.atleast_2d(idx)])


# --- naive twin of the C^td replicate: weighted pair sums from the definition --------------------


def naive_weighted_ctd(durations, events, surv, grid, weights, method):
    """Σ w_i (w_j - [i = j]) conc(i, j) / Σ w_i (w_j - [i = j]) comp(i, j), in exact fractions.

    A pair (i, i) stands for two copies of patient i: tied time, tied status, tied prediction.
    """
    t = np.asarray(durations, dtype=float)
    d = np.asarray(events, dtype=int)
    s = np.asarray(surv, dtype=float)
    k = np.clip(np.searchsorted(grid, t, side="right") - 1, 0, len(grid) - 1)
    conc, comp = Fraction(0), 0
    for i in range(len(t)):
        for j in range(len(t)):
            pairs = int(weights[i]) * (int(weights[j]) - (i == j))
            if pairs == 0:
                continue
            si, sj = s[i, k[i]], s[j, k[i]]
            if method == "antolini":
                ok = (t[i] < t[j] and d[i]) or (t[i] == t[j] and d[i] and not d[j])
                comp += pairs * ok
                conc += pairs * int(ok and si < sj)
                continue
            if t[i] < t[j] and d[i]:
                comp += pairs
                conc += pairs * (Fraction(int(si < sj)) + Fraction(int(si == sj), 2))
            elif t[i] == t[j] and (d[i] or d[j]):
                comp += pairs
                if d[i] and d[j]:
                    conc += pairs * (Fraction(1) if si == sj else Fraction(1, 2))
                elif d[i]:
                    conc += pairs * (Fraction(int(si < sj)) + Fraction(int(si == sj), 2))
                else:
                    conc += pairs * (Fraction(int(si > sj)) + Fraction(int(si == sj), 2))
    return None if comp == 0 else conc / comp


def survival_case(rng, n_max=40, g_max=8):
    """Tied times and predictions, heavy censoring, durations before/after the grid."""
    n = int(rng.integers(1, n_max + 1))
    g = int(rng.integers(1, g_max + 1))
    grid = np.sort(rng.choice(np.arange(1, 15), g, replace=False)).astype(float)
    style = rng.integers(3)
    if style == 0:
        t = rng.integers(0, 17, n).astype(float)
    elif style == 1:
        t = rng.uniform(0, 17, n)
    else:
        t = rng.choice(grid, n).astype(float)
    e = (rng.random(n) < rng.choice([0.05, 0.3, 0.7, 1.0])).astype(int)
    if rng.random() < 0.5:
        s = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=(n, g))
    else:
        s = np.sort(rng.random((n, g)), axis=1)[:, ::-1]
    return t, e, s, grid


def random_indices(rng, n, n_boot=6):
    """Resamples of varying size, including heavy duplication (few distinct rows)."""
    size = int(rng.integers(1, 2 * n + 2))
    idx = rng.integers(0, n, (n_boot, size))
    idx[0] = rng.integers(0, min(n, 2), size)  # one or two distinct patients, many copies
    return idx


# --- resampling scheme -----------------------------------------------------------------------


def test_indices_shape_range_and_prefix_stability():
    idx = bootstrap_indices(37, 150, seed=5)
    assert idx.shape == (150, 37) and idx.dtype == np.int64
    assert idx.min() >= 0 and idx.max() < 37
    np.testing.assert_array_equal(bootstrap_indices(37, 70, seed=5), idx[:70])
    np.testing.assert_array_equal(bootstrap_indices(37, 150, seed=5), idx)
    assert not np.array_equal(bootstrap_indices(37, 150, seed=6), idx)
    assert not np.array_equal(bootstrap_indices(37, 150, seed=[5, 1]), idx)
    # every position is drawn about equally often
    counts = np.bincount(bootstrap_indices(10, 2000, seed=1).ravel(), minlength=10)
    assert counts.min() > 1800 and counts.max() < 2200  # expected 2000, sd ~ 42


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n": 0, "n_boot": 3}, "empty"),
        ({"n": 3, "n_boot": 0}, "n_boot"),
        ({"n": 3, "n_boot": 2.5}, "n_boot"),
        ({"n": 3, "n_boot": 2, "seed": -1}, "seed"),
        ({"n": 3, "n_boot": 2, "seed": "abc"}, "seed"),
    ],
)
def test_indices_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bootstrap_indices(**kwargs)


def test_weights_count_the_bootstrap_indices():
    idx = bootstrap_indices(37, 150, seed=5)
    w = bootstrap_weights(37, 150, seed=5)
    np.testing.assert_array_equal(w, counts(idx, 37))
    assert w.dtype == np.uint8 and (w.sum(axis=1) == 37).all()
    np.testing.assert_array_equal(bootstrap_weights(37, 70, seed=5), w[:70])  # prefix-stable
    big = bootstrap_weights(1, 3, seed=0)  # one unit drawn once per replicate
    assert big.tolist() == [[1], [1], [1]]


def test_weights_widen_their_dtype_when_a_count_exceeds_255(monkeypatch):
    from automd_analysis.metrics import _resample

    def draws(n, n_boot, seed=0):  # replicate 1 draws unit 0 every time: a count of 300
        yield 0, np.array([np.arange(n) % n, np.zeros(n)], dtype=np.uint32)

    monkeypatch.setattr(_resample, "index_blocks", draws)
    w = _resample.bootstrap_weights(300, 2)
    assert w.dtype == np.uint16
    assert w[0].tolist() == [1] * 300 and w[1, 0] == 300 and w[1, 1:].sum() == 0


# --- C^td ------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["adj_antolini", "antolini"])
def test_ctd_replicates_equal_plain_metric_on_resampled_rows(method):
    rng = np.random.default_rng(11)
    for _ in range(150):
        t, e, s, grid = survival_case(rng)
        idx = random_indices(rng, len(t))
        reps = _quiet(concordance_td, t, e, s, grid, method=method, weights=counts(idx, len(t)))
        for b, rows in enumerate(idx):
            ref = _quiet(concordance_td, t[rows], e[rows], s[rows], grid, method=method)
            assert reps[b] == ref or (np.isnan(ref) and np.isnan(reps[b]))


@pytest.mark.parametrize("method", ["adj_antolini", "antolini"])
def test_ctd_replicates_equal_naive_weighted_twin(method):
    rng = np.random.default_rng(12)
    for _ in range(60):
        t, e, s, grid = survival_case(rng, n_max=15, g_max=5)
        idx = random_indices(rng, len(t), n_boot=3)
        reps = _quiet(concordance_td, t, e, s, grid, method=method, weights=counts(idx, len(t)))
        for b, rows in enumerate(idx):
            ref = naive_weighted_ctd(t, e, s, grid, np.bincount(rows, minlength=len(t)), method)
            if ref is None:
                assert np.isnan(reps[b])
            else:
                assert reps[b] == float(ref)


def test_ctd_duplicates_by_hand():
    # two event patients at t = 1 and 2, both read at column 0 / 1; patient 0 drawn twice
    t = np.array([1.0, 2.0])
    e = np.array([1, 1])
    grid = np.array([0.0, 1.5])
    s = np.array([[0.9, 0.4], [0.8, 0.6]])
    # rows [0, 0, 1]: pairs (0a, 0b) and (0b, 0a) tied events with equal predictions: 1 each,
    # comparable; (0a, 1), (0b, 1): T0 < T1, S0(1) = 0.9 > S1(1) = 0.8 discordant -> 0
    # adjusted: 2 / 4 = 0.5; plain Antolini: tied events are not comparable -> 0 / 2 = 0
    w = [2, 1]
    assert concordance_td(t, e, s, grid, weights=w) == 0.5
    assert concordance_td(t, e, s, grid, weights=w, method="antolini") == 0.0


@settings(max_examples=60)
@given(
    data=st.data(),
    n=st.integers(1, 12),
    g=st.integers(1, 4),
    method=st.sampled_from(["adj_antolini", "antolini"]),
)
def test_ctd_replicates_property(data, n, g, method):
    t = np.array(data.draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)), dtype=float)
    e = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    grid = np.arange(g, dtype=float) * 2.0
    s = np.array(
        data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=n * g, max_size=n * g))
    ).reshape(n, g)
    rows = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=2 * n + 1))
    rep = _quiet(
        concordance_td, t, e, s, grid, method=method, weights=np.bincount(rows, minlength=n)
    )
    ref = _quiet(concordance_td, t[rows], e[rows], s[rows], grid, method=method)
    assert rep == ref or (np.isnan(rep) and np.isnan(ref))


@pytest.mark.reference
@pytest.mark.parametrize("method", ["adj_antolini", "antolini"])
def test_ctd_replicates_match_pycox(method):
    import pandas as pd

    eval_surv = require("pycox.evaluation").EvalSurv
    rng = np.random.default_rng(13)
    checked = 0
    for _ in range(40):
        t, e, s, grid = survival_case(rng, n_max=30)
        idx = random_indices(rng, len(t), n_boot=4)
        reps = _quiet(concordance_td, t, e, s, grid, method=method, weights=counts(idx, len(t)))
        for b, rows in enumerate(idx):
            frame = pd.DataFrame(s[rows].T, index=grid)
            try:
                ref = eval_surv(frame, t[rows], e[rows], steps="post").concordance_td(method)
            except ZeroDivisionError:
                assert np.isnan(reps[b])
                continue
            assert abs(reps[b] - ref) <= 1e-12
            checked += 1
    assert checked > 100


@pytest.mark.reference
def test_ctd_replicates_match_pycox_realistic():
    import pandas as pd

    eval_surv = require("pycox.evaluation").EvalSurv
    rng = np.random.default_rng(14)
    n = 400
    risk = rng.normal(size=n)
    t_event = rng.exponential(60.0 * np.exp(-0.7 * risk))
    t_cens = rng.uniform(0, 150, n)
    t = np.round(np.minimum(t_event, t_cens))  # whole days: tied times
    e = (t_event <= t_cens).astype(int)
    grid = np.unique(np.r_[0.0, np.quantile(t[e == 1], np.linspace(0, 1, 30))])
    s = np.round(np.exp(-np.outer(np.exp(0.7 * risk), grid) / 60.0), 2)  # tied predictions
    idx = bootstrap_indices(n, 12, seed=4)
    reps = concordance_td(t, e, s, grid, weights=bootstrap_weights(n, 12, seed=4))
    for b, rows in enumerate(idx):
        ref = eval_surv(pd.DataFrame(s[rows].T, index=grid), t[rows], e[rows], steps="post")
        assert abs(reps[b] - ref.concordance_td("adj_antolini")) <= 1e-12


def test_ctd_undefined_replicates_are_nan_with_one_warning():
    t = np.array([1.0, 2.0, 3.0])
    e = np.array(
        [0, 0, 1]
    )  # only the latest patient has an event: no comparable pair in any row set
    s = np.full((3, 2), 0.5)
    grid = np.array([0.0, 2.0])
    with pytest.warns(UndefinedMetricWarning, match="3 of 3"):
        reps = concordance_td(t, e, s, grid, weights=np.array([[1, 1, 1], [2, 0, 1], [0, 3, 0]]))
    assert np.isnan(reps).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"method": "harrell"}, "method"),
        ({"weights": [[1, 1, 1, 1]]}, r"shape \(3,\)"),
        ({"weights": [1, -1, 1]}, r"weights\[1\] is -1"),
        ({"weights": [[1, 1, 1], [1, 0.5, 1]]}, r"whole numbers.*weights\[1, 1\] is 0.5"),
        ({"weights": [[1, 1, 1], [0, 0, 0]]}, r"weights\[1\] sums to 0"),
        ({"weights": np.ones((2, 2, 3))}, "shape"),
        ({"weights": ["a", "b", "c"]}, "integers"),
    ],
)
def test_ctd_bad_arguments(kwargs, match):
    t, e = np.array([1.0, 2.0, 3.0]), np.array([1, 0, 1])
    s, grid = np.full((3, 2), 0.5), np.array([0.0, 2.0])
    with pytest.raises(ValueError, match=match):
        concordance_td(t, e, s, grid, **kwargs)


def test_ctd_bad_data_is_rejected_before_the_weights():
    t, e, grid = np.array([1.0, 2.0]), np.array([1, 0]), np.array([0.0, 2.0])
    with pytest.raises(ValueError, match=r"surv\[1, 0\]"):
        concordance_td(t, e, np.array([[0.5, 0.4], [1.5, 0.2]]), grid, weights=[[1, 1]])


# --- binary metrics ---------------------------------------------------------------------------


def binary_case(rng, n_max=40):
    n = int(rng.integers(1, n_max + 1))
    y = (rng.random(n) < rng.choice([0.1, 0.5, 0.9])).astype(int)
    ties = rng.random() < 0.5  # ties and bin edges, or continuous scores
    p = rng.choice([0.0, 0.1, 0.3, 0.5, 0.7, 1.0], n) if ties else rng.random(n)
    return y, p


@pytest.mark.slow
def test_auroc_replicates_equal_metric_and_sklearn():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(21)
    compared = 0
    for _ in range(200):
        y, p = binary_case(rng)
        idx = random_indices(rng, len(y))
        reps = _quiet(auroc, y, p, weights=counts(idx, len(y)))
        for b, rows in enumerate(idx):
            ref = _quiet(auroc, y[rows], p[rows])
            assert reps[b] == ref or (np.isnan(ref) and np.isnan(reps[b]))
            if len(np.unique(y[rows])) == 2:
                assert abs(reps[b] - roc_auc_score(y[rows], p[rows])) <= 1e-12
                compared += 1
    assert compared > 500


def test_ece_and_min_se_ppv_replicates_equal_metrics():
    rng = np.random.default_rng(22)
    for _ in range(200):
        y, p = binary_case(rng)
        label = (rng.random(len(y)) < 0.4).astype(int)
        idx = random_indices(rng, len(y))
        reps_ece = ece(y, p, weights=counts(idx, len(y)))
        reps_m = _quiet(min_se_ppv, y, label, weights=counts(idx, len(y)))
        for b, rows in enumerate(idx):
            assert abs(reps_ece[b] - ece(y[rows], p[rows])) <= 1e-12
            ref = _quiet(min_se_ppv, y[rows], label[rows])
            assert reps_m[b] == ref or (np.isnan(ref) and np.isnan(reps_m[b]))


@pytest.mark.parametrize("n_bins", [1, 3, 10, 15])
def test_ece_replicates_any_bin_count(n_bins):
    rng = np.random.default_rng(23)
    y, p = binary_case(rng, n_max=60)
    idx = random_indices(rng, len(y))
    reps = ece(y, p, n_bins=n_bins, weights=counts(idx, len(y)))
    for b, rows in enumerate(idx):
        assert abs(reps[b] - ece(y[rows], p[rows], n_bins=n_bins)) <= 1e-12


def _cluster_rows(cluster, idx_row):
    first = list(dict.fromkeys(cluster.tolist()))  # clusters in order of first appearance
    return np.concatenate([np.flatnonzero(cluster == first[c]) for c in idx_row])


def test_binary_cluster_replicates_equal_metric_on_concatenated_clusters():
    rng = np.random.default_rng(24)
    for _ in range(100):
        y, p = binary_case(rng, n_max=50)
        label = (rng.random(len(y)) < 0.5).astype(int)
        cluster = rng.choice(np.array(["c", "a", "b", "d"]), len(y))  # not contiguous, strings
        k = len(np.unique(cluster))
        idx = rng.integers(0, k, (4, int(rng.integers(1, 2 * k + 1))))
        w = counts(idx, k)
        a = _quiet(auroc, y, p, weights=w, cluster=cluster)
        c = ece(y, p, weights=w, cluster=cluster)
        m = _quiet(min_se_ppv, y, label, weights=w, cluster=cluster)
        br = brier(y, p, weights=w, cluster=cluster)
        for b in range(len(idx)):
            rows = _cluster_rows(cluster, idx[b])
            ref = _quiet(auroc, y[rows], p[rows])
            assert a[b] == ref or (np.isnan(ref) and np.isnan(a[b]))
            assert abs(c[b] - ece(y[rows], p[rows])) <= 1e-12
            ref = _quiet(min_se_ppv, y[rows], label[rows])
            assert m[b] == ref or (np.isnan(ref) and np.isnan(m[b]))
            assert abs(br[b] - brier(y[rows], p[rows])) <= 1e-12


@settings(max_examples=60)
@given(
    y=st.lists(st.integers(0, 1), min_size=1, max_size=15),
    data=st.data(),
)
def test_auroc_and_ece_replicates_property(y, data):
    n = len(y)
    y = np.array(y)
    p = np.array(
        data.draw(st.lists(st.sampled_from([0.0, 0.2, 0.3, 0.6, 1.0]), min_size=n, max_size=n))
    )
    rows = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=2 * n)))
    w = np.bincount(rows, minlength=n)
    rep = _quiet(auroc, y, p, weights=w)
    ref = _quiet(auroc, y[rows], p[rows])
    assert rep == ref or (np.isnan(rep) and np.isnan(ref))
    assert abs(ece(y, p, weights=w) - ece(y[rows], p[rows])) <= 1e-12


def test_auroc_one_class_replicate_is_nan_with_warning():
    y, p = np.array([0, 1]), np.array([0.2, 0.7])
    with pytest.warns(UndefinedMetricWarning, match="1 of 2"):
        reps = auroc(y, p, weights=np.array([[1, 1], [2, 0]]))
    assert reps[0] == 1.0 and np.isnan(reps[1])


def test_binary_bad_cluster_length():
    with pytest.raises(ValueError, match="cluster"):
        auroc([0, 1, 1], [0.1, 0.2, 0.3], weights=[1, 1], cluster=[1, 2])
    with pytest.raises(ValueError, match="cluster"):
        ece([0, 1, 1], [0.1, 0.2, 0.3], weights=[1, 1], cluster=[1, 2])
    with pytest.raises(ValueError, match=r"one multiplicity per cluster"):
        ece([0, 1, 1], [0.1, 0.2, 0.3], weights=[1, 1, 1], cluster=[1, 2, 2])


# --- utility ----------------------------------------------------------------------------------


def sepsis_cohort(rng, n_patients):
    lengths = rng.integers(1, 40, n_patients)
    ids, labels, preds = [], [], []
    for k, length in enumerate(lengths):
        lab = np.zeros(length, dtype=int)
        if rng.random() < 0.4:
            lab[int(rng.integers(0, length)) :] = 1
        ids += [f"p{k}"] * length
        labels.append(lab)
        preds.append((rng.random(length) < 0.3).astype(int))
    return np.array(ids), np.concatenate(labels), np.concatenate(preds), lengths


def test_utility_replicates_equal_metric_on_relabelled_patients():
    rng = np.random.default_rng(31)
    for _ in range(80):
        n_pat = int(rng.integers(1, 9))
        ids, labels, preds, lengths = sepsis_cohort(rng, n_pat)
        starts = np.r_[0, np.cumsum(lengths)]
        idx = rng.integers(0, n_pat, (5, int(rng.integers(1, 2 * n_pat + 2))))
        reps = _quiet(sepsis_utility, ids, labels, preds, weights=counts(idx, n_pat))
        for b, row in enumerate(idx):
            rows = np.concatenate([np.arange(starts[k], starts[k + 1]) for k in row])
            copies = np.concatenate([np.full(lengths[k], j) for j, k in enumerate(row)])
            ref = _quiet(sepsis_utility, copies, labels[rows], preds[rows])
            assert reps[b] == ref or (np.isnan(ref) and np.isnan(reps[b]))


def test_utility_by_hand():
    # Patient A: septic, label 1 from hour 4 -> onset t_sepsis = 10; alarms from hour 2. Units of
    # 1/180 per hour, delta = t - 10: predicted hours t = 2..9 (delta -8..-1) earn
    # 120, 150, 180, 160, 140, 120, 100, 80 -> U_obs(A) = 1050. U_best(A) alarms on every hour
    # (t >= t_sepsis - 12): hours 0 and 1 (delta -10, -9) add 60 + 90 -> 1200. U_inaction(A) =
    # -40 (delta + 6) over delta = -5..-1 = -600. Patient B: not septic, one false alarm: -9.
    ids = np.array(["A"] * 10 + ["B"] * 3)
    labels = np.r_[np.zeros(4), np.ones(6), np.zeros(3)].astype(int)
    preds = np.r_[0, 0, np.ones(8), 0, 1, 0].astype(int)

    def rep(*patients):
        return _quiet(sepsis_utility, ids, labels, preds, weights=counts([patients], 2))[0]

    assert rep(0, 1) == (1050 - 9 + 600) / (1200 + 600)
    assert rep(0, 1, 1) == (1050 - 18 + 600) / (1200 + 600)
    assert np.isnan(rep(1, 1))
    assert rep(0, 0) == (2 * 1050 + 2 * 600) / (2 * 1200 + 2 * 600)
    assert rep(0, 1) == sepsis_utility(ids, labels, preds)


def test_utility_rejects_non_contiguous_patients():
    with pytest.raises(ValueError, match="contiguous"):
        sepsis_utility(["a", "b", "a"], [0, 0, 0], [0, 0, 0], weights=[[1, 1]])


# --- survival ECE -----------------------------------------------------------------------------


def test_survival_ece_replicates_equal_metric_on_resampled_rows():
    rng = np.random.default_rng(41)
    compared = 0
    for trial in range(80):
        n = int(rng.integers(1, 150))
        # odd trials: whole days (tied times, zeros, times beyond the grid)
        t = rng.integers(0, 16, n).astype(float) if trial % 2 else rng.exponential(5.0, n)
        e = (rng.random(n) < rng.choice([0.1, 0.6, 1.0])).astype(int)
        grid = np.arange(0.0, 14.0, 2.0)
        if trial % 3:
            s = rng.choice([0.2, 0.5, 0.8, 1.0], size=(n, len(grid)))  # tied predictions
        else:
            s = np.sort(rng.random((n, len(grid))), axis=1)[:, ::-1]
        idx = random_indices(rng, n, n_boot=4)
        kwargs = {"n_groups": int(rng.choice([3, 10])), "min_group": int(rng.choice([1, 5]))}
        reps = _quiet(survival_ece, t, e, s, grid, weights=counts(idx, n), **kwargs)
        for b, rows in enumerate(idx):
            ref = _quiet(survival_ece, t[rows], e[rows], s[rows], grid, **kwargs).ece
            assert (np.isnan(ref) and np.isnan(reps[b])) or abs(reps[b] - ref) <= 1e-12
            compared += not np.isnan(ref)
    assert compared > 150


def test_survival_ece_tied_predictions_stay_in_one_group():
    # four patients with equal predictions: the block is never split, so every order of the same
    # resampled rows gives one value, equal to the metric's
    t = np.array([1.0, 2.0, 3.0, 4.0])
    e = np.array([1, 1, 0, 1])
    grid = np.array([0.0, 2.5, 5.0])
    s = np.full((4, 3), 0.5)
    s[:, 1] = [0.5, 0.5, 0.5, 0.9]  # rows 0-2 tied, row 3 apart
    for rows in ([0, 3, 1, 2], [1, 2, 0, 3], [3, 3, 0, 0]):
        rep = survival_ece(t, e, s, grid, n_groups=2, min_group=1, weights=counts([rows], 4))[0]
        for order in (rows, rows[::-1]):
            ref = survival_ece(t[order], e[order], s[order], grid, n_groups=2, min_group=1).ece
            assert abs(rep - ref) <= 1e-12


# --- bootstrap_ci -----------------------------------------------------------------------------


def test_percentile_interval_by_hand():
    reps = np.arange(1.0, 11.0)  # 1..10
    # quantile 0.05 with linear interpolation: position 0.45 -> 1.45; 0.95: position 8.55 -> 9.55
    low, high = percentile_interval(reps, alpha=0.1)
    assert low == pytest.approx(1.45, abs=1e-12) and high == pytest.approx(9.55, abs=1e-12)
    assert percentile_interval(np.r_[reps, np.nan], alpha=0.1) == (low, high)
    assert all(np.isnan(v) for v in percentile_interval([1.0, np.nan]))


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_ci_matches_scipy_on_the_same_resamples(method):
    rng = np.random.default_rng(51)
    x = rng.gamma(2.0, size=40)  # skewed: BCa differs from percentile
    n_boot = 500
    # scipy draws rng.integers(0, n, (n_resamples, n)) from the generator it is given
    idx = np.random.default_rng(7).integers(0, len(x), (n_boot, len(x)))
    ours = bootstrap_ci(np.mean, x, indices=idx, method=method, alpha=0.1)
    ref = stats.bootstrap(
        (x,),
        np.mean,
        n_resamples=n_boot,
        confidence_level=0.9,
        method="BCa" if method == "bca" else "percentile",
        rng=np.random.default_rng(7),
        vectorized=False,
    )
    np.testing.assert_allclose(ours.replicates, ref.bootstrap_distribution, rtol=0, atol=1e-12)
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=1e-12)
    assert ours.estimate == pytest.approx(x.mean(), abs=1e-15)


def test_bca_differs_from_percentile_on_skewed_statistic():
    x = np.random.default_rng(52).exponential(size=30)
    pct = bootstrap_ci(np.mean, x, n_boot=400, seed=1)
    bca = bootstrap_ci(np.mean, x, n_boot=400, seed=1, method="bca")
    np.testing.assert_array_equal(pct.replicates, bca.replicates)  # same resamples
    assert bca.low > pct.low and bca.high > pct.high  # right-skewed: BCa shifts up


def test_bootstrap_ci_cluster_passes_whole_clusters_in_draw_order():
    x = np.array([10.0, 20.0, 11.0, 30.0, 21.0])
    cluster = np.array(["b", "a", "b", "c", "a"])  # clusters in order of first appearance: b, a, c
    seen = []

    def stat(values):
        seen.append(values.tolist())
        return float(values.sum())

    res = bootstrap_ci(stat, x, cluster=cluster, indices=np.array([[2, 0, 0], [1, 1, 1]]))
    assert seen[1:] == [[30.0, 10.0, 11.0, 10.0, 11.0], [20.0, 21.0, 20.0, 21.0, 20.0, 21.0]]
    assert res.replicates.tolist() == [72.0, 123.0]
    assert res.estimate == 92.0


def test_bootstrap_ci_several_arrays_are_resampled_together():
    y = np.array([0, 0, 1, 1, 0, 1, 1, 0])
    p = np.array([0.1, 0.3, 0.7, 0.2, 0.4, 0.9, 0.6, 0.5])
    idx = bootstrap_indices(len(y), 50, seed=2)
    res = _quiet(bootstrap_ci, auroc, y, p, indices=idx)
    np.testing.assert_array_equal(res.replicates, _quiet(auroc, y, p, weights=counts(idx, 8)))
    assert res.n_undefined == int(np.isnan(res.replicates).sum())


def test_bca_interval_degenerate_cases():
    assert all(np.isnan(v) for v in bca_interval([1.0, 2.0, 3.0], 0.0, [1.0, 2.0]))  # z0 = -inf
    assert all(np.isnan(v) for v in bca_interval([1.0, 2.0, 3.0], 2.0, [1.0, 1.0]))  # a undefined


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"method": "basic"}, "method"),
        ({"alpha": 1.5}, "alpha"),
        ({"cluster": [1, 2]}, "cluster"),
        ({"n_boot": -3}, "n_boot"),
    ],
)
def test_bootstrap_ci_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bootstrap_ci(np.mean, np.array([1.0, 2.0, 3.0]), **kwargs)


def test_bootstrap_ci_arrays_of_different_lengths():
    with pytest.raises(ValueError, match="same number of rows"):
        bootstrap_ci(lambda a, b: 0.0, np.ones(3), np.ones(4))


@settings(max_examples=200)
@given(
    values=st.lists(
        st.floats(0, 1e6, allow_nan=False, allow_subnormal=False), min_size=0, max_size=400
    ),
)
def test_pairwise_sum_equals_numpy_sum(values):
    from automd_analysis.metrics.survival_calibration import _pairwise_sum

    v = np.array(values, dtype=np.float64)
    for lo in (0, min(3, len(v))):
        assert _pairwise_sum(v, lo, len(v) - lo) == np.sum(v[lo:])
