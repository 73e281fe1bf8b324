"""Paper Table 5 (external validation ratios, App. E) on hand-built stores."""

from __future__ import annotations

import math
import statistics

import pytest
import storebuilder as sb
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis.analysis import catalog, shift


def _runs():
    return [
        # A: rep0 usable; rep1 internal invalid; rep2 internal score 0; rep3 no internal run;
        # rep4 external invalid
        sb.run("A", "surv_a", 0, score=0.5),
        sb.run("A", "surv_a_ext", 0, score=0.4),
        sb.run("A", "surv_a", 1, valid=False),
        sb.run("A", "surv_a_ext", 1, score=0.3),
        sb.run("A", "surv_a", 2, score=0.0),
        sb.run("A", "surv_a_ext", 2, score=0.2),
        sb.run("A", "surv_a_ext", 3, score=0.1),
        sb.run("A", "surv_a", 4, score=0.6),
        sb.run("A", "surv_a_ext", 4, valid=False),
        # B: two usable pairs
        sb.run("B", "surv_a", 0, score=0.4),
        sb.run("B", "surv_a_ext", 0, score=0.4),
        sb.run("B", "surv_a", 1, score=0.8),
        sb.run("B", "surv_a_ext", 1, score=0.4),
        # baseline: internal 0.4, 0.6 / external 0.3, 0.3 (ratio of means, not mean of ratios)
        *[sb.run("baseline", "surv_a", k, score=(0.4, 0.6)[k % 2]) for k in range(4)],
        *[sb.run("baseline", "surv_a_ext", k, score=0.3) for k in range(4)],
        # an internal-only agent does not appear
        sb.run("C", "surv_a", 0, score=0.5),
    ]


def test_external_pairs_marks_usable_pairs():
    pairs = shift.external_pairs(sb.build_store(_runs()))
    a = pairs.loc[pairs["agent"] == "A"].set_index("rep")
    assert list(a["usable"]) == [True, False, False, False, False]
    assert a.loc[0, "ratio"] == pytest.approx(0.8)
    assert math.isnan(a.loc[1, "score_internal"])  # invalid internal run
    assert math.isnan(a.loc[3, "score_internal"])  # no internal run with that index
    assert a.loc[2, "score_internal"] == 0.0


def test_table5_scores_and_ratios():
    table = shift.table5(sb.build_store(_runs()))
    assert table.columns.tolist() == catalog.table("table5_external").named
    rows = table.set_index("agent")
    assert rows.loc["A", "score"] == pytest.approx(statistics.mean([0.4, 0.3, 0.2, 0.1]))
    assert rows.loc["A", "ratio"] == pytest.approx(0.8)
    assert rows.loc["B", "ratio"] == pytest.approx((1.0 + 0.5) / 2)
    assert rows.loc["baseline", "ratio"] == pytest.approx(0.3 / 0.5)
    assert rows.loc["baseline", "ratio"] != pytest.approx((0.75 + 0.5) / 2)
    assert set(rows.index) == {"A", "B", "baseline"}
    assert (table["internal_task"] == "surv_a").all()
    assert list(table["agent"]) == ["A", "B", "baseline"]


def test_table5_detail_counts():
    detail = shift.table5_detail(sb.build_store(_runs())).set_index("agent")
    assert detail.loc["A", "n_valid"] == 4
    assert detail.loc["A", "n_pairs"] == 1
    assert detail.loc["B", "n_pairs"] == 2
    assert detail.loc["baseline", "internal_score"] == pytest.approx(0.5)


def test_no_usable_pair_gives_nan_ratio():
    runs = [sb.run("A", "clf_b", 0, score=0.0), sb.run("A", "clf_b_ext", 0, score=0.2)]
    table = shift.table5(sb.build_store(runs))
    assert table.loc[0, "score"] == pytest.approx(0.2)
    assert math.isnan(table.loc[0, "ratio"])


def test_store_without_external_tasks_gives_an_empty_table():
    table = shift.table5(sb.build_store([sb.run("A", "clf_a", 0)]))
    assert table.empty and table.columns.tolist() == catalog.table("table5_external").named


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0.01, 1), st.floats(0, 1)), min_size=1, max_size=5),
    st.floats(0.1, 1),
)
def test_ratio_scales_with_external_scores(pairs, factor):
    def runs(scale):
        out = []
        for k, (internal, external) in enumerate(pairs):
            out.append(sb.run("A", "seq_a", k, score=internal))
            out.append(sb.run("A", "seq_a_ext", k, score=external * scale))
        return out

    base = shift.table5(sb.build_store(runs(1.0))).loc[0, "ratio"]
    scaled = shift.table5(sb.build_store(runs(factor))).loc[0, "ratio"]
    expected = statistics.mean(e / i for i, e in pairs)
    assert base == pytest.approx(expected, rel=1e-12)
    assert scaled == pytest.approx(factor * base, rel=1e-9, abs=1e-12)


def test_baseline_without_a_positive_internal_score_has_no_ratio():
    # every baseline repetition scores 0 internally: the ratio of means is undefined (not inf, no
    # ZeroDivisionError), in the point table and in every bootstrap iteration of its interval
    from automd_analysis.analysis.store import ScoreStore

    runs = [
        *[sb.run("baseline", "surv_a", k, score=0.0) for k in range(3)],
        *[sb.run("baseline", "surv_a_ext", k, score=0.3) for k in range(3)],
        sb.run("A", "surv_a", 0, score=0.5),
        sb.run("A", "surv_a_ext", 0, score=0.4),
    ]
    store = sb.build_store(runs)
    rows = shift.table5(store).set_index("agent")
    assert rows.loc["baseline", "score"] == pytest.approx(0.3)
    assert math.isnan(rows.loc["baseline", "ratio"])
    assert rows.loc["A", "ratio"] == pytest.approx(0.8)
    ids = store.scores.loc[store.scores["is_selected"], ["run_id", "score"]]
    import pandas as pd

    reps = pd.DataFrame(
        [
            {"run_id": r, "replicate": b, "score": s, "ece": 0.1}
            for r, s in zip(ids["run_id"], ids["score"], strict=True)
            for b in range(4)
        ]
    )
    with_reps = ScoreStore.from_frames(scores=store.scores, runs=store.runs, replicates=reps)
    ci = shift.external_ratios(with_reps).set_index("agent")
    assert ci.loc["baseline", ["ratio_ci_low", "ratio_ci_high"]].isna().all()
    assert ci.loc["A", "ratio_ci_low"] == pytest.approx(0.8)
