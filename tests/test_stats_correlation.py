"""Within-cell Spearman correlation and its permutation test: scipy references, brute force,
invariances (between-cell differences never enter) and the properties of a permutation p-value."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from automd_analysis.stats.correlation import within_cell_spearman as within_task_spearman


def _brute_force(x, y, tasks):
    """Mean of per-task scipy Spearman rho (weights n_t) and the exact within-task p-value."""
    groups = [np.flatnonzero(tasks == t) for t in sorted(set(tasks))]
    weights = np.array([len(g) for g in groups], dtype=float)
    weights /= weights.sum()

    def statistic(ys):
        return sum(
            w * stats.spearmanr(x[g], yg).statistic
            for w, g, yg in zip(weights, groups, ys, strict=True)
        )

    observed = statistic([y[g] for g in groups])
    hits = total = 0
    for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
        value = statistic([y[list(p)] for p in perms])
        total += 1
        hits += abs(value) >= abs(observed) - 1e-12
    return observed, hits / total, total


def test_single_task_is_scipy_spearman_and_its_exact_permutation_p():
    rng = np.random.default_rng(3)
    x = rng.normal(size=6)
    y = x + rng.normal(size=6)
    result = within_task_spearman(x, y, np.array(["t"] * 6))
    assert result.rho == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    rho, p, total = _brute_force(x, y, np.array(["t"] * 6))
    assert result.exact and result.n_permutations == total == 720
    assert result.p_value == pytest.approx(p, abs=1e-12)
    assert (result.n_cells, result.n_runs) == (1, 6)


def test_two_tasks_against_brute_force_with_ties():
    x = np.array([1.0, 2.0, 2.0, 3.0, 5.0, 1.0, 1.0, 4.0])
    y = np.array([0.1, 0.4, 0.2, 0.3, 0.9, 0.8, 0.7, 0.9])
    tasks = np.array(["a"] * 4 + ["b"] * 4)
    result = within_task_spearman(x, y, tasks)
    rho, p, total = _brute_force(x, y, tasks)
    assert result.rho == pytest.approx(rho, abs=1e-12)
    assert result.p_value == pytest.approx(p, abs=1e-12)
    assert result.exact and result.n_permutations == total == 24 * 24


def test_hand_values():
    # task a: ranks (1,2,3) vs (3,1,2): rho = -0.5; task b identical after an offset of 10
    result = within_task_spearman(
        [1, 2, 3, 1, 2, 3], [0.3, 0.1, 0.2, 10.3, 10.1, 10.2], ["a", "a", "a", "b", "b", "b"]
    )
    assert result.rho == pytest.approx(-0.5)
    # per-task rho over the 6 permutations: 1, .5, .5, -.5, -.5, -1; |mean| >= .5 in 18 of 36
    assert result.p_value == pytest.approx(0.5)


def _confounded(rng, effect: float):
    """6 tasks x 12 runs; tasks with higher x are easier; within a task y = effect * x + noise."""
    tasks = np.repeat(np.arange(6), 12).astype(str)
    level = np.repeat(np.arange(6), 12).astype(float)
    noise_x = rng.normal(scale=0.2, size=level.size)
    y = level + effect * noise_x + rng.normal(scale=0.2, size=level.size)
    return level + noise_x, y, tasks


def test_the_test_holds_its_level_where_pooling_does_not():
    """Under no within-task association (but task levels shared by x and y) the pooled Spearman
    test rejects every time; the within-task test rejects about 5 % of the time. With a
    within-task association it rejects most of the time."""
    rng = np.random.default_rng(0)
    n_sets = 200
    pooled_rejects = within_rejects = 0
    for _ in range(n_sets):
        x, y, tasks = _confounded(rng, effect=0.0)
        pooled_rejects += stats.spearmanr(x, y).pvalue < 0.05
        result = within_task_spearman(x, y, tasks, n_permutations=199, seed=int(rng.integers(1e6)))
        within_rejects += result.p_value < 0.05
    assert pooled_rejects == n_sets
    # 5 % of 200 = 10 rejections; binomial SD 3.1: accept 3..19 (more than 2.5 SD either side)
    assert 3 <= within_rejects <= 19
    power = sum(
        within_task_spearman(*_confounded(rng, effect=1.0), n_permutations=199).p_value < 0.05
        for _ in range(50)
    )
    assert power >= 45


def test_monte_carlo_p_value_is_reproducible_and_never_zero():
    rng = np.random.default_rng(5)
    tasks = np.repeat(["a", "b", "c"], 10)
    x = rng.normal(size=30)
    y = x * 3 + rng.normal(scale=0.01, size=30)  # perfect within every task
    first = within_task_spearman(x, y, tasks, n_permutations=999, seed=7, tag="m")
    again = within_task_spearman(x, y, tasks, n_permutations=999, seed=7, tag="m")
    assert first == again
    assert first.rho == pytest.approx(1.0)
    assert first.p_value == pytest.approx(1 / 1000)  # (1 + 0) / (1 + 999)
    other = within_task_spearman(x, rng.normal(size=30), tasks, n_permutations=999, seed=7)
    assert 1 / 1000 < other.p_value <= 1


def test_unusable_tasks_and_missing_values_are_left_out():
    x = np.array([1, 2, 3, 4, 1, 2, 5, 5, 5, np.nan, 1, 2], dtype=float)
    y = np.array([1, 3, 2, 4, 1, 2, 1, 2, 3, 4, np.nan, 3], dtype=float)
    tasks = np.array(["a"] * 4 + ["b"] * 2 + ["c"] * 4 + ["d"] * 2)
    result = within_task_spearman(x, y, tasks)
    # b: 2 runs; c: x constant once the NaN pair is dropped; d: one finite pair
    assert (result.n_cells, result.n_runs) == (1, 4)
    assert result.rho == pytest.approx(stats.spearmanr(x[:4], y[:4]).statistic)
    none = within_task_spearman([1.0, 1.0, 1.0], [1.0, 2.0, 3.0], ["a"] * 3)
    assert math.isnan(none.rho) and math.isnan(none.p_value) and none.n_cells == 0


def test_bad_input():
    with pytest.raises(ValueError, match="one length"):
        within_task_spearman([1, 2], [1, 2, 3], ["a", "a"])
    with pytest.raises(ValueError, match="positive integer"):
        within_task_spearman([1, 2, 3], [1, 2, 3], ["a"] * 3, n_permutations=0)


_values = st.lists(
    st.floats(min_value=-5, max_value=5, allow_nan=False).map(lambda v: round(v, 2)),
    min_size=12,
    max_size=12,
)


@settings(max_examples=60)
@given(x=_values, y=_values, offsets=st.lists(st.floats(-100, 100), min_size=3, max_size=3))
def test_between_task_differences_never_enter(x, y, offsets):
    """Per-task offsets and per-task increasing transformations leave rho and p unchanged."""
    x, y = np.array(x), np.array(y)
    tasks = np.repeat(["a", "b", "c"], 4)
    shift = np.repeat(offsets, 4)
    base = within_task_spearman(x, y, tasks, n_permutations=50, seed=2)
    moved = within_task_spearman(
        np.exp(x / 5) * (1 + np.repeat([0, 1, 2], 4)), y + shift, tasks, n_permutations=50, seed=2
    )
    if math.isnan(base.rho):
        assert math.isnan(moved.rho)
        return
    assert moved.rho == pytest.approx(base.rho, abs=1e-9)
    assert moved.p_value == base.p_value
    assert (moved.n_cells, moved.n_runs) == (base.n_cells, base.n_runs)
    assert 0 < base.p_value <= 1 and -1 <= base.rho <= 1
    swapped = within_task_spearman(y, x, tasks, n_permutations=50, seed=2)
    assert swapped.rho == pytest.approx(base.rho, abs=1e-9)  # symmetric statistic
    assert within_task_spearman(x, -y, tasks, n_permutations=50, seed=2).rho == pytest.approx(
        -base.rho, abs=1e-9
    )
