"""automd_analysis.report.site: sanitised HTML pages without code, and the escaped index page."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import nbformat
import pytest
import storebuilder
from hypothesis import given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_output
from notebook_factory import code, markdown, parameters_cell, write_notebook

from automd_analysis.app.run_notebooks import NotebookFailure, NotebookResult, execute_notebooks
from automd_analysis.report import site

EVIL = "<script>alert('x')</script>"
# a 1x1 PNG
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()


def _executed(cells_outputs: list[list[dict]]) -> nbformat.NotebookNode:
    """A notebook whose code cells already carry the given outputs (no kernel needed)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells.append(markdown("# Evil page"))
    for outputs in cells_outputs:
        cell = code("pass")
        cell.outputs = [new_output(**o) for o in outputs]
        nb.cells.append(cell)
    return nb


def _data(nb, index) -> dict:
    return nb.cells[index].outputs[0]["data"]


# ---------------------------------------------------------------------------------------------
# sanitize_outputs


def test_html_output_script_is_escaped_and_handlers_removed():
    raw = (
        f"<div><table><thead><tr><th>agent</th></tr></thead><tbody><tr><td>{EVIL}</td></tr>"
        '</tbody></table><img src="x" onerror="alert(1)"><a href="javascript:alert(2)">l</a></div>'
    )
    nb = _executed([[{"output_type": "display_data", "data": {"text/html": raw}}]])
    clean = _data(site.sanitize_outputs(nb), 1)["text/html"]
    assert "<script" not in clean
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in clean
    assert "onerror" not in clean and "javascript:" not in clean
    assert "<table>" in clean and "<th>agent</th>" in clean  # tables survive


def test_dataframe_html_keeps_its_structure():
    import pandas as pd

    frame = pd.DataFrame({"agent": ["a", EVIL], "score": [0.5, 0.25]})
    nb = _executed(
        [[{"output_type": "execute_result", "data": {"text/html": frame._repr_html_()}}]]
    )
    clean = _data(site.sanitize_outputs(nb), 1)["text/html"]
    assert clean.count("<tr") == 3 and clean.count("<th") >= 3
    assert "<style" in clean and "<script" not in clean
    assert "0.25" in clean


def test_embedded_png_is_kept_other_image_sources_are_dropped():
    raw = (
        f'<img src="data:image/png;base64,{PNG}" alt="fig">'
        '<img src="https://tracker.example/pixel.png">'
        '<img src="data:image/svg+xml;base64,PHN2Zz4=">'
    )
    nb = _executed([[{"output_type": "display_data", "data": {"text/html": raw}}]])
    clean = _data(site.sanitize_outputs(nb), 1)["text/html"]
    assert clean.count(f'src="data:image/png;base64,{PNG}"') == 1
    assert "tracker.example" not in clean and "svg+xml" not in clean


def test_markdown_output_html_is_escaped_and_active_outputs_dropped():
    nb = _executed(
        [
            [{"output_type": "display_data", "data": {"text/markdown": f"**agent** {EVIL}"}}],
            [
                {
                    "output_type": "display_data",
                    "data": {
                        "application/javascript": "alert(1)",
                        "image/svg+xml": "<svg onload='alert(1)'></svg>",
                        "image/png": PNG,
                        "text/plain": "<Figure>",
                    },
                }
            ],
        ]
    )
    clean = site.sanitize_outputs(nb)
    assert _data(clean, 1)["text/markdown"] == "**agent** &lt;script&gt;alert('x')&lt;/script&gt;"
    assert set(_data(clean, 2)) == {"image/png", "text/plain"}
    # the input notebook is not modified
    assert "application/javascript" in _data(nb, 2)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_no_tag_from_a_table_cell_survives(value):
    import pandas as pd

    payload = f"<script>{value}</script><iframe>{value}</iframe>"
    html = pd.DataFrame({"llm": [payload]}).to_html(escape=False)
    nb = _executed([[{"output_type": "display_data", "data": {"text/html": html}}]])
    clean = _data(site.sanitize_outputs(nb), 1)["text/html"]
    assert not re.search(r"<\s*(script|iframe)", clean, flags=re.IGNORECASE)


# ---------------------------------------------------------------------------------------------
# render_notebook (real execution: code must be hidden, outputs shown)


