"""automd_analysis.report.notebook: parameter resolution, store loading, table display/export."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import storebuilder
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis.app.notebook import open_report
from automd_analysis.archive.workspace import store_key
from automd_analysis.errors import ArchiveError, ScoreStoreError
from automd_analysis.report import notebook as nbk
from automd_analysis.tasks import REPO_ROOT


def _archive(path, name="tiny"):
    path.mkdir(parents=True, exist_ok=True)
    (path / "archive.yaml").write_text(
        yaml.safe_dump(
            {
                "schema_version": 1,
                "name": name,
                "description": "test archive",
                "experiments": {"main": "main experiment"},
                "provenance": {},
            }
        )
    )
    return path


@pytest.fixture
def report(tmp_path):
    archive = _archive(tmp_path / "arch")
    runs = [
        storebuilder.run("codex", "clf_a", 0, score=0.6),
        storebuilder.run("codex", "clf_a", 1, valid=False),
        storebuilder.run("codex", "clf_b", 0, score=0.4),
        storebuilder.run("baseline", "clf_a", 0, score=0.5),
    ]
    scores = storebuilder.write_store(runs, tmp_path / "scores")
    return open_report(archive=archive, scores_dir=scores, output_dir=tmp_path / "out", seed=7)


def test_plain_text_rounds_and_normalises():
    frame = pd.DataFrame({"agent": ["a", "b"], "score": [0.1234567891, -1e-12], "n": [3, 4]})
    text = nbk.plain_text(frame)
    assert "0.123457" in text
    assert "-0.000000" not in text and "0.000000" in text
    assert "NaN" in nbk.plain_text(pd.DataFrame({"x": [math.nan]}))
    assert nbk.plain_text(frame.iloc[:0]) == "(no rows) columns: agent, score, n"


def test_plain_text_shows_every_row():
    frame = pd.DataFrame({"i": range(500), "v": [0.5] * 500})
    assert len(nbk.plain_text(frame).splitlines()) == 501


def test_open_report_resolves_and_loads(report, tmp_path):
    assert report.archive_name == "hand-built"  # the name the store was scored under
    assert report.seed == 7
    assert report.output_dir == tmp_path / "out"
    assert (tmp_path / "out" / "tables").is_dir() and (tmp_path / "out" / "figures").is_dir()
    assert len(report.store.runs) == 4


def test_open_report_default_scores_dir_follows_archive_name(tmp_path):
    archive = _archive(tmp_path / "arch", name="no-such-store-xyz")
    with pytest.raises(ScoreStoreError) as info:
        open_report(archive=archive, output_dir=tmp_path / "out")
    key = store_key(archive)  # the name, keyed by the archive's path (issue 33)
    assert info.value.path == REPO_ROOT / "scores" / f"no-such-store-xyz-{key}"
    assert "automd score" in info.value.fix


def test_open_report_missing_archive_is_structured(tmp_path):
    with pytest.raises(ArchiveError) as info:  # its name would name the default store
        open_report(archive=tmp_path / "nope", output_dir=tmp_path / "o")
    assert info.value.code == "archive.missing"


def test_open_report_reads_only_the_store_when_it_is_given(tmp_path):
    runs = [storebuilder.run("codex", "clf_a", 0, score=0.6)]
    scores = storebuilder.write_store(runs, tmp_path / "scores")
    report = open_report(archive=tmp_path / "gone", scores_dir=scores, output_dir=tmp_path / "o")
    assert report.archive_name == "hand-built"  # store.json's archive name
    assert len(report.store.runs) == 1


def test_table_exports_and_displays(report, tmp_path):
    frame = pd.DataFrame(
        {
            "agent": ["codex", "<b>x</b>"],
            "penalized_mean": [0.51234567, 0.4],
            "penalized_sd": [0.01, math.nan],
        }
    )
    view = report.table(frame, "my_table", caption="Caption & more")
    for kind in ("csv", "tex", "html"):
        assert view.paths[kind] == tmp_path / "out" / "tables" / f"my_table.{kind}"
        assert view.paths[kind].is_file()
    assert view.html == view.paths["html"].read_text()
    # the page shows the caption above the same table (a short table: not collapsed)
    page = view._repr_html_()
    assert "Caption &amp; more" in page and "<details" not in page
    body = view.html[view.html.index("<table") :]
    assert body[: body.index("<caption")] in page
    assert "&lt;b&gt;x&lt;/b&gt;" in view._repr_html_() and "<b>x</b>" not in view._repr_html_()
    plain = repr(view)
    assert plain.splitlines()[0] == "my_table"
    assert "0.512346" in plain and "NaN" in plain


def test_table_uses_paper_spec_by_name(report):
    from automd_analysis.analysis import primary

    view = report.table(primary.table2(report.store), "table2_primary_scores")
    assert "Penalised score" in view.html  # the display spec's column title
    assert "\N{PLUS-MINUS SIGN}" in view.html or "–" in view.html


def test_overview_counts_runs_and_valid_runs(report):
    view = report.overview()
    frame = view.frame.set_index("agent")
    assert frame.loc["codex", "runs"] == 3
    assert frame.loc["codex", "valid"] == 2
    assert frame.loc["codex", "tasks"] == 2
    assert frame.loc["baseline", "runs"] == 1
    assert view.paths["csv"].name == "overview_runs.csv"


def test_figure_is_saved_and_returned(report, tmp_path):
    from matplotlib.figure import Figure

    fig = Figure()
    fig.add_subplot().plot([0, 1])
    fig.set_size_inches(12.0, 4.0)
    view = report.figure(fig, "fig_x", "A *caption* <b>")
    assert view.figure is fig
    png = tmp_path / "out" / "figures" / "fig_x.png"
    assert png.is_file() and (tmp_path / "out" / "figures" / "fig_x.svg").is_file()
    assert view.png == png.read_bytes() and view.paths["png"] == png
    page = view._repr_html_()
    assert 'width="900"' in page  # 12 in: shown at the page's width, never wider
    assert "A <em>caption</em> &lt;b&gt;" in page and "<b>" not in page
    assert page.index("<img") < page.index("automd-caption")  # caption under the figure


def test_long_table_is_collapsed_on_the_page(report):
    from automd_analysis.report.presentation import LONG_TABLE_ROWS

    n = LONG_TABLE_ROWS + 1
    frame = pd.DataFrame({"task": [f"t{i}" for i in range(n)], "n_runs": list(range(n))})
    page = report.table(frame, "long_table", caption="Many rows.")._repr_html_()
    assert page.startswith('<details class="automd-long-table"')
    assert page.index("Many rows.") < page.index("</summary>") < page.index("<table")
    short = report.table(frame.iloc[:LONG_TABLE_ROWS], "short_table")._repr_html_()
    assert "<details" not in short


def test_hand_run_writes_to_its_own_folder_and_says_so(tmp_path):
    runs = [storebuilder.run("codex", "clf_a", 0, score=0.6)]
    scores = storebuilder.write_store(runs, tmp_path / "scores")
    report = open_report(
        archive="arch", scores_dir=scores, notebook="01_primary_scores", root=tmp_path
    )
    assert report.output_dir == tmp_path / "build" / "notebooks" / "01_primary_scores"
    assert (report.output_dir / "tables").is_dir()
    note = report.where_written().data
    assert "build/notebooks/01_primary_scores/" in note and "automd regenerate" in note
    given = open_report(
        archive=_archive(tmp_path / "arch2"), scores_dir=scores, output_dir=tmp_path / "r"
    )
    assert given.where_written() is None  # automd regenerate passes its folder: no note
    with pytest.raises(ValueError, match="plain name"):
        open_report(archive=_archive(tmp_path / "a3"), scores_dir=scores, notebook="../x")


def test_task_units_without_a_tasks_table(report):
    assert report.store.tasks is None  # a store written before the scorer published tasks
    assert report.task_units() == {}
    # tasks without recorded access terms count as restricted (the safe side)
    assert report.disclosure.tasks == frozenset({"clf_a", "clf_b"})


def test_task_units_and_access_come_from_the_store(tmp_path):
    from automd_analysis.analysis.store import task_access
    from automd_analysis.scoring.publish import task_rows
    from automd_analysis.tasks import load_manifests

    archive = _archive(tmp_path / "arch")
    runs = [storebuilder.run("codex", "fx_cls", 0), storebuilder.run("codex", "fx_icu", 0)]
    scores = storebuilder.write_store(runs, tmp_path / "scores")
    manifests = load_manifests(REPO_ROOT / "tests" / "fixtures" / "small" / "manifests")
    used = {t: manifests[t] for t in ("fx_cls", "fx_icu")}
    pd.DataFrame(task_rows(used, {})).to_parquet(scores / "tasks.parquet", index=False)
    report = open_report(archive=archive, scores_dir=scores, output_dir=tmp_path / "out")
    assert report.task_units() == {"fx_cls": "encounters", "fx_icu": "stays"}
    access = {t: m.source.access for t, m in used.items()}
    assert task_access(report.store) == access
    restricted = {t for t, a in access.items() if a in ("credentialed", "dua")}
    assert set(report.disclosure.tasks or ()) == restricted


@pytest.mark.slow
def test_reliability_figures_one_per_task_with_bins(tmp_path):
    archive = _archive(tmp_path / "arch")
    complete = storebuilder.complete_runs(seed=3)
    runs = complete.pop("runs")
    scores = storebuilder.write_store(runs, tmp_path / "scores", **complete)
    report = open_report(archive=archive, scores_dir=scores, output_dir=tmp_path / "out")
    from automd_analysis.analysis import calibration_practices as calibration

    table = calibration.reliability_table(report.store, experiment="main")
    figs = report.reliability_figures(table)
    tasks = sorted({b["task"] for b in complete["calibration_bins"]})
    assert [f.figure.texts[0].get_text() for f in figs] == [f"Reliability: {t}" for t in tasks]
    assert all(f.caption and f.name == f"reliability_{t}" for f, t in zip(figs, tasks, strict=True))
    for task in tasks:
        assert (tmp_path / "out" / "figures" / f"reliability_{task}.png").is_file()
    assert report.reliability_figures(table.iloc[:0]) == []


# ---------------------------------------------------------------------------------------------
# notebook 07 helpers


def test_masking_results_default_absent_explicit_missing_and_present(report, tmp_path):
    from automd_analysis.masking.results import MaskingResultsError

    absent = report.masking_results()
    assert absent.frame is None and absent.path == report.scores_dir / "masking.parquet"
    assert "No masking-test results" in absent._repr_markdown_()
    assert "automd masking run" in repr(absent)
    with pytest.raises(MaskingResultsError) as info:
        report.masking_results(tmp_path / "nope.csv")  # a file the user named must exist
    assert info.value.code == "masking.results_missing"
    fixture = REPO_ROOT / "tests" / "fixtures" / "small" / "masking.csv"
    given = report.masking_results("tests/fixtures/small/masking.csv")  # repository-relative
    n_rows = len(fixture.read_text().strip().splitlines()) - 1
    assert given.path == fixture and len(given.frame) == n_rows
    assert given._repr_markdown_() == f"Masking-test results: `masking.csv`, {n_rows} runs."


def test_process_metrics_without_steps_or_code(report, tmp_path):
    table = report.process_metrics(experiment="main", backend="hashing")
    agents = sorted(r for r in report.store.runs["run_id"] if "/baseline/" not in r)
    assert sorted(table["run_id"]) == agents  # the simple baseline is not an agent
    assert set(table["embedding_backend"]) == {"none"}  # the archive holds no code
    assert (table["n_steps"] == 0).all() and table["exploration_spread"].isna().all()
    assert list(table["final_score"]) == [0.6, 0.0, 0.4]  # invalid selected file counts 0


def test_table_spec_is_the_declared_one():
    from automd_analysis.analysis import catalog

    for name, declared in catalog.TABLES.items():
        static = declared.spec if not callable(declared.spec) else None
        assert nbk.table_spec(name) is static, name
    assert nbk.table_spec("table18_development") is not None
    assert nbk.table_spec("no_such_table") is None


def test_figure_captions_come_from_the_declarations(report):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    view = report.figure(Figure(figsize=(2, 1)), "reliability_my_task")
    assert view.caption.startswith("Reliability diagrams of `my_task`, one panel per agent")
    assert report.figure(Figure(figsize=(2, 1)), "custom_figure").caption == ""
    assert report.figure(Figure(figsize=(2, 1)), "table2_forest", "Mine.").caption == "Mine."


def test_unless_no_baseline_skips_only_the_missing_baseline_error():
    from automd_analysis.errors import AutomdError, ScoreStoreError

    def missing():
        raise ScoreStoreError("x", code="store.no_baseline", details={"tasks": ["a", "b"]})

    value, note = nbk.Report.unless_no_baseline("Figure 2a", missing)
    assert value is None
    html = note._repr_html_()
    assert "<strong>Figure 2a is skipped</strong>" in html
    assert "<code>a</code>, <code>b</code>" in html

    def other():
        raise AutomdError("broken", code="store.invalid")

    with pytest.raises(AutomdError, match="broken"):
        nbk.Report.unless_no_baseline("Figure 2a", other)


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=40), st.lists(st.text(max_size=8), min_size=1, max_size=3))
def test_the_page_table_is_the_file_table_without_its_caption(caption, cells):
    from automd_analysis.report.tables import render_html

    text = pd.DataFrame({"agent": cells, "value": [str(i) for i in range(len(cells))]})
    bold = pd.DataFrame(False, index=text.index, columns=text.columns)
    captioned = render_html(text, bold, name="t", caption=caption)
    assert nbk.without_caption(captioned, caption) == render_html(text, bold, name="t")
    assert nbk.without_caption(captioned, "") == captioned


def test_synthetic_tasks_are_marked_on_the_page_not_in_the_csv(report):
    import dataclasses

    from automd_analysis.report.provenance import SYNTHETIC_FOOTNOTE, SYNTHETIC_MARK

    facts = pd.DataFrame({"task": ["clf_a", "clf_b"], "synthetic": [True, False]})
    marked = dataclasses.replace(report, store=dataclasses.replace(report.store, tasks=facts))
    assert marked.synthetic == ["clf_a"]
    frame = pd.DataFrame({"task": ["clf_a", "clf_b"], "clf_a": [1.0, 2.0], "score": [0.5, 0.6]})
    view = marked.table(frame, "marked_table", caption="Scores.")
    html = view.paths["html"].read_text()
    assert f"clf_a{SYNTHETIC_MARK}" in html and f"clf_b{SYNTHETIC_MARK}" not in html
    assert html.count(f"clf_a{SYNTHETIC_MARK}") == 2  # the task cell and the column label
    assert SYNTHETIC_FOOTNOTE in html
    assert SYNTHETIC_MARK not in view.paths["csv"].read_text()  # exact data unchanged
    plain = report.table(frame, "plain_table", caption="Scores.")  # a store without task facts
    assert SYNTHETIC_MARK not in plain.paths["html"].read_text()


def test_process_metrics_of_an_experiment_without_agent_runs_publish(tmp_path):
    """Only baseline runs: the per-run table is empty and still publishes (its code problems
    used to be a DataFrame in ``attrs``, which pandas cannot compare: "truth value of a DataFrame
    is ambiguous")."""
    archive = _archive(tmp_path / "arch")
    runs = [storebuilder.run("baseline", "clf_a", 0, score=0.5)]
    scores = storebuilder.write_store(runs, tmp_path / "scores")
    report = open_report(archive=archive, scores_dir=scores, output_dir=tmp_path / "out")
    per_run = report.process_metrics(experiment="main", backend="hashing")
    assert per_run.empty and per_run.attrs["code_problems"] == []
    view = report.table(per_run, "process_metrics_runs")
    assert view.paths["csv"].read_text().startswith("run_id,experiment,agent")
