"""Notebook 07's reshaped views (Table 6 wide, the version-pair coverage) and their display."""

from __future__ import annotations

import math

import pandas as pd

from automd_analysis.analysis import catalog
from automd_analysis.analysis.development import CHANGE_TYPES, pair_coverage
from automd_analysis.analysis.methods import method_prevalence_wide
from automd_analysis.report.tables import display_frame

NAN = math.nan


def _table6() -> pd.DataFrame:
    rows = [
        ("model_families", "gbdt", "codex", 80.0, 10.0, 75.0),
        ("model_families", "gbdt", "aide", 50.0, NAN, 50.0),
        ("model_families", "knn", "codex", 0.0, 0.0, 0.0),
        ("model_families", "knn", "aide", 0.0, NAN, 0.0),
        ("ensembling", "stacking", "aide", 100.0, NAN, 100.0),  # codex has no row at all
    ]
    return pd.DataFrame(
        rows, columns=["field", "category", "agent", "pct_mean", "pct_sd", "pct_pooled"]
    )


def test_table6_wide_has_one_column_pair_per_agent_and_drops_unused_categories():
    wide = method_prevalence_wide(_table6())
    assert list(wide.columns) == ["field", "category", "aide", "aide_sd", "codex", "codex_sd"]
    assert wide[["field", "category"]].values.tolist() == [
        ["model_families", "gbdt"],
        ["ensembling", "stacking"],
    ]
    gbdt = wide.iloc[0]
    assert (gbdt["aide"], gbdt["codex"], gbdt["codex_sd"]) == (50.0, 80.0, 10.0)
    assert math.isnan(gbdt["aide_sd"])
    assert wide.iloc[1]["codex"] is None or math.isnan(wide.iloc[1]["codex"])
    assert len(method_prevalence_wide(_table6(), keep_empty=True)) == 3


def test_table6_spec_shows_mean_and_sd_per_agent():
    wide = method_prevalence_wide(_table6())
    text, bold = display_frame(wide, catalog.table("table6_methods_wide").display(wide))
    assert list(text.columns) == ["field", "category", "aide", "codex"]
    assert text.iloc[0].tolist() == ["model_families", "gbdt", "50", "80 \N{PLUS-MINUS SIGN} 10"]
    assert text.iloc[1]["codex"] == "\N{EN DASH}" and not bold.to_numpy().any()


def test_pair_coverage_selects_counts_per_agent_and_stage():
    rows = []
    for agent, stage, n_pairs, n_unannotated in (
        ("b", "late", 2, 0),
        ("b", "early", 3, 1),
        ("a", "middle", 0, 4),
    ):
        for change in CHANGE_TYPES:
            rows.append((agent, stage, change, n_pairs, n_unannotated))
    shares = pd.DataFrame(rows, columns=["agent", "stage", "change", "n_pairs", "n_unannotated"])
    got = pair_coverage(shares)
    assert got.values.tolist() == [
        ["a", "middle", 4, 0, 4],
        ["b", "early", 4, 3, 1],
        ["b", "late", 2, 2, 0],
    ]
    assert pair_coverage(shares.iloc[0:0]).empty
