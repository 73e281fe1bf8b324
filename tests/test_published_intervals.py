"""Every published table of notebooks 01-06 on the nbval fixture holds each estimate inside its
own interval, and every pairwise row's p-value agrees with its interval (issue 19's scanner,
``tests/interval_scan.py``, driven by the table declarations)."""

from __future__ import annotations

import sys
from pathlib import Path

import interval_scan
import notebook_exports as nx
import pandas as pd
import pytest

from automd_analysis.analysis import catalog

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def fixture_tables(tmp_path_factory):
    sys.path.insert(0, str(ROOT / "tests" / "nbval"))
    try:
        import nbval_params
    finally:
        sys.path.pop(0)
    from automd_analysis.analysis.store import load_store

    store = load_store(nbval_params.score_fixture().out_dir)
    assert store.replicates is not None and len(store.replicates), (
        "fixture scored without replicates"
    )
    out = tmp_path_factory.mktemp("published")
    nx.export_notebook_outputs(nx.report_on(store, out), draw_figures=False)
    return out / "tables"


def test_scanner_flags_an_estimate_outside_its_interval_and_a_disagreeing_p():
    with_interval = [t for t in catalog.TABLES.values() if t.intervals]
    assert len(with_interval) >= 5  # the scan has work to do
    table2 = pd.DataFrame(
        {"agent": ["a", "b"], "penalized_mean": [0.5, 0.2], "penalized_mean_ci_low": [0.4, 0.3],
         "penalized_mean_ci_high": [0.6, 0.4]}
    )  # fmt: skip
    [found] = interval_scan.scan_frame("table2_primary_scores", table2)
    assert found.startswith("table2_primary_scores row 1: penalized_mean = 0.2 outside")
    pairwise = pd.DataFrame(
        {"diff_mean": [0.02, 0.02, 0.0], "ci_low": [0.01, -0.01, 0.0], "ci_high": [0.03, 0.04, 0.0],
         "p_value": [0.2, 0.3, 0.01]}
    )  # fmt: skip
    found = interval_scan.scan_frame("pairwise_comparisons", pairwise)
    assert [f.split(":")[0] for f in found] == [
        "pairwise_comparisons row 0",
        "pairwise_comparisons row 2",
    ]
    assert interval_scan.scan_frame("not_declared", table2) == []


@pytest.mark.slow
def test_published_tables_hold_their_estimates_and_agree_with_their_tests(fixture_tables):
    scanned = {p.stem for p in fixture_tables.glob("*.csv")}
    assert {"pairwise_comparisons", "table2_primary_scores", "table3_ece", "table7_llm"} <= scanned
    assert interval_scan.scan_tables(fixture_tables) == []
