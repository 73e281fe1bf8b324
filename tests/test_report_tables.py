"""Paper-style table rendering and export: formatting, bold-best direction, daggers, escaping,
contract CSV columns and byte-identical output."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import notebook_exports as nx
import numpy as np
import pandas as pd
import pytest
import storebuilder as sb

from automd_analysis.analysis import calibration_practices as calibration
from automd_analysis.analysis import catalog, llm, objectives, primary
from automd_analysis.analysis.store import load_store
from automd_analysis.errors import ScoreStoreError
from automd_analysis.precision import comparable
from automd_analysis.report import tables as tb

EVIL = "<script>alert('x')</script>&\"$_%#{}"


def _documented_header(name: str) -> str:
    """The CSV header ``docs/tables.md`` documents for table ``name`` (the contract)."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "tables.md").read_text()
    match = re.search(rf"^\| `{name}\.csv` \| `([^`]+)` \|", doc, flags=re.M)
    assert match, f"docs/tables.md does not document {name}.csv"
    return ",".join(c.strip() for c in match.group(1).split(","))


#: Every table of notebooks 01-06 with a fixed header (not one column per agent).
#: Published only for a store scored with user metrics (tests/test_extending_example.py checks it).
WITH_USER_METRICS = {"extra_metrics_by_agent"}
CONTRACT = {
    name: _documented_header(name)
    for name, declared in catalog.TABLES.items()
    if declared.notebook < "07" and "<agent>" not in declared.header
    and name not in WITH_USER_METRICS
}  # fmt: skip


@pytest.fixture(scope="module")
def complete():
    return sb.complete_runs(seed=3)


@pytest.fixture(scope="module")
def store(complete):
    return sb.build_store(
        complete["runs"],
        subgroups=complete["subgroups"],
        calibration_bins=complete["calibration_bins"],
    )


# --------------------------------------------------------------------------------------------
# cell formatting


def test_format_mean_sd_and_daggers():
    assert tb.format_mean_sd(0.51749, 0.0123) == "0.517 ± 0.012"
    assert tb.format_mean_sd(0.5, math.nan) == "0.500"
    assert tb.format_mean_sd(math.nan, 0.1) == "–"
    assert tb.format_mean_sd(0.5, 0.1, n_valid=2) == "0.500 ± 0.100§"
    assert tb.format_mean_sd(0.5, None, n_valid=1) == "0.500‡"
    assert tb.format_mean_sd(0.5, 0.1, n_valid=3) == "0.500 ± 0.100"
    assert [tb.dagger(n) for n in (0, 1, 2, 3, math.nan)] == ["", "‡", "§", "", ""]
    assert tb.format_number(-0.0001) == "0.000"
    assert tb.format_number(1.23456, 2) == "1.23"


def test_best_mask_direction_ties_exclusion_and_nan():
    values = pd.DataFrame(
        {"score": [0.5, 0.7, 0.7, 0.9], "ece": [0.2, 0.1, math.nan, 0.05], "n": [1, 2, 3, 4]}
    )
    mask = tb.best_mask(values, {"score": "max", "ece": "min"}, exclude=[False, False, False, True])
    assert mask["score"].tolist() == [False, True, True, False]  # tie; the excluded row is best
    assert mask["ece"].tolist() == [False, True, False, False]
    assert not mask["n"].any()
    rounded = tb.best_mask(pd.DataFrame({"x": [0.5171, 0.5174]}), "max", decimals=3)
    assert rounded["x"].tolist() == [True, True]  # equal as displayed
    rows = tb.best_mask(pd.DataFrame({"a": [1.0, 5.0], "b": [2.0, 3.0]}), "min", axis="rows")
    assert rows.to_numpy().tolist() == [[True, False], [False, True]]
    with pytest.raises(ValueError):
        tb.best_mask(values, {"score": "highest"})


def test_escape_latex():
    assert tb.escape_latex("a_b & 50% $x$ #1 {y} ~ ^ \\") == (
        r"a\_b \& 50\% \$x\$ \#1 \{y\} \textasciitilde{} \textasciicircum{} \textbackslash{}"
    )
    assert tb.escape_latex("0.5 ± 0.1†") == r"0.5 $\pm$ 0.1$^{\dagger}$"
    assert tb.escape_latex("0.5§") == r"0.5$^{\S}$"  # two valid runs (Tables 12, 13)


# --------------------------------------------------------------------------------------------
# bold best and daggers in rendered tables


