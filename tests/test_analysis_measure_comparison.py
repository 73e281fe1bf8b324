"""automd_analysis.analysis.measure_comparison: every calibration-measure table from a store,
equal to the table functions on the same inputs; stores without the tables still work."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pandas.testing as pdt
import storebuilder as sb

from automd_analysis.analysis import calibration_measures as cm
from automd_analysis.analysis import catalog
from automd_analysis.analysis.measure_comparison import compare_calibration_measures
from automd_analysis.analysis.store import ScoreStore, selected_runs
from automd_analysis.schema import CALIBRATION_MEASURE_COLUMNS, RUN_KEY

NAN = math.nan
AGENTS = ("aide", "codex", "scientist", "baseline")
TASKS = ("clf_a", "clf_b", "surv_a")


def _runs():
    out = []
    for agent in AGENTS:
        for task in TASKS:
            for rep in range(2):
                out.append(sb.run(agent, task, rep, valid=not (agent == "codex" and rep == 1)))
    return out


def _measures(frames, rng):
    rows = []
    key_cols = list(RUN_KEY)
    for record in frames["scores"].to_dict("records"):
        binary = record["task_kind"] != "survival"
        row = {c: record[c] for c in key_cols} | {c: NAN for c in CALIBRATION_MEASURE_COLUMNS}
        row.update(
            task_kind=record["task_kind"],
            ece_10=rng.uniform(0.01, 0.2),
            ece_15=rng.uniform(0.01, 0.2),
            ici=rng.uniform(0.01, 0.2),
            cal_slope=rng.uniform(0.5, 1.5),
            measure_warnings="",
            cal_se_method="",
        )
        if binary:
            row.update(
                ece_equal_mass_10=rng.uniform(0.01, 0.2),
                cal_intercept=rng.uniform(-1, 1),
                prevalence=0.3 if record["task"] == "clf_a" else 0.2,
            )
            for t in (0.1, 0.2):
                row[cm.net_benefit_column(t)] = rng.uniform(0, 0.2)
        else:
            row["dcal_divergence"] = rng.uniform(0, 0.1)
        rows.append(row)
    return pd.DataFrame(rows)


def _curves(frames):
    rows = []
    for record in frames["scores"].to_dict("records"):
        for x in (0.2, 0.5, 0.8):
            rows.append(
                {c: record[c] for c in RUN_KEY}
                | {
                    "kind": "survival" if record["task_kind"] == "survival" else "binary",
                    "horizon": NAN,
                    "x": x,
                    "observed": x + 0.01 * record["rep"],
                    "se": 0.02,
                    "lo": x - 0.05,
                    "hi": x + 0.05,
                }
            )
    return pd.DataFrame(rows)


def _store(seed=0, with_tables=True):
    frames = sb.frames(_runs())
    if with_tables:
        rng = np.random.default_rng(seed)
        frames["calibration_measures"] = _measures(frames, rng)
        frames["calibration_curves"] = _curves(frames)
    return ScoreStore.from_frames(**frames)


def test_tables_equal_the_table_functions():
    store = _store()
    result = compare_calibration_measures(store)
    runs = selected_runs(store)
    measures = store.calibration_measures
    assert result.available
    pdt.assert_frame_equal(result.by_measure, cm.agent_measure_table(measures, runs))
    draws = cm.agent_value_draws(measures, runs)  # a flip needs intervals that separate it
    flips = cm.rank_flips(result.by_measure, reference_measure="ece_10", draws=draws)
    pdt.assert_frame_equal(result.flips, flips)
    every = cm.rank_flips(result.by_measure, reference_measure="ece_10")
    assert len(flips) < len(every)  # this store has reversals its runs cannot separate
    pdt.assert_frame_equal(result.agreement, cm.ranking_agreement(result.by_measure, draws=draws))
    pdt.assert_frame_equal(result.slope_intercept, cm.slope_intercept_table(measures, runs))
    pdt.assert_frame_equal(result.decision_curves, cm.decision_curves(measures, runs))
    levels = result.correlations["level"].tolist()
    assert levels == sorted(levels)  # agent rows, then task rows
    pdt.assert_frame_equal(
        result.correlations.loc[result.correlations["level"] == "task"].reset_index(drop=True),
        cm.measure_correlations(measures, runs, level="task"),
    )
    # every non-baseline agent is ranked under the paper's ECE
    ece = result.by_measure.loc[result.by_measure["measure"] == "ece_10"].set_index("agent")
    assert ece["rank"].drop("baseline").notna().all() and math.isnan(ece.loc["baseline", "rank"])


def test_smoothed_curves_from_the_stored_rows_which_carry_the_run_key():
    """The stored curve rows repeat agent/task; pooling must not trip over the duplicate names."""
    store = _store()
    result = compare_calibration_measures(store)
    curves = result.curves
    assert curves.columns.tolist() == catalog.table("smoothed_calibration_curves").named
    # codex: rep 1 invalid on every task, so one run per point; others: two runs
    codex = curves.loc[(curves.agent == "codex") & (curves.task == "clf_a")]
    assert codex["n_runs"].tolist() == [1, 1, 1]
    assert codex["observed_mean"].tolist() == [0.2, 0.5, 0.8]
    aide = curves.loc[(curves.agent == "aide") & (curves.task == "clf_a")]
    np.testing.assert_allclose(aide["observed_mean"], [0.205, 0.505, 0.805])  # reps 0, 1
    # the analysis function itself, called with the stored rows as they are
    direct = cm.smoothed_curves(store.calibration_curves, selected_runs(store))
    pdt.assert_frame_equal(direct, curves)


def test_only_the_experiment_runs_are_used():
    frames = sb.frames(_runs() + [sb.run("aide", "clf_a", 0, experiment="llm")])
    rng = np.random.default_rng(1)
    frames["calibration_measures"] = _measures(frames, rng)
    frames["calibration_curves"] = _curves(frames)
    store = ScoreStore.from_frames(**frames)
    result = compare_calibration_measures(store)
    aide = result.by_measure.loc[
        (result.by_measure.agent == "aide") & (result.by_measure.measure == "ece_10")
    ]
    assert int(aide["n_runs"].iloc[0]) == 6  # two per task, the llm run left out


def test_store_without_measure_tables_gives_empty_tables():
    result = compare_calibration_measures(_store(with_tables=False))
    assert not result.available
    assert result.agreement.empty and result.flips.empty and result.curves.empty
    assert result.agreement.columns.tolist() == catalog.table("calibration_ranking_agreement").named
    assert result.decision_curves.empty
    assert result.by_measure["rank"].isna().all()


def test_a_single_agent_is_ranked_alone():
    frames = sb.frames([sb.run(a, "clf_a", r) for a in ("aide", "baseline") for r in range(2)])
    frames["calibration_measures"] = _measures(frames, np.random.default_rng(2))
    store = ScoreStore.from_frames(**frames)
    result = compare_calibration_measures(store)
    assert result.agreement["n_agents"].max() == 1
    assert result.flips.empty
