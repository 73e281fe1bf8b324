"""Every run as a page (issue 31): the pages built from the score store alone, their links,
their numbers, what is rebuilt, and how they read in a browser."""

from __future__ import annotations

import dataclasses
import html
import json
import math
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from page_links import active_content, broken_links, visible_text

from automd_analysis.analysis.store import ScoreStore, load_store
from automd_analysis.archive import open_archive
from automd_analysis.masking.results import read_masking_results
from automd_analysis.report import run_page_html
from automd_analysis.report.run_code import (
    compare_files,
    diff_table,
    evidence_targets,
    highlight_lines,
    split_lines,
    whole_file_lines,
)
from automd_analysis.report.run_data import RunInputs, collect_runs
from automd_analysis.report.run_links import link_run_ids, relative_href, run_page
from automd_analysis.report.run_pages import MANIFEST, build_run_pages
from automd_analysis.report.run_versions import tree_nodes, version_rows

SMALL = Path(__file__).resolve().parent / "fixtures" / "small"
IMPORTED = "main/aide/fx_cls/rep0"
IMPORTED_AIS = "main/ais/fx_cls/rep0"


# --------------------------------------------------------------------------------------------------
# paths and links


def test_a_run_s_page_is_named_by_its_run_id_or_by_a_hash_when_it_is_not_a_plain_name():
    assert run_page("main/aide/demo_sepsis/rep2") == "runs/main/aide/demo_sepsis/rep2.html"
    for hostile in ("../../etc/rep0", "main/a/<b>/rep1", "main/a/t/rep1/x", "a/b/c.html/rep0",
                    "main/a/t/repX", "/abs/a/t/rep0", "main/_code/t/rep0", ""):  # fmt: skip
        page = run_page(hostile)
        assert re.fullmatch(r"runs/_id/[0-9a-f]{24}\.html", page), (hostile, page)
    assert run_page("x/a/t/rep0") != run_page("x/a/t/rep1")


def test_relative_links_between_report_files():
    assert relative_href("html/07.html", "runs/main/a/t/rep0.html") == "../runs/main/a/t/rep0.html"
    assert relative_href("runs/index.html", "index.html") == "../index.html"
    assert relative_href("runs/main/a/t/rep0.html", "runs/main/a/t/rep0.svg") == "rep0.svg"


def test_run_ids_shown_as_text_become_links_and_nothing_else_does():
    known = {"main/aide/t/rep0", "main/codex/t/rep1"}
    body = (
        '<td class="data">main/<wbr/>aide/<wbr/>t/<wbr/>rep0</td>'
        "<p>Run main/codex/t/rep1 ended early; main/other/t/rep0 is not known.</p>"
        '<img alt="main/aide/t/rep0" src="data:image/png;base64,main/aide/t/rep0">'
        '<a href="x">main/aide/t/rep0</a><style>.main/aide/t/rep0{}</style>'
        "<td>xmain/aide/t/rep0</td><td>main/aide/t/rep01</td>"
    )
    out = link_run_ids(body, known, "html/07.html")
    assert out.count('class="automd-run"') == 2
    assert ('<a class="automd-run" href="../runs/main/aide/t/rep0.html">main/<wbr/>aide/<wbr/>t/'
            "<wbr/>rep0</a>") in out  # fmt: skip
    assert (
        '<a class="automd-run" href="../runs/main/codex/t/rep1.html">main/codex/t/rep1</a>' in out
    )
    # attributes, existing links, styles, longer words and unknown runs are left as they were
    for untouched in ('<img alt="main/aide/t/rep0" src="data:image/png;base64,main/aide/t/rep0">',
                      '<a href="x">main/aide/t/rep0</a>', "<style>.main/aide/t/rep0{}</style>",
                      "<td>xmain/aide/t/rep0</td>", "<td>main/aide/t/rep01</td>",
                      "main/other/t/rep0 is"):  # fmt: skip
        assert untouched in out
    assert link_run_ids(body, set(), "html/07.html") == body


# --------------------------------------------------------------------------------------------------
# code: lines, highlighting, diffs, citations


def test_lines_are_counted_as_the_annotator_counts_them():
    assert split_lines("a\r\nb\rc\n\n") == ["a", "b", "c", ""]
    assert split_lines("no newline") == ["no newline"]


