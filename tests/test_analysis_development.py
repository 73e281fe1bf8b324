"""Development trajectories, selection, version pairs (paper App. H): hand-computed values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from storebuilder import loose_store

from automd_analysis.analysis.development import (
    development_summary,
    figure3_shares,
    figure5_curves,
    run_curve,
    sample_pairs,
    table18,
    table19,
    version_pairs,
)
from automd_analysis.errors import ScoreStoreError
from automd_analysis.version_pairs import form_version_pairs

# ------------------------------------------------------------------------ hand-built store frames


def _key(agent: str, task: str, rep: int, experiment: str = "main") -> dict:
    return {
        "run_id": f"{experiment}/{agent}/{task}/rep{rep}",
        "experiment": experiment,
        "agent": agent,
        "llm": "llm-x",
        "task": task,
        "rep": rep,
        "reference": agent == "baseline",
    }


def _version(key, version, t, valid, raw, step=None, parent=None, metric="auroc", m0=0.5):
    score = min(max((raw - m0) / (1 - m0), 0.0), 1.0) if valid else np.nan
    return {
        **key,
        "version": version,
        "is_selected": version == "selected",
        "step": step,
        "parent": parent,
        "elapsed_min": t,
        "valid": valid,
        "raw": raw if valid else np.nan,
        "score": score,
        "metric": metric,
        "null_score": m0,
        "task_kind": "classification" if metric == "auroc" else "survival",
    }


def _run(key, search="linear", minutes=100.0, budget=720.0, reported=np.nan, tokens=1e6):
    return {
        **key,
        "search": search,
        "run_minutes": minutes,
        "budget_minutes": budget,
        "ended_before_budget": minutes < budget,
        "reported_val_score": reported,
        "tokens_total": tokens,
        "metric": "auroc",
    }


@pytest.fixture
def store():
    """Two agents; hand-chosen versions (times in minutes, raw AUROC)."""
    rows, runs = [], []
    # A rep0: versions at 10 (invalid), 20 (0.70), 40 (0.80), 60 (0.75); selected = v3 (0.80)
    k = _key("A", "t1", 0)
    rows += [
        _version(k, "v1", 10, False, np.nan, 1),
        _version(k, "v2", 20, True, 0.70, 2),
        _version(k, "v3", 40, True, 0.80, 3),
        _version(k, "v4", 60, True, 0.75, 4),
        _version(k, "selected", np.nan, True, 0.80),
    ]
    runs.append(_run(k, minutes=60.0, reported=0.85))
    # A rep1: selected (0.70) is not the best version (0.90); first valid at 5
    k = _key("A", "t1", 1)
    rows += [
        _version(k, "v1", 5, True, 0.90, 1),
        _version(k, "v2", 30, True, 0.70, 2),
        _version(k, "selected", np.nan, True, 0.70),
    ]
    runs.append(_run(k, minutes=720.0, reported=0.72))
    # B rep0: invalid selected; one valid version at 50
    k = _key("B", "t1", 0)
    rows += [
        _version(k, "v1", 50, True, 0.60, 1),
        _version(k, "selected", np.nan, False, np.nan),
    ]
    runs.append(_run(k, search="tree", minutes=720.0, reported=0.9))
    # B rep1: survival task (C^td), selected valid and the only version
    k = _key("B", "t2", 1)
    rows += [
        _version(k, "v1", 15, True, 0.65, 1, metric="ctd_adj_antolini"),
        _version(k, "selected", np.nan, True, 0.65, metric="ctd_adj_antolini"),
    ]
    runs.append(_run(k, search="tree", minutes=300.0, reported=0.70))
    # baseline run: excluded by default
    k = _key("baseline", "t1", 0)
    rows += [_version(k, "v1", 1, True, 0.99, 1), _version(k, "selected", np.nan, True, 0.99)]
    runs.append(_run(k, search="none", minutes=1.0))
    return pd.DataFrame(rows), pd.DataFrame(runs)


# --------------------------------------------------------------------------------------- Table 18


def test_development_summary_hand_values(store):
    scores, runs = store
    d = development_summary(loose_store(scores, runs)).set_index("run_id")
    assert list(d.index) == [
        "main/A/t1/rep0",
        "main/A/t1/rep1",
        "main/B/t1/rep0",
        "main/B/t2/rep1",
    ]
    assert d["n_versions"].tolist() == [4, 2, 1, 1]
    assert d["time_to_first_valid_min"].tolist() == [20, 5, 50, 15]
    assert d.loc["main/A/t1/rep0", "selected_is_best"]  # 0.80 == best version 0.80 (tie -> best)
    assert not d.loc["main/A/t1/rep1", "selected_is_best"]  # 0.70 < 0.90
    assert pd.isna(d.loc["main/B/t1/rep0", "selected_is_best"])  # invalid selected
    assert d.loc["main/B/t2/rep1", "selected_is_best"]
    assert d.loc["main/A/t1/rep0", "val_minus_test"] == pytest.approx(0.85 - 0.80)
    assert d.loc["main/A/t1/rep1", "val_minus_test"] == pytest.approx(0.72 - 0.70)
    assert np.isnan(d.loc["main/B/t1/rep0", "val_minus_test"])  # invalid
    assert d.loc["main/B/t2/rep1", "val_minus_test"] == pytest.approx(0.05)  # C^td counts


def test_val_minus_test_only_on_auroc_and_ctd(store):
    scores, runs = store
    scores = scores.copy()
    scores.loc[scores["task"] == "t2", "metric"] = "min_se_ppv"
    d = development_summary(loose_store(scores, runs)).set_index("run_id")
    assert np.isnan(d.loc["main/B/t2/rep1", "val_minus_test"])


def test_table18_hand_values(store):
    scores, runs = store
    t = table18(loose_store(scores, runs)).set_index("agent")
    assert list(t.index) == ["A", "B"]
    assert t.loc["A", "versions_per_run"] == 3.0
    assert t.loc["B", "versions_per_run"] == 1.0
    assert t.loc["A", "time_to_first_valid_min"] == pytest.approx(12.5)
    assert t.loc["B", "time_to_first_valid_min"] == pytest.approx(32.5)
    assert t.loc["A", "run_time_min"] == pytest.approx(390.0)
    assert t.loc["A", "ended_before_budget_pct"] == pytest.approx(50.0)
    assert t.loc["B", "ended_before_budget_pct"] == pytest.approx(50.0)
    assert t.loc["A", "selected_is_best_pct"] == pytest.approx(50.0)
    assert t.loc["B", "selected_is_best_pct"] == pytest.approx(100.0)
    assert t.loc["B", "n_runs_selection"] == 1
    assert t.loc["A", "val_minus_test"] == pytest.approx((0.05 + 0.02) / 2)
    assert t.loc["B", "val_minus_test"] == pytest.approx(0.05)
    with_baseline = table18(loose_store(scores, runs), include_reference=True)
    assert "baseline" in set(with_baseline["agent"])


def test_missing_columns_are_structured_errors(store):
    scores, runs = store
    with pytest.raises(ScoreStoreError) as err:
        table18(loose_store(scores.drop(columns="elapsed_min"), runs))
    assert "elapsed_min" in err.value.message and err.value.code == "store.columns"
    with pytest.raises(ScoreStoreError):
        table18(loose_store(scores, runs.drop(columns="run_minutes")))


# --------------------------------------------------------------------------------------- Figure 5


def test_run_curve_hand_values():
    grid = [0, 5, 10, 15, 20, 30, 100]
    curve = run_curve([10, 20, 30], [0.2, 0.5, 0.4], [True, False, True], grid)
    # zero before the first valid version; invalid version ignored; carried forward after the end
    assert curve.tolist() == [0, 0, 0.2, 0.2, 0.2, 0.4, 0.4]
    # same time: the later one in (chronological) input order wins
    assert run_curve([10, 10], [0.1, 0.3], [True, True], [10]).tolist() == [0.3]
    assert run_curve([], [], [], [0, 1]).tolist() == [0, 0]
    assert run_curve([np.nan, 5], [0.9, 0.1], [True, True], [6]).tolist() == [0.1]


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 100), st.floats(0, 1), st.booleans()), min_size=0, max_size=12),
    st.lists(st.floats(-10, 200), min_size=1, max_size=20),
)
def test_run_curve_properties(versions, grid):
    t = [v[0] for v in versions]
    s = [v[1] for v in versions]
    ok = [v[2] for v in versions]
    curve = run_curve(t, s, ok, grid)
    valid = [(ti, si) for ti, si, oi in versions if oi]
    for g, c in zip(grid, curve, strict=True):
        before = [(ti, si) for ti, si in valid if ti <= g]
        if not before:
            assert c == 0
        else:
            latest = max(ti for ti, _ in before)
            assert c in [si for ti, si in before if ti == latest]


def test_figure5_curves_mean_over_runs(store):
    scores, runs = store
    f = figure5_curves(loose_store(scores, runs), grid=[0, 10, 20, 40, 60, 1000])
    a = f[f["agent"] == "A"].set_index("time_min")["mean_score"]
    # rep0 scores: 0.4 @20, 0.6 @40, 0.5 @60; rep1: 0.8 @5, 0.4 @30
    expected = {0: 0.0, 10: 0.4, 20: 0.6, 40: 0.5, 60: 0.45, 1000: 0.45}
    for t, v in expected.items():
        assert a[t] == pytest.approx(v)
    assert (f["n_runs"] == 2).all()
    b = f[f["agent"] == "B"].set_index("time_min")["mean_score"]
    # B rep0's version is valid (its selected file is not): the curve uses versions
    assert b[1000] == pytest.approx((0.2 + 0.3) / 2)


def test_figure5_default_grid_reaches_the_budget(store):
    scores, runs = store
    f = figure5_curves(loose_store(scores, runs), step_min=60)
    assert f["time_min"].max() == 720
    assert sorted(set(f["time_min"])) == list(range(0, 721, 60))


# ---------------------------------------------------------------------------------- version pairs


def _versions(rows):
    return pd.DataFrame(rows, columns=["version", "elapsed_min", "step", "parent", "valid", "node"])


def test_tree_pairs_nearest_valid_ancestor():
    v = _versions(
        [
            ("v1", 1, 1, None, True, None),
            ("v2", 2, 2, "v1", False, None),  # invalid: skipped as partner, but links through
            ("v3", 3, 3, "v2", True, None),  # -> v1 (nearest ancestor with a valid file)
            ("v4", 4, 4, "v1", True, None),  # -> v1
            ("v5", 5, 5, "v4", True, None),  # -> v4
            ("v6", 6, 6, "ghost", True, None),  # unknown parent: no pair
            ("v7", 7, 7, "v8", True, None),  # parent saved later only (cycle v7 <-> v8): none
            ("v8", 8, 8, "v7", True, None),  # -> v7
        ]
    )
    pairs = form_version_pairs(v.sample(frac=1, random_state=0), "tree")
    assert list(zip(pairs["earlier"], pairs["later"], strict=True)) == [
        ("v1", "v3"),
        ("v1", "v4"),
        ("v4", "v5"),
        ("v7", "v8"),
    ]


def test_tree_pairs_latest_earlier_version_of_a_node():
    v = _versions(
        [
            ("a1", 1, 1, None, True, "A"),
            ("b1", 2, 2, "A", True, "B"),  # -> a1 (a2 is later)
            ("a2", 3, 3, None, True, "A"),  # root node: no pair
            ("d1", 4, 4, "A", True, "D"),  # -> a2, the latest earlier version of node A
            ("c1", 5, 5, "b1", True, "C"),  # parent given as a version id -> node B -> b1
            ("e1", 6, 6, "A", False, "E"),  # invalid: not paired
        ]
    )
    pairs = form_version_pairs(v, "tree")
    assert list(zip(pairs["earlier"], pairs["later"], strict=True)) == [
        ("a1", "b1"),
        ("a2", "d1"),
        ("b1", "c1"),
    ]
    everything = form_version_pairs(v, "tree", valid_only=False)
    assert ("a2", "e1") in set(zip(everything["earlier"], everything["later"], strict=True))


def test_linear_pairs_consecutive_valid_versions():
    v = _versions(
        [
            ("v3", 30, 3, None, True, None),
            ("v1", 10, 1, None, True, None),
            ("v2", 20, 2, None, False, None),
            ("v4", 30, 4, None, True, None),  # same time as v3: step breaks the tie
            ("vx", np.nan, 5, None, True, None),  # no time: not placed
        ]
    )
    pairs = form_version_pairs(v, "linear")
    assert list(zip(pairs["earlier"], pairs["later"], strict=True)) == [
        ("v1", "v3"),
        ("v3", "v4"),
    ]
    assert form_version_pairs(v, "none").empty


def test_version_pairs_skip_invalid_runs_and_compute_changes(store):
    scores, runs = store
    p = version_pairs(loose_store(scores, runs))
    assert set(p["run_id"]) == {"main/A/t1/rep0", "main/A/t1/rep1"}  # B rep0 invalid, B rep1: 1 v
    a0 = p[p["run_id"] == "main/A/t1/rep0"]
    assert list(zip(a0["earlier"], a0["later"], strict=True)) == [("v2", "v3"), ("v3", "v4")]
    assert a0["score_change"].tolist() == pytest.approx([0.2, -0.1])
    assert (a0["n_pairs"] == 2).all()


def _fake_pairs(counts: dict[str, int]) -> pd.DataFrame:
    rows = []
    for run_id, n in counts.items():
        for i in range(n):
            rows.append({"run_id": run_id, "agent": run_id.split("/")[1], "pair_index": i,
                         "earlier": f"v{i}", "later": f"v{i + 1}", "score_change": 0.0})  # fmt: skip
    return pd.DataFrame(rows)


def test_sampling_small_runs_keep_all_in_order():
    s = sample_pairs(_fake_pairs({"main/A/t/rep0": 2, "main/A/t/rep1": 3}), seed=1)
    r0 = s[s["run_id"] == "main/A/t/rep0"]
    assert r0["stage"].tolist() == ["early", "middle"]
    assert r0["pair_index"].tolist() == [0, 1]
    r1 = s[s["run_id"] == "main/A/t/rep1"]
    assert r1["stage"].tolist() == ["early", "middle", "late"]
    assert r1["pair_index"].tolist() == [0, 1, 2]


def _groups(n):
    q, r = divmod(n, 3)
    sizes = [q + 1] * r + [q] * (3 - r)
    starts = np.cumsum([0, *sizes[:-1]])
    return [range(a, a + b) for a, b in zip(starts, sizes, strict=True)]


@settings(max_examples=40, deadline=None)
@given(st.integers(4, 80), st.integers(0, 2**31 - 1))
def test_sampling_one_pair_per_count_group(n, seed):
    s = sample_pairs(_fake_pairs({"main/A/t/rep0": n}), seed=seed)
    assert s["stage"].tolist() == ["early", "middle", "late"]
    for idx, group, size in zip(s["pair_index"], _groups(n), s["group_size"], strict=True):
        assert idx in group and size == len(group)


def test_sampling_is_seeded_and_independent_of_other_runs():
    pairs = _fake_pairs({f"main/A/t/rep{i}": 9 for i in range(30)})
    a = sample_pairs(pairs, seed=5)
    b = sample_pairs(pairs.sample(frac=1, random_state=1), seed=5)
    pd.testing.assert_frame_equal(a, b)
    c = sample_pairs(pairs, seed=6)
    assert not a["pair_index"].equals(c["pair_index"])
    alone = sample_pairs(pairs[pairs["run_id"] == "main/A/t/rep7"], seed=5)
    assert alone["pair_index"].tolist() == a[a["run_id"] == "main/A/t/rep7"]["pair_index"].tolist()
    # every member of a group is reachable (uniform draw), over many seeds
    seen = {i for seed in range(60) for i in sample_pairs(pairs.iloc[:9], seed)["pair_index"]}
    assert seen == set(range(9))


# --------------------------------------------------------------------------- Figure 3 and Table 19


@pytest.fixture
def sampled_and_annotations():
    sampled = pd.DataFrame(
        [
            # agent A: two early pairs, one middle
            ("r1", "A", "early", "v1", "v2", 0.10),
            ("r2", "A", "early", "v1", "v3", -0.05),
            ("r1", "A", "middle", "v2", "v4", 0.00),
            # agent B: one early pair (annotated), one early pair without annotation
            ("r3", "B", "early", "v1", "v2", 0.20),
            ("r4", "B", "early", "v1", "v2", 0.30),
        ],
        columns=["run_id", "agent", "stage", "earlier", "later", "score_change"],
    )
    ann = pd.DataFrame(
        [
            ("r1", "v1", "v2", "ensembling", True),
            ("r1", "v1", "v2", "hyperparameter_tuning", True),
            ("r2", "v1", "v3", "ensembling", False),  # does not affect predictions
            ("r2", "v1", "v3", "feature_engineering", False),
            ("r1", "v2", "v4", "none", True),
            ("r3", "v1", "v2", "ensembling", True),
            ("r3", "v1", "v2", "ensembling", True),  # duplicate row counts once
            ("r9", "v1", "v2", "calibration", True),  # not sampled
        ],
        columns=["run_id", "earlier", "later", "change", "affects_predictions"],
    )
    return sampled, ann


def _pairs_store(annotations: pd.DataFrame):
    """A store whose ``pairs.parquet`` holds ``annotations`` (runs r1.. of agents A, B)."""
    scores = pd.DataFrame(
        [
            {
                **_key("A", "t", i),
                "run_id": f"r{i}",
                "version": "selected",
                "is_selected": True,
                "valid": True,
                "score": 0.5,
            }  # fmt: skip
            for i in range(1, 10)
        ]
    )
    return loose_store(scores, pairs=annotations)


def test_figure3_shares_hand_values(sampled_and_annotations):
    sampled, ann = sampled_and_annotations
    f = figure3_shares(_pairs_store(ann), sampled).set_index(["agent", "stage", "change"])
    assert f.loc[("A", "early", "ensembling"), "n_pairs"] == 2
    assert f.loc[("A", "early", "ensembling"), "share"] == pytest.approx(0.5)
    assert f.loc[("A", "early", "hyperparameter_tuning"), "share"] == pytest.approx(0.5)
    assert f.loc[("A", "early", "feature_engineering"), "share"] == 0.0
    assert f.loc[("A", "middle", "ensembling"), "share"] == 0.0
    assert f.loc[("B", "early", "ensembling"), "share"] == pytest.approx(1.0)
    assert f.loc[("B", "early", "ensembling"), "n_pairs"] == 1
    assert f.loc[("B", "early", "ensembling"), "n_unannotated"] == 1
    assert ("B", "middle", "ensembling") not in f.index
    assert f.loc[("A", "early", "calibration"), "n_with_change"] == 0


def test_table19_hand_values(sampled_and_annotations):
    sampled, ann = sampled_and_annotations
    t = table19(_pairs_store(ann), sampled).set_index("change")
    assert t.loc["ensembling", "n"] == 2  # r1 (+0.10) and r3 (+0.20); r2 does not count
    assert t.loc["ensembling", "mean"] == pytest.approx(0.15)
    assert t.loc["ensembling", "sd"] == pytest.approx(np.std([0.1, 0.2], ddof=1))
    assert t.loc["ensembling", "share_positive"] == 1.0
    assert t.loc["hyperparameter_tuning", "n"] == 1
    assert np.isnan(t.loc["hyperparameter_tuning", "sd"])
    assert t.loc["feature_engineering", "n"] == 0
    assert np.isnan(t.loc["feature_engineering", "mean"])


def test_tree_pairs_walk_through_nodes_without_files_via_steps():
    # n2 saved no prediction file (failed step); only the steps know its parent n1
    v = _versions(
        [
            ("n1", 1, 1, None, True, None),
            ("n3", 3, 3, "n2", True, None),
            ("v4", 4, 4, "n3", True, None),
        ]
    ).drop(columns="node")
    steps = pd.DataFrame(
        {
            "step": [1, 2, 3, 4],
            "version": ["n1", None, "n3", "v4"],
            "node": ["n1", "n2", "n3", "node4"],
            "parent": [None, "n1", "n2", "n3"],
        }
    )
    without = form_version_pairs(v, "tree")
    assert list(zip(without["earlier"], without["later"], strict=True)) == [("n3", "v4")]
    with_steps = form_version_pairs(v, "tree", steps=steps)
    assert list(zip(with_steps["earlier"], with_steps["later"], strict=True)) == [
        ("n1", "n3"),
        ("n3", "v4"),
    ]
    # steps without node/parent columns are ignored
    same = form_version_pairs(v, "tree", steps=steps[["step", "version"]])
    assert same.equals(without)