def _runs_for_bold():
    runs = []
    for rep in range(3):
        runs += [sb.run("good", "clf_a", rep, score=0.8, ece=0.30)]
        runs += [sb.run("calibrated", "clf_a", rep, score=0.6, ece=0.01)]
        runs += [sb.run("flaky", "clf_a", rep, score=0.7, ece=0.2, valid=rep == 0)]
    runs += [sb.run("baseline", "clf_a", k, score=0.95, ece=0.001) for k in range(5)]
    return runs


def test_bold_best_follows_the_column_direction():
    store = sb.build_store(_runs_for_bold())
    text, bold = tb.display_frame(
        primary.agent_summary(store), catalog.table("table2_primary_scores").spec
    )
    by_agent = dict(zip(text["agent"], range(len(text)), strict=True))
    assert bold.loc[by_agent["good"], "Penalised score"]  # higher is better
    assert not bold.loc[by_agent["baseline"], "Penalised score"]  # baseline never bold
    assert not bold["Rank (penalised)"].any()  # no interval, no mark
    text, bold = tb.display_frame(
        calibration.ece_by_task_class(store), catalog.table("table3_ece").spec
    )
    assert not bold["Classification"].any()  # the plug-in ECE has no interval, no mark
    # the bias-corrected column is bold where its marks say, and where a value ties the best
    # at the displayed precision
    frame = calibration.ece_by_task_class(store).set_index("agent")
    frame.loc[["good", "calibrated", "flaky"], "classification_bc"] = [0.30, 0.0101, 0.0104]
    frame.loc[["good", "calibrated", "flaky"], "classification_bc_best"] = [True, True, False]
    text, bold = tb.display_frame(frame.reset_index(), catalog.table("table3_ece").spec)
    marked = dict(zip(text["agent"], bold["Classification, bias-corrected"], strict=True))
    assert marked == {"good": True, "calibrated": True, "flaky": True, "baseline": False}


def test_daggers_in_per_task_tables(tmp_path):
    store = sb.build_store(_runs_for_bold() + [sb.run("two", "clf_a", k) for k in range(2)])
    paths = tb.export_table(primary.scores_by_task(store), "table12_task_scores", tmp_path)
    html = paths["html"].read_text()
    assert "0.700‡" in html  # flaky: one valid run
    assert "0.500\u00a0±\u00a00.000§" in html  # two: two valid runs (never broken at ±)
    assert r"$^{\ddagger}$" in paths["tex"].read_text()


# --------------------------------------------------------------------------------------------
# escaping


def test_archive_strings_are_escaped_in_html_and_latex(tmp_path):
    runs = [sb.run(EVIL, "clf_a", 0, score=0.9, llm=EVIL), sb.run("ok", "clf_a", 0, score=0.1)]
    store = sb.build_store(runs)
    for name, frame in (
        ("table2_primary_scores", primary.agent_summary(store)),
        ("table12_task_scores", primary.scores_by_task(store)),  # the agent is a column header here
    ):
        paths = tb.export_table(frame, name, tmp_path, caption=f"caption {EVIL}")
        html = paths["html"].read_text()
        assert "<script>" not in html
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&amp;&quot;" in html
        tex = paths["tex"].read_text()
        assert "<script>" not in tex
        assert r"\textless{}script\textgreater{}" in tex and r"\_\%\#\{\}" in tex
        csv = pd.read_csv(paths["csv"], keep_default_na=False)
        assert EVIL in set(csv["agent"])  # the CSV keeps the raw string (quoted)


# --------------------------------------------------------------------------------------------
# export: contract columns, determinism, round trip


def _export_all(store, out_dir, *, draw_figures: bool = False) -> list[tuple[str, str]]:
    """Every table (and figure) of notebooks 01-06, published as the notebooks publish them."""
    report = nx.report_on(store, out_dir)
    return nx.export_notebook_outputs(report, draw_figures=draw_figures)


@pytest.mark.slow
def test_the_tests_export_exactly_what_the_notebooks_export(tmp_path, store):
    published = _export_all(store, tmp_path, draw_figures=True)

    def generic_name(kind: str, name: str) -> str:
        for prefix in ("reliability_", "calibration_curve_"):
            if kind == "figure" and name.startswith(prefix):
                return f"{prefix}<task>"
        return name

    generic = {(kind, generic_name(kind, name)) for kind, name in published}
    expected = nx.notebook_exports()
    if store.calibration_curves is None or store.calibration_curves.empty:
        expected.discard(("figure", "calibration_curve_<task>"))  # no curves, no such figure
    if store.extra_metrics is None or store.extra_metrics.empty:  # scored without --metric
        expected -= {("table", name) for name in WITH_USER_METRICS}
    assert generic == expected, "tests/notebook_exports.py is out of step"
    reliability = {n for k, n in published if k == "figure" and n.startswith("reliability_")}
    assert reliability == {f"reliability_{t}" for t in sorted(set(store.calibration_bins["task"]))}
    tables = sorted(n for k, n in published if k == "table")
    figures = sorted(n for k, n in published if k == "figure")
    assert len(tables) == len(set(tables)) and len(figures) == len(set(figures))
    written = sorted(p.name for p in (tmp_path / "tables").iterdir())
    assert written == sorted(f"{n}.{s}" for n in tables for s in ("csv", "html", "tex"))
    written = sorted(p.name for p in (tmp_path / "figures").iterdir())
    assert written == sorted(f"{n}.{s}" for n in figures for s in ("png", "svg"))