@pytest.mark.slow
def test_rendered_page_hides_code_and_embeds_figures(tmp_path):
    source = write_notebook(
        tmp_path / "nbs" / "01_page.ipynb",
        [
            markdown("# Primary scores\n\nHow to read this page."),
            parameters_cell("agent = 'a'"),
            code(
                "SECRET_SOURCE_TOKEN = 'visible-output-token'\n"
                "print(SECRET_SOURCE_TOKEN)\n"
                "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
                "from IPython.display import display\n"
                "fig, ax = plt.subplots(); ax.plot([0, 1]); display(fig); plt.close(fig)\n"
                "import pandas as pd\ndisplay(pd.DataFrame({'agent': [agent]}))"
            ),
        ],
    )
    [result] = execute_notebooks([source], tmp_path / "out", {"agent": EVIL})
    assert result.ok, result.failure
    page = tmp_path / "page.html"
    title = site.render_notebook(result.output, page, index_href="../index.html")
    text = page.read_text()
    assert title == "Primary scores"
    assert "visible-output-token" in text  # output shown
    assert "SECRET_SOURCE_TOKEN" not in text  # code hidden
    assert "How to read this page." in text  # prose shown
    assert "data:image/png;base64," in text  # figure embedded
    assert "&lt;script&gt;alert" in text and "<script>alert" not in text
    assert 'href="../index.html"' in text
    # self-contained: no script at all, nothing fetched from a CDN (require.js, MathJax, Mermaid)
    assert "<script" not in text
    assert "cdnjs" not in text and "cdn.jsdelivr" not in text


@pytest.mark.slow
def test_page_shows_the_provenance_under_its_title_and_renders_byte_identically(tmp_path):
    source = write_notebook(
        tmp_path / "nbs" / "01_page.ipynb",
        [
            markdown("# Primary scores\n\nHow to read this page."),
            parameters_cell("agent = 'a'"),
            code("import pandas as pd\ndisplay(pd.DataFrame({'agent': [agent]}))"),
        ],
    )
    line = site.provenance_line(f"Agents are stand-ins {EVIL}", ["demo_sepsis"])
    assert line.endswith(f"Synthetic tasks: demo_sepsis{site.SYNTHETIC_MARK}.")
    pages = []
    for run in ("one", "two"):  # two executions: papermill's injected cell ids differ
        [result] = execute_notebooks([source], tmp_path / run, {"agent": "b"})
        assert result.ok, result.failure
        page = tmp_path / f"{run}.html"
        site.render_page(result.output, page, provenance=line)
        pages.append(page.read_bytes())
    assert pages[0] == pages[1]
    text = pages[0].decode()
    title, about, table = (
        text.index(s) for s in ("Primary scores<a class", "About this archive", "<table")
    )
    assert title < about < table  # under the title, above the first table
    assert "&lt;script&gt;alert" in text and "<script>alert" not in text
    assert f"demo_sepsis{site.SYNTHETIC_MARK}" in text


def test_provenance_line_reads_the_description_and_the_store_task_facts():
    import dataclasses

    import pandas as pd

    facts = pd.DataFrame({"task": ["clf_b", "clf_a"], "synthetic": [False, True]})
    store = dataclasses.replace(_store(), tasks=facts)
    summary = site.summarise_store(store, description="  A real   archive.\n")
    assert summary.synthetic == ("clf_a",)
    assert summary.provenance == f"A real archive. Synthetic tasks: clf_a{site.SYNTHETIC_MARK}."
    assert site.provenance_line("", []) == "This archive's archive.yaml has no description."


def test_notebook_title_falls_back_to_stem():
    nb = nbformat.v4.new_notebook(cells=[markdown("no heading here"), code("x = 1")])
    assert site.notebook_title(nb, "05_subgroups") == "05_subgroups"
    nb.cells.insert(1, markdown("## Subgroup gaps  "))
    assert site.notebook_title(nb, "05_subgroups") == "Subgroup gaps"


# ---------------------------------------------------------------------------------------------
# summary and index


def _store():
    runs = [
        storebuilder.run("agent-a", "clf_a", 0),
        storebuilder.run("agent-a", "clf_a", 1, valid=False),
        storebuilder.run("agent-b", "clf_a", 0),
        storebuilder.run("agent-b", "clf_a", 0, experiment="llm", llm="other"),
        storebuilder.run("agent-b", "clf_a", 1, experiment="llm", llm="other", valid=False),
    ]
    return storebuilder.build_store(runs)


