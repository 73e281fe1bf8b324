"""The table and figure declarations (automd_analysis.analysis.catalog): one per published name,
each consistent with docs/tables.md, with the notebooks that publish it and with its display."""

from __future__ import annotations

import importlib
import math
import re
from html import escape as html_escape
from pathlib import Path

import notebook_exports as nx
import notebook_producers
import numpy as np
import pandas as pd
import pytest

from automd_analysis.analysis import catalog
from automd_analysis.analysis.catalog.declaration import (
    Column,
    Figure,
    PerAgent,
    Table,
    TableDeclarationError,
)
from automd_analysis.app.notebook import NotebookReport
from automd_analysis.report.tables import export_table

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
DOCUMENTED = dict(
    re.findall(
        r"^\| `([a-z0-9_]+)\.csv` \| `([^`]+)` \|",
        (ROOT / "docs" / "tables.md").read_text(),
        flags=re.M,
    )
)


def test_docs_document_every_declared_table_with_its_columns():
    assert set(DOCUMENTED) == set(catalog.TABLES), "docs/tables.md and the catalog disagree"
    for name, declared in catalog.TABLES.items():
        assert DOCUMENTED[name] == declared.header, name


def test_the_notebooks_publish_exactly_the_declared_names():
    published = nx.notebook_exports(NOTEBOOKS)
    declared = {("table", n) for n in catalog.TABLES} | {("figure", n) for n in catalog.FIGURES}
    assert published == declared
    for path in NOTEBOOKS:
        mine = nx.notebook_exports([path])
        for kind, name in mine:
            assert catalog.lookup(name, kind).notebook == path.stem, (path.stem, name)
    assert list(catalog.ANALYSES) == [p.stem for p in NOTEBOOKS]


def _resolve(dotted: str):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_every_declaration_names_a_callable_that_computes_it():
    for entry in [*catalog.TABLES.values(), *catalog.FIGURES.values()]:
        assert entry.computed_by.startswith("automd_analysis."), entry.name
        assert callable(_resolve(entry.computed_by)), entry.name
        layer = "analysis" if isinstance(entry, Table) else "report"
        assert entry.computed_by.split(".")[1] == layer, (entry.name, entry.computed_by)


def test_the_notebook_that_publishes_each_name_calls_its_declared_function():
    # what each report.table/figure call publishes, traced back through the cells to the calls
    # whose result it is (the report's own overview and reliability figures: its methods)
    published = notebook_producers.module_publications("automd_analysis.report.notebook")
    for path in NOTEBOOKS:
        mine = notebook_producers.notebook_publications(path, NotebookReport)
        for kind, name in mine:
            assert catalog.lookup(name, kind).notebook == path.stem, (path.stem, name)
        published |= mine
    declared = {("table", n): t for n, t in catalog.TABLES.items()}
    declared |= {("figure", n): f for n, f in catalog.FIGURES.items()}
    assert set(published) == set(declared)
    for key, entry in declared.items():
        assert entry.computed_by in published[key], (key, entry.computed_by, published[key])


def test_the_producer_trace_follows_names_fields_and_wrappers():
    cells = """
from automd_analysis.analysis import primary as p
from automd_analysis.report import figures
a = p.agent_summary(store)
b, c = report.unless_no_baseline("x", p.scores_by_task, store)
report.table(a, "one")
report.table(b.fields if b else None, "two")
report.figure(figures.add_note(figures.figure2a(a)), "three")
views = [report.figure(f, f"curve_{t}") for t, f in figures.curves(a).items()]
"""
    tree = notebook_producers.ast.parse(cells)
    found = notebook_producers._Source(tree, "report", NotebookReport).publications(tree)
    assert found[("table", "one")] == {"automd_analysis.analysis.primary.agent_summary"}
    assert "automd_analysis.analysis.primary.scores_by_task" in found[("table", "two")]
    assert "automd_analysis.analysis.primary.agent_summary" not in found[("table", "two")]
    assert found[("figure", "three")] == {
        "automd_analysis.report.figures.add_note",
        "automd_analysis.report.figures.figure2a",
    }
    assert found[("figure", "curve_<task>")] == {"automd_analysis.report.figures.curves"}


