"""`automd regenerate` end to end on the committed fixture archive (through the real CLI)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest
import yaml
from notebook_factory import code, markdown, parameters_cell, write_notebook

from automd_analysis.app.pipeline import REPORT_MARKER
from automd_analysis.report.index_headlines import index_headlines

#: Integration tests (CLI, end to end, demo cohorts): `make test-fast` skips them.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "small"
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9]*.ipynb"))
#: The CSV contract: every table docs/tables.md documents must be exported by the notebooks.
CONTRACT_TABLES = re.findall(
    r"^\| `([a-z0-9_]+)\.csv` \|", (ROOT / "docs" / "tables.md").read_text(), flags=re.M
)
EVIL = "<script>alert('archive')</script>"


def _regenerate(*args: str | Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    env = None
    if pythonpath is not None:  # added to the path the tests run with (a checkout may be on it)
        extra = [str(pythonpath), *filter(None, [os.environ.get("PYTHONPATH")])]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(extra))
    return subprocess.run(
        [sys.executable, "-m", "automd_analysis", "regenerate", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )


def _user_metric_module(directory: Path) -> Path:
    """docs/extending.md's example module, saved in ``directory`` (regenerate passes --metric on)."""
    source = re.search(r"```python\n(.*?)```", (ROOT / "docs" / "extending.md").read_text(), re.S)
    (directory / "my_metrics.py").write_text(source.group(1))
    return directory


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    """The fixture archive, copied, with an archive string that must be escaped in HTML."""
    target = tmp_path_factory.mktemp("archive") / "small"
    shutil.copytree(FIXTURE / "archive", target)
    meta = yaml.safe_load((target / "archive.yaml").read_text())
    meta["description"] = f"Fixture copy {EVIL} & friends"
    (target / "archive.yaml").write_text(yaml.safe_dump(meta))
    return target


@pytest.fixture(scope="module")
def two_reports(archive, tmp_path_factory):
    """The same archive regenerated twice (the second run re-scores from the cache)."""
    base = tmp_path_factory.mktemp("regen")
    scores = base / "scores"
    common = [
        "--data",
        FIXTURE / "data",
        "--manifests",
        FIXTURE / "manifests",
        "--scores",
        scores,
        "--jobs",
        "2",
        # notebook 07: the fixture's runs cannot be re-run, so it reads the fixture's masking
        # results; embeddings pinned to the deterministic fallback (MiniLM may be installed)
        "--masking-results",
        FIXTURE / "masking.csv",
        "--embedding-backend",
        "hashing",
        # a metric of the user's own (docs/extending.md): table extra_metrics_by_agent
        "--metric",
        "my_metrics:sens_at_90_spec",
    ]
    site = _user_metric_module(tmp_path_factory.mktemp("site"))
    runs = [
        _regenerate(archive, "--out", base / name, *common, pythonpath=site)
        for name in ("first", "second")
    ]
    return base, scores, runs