@pytest.mark.slow
def test_notebook_tables_follow_the_csv_contract(tmp_path, store):
    _export_all(store, tmp_path)
    for name, header in CONTRACT.items():
        csv = (tmp_path / "tables" / f"{name}.csv").read_text()
        assert csv.splitlines()[0] == header
        for suffix in ("tex", "html"):
            assert (tmp_path / "tables" / f"{name}.{suffix}").is_file()
    table2 = pd.read_csv(tmp_path / "tables" / "table2_primary_scores.csv")
    base = table2.set_index("agent").loc["baseline"]
    assert base[[c for c in table2.columns if c.startswith("rank")]].isna().all()
    assert not list((tmp_path / "tables").glob(".*"))  # no temporary files left


@pytest.mark.slow
def test_export_is_byte_identical_and_row_order_free(tmp_path, complete, store):
    published = _export_all(store, tmp_path / "a")
    _export_all(store, tmp_path / "b")
    shuffled_runs = list(complete["runs"])
    np.random.default_rng(1).shuffle(shuffled_runs)
    shuffled = sb.build_store(
        shuffled_runs,
        subgroups=complete["subgroups"][::-1],
        calibration_bins=complete["calibration_bins"],
    )
    _export_all(shuffled, tmp_path / "c")
    files = sorted(p.name for p in (tmp_path / "a" / "tables").iterdir())
    assert len(files) == 3 * sum(kind == "table" for kind, _ in published) >= 3 * 25
    for name in files:
        a = (tmp_path / "a" / "tables" / name).read_bytes()
        assert a == (tmp_path / "b" / "tables" / name).read_bytes(), name
        assert a == (tmp_path / "c" / "tables" / name).read_bytes(), name


def test_csv_holds_the_numbers_to_twelve_significant_digits(tmp_path, store):
    table = primary.agent_summary(store)
    paths = tb.export_table(table, "table2_primary_scores", tmp_path)
    back = pd.read_csv(paths["csv"], float_precision="round_trip").set_index("agent").sort_index()
    expected = comparable(table).set_index("agent").sort_index()
    pd.testing.assert_frame_equal(back, expected, check_exact=True)
    # and nothing coarser: half a unit in the 12th significant digit at most
    floats = table.set_index("agent").sort_index().select_dtypes("float")
    np.testing.assert_allclose(back[floats.columns], floats, rtol=5e-12, atol=0)


def test_csv_prints_values_equal_in_exact_arithmetic_equally():
    # 2 computed by two paths (a Gram matrix on two CPUs) and 0.1 + 0.2 print as one value each
    frame = pd.DataFrame(
        {"k": ["a", "b", "c"], "x": [1.9999999999999993, 2.0000000000000004, 0.1 + 0.2]}
    )
    assert tb.csv_text(frame) == "k,x\na,2.0\nb,2.0\nc,0.3\n"


def test_csv_text_rules():
    frame = pd.DataFrame(
        {"name": ["b", "a,1", None], "x": [0.1, math.nan, 1e-20], "ok": [True, False, True]}
    )
    text = tb.csv_text(frame)
    assert text == 'name,x,ok\n"a,1",,false\nb,0.1,true\n,1e-20,true\n'


@pytest.mark.slow
def test_tables_from_a_store_on_disk(tmp_path, complete, store):
    directory = sb.write_store(
        complete["runs"],
        tmp_path / "store",
        subgroups=complete["subgroups"],
        calibration_bins=complete["calibration_bins"],
    )
    published = _export_all(load_store(directory), tmp_path / "disk")
    assert published == _export_all(store, tmp_path / "memory")
    for kind, name in published:
        if kind == "table":
            csv = f"tables/{name}.csv"
            assert (tmp_path / "disk" / csv).read_bytes() == (
                tmp_path / "memory" / csv
            ).read_bytes()


