"""The paper tables with their interval columns, from a store with and without bootstrap
replicates: one computation gives the point values (the same either way) and the intervals."""

from __future__ import annotations

import numpy as np
import pandas.testing as pdt
import pytest

from automd_analysis.analysis import (
    calibration_practices,
    catalog,
    llm,
    primary,
    shift,
    uncertainty,
)
from automd_analysis.analysis._doc_example import example_store
from automd_analysis.analysis.store import ScoreStore
from automd_analysis.stats import resample as two_stage


@pytest.fixture(scope="module")
def stores():
    """(store with replicates, the same store without, the replicates)."""
    bare, replicates = example_store()
    with_reps = ScoreStore.from_frames(scores=bare.scores, runs=bare.runs, replicates=replicates)
    return with_reps, bare, replicates


CASES = [
    ("table2_primary_scores", primary.agent_summary),
    ("table3_ece", calibration_practices.ece_by_task_class),
    ("table5_external", shift.external_ratios),
    ("table7_llm", llm.llm_summary),
]


def _interval_columns(name: str) -> list[str]:
    return [c for pair in catalog.table(name).intervals.values() for c in pair]


@pytest.mark.parametrize(("name", "table"), CASES)
def test_the_declared_columns_and_intervals_that_are_intervals(stores, name, table):
    store, _, _ = stores
    frame = table(store, seed=3, alpha=0.1)
    assert frame.columns.tolist() == catalog.table(name).named
    assert catalog.table(name).check(frame) == []
    for column, (low, high) in catalog.table(name).intervals.items():
        # every defined estimate has an interval (the example store has no sequential task)
        assert (frame[low].notna() == frame[column].notna()).all(), column
        assert ((frame[low] <= frame[high]) | frame[low].isna()).all()


@pytest.mark.parametrize(("name", "table"), CASES)
def test_without_replicates_the_same_numbers_and_empty_intervals(stores, name, table):
    store, bare, _ = stores
    assert not two_stage.has_replicates(bare)
    # a bias-corrected estimate (``<X>_bc``) needs the replicates too
    ci = _interval_columns(name) + [c for c in catalog.table(name).named if c.endswith("_bc")]
    # and so does "not distinguishable from the best": without them only the best is marked
    marks = [f"{c}_best" for c in catalog.table(name).best]
    with_ci, without = table(store, seed=3), table(bare)
    assert without.columns.tolist() == with_ci.columns.tolist()
    pdt.assert_frame_equal(with_ci.drop(columns=ci + marks), without.drop(columns=ci + marks))
    assert without[ci].isna().all().all()
    for column in marks:
        assert (without[column] <= with_ci[column]).all(), column


@pytest.mark.parametrize(("name", "table"), CASES)
def test_a_wider_interval_at_a_lower_alpha(stores, name, table):
    store, _, _ = stores
    narrow, wide = table(store, alpha=0.5), table(store, alpha=0.05)
    for low, high in catalog.table(name).intervals.values():
        ok = narrow[low].notna()
        assert (wide.loc[ok, low] <= narrow.loc[ok, low]).all()
        assert (wide.loc[ok, high] >= narrow.loc[ok, high]).all()


def test_seed_changes_the_draws_and_same_seed_repeats(stores):
    store = stores[0]
    a = primary.agent_summary(store, seed=1)
    b = primary.agent_summary(store, seed=1)
    c = primary.agent_summary(store, seed=2)
    pdt.assert_frame_equal(a, b)
    assert not a["penalized_mean_ci_low"].equals(c["penalized_mean_ci_low"])
    pdt.assert_frame_equal(a[["penalized_mean"]], c[["penalized_mean"]])  # the point is observed


def test_comparisons_and_power_are_empty_without_replicates(stores):
    _, bare, _ = stores
    for name, table in (
        ("pairwise_comparisons", uncertainty.pairwise_comparisons),
        ("power_table", uncertainty.power_table),
    ):
        empty = table(bare)
        assert empty.empty and empty.columns.tolist() == catalog.table(name).named
        assert empty["n_tasks"].dtype == np.int64
    assert uncertainty.power_table(bare)["reachable"].dtype == bool


def test_n_replicates(stores):
    store, bare, replicates = stores
    assert two_stage.n_replicates(store) == replicates["replicate"].nunique() == 40
    assert two_stage.n_replicates(bare) == 0
    empty = ScoreStore.from_frames(
        scores=bare.scores, runs=bare.runs, replicates=replicates.iloc[:0]
    )
    assert not two_stage.has_replicates(empty) and two_stage.n_replicates(empty) == 0


def test_partial_replicates_are_a_structured_error(stores):
    """A store whose replicates miss a valid run is inconsistent: say which run, do not guess."""
    from automd_analysis.errors import ScoreStoreError

    store, bare, replicates = stores
    first = replicates["run_id"].iloc[0]
    partial = ScoreStore.from_frames(
        scores=bare.scores, runs=bare.runs, replicates=replicates.loc[replicates.run_id != first]
    )
    for table in (primary.agent_summary, calibration_practices.ece_by_task_class):
        with pytest.raises(ScoreStoreError) as info:
            table(partial)
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
    exact = primary.agent_summary(
        ScoreStore.from_frames(scores=bare.scores, runs=bare.runs, replicates=own)
    )
    noisy = primary.agent_summary(
        ScoreStore.from_frames(scores=bare.scores, runs=bare.runs, replicates=replicates)
    )
    width = (exact["penalized_mean_ci_high"] - exact["penalized_mean_ci_low"]).to_numpy()
    assert np.all(np.isfinite(width)) and np.all(width >= 0)
    assert width.sum() < (noisy["penalized_mean_ci_high"] - noisy["penalized_mean_ci_low"]).sum()