@settings(max_examples=60)
@given(
    lines=st.lists(
        st.text(
            alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
            max_size=40,
        ),
        min_size=1,
        max_size=12,
    ),  # fmt: skip
    name=st.sampled_from(["a.py", "b.json", "c.yaml", "d.txt", "e.sh"]),
)
def test_highlighting_keeps_every_line_and_escapes_it(lines, name):
    out = highlight_lines(lines, name)
    assert len(out) == len(lines)
    for source, shown in zip(lines, out, strict=True):
        assert "<" not in re.sub(r'</?span( class="[a-z0-9]+")?>', "", shown)
        assert not re.search(r"[\x00-\x08\x0a-\x1f\x7f]", shown)  # controls never raw
        assert html.unescape(re.sub(r"<[^>]+>", "", shown)) == "".join(
            _CONTROL_PICTURE.get(c, c) for c in source
        )


#: What a page shows for a control character: its Unicode control picture.
_CONTROL_PICTURE = {"\x00": "\u2400", "\x1b": "\u241b", "\x7f": "\u2421"} | {
    chr(c): chr(0x2400 + c) for c in range(0x20) if c != 0x09
}


def test_a_version_is_compared_with_its_parent_file_by_file():
    parent = {
        "code/v1/train.py": "a\nb\nc\nd\n",
        "code/v1/old.py": "x\n",
        "code/v1/same.json": "{}",
    }
    files = {
        "code/v2/train.py": "a\nB\nc\nd\ne\n",
        "code/v2/new.py": "n\n",
        "code/v2/same.json": "{}",
    }
    changes = {c.name: c for c in compare_files(parent, files, "v1", "v2")}
    assert {n: c.status for n, c in changes.items()} == {
        "new.py": "added", "old.py": "deleted", "same.json": "unchanged", "train.py": "modified"
    }  # fmt: skip
    train = changes["train.py"]
    assert (train.added, train.removed) == (2, 1)
    assert train.rows == [
        ("@", 1, 1, "@@ -1,4 +1,5 @@"),
        (" ", 1, 1, "a"),
        ("-", 2, None, "b"),
        ("+", None, 2, "B"),
        (" ", 3, 3, "c"),
        (" ", 4, 4, "d"),
        ("+", None, 5, "e"),
    ]
    assert [c.status for c in compare_files(None, files, None, "v2")] == ["added"] * 3


def test_a_diff_is_highlighted_the_same_whatever_was_highlighted_before():
    # the docstring's closing quotes lie outside the hunk: lexed with the whole file, its first
    # line is a docstring; lexed within the hunk, a string. A page must not depend on which one
    # its process happened to highlight before (demo run pages differed between two builds).
    head = ['"""Training script v1.', "", "Change: baseline."] + [f"line {k}" for k in range(9)]
    old = "\n".join([*head, '"""', "x = 1"]) + "\n"
    new = old.replace("v1.", "v2.")
    (change,) = compare_files({"code/v1/t.py": old}, {"code/v2/t.py": new}, "v1", "v2")
    fresh = diff_table(change, "c")
    whole_file_lines("t.py", old), whole_file_lines("t.py", new)
    assert diff_table(change, "c") == fresh
    assert '<span class="sd">' not in fresh  # the hunk alone: the opening quotes start a string


@settings(max_examples=60)
@given(
    a=st.lists(st.sampled_from(["x = 1", "y = 2", "", "z()", "# c"]), max_size=15),
    b=st.lists(st.sampled_from(["x = 1", "y = 3", "", "z()", "w = 0"]), max_size=15),
)
def test_diff_rows_quote_both_files_exactly(a, b):
    old, new = "\n".join(a) + "\n", "\n".join(b) + "\n"
    (change,) = compare_files({"code/p/f.py": old}, {"code/v/f.py": new}, "p", "v")
    if split_lines(old) == split_lines(new):
        assert change.status == "unchanged"
        return
    a_lines, b_lines = split_lines(old), split_lines(new)
    for kind, i, j, text in change.rows:
        if kind in " -":
            assert a_lines[i - 1] == text
        if kind in " +":
            assert b_lines[j - 1] == text
    assert change.added == sum(r[0] == "+" for r in change.rows)
    assert change.removed == sum(r[0] == "-" for r in change.rows)


