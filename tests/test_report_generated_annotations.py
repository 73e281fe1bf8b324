"""Notebooks 01 and 02 through `automd regenerate` on an archive whose only codebook answers come
from `automd annotate`, scored without bootstrap replicates: the practice tables name the
generated annotator, and the interval tables and comparisons say why they are empty instead of
failing (through the real CLI)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from automd_analysis import __version__

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "small"
NOTEBOOKS = ("01_primary_scores.ipynb", "02_calibration_and_practices.ipynb")


def _automd(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "automd_analysis", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    base = tmp_path_factory.mktemp("generated")
    archive = base / "archive"
    shutil.copytree(FIXTURE / "archive", archive)
    removed = list(archive.rglob("annotations.json"))
    for path in removed:
        path.unlink()
    assert removed, "the fixture archive should carry its own annotations"
    common = ["--data", FIXTURE / "data", "--manifests", FIXTURE / "manifests"]
    annotated = _automd("annotate", archive, "--out", base / "annotations", *common)
    assert annotated.returncode == 0, annotated.stderr
    notebooks = base / "notebooks"
    notebooks.mkdir()
    for name in NOTEBOOKS:
        shutil.copy(ROOT / "notebooks" / name, notebooks / name)
    run = _automd(
        "regenerate",
        archive,
        *common,
        "--scores",
        base / "scores",
        "--out",
        base / "report",
        "--notebooks",
        notebooks,
        "--annotations",
        base / "annotations",
        "--bootstrap",
        "0",
        "--embedding-backend",
        "hashing",
        "--jobs",
        "2",
    )
    return base / "report", run


def _errors(path: Path) -> list:
    executed = nbformat.read(path, as_version=4)
    return [
        o
        for c in executed.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "error"
    ]


@pytest.mark.slow
def test_practice_tables_name_the_generated_annotator(regenerated):
    out, run = regenerated
    assert run.returncode == 0, run.stderr
    for name in NOTEBOOKS:
        assert not _errors(out / "notebooks" / name), name
    annotator = f"automd annotate {__version__}"
    provenance = pd.read_csv(out / "tables" / "annotation_provenance.csv")
    assert set(provenance["annotator"].dropna()) == {annotator}
    assert set(provenance["annotations_source"]) <= {"generated", "none"}
    generated = int(provenance.loc[provenance["annotations_source"] == "generated", "n_runs"].sum())
    assert generated > 0
    sentence = f"Codebook answers by {annotator} ({generated} runs, generated outside the archive)"
    for table in ("fig2a_ece_decomposition", "table20_practices"):
        assert (out / "tables" / f"{table}.csv").is_file()
        assert sentence in (out / "tables" / f"{table}.html").read_text(), table
    page = (out / "html" / "02_calibration_and_practices.html").read_text()
    assert page.count(sentence) >= 3  # at a glance, Table 20 section, captions
    # the runs in Table 20's denominators are the generated-annotation runs
    table20 = pd.read_csv(out / "tables" / "table20_practices.csv")
    ranks = table20.loc[table20["practice"] == "averaged_ranks_as_probabilities"]
    assert int((ranks["n_eligible"] + ranks["n_missing"]).sum()) == int(provenance["n_runs"].sum())


@pytest.mark.slow
def test_without_replicates_intervals_are_empty_and_the_report_says_why(regenerated):
    out, run = regenerated
    assert run.returncode == 0, run.stderr
    table2 = pd.read_csv(out / "tables" / "table2_primary_scores.csv")
    ci = [c for c in table2.columns if "_ci_" in c]
    assert ci == [
        "penalized_mean_ci_low",
        "penalized_mean_ci_high",
        "nonpenalized_mean_ci_low",
        "nonpenalized_mean_ci_high",
        "rank_penalized_mean_ci_low",
        "rank_penalized_mean_ci_high",
        "rank_nonpenalized_mean_ci_low",
        "rank_nonpenalized_mean_ci_high",
    ]
    assert table2[ci].isna().all().all()
    for name in ("pairwise_comparisons", "power_table"):
        lines = (out / "tables" / f"{name}.csv").read_text().splitlines()
        assert len(lines) == 1 and lines[0].startswith("agent_a,agent_b,measure,diff_mean")
    page = (out / "html" / "01_primary_scores.html").read_text()
    assert "No bootstrap intervals:" in page
    assert "cannot say whether any two agents differ on the primary score" in page
    assert not re.search(r"scores higher than", page)
    html2 = (out / "tables" / "table2_primary_scores.html").read_text()
    assert "Brackets:" not in html2 and "[" not in re.sub(r"<[^>]+>", "", html2)
    for figure in ("table2_forest", "pairwise_score", "table3_forest", "pairwise_ece"):
        assert (out / "figures" / f"{figure}.png").is_file()
