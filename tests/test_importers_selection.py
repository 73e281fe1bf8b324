"""App. C selection rules (automd_analysis.importers.selection) on hand-built trees + properties."""

from __future__ import annotations

import math
from dataclasses import astuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis.importers.selection import (
    RULE_BEST_NON_FAULTY,
    RULE_FINAL_FILE,
    RULE_FML_BEST_STEP,
    RULE_LATEST_STAGE,
    Candidate,
    StageCandidates,
    best_reported_val_non_faulty,
    earliest_best_val_metric_step,
    final_file,
    latest_stage_best_node,
    rank_by_metric,
)


def C(node_id, order, value=None, maximize=True, *, buggy=False, has_file=True, kind="scalar",
      rankable=True):  # fmt: skip
    return Candidate(node_id, order, value, maximize, kind, buggy, has_file, rankable)


# --- AIDE: best_reported_val_non_faulty ---------------------------------------------------------


def test_aide_best_by_own_direction():
    sel = best_reported_val_non_faulty([C("a", 0, 0.8), C("b", 1, 0.9), C("c", 2, 0.85)])
    assert (sel.rule, sel.node_id, sel.use_final_file) == (RULE_BEST_NON_FAULTY, "b", False)
    low = best_reported_val_non_faulty([C("a", 0, 0.3, False), C("b", 1, 0.2, False)])
    assert low.node_id == "b"  # lower is better: 0.2 beats 0.3


def test_aide_tie_keeps_the_earliest_node_whatever_the_listing_order():
    cands = [C("late", 7, 0.83), C("early", 2, 0.83), C("worse", 1, 0.5)]
    assert best_reported_val_non_faulty(cands).node_id == "early"
    assert best_reported_val_non_faulty(cands[::-1]).node_id == "early"


def test_aide_buggy_and_fileless_nodes_are_not_candidates():
    sel = best_reported_val_non_faulty(
        [C("bug", 0, 0.99, buggy=True), C("nofile", 1, 0.98, has_file=False), C("ok", 2, 0.5)]
    )
    assert sel.node_id == "ok"
    assert "1 buggy" in sel.reasons[0] and "1 non-buggy without a prediction file" in sel.reasons[0]


def test_aide_disagreeing_directions_are_incomparable_and_reported():
    # two nodes maximise, one minimises a value that would win under either reading
    sel = best_reported_val_non_faulty([C("a", 0, 0.7), C("b", 1, 0.8), C("m", 2, 0.01, False)])
    assert sel.node_id == "b"
    assert sel.incomparable == ("m",)
    assert any("incomparable" in r for r in sel.reasons)


def test_aide_direction_groups_of_equal_size_use_the_earliest_node():
    # one maximiser (order 3) vs one minimiser (order 1): the group holding order 1 is ranked
    sel = best_reported_val_non_faulty([C("max", 3, 0.9, True), C("min", 1, 0.4, False)])
    assert (sel.node_id, sel.incomparable) == ("min", ("max",))


def test_aide_all_buggy_falls_back_to_the_final_file():
    sel = best_reported_val_non_faulty([C("a", 0, None, None, buggy=True), C("b", 1, buggy=True)])
    assert (sel.rule, sel.node_id, sel.use_final_file) == (RULE_FINAL_FILE, None, True)


def test_metric_without_direction_or_finite_value_is_not_ranked():
    best, inc, _ = rank_by_metric(
        [C("nan", 0, math.nan), C("nodir", 1, 0.9, None), C("ok", 2, 0.1)]
    )
    assert best.node_id == "ok" and inc == ()


def test_metric_types_are_incomparable():
    best, inc, _ = rank_by_metric(
        [
            C("a", 0, 0.9, kind="names:auc"),
            C("b", 1, 0.95, kind="names:loss"),
            C("c", 2, 0.7, kind="names:auc"),
        ]  # fmt: skip
    )
    assert best.node_id == "a" and inc == ("b",)


# --- AI-Scientist-v2: latest_stage_best_node ----------------------------------------------------


def S(name, order, best, *cands):
    return StageCandidates(name, order, best, tuple(cands))


def test_ais_saved_best_node_wins_when_not_buggy_even_if_not_metric_best():
    stage = S("s2", (2, 1), "x", C("x", 1, 0.6), C("y", 2, 0.9))
    sel = latest_stage_best_node([stage])
    assert (sel.rule, sel.node_id) == (RULE_LATEST_STAGE, "x")


def test_ais_buggy_saved_best_falls_to_metric_rule_in_that_stage():
    stage = S("s2", (2, 1), "bug", C("bug", 3, None, None, buggy=True), C("y", 2, 0.9),
              C("z", 1, 0.7))  # fmt: skip
    assert latest_stage_best_node([stage]).node_id == "y"


def test_ais_plot_only_problem_is_not_a_fault():
    # a node whose only problem is its plots has buggy=False in the candidate (is_buggy only)
    stage = S("s1", (1, 1), "p", C("p", 0, 0.5))
    assert latest_stage_best_node([stage]).node_id == "p"


def test_ais_missing_best_node_uses_metric_rule():
    sel = latest_stage_best_node([S("s1", (1, 1), None, C("a", 0, 0.4), C("b", 1, 0.6))])
    assert sel.node_id == "b" and "no saved best node" in sel.reasons[0]
    sel = latest_stage_best_node([S("s1", (1, 1), "ghost", C("a", 0, 0.4))])
    assert sel.node_id == "a" and "not in the stage" in sel.reasons[0]