def test_citations_are_read_as_file_and_line():
    assert evidence_targets("code/v2/train.py:186; code/v2/train.py:9;;notes:x") == [
        ("code/v2/train.py", 186),
        ("code/v2/train.py", 9),
        ("notes:x", None),
    ]
    assert evidence_targets(None) == []


# --------------------------------------------------------------------------------------------------
# the version table's numbers


def _inputs(search: str, metric: str, versions: list[dict], **over) -> RunInputs:
    run = {"run_id": "main/a/t/rep0", "search": search, "metric": metric, "agent": "a",
           "selected_version": versions[-1]["version"], "status": "valid"}  # fmt: skip
    selected = {"version": "selected", "is_selected": True, "valid": True, "metric": metric,
                "source_version": versions[-1]["version"], "raw": 0.8, "reported_val": 0.9,
                "score": 0.6, "score_ci_low": 0.55, "score_ci_high": 0.65}  # fmt: skip
    rows = [{"is_selected": False, "metric": metric, "valid": True} | v for v in versions]
    return RunInputs("main/a/t/rep0", run_page("main/a/t/rep0"), run, selected=selected,
                     versions=rows, **over)  # fmt: skip


def test_parents_are_recorded_inferred_for_linear_agents_or_roots():
    linear = version_rows(_inputs("linear", "auroc", [
        {"version": "v1"}, {"version": "v2"}, {"version": "v3", "parent": "v1"}]))  # fmt: skip
    assert [(r.version, r.parent, r.parent_inferred) for r in linear] == [
        ("selected", None, False), ("v1", None, False), ("v2", "v1", True), ("v3", "v1", False)
    ]  # fmt: skip
    tree = version_rows(_inputs("tree", "auroc", [
        {"version": "v1"}, {"version": "v2"}, {"version": "v3", "parent": "gone"}]))  # fmt: skip
    assert [r.parent for r in tree[1:]] == [None, None, None]


def test_the_gap_follows_table_18_s_rule():
    rows = version_rows(_inputs("linear", "auroc", [
        {"version": "v1", "reported_val": 0.75, "raw": 0.70},
        {"version": "v2", "reported_val": 0.75, "raw": None, "valid": False},
        {"version": "v3", "reported_val": None, "raw": 0.7}]))  # fmt: skip
    assert math.isclose(rows[0].gap, 0.9 - 0.8) and math.isclose(rows[1].gap, 0.75 - 0.70)
    assert rows[2].gap is None and rows[3].gap is None
    utility = version_rows(_inputs("linear", "utility_2019", [
        {"version": "v1", "reported_val": 0.75, "raw": 0.70}]))  # fmt: skip
    assert all(r.gap is None for r in utility)  # not the same scale


def test_the_figure_marks_invalid_files_failed_steps_and_the_selected_version():
    inputs = _inputs("linear", "auroc", [
        {"version": "v1", "raw": 0.7, "elapsed_min": 5.0},
        {"version": "v2", "valid": False, "elapsed_min": 9.0}],
        steps=[{"step": 3, "ok": False, "version": None, "elapsed_min": 12.0}])  # fmt: skip
    nodes = tree_nodes(inputs, version_rows(inputs))
    assert [(n.id, n.failed, n.selected, n.parent) for n in nodes] == [
        ("v1", False, False, None), ("v2", True, True, "v1"), ("step 3", True, False, None)
    ]  # fmt: skip


# --------------------------------------------------------------------------------------------------
# pages built from a scored fixture archive plus an imported run


def _aide_log(root: Path) -> Path:
    """An AIDE log (``journal.json`` as AIDE writes it) without prediction files."""
    import importer_sources as src

    nodes = [src.aide_node(i) for i in range(4)]
    nodes[2]["code"] = "import pandas as pd\nx = '<script>alert(1)</script>'\n"
    nodes[3].update(is_buggy=True, metric={"value": None, "maximize": None})
    n2p = {nodes[2]["id"]: nodes[0]["id"], nodes[3]["id"]: nodes[2]["id"]}
    src.write(root / "journal.json", src.aide_journal(nodes, n2p))
    src.write(root / "config.yaml", "agent:\n  code:\n    model: gpt-4.1\n")
    return root