@pytest.mark.slow
def test_regenerate_builds_the_whole_report(two_reports):
    base, scores, runs = two_reports
    first = runs[0]
    assert first.returncode == 0, first.stderr
    out = base / "first"
    assert "Report for archive 'small'" in first.stdout
    assert (out / "index.html").is_file() and (out / REPORT_MARKER).is_file()
    assert (scores / "scores.parquet").is_file()

    for name in NOTEBOOKS:
        page = out / "html" / f"{name}.html"
        assert page.is_file(), name
        text = page.read_text()
        assert "open_report(" not in text and "report.table(" not in text  # code hidden
        executed = nbformat.read(out / "notebooks" / f"{name}.ipynb", as_version=4)
        errors = [
            o
            for c in executed.cells
            if c.cell_type == "code"
            for o in c.outputs
            if o.output_type == "error"
        ]
        assert not errors, f"{name}: {errors}"
        assert all(c.execution_count is not None for c in executed.cells if c.cell_type == "code")

    for table in CONTRACT_TABLES:
        for ext in ("csv", "tex", "html"):
            assert (out / "tables" / f"{table}.{ext}").is_file(), f"{table}.{ext}"
    for figure in (
        "fig2a_ece_decomposition",
        "fig2b_recalibration",
        "fig4_objectives",
        "fig3_pair_changes",
        "fig5_development",
        "process_spearman",
        # intervals and calibration measures (notebooks 01, 02, 04, 06)
        "table2_forest",
        "pairwise_score",
        "table3_forest",
        "pairwise_ece",
        "calibration_measure_ranks",
        "decision_curves",
        "table5_forest",
        "table7_forest",
    ):
        for ext in ("png", "svg"):
            assert (out / "figures" / f"{figure}.{ext}").is_file()
    page = (out / "html" / "02_calibration_and_practices.html").read_text()
    assert "data:image/png;base64," in page  # figures embedded in the page

    index = (out / "index.html").read_text()
    assert EVIL not in index and "&lt;script&gt;alert(&#x27;archive&#x27;)&lt;/script&gt;" in index
    for name in NOTEBOOKS:
        assert f'href="html/{name}.html"' in index
    assert 'href="tables/table2_primary_scores.csv"' in index
    assert 'src="figures/fig2a_ece_decomposition.png"' in index
    store = json.loads((scores / "store.json").read_text())
    assert f">{store['scorer_version']}<" in index
    # notebook 07 read the supplied masking results; the masking step itself did not run
    supplied = pd.read_csv(FIXTURE / "masking.csv")
    assert (
        f"masking test of the real-time rule (paper App. G): {len(supplied)} eligible run(s), "
        f"{int((supplied['flagged'].astype(str).str.lower() == 'true').sum())} flagged, "
        f"{int((supplied['status'] == 'error').sum())} could not be tested; results supplied in "
        "masking.csv (not re-run)"
    ) in index
    assert not (scores / "masking.parquet").exists()
    masking = (out / "tables" / "masking_runs.csv").read_text().splitlines()
    assert len(masking) == len((FIXTURE / "masking.csv").read_text().splitlines())
    page = (out / "html" / "07_methods_and_development.html").read_text()
    assert "hashing:" in page and "minilm" not in page.lower()
    # the code of every main-experiment agent version was embedded before the notebooks ran
    scripts = {
        path.read_text()
        for path in (FIXTURE / "archive" / "main").glob("*/*/rep*/code/*/train.py")
        if path.parts[-6] != "baseline"
    }
    assert f"code embeddings: {len(scripts)} distinct scripts, backend hashing:" in index
    assert len(list((scores / "embeddings").rglob("*.npy"))) == len(scripts)


@pytest.mark.slow
def test_the_index_leads_with_findings_and_every_link_resolves(two_reports):
    """Issue 22 item 2: 3-6 headline sentences, each with its interval and a link to its table
    on its page; every page's table of contents links to sections of that page."""
    import html as html_lib

    base, _, runs = two_reports
    assert runs[0].returncode == 0, runs[0].stderr
    out = base / "first"
    index = (out / "index.html").read_text()
    findings = re.search(r'<h2>Findings</h2>\s*<ul class="findings">(.*?)</ul>', index, re.S)
    assert findings, "the index has no Findings section"
    items = re.findall(r"<li>(.*?)</li>", findings.group(1), re.S)
    assert 3 <= len(items) <= 6
    assert index.index("<h2>Findings</h2>") < index.index("<h2>Analyses</h2>")  # leads
    for item in items:
        assert "95% CI" in item, item
        (href,) = re.findall(r'href="([^"]+)"', item)
        page, anchor = href.split("#")
        assert f'id="{anchor}"' in (out / page).read_text(), href
    # issue 30 item 1: each sentence is computed once, by its notebook, and quoted by the index
    recorded = [
        row["text"]
        for path in sorted((out / "findings").glob("*.json"))
        for row in json.loads(path.read_text())
    ]
    quoted = [h.text for h in index_headlines(out)]
    assert len(quoted) == len(items) and set(quoted) <= set(recorded)
    for name in NOTEBOOKS:
        text = (out / "html" / f"{name}.html").read_text()
        nav = re.search(r'<nav class="automd-contents">(.*?)</nav>', text, re.S)
        sections = re.findall(r'<h2 id="([^"]+)"', text)
        assert (nav is not None) == (len(sections) >= 3), name
        if nav:
            targets = [html_lib.unescape(t) for t in re.findall(r'href="#([^"]+)"', nav.group(1))]
            assert targets == [html_lib.unescape(s) for s in sections], name