def test_ais_latest_stage_first_and_stages_without_file_are_skipped():
    s1 = S("stage_1_a_1_b", (1, 1), "a", C("a", 0, 0.5))
    s2 = S("stage_2_c_1_d", (2, 1), "b", C("b", 1, 0.9, has_file=False), C("c", 2, 0.95))
    sel = latest_stage_best_node([s2, s1])
    # stage 2's saved best b has no file: the stage is skipped (c is not tried), stage 1 gives a
    assert sel.node_id == "a"
    assert any("stage skipped" in r for r in sel.reasons)


def test_ais_sub_stage_order_uses_main_then_sub():
    early = S("stage_2_x_1_y", (2, 1), "e", C("e", 0, 0.1))
    late = S("stage_2_x_2_z", (2, 2), "l", C("l", 1, 0.1))
    assert latest_stage_best_node([late, early]).node_id == "l"


def test_ais_seed_nodes_are_not_ranked():
    stage = S("s", (1, 1), None, C("seed", 5, 0.99, rankable=False), C("real", 1, 0.6))
    assert latest_stage_best_node([stage]).node_id == "real"


def test_ais_nothing_found_uses_the_final_file():
    sel = latest_stage_best_node([S("s", (1, 1), None, C("a", 0, buggy=True))])
    assert (sel.rule, sel.node_id, sel.use_final_file) == (RULE_LATEST_STAGE, None, True)
    assert latest_stage_best_node([]).use_final_file


# --- final file, FML-bench ----------------------------------------------------------------------


def test_final_file_rule():
    sel = final_file()
    assert (sel.rule, sel.node_id, sel.use_final_file) == (RULE_FINAL_FILE, None, True)


def test_fml_earliest_step_with_best_val_metric():
    cands = [C("s3", 3, 0.1), C("s1", 1, 0.2), C("s2", 2, 0.1)]
    sel = earliest_best_val_metric_step(cands, 0.1)
    assert (sel.rule, sel.node_id) == (RULE_FML_BEST_STEP, "s2")


def test_fml_missing_best_or_file_uses_final_file():
    assert earliest_best_val_metric_step([C("s1", 1, 0.2)], 0.3).use_final_file
    assert earliest_best_val_metric_step([C("s1", 1, 0.2)], None).use_final_file
    sel = earliest_best_val_metric_step([C("s1", 1, 0.2, has_file=False)], 0.2)
    assert sel.use_final_file and "no bound prediction file" in sel.reasons[-1]


# --- properties ----------------------------------------------------------------------------------

_values = st.one_of(st.none(), st.sampled_from([0.1, 0.5, 0.5, 0.9]), st.just(math.nan))
_cand = st.builds(
    lambda i, v, mx, bug, f, k: (v, mx, bug, f, k),
    st.integers(),
    _values,
    st.one_of(st.none(), st.booleans()),
    st.booleans(),
    st.booleans(),
    st.sampled_from(["scalar", "names:auc"]),
)


@st.composite
def candidate_lists(draw):
    specs = draw(st.lists(_cand, max_size=12))
    return [
        C(f"n{i:02d}", i, v, mx, buggy=bug, has_file=f, kind=k)
        for i, (v, mx, bug, f, k) in enumerate(specs)
    ]


@settings(max_examples=150)
@given(candidate_lists(), st.randoms(use_true_random=False))
def test_aide_rule_is_invariant_to_listing_order_and_selects_a_valid_best(cands, rnd):
    sel = best_reported_val_non_faulty(cands)
    shuffled = list(cands)
    rnd.shuffle(shuffled)
    assert best_reported_val_non_faulty(shuffled) == sel
    if sel.node_id is None:
        return
    chosen = next(c for c in cands if c.node_id == sel.node_id)
    assert not chosen.buggy and chosen.has_file and math.isfinite(chosen.value)
    # no comparable candidate is strictly better, and no equal one is earlier
    for c in cands:
        if c.buggy or not c.has_file or c.maximize is None or c.value is None:
            continue
        if not math.isfinite(c.value) or (c.kind, c.maximize) != (chosen.kind, chosen.maximize):
            continue
        better = c.value > chosen.value if chosen.maximize else c.value < chosen.value
        assert not better
        assert not (c.value == chosen.value and c.order < chosen.order)


@pytest.mark.slow
@settings(max_examples=100)
@given(st.lists(candidate_lists(), min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_ais_rule_is_invariant_to_order_of_stages_and_nodes(stage_lists, rnd):
    stages = []
    for i, cands in enumerate(stage_lists):  # node ids unique across stages
        cands = [Candidate(f"s{i}{c.node_id}", 100 * i + c.order, *astuple(c)[2:]) for c in cands]
        stages.append(
            S(f"stage_{i + 1}_a_1_b", (i + 1, 1), cands[0].node_id if cands else None, *cands)
        )
    sel = latest_stage_best_node(stages)
    shuffled = [S(s.name, s.order, s.best_node_id, *rnd.sample(s.candidates, len(s.candidates)))
                for s in stages]  # fmt: skip
    rnd.shuffle(shuffled)
    assert latest_stage_best_node(shuffled) == sel
    if sel.node_id is not None:
        chosen = next(c for s in stages for c in s.candidates if c.node_id == sel.node_id)
        assert not chosen.buggy and chosen.has_file
