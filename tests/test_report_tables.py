"""Paper-style table rendering and export: formatting, bold-best direction, daggers, escaping,
contract CSV columns and byte-identical output."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import storebuilder as sb

from automd_analysis.analysis import calibration_practices as calibration
from automd_analysis.analysis import primary
from automd_analysis.analysis.store import load_store
from automd_analysis.report import tables as tb

EVIL = "<script>alert('x')</script>&\"$_%#{}"

CONTRACT = {
    "table2_primary_scores": "agent,penalized_mean,penalized_sd,nonpenalized_mean,nonpenalized_sd,"
    "valid_rate_mean,valid_rate_sd,rank_penalized_mean,rank_penalized_sd,rank_nonpenalized_mean,"
    "rank_nonpenalized_sd",
    "table12_task_scores": "task,agent,mean,sd,n_valid",
    "table3_ece": "agent,survival,classification,sequential,all",
    "table13_task_ece": "task,agent,mean,sd,n_valid",
    "fig2a_ece_decomposition": "group,n_runs,share_of_runs,share_of_difference,mean_ece",
    "table5_external": "agent,task,internal_task,score,ratio",
    "table7_llm": "llm,penalized_mean,penalized_sd,ece_mean,valid_rate,tokens_m_mean",
}


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
    assert tb.format_mean_sd(0.5, 0.1, n_valid=2) == "0.500 ± 0.100†"
    assert tb.format_mean_sd(0.5, None, n_valid=1) == "0.500‡"
    assert tb.format_mean_sd(0.5, 0.1, n_valid=3) == "0.500 ± 0.100"
    assert [tb.dagger(n) for n in (0, 1, 2, 3, math.nan)] == ["", "‡", "†", "", ""]
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
    text, bold = tb.display_frame(primary.table2(store), tb.TABLE_SPECS["table2_primary_scores"])
    by_agent = dict(zip(text["agent"], range(len(text)), strict=True))
    assert bold.loc[by_agent["good"], "Penalized score"]  # higher is better
    assert not bold.loc[by_agent["baseline"], "Penalized score"]  # baseline never bold
    assert bold.loc[by_agent["good"], "Rank (penalized)"]  # rank 1: lower is better
    text, bold = tb.display_frame(calibration.table3(store), tb.TABLE_SPECS["table3_ece"])
    row = text.index[text["agent"] == "calibrated"][0]
    assert bold.loc[row, "Classification"]  # lower ECE is better
    assert not bold.loc[text.index[text["agent"] == "good"][0], "Classification"]


def test_daggers_in_per_task_tables(tmp_path):
    store = sb.build_store(_runs_for_bold() + [sb.run("two", "clf_a", k) for k in range(2)])
    paths = tb.export_table(primary.table12(store), "table12_task_scores", tmp_path)
    html = paths["html"].read_text()
    assert "0.700‡" in html  # flaky: one valid run
    assert "0.500 ± 0.000†" in html  # two: two valid runs
    assert r"$^{\ddagger}$" in paths["tex"].read_text()


# --------------------------------------------------------------------------------------------
# escaping


def test_archive_strings_are_escaped_in_html_and_latex(tmp_path):
    runs = [sb.run(EVIL, "clf_a", 0, score=0.9, llm=EVIL), sb.run("ok", "clf_a", 0, score=0.1)]
    store = sb.build_store(runs)
    for name, frame in (
        ("table2_primary_scores", primary.table2(store)),
        ("table12_task_scores", primary.table12(store)),  # the agent is a column header here
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


def test_export_paper_tables_writes_the_contract_csvs(tmp_path, store):
    results = tb.export_paper_tables(store, tmp_path)
    for name, header in CONTRACT.items():
        assert not isinstance(results[name], str), results[name]
        csv = (tmp_path / "tables" / f"{name}.csv").read_text()
        assert csv.splitlines()[0] == header
        for suffix in ("tex", "html"):
            assert (tmp_path / "tables" / f"{name}.{suffix}").is_file()
    table2 = pd.read_csv(tmp_path / "tables" / "table2_primary_scores.csv")
    base = table2.set_index("agent").loc["baseline"]
    assert base[[c for c in table2.columns if c.startswith("rank")]].isna().all()
    raw = (tmp_path / "tables" / "table2_primary_scores.csv").read_text().splitlines()
    assert next(r for r in raw if r.startswith("baseline,")).endswith(",,,,")
    assert not list((tmp_path / "tables").glob(".*"))  # no temporary files left


def test_export_is_byte_identical_and_row_order_free(tmp_path, complete, store):
    tb.export_paper_tables(store, tmp_path / "a")
    tb.export_paper_tables(store, tmp_path / "b")
    shuffled_runs = list(complete["runs"])
    np.random.default_rng(1).shuffle(shuffled_runs)
    shuffled = sb.build_store(
        shuffled_runs,
        subgroups=complete["subgroups"][::-1],
        calibration_bins=complete["calibration_bins"],
    )
    tb.export_paper_tables(shuffled, tmp_path / "c")
    files = sorted(p.name for p in (tmp_path / "a" / "tables").iterdir())
    assert len(files) == 3 * 22
    for name in files:
        a = (tmp_path / "a" / "tables" / name).read_bytes()
        assert a == (tmp_path / "b" / "tables" / name).read_bytes(), name
        assert a == (tmp_path / "c" / "tables" / name).read_bytes(), name


def test_csv_round_trips_the_numbers_exactly(tmp_path, store):
    table = primary.table2(store)
    paths = tb.export_table(table, "table2_primary_scores", tmp_path)
    back = pd.read_csv(paths["csv"], float_precision="round_trip").set_index("agent").sort_index()
    expected = table.set_index("agent").sort_index()
    pd.testing.assert_frame_equal(back, expected, check_exact=True)


def test_csv_text_rules():
    frame = pd.DataFrame(
        {"name": ["b", "a,1", None], "x": [0.1, math.nan, 1e-20], "ok": [True, False, True]}
    )
    text = tb.csv_text(frame)
    assert text == 'name,x,ok\n"a,1",,false\nb,0.1,true\n,1e-20,true\n'


def test_tables_from_a_store_on_disk(tmp_path, complete):
    directory = sb.write_store(
        complete["runs"],
        tmp_path / "store",
        subgroups=complete["subgroups"],
        calibration_bins=complete["calibration_bins"],
    )
    results = tb.export_paper_tables(load_store(directory), tmp_path / "report")
    assert all(not isinstance(v, str) for v in results.values())


def test_missing_experiments_and_baseline_are_skipped_not_fatal(tmp_path):
    store = sb.build_store([sb.run("A", "clf_a", k, annotations={}) for k in range(3)])
    results = tb.export_paper_tables(store, tmp_path)
    assert results["table7_llm"].startswith("skipped:")
    assert results["table4_objectives"].startswith("skipped:")
    assert "baseline" in results["fig2a_ece_decomposition"]
    assert isinstance(results["table2_primary_scores"], dict)


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
    results = tb.export_paper_tables(store, tmp_path)
    assert all(not isinstance(v, str) for v in results.values()), results
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
        assert table5.loc[agent, "ratio"] == pytest.approx(expected, abs=1e-12, nan_ok=True)
