"""automd_analysis.analysis.intervals: the paper tables with their interval columns, from a store,
with and without bootstrap replicates."""

from __future__ import annotations

import numpy as np
import pandas.testing as pdt
import pytest

from automd_analysis.analysis import (
    calibration_practices,
    intervals,
    llm,
    primary,
    shift,
    uncertainty,
)
from automd_analysis.analysis._doc_example import example_store
from automd_analysis.analysis.store import ScoreStore


@pytest.fixture(scope="module")
def stores():
    """(store with replicates, the same store without, the replicates)."""
    bare, replicates = example_store()
    with_reps = ScoreStore.from_frames(scores=bare.scores, runs=bare.runs, replicates=replicates)
    return with_reps, bare, replicates


CASES = [
    (
        "table2_primary_scores",
        lambda s, **kw: intervals.agent_summary_with_intervals(s, **kw),
        lambda s: primary.agent_summary(s),
        lambda s, r, **kw: uncertainty.table2_intervals(s, r, **kw),
    ),
    (
        "table3_ece",
        lambda s, **kw: intervals.ece_by_task_class_with_intervals(s, **kw),
        lambda s: calibration_practices.ece_by_task_class(s),
        lambda s, r, **kw: uncertainty.table3_intervals(s, r, **kw),
    ),
    (
        "table5_external",
        lambda s, **kw: intervals.external_ratios_with_intervals(s, **kw),
        lambda s: shift.external_ratios(s),
        lambda s, r, **kw: uncertainty.table5_intervals(s, r, **kw),
    ),
    (
        "table7_llm",
        lambda s, **kw: intervals.llm_summary_with_intervals(s, **kw),
        lambda s: llm.llm_summary(s),
        lambda s, r, **kw: uncertainty.table7_intervals(s, r, **kw),
    ),
]


@pytest.mark.parametrize(("name", "with_ci", "plain", "reference"), CASES)
def test_existing_columns_unchanged_and_intervals_are_the_uncertainty_ones(
    stores, name, with_ci, plain, reference
):
    store, _, replicates = stores
    table = with_ci(store, seed=3, alpha=0.1)
    base = plain(store)
    pdt.assert_frame_equal(table[list(base.columns)], base)  # existing columns, same rows
    ci = reference(store, replicates, seed=3, alpha=0.1)
    extra = [c for c in ci.columns if c not in base.columns]
    expected = [f"{n}_ci_{s}" for n in intervals.INTERVAL_NAMES[name] for s in ("low", "high")]
    assert table.columns.tolist() == [*base.columns, *expected]
    assert extra == expected
    keys = [c for c in ci.columns if c in base.columns]
    merged = table.merge(ci, on=keys, suffixes=("", "_ref"))
    assert len(merged) == len(table)
    for column in extra:
        np.testing.assert_array_equal(merged[column], merged[f"{column}_ref"])
    # an interval is an interval
    for n in intervals.INTERVAL_NAMES[name]:
        low, high = table[f"{n}_ci_low"], table[f"{n}_ci_high"]
        assert ((low <= high) | low.isna()).all()


@pytest.mark.parametrize(("name", "with_ci", "plain", "reference"), CASES)
def test_without_replicates_the_columns_are_there_and_empty(
    stores, name, with_ci, plain, reference
):
    _, bare, _ = stores
    assert not intervals.has_replicates(bare)
    table = with_ci(bare)
    base = plain(bare)
    pdt.assert_frame_equal(table[list(base.columns)], base)
    ci_columns = [c for c in table.columns if c not in base.columns]
    assert ci_columns == [
        f"{n}_ci_{s}" for n in intervals.INTERVAL_NAMES[name] for s in ("low", "high")
    ]
    assert table[ci_columns].isna().all().all()


def test_seed_changes_the_draws_and_same_seed_repeats(stores):
    store = stores[0]
    a = intervals.agent_summary_with_intervals(store, seed=1)
    b = intervals.agent_summary_with_intervals(store, seed=1)
    c = intervals.agent_summary_with_intervals(store, seed=2)
    pdt.assert_frame_equal(a, b)
    assert not a["penalized_ci_low"].equals(c["penalized_ci_low"])


def test_comparisons_and_power_match_uncertainty_and_are_empty_without_replicates(stores):
    store, bare, replicates = stores
    pdt.assert_frame_equal(
        intervals.agent_comparisons(store, seed=4),
        uncertainty.pairwise_comparisons(store, replicates, seed=4),
    )
    pdt.assert_frame_equal(
        intervals.repetitions_needed(store, alpha=0.1),
        uncertainty.power_table(store, replicates, alpha=0.1),
    )
    empty_pw = intervals.agent_comparisons(bare)
    assert empty_pw.columns.tolist() == list(uncertainty.PAIRWISE_COLUMNS) and empty_pw.empty
    assert empty_pw["n_tasks"].dtype == np.int64
    empty_power = intervals.repetitions_needed(bare)
    assert empty_power.columns.tolist() == list(uncertainty.POWER_COLUMNS)
    assert empty_power.empty and empty_power["reachable"].dtype == bool


def test_n_replicates(stores):
    store, bare, replicates = stores
    assert intervals.n_replicates(store) == replicates["replicate"].nunique() == 40
    assert intervals.n_replicates(bare) == 0
    empty = ScoreStore.from_frames(
        scores=bare.scores, runs=bare.runs, replicates=replicates.iloc[:0]
    )
    assert not intervals.has_replicates(empty) and intervals.n_replicates(empty) == 0


def test_partial_replicates_are_a_structured_error(stores):
    """A store whose replicates miss a valid run is inconsistent: say which run, do not guess."""
    from automd_analysis.errors import ScoreStoreError

    store, bare, replicates = stores
    first = replicates["run_id"].iloc[0]
    partial = ScoreStore.from_frames(
        scores=bare.scores, runs=bare.runs, replicates=replicates.loc[replicates.run_id != first]
    )
    with pytest.raises(ScoreStoreError) as info:
        intervals.agent_summary_with_intervals(partial)
    assert info.value.code == "store.no_replicates" and first in str(info.value)
    assert info.value.fix


def test_intervals_narrow_without_test_set_noise():
    """Every replicate equal to the run's own score (no test-set noise): only the run-to-run part
    of the interval remains, so the intervals are narrower in total than with the noise."""
    bare, replicates = example_store()
    own = replicates.merge(
        bare.scores[["run_id", "score", "ece"]], on="run_id", suffixes=("_r", "")
    )
    own = own[["run_id", "replicate", "score", "ece"]]
    exact = intervals.agent_summary_with_intervals(
        ScoreStore.from_frames(scores=bare.scores, runs=bare.runs, replicates=own)
    )
    noisy = intervals.agent_summary_with_intervals(
        ScoreStore.from_frames(scores=bare.scores, runs=bare.runs, replicates=replicates)
    )
    width = (exact["penalized_ci_high"] - exact["penalized_ci_low"]).to_numpy()
    assert np.all(np.isfinite(width)) and np.all(width >= 0)
    assert width.sum() < (noisy["penalized_ci_high"] - noisy["penalized_ci_low"]).sum()