def test_same_archive_twice_gives_byte_identical_tables(two_reports):
    base, _, runs = two_reports
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    first, second = base / "first" / "tables", base / "second" / "tables"
    names = sorted(p.name for p in first.glob("*.csv"))
    assert names == sorted(p.name for p in second.glob("*.csv"))
    assert len(CONTRACT_TABLES) >= 20 and set(CONTRACT_TABLES) <= {n[:-4] for n in names}
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    assert "0 scored" in runs[1].stdout  # the second run did no metric work
    # the index holds only relative links and no timestamp: identical too
    assert (base / "first" / "index.html").read_bytes() == (
        base / "second" / "index.html"
    ).read_bytes()


# ---------------------------------------------------------------------------------------------
# failure handling, skipping and the output directory (tiny notebooks, pre-scored store)


@pytest.fixture(scope="module")
def scored(archive, tmp_path_factory) -> Path:
    from automd_analysis.scoring import score_archive

    scores = tmp_path_factory.mktemp("scored") / "scores"
    score_archive(archive, scores, data=FIXTURE / "data", manifests=FIXTURE / "manifests")
    return scores


def _tiny_notebooks(directory: Path, broken: bool = True, requires: list | None = None) -> Path:
    write_notebook(
        directory / "01_fine.ipynb",
        [
            markdown("# Fine"),
            parameters_cell("archive = None\nscores_dir = None\noutput_dir = None"),
            code(
                "from automd_analysis.app.notebook import open_report\n"
                "report = open_report(archive=archive, scores_dir=scores_dir, "
                "output_dir=output_dir)\n"
                "report.overview()"
            ),
        ],
    )
    if broken:
        write_notebook(
            directory / "02_broken.ipynb",
            [
                markdown("# Broken"),
                parameters_cell("archive = None"),
                code("x = 1"),
                code("# this cell fails\n{}['no_such_column']"),
            ],
        )
    if requires is not None:
        path = write_notebook(
            directory / "03_needs_role.ipynb", [markdown("# Needs"), parameters_cell("x = 1")]
        )
        nb = nbformat.read(path, as_version=4)
        nb.metadata["automd"] = {"requires": requires}
        nbformat.write(nb, path)
    return directory


def test_failing_notebook_fails_the_command_naming_the_cell(archive, scored, tmp_path):
    notebooks = _tiny_notebooks(tmp_path / "nbs", requires=["no_such_role"])
    out = tmp_path / "out"
    result = _regenerate(
        archive, "--scores", scored, "--no-score", "--notebooks", notebooks, "--out", out
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "02_broken.ipynb: cell 3 (`# this cell fails`): KeyError: 'no_such_column'" in (
        result.stderr
    )
    assert str(out / "notebooks" / "02_broken.ipynb") in result.stderr
    # the rest of the report is still built; the failure and the skipped notebook are listed
    assert (out / "html" / "01_fine.html").is_file()
    assert not (out / "html" / "02_broken.html").exists()
    index = (out / "index.html").read_text()
    assert "masking test: not run - archive code is never executed unless you ask" in index
    assert "02_broken: FAILED" in index
    assert "03_needs_role: skipped" in index and "no_such_role" in index
    assert not (out / "notebooks" / "03_needs_role.ipynb").exists()
    assert (out / "tables" / "overview_runs.csv").is_file()


def test_refuses_to_overwrite_a_directory_it_did_not_write(archive, scored, tmp_path):
    notebooks = _tiny_notebooks(tmp_path / "nbs", broken=False)
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.tex").write_text("do not delete")
    result = _regenerate(
        archive, "--scores", scored, "--no-score", "--notebooks", notebooks, "--out", out
    )
    assert result.returncode == 2
    assert "not written by `automd regenerate`" in result.stderr
    assert (out / "thesis.tex").read_text() == "do not delete"
    assert not (out / "index.html").exists()


def test_rebuilding_a_report_clears_its_old_outputs(archive, scored, tmp_path):
    notebooks = _tiny_notebooks(tmp_path / "nbs", broken=False)
    out = tmp_path / "out"
    args = [archive, "--scores", scored, "--no-score", "--notebooks", notebooks, "--out", out]
    assert _regenerate(*args).returncode == 0
    stale = out / "tables" / "from_an_old_notebook.csv"
    stale.write_text("old")
    (out / "notes.txt").write_text("mine")  # not part of the report layout: kept
    assert _regenerate(*args).returncode == 0
    assert not stale.exists()
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "tables" / "overview_runs.csv").is_file()


