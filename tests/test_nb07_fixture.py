"""The committed fixture's version-pair annotations follow the App. H pairing rule.

Two independent implementations must agree: the fixture generator's ``app_h_pairs`` (which wrote
``annotations.json``) and ``version_pairs.form_version_pairs`` (which forms the pairs the
notebook samples), here fed from the archive reader and the generator's design record
(``expected.json``), not from the scorer.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from automd_analysis.archive import open_archive
from automd_analysis.version_pairs import form_version_pairs

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SMALL = FIXTURES / "small"
DESIGN = json.loads((SMALL / "expected.json").read_text())


def _kit():
    name = "automd_test_fixture_kit"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, FIXTURES / "make_small_fixture.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _annotated_runs():
    archive = open_archive(SMALL / "archive")
    return [r for r in archive.runs() if r.annotations is not None]


def _versions(run) -> pd.DataFrame:
    start = run.started_at
    return pd.DataFrame(
        {
            "version": [v.version_id for v in run.versions],
            "elapsed_min": [(v.created_at - start).total_seconds() / 60 for v in run.versions],
            "step": [v.step for v in run.versions],
            "parent": [v.parent for v in run.versions],
            "node": [v.node for v in run.versions],
            "valid": [DESIGN[run.run_id][v.version_id] == "valid" for v in run.versions],
        }
    )


def _steps(run) -> pd.DataFrame | None:
    if not run.steps:
        return None
    return pd.DataFrame(
        {
            "version": [s.version for s in run.steps],
            "node": [s.node for s in run.steps],
            "parent": [s.parent for s in run.steps],
        }
    )


RUNS = _annotated_runs()


@pytest.mark.parametrize("run", RUNS, ids=[r.run_id for r in RUNS])
def test_annotated_pairs_are_the_pairs_the_analysis_forms(run):
    annotated = [(p.earlier, p.later) for p in run.annotations.pairs]
    if DESIGN[run.run_id]["selected"] != "valid":
        # runs with an invalid selected submission take no part in the pair analysis
        assert run.experiment == "objectives"
        return
    formed = form_version_pairs(_versions(run), run.search, steps=_steps(run))
    assert annotated == list(zip(formed["earlier"], formed["later"], strict=True))
    valid = {v for v, status in DESIGN[run.run_id].items() if status == "valid"}
    assert all(a in valid and b in valid for a, b in annotated)


def test_the_fixture_exercises_both_rules_with_invalid_versions():
    by_id = {r.run_id: r for r in RUNS}
    tree = by_id["main/beta/fx_icu/rep0"]  # n2 invalid: n3 and n4 pair with n1
    assert [(p.earlier, p.later) for p in tree.annotations.pairs] == [("n1", "n3"), ("n1", "n4")]
    linear = by_id["main/alpha/fx_cls/rep1"]  # v01 invalid: only (v02, v03)
    assert DESIGN[linear.run_id]["v01"] != "valid"
    assert [(p.earlier, p.later) for p in linear.annotations.pairs] == [("v02", "v03")]
    searches = {r.search for r in RUNS if r.annotations.pairs}
    assert searches == {"tree", "linear"}


T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _h(vid: str, minute: int, parent: str | None, valid: bool = True) -> tuple:
    return (vid, T0 + timedelta(minutes=minute), parent, valid)


@pytest.mark.parametrize(
    "history, tree, want",
    [
        # tree: b's parent a; c's parent b (invalid) -> walk on to a; d's parent c
        (
            [_h("a", 1, None), _h("b", 2, "a", False), _h("c", 3, "b"), _h("d", 4, "c")],
            True,
            [("a", "c"), ("c", "d")],
        ),
        # tree: an ancestor created *later* does not pair; a root pairs with nothing
        ([_h("x", 5, None), _h("y", 3, "x")], True, []),
        # tree: cyclic parent links end the walk
        ([_h("p", 1, "q", False), _h("q", 2, "p")], True, []),
        # linear: consecutive valid versions in time, whatever the input order
        ([_h("v3", 3, None), _h("v1", 1, None), _h("v2", 2, None, False)], False, [("v1", "v3")]),
        ([_h("v1", 1, None, False)], False, []),
    ],
)
def test_generator_pairing_rule_on_hand_cases(history, tree, want):
    assert _kit().app_h_pairs(history, tree) == want