def test_names_are_unique_and_every_entry_is_complete():
    names = [t.name for t in catalog.TABLES.values()]
    assert len(names) == len(set(names))
    for entry in [*catalog.TABLES.values(), *catalog.FIGURES.values()]:
        assert entry.notebook in catalog.ANALYSES and entry.summary.endswith(".")
    for figure in catalog.FIGURES.values():
        assert figure.caption and figure.caption_for(figure.name.replace("<task>", "t"))


def _example(declared: Table, agents=("<b>a</b>", "codex")) -> pd.DataFrame:
    """One row of typed dummy values, archive-like strings that must be escaped."""
    values = {"str": "<i>x</i>", "int": 3, "float": 0.5, "bool": True}
    row = {}
    for entry in declared.columns:
        if isinstance(entry, PerAgent):
            for agent in agents:
                row[agent] = 0.5
                if entry.sd:
                    row[f"{agent}_sd"] = 0.1
                if entry.interval:
                    row |= {f"{agent}_ci_low": 0.4, f"{agent}_ci_high": 0.6}
        else:
            row[entry.name] = values[entry.dtype]
            for bound in entry.ci_columns:
                row[bound] = 0.4 if bound.endswith("low") else 0.6
            if entry.name in declared.best:
                row[f"{entry.name}_best"] = True
    return pd.DataFrame([row])


@pytest.mark.parametrize("name", sorted(catalog.TABLES))
def test_every_declaration_renders_its_columns_escaped(tmp_path, name):
    declared = catalog.table(name)
    frame = declared.frame(_example(declared))
    assert declared.check(frame) == []
    spec = declared.display(frame)
    if spec is not None:
        assert set(spec.referenced()) <= set(frame.columns), name
    paths = export_table(frame, name, tmp_path)
    html = paths["html"].read_text()
    assert "<i>" not in html and "<b>a" not in html
    if spec is not None:
        assert all(html_escape(s.title) in html for s in spec.stats)
    for column in declared.intervals_in(frame):
        shown = spec is not None and column in [s.mean for s in spec.stats if s.interval]
        assert ("[0.400,\u00a00.600]" in html) or not shown, column  # never broken


def test_only_columns_with_an_interval_carry_best_marks():
    # a bold mark says "not distinguishable from the best": it needs the paired draws
    marked = {n: t.best for n, t in catalog.TABLES.items() if t.best}
    assert set(marked) == {
        "table2_primary_scores",
        "table3_ece",
        "table4_objectives",
        "table5_external",
        "table7_llm",
    }
    for name, best in marked.items():
        table = catalog.table(name)
        assert set(best) <= set(table.intervals), name
        assert all(f"{c}_best" in table.named for c in best), name
    assert "survival" not in marked["table3_ece"]  # the plug-in keeps no interval and no mark


def test_declared_interval_columns_follow_the_naming_rule():
    names = {c: t.intervals[c] for t in catalog.TABLES.values() for c in t.intervals}
    assert names["penalized_mean"] == ("penalized_mean_ci_low", "penalized_mean_ci_high")
    assert names["survival"] == ("survival_ci_low", "survival_ci_high")
    assert names["diff_mean"] == ("ci_low", "ci_high")
    assert catalog.table("table2_primary_scores").named[-10:] == [
        "penalized_mean_ci_low",
        "penalized_mean_ci_high",
        "penalized_mean_best",
        "nonpenalized_mean_ci_low",
        "nonpenalized_mean_ci_high",
        "nonpenalized_mean_best",
        "rank_penalized_mean_ci_low",
        "rank_penalized_mean_ci_high",
        "rank_nonpenalized_mean_ci_low",
        "rank_nonpenalized_mean_ci_high",
    ]
    assert catalog.table("pairwise_comparisons").named[3:6] == ["diff_mean", "ci_low", "ci_high"]