def test_summarise_store_counts_selected_runs():
    summary = site.summarise_store(_store(), description="d")
    assert (summary.n_runs, summary.n_valid) == (5, 3)
    assert summary.by_experiment == [("llm", 2, 1), ("main", 3, 2)]
    assert summary.description == "d"


def test_summarise_store_reads_name_and_version_from_store_json(tmp_path):
    from automd_analysis.analysis.store import load_store

    directory = storebuilder.write_store([storebuilder.run("a", "clf_a", 0)], tmp_path / "s")
    summary = site.summarise_store(load_store(directory))
    assert (summary.archive, summary.scorer_version, summary.n_runs) == ("hand-built", "0.1.0", 1)


def _result(tmp_path: Path, name: str, failure: NotebookFailure | None = None) -> NotebookResult:
    return NotebookResult(
        source=tmp_path / f"{name}.ipynb",
        output=tmp_path / "out" / "notebooks" / f"{name}.ipynb",
        failure=failure,
        seconds=0.0,
    )


def test_index_escapes_archive_strings_and_links_artifacts(tmp_path):
    out = tmp_path / "out"
    for sub, files in {
        "tables": ["table2_primary.csv", "table2_primary.tex", "table2_primary.html"],
        "figures": ["fig2a_ece.png", "fig2a_ece.svg"],
    }.items():
        (out / sub).mkdir(parents=True)
        for f in files:
            (out / sub / f).write_text("x")
    summary = site.StoreSummary(
        archive=EVIL,
        scorer_version='1.0"><b>',
        n_runs=7,
        n_valid=5,
        by_experiment=[(f"main{EVIL}", 7, 5)],
        description=f"desc {EVIL} & more",
    )
    failure = NotebookFailure("02_b.ipynb", 4, "x = table['<b>']", "KeyError", EVIL)
    pages = [
        (_result(tmp_path, "01_a"), f"Title {EVIL}"),
        (_result(tmp_path, "02_b", failure), None),
    ]
    text = site.build_index(out, summary, pages).read_text()

    assert "<script>" not in text and "<b>" not in text
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in text
    assert 'href="html/01_a.html"' in text
    assert "02_b: FAILED" in text and "cell 4" in text
    assert 'href="tables/table2_primary.csv"' in text and 'href="tables/table2_primary.tex"' in text
    assert 'href="figures/fig2a_ece.svg"' in text and 'src="figures/fig2a_ece.png"' in text
    assert ">7<" in text and ">5<" in text
    # deterministic: same inputs, same bytes
    again = site.build_index(out, summary, pages).read_text()
    assert again == text


def test_index_groups_tables_by_analysis_with_paper_number_and_summary(tmp_path):
    from automd_analysis.analysis.catalog import ANALYSES, TABLES

    tables = tmp_path / "tables"
    tables.mkdir()
    stems = [
        "table12_task_scores",
        "overview_runs",
        "zz_custom",
        "fig2a_ece_decomposition",
        "table2_primary_scores",
        "table3_ece",
    ]
    for stem in stems:
        (tables / f"{stem}.csv").write_text("x")
    text = site.build_index(tmp_path, site.StoreSummary("a", "v", 0, 0), []).read_text()
    positions = [text.index(f'href="tables/{stem}.csv"') for stem in stems]
    order = [stem for _, stem in sorted(zip(positions, stems, strict=True))]
    # by analysis (report order), within one in catalog order; unknown tables last, under Other
    assert order == [
        "overview_runs",
        "table2_primary_scores",
        "table12_task_scores",
        "table3_ece",
        "fig2a_ece_decomposition",
        "zz_custom",
    ]
    headings = [ANALYSES["01_primary_scores"], ANALYSES["02_calibration_and_practices"], "Other"]
    at = [text.index(h) for h in headings]
    assert at == sorted(at) and at[0] < positions[1] < at[1] < positions[5] < at[2] < positions[2]
    row = text[text.index("<code>table2_primary_scores</code>") :]
    row = row[: row.index("</tr>")]
    assert ">Table 2<" in row and TABLES["table2_primary_scores"].summary in row