def test_bad_notebook_07_options_are_clear_errors(archive, scored, tmp_path):
    args = [archive, "--scores", scored, "--no-score", "--out", tmp_path / "o"]
    result = _regenerate(*args, "--embedding-backend", "bert")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "unknown embedding backend 'bert'" in result.stderr and "hashing" in result.stderr
    result = _regenerate(*args, "--masking-results", tmp_path / "none.csv")
    assert result.returncode == 2 and "masking results file not found" in result.stderr
    # notebook parameters: an unknown name is refused (papermill would silently ignore it)
    result = _regenerate(*args, "-p", "n_binz=15")
    assert result.returncode == 2 and "no notebook declares a parameter called 'n_binz'" in (
        result.stderr
    )
    assert "n_bins" in result.stderr  # the fix lists the declared ones
    result = _regenerate(*args, "-p", "seed=3")
    assert result.returncode == 2 and "'seed' is fixed by the pipeline" in result.stderr
    assert "Fix: use --seed" in result.stderr  # names the option to use instead
    result = _regenerate(*args, "-p", "oops")
    assert result.returncode == 2 and "NAME=VALUE" in result.stderr
    assert not (tmp_path / "o").exists()  # checked before anything is written


def test_missing_archive_and_missing_store_are_clear_errors(archive, tmp_path):
    result = _regenerate(tmp_path / "nope", "--out", tmp_path / "o")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "archive directory not found" in result.stderr
    result = _regenerate(
        archive, "--scores", tmp_path / "empty", "--no-score", "--out", tmp_path / "o"
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "score store directory not found" in result.stderr
    assert "automd score" in result.stderr


# ---------------------------------------------------------------------------------------------
# every page as a reader sees it: figure widths and font sizes, collapsed tables, number formats


#: Smallest text size (pt) of a figure as the page shows it.
MIN_DISPLAYED_PT = 9.0
#: Header cells of p-value columns (CSV names; display titles).
P_HEADERS = {"p_value", "p_holm", "p", "Holm p", "p (Holm)", "p-value", "adjusted p"}
_P_TEXT = re.compile(r"^(–|0|[01]\.\d{3}|\d\.\de-\d{2})$")
_COUNT_TEXT = re.compile(r"^(–|\d+|\d+\.\d)$")


@pytest.mark.slow
def test_every_page_reads_at_the_page_width(two_reports):
    from render_checks import displayed_pt, read_page, svg_font_sizes, svg_width_in

    from automd_analysis.report.presentation import LONG_TABLE_ROWS, MIN_ROWS_TO_FOLD
    from automd_analysis.report.views import DISPLAY_WIDTH_PX, display_width

    base, _, runs = two_reports
    assert runs[0].returncode == 0, runs[0].stderr
    out = base / "first"
    problems: list[str] = []
    n_figures = n_tables = n_collapsed = 0
    for name in NOTEBOOKS:
        page = read_page(out / "html" / f"{name}.html")
        # every image on the page is a figure view: known width, a caption underneath
        if page.images != len(page.figures):
            problems.append(f"{name}: {page.images} images, {len(page.figures)} figure views")
        for figure in page.figures:
            n_figures += 1
            where = f"{name}: figure {figure.name}"
            svg = (out / "figures" / f"{figure.name}.svg").read_text()
            width_in = svg_width_in(svg)
            if figure.width_px != display_width(width_in):
                problems.append(f"{where} shown {figure.width_px} px for {width_in:.2f} in")
                continue
            if figure.width_px > DISPLAY_WIDTH_PX:
                problems.append(f"{where} shown {figure.width_px} px wide")
            caption = figure.caption.split(".", 1)[1].strip() if "." in figure.caption else ""
            if len(caption) < 20:
                problems.append(f"{where} has no caption ({figure.caption!r})")
            sizes = svg_font_sizes(svg)
            small = [
                (text, round(displayed_pt(size, width_in, figure.width_px), 1))
                for text, size in sizes
                if displayed_pt(size, width_in, figure.width_px) < MIN_DISPLAYED_PT
            ]
            if not sizes:
                problems.append(f"{where}: no text found in the SVG")
            if small:
                problems.append(f"{where}: text below {MIN_DISPLAYED_PT} pt: {small[:4]}")
        for table in page.tables:
            n_tables += 1
            rows = len(table.rows)
            label = f"{name}: table {table.header[:3]}"
            if rows > LONG_TABLE_ROWS and not table.collapsed:
                problems.append(f"{label} has {rows} rows and is not collapsed")
            n_collapsed += table.collapsed
            # one spelling on every page (CSV column names keep theirs)
            problems.extend(f"{label}: header {h!r}" for h in table.header if "enalized" in h)
            for j, title in enumerate(table.header):
                cells = [r[j] for r in table.rows if j < len(r)]
                if title in P_HEADERS:
                    bad = [c for c in cells if not _P_TEXT.match(c)]
                    if bad:
                        problems.append(f"{label}: p-values {bad[:3]}")
                if title == "n" or title.startswith(("n_", "n ")):
                    bad = [c for c in cells if not _COUNT_TEXT.match(c)]
                    if bad:
                        problems.append(f"{label}: counts {title} {bad[:3]}")
                repeated = j > 0 and len(cells) >= MIN_ROWS_TO_FOLD and len(set(cells)) == 1
                if repeated and len(table.header) > 2:  # a label column and one value: kept
                    problems.append(f"{label}: column {title!r} repeats {cells[0]!r}")
    assert not problems, "\n".join(problems)
    assert n_figures >= 14 and n_tables >= 20  # the checks ran on the real pages
    assert n_collapsed >= 2  # the fixture has long tables (subgroup scores, process metrics)


@pytest.mark.slow
def test_every_figure_decodes_at_once_and_no_table_wraps_an_interval(two_reports):
    """Issue 22 items 1 and 6 on the rendered report: in every saved figure no series that is
    not an agent takes an agent colour or lacks a legend entry, the decision curves' simple
    baseline, treat-none and treat-all look different, every task label of the fixture (all its
    tasks are synthetic) carries the mark; each agent has one colour in every figure; no table
    cell holding an interval can wrap, and the page's own rules win over the notebook
    stylesheet (tables laid out by content, output areas scroll sideways)."""
    from render_checks import (
        agent_series_colors,
        figure_encoding_problems,
        last_declaration,
        wrapping_interval_cells,
    )

    from automd_analysis.report.figure_style import AGENT_PALETTE

    base, _, runs = two_reports
    assert runs[0].returncode == 0, runs[0].stderr
    out = base / "first"
    synthetic = sorted(p.stem for p in (FIXTURE / "manifests").glob("*.yaml"))
    problems: list[str] = []
    colors: dict[str, set[str]] = {}
    svgs = sorted((out / "figures").glob("*.svg"))
    for path in svgs:
        svg = path.read_text()
        problems += [
            f"{path.stem}: {p}" for p in figure_encoding_problems(svg, AGENT_PALETTE, synthetic)
        ]
        for agent, used in agent_series_colors(svg).items():
            colors.setdefault(agent, set()).update(used)
    problems += [f"agent {a} has colours {sorted(c)}" for a, c in colors.items() if len(c) != 1]
    decision = (out / "figures" / "decision_curves.svg").read_text()
    assert 'id="treat_none:' in decision and ":baseline" in decision  # the check had material
    assert len(svgs) >= 20 and len(colors) >= 3
    labelled = [p for p in svgs if any(f"{t}\u2020" in p.read_text() for t in synthetic)]
    assert len(labelled) >= 10  # task labels were found (and marked) in many figures
    n_intervals = 0
    for name in NOTEBOOKS:
        page = (out / "html" / f"{name}.html").read_text()
        problems += [f"{name}: {cell} can wrap" for cell in wrapping_interval_cells(page)]
        n_intervals += len(re.findall(r"<td[^>]*>[^<]*\[[^<\]]*,[^<\]]*\]", page))
        for selector, prop, wanted in (
            (".jp-RenderedHTMLCommon table", "table-layout", "auto"),
            (".jp-OutputArea-output", "display", "block"),
            (".jp-OutputArea-output", "overflow-x", "auto"),
        ):
            if last_declaration(page, selector, prop) != wanted:
                problems.append(f"{name}: {selector} {{{prop}}} is not {wanted}")
    assert n_intervals >= 20  # the pages do show intervals in their tables
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_every_page_reads_true_and_every_table_is_complete(two_reports):
    """Issue 29 items 3 and 4 on the rendered report: what a page says about its tables holds for
    them (``tests/prose_claims.py``); every table has a caption, a sentence when it is empty and
    headers from its declaration (no raw CSV name); ``†`` means a synthetic task and nothing else
    (``§``/``‡``, few valid runs, only where the caption explains them); a number never wraps;
    no two texts of a figure overlap; the index shows no Markdown marks."""
    from prose_claims import CLAIMS, contradicted_claims, page_tables, page_text
    from render_checks import overlapping_texts, read_page, wrapping_number_cells

    from automd_analysis.analysis.catalog import TABLES
    from automd_analysis.analysis.catalog.declaration import EMPTY_NOTE, FEW_VALID_NOTE
    from automd_analysis.report.provenance import SYNTHETIC_FOOTNOTE, SYNTHETIC_MARK

    base, _, runs = two_reports
    assert runs[0].returncode == 0, runs[0].stderr
    out = base / "first"
    synthetic = {p.stem for p in (FIXTURE / "manifests").glob("*.yaml")}
    names = synthetic | {f"{t}{SYNTHETIC_MARK}" for t in synthetic}
    names |= {p.name for p in (FIXTURE / "archive").glob("*/*") if p.is_dir()}  # agents
    problems: list[str] = []
    stated: set[str] = set()
    empty_sentences = {t.empty_note for t in TABLES.values()} | {EMPTY_NOTE}
    n_empty = 0
    for name in NOTEBOOKS:
        html = (out / "html" / f"{name}.html").read_text()
        text = page_text(html)
        published = [t.name for t in TABLES.values() if t.notebook == name]
        problems += [
            f"{name}: {p}"
            for p in contradicted_claims(text, page_tables(out / "tables", published))
        ]
        stated |= {c.name for c in CLAIMS if c.pattern.search(text)}
        problems += [f"{name}: {cell} can wrap" for cell in wrapping_number_cells(html)]
        for table in read_page(out / "html" / f"{name}.html").tables:
            label = f"{name}: table {table.caption[:40]!r}"
            words = table.caption.split(".", 1)[1].strip() if "." in table.caption else ""
            if len(words) < 10:
                problems.append(f"{label} has no caption")
            if not table.rows:
                n_empty += 1
                if not any(sentence in table.caption for sentence in empty_sentences):
                    problems.append(f"{label} is empty and says nothing about it")
            raw = [h for h in table.header if "_" in h and h not in names]
            if raw:
                problems.append(f"{label}: raw CSV headers {raw}")
            cells = [c for row in table.rows for c in row] + table.header
            daggers = [c for c in cells if SYNTHETIC_MARK in c and c not in names]
            if daggers or (
                SYNTHETIC_MARK in " ".join(cells) and SYNTHETIC_FOOTNOTE not in table.caption
            ):
                problems.append(f"{label}: \u2020 not a synthetic task's mark: {daggers[:3]}")
            few = [c for c in cells if "\u00a7" in c or "\u2021" in c]
            if few and FEW_VALID_NOTE not in table.caption:
                problems.append(f"{label}: few-valid-run marks without their note: {few[:3]}")
    assert n_empty >= 1  # the fixture has an empty table (its sentence was checked)
    assert {"bias-corrected interval reaches up to the plug-in",
            "plug-in ECE without an interval"} <= stated  # the claims had material  # fmt: skip
    for path in sorted((out / "figures").glob("*.svg")):
        problems += [f"{path.stem}: {p}" for p in overlapping_texts(path.read_text())]
    index = page_text((out / "index.html").read_text())
    if "`" in index or "**" in index:
        problems.append(f"index shows Markdown marks: {index[index.find('`') - 60 :][:160]!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_notebook_02_skips_figure_2a_with_a_note_without_baseline_runs(archive, tmp_path):
    """A store without simple-baseline runs has no reference ECE: Figure 2a (and its table) is
    skipped with a note, every other section of notebook 02 still renders."""
    target = tmp_path / "small"
    shutil.copytree(archive, target)
    shutil.rmtree(target / "main" / "baseline")
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    shutil.copy(ROOT / "notebooks" / "02_calibration_and_practices.ipynb", notebooks)
    out = tmp_path / "report"
    result = _regenerate(
        target,
        "--out",
        out,
        "--data",
        FIXTURE / "data",
        "--manifests",
        FIXTURE / "manifests",
        "--scores",
        tmp_path / "scores",
        "--notebooks",
        notebooks,
        "--jobs",
        "1",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    page = (out / "html" / "02_calibration_and_practices.html").read_text()
    assert "Figure 2a is skipped" in page and "no simple-baseline runs" in page
    assert not (out / "figures" / "fig2a_ece_decomposition.png").exists()
    assert (out / "figures" / "fig2b_recalibration.png").is_file()  # the rest still rendered
    assert (out / "tables" / "table13_task_ece.csv").is_file()


# ---------------------------------------------------------------------------------------------
# incremental regenerate: unchanged notebooks are reused, changed ones re-run, a kill is safe


def _files(out: Path) -> dict[str, tuple[bytes, int]]:
    """Bytes and modification time of every published file (tables, figures, pages, copies)."""
    return {
        str(p.relative_to(out)): (p.read_bytes(), p.stat().st_mtime_ns)
        for sub in ("tables", "figures", "findings", "notebooks", "html")
        for p in sorted((out / sub).glob("*"))
    }


def _fine_notebook(path: Path, table: str) -> Path:
    return write_notebook(
        path,
        [
            markdown(f"# {table}"),
            parameters_cell("archive = None\nscores_dir = None\noutput_dir = None"),
            code(
                "from automd_analysis.app.notebook import open_report\n"
                "report = open_report(archive=archive, scores_dir=scores_dir, "
                "output_dir=output_dir)\n"
                f"report.table(report.store.runs[['run_id', 'agent']], {table!r})"
            ),
        ],
    )


def test_an_unchanged_report_is_reused_and_a_changed_notebook_reruns_alone(
    archive, scored, tmp_path
):
    notebooks = tmp_path / "nbs"
    first = _fine_notebook(notebooks / "01_first.ipynb", "first_runs")
    _fine_notebook(notebooks / "02_second.ipynb", "second_runs")
    out = tmp_path / "out"
    args = [archive, "--scores", scored, "--no-score", "--notebooks", notebooks, "--out", out]
    cold = _regenerate(*args)
    assert cold.returncode == 0, cold.stderr
    assert "notebook 01_first: runs (no earlier successful run)" in cold.stderr
    before, index = _files(out), (out / "index.html").read_bytes()
    assert {"tables/first_runs.csv", "html/02_second.html"} <= set(before)

    warm = _regenerate(*args)
    assert warm.returncode == 0, warm.stderr
    assert "notebook 01_first: reused (inputs unchanged)" in warm.stderr
    assert "notebook 02_second: reused (inputs unchanged)" in warm.stderr
    assert "notebooks: running 0, reusing 2" in warm.stderr
    assert _files(out) == before  # not even rewritten
    assert (out / "index.html").read_bytes() == index  # rebuilt, the same

    nb = nbformat.read(first, as_version=4)
    nb.cells[0].source = "# first, reworded"
    nbformat.write(nb, first)
    edited = _regenerate(*args)
    assert edited.returncode == 0, edited.stderr
    assert "notebook 01_first: runs (the notebook changed)" in edited.stderr
    assert "notebook 02_second: reused (inputs unchanged)" in edited.stderr
    after = _files(out)
    assert after["html/02_second.html"] == before["html/02_second.html"]
    assert after["tables/first_runs.csv"][0] == before["tables/first_runs.csv"][0]  # same bytes
    assert "first, reworded" in (out / "html" / "01_first.html").read_text()

    (out / "tables" / "second_runs.csv").write_text("tampered")
    repaired = _regenerate(*args, "--seed", "3")
    assert "notebook 02_second: runs (its output tables/second_runs.csv is missing or was" in (
        repaired.stderr
    )
    assert (out / "tables" / "second_runs.csv").read_bytes() == before["tables/second_runs.csv"][0]


def test_a_changed_store_reruns_every_notebook_that_reads_it(archive, tmp_path):
    from automd_analysis.scoring import score_archive

    notebooks = tmp_path / "nbs"
    _fine_notebook(notebooks / "01_first.ipynb", "first_runs")
    scores = tmp_path / "scores"
    kw = {"data": FIXTURE / "data", "manifests": FIXTURE / "manifests"}
    score_archive(archive, scores, bootstrap=0, **kw)
    out = tmp_path / "out"
    args = [archive, "--scores", scores, "--no-score", "--notebooks", notebooks, "--out", out]
    assert _regenerate(*args).returncode == 0
    score_archive(archive, scores, bootstrap=20, **kw)  # another generation of the store
    again = _regenerate(*args)
    assert "notebook 01_first: runs (the score store changed)" in again.stderr


def test_a_killed_regenerate_never_leaves_a_notebook_marked_up_to_date(archive, scored, tmp_path):
    import os
    import signal
    import time

    notebooks = tmp_path / "nbs"
    _fine_notebook(notebooks / "01_first.ipynb", "first_runs")
    flag = tmp_path / "slow"
    flag.write_text("1")
    write_notebook(
        notebooks / "02_slow.ipynb",
        [
            markdown("# Slow"),
            parameters_cell("archive = None\nscores_dir = None\noutput_dir = None"),
            code(
                "import os, time\n"
                "from automd_analysis.app.notebook import open_report\n"
                "report = open_report(archive=archive, scores_dir=scores_dir, "
                "output_dir=output_dir)\n"
                "report.table(report.store.runs[['run_id']], 'slow_runs')\n"
                f"while os.path.exists({str(flag)!r}):\n    time.sleep(0.2)"
            ),
        ],
    )
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "automd_analysis", "regenerate", str(archive), "--scores",
           str(scored), "--no-score", "--notebooks", str(notebooks), "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, start_new_session=True, stderr=subprocess.DEVNULL)
    staged = out / ".automd" / "staging" / "02_slow" / "tables" / "slow_runs.csv"
    deadline = time.monotonic() + 600
    try:
        while not staged.exists():
            assert proc.poll() is None, "the regenerate ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the pipeline, its workers and their kernels
        proc.wait()
    assert not (out / ".automd" / "02_slow.json").exists()  # not marked up to date
    assert not (out / "tables" / "slow_runs.csv").exists()  # nothing half-published
    flag.unlink()
    rerun = _regenerate(*cmd[4:])
    assert rerun.returncode == 0, rerun.stderr
    assert "notebook 02_slow: runs (no earlier successful run)" in rerun.stderr
    assert (out / "tables" / "slow_runs.csv").is_file()
    assert not (out / ".automd" / "staging").exists()


def test_a_changed_archive_description_reruns_the_pages_that_show_it(archive, scored, tmp_path):
    """The provenance line under every page title comes from archive.yaml, not from the store, so
    it is an input of its own: a new description must not leave the old one on reused pages."""
    copy = tmp_path / "archive"
    shutil.copytree(archive, copy)
    notebooks = tmp_path / "nbs"
    _fine_notebook(notebooks / "01_first.ipynb", "first_runs")
    out = tmp_path / "out"
    args = [copy, "--scores", scored, "--no-score", "--notebooks", notebooks, "--out", out]
    assert _regenerate(*args).returncode == 0
    assert "Fixture copy" in (out / "html" / "01_first.html").read_text()
    meta = yaml.safe_load((copy / "archive.yaml").read_text())
    meta["description"] = "A rewritten description of the same runs."
    (copy / "archive.yaml").write_text(yaml.safe_dump(meta))
    again = _regenerate(*args)
    assert again.returncode == 0, again.stderr
    assert "notebook 01_first: runs (the archive's description changed)" in again.stderr
    page = (out / "html" / "01_first.html").read_text()
    assert "A rewritten description of the same runs." in page and "Fixture copy" not in page
