"""FML-bench process metrics (FML-bench App. E) on hand-built runs: hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from storebuilder import loose_store

from automd_analysis.analysis.embeddings import BACKEND_HASHING
from automd_analysis.analysis.process import (
    LATE_GAIN_MIN_TOTAL,
    PROCESS_METRICS,
    TrajectoryScale,
    agent_means,
    auc_over_steps,
    best_improvement_step,
    best_so_far,
    effective_dimension,
    exploration_reach,
    exploration_spread,
    exploration_uniqueness,
    first_improvement_step,
    improvement_over_baseline,
    late_gain_fraction,
    normalised_improvement,
    opportunity_density,
    opportunity_partition,
    pairwise_win_rate,
    process_metrics,
    process_summary,
    spearman_table,
    val_test_gap,
    valid_step_ratio,
)
from automd_analysis.errors import ScoreStoreError

nan = float("nan")

# ------------------------------------------------------------------------------ trajectory metrics


def test_trajectory_metrics_hand_values():
    # reported validation AUROC per step (NaN: failed step), m0 = 0.5
    reported = [nan, 0.6, 0.55, 0.8, 0.8]
    imp = normalised_improvement(reported, 0.5)
    np.testing.assert_allclose(imp, [nan, 0.2, 0.1, 0.6, 0.6])
    np.testing.assert_allclose(best_so_far(imp), [0, 0.2, 0.2, 0.6, 0.6])
    assert auc_over_steps(imp) == pytest.approx(1.6 / 5)
    assert first_improvement_step(imp) == 2
    assert best_improvement_step(reported) == 4  # exact tie with step 5 -> the first
    assert late_gain_fraction(imp) == pytest.approx((0.6 - 0.2) / 0.6)  # T=5: P(floor(5/2)) = P(2)


def test_no_improvement_gives_nan_first_step_and_late_gain():
    imp = normalised_improvement([0.4, 0.5, nan], 0.5)
    assert math.isnan(first_improvement_step(imp))
    assert math.isnan(late_gain_fraction(imp))
    assert auc_over_steps(imp) == 0.0
    assert best_improvement_step([0.4, 0.5, nan]) == 2  # best exists even without improvement


def test_single_step_and_even_late_gain():
    assert late_gain_fraction([0.4]) == 1.0  # T = 1: P(0) = 0, the only step is second half
    assert late_gain_fraction([0.2, 0.6]) == pytest.approx(2 / 3)  # T = 2: P(1) = 0.2
    assert late_gain_fraction([0.3, 0.3, 0.3, 0.9]) == pytest.approx(0.6 / 0.9)  # P(2) = 0.3
    assert late_gain_fraction([0.5, nan, nan]) == 0.0  # all gain in the first half
    assert math.isnan(late_gain_fraction([]))
    assert math.isnan(auc_over_steps([]))
    assert math.isnan(best_improvement_step([nan, nan]))


def test_valid_step_ratio_with_failed_steps():
    assert valid_step_ratio([False, True, False, True, True]) == pytest.approx(0.6)
    assert valid_step_ratio([False, False]) == 0.0
    assert math.isnan(valid_step_ratio([]))


def test_val_test_gap_signed_and_absolute():
    gap, gap_abs = val_test_gap(0.8, 0.5, 0.5)  # p_val = 0.6
    assert gap == pytest.approx(0.1) and gap_abs == pytest.approx(0.1)
    gap, gap_abs = val_test_gap(0.6, 0.5, 0.5)
    assert gap == pytest.approx(-0.3) and gap_abs == pytest.approx(0.3)
    assert all(math.isnan(x) for x in val_test_gap(nan, 0.5, 0.5))


def test_a_loss_improves_downwards_and_takes_the_step_of_its_smallest_value():
    # MAE per step (NaN: failed), baseline 0.8, best 0, worst = the baseline: span 0.8 (App. E)
    mae = [0.9, nan, 0.7, 0.7, 0.6, 0.65]
    p = improvement_over_baseline(mae, baseline=0.8, span=0.8, higher_is_better=False)
    np.testing.assert_allclose(p, [0, nan, 0.125, 0.125, 0.25, 0.1875])
    assert best_improvement_step(mae, higher_is_better=False) == 5
    assert best_improvement_step(mae) == 1  # read as a score, the worst step would be "best"
    assert best_improvement_step([0.3, 0.2, 0.2], higher_is_better=False) == 2  # tie: the first
    assert auc_over_steps(p) == pytest.approx(0.75 / 6)  # P_best = [0, 0, .125, .125, .25, .25]
    assert first_improvement_step(p) == 3
    assert late_gain_fraction(p) == pytest.approx(0.5)  # (P(6) - P(3)) / P(6)


def test_improvement_over_baseline_needs_a_baseline_and_a_span_and_is_not_capped():
    for baseline, span in ((nan, 1.0), (0.4, 0.0), (0.4, nan)):
        assert np.isnan(improvement_over_baseline([0.5], baseline, span, True)).all()
    np.testing.assert_allclose(improvement_over_baseline([0.9, 0.1], 0.5, 0.25, True), [1.6, 0])


def test_neg_log10_scale_reads_p_values_and_refuses_non_positive_ones():
    scale = TrajectoryScale(higher_is_better=False, baseline=10.0, span=10.0, transform="neg_log10")
    np.testing.assert_allclose(scale.values([1e-8, 0.0, -1.0, nan]), [8.0, nan, nan, nan])
    np.testing.assert_allclose(scale.improvement(scale.values([1e-8, 1e-12])), [0.2, 0.0])


def test_a_tiny_total_gain_gives_nan_late_gain_as_fml_bench():
    assert math.isnan(late_gain_fraction([1e-13, 1e-13]))
    assert math.isnan(late_gain_fraction([LATE_GAIN_MIN_TOTAL]))
    assert late_gain_fraction([0.0, 2e-12]) == 1.0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.one_of(st.floats(-5, 5), st.just(nan)), min_size=1, max_size=30),
    st.floats(-5, 5),
    st.floats(0.01, 10),
)
def test_a_mirrored_loss_gives_the_same_trajectory_metrics(values, baseline, span):
    """A metric and its negation read the other way round are the same run: every trajectory
    metric is equal (the direction, not the sign of the numbers, decides)."""
    v = np.asarray(values, dtype=float)
    higher = improvement_over_baseline(v, baseline, span, True)
    lower = improvement_over_baseline(-v, -baseline, span, False)
    np.testing.assert_array_equal(higher, lower)
    best = best_improvement_step(v)
    best_loss = best_improvement_step(-v, higher_is_better=False)
    assert best == best_loss or (math.isnan(best) and math.isnan(best_loss))
    for metric in (auc_over_steps, first_improvement_step, late_gain_fraction):
        a, b = metric(higher), metric(lower)
        assert a == b or (math.isnan(a) and math.isnan(b))
    if not np.isnan(v).all():  # the best step holds the smallest value of the loss
        assert -v[int(best_loss) - 1] == np.nanmin(-v)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(-1, 2), st.just(nan)), min_size=1, max_size=40))
def test_trajectory_invariants(values):
    imp = normalised_improvement(values, 0.5)
    p = best_so_far(imp)
    assert (np.diff(p) >= 0).all() and (p >= 0).all() and (p <= 1).all()
    auc = auc_over_steps(imp)
    assert 0 <= auc <= p[-1] + 1e-12
    first = first_improvement_step(imp)
    if math.isnan(first):
        assert p[-1] == 0
    else:
        assert p[int(first) - 1] > 0 and (p[: int(first) - 1] == 0).all()
    late = late_gain_fraction(imp)
    assert math.isnan(late) or 0 <= late <= 1


# ------------------------------------------------------------------------------ exploration metrics


def test_spread_reach_effective_dim_hand_values():
    assert exploration_spread([[0, 0], [2, 0]]) == pytest.approx(1.0)
    assert exploration_spread([[0, 0], [0, 0], [3, 0]]) == pytest.approx(4 / 3)
    assert exploration_reach([[0, 0], [3, 4], [1, 0]], [0, 0]) == pytest.approx(5.0)
    assert exploration_reach([[1, 1]], [1, 1]) == 0.0
    # isotropic in 2-D: covariance eigenvalues (2/3, 2/3) -> participation ratio 2
    assert effective_dimension([[1, 0], [-1, 0], [0, 1], [0, -1]]) == pytest.approx(2.0)
    assert effective_dimension([[0, 0], [1, 1], [2, 2]]) == pytest.approx(1.0)  # collinear
    assert effective_dimension([[1, 2]]) == 0.0  # n < 2
    assert effective_dimension([[1, 2], [1, 2]]) == 0.0  # no variance
    assert math.isnan(exploration_spread(np.zeros((0, 3))))


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 12), st.integers(1, 40), st.integers(0, 10_000))
def test_effective_dimension_equals_the_covariance_participation_ratio(n, d, seed):
    e = np.random.default_rng(seed).normal(size=(n, d))
    lam = np.linalg.eigvalsh(np.atleast_2d(np.cov(e, rowvar=False)))
    assert effective_dimension(e) == pytest.approx(lam.sum() ** 2 / (lam**2).sum(), rel=1e-9)


def test_uniqueness_near_duplicates_average_linkage_and_zero_vectors():
    # cosine distances: d(a,b) = 0.00496, d(b,c) = 0.00477, d(a,c) = 0.0194. Average linkage
    # merges {b,c} then a at (0.00496 + 0.0194)/2 = 0.0122 < 0.015 -> one cluster (complete
    # linkage would stop at 0.0194 > 0.015 and give two).
    a, b, c = [1, 0], [1, 0.1], [1, 0.2]
    assert exploration_uniqueness([a, b, c]) == pytest.approx(1 / 3)
    assert exploration_uniqueness([a, c]) == pytest.approx(1.0)  # 0.0194 > 0.015: two clusters
    assert exploration_uniqueness([a, b]) == pytest.approx(0.5)
    # zero vectors (empty code) form one extra cluster
    assert exploration_uniqueness([a, b, [0, 0], [0, 0]]) == pytest.approx(2 / 4)
    assert exploration_uniqueness([[0, 0]]) == 1.0
    assert exploration_uniqueness([a]) == 1.0
    assert exploration_uniqueness([a, [0, 1]], threshold=1.5) == 0.5


def test_exploration_input_checks():
    with pytest.raises(ValueError, match="2-D"):
        exploration_spread([1, 2, 3])
    with pytest.raises(ValueError, match="finite"):
        exploration_spread([[nan, 1.0]])
    with pytest.raises(ValueError, match="shape"):
        exploration_reach([[1, 2]], [1, 2, 3])


def test_opportunity_density_hand_values_and_edges():
    # steps with a predecessor: gains (0, 0.4, 0) at distances (5, 4, 0): d_max = 5, P = {2nd}
    assert opportunity_density([0, 0.4, 0], [5, 4, 0]) == pytest.approx(0.4 / (4 / 5))
    assert opportunity_density([0.1, 0.2], [1, 2]) == pytest.approx(0.3 / (3 / 2))
    assert opportunity_density([0, 0], [1, 2]) == 0.0  # no improvement
    assert math.isnan(opportunity_density([], []))
    assert math.isnan(opportunity_density([0.3], [0.0]))  # gain without any code change


# ------------------------------------------------------------------------------ per-run orchestrator


def _key(agent, task, rep):
    return {
        "run_id": f"main/{agent}/{task}/rep{rep}",
        "experiment": "main",
        "agent": agent,
        "llm": "l",
        "task": task,
        "rep": rep,
        "reference": agent == "baseline",
    }


@pytest.fixture
def frames():
    runs, steps, scores = [], [], []

    def add_run(key, search, metric, minutes, tokens, reported):
        runs.append({**key, "search": search, "metric": metric, "run_minutes": minutes,
                     "tokens_total": tokens, "reported_val_score": reported})  # fmt: skip

    def add_step(key, step, ok, val, version):
        steps.append({"run_id": key["run_id"], "step": step, "ok": ok,
                      "reported_val_score": val, "version": version})  # fmt: skip

    def add_version(key, version, t, valid, score, parent=None):
        scores.append({**key, "version": version, "is_selected": version == "selected",
                       "valid": valid, "score": score, "raw": np.nan, "elapsed_min": t,
                       "parent": parent, "step": None})  # fmt: skip

    k = _key("A", "t1", 0)  # linear, AUROC
    add_run(k, "linear", "auroc", 90.0, 2.5e6, 0.8)
    for step, ok, val, version in [
        (1, False, nan, None),
        (2, True, 0.6, "v1"),
        (3, True, 0.55, "v2"),  # its file is invalid
        (4, True, 0.8, "v3"),
        (5, True, 0.8, "v4"),
    ]:
        add_step(k, step, ok, val, version)
    add_version(k, "v1", 10, True, 0.1)
    add_version(k, "v2", 20, False, nan)
    add_version(k, "v3", 30, True, 0.5)
    add_version(k, "v4", 40, True, 0.5)
    add_version(k, "selected", nan, True, 0.5)

    k = _key("B", "t2", 0)  # tree, never beats the null score, invalid selection
    add_run(k, "tree", "ctd_adj_antolini", 600.0, pd.NA, 0.45)
    add_step(k, 1, True, 0.4, "w1")
    add_step(k, 2, True, 0.5, "w2")
    add_version(k, "w1", 5, True, 0.0)
    add_version(k, "w2", 9, True, 0.0, parent="w1")
    add_version(k, "selected", nan, False, nan)

    k = _key("B", "t3", 1)  # one step, utility (m0 = 0)
    add_run(k, "linear", "utility_2019", 30.0, 1e5, nan)
    add_step(k, 1, True, 0.7, "u1")
    add_version(k, "u1", 3, True, 0.6)
    add_version(k, "selected", nan, True, 0.6)

    k = _key("baseline", "t1", 0)
    add_run(k, "none", "auroc", 1.0, 0, nan)
    add_step(k, 1, True, 0.9, "b1")
    add_version(k, "b1", 1, True, 0.7)
    add_version(k, "selected", nan, True, 0.7)
    return pd.DataFrame(runs), pd.DataFrame(steps), pd.DataFrame(scores)


VECTORS = {"c1": [0, 0], "c2": [3, 4], "c3": [3, 0], "c4": [3, 0]}


def _embed(texts):
    return np.array([VECTORS[t] for t in texts], dtype=float), "test-vectors"


def test_process_metrics_hand_values(frames):
    runs, steps, scores = frames
    code = {"main/A/t1/rep0": {"v1": "c1", "v2": "c2", "v3": "c3", "v4": "c4"}}
    m = process_metrics(loose_store(scores, runs, steps=steps, code=code), embed=_embed).set_index(
        "run_id"
    )
    assert list(m.index) == ["main/A/t1/rep0", "main/B/t2/rep0", "main/B/t3/rep1"]
    a = m.loc["main/A/t1/rep0"]
    assert a["n_steps"] == 5
    assert a["auc_over_steps"] == pytest.approx(0.32)
    assert a["first_improvement_step"] == 2
    assert a["best_improvement_step"] == 4
    assert a["late_gain_fraction"] == pytest.approx(2 / 3)
    assert a["valid_step_ratio"] == pytest.approx(3 / 5)  # failed step 1, invalid file at step 3
    assert a["val_test_gap"] == pytest.approx(0.1) and a["val_test_gap_abs"] == pytest.approx(0.1)
    assert a["token_cost_m"] == pytest.approx(2.5) and a["wall_clock_h"] == pytest.approx(1.5)
    assert a["final_score"] == 0.5
    # exploration on e = [0,0],[3,4],[3,0],[3,0] (chronological), base = first version
    assert a["exploration_spread"] == pytest.approx(
        (math.sqrt(6.0625) + math.sqrt(9.5625) + 2.5) / 4
    )
    assert a["exploration_reach"] == pytest.approx(5.0)
    assert a["exploration_uniqueness"] == pytest.approx(3 / 4)  # zero vector + {[3,4]} + {[3,0]x2}
    # covariance [[2.25, 1], [1, 4]]: (tr)^2 / tr(C^2) = 6.25^2 / 23.0625
    assert a["effective_dim"] == pytest.approx(6.25**2 / 23.0625)
    # linear predecessors v1->v2->v3->v4: steps 3,4,5 gain (0, 0.4, 0), distance (5, 4, 0)
    assert a["opportunity_density"] == pytest.approx(0.4 / (4 / 5))
    assert a["embedding_backend"] == "test-vectors" and a["n_versions_embedded"] == 4

    b = m.loc["main/B/t2/rep0"]
    assert math.isnan(b["first_improvement_step"]) and math.isnan(b["late_gain_fraction"])
    assert b["auc_over_steps"] == 0 and b["best_improvement_step"] == 2
    assert b["final_score"] == 0.0 and not b["selected_valid"]  # invalid => 0 (penalised)
    assert math.isnan(b["val_test_gap_abs"]) and math.isnan(b["token_cost_m"])
    assert math.isnan(b["exploration_spread"]) and b["embedding_backend"] == "none"

    c = m.loc["main/B/t3/rep1"]
    assert c["late_gain_fraction"] == 1.0 and c["auc_over_steps"] == pytest.approx(0.7)
    assert c["valid_step_ratio"] == 1.0


def test_process_metrics_with_the_hashing_backend(frames):
    runs, steps, scores = frames
    code = {"main/A/t1/rep0": {"v1": "x = 1", "v2": "x = 2\ny = x", "v3": "", "v4": "x = 1"}}
    m = process_metrics(
        loose_store(scores, runs, steps=steps, code=code), backend="hashing"
    ).set_index("run_id")
    a = m.loc["main/A/t1/rep0"]
    assert a["embedding_backend"] == BACKEND_HASHING
    assert a["exploration_reach"] > 0 and np.isfinite(a["effective_dim"])
    # v1 and v4 are identical code, v3 is empty (zero vector): 2 text clusters + 1 zero cluster
    assert a["exploration_uniqueness"] == pytest.approx(3 / 4)


def test_process_metrics_errors(frames):
    runs, steps, scores = frames
    with pytest.raises(ScoreStoreError) as err:
        process_metrics(loose_store(scores, runs.drop(columns="search"), steps=steps))
    assert "search" in err.value.message
    bad = runs.copy()
    bad.loc[0, "metric"] = "accuracy"
    with pytest.raises(ScoreStoreError) as err:
        process_metrics(loose_store(scores, bad, steps=steps))
    assert err.value.code == "store.metric"


# ---------------------------------------------------------------------------------- cross-run tables


def test_spearman_table_matches_scipy_and_handles_nan_and_constants():
    per_run = pd.DataFrame(
        {
            "agent": "a",
            "task": "t",
            "auc_over_steps": [1, 2, 3, 4, nan],
            "first_improvement_step": [5, 5, 5, 5, 5],  # constant
            "final_score": [1, 3, 2, 4, 9],
        }
    )
    t = spearman_table(per_run, metrics=["auc_over_steps", "first_improvement_step"])
    assert t.columns.tolist() == [
        "dimension", "metric", "rho", "p", "p_holm", "test", "n_tasks", "n_runs",
        "embedding_backend",
    ]  # fmt: skip
    row = t.set_index("metric").loc["auc_over_steps"]
    assert (row["n_tasks"], row["n_runs"]) == (1, 4)
    assert row["rho"] == pytest.approx(0.8)  # 1 - 6*2/(4*15)
    # one task: the exact test over the 24 orderings; |rho| >= 0.8 <=> sum d^2 <= 2 (the identity
    # and 3 adjacent swaps) or >= 18 (their reversals): 8 of 24
    assert row["p"] == pytest.approx(8 / 24)
    assert row["test"] == "within agent x task permutation of Spearman rho"
    assert row["p_holm"] == pytest.approx(8 / 24)  # the constant metric has no p: a family of 1
    const = t.set_index("metric").loc["first_improvement_step"]
    assert math.isnan(const["rho"]) and math.isnan(const["p"]) and math.isnan(const["p_holm"])
    assert (const["n_tasks"], const["n_runs"]) == (0, 0)
    assert t.loc[0, "dimension"] == "Efficiency"
    assert (t["embedding_backend"] == "none").all()  # no embedding column in this per-run table


def test_spearman_table_compares_runs_within_their_task():
    """Two tasks whose runs have the same within-task order but different levels: the pooled
    Spearman of FML-bench would mix the levels in; the table does not."""
    per_run = pd.DataFrame(
        {
            "agent": "a",
            "task": ["easy"] * 4 + ["hard"] * 4,
            "token_cost_m": [1.0, 2.0, 3.0, 4.0, 10.0, 20.0, 30.0, 40.0],
            "final_score": [0.90, 0.80, 0.85, 0.70, 0.30, 0.20, 0.25, 0.10],
        }
    )
    row = spearman_table(per_run, metrics=["token_cost_m"]).iloc[0]
    assert stats.spearmanr(per_run["token_cost_m"], per_run["final_score"]).statistic < -0.8
    assert row["rho"] == pytest.approx(stats.spearmanr([1, 2, 3, 4], [4, 2, 3, 1]).statistic)
    assert (row["n_tasks"], row["n_runs"]) == (2, 8)


def test_process_summary_layout(frames):
    runs, steps, scores = frames
    store = loose_store(scores, runs, steps=steps, code={"main/A/t1/rep0": {"v1": "c1"}})
    m = process_metrics(store, embed=_embed)
    s = process_summary(m, n_boot=200)
    assert s["metric"].tolist() == list(PROCESS_METRICS)
    agent_columns = [f"{a}{x}" for a in "AB" for x in ("", "_ci_low", "_ci_high")]
    assert list(s.columns) == ["metric", "dimension", *agent_columns, "rho", "p", "p_holm",
                               "test", "n_tasks", "n_runs", "embedding_backend"]  # fmt: skip
    auc = s.set_index("metric").loc["auc_over_steps"]
    assert auc["B"] == pytest.approx((0 + 0.7) / 2)
    assert auc["B_ci_low"] <= auc["B"] <= auc["B_ci_high"]
    assert set(s["embedding_backend"]) == {"test-vectors"}
    assert set(spearman_table(m)["embedding_backend"]) == {"test-vectors"}
    assert set(opportunity_partition(m)["embedding_backend"]) == {"test-vectors"}


def test_agent_means_resample_runs_within_each_task():
    per_run = pd.DataFrame(
        {
            "agent": ["a"] * 4 + ["b"] * 2,
            "task": ["t", "t", "u", "u", "t", "u"],
            "wall_clock_h": [1.0, 3.0, 10.0, 10.0, 2.0, 5.0],
        }
    )
    means = agent_means(per_run, ["wall_clock_h"], n_boot=400, seed=1)
    mean, low, high = means["a"]["wall_clock_h"]
    assert mean == pytest.approx(6.0)
    # a's runs vary on t only (1 and 3; both 10 on u): one degree of freedom, so the draws of the
    # mean spread like t with 1 df about 6 (a plain redraw of the runs would stay in [5.5, 6.5])
    assert low < 5.5 and high > 6.5 and low < mean < high
    assert means["b"]["wall_clock_h"] == (3.5, 3.5, 3.5)  # one run per task: nothing to redraw
    again = agent_means(per_run, ["wall_clock_h"], n_boot=400, seed=1)
    assert again == means


def test_opportunity_partition_at_the_median():
    per_run = pd.DataFrame(
        {
            "task": ["t1", "t1", "t2", "t3", "t4"],
            "opportunity_density": [0.5, 0.1, 0.2, 0.6, nan],
        }
    )
    p = opportunity_partition(per_run).set_index("task")
    assert p.loc["t1", "phi_opp"] == pytest.approx(0.3)
    assert p.loc["t1", "median"] == pytest.approx(0.3)
    assert (p["embedding_backend"] == "none").all()
    assert p["partition"].to_dict() == {
        "t1": "sparse",
        "t2": "sparse",
        "t3": "dense",
        "t4": "undefined",
    }


def test_pairwise_win_rate_hand_values():
    rows = []
    for agent, task, rep, valid, raw in [
        ("A", "t1", 0, True, 0.8),
        ("A", "t1", 1, True, 0.6),
        ("B", "t1", 0, False, nan),
        ("B", "t1", 1, True, 0.6),
        ("C", "t1", 0, True, 0.7),
        ("A", "t2", 0, True, 0.5),
        ("B", "t2", 0, True, 0.9),
        ("baseline", "t1", 0, True, 0.99),
    ]:
        rows.append({**_key(agent, task, rep), "is_selected": True, "valid": valid, "raw": raw})
    wr = pairwise_win_rate(loose_store(pd.DataFrame(rows))).set_index("agent")
    # t1: A>B 3/4 (ties and invalid-vs-x are not wins), A>C 1/2; t2: A>B 0
    assert wr.loc["A", "win_rate"] == pytest.approx((0.75 + 0.5 + 0) / 3)
    assert wr.loc["B", "win_rate"] == pytest.approx((0 + 0 + 1) / 3)
    assert wr.loc["C", "win_rate"] == pytest.approx((0.5 + 1) / 2)
    assert wr.loc["C", "n_comparisons"] == 2
    assert "baseline" not in wr.index


def test_spearman_table_keeps_its_level_when_an_agent_s_runs_share_an_effect():
    """Agents with a shared effect on both variables: runs of a long-running agent score higher
    because of the agent, not within it. The within-cell test must not read that as association
    (a within-task test rejects such true nulls far above 5 %)."""
    rng = np.random.default_rng(7)
    rejections = 0
    n_studies = 200
    for _ in range(n_studies):
        agents = np.repeat(["a", "b", "c", "d"], 15)
        tasks = np.tile(np.repeat(["t1", "t2", "t3", "t4", "t5"], 3), 4)
        effect = dict(zip("abcd", rng.normal(0, 1.0, 4), strict=True))
        shared = np.array([effect[a] for a in agents])
        per_run = pd.DataFrame(
            {
                "agent": agents,
                "task": tasks,
                "token_cost_m": shared + rng.normal(0, 1, agents.size),
                "final_score": shared + rng.normal(0, 1, agents.size),
            }
        )
        row = spearman_table(per_run, metrics=["token_cost_m"], n_permutations=199).iloc[0]
        rejections += row["p"] < 0.05
    # 5 % nominal; binomial SD at 200 studies 1.5 points: 2 SD above is 8 %
    assert rejections / n_studies <= 0.08