def _ais_log(root: Path) -> Path:
    """An AI-Scientist-v2 log (two stage journals) without its final submission file."""
    import importer_sources as src

    stage1 = [src.ais_node(0, plot_code="import matplotlib\n"), src.ais_node(1)]
    stage1[1]["code"] = "import pandas as pd\nprint('<b>tuned</b>')\n"
    src.build_ais(root, {src.AIS_STAGES[0]: src.aide_journal(stage1, {stage1[1]["id"]:
                                                                       stage1[0]["id"]})})  # fmt: skip
    (root / "submission.csv").unlink()
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The small fixture archive with an imported AIDE run, scored, and its run pages."""
    from automd_analysis.importers import ImportOptions, import_source
    from automd_analysis.scoring import score_archive

    tmp = tmp_path_factory.mktemp("runpages")
    archive = tmp / "archive"
    shutil.copytree(SMALL / "archive", archive)
    import_source("aide", _aide_log(tmp / "log"), archive, ImportOptions(agent="aide", task="fx_cls"),
                  manifests=SMALL / "manifests")  # fmt: skip
    import_source("aiscientist-v2", _ais_log(tmp / "ais"), archive,
                  ImportOptions(agent="ais", task="fx_cls"), manifests=SMALL / "manifests")  # fmt: skip
    score_archive(archive, tmp / "scores", data=SMALL / "data", manifests=SMALL / "manifests",
                  bootstrap=20)  # fmt: skip
    store = load_store(tmp / "scores")
    out = tmp / "report"
    summary = build_run_pages(store, out, masking=read_masking_results(SMALL / "masking.csv"), description="fixture",
                              jobs=1, log=lambda _: None)  # fmt: skip
    (out / "index.html").write_text("the report index (written by regenerate after the runs)")
    return archive, store, out, summary


@pytest.mark.slow
def test_every_run_has_a_page_linked_from_the_index(built):
    _, store, out, summary = built
    assert (summary.n_runs, summary.built, summary.failed) == (len(store.runs), len(store.runs), [])
    for run_id in store.runs["run_id"]:
        assert (out / run_page(run_id)).is_file(), run_id
        assert (out / run_page(run_id).replace(".html", ".svg")).is_file(), run_id
    index = (out / "runs" / "index.html").read_text()
    linked = set(re.findall(r'href="([^"]+\.html)"', index)) - {"../index.html"}
    assert {relative_href("runs/index.html", run_page(r)) for r in store.runs["run_id"]} == linked
    assert store.runs.loc[store.runs["run_id"] == IMPORTED, "status"].item() == "not_scorable"


@pytest.mark.slow
def test_every_link_and_image_resolves_and_no_page_can_run_code(built):
    _, _, out, _ = built
    pages = sorted((out / "runs").rglob("*.html"))
    assert len(pages) > 50
    assert broken_links(out, pages) == []
    assert [(p.name, a) for p in pages for a in active_content(p)] == []


@pytest.mark.slow
def test_the_version_table_shows_the_stored_numbers(built):
    _, store, out, _ = built
    run_id = "main/alpha/fx_cls/rep0"
    text = visible_text(out / run_page(run_id)).replace("\N{NO-BREAK SPACE}", " ")
    scores = store.scores.loc[store.scores["run_id"] == run_id].set_index("version")
    sel = scores.loc["selected"]
    assert f"{sel['score']:.3f} [{sel['score_ci_low']:.3f}, {sel['score_ci_high']:.3f}]" in text
    assert f"{sel['ece_bc']:.3f} [{sel['ece_bc_ci_low']:.3f}, {sel['ece_bc_ci_high']:.3f}]" in text
    assert "automd score --version-bootstrap R computes them for every version" in text
    inputs = {i.run_id: i for i in collect_runs(store)}[run_id]
    for row in version_rows(inputs)[1:]:
        stored = scores.loc[row.version]
        assert row.raw == pytest.approx(stored["raw"]) and row.step == stored["step"]
        assert row.gap == pytest.approx(stored["reported_val"] - stored["raw"])  # auroc task
        assert f"{row.gap:.3f}" in text


@pytest.mark.slow
def test_codebook_citations_open_the_cited_line_of_the_archived_file(built):
    archive, store, out, _ = built
    checked = 0
    for run_id in store.annotations["run_id"].unique()[:6]:
        page = out / run_page(run_id)
        body = page.read_text()
        section = body[body.index('id="codebook"') :]
        cited = re.findall(r'<a href="([^"]+)"><code>([^<:]+):(\d+)</code></a>', section)
        for href, path, line in cited:
            target, anchor = html.unescape(href).split("#")
            assert anchor == f"L{line}"
            row = re.search(rf'<tr id="{anchor}"><td>.*?</td><td>(.*?)</td></tr>',
                            (page.parent / target).read_text())  # fmt: skip
            source = (archive / run_id / path).read_text().splitlines()[int(line) - 1]
            assert html.unescape(re.sub(r"<[^>]+>", "", row.group(1))) == source
            checked += 1
    assert checked >= 5


@pytest.mark.slow
def test_the_imported_run_s_page_shows_what_the_run_carries(built):
    _, _, out, _ = built
    page = out / run_page(IMPORTED)
    text = visible_text(page)
    assert "Not scorable here" in text and "automd import aide" in text
    assert "import.final_file_missing" in text and "scoring.no_predictions" in text
    assert text.count("00000000000000000000000000000002") >= 2  # a node and a parent
    assert "Held-out score" not in text and "gpt-4.1" in text


def _code_section(page: Path) -> str:
    body = page.read_text()
    return body[body.index('id="code"') : body.index('id="codebook"')]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("run_id", "name", "diffed"),
    [(IMPORTED, "runfile.py", ("00000000000000000000000000000002", "00000000000000000000000000000000")),
     (IMPORTED_AIS, "experiment_code.py", ("00000000000000000000000000000001",
                                           "00000000000000000000000000000000"))],
)  # fmt: skip
def test_an_imported_run_s_page_shows_each_node_s_code_against_its_parent(built, run_id, name,
                                                                          diffed):  # fmt: skip
    """Issue 31 item 3: the nodes' code of a run imported without prediction files reaches the
    store (under the node ids its steps name) and its page: whole files for the roots, a diff for
    each node against its parent, highlighted and escaped."""
    archive, store, out, _ = built
    run_dir = archive / run_id
    expected = {
        str(step["node"]): {
            f"code/{step['node']}/{f.name}": f.read_text()
            for f in sorted((run_dir / "code" / str(step["node"])).iterdir())
        }
        for step in json.loads((run_dir / "run.json").read_text())["steps"]
        if (run_dir / "code" / str(step["node"])).is_dir()
    }
    assert expected and store.code_files_texts([run_id]) == {run_id: expected}
    section = _code_section(out / run_page(run_id))
    child, parent = diffed
    assert f"<strong>{child} &larr; {parent}</strong>" in section
    assert f"<strong>{parent}: first version</strong>" in section
    assert "<script" not in section and "<b>" not in section and name in section
    diff = section[section.index(f'id="code-{child}"') :]
    diff = html.unescape(re.sub(r"<[^>]+>", "", diff[: diff.index("</details>")]))
    old_lines = expected[parent][f"code/{parent}/{name}"].splitlines()
    added = [line for line in expected[child][f"code/{child}/{name}"].splitlines()
             if line not in old_lines]  # fmt: skip
    assert added and all(f"+{line}" in diff for line in added)


@pytest.mark.slow
def test_only_the_runs_without_versions_gain_node_code(built):
    """The scored runs' code rows are their versions' code, as before; the two imported runs'
    rows are named by their nodes."""
    archive, store, _, _ = built
    code = store.code
    versions = {(r.run_id, str(v.version_id)) for r in open_archive(archive).runs()
                for v in r.versions if v.code_files}  # fmt: skip
    rows = set(zip(code["run_id"], code["version"], strict=True))
    assert {r for r in rows if r[0] not in (IMPORTED, IMPORTED_AIS)} == versions
    assert {v for r, v in rows if r == IMPORTED} == {f"{i:032d}" for i in range(4)}
    assert {v for r, v in rows if r == IMPORTED_AIS} == {f"{i:032d}" for i in range(2)}


@pytest.mark.slow
def test_unchanged_runs_are_reused_and_a_changed_run_is_rebuilt(built, tmp_path):
    _, store, out, _ = built
    copy = tmp_path / "report"
    shutil.copytree(out, copy)
    stray = copy / "runs" / "main" / "gone" / "t" / "rep0.html"
    stray.parent.mkdir(parents=True)
    stray.write_text("old page")
    again = build_run_pages(store, copy, masking=read_masking_results(SMALL / "masking.csv"), description="fixture",
                            log=lambda _: None)  # fmt: skip
    assert (again.built, again.reused) == (0, len(store.runs))
    assert not stray.exists() and not stray.parent.exists()  # pages of no current run are removed
    scores = store.scores.copy()
    target = "main/beta/fx_surv/rep1"
    scores.loc[(scores["run_id"] == target) & ~scores["is_selected"], "reported_val"] += 0.01
    changed = dataclasses.replace(store, scores=scores)
    after = build_run_pages(changed, copy, masking=read_masking_results(SMALL / "masking.csv"), description="fixture",
                            log=lambda _: None)  # fmt: skip
    assert (after.built, after.reused) == (1, len(store.runs) - 1)
    assert target in (copy / MANIFEST).read_text()


@pytest.mark.slow
def test_a_page_that_fails_is_reported_and_the_others_are_written(built, tmp_path, monkeypatch):
    _, store, _, _ = built
    real = run_page_html.render_run

    def flaky(inputs, code):
        if inputs.run_id == "main/alpha/fx_icu/rep1":
            raise ValueError("<b>boom</b>")
        return real(inputs, code)

    monkeypatch.setattr(run_page_html, "render_run", flaky)
    summary = build_run_pages(store, tmp_path / "out", log=lambda _: None)
    assert summary.failed == [("main/alpha/fx_icu/rep1", "ValueError: <b>boom</b>")]
    assert summary.built == len(store.runs) - 1
    index = (tmp_path / "out" / "runs" / "index.html").read_text()
    assert "(page failed)" in index and "<b>boom" not in index and "&lt;b&gt;boom" in index
    assert "1 failed (main/alpha/fx_icu/rep1)" in summary.index_note()


@pytest.mark.slow
def test_hostile_strings_in_the_store_are_shown_as_text(built, tmp_path):
    _, store, _, _ = built
    evil = "<script>alert('x')</script>"
    runs = store.runs.assign(llm=evil, annotator=evil, import_format=None)
    runs.loc[runs["run_id"] == IMPORTED, ["import_format", "import_source"]] = ["aide", evil]
    annotations = store.annotations.assign(
        value=evil, evidence="javascript:alert(1):3;../../../../etc/passwd:1;" + evil
    )
    reasons = store.reasons.assign(message=evil)
    problems = store.problems.assign(message=evil, fix=evil)
    tables = {f.name: getattr(store, f.name) for f in dataclasses.fields(ScoreStore)}
    tables |= {"runs": runs, "annotations": annotations, "reasons": reasons, "problems": problems}
    hostile = dataclasses.replace(store, **{k: tables[k] for k in
                                            ("runs", "annotations", "reasons", "problems")})  # fmt: skip
    out = tmp_path / "out"
    build_run_pages(hostile, out, description=evil, log=lambda _: None)
    (out / "index.html").write_text("index")
    pages = sorted((out / "runs").rglob("*.html"))
    assert broken_links(out, pages) == []
    for page in pages:
        body = page.read_text()
        assert "<script" not in body and 'href="javascript' not in body, page
        assert active_content(page) == [], page
    first = (out / run_page("main/alpha/fx_cls/rep0")).read_text()
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in first


# --------------------------------------------------------------------------------------------------
# in a browser

_PROBE = (
    "<script>window.addEventListener('load', () => {"
    " const imgs = [...document.images];"
    " const ok = imgs.filter(i => i.complete && i.naturalWidth > 0 && i.offsetHeight > 100);"
    " const tables = [...document.querySelectorAll('table')].filter(t => t.offsetHeight > 0);"
    " document.body.setAttribute('data-probe', imgs.length + ',' + ok.length + ',' +"
    " tables.length); });</script>"
)


def _chromium() -> str | None:
    return next((n for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)  # fmt: skip


@pytest.mark.slow
@pytest.mark.skipif(_chromium() is None, reason="Chromium is not installed")
@pytest.mark.parametrize("run_id", ["main/alpha/fx_cls/rep0", IMPORTED])
def test_a_browser_shows_the_figure_and_the_tables(built, run_id):
    _, _, out, _ = built
    page = out / run_page(run_id)
    probe = page.with_name(f"probe-{page.name}")  # same folder: the figure loads relative to it
    probe.write_text(page.read_text().replace("</body>", _PROBE + "</body>"))
    try:
        with tempfile.TemporaryDirectory() as profile:
            dom = subprocess.run(
                [_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                 f"--user-data-dir={profile}", "--window-size=1366,1600", "--dump-dom",
                 "--virtual-time-budget=5000", probe.as_uri()],
                capture_output=True, text=True, timeout=120, check=True,
            ).stdout  # fmt: skip
    finally:
        probe.unlink()
    images, shown, tables = map(int, re.search(r'data-probe="(\d+),(\d+),(\d+)"', dom).groups())
    assert images == shown == 1  # the figure, decoded and drawn
    assert tables >= 3  # the run, the versions, the problems or codebook
    assert broken_links(out, [page]) == []


def test_every_selection_rule_of_the_importers_is_explained():
    from automd_analysis.importers import selection

    rules = {getattr(selection, n) for n in dir(selection) if n.startswith("RULE_")}
    assert rules <= set(run_page_html.SELECTION_RULES)


def test_a_store_without_code_files_still_gives_pages(tmp_path):
    import storebuilder

    scores = pd.DataFrame(
        {"run_id": "main/a/t/rep0", "experiment": "main", "agent": "a", "llm": "m", "task": "t",
         "rep": 0, "reference": False, "version": ["selected", "v1"], "is_selected": [True, False],
         "valid": True, "task_kind": "classification", "metric": "auroc", "score": [0.5, 0.4],
         "raw": [0.75, 0.7]}
    )  # fmt: skip
    code = {"main/a/t/rep0": {"v1": "import os\nprint('<b>')\n"}}
    store = storebuilder.loose_store(scores, code=code)
    summary = build_run_pages(store, tmp_path, log=lambda _: None)
    (tmp_path / "index.html").write_text("the report index")
    assert summary.failed == [] and summary.built == 1
    body = (tmp_path / run_page("main/a/t/rep0")).read_text()
    assert "first version" in body and "&lt;b&gt;" not in body  # the code is on its own page
    assert broken_links(tmp_path, sorted((tmp_path / "runs").rglob("*.html"))) == []


@pytest.mark.slow
def test_the_benchmark_s_paper_scale_store_has_its_shape_and_rebuilds_one_changed_run(
    built, tmp_path, monkeypatch
):
    """``bench/bench_run_pages.py``: the synthetic store it times and what it measures."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "bench"))
    from _synthetic_store import paper_scale_store
    from bench_run_pages import code_page_links, one_run_changed

    _, store, _, _ = built
    big = paper_scale_store(store, runs_per_agent=2, baseline_runs=3, versions_per_run=7)
    # the imported runs have code but no scores to copy: the agents with scored code are
    assert big.runs.groupby("agent").size().to_dict() == {"alpha": 2, "baseline": 3, "beta": 2}
    versions = big.scores.loc[~big.scores["is_selected"]]
    agent_versions = versions.loc[versions["agent"] != "baseline"]
    assert agent_versions.groupby("run_id").size().tolist() == [7, 7, 7, 7]
    known = set(zip(versions["run_id"], versions["version"], strict=True))
    parents = zip(versions["run_id"], versions["parent"], strict=True)
    assert all(p is None or (r, p) in known for r, p in parents)
    assert big.code["code_sha256"].is_unique and len(big.code) >= 4 * 7

    summary = build_run_pages(big, tmp_path, jobs=1, log=lambda _: None)
    (tmp_path / "index.html").write_text("the report index")
    assert (summary.built, summary.failed) == (len(big.runs), [])
    assert broken_links(tmp_path, sorted((tmp_path / "runs").rglob("*.html"))) == []
    links, distinct = code_page_links(tmp_path)
    assert links >= distinct > 0
    changed, run_id = one_run_changed(big)
    assert run_id.startswith("main/alpha/")
    again = build_run_pages(changed, tmp_path, jobs=1, log=lambda _: None)
    assert (again.built, again.reused) == (1, len(big.runs) - 1)