@pytest.mark.slow
def test_render_site_lays_out_directories_and_skips_failed_pages(tmp_path):
    source = write_notebook(
        tmp_path / "nbs" / "01_ok.ipynb", [markdown("# Fine"), parameters_cell("x = 1"), code("x")]
    )
    out = tmp_path / "report"
    [ok] = execute_notebooks([source], out / "notebooks")
    stale = out / "html" / "02_bad.html"
    stale.parent.mkdir(parents=True)
    stale.write_text("old page")
    bad = _result(tmp_path, "02_bad", NotebookFailure("02_bad.ipynb", 1, "x", "E", "v"))
    summary = site.StoreSummary("demo", "0.1.0", 1, 1)
    index = site.render_site(out, [ok, bad], summary)
    assert index == out / "index.html"
    assert all((out / d).is_dir() for d in site.SUBDIRS)
    assert (out / "html" / "01_ok.html").is_file()
    assert not stale.exists()
    assert "Fine" in index.read_text()


@pytest.mark.parametrize("message", ["No tables were exported.", "No figures were saved."])
def test_index_says_when_nothing_was_exported(tmp_path, message):
    text = site.build_index(tmp_path, site.StoreSummary("a", "v", 0, 0), []).read_text()
    assert message in text


def test_index_lists_pipeline_notes_escaped(tmp_path):
    summary = site.StoreSummary("a", "v", 0, 0)
    notes = [f"masking test: failed ({EVIL})", "second note"]
    text = site.build_index(tmp_path, summary, [], notes).read_text()
    assert "<h2>Pipeline</h2>" in text and "<script>" not in text
    assert "<li>masking test: failed (&lt;script&gt;" in text and "<li>second note</li>" in text
    assert text.index("Pipeline") < text.index("Analyses")
    assert "Pipeline" not in site.build_index(tmp_path, summary, []).read_text()


def test_index_headlines_escape_archive_text_and_link_to_the_table():
    from automd_analysis.report.index_headlines import IndexHeadline

    line = IndexHeadline(
        "agent `a<b>` scores **0.5** on demo\\_task <script>", "table2_primary_scores"
    )
    out = line.html("html/01_primary_scores.html")
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "<code>a&lt;b&gt;</code>" in out and "<strong>0.5</strong>" in out and "demo_task" in out
    assert out.endswith(
        '<a href="html/01_primary_scores.html#table-table2_primary_scores">(table)</a>'
    )


def test_a_table_of_contents_only_for_pages_with_three_sections_or_more():
    from automd_analysis.report.site import with_contents

    def page(n: int) -> str:
        heads = "".join(
            f'<h2 id="S-{i}">Section &amp; {i}<a class="anchor-link" href="#S-{i}">¶</a></h2><p>x</p>'
            for i in range(n)
        )
        return f"<h1>T</h1><p>intro</p>{heads}"

    assert with_contents(page(2)) == page(2)
    out = with_contents(page(3))
    assert out.index('<nav class="automd-contents">') < out.index('<h2 id="S-0">')
    assert out.index("<p>intro</p>") < out.index("<nav")
    assert re.findall(r'<li><a href="#(S-\d)">', out) == ["S-0", "S-1", "S-2"]
    assert "Section &amp; 1</a>" in out


def test_the_index_quotes_the_findings_its_notebooks_recorded(tmp_path):
    """Issue 30 item 1: a sentence is computed once (by its notebook) and the index quotes it;
    the primary-score comparison is picked from notebook 01's list, other measures are not."""
    from automd_analysis.report.headlines import Finding, Findings
    from automd_analysis.report.index_headlines import index_headlines, record_findings

    first = Findings(
        [
            Finding("score_spread", "Scores range from 0.4 to 0.5."),
            Finding("no_separation_score", "The data cannot separate a and b."),
        ]
    )
    record_findings(first, tmp_path, "table2_primary_scores")
    ece = Findings([Finding("ece_spread", "ECE ranges."), Finding("diff_ece_a_b", "a lower.")])
    record_findings(ece, tmp_path, "table3_ece")
    (tmp_path / "findings" / "table7_llm.json").write_text("not json")  # unreadable: left out
    got = [(h.table, h.text) for h in index_headlines(tmp_path)]
    assert got == [
        ("table2_primary_scores", "Scores range from 0.4 to 0.5."),
        ("pairwise_comparisons", "The data cannot separate a and b."),
        ("table3_ece", "ECE ranges."),
    ]
