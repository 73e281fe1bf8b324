"""Intervals of Tables 2, 3 and 7, paired comparisons, power table and wording, on hand-built
stores.

The strongest check ("twin"): for a column b of the draws, rebuild the score store the column
stands for (slot i holds its drawn validity, score and ECE) and run the table function on it
without replicates; its point value must be the table's value in column b. Column 0 is the
observed store itself. The resampler's own arithmetic is checked by hand in
``tests/test_stats_resample.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import storebuilder as sb
from scipy import stats
from statsmodels.stats.multitest import multipletests

from automd_analysis.analysis import calibration_practices as calibration
from automd_analysis.analysis import catalog, llm, primary, shift, uncertainty
from automd_analysis.analysis.store import ScoreStore, selected_runs
from automd_analysis.errors import ScoreStoreError
from automd_analysis.stats.intervals import best_marks, summarise
from automd_analysis.stats.multiplicity import holm_adjust
from automd_analysis.stats.paired import min_attainable_p, sign_flip_test
from automd_analysis.stats.resample import run_draws

NAN = math.nan


def reps_frame(values: dict[str, tuple[list[float], list[float]]]) -> pd.DataFrame:
    """Tidy replicates from {run_id: (scores, eces)}."""
    rows = []
    for run_id, (scores, eces) in values.items():
        for r, (s, e) in enumerate(zip(scores, eces, strict=True)):
            rows.append({"run_id": run_id, "replicate": r, "score": s, "ece": e})
    return pd.DataFrame(rows, columns=["run_id", "replicate", "score", "ece"])


def random_replicates(store: ScoreStore, n_rep: int, seed: int = 0) -> pd.DataFrame:
    """Replicates for every valid run of every experiment: its score/ECE plus noise, some NaN."""
    rng = np.random.default_rng(seed)
    runs = store.scores.loc[store.scores["is_selected"] & store.scores["valid"]]
    values = {}
    for run_id, score, ece in zip(runs["run_id"], runs["score"], runs["ece"], strict=True):
        s = np.clip(score + rng.normal(0, 0.05, n_rep), 0, 1)
        e = np.clip(ece + rng.normal(0, 0.02, n_rep), 0, 1)
        s[rng.random(n_rep) < 0.05] = NAN  # undefined replicates
        values[run_id] = (s.tolist(), e.tolist())
    return reps_frame(values)


def rid(agent, task, rep, experiment="main"):
    return f"{experiment}/{agent}/{task}/rep{rep}"


def with_replicates(store: ScoreStore, replicates: pd.DataFrame) -> ScoreStore:
    return ScoreStore.from_frames(
        scores=store.scores, runs=store.runs, annotations=store.annotations, replicates=replicates
    )


# --- a hand-built store with replicates ----------------------------------------------------


def hand_store():
    runs = [
        sb.run("a", "clf_a", 0, score=0.5, ece=0.1),
        sb.run("a", "clf_b", 0, score=0.4, ece=0.2),
        sb.run("b", "clf_a", 0, valid=False),
        sb.run("b", "clf_b", 0, score=0.6, ece=0.3),
    ]
    reps = reps_frame(
        {
            rid("a", "clf_a", 0): ([0.2, 0.4, 0.6, 0.8], [0.1, 0.2, 0.3, 0.4]),
            rid("a", "clf_b", 0): ([0.6, 0.6, 0.2, 0.2], [0.3, 0.3, 0.1, 0.1]),
            rid("b", "clf_b", 0): ([0.3, 0.5, 0.7, 0.9], [0.2, 0.2, 0.4, 0.4]),
        }
    )
    return with_replicates(sb.build_store(runs), reps), reps


# --- twins: column b of every table equals the table of the store column b stands for ---------


def resampled_store(store: ScoreStore, matrix, b: int):
    """The store column b stands for: slot i <- its drawn validity, score and ECE."""
    scores = store.scores.copy()
    row_of = {r: i for i, r in enumerate(scores["run_id"])}
    runs = matrix.units
    for i, run_id in enumerate(runs["run_id"]):
        row, ok = row_of[run_id], bool(matrix.valid[i, b])
        scores.loc[row, "valid"] = ok
        scores.loc[row, "score"] = matrix.score[i, b] if ok else NAN
        scores.loc[row, "ece"] = matrix.ece[i, b] if ok else NAN
    runs = store.runs.drop(columns="status", errors="ignore")  # derived again from the rows
    return ScoreStore.from_frames(scores=scores, runs=runs, annotations=store.annotations)


def twin(store: ScoreStore, matrix, b: int) -> ScoreStore:
    return resampled_store(store, matrix, b)


def storable_columns(matrix, k: int = 3) -> list[int]:
    """Column 0 and the first k draws whose values a score store can hold: drawn values are not
    cut to [0, 1] (a cut would skew the draws' mean), a store's values are."""

    def ok(b):
        values = np.concatenate([matrix.score[:, b], matrix.ece[:, b]])
        values = values[np.isfinite(values)]
        return bool(((values >= 0) & (values <= 1)).all())

    found = [b for b in range(1, matrix.n_boot + 1) if ok(b)][:k]
    assert len(found) == k, "too few draws inside [0, 1] for the check"
    return [0, *found]


@pytest.fixture(scope="module")
def rich():
    store = sb.build_store(**sb.complete_runs(seed=11))
    reps = random_replicates(store, n_rep=12, seed=1)
    return store, reps, with_replicates(store, reps)


def test_table2_columns_equal_table2_on_resampled_stores(rich):
    store, reps, _ = rich
    matrix = run_draws(selected_runs(store), reps, ("agent", "task"), seed=5, tag="table2")
    rows = primary._table2_rows(matrix)
    for b in storable_columns(matrix):
        table = primary.agent_summary(twin(store, matrix, b)).set_index("agent")
        for row in rows:
            agent = row["agent"]
            assert row["penalized_mean"][b] == pytest.approx(
                table.loc[agent, "penalized_mean"], abs=1e-12
            )
            assert row["nonpenalized_mean"][b] == pytest.approx(
                table.loc[agent, "nonpenalized_mean"], abs=1e-12, nan_ok=True
            )


def test_table3_columns_equal_table3_on_resampled_stores(rich):
    store, reps, _ = rich
    matrix = run_draws(selected_runs(store), reps, ("agent", "task"), seed=2, tag="table3")
    rows = calibration._table3_rows(matrix)
    for b in storable_columns(matrix):
        table = calibration.ece_by_task_class(twin(store, matrix, b)).set_index("agent")
        for row in rows:
            for column in ("survival", "classification", "sequential", "all"):
                assert row[column] == row[f"{column}_bc"][0]  # the plug-in is column 0
                assert row[f"{column}_bc"][b] == pytest.approx(
                    table.loc[row["agent"], column], abs=1e-12, nan_ok=True
                )


def test_table7_columns_equal_table7_on_resampled_stores(rich):
    store, reps, _ = rich
    matrix = run_draws(llm.llm_runs(store), reps, ("llm", "task"), n_boot=60, seed=4, tag="table7")
    rows = llm._llm_rows(matrix)
    assert len(rows) >= 3
    for b in storable_columns(matrix):
        table = llm.llm_summary(twin(store, matrix, b)).set_index("llm")
        for row in rows:
            assert row["penalized_mean"][b] == pytest.approx(
                table.loc[row["llm"], "penalized_mean"], abs=1e-12
            )
            assert row["ece_mean"][b] == pytest.approx(table.loc[row["llm"], "ece_mean"], abs=1e-12)


def test_point_estimate_lies_inside_interval_and_rerun_is_identical(rich):
    store, _, store_reps = rich
    table = primary.agent_summary(store_reps, n_boot=200)
    pd.testing.assert_frame_equal(table, primary.agent_summary(store_reps, n_boot=200))
    other_seed = primary.agent_summary(store_reps, n_boot=200, seed=1)
    assert not table.equals(other_seed)
    bare = primary.agent_summary(store)  # no replicates: the same numbers, empty intervals
    pd.testing.assert_frame_equal(table.drop(columns=_ci(table)), bare.drop(columns=_ci(bare)))
    assert bare[[c for c in _ci(bare) if "_ci_" in c]].isna().all().all()
    # without paired draws nothing is "not distinguishable": only the best value is marked
    assert bare["penalized_mean_best"].sum() == 1
    inside = (table["penalized_mean_ci_low"] <= table["penalized_mean"]) & (
        table["penalized_mean"] <= table["penalized_mean_ci_high"]
    )
    assert inside.all()


def _ci(frame: pd.DataFrame) -> list[str]:
    """The interval columns and the best marks that come from them."""
    return [c for c in frame.columns if "_ci_" in c or c.endswith("_best")]


def test_best_marks_follow_the_paired_difference_not_the_marginal_intervals():
    rng = np.random.default_rng(3)
    shared = rng.normal(0, 0.05, 400)  # the resampled patients every agent's draws share
    a = np.concatenate([[0.70], 0.70 + shared])
    # b trails a by 0.01 on every draw: its marginal interval overlaps a's almost entirely,
    # but the paired difference is -0.01 on every draw and excludes 0
    b = a - 0.01
    c = np.concatenate([[0.69], 0.69 + shared + rng.normal(0, 0.02, 400)])  # noisy: a tie
    baseline = a + 0.2  # never best
    rows = [{"agent": n, "score": d} for n, d in zip("abc", (a, b, c), strict=True)]
    rows.append({"agent": "baseline", "score": baseline})
    out = summarise(
        rows,
        {"score": ("score_ci_low", "score_ci_high")},
        best={"score": "max"},
        never_best=[False, False, False, True],
    )
    assert [r["score_best"] for r in out] == [True, False, True, False]
    assert out[1]["score_ci_low"] < out[0]["score"] < out[1]["score_ci_high"]
    # lower is better: the same draws negated mark the same rows
    rows = [r | {"score": -r["score"]} for r in rows]
    out = summarise(
        rows,
        {"score": ("score_ci_low", "score_ci_high")},
        best={"score": "min"},
        never_best=[False, False, False, True],
    )
    assert [r["score_best"] for r in out] == [True, False, True, False]


def test_best_marks_of_bias_corrected_columns_compare_corrected_values():
    # a's draws sit 0.03 above its plug-in 0.10 (corrected 0.07); b has no bias (0.08)
    a = np.array([0.10, 0.13, 0.14, 0.12, 0.13])
    b = np.array([0.08, 0.08, 0.09, 0.07, 0.08])
    # plug-ins: b is lower and the paired difference a - b is 0.05 on every draw
    assert best_marks([a, b], "min", alpha=0.5) == [False, True]
    # corrected: a is lower; the difference b - a (0.01 corrected) has the interval
    # [0.01 - 0.03, 0.01 + 0.03], which contains 0: b is not distinguishable from a
    assert best_marks([a, b], "min", corrected=True, alpha=0.5) == [True, True]
    assert best_marks([a, b + 0.1], "min", corrected=True, alpha=0.5) == [True, False]


# --- pairing ----------------------------------------------------------------------------------


def test_pairs_share_test_resamples():
    # one run per cell, b = a - 0.1 on every replicate: with shared resamples the difference is
    # 0.1 in every iteration, so the interval has zero width although each agent's own varies
    runs, values = [], {}
    rng = np.random.default_rng(3)
    for task in ("clf_a", "clf_b", "surv_a"):
        a_reps = rng.uniform(0.3, 0.9, 20)
        runs += [sb.run("a", task, 0, score=0.6), sb.run("b", task, 0, score=0.5)]
        values[rid("a", task, 0)] = (a_reps.tolist(), [0.1] * 20)
        values[rid("b", task, 0)] = ((a_reps - 0.1).tolist(), [0.1] * 20)
    store = with_replicates(sb.build_store(runs), reps_frame(values))
    runs = selected_runs(store).reset_index(drop=True)
    matrix = run_draws(runs, store.replicates, ("agent", "task"), tag="pairing")
    slot = {(a, t): i for i, (a, t) in enumerate(zip(runs["agent"], runs["task"], strict=True))}
    a = [slot[("a", t)] for t in ("clf_a", "clf_b", "surv_a")]
    b = [slot[("b", t)] for t in ("clf_a", "clf_b", "surv_a")]
    both = matrix.valid[a] & matrix.valid[b]  # a's and b's slot of a task, both valid
    gap = (matrix.score[a] - matrix.score[b])[both]
    assert gap.size > 0 and np.allclose(gap, 0.1, atol=1e-12)
    pw = uncertainty.pairwise_comparisons(store).set_index("measure")
    assert pw.loc["ece", "ci_low"] == 0.0 and pw.loc["ece", "ci_high"] == 0.0
    own = primary.agent_summary(store).set_index("agent")
    assert (
        own.loc["a", "nonpenalized_mean_ci_high"] - own.loc["a", "nonpenalized_mean_ci_low"] > 0.1
    )


# --- tests across tasks ------------------------------------------------------------------------


@pytest.mark.reference
def test_sign_flip_matches_scipy_permutation_test():
    rng = np.random.default_rng(0)
    for t in (2, 3, 6, 9, 12):
        for _ in range(5):
            d = np.round(rng.normal(0.02, 0.05, t), 3)  # ties in |d|
            ref = stats.permutation_test(
                (d,),
                np.mean,
                permutation_type="samples",
                n_resamples=np.inf,
                alternative="two-sided",
                vectorized=False,
            )
            assert sign_flip_test(d) == pytest.approx(ref.pvalue, abs=1e-12)


def test_sign_flip_by_hand_and_edge_cases():
    assert sign_flip_test([0.1, 0.2, 0.3]) == 0.25
    assert sign_flip_test([0.0, 0.0]) == 1.0
    assert sign_flip_test([0.1, -0.1]) == 1.0
    assert math.isnan(sign_flip_test([]))
    assert min_attainable_p([0.1] * 5) == 0.0625 and min_attainable_p([0.1] * 6) == 0.03125
    assert min_attainable_p([0.0, 0.1]) == 1.0
    many = np.full(25, 0.01)  # Monte Carlo branch: only all-+ / all-- reach the sum
    assert sign_flip_test(many) == pytest.approx(1 / 100_001, abs=1e-3)
    with pytest.raises(ValueError, match="finite"):
        sign_flip_test([0.1, NAN])


@pytest.mark.reference
def test_holm_matches_statsmodels():
    rng = np.random.default_rng(1)
    for m in (1, 2, 5, 12):
        p = rng.uniform(0, 0.2, m)
        p[rng.random(m) < 0.3] = p[0]  # ties
        np.testing.assert_allclose(holm_adjust(p), multipletests(p, method="holm")[1], atol=1e-15)
    out = holm_adjust([0.02, NAN, 0.01])
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.02)
    with pytest.raises(ValueError, match=r"p_values\[0\]"):
        holm_adjust([1.5])


def three_task_store():
    """Agents a, b, c with one run per task; d(a - b) = 0.1, 0.2, 0.3 on the score."""
    spec = {
        "a": ([0.6, 0.7, 0.8], [0.05, 0.30, 0.10]),
        "b": ([0.5, 0.5, 0.5], [0.10, 0.20, 0.20]),
        "c": ([0.55, 0.75, 0.7], [0.10, 0.10, 0.10]),
    }
    runs, values = [], {}
    for agent, (scores, eces) in spec.items():
        for task, s, e in zip(("clf_a", "clf_b", "surv_a"), scores, eces, strict=True):
            runs.append(sb.run(agent, task, 0, score=s, ece=e))
            values[rid(agent, task, 0)] = ([s] * 10, [e] * 10)
    reps = reps_frame(values)
    return with_replicates(sb.build_store(runs), reps), reps


def test_pairwise_by_hand():
    store, _ = three_task_store()
    pw = uncertainty.pairwise_comparisons(store)
    assert list(pw.columns) == catalog.table("pairwise_comparisons").named
    row = pw.set_index(["agent_a", "agent_b", "measure"]).loc[("a", "b", "score")]
    assert row["diff_mean"] == pytest.approx(0.2, abs=1e-12)
    # constant replicates and one run per cell: only the drawn validity moves the difference
    # (three runs per agent cannot rule out an invalid rate of 20 % or more)
    assert row["ci_low"] - 1e-12 <= 0.2 <= row["ci_high"] + 1e-12
    assert row["tasks_p_value"] == 0.25 and row["n_tasks"] == 3 and row["tasks_a_better"] == 3
    assert 0.0 < row["p_value"] <= 1.0  # never 0
    assert (row["p_value"] < 0.05) == (row["ci_low"] > 0 or row["ci_high"] < 0)
    ece = pw.set_index(["agent_a", "agent_b", "measure"]).loc[("a", "b", "ece")]
    assert ece["diff_mean"] == pytest.approx((-0.05 + 0.10 - 0.10) / 3, abs=1e-12)
    assert ece["tasks_a_better"] == 2  # lower ECE on clf_a and surv_a
    for measure in ("score", "ece"):
        mine = pw.loc[pw["measure"] == measure]
        np.testing.assert_allclose(mine["p_holm"], holm_adjust(mine["p_value"]), atol=0)
        np.testing.assert_allclose(mine["tasks_p_holm"], holm_adjust(mine["tasks_p_value"]), atol=0)
    assert pw[["agent_a", "agent_b"]].drop_duplicates().values.tolist() == [
        ["a", "b"],
        ["a", "c"],
        ["b", "c"],
    ]


def test_pairwise_uses_common_tasks_only():
    store, reps = three_task_store()
    runs = store.scores.loc[~((store.scores["agent"] == "b") & (store.scores["task"] == "surv_a"))]
    store2 = ScoreStore.from_frames(
        scores=runs,
        runs=store.runs.loc[store.runs["run_id"].isin(runs["run_id"])],
        replicates=reps,
    )
    pw = uncertainty.pairwise_comparisons(store2).set_index(["agent_a", "agent_b", "measure"])
    assert pw.loc[("a", "b", "score"), "n_tasks"] == 2
    assert pw.loc[("a", "b", "score"), "diff_mean"] == pytest.approx(0.15, abs=1e-12)


# --- power -------------------------------------------------------------------------------------


def power_store(shift_a: float):
    values = {
        ("a", "clf_a"): [0.6, 0.8],
        ("a", "clf_b"): [0.5, 0.7],
        ("b", "clf_a"): [0.5, 0.5],
        ("b", "clf_b"): [0.4, 0.6],
    }
    runs, reps = [], {}
    for (agent, task), scores in values.items():
        for k, s in enumerate(scores):
            runs.append(sb.run(agent, task, k, score=s, ece=0.1))
            delta = [shift_a, -shift_a] if (agent, task) == ("a", "clf_a") else [0.0, 0.0]
            reps[rid(agent, task, k)] = ([s + x for x in delta], [0.1, 0.1])
    return with_replicates(sb.build_store(runs), reps_frame(reps))


def test_power_table_by_hand():
    z2 = stats.norm.ppf(0.975) ** 2
    # no test-set noise: D = mean(0.2, 0.1) = 0.15; S = (0.02 + 0 + 0.02 + 0.02) / 4 = 0.015
    store = power_store(0.0)
    row = uncertainty.power_table(store).set_index("measure").loc["score"]
    assert row["diff_mean"] == pytest.approx(0.15, abs=1e-12)
    assert row["reps_needed"] == math.ceil(z2 * 0.015 / 0.15**2) == 3
    assert row["se_test_set"] == 0.0 and bool(row["reachable"])
    assert row["se_observed"] == pytest.approx(math.sqrt((0.02 / 2 + 0.04 / 2) / 4), abs=1e-12)
    assert row["reps_observed"] == 2
    # a's clf_a runs move +-0.05 together over the two test replicates: D per replicate
    # 0.15 +- 0.025 -> V_test = var(0.175, 0.125) = 0.00125
    store = power_store(0.05)
    row = uncertainty.power_table(store).set_index("measure").loc["score"]
    assert row["se_test_set"] == pytest.approx(math.sqrt(0.00125), abs=1e-12)
    assert row["reps_needed"] == math.ceil(z2 * 0.015 / (0.15**2 - z2 * 0.00125)) == 4
    # test-set noise alone hides the difference: no number of repetitions helps
    store = power_store(0.2)
    row = uncertainty.power_table(store).set_index("measure").loc["score"]
    assert not row["reachable"] and math.isnan(row["reps_needed"])


# --- errors ------------------------------------------------------------------------------------


def test_missing_replicates_of_a_valid_run():
    store, reps = hand_store()
    reps = reps.loc[reps["run_id"] != rid("b", "clf_b", 0)]
    with pytest.raises(ScoreStoreError) as err:
        primary.agent_summary(with_replicates(store, reps))
    assert err.value.code == "store.no_replicates"
    assert rid("b", "clf_b", 0) in str(err.value) and "--bootstrap" in str(err.value)


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda r: r.drop(columns="ece"), "lacks column"),
        (lambda r: r.assign(score=r["score"].where(r.index != 2, 1.5)), "row 2, column score"),
        (lambda r: r.assign(replicate=r["replicate"].where(r.index != 1, -1)), "row 1"),
        (lambda r: pd.concat([r, r.iloc[[0]]], ignore_index=True), "twice"),
        (lambda r: r.loc[r.index != 1], "does not have replicates 0..3"),
        (
            lambda r: pd.concat([r, r.iloc[[4]].assign(replicate=4)], ignore_index=True),
            "different numbers",
        ),
    ],
)
def test_malformed_replicates(mutate, match):
    store, reps = hand_store()  # the matrix checks what it reads, whoever built the table
    with pytest.raises(ScoreStoreError, match=match) as err:
        run_draws(selected_runs(store), mutate(reps), ("agent", "task"), tag="table2")
    assert err.value.code == "store.replicates_malformed"


def test_invalid_runs_need_no_replicates_and_extra_runs_are_ignored():
    store, reps = hand_store()
    extra = reps_frame({"objectives/x/clf_a/rep0": ([0.5] * 4, [0.1] * 4)})
    both = with_replicates(store, pd.concat([reps, extra], ignore_index=True))
    pd.testing.assert_frame_equal(primary.agent_summary(both), primary.agent_summary(store))


def test_bad_alpha_and_n_boot():
    store, _ = hand_store()
    for table in (primary.agent_summary, calibration.ece_by_task_class, shift.external_ratios):
        with pytest.raises(ValueError, match="alpha"):
            table(store, alpha=0)
        with pytest.raises(ValueError, match="n_boot"):
            table(store, n_boot=0)
    with pytest.raises(ValueError, match="alpha"):
        uncertainty.pairwise_comparisons(store, alpha=1)


# --- wording -----------------------------------------------------------------------------------


def test_sentences_state_a_difference_only_when_significant():
    base = {
        "agent_a": "a_1",
        "agent_b": "b",
        "measure": "ece",
        "diff_mean": 0.03,
        "ci_low": 0.01,
        "ci_high": 0.05,
        "p_value": 0.001,
        "p_holm": 0.003,
        "n_tasks": 15,
        "tasks_a_better": 2,
        "tasks_p_value": 0.02,
        "tasks_p_holm": 0.04,
    }
    text = uncertainty.comparison_sentence(base)
    assert text.startswith(
        "b is better calibrated than a\\_1 on calibration (ECE) on these 15 tasks"
    )
    assert "across tasks (tasks as the sample): b better on 13 of 15 tasks" in text
    assert "sign-flip Holm-adjusted p = 0.040" in text
    raw_only = uncertainty.comparison_sentence({**base, "p_value": 0.01, "p_holm": 0.2})
    assert "(unadjusted p = 0.010: the interval alone excludes 0)" in raw_only
    not_sig = uncertainty.comparison_sentence({**base, "p_holm": 0.2})
    assert not_sig.startswith("The data cannot separate a\\_1 and b")
    assert "no paired test" not in not_sig
    few = uncertainty.comparison_sentence({**base, "p_holm": 0.25, "n_tasks": 3})
    assert "with 3 tasks no paired test across tasks can reach p < 0.05" in few
    frame = pd.DataFrame([{**base, "p_holm": 0.2}, {**base, "agent_a": "c", "p_holm": 0.01}])
    lines = uncertainty.comparison_sentences(frame, "ece")
    assert lines[0].startswith("b is better calibrated than c") and "cannot separate" in lines[1]