def test_frame_orders_types_and_rejects_other_columns():
    t = Table(
        "t",
        "nb",
        "A table.",
        (
            Column("agent", "str"),
            Column("n", "int"),
            Column("ok", "bool"),
            Column("x", interval=True),
        ),
    )
    frame = t.frame(
        [{"x": 0.5, "ok": True, "n": 2.0, "agent": "a", "x_ci_low": 0.4, "x_ci_high": 0.6}]
    )
    assert frame.columns.tolist() == ["agent", "n", "ok", "x", "x_ci_low", "x_ci_high"]
    assert frame["n"].dtype == np.int64 and frame["ok"].dtype == bool
    empty = t.frame()
    assert empty.empty and list(empty.dtypes.astype(str)) == [
        "object",
        "int64",
        "bool",
        *["float64"] * 3,
    ]
    nullable = t.frame(
        pd.DataFrame(
            {
                "agent": ["a", "b"],
                "n": [1.0, math.nan],
                "ok": [True, None],
                "x": [0.1, 0.2],
                "x_ci_low": math.nan,
                "x_ci_high": math.nan,
            }
        )
    )
    assert nullable["n"].isna().tolist() == [False, True]  # a missing count stays missing
    with pytest.raises(TableDeclarationError, match="missing x_ci_high; not declared extra") as err:
        t.frame(frame.drop(columns="x_ci_high").assign(extra=1))
    assert err.value.code == "table.columns" and err.value.fix
    with pytest.raises(TableDeclarationError, match="non-integer"):
        t.frame(frame.assign(n=0.5))
    assert t.check(frame.assign(ok="yes")) == ["column ok: values do not fit bool"]
    assert t.check(frame[["n", "agent", "ok", "x", "x_ci_low", "x_ci_high"]])[0].startswith(
        "columns"
    )


def test_per_agent_columns_keep_their_place():
    declared = catalog.table("process_metrics_table4")
    frame = pd.DataFrame(
        {
            "metric": ["m"],
            "dimension": ["d"],
            **{f"{a}{s}": [1.0] for a in ("zed", "aide") for s in ("", "_ci_low", "_ci_high")},
            "rho": [0.1],
            "p": [0.5],
            "p_holm": [0.5],
            "test": ["t"],
            "n_tasks": [2],
            "n_runs": [3],
            "embedding_backend": ["hashing"],
        }
    )
    shuffled = ["rho", "zed_ci_high", "metric", "zed", "aide_ci_low", "aide", "zed_ci_low",
                "test", "dimension", "p", "n_runs", "aide_ci_high", "n_tasks", "p_holm",
                "embedding_backend"]  # fmt: skip
    out = declared.frame(frame[shuffled])  # the agents in their order of appearance
    assert out.columns.tolist() == frame.columns.tolist()
    assert declared.intervals_in(out) == {
        "zed": ("zed_ci_low", "zed_ci_high"),
        "aide": ("aide_ci_low", "aide_ci_high"),
    }
    with pytest.raises(TableDeclarationError, match="missing aide_ci_high"):
        declared.frame(frame.drop(columns="aide_ci_high"))
    wide = catalog.table("table6_methods_wide")
    spec = wide.display(pd.DataFrame(columns=["field", "category", "aide", "aide_sd"]))
    assert [(s.title, s.mean, s.sd) for s in spec.stats] == [("aide", "aide", "aide_sd")]


def test_lookup():
    assert catalog.lookup("table2_primary_scores").paper == "Table 2"
    assert catalog.lookup("reliability_demo_sepsis", "figure").name == "reliability_<task>"
    assert (
        catalog.lookup("calibration_curve_x.1", "figure").notebook == "02_calibration_and_practices"
    )
    assert catalog.lookup("reliability_", "figure") is None
    assert catalog.lookup("reliability_../x", "figure") is None
    assert catalog.lookup("my_table") is None
    with pytest.raises(ValueError):
        catalog.lookup("table2_primary_scores", "chart")
    fig = Figure("curve_<task>", "nb", "Curves.", caption="Curves of `{task}`.")
    assert fig.caption_for("curve_sepsis") == "Curves of `sepsis`."


def test_every_table_with_a_p_value_names_its_test_and_its_units():
    """A p-value says which test made it and how many tasks and runs stand behind it (the
    pairwise comparisons name theirs in their own columns)."""
    p_columns = {"p", "p_value", "p_holm", "pvalue", "p_adjusted"}
    checked = []
    for name, declared in catalog.TABLES.items():
        columns = set(declared.named)
        if name == "pairwise_comparisons" or not columns & p_columns:
            continue
        assert {"test", "n_tasks", "n_runs"} <= columns, name
        checked.append(name)
    assert {"process_spearman", "process_metrics_table4"} <= set(checked)
