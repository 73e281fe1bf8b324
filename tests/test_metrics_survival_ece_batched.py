"""The batched survival ECE kernels (one sort per column, sequential passes per replicate) give bit
for bit the outputs of the one-vector-at-a-time kernels they replaced (``survival_ece_twin``):
random inputs with tied times, tied predictions, duplicated patients and zero weights, weight
matrices across the old 64-vector blocks, every integer weight dtype, and a process that compiles
a second weight dtype after loading the first from numba's cache."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from survival_ece_twin import naive_parts

from automd_analysis import metrics
from automd_analysis.metrics import UndefinedMetricWarning
from automd_analysis.metrics._validation import check_survival_ece_inputs
from automd_analysis.metrics.survival_calibration import _pairwise_sum, _parts

NAMES = ("target", "column", "size", "mean", "km", "per_time", "n_kept", "values")


def batched_parts(t, e, s, grid, weights, quantiles=(0.25, 0.5, 0.75), n_groups=10, min_group=5):
    t, e, s, grid, qs = check_survival_ece_inputs(t, e, s, grid, quantiles, n_groups, min_group)
    return _parts(t, e, s, grid, qs, n_groups, min_group, weights)


def assert_same_parts(t, e, s, grid, weights, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        old = naive_parts(t, e, s, grid, weights=weights, **kwargs)
        new = batched_parts(t, e, s, grid, weights, **kwargs)
    for name, a, b in zip(NAMES, old, new, strict=True):
        assert a.shape == b.shape, name
        assert np.array_equal(a, b, equal_nan=True), (name, a, b)


@settings(max_examples=150)
@given(data=st.data())
def test_batched_kernels_equal_the_one_vector_kernels(data):
    n = data.draw(st.integers(1, 40))
    g = data.draw(st.integers(1, 5))
    t = np.array(data.draw(st.lists(st.integers(0, 8), min_size=n, max_size=n)), dtype=float)
    e = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    levels = st.sampled_from([0.0, 0.2, 0.25, 0.5, 0.9, 1.0])
    s = np.array(data.draw(st.lists(levels, min_size=n * g, max_size=n * g))).reshape(n, g)
    s = np.sort(s, axis=1)[:, ::-1].copy()
    grid = np.arange(g, dtype=float) * data.draw(st.sampled_from([1.0, 2.0, 2.5]))
    m = data.draw(st.integers(1, 4))
    w = np.array(data.draw(st.lists(st.integers(0, 4), min_size=m * n, max_size=m * n)))
    w = w.reshape(m, n)
    w[w.sum(axis=1) == 0, data.draw(st.integers(0, n - 1))] = 1
    kwargs = {
        "n_groups": data.draw(st.integers(1, 9)),
        "min_group": data.draw(st.integers(1, 4)),
        "quantiles": tuple(data.draw(st.lists(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]),
                                              min_size=1, max_size=3))),
    }  # fmt: skip
    assert_same_parts(t, e, s, grid, w, **kwargs)
    assert_same_parts(t, e, s, grid, None, **kwargs)  # the point value


def _cohort(n: int, seed: int, decimals: int | None):
    rng = np.random.default_rng(seed)
    risk = rng.normal(size=n)
    t_event = rng.exponential(10.0 * np.exp(-0.7 * risk))
    t_censor = rng.uniform(0.0, 25.0, n)
    t = np.minimum(t_event, t_censor)
    if decimals is not None:
        t = np.round(t, decimals)
    e = (t_event <= t_censor).astype(int)
    grid = np.linspace(0.0, 20.0, 21)
    s = np.exp(-np.outer(np.exp(0.7 * np.round(risk, 1)), grid) / 10.0)  # tied predictions
    return t, e, s, grid


@pytest.mark.parametrize("decimals", [None, 1, 0], ids=["continuous", "tied", "heavily-tied"])
def test_batched_kernels_on_bootstrap_replicates_across_vector_blocks(decimals):
    t, e, s, grid = _cohort(700, seed=3, decimals=decimals)
    w = metrics.bootstrap_weights(len(t), 150, seed=2)
    assert_same_parts(t, e, s, grid, w)
    assert_same_parts(t, e, s, grid, w, n_groups=3, min_group=50)
    assert_same_parts(t, e, s, grid, w[:5], n_groups=130, min_group=1)  # wider group indices


@pytest.mark.parametrize(
    "dtype", [np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int32, np.int64, float, bool]
)
def test_every_weight_dtype_gives_the_same_replicates(dtype):
    t, e, s, grid = _cohort(120, seed=5, decimals=1)
    w = metrics.bootstrap_weights(len(t), 5, seed=1)
    w = (w > 0) if dtype is bool else w.astype(dtype)
    got = metrics.survival_ece(t, e, s, grid, weights=w, min_group=1)
    ref = naive_parts(t, e, s, grid, weights=w, min_group=1)[-1]
    assert np.array_equal(got, ref, equal_nan=True)


def test_a_survival_ece_point_value_by_hand_in_the_batched_kernel():
    # the docstring example as a one-row weight matrix and as two copies of each patient
    s2 = np.array([0.2, 0.4, 0.6, 0.7, 0.8, 0.9])
    surv = np.column_stack([np.ones(6), s2, s2 / 2])
    args = ([1, 2, 3, 4, 5, 6], [1, 1, 1, 0, 1, 0], surv, [0, 2, 4])
    kwargs = {"quantiles": (0.5,), "n_groups": 2, "min_group": 3}
    one = metrics.survival_ece(*args, weights=np.ones((1, 6), dtype=np.uint8), **kwargs)
    two = metrics.survival_ece(*args, weights=np.full((1, 6), 2), **kwargs)
    assert one[0] == pytest.approx(2 / 15, abs=1e-15)
    assert two[0] == pytest.approx(2 / 15, abs=1e-15)


@pytest.mark.parametrize("n", [0, 1, 7, 8, 127, 128, 129, 136, 257, 1000, 4099])
def test_pairwise_sum_equals_numpy_sum_across_the_splits(n):
    rng = np.random.default_rng(n)
    v = rng.random(n + 3) * 10.0 ** rng.uniform(-6, 6, n + 3)
    for lo in (0, 3):
        k = n + 3 - lo
        assert _pairwise_sum(v, lo, k) == np.sum(v[lo:])


@pytest.mark.slow
def test_a_new_weight_dtype_compiles_after_the_kernels_load_from_the_cache(tmp_path):
    # numba cannot link a recursive kernel loaded from its cache into a caller compiled later in
    # the same process (LLVM aborts): the second process loads the uint8 kernels from the cache
    # and then compiles the uint16 ones.
    code = (
        "import sys, numpy as np\n"
        "from automd_analysis import metrics\n"
        "t = np.arange(1.0, 31.0); e = np.arange(30) % 2; grid = np.array([0.0, 10.0, 20.0])\n"
        "s = np.column_stack([np.ones(30), np.linspace(0.9, 0.1, 30), np.linspace(0.5, 0, 30)])\n"
        "w = metrics.bootstrap_weights(30, 3)\n"
        "for dtype in sys.argv[1:]:\n"
        "    print(metrics.survival_ece(t, e, s, grid, weights=w.astype(dtype), min_group=1)[0])\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    outputs = []
    for dtypes in (["uint8"], ["uint8", "uint16"]):
        run = subprocess.run(
            [sys.executable, "-c", code, *dtypes], capture_output=True, text=True, env=env
        )
        assert run.returncode == 0, run.stderr[-2000:]
        outputs.append(run.stdout.split())
    assert outputs[1] == outputs[0] * 2
