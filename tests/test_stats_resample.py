"""The resampler of the statistics layer, by hand: column 0 is the data, the draws stay in their
cells, validity is pooled and shrunk as documented, residuals are widened and spread like t, a run's
own test-set noise is not counted twice, and the draws are reproducible."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from automd_analysis.stats.resample import _run_share, resample


def _units(valid_per_cell: dict[tuple[str, str], list[bool]]) -> pd.DataFrame:
    rows = []
    for (agent, task), flags in valid_per_cell.items():
        for rep, ok in enumerate(flags):
            rows.append({"agent": agent, "task": task, "rep": rep, "valid": ok})
    return pd.DataFrame(rows)


def test_column_zero_is_the_observed_data():
    units = _units({("a", "t"): [True, False, True], ("b", "t"): [True, True, True]})
    d = resample(units, ("agent", "task"), n_boot=50, tag="x")
    x = np.array([0.1, 0.9, 0.3, 0.5, 0.6, 0.7])
    v = d.values(x)
    assert d.valid[:, 0].tolist() == units["valid"].tolist()
    np.testing.assert_array_equal(v[:, 0], np.where(units["valid"], x, np.nan))
    assert d.source[:, 0].tolist() == list(range(6))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.booleans(), min_size=1, max_size=4), min_size=1, max_size=5),
    st.integers(0, 5),
)
def test_a_valid_slot_draws_a_valid_run_of_its_cell_or_is_imputed_from_its_agent(cells, seed):
    spec = {("a", f"t{i}"): flags for i, flags in enumerate(cells)}
    units = _units(spec)
    d = resample(units, ("agent", "task"), n_boot=30, seed=seed, tag="cells")
    valid = units["valid"].to_numpy()
    task = units["task"].to_numpy()
    for i in range(len(units)):
        slots = d.valid[i, 1:]
        src = d.source[i, 1:][slots]
        imputed = d.imputed[i, 1:][slots]
        assert valid[src].all()  # a valid slot always reads a valid run
        own = task[src] == task[i]
        assert (own | imputed).all()  # of its own cell, unless the cell has no valid run
        if valid[task == task[i]].any():
            assert not imputed.any()


def test_one_run_per_cell_reads_its_replicates_exactly():
    units = _units({("a", "t"): [True], ("a", "u"): [True]})
    reps = np.array([[0.1, 0.2, 0.3], [0.7, 0.8, 0.9]])
    d = resample(units, ("agent", "task"), n_boot=6, tag="one", model_validity=False)
    v = d.values(np.array([0.15, 0.75]), reps)
    # no second run to take a residual from: slot value = the run's replicate (b - 1) mod R
    np.testing.assert_allclose(v[:, 1:], reps[:, [0, 1, 2, 0, 1, 2]])


def test_two_runs_are_widened_by_a_chi_square_draw_with_one_degree_of_freedom():
    # cell of two runs 0.4 and 0.6, no replicates: a slot is 0.5 +- sqrt(2) sqrt(f) 0.1 with the
    # residual +-0.1 of a drawn run, sqrt(2) = sqrt(n / (n - 1)) and f = nu / chi2_nu, nu = 1
    # (Satterthwaite, one cell of two runs): so 0.1 sqrt(2) / |slot - 0.5| = |Z|, half-normal
    units = _units({("a", "t"): [True, True]})
    d = resample(units, ("agent", "task"), n_boot=20_000, tag="t1", model_validity=False)
    v = d.values(np.array([0.4, 0.6]))
    z = 0.1 * math.sqrt(2) / np.abs(v[0, 1:] - 0.5)
    assert stats.kstest(z, stats.halfnorm.cdf).pvalue > 0.01
    # a draw with both slots on the same run gives the spread of a t_1-like mean, wider than the
    # plain redraw of two runs, whose means are only 0.4, 0.5 and 0.6
    mean = v[:, 1:].mean(axis=0)
    assert np.mean(np.abs(mean - 0.5) > 0.1 + 1e-9) > 0.2


def test_invalid_rate_pooled_and_shrunk_towards_the_table_rate():
    # agent a: 0 invalid of 15 slots; agent b: 7 of 15; the table's pooled rate is 7.5 / 31
    units = _units({**{("a", f"t{i}"): [True] * 3 for i in range(5)},
                    **{("b", f"t{i}"): [False, True, True] if i < 3 else [False, False, True]
                       for i in range(5)}})  # fmt: skip
    assert (~units["valid"]).sum() == 7
    d = resample(units, ("agent", "task"), n_boot=20_000, tag="rates")
    prior = (7 + 0.5) / (30 + 1)
    for agent, n_inv in (("a", 0), ("b", 7)):
        rows = (units["agent"] == agent).to_numpy()
        drawn = 1 - d.valid[rows, 1:].mean()
        # posterior mean of Beta(n_inv + 5 p, n_valid + 5 (1 - p)): 5 tasks = 5 pseudo-runs
        expected = (n_inv + 5 * prior) / (15 + 5)
        assert drawn == pytest.approx(expected, abs=0.005)
    # no invalid run anywhere: the prior rate is 0.5 / (n + 1) and almost nothing is drawn invalid
    clean = _units({("a", f"t{i}"): [True] * 3 for i in range(5)})
    d = resample(clean, ("agent", "task"), n_boot=20_000, tag="clean")
    assert 1 - d.valid[:, 1:].mean() == pytest.approx(5 * (0.5 / 16) / 20, abs=0.002)


def test_a_runs_own_test_noise_is_not_counted_twice():
    rng = np.random.default_rng(0)
    n_runs, r = 3, 400
    # the runs differ only by their own test-set noise: observed spread = noise spread
    truth = np.full(n_runs, 0.5)
    noise = rng.normal(0, 0.02, (n_runs, r))
    observed = truth + rng.normal(0, 0.02, n_runs)
    reps = observed[:, None] + noise
    members = [np.arange(n_runs)]
    means = reps.mean(axis=0)[None, :]
    assert _run_share(observed, members, means, reps) < 0.5
    # runs that differ by much more than their noise keep (almost) all their spread
    spread = np.array([0.3, 0.5, 0.7])
    assert _run_share(spread, members, (spread[:, None] + noise).mean(axis=0)[None, :],
                      spread[:, None] + noise) > 0.95  # fmt: skip
    assert _run_share(spread, members, means, None) == 1.0  # no replicates: test set fixed


def test_draws_are_reproducible_and_named_by_their_table():
    units = _units({("a", "t"): [True, False, True], ("b", "t"): [True, True, True]})
    x = np.array([0.1, 0.9, 0.3, 0.5, 0.6, 0.7])
    first = resample(units, ("agent", "task"), n_boot=40, seed=3, tag="table2").values(x)
    again = resample(units, ("agent", "task"), n_boot=40, seed=3, tag="table2").values(x)
    other = resample(units, ("agent", "task"), n_boot=40, seed=3, tag="table3").values(x)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(np.nan_to_num(first), np.nan_to_num(other))
    with pytest.raises(ValueError, match="n_boot"):
        resample(units, ("agent", "task"), n_boot=-1, tag="x")
