"""Paper Table 4, Table 15, Table 16 and Figure 4 data (App. F.1) on hand-built stores."""

from __future__ import annotations

import math
import statistics

import pytest
import storebuilder as sb

from automd_analysis.analysis import objectives as obj
from automd_analysis.errors import ScoreStoreError

RANKS = {
    "averaged_ranks_as_probabilities": "yes",
    "class_imbalance_handling": "none",
    "recalibration_after_imbalance": "na",
    "probability_calibration": "no",
}
WEIGHT = {
    "averaged_ranks_as_probabilities": "no",
    "class_imbalance_handling": "oversampling",
    "recalibration_after_imbalance": "no",
    "probability_calibration": "no",
}
CALIBRATED = dict(WEIGHT, class_imbalance_handling="none", probability_calibration="yes")


def _runs():
    def o(agent, rep, objective, auroc, brier, ece, **kw):
        return sb.run(
            agent,
            "clf_a",
            rep,
            experiment="objectives",
            objective=objective,
            auroc=auroc,
            brier=brier,
            ece=ece,
            **kw,
        )

    return [
        # A: the main experiment's runs on the objectives task
        sb.run("X", "clf_a", 0, auroc=0.70, brier=0.10, ece=0.30, annotations=RANKS),
        sb.run("X", "clf_a", 1, auroc=0.66, brier=0.12, ece=0.10, annotations=WEIGHT),
        sb.run("Y", "clf_a", 0, auroc=0.68, brier=0.09, ece=0.02, annotations=CALIBRATED),
        sb.run("Y", "clf_a", 1, valid=False),
        sb.run("X", "clf_b", 0, auroc=0.99, ece=0.9),  # another task: ignored
        *[
            sb.run("baseline", "clf_a", k, auroc=0.66 + 0.01 * k, brier=0.1, ece=0.008)
            for k in range(5)
        ],
        # B and C (repetitions 0-1 and 3-4 keep run paths apart)
        o("X", 0, "brier", 0.64, 0.08, 0.01, annotations=CALIBRATED),
        o("Y", 0, "brier", 0.60, 0.09, 0.05, annotations=WEIGHT),
        o("X", 3, "auroc+ece", 0.69, 0.085, 0.004, annotations=CALIBRATED),
        o("Y", 3, "auroc+ece", 0.67, 0.086, 0.006, annotations=CALIBRATED),
        o("Y", 4, "auroc+ece", 0.5, 0.5, 0.5, valid=False),
    ]


@pytest.fixture
def store():
    return sb.build_store(_runs())


def test_objective_runs_labels_and_sources(store):
    runs = obj.objective_runs(store)
    assert list(dict.fromkeys(runs["objective"])) == ["A", "B", "C"]
    a = runs.loc[runs["objective"] == "A"]
    assert set(a["run_id"]) == {f"main/{x}/clf_a/rep{k}" for x in "XY" for k in (0, 1)}
    assert set(runs.loc[runs["objective"] == "C", "stated_objective"]) == {"auroc+ece"}
    assert not runs["reference"].any()


def test_table4_pools_valid_runs_across_agents(store):
    table = obj.table4(store).set_index("objective")
    a = table.loc["A"]
    assert (a["n_runs"], a["n_valid"]) == (4, 3)
    assert a["auroc_mean"] == pytest.approx(statistics.mean([0.70, 0.66, 0.68]))
    assert a["auroc_sd"] == pytest.approx(statistics.stdev([0.70, 0.66, 0.68]))
    assert a["ece_mean"] == pytest.approx(statistics.mean([0.30, 0.10, 0.02]))
    c = table.loc["C"]
    assert (c["n_runs"], c["n_valid"]) == (3, 2)
    assert c["brier_mean"] == pytest.approx(0.0855)
    assert c["ece_sd"] == pytest.approx(statistics.stdev([0.004, 0.006]))


def test_table15_by_agent(store):
    table = obj.table15(store).set_index(["agent", "objective"])
    assert table.loc[("X", "A"), "n_valid"] == 2
    assert table.loc[("Y", "A"), "n_valid"] == 1
    assert math.isnan(table.loc[("Y", "A"), "auroc_sd"])
    assert table.loc[("Y", "B"), "ece_mean"] == pytest.approx(0.05)


def test_table16_practice_counts(store):
    table = obj.table16(store).set_index("objective")
    assert table.loc["A"].to_dict() == {
        "n_valid": 3,
        "averaged_ranks": 1,
        "imbalance_without_recalibration": 1,
        "explicit_calibration": 1,
        "n_unannotated": 0,
    }
    assert table.loc["B", "imbalance_without_recalibration"] == 1
    assert table.loc["C", "explicit_calibration"] == 2