def test_missing_experiments_and_baseline_are_structured_errors(tmp_path):
    """A store without the objectives/LLM experiments or the simple baseline: the analyses behind
    those tables say what is missing and how to fix it (``automd regenerate`` skips notebooks 03
    and 06 for such a store); the other tables are still exported."""
    store = sb.build_store([sb.run("A", "clf_a", k, annotations={}) for k in range(3)])
    for compute, role in (
        (lambda: llm.llm_summary(store), "llm"),
        (lambda: objectives.objective_summary(store), "objectives"),
    ):
        with pytest.raises(ScoreStoreError) as info:
            compute()
        assert info.value.code == "store.no_experiment"
        assert repr(role) in str(info.value) and f"{role}_experiment" in info.value.fix
    with pytest.raises(ScoreStoreError) as info:
        calibration.ece_decomposition(store)
    assert info.value.code == "store.no_baseline" and "clf_a" in str(info.value)
    view = nx.report_on(store, tmp_path).table(
        primary.agent_summary(store), "table2_primary_scores"
    )
    assert view.paths["csv"].read_text().startswith("agent,penalized_mean,")


def test_export_table_without_spec_and_bad_names(tmp_path):
    frame = pd.DataFrame({"agent": ["a"], "value": [0.12345]})
    paths = tb.export_table(frame, "custom", tmp_path, caption="Custom")
    assert "0.123" in paths["html"].read_text()
    assert paths["csv"].read_text() == "agent,value\na,0.12345\n"
    for bad in ("../escape", "a/b", "", ".hidden"):
        with pytest.raises(ValueError):
            tb.export_table(frame, bad, tmp_path)


# --------------------------------------------------------------------------------------------
# end to end: `automd score` on the committed fixture archive -> load_store -> exported tables

SMALL = Path(__file__).resolve().parent / "fixtures" / "small"


@pytest.fixture(scope="module")
def scored_fixture(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("e2e") / "scores"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "automd_analysis",
            "score",
            str(SMALL / "archive"),
            "--data",
            str(SMALL / "data"),
            "--manifests",
            str(SMALL / "manifests"),
            "--out",
            str(out),
            "--jobs",
            "1",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.mark.slow
def test_end_to_end_from_automd_score(scored_fixture, tmp_path):
    store = load_store(scored_fixture)
    _export_all(store, tmp_path)
    for name, header in CONTRACT.items():
        assert (tmp_path / "tables" / f"{name}.csv").read_text().splitlines()[0] == header

    # independent recomputation from the raw Parquet file with plain pandas
    scores = pd.read_parquet(scored_fixture / "scores.parquet")
    main = scores[scores["is_selected"] & (scores["experiment"] == "main")].copy()
    main["pen"] = main["score"].where(main["valid"], 0.0).fillna(0.0)
    table2 = pd.read_csv(
        tmp_path / "tables" / "table2_primary_scores.csv", float_precision="round_trip"
    ).set_index("agent")
    for agent, runs in main.groupby("agent"):
        per_rep = runs.groupby("rep")["pen"].mean()
        assert table2.loc[agent, "penalized_mean"] == pytest.approx(per_rep.mean(), abs=1e-12)
        assert table2.loc[agent, "valid_rate_mean"] == pytest.approx(
            runs.groupby("rep")["valid"].mean().mean(), abs=1e-12
        )
    table5 = pd.read_csv(tmp_path / "tables" / "table5_external.csv").set_index("agent")
    external = main[main["validation"] == "external"]
    for agent, ext in external.groupby("agent"):
        internal_task = ext["internal_counterpart"].iloc[0]
        internal = main[(main["agent"] == agent) & (main["task"] == internal_task)]
        internal = internal.set_index("rep")
        if agent == "baseline":
            expected = (
                ext.loc[ext["valid"], "score"].mean()
                / internal.loc[internal["valid"], "score"].mean()
            )
        else:
            ratios = [
                row.score / internal.loc[row.rep, "score"]
                for row in ext.itertuples()
                if row.valid
                and row.rep in internal.index
                and internal.loc[row.rep, "valid"]
                and internal.loc[row.rep, "score"] > 0
            ]
            expected = sum(ratios) / len(ratios) if ratios else math.nan
        assert table5.loc[agent, "ratio"] == pytest.approx(expected, rel=5e-12, nan_ok=True)


def test_percentages_per_agent_are_rounded_on_the_page_but_not_in_the_csv(tmp_path):
    wide = pd.DataFrame(
        {
            "practice": ["ensembling", "class weights"],
            "aide": [11.111, 66.667],
            "codex": [50.0, None],
        }
    )
    paths = tb.export_table(wide, "table20_practices_wide", tmp_path)  # declared spec
    html = paths["html"].read_text()
    assert ">11<" in html and ">67<" in html and "11.111" not in html
    assert "Modelling practices: % of each agent's eligible valid runs." in html.replace(
        "&#x27;", "'"
    )
    assert "11.111" in paths["csv"].read_text()