def test_figure4_data_and_baseline(store):
    points = obj.figure4_data(store)
    assert len(points) == 3 + 2 + 2
    groups = points.set_index("run_id")["group"]
    assert groups["main/X/clf_a/rep0"] == "averaged_ranks"
    assert groups["main/X/clf_a/rep1"] == "imbalance_without_recalibration"
    base = obj.objective_baseline(store).iloc[0]
    assert base["n_valid"] == 5
    assert base["auroc"] == pytest.approx(0.68)
    assert base["ece"] == pytest.approx(0.008)


def test_the_objectives_task_is_the_one_of_the_agents_runs():
    runs = _runs() + [
        sb.run("baseline", "clf_b", 0, experiment="objectives", objective="brier", reference=True)
    ]
    assert set(obj.table4(sb.build_store(runs))["task"]) == {"clf_a"}
    only_baseline = [r for r in runs if r["experiment"] == "main"] + runs[-1:]
    with pytest.raises(ScoreStoreError, match="'objectives' has no agent runs") as info:
        obj.table4(sb.build_store(only_baseline))
    assert info.value.code == "store.ambiguous_task"


def test_missing_or_ambiguous_objectives_experiment():
    with pytest.raises(ScoreStoreError) as info:
        obj.table4(sb.build_store([sb.run("X", "clf_a", 0)]))
    assert info.value.code == "store.no_experiment"
    runs = _runs() + [sb.run("X", "clf_b", 9, experiment="objectives", objective="brier")]
    with pytest.raises(ScoreStoreError) as info:
        obj.table4(sb.build_store(runs))
    assert info.value.code == "store.ambiguous_task"
    assert obj.table4(sb.build_store(runs), task="clf_a")["n_runs"].sum() == 4 + 2 + 3
    with pytest.raises(
        ScoreStoreError, match="has no runs with task 'seq_a'; its tasks: clf_a, clf_b"
    ):
        obj.table4(sb.build_store(runs), task="seq_a")


def test_experiment_names_are_parameters():
    renamed = [
        dict(r, experiment={"main": "m2", "objectives": "obj2"}[r["experiment"]]) for r in _runs()
    ]
    table = obj.table4(sb.build_store(renamed), main_experiment="m2", objectives_experiment="obj2")
    assert table.equals(obj.table4(sb.build_store(_runs())))


def test_table4_intervals_redraw_runs_within_agent_and_objective(store):
    table = obj.table4(store).set_index("objective")
    assert set(table["task"]) == {"clf_a"}
    c = table.loc["C"]
    # C: X's one valid run (0.004) and Y's one (0.006): each cell has one valid run, so a valid
    # slot always takes its cell's value; the drawn validity only moves the mean between them.
    assert 0.004 - 1e-12 <= c["ece_mean_ci_low"] <= c["ece_mean_ci_high"] <= 0.006 + 1e-12
    for objective, row in table.iterrows():
        for metric in obj.METRICS:
            low, high = row[f"{metric}_mean_ci_low"], row[f"{metric}_mean_ci_high"]
            assert 0.0 <= low <= row[f"{metric}_mean"] <= high <= 1.0, (objective, metric)
    # A: X's runs 0.30 and 0.10 vary, so A's interval is wider than a plain redraw of the runs
    # would make it (two runs carry one degree of freedom: the draws spread like t with 1 df).
    a = table.loc["A"]
    assert a["ece_mean_ci_low"] < 0.06 and a["ece_mean_ci_high"] > 0.30


def test_table15_intervals_per_agent_and_objective(store):
    table = obj.table15(store).set_index(["agent", "objective"])
    # X under A: runs 0.30 and 0.10; a plain redraw gives means 0.1 / 0.2 / 0.3, the resampler's
    # draws (residuals widened for two runs, t with one degree of freedom) reach further, within
    # the ECE's range [0, 1].
    xa = table.loc[("X", "A")]
    assert 0.0 <= xa["ece_mean_ci_low"] < 0.10 and 0.30 < xa["ece_mean_ci_high"] <= 1.0
    # Y under A: one valid run; a draw of the invalid run twice has no mean and is skipped.
    ya = table.loc[("Y", "A")]
    assert (ya["auroc_mean_ci_low"], ya["auroc_mean_ci_high"]) == pytest.approx((0.68, 0.68))


def test_objective_intervals_are_seeded(store):
    first = obj.table4(store, seed=3, n_boot=50)
    assert first.equals(obj.table4(store, seed=3, n_boot=50))
    assert not first.equals(obj.table4(store, seed=4, n_boot=50))
    with pytest.raises(ValueError, match="alpha"):
        obj.table4(store, alpha=1.5)
