"""Hostile archives: each attack found against the toolkit gets a reason code, the rest of the archive
is still scored, and nothing is half-published (docs/security.md).

Every test copies the committed fixture archive, plants one attack in one run, scores it with
``automd score`` (a subprocess, as a user would) and checks the outcome.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from automd_analysis.analysis.store import load_store
from automd_analysis.archive import open_archive
from automd_analysis.scoring import plan as plan_module
from automd_analysis.scoring.publish import CURRENT, GENERATIONS, store_files, write_store

#: Integration tests (CLI, end to end, demo cohorts): `make test-fast` skips them.
pytestmark = pytest.mark.slow

SMALL = Path(__file__).resolve().parent / "fixtures" / "small"
DATA, MANIFESTS = SMALL / "data", SMALL / "manifests"
RUN = "main/alpha/fx_cls/rep0"


@pytest.fixture
def archive(tmp_path) -> Path:
    root = tmp_path / "archive"
    shutil.copytree(SMALL / "archive", root)
    return root


def score(archive: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "automd_analysis", "score", str(archive), "--data", str(DATA),
         "--manifests", str(MANIFESTS), "--out", str(out), "--jobs", "1", "--no-progress"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def n_runs(archive: Path) -> int:
    return len(list(archive.glob("*/*/*/rep*/run.json")))


def problems(out: Path) -> pd.DataFrame:
    return load_store(out).problems


def _edit_json(path: Path, **changes) -> None:
    doc = json.loads(path.read_text())
    doc.update(changes)
    path.write_text(json.dumps(doc))


def test_deeply_nested_annotations_are_a_problem_not_a_crash(archive, tmp_path):
    (archive / RUN / "annotations.json").write_text("[" * 100_000 + "]" * 100_000)
    out = tmp_path / "scores"
    proc = score(archive, out)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    store = load_store(out)
    assert len(store.runs) == n_runs(archive)  # every run scored
    row = store.problems.set_index("run_id").loc[RUN]
    assert row["code"] == "archive.annotation_invalid" and "nested too deeply" in row["message"]
    assert not store.runs.set_index("run_id").loc[RUN, "has_annotations"]


@pytest.mark.parametrize(
    ("where", "change", "code"),
    [
        ("run.json", {"tokens": {"prompt": 10**30, "completion": 0, "total": 10**30}},
         "archive.run_invalid"),
        ("versions/v01/meta.json", {"step": 10**20}, "archive.version_invalid"),
        ("run.json", {"started_at": "0001-01-01T00:00:00+05:00"}, "archive.run_invalid"),
    ],
)  # fmt: skip
def test_out_of_range_numbers_are_refused_by_the_schema(archive, tmp_path, where, change, code):
    _edit_json(archive / RUN / where, **change)
    out = tmp_path / "scores"
    proc = score(archive, out)
    assert proc.returncode == 0, proc.stderr
    store = load_store(out)
    assert code in set(store.problems["code"])
    expected_runs = n_runs(archive) - (where == "run.json")
    assert len(store.runs) == expected_runs


def test_a_failing_publish_leaves_the_previous_store_intact(archive, tmp_path):
    out = tmp_path / "scores"
    assert score(archive, out).returncode == 0
    before = {name: (out / name).read_bytes() for name in store_files()}
    store = load_store(out)
    tables = {name: [] for name in ("scores", "runs")}
    tables["runs"] = [{"run_id": "x", "n_steps": 10**30}]  # does not fit int64
    with pytest.raises((OverflowError, pa.ArrowInvalid, pa.ArrowTypeError)):
        write_store(out, tables, {"tasks": {}})
    assert {name: (out / name).read_bytes() for name in store_files()} == before
    assert load_store(out).runs.equals(store.runs)
    assert not list(out.glob(".tmp-*")) and not list((out / GENERATIONS).glob(".tmp-*"))


def test_store_is_published_as_one_generation_behind_a_link(archive, tmp_path):
    out = tmp_path / "scores"
    assert score(archive, out).returncode == 0
    assert (out / CURRENT).is_symlink()
    generation = (out / CURRENT).resolve()
    assert generation.parent == (out / GENERATIONS).resolve()
    for name in store_files():
        assert (out / name).is_symlink() and os.readlink(out / name) == f"{CURRENT}/{name}"
        assert (generation / name).is_file()
    # a second generation: the link switches, the previous generation is kept, older ones go
    (archive / RUN / "journal.md").write_text("changed\n")
    _edit_json(archive / RUN / "run.json", reported_val_score=0.123)
    assert score(archive, out).returncode == 0
    assert (out / CURRENT).resolve() != generation
    assert len(list((out / GENERATIONS).iterdir())) == 2


def test_leftovers_of_a_killed_publish_are_removed(archive, tmp_path):
    out = tmp_path / "scores"
    assert score(archive, out).returncode == 0
    (out / ".tmp-scores.parquet.tmp").write_bytes(b"partial")
    half = out / GENERATIONS / ".tmp-abc123"
    half.mkdir()
    (half / "scores.parquet").write_bytes(b"partial")
    (out / "cache" / "00").mkdir(parents=True, exist_ok=True)
    stale = out / "cache" / "00" / ".tmp-entry.json"
    stale.write_bytes(b"{")
    os.utime(stale, (0, 0))  # cache temporaries are removed once stale (a live scorer's are not)
    assert score(archive, out).returncode == 0
    assert not (out / ".tmp-scores.parquet.tmp").exists() and not half.exists()
    assert not list((out / "cache").glob("*/.tmp-*"))
    load_store(out)


def test_reserved_version_name_is_left_out(archive, tmp_path):
    versions = archive / RUN / "versions"
    shutil.copytree(versions / "v01", versions / "selected")
    _edit_json(versions / "selected" / "meta.json", version="selected")
    out = tmp_path / "scores"
    assert score(archive, out).returncode == 0
    store = load_store(out)
    row = store.problems.set_index("run_id").loc[RUN]
    assert row["code"] == "archive.reserved_name" and row["effect"] == "version skipped"
    scores = store.scores[store.scores["run_id"] == RUN]
    assert scores["version"].tolist().count("selected") == 1  # only the selected submission
    assert bool(scores.loc[scores["version"] == "selected", "is_selected"].item())


def test_reference_flag_only_for_declared_reference_agents(archive, tmp_path):
    _edit_json(archive / RUN / "run.json", reference=True)
    out = tmp_path / "scores"
    assert score(archive, out).returncode == 0
    store = load_store(out)
    assert not store.runs.set_index("run_id").loc[RUN, "reference"]
    row = store.problems.set_index("run_id").loc[RUN]
    assert row["code"] == "archive.reference_not_allowed" and row["effect"] == "reference ignored"
    # declared in archive.yaml: honoured
    text = (archive / "archive.yaml").read_text()
    (archive / "archive.yaml").write_text(text + "reference_agents: [baseline, alpha]\n")
    assert open_archive(archive).run(RUN).reference


def test_huge_sparse_submission_is_refused_before_hashing(archive, tmp_path, monkeypatch):
    with open(archive / RUN / "submission.csv", "r+b") as fh:
        fh.truncate(2 << 30)  # 2 GiB, sparse: costs nothing on disk
    hashed: list[Path] = []
    real = plan_module.sha256_file
    monkeypatch.setattr(plan_module, "sha256_file", lambda p, *a: hashed.append(p) or real(p, *a))
    runs = open_archive(archive).runs()
    plan = plan_module.make_plan(runs, data=DATA, manifests=MANIFESTS)
    ref = next(f for f in plan.files if f.run.run_id == RUN and f.version is None)
    assert ref.sha256 is None and ref.inline["reasons"][0]["code"] == "file.too_large"
    assert archive / RUN / "submission.csv" not in hashed
    out = tmp_path / "scores"
    assert score(archive, out).returncode == 0
    selected = load_store(out).scores.set_index(["run_id", "version"]).loc[(RUN, "selected")]
    assert not selected["valid"] and selected["reason_code"] == "file.too_large"


def test_oversized_code_file_is_skipped_for_its_run_only(archive, tmp_path):
    assert score(archive, tmp_path / "pristine").returncode == 0
    pristine = load_store(tmp_path / "pristine").code_texts()
    big = archive / RUN / "code" / "v01" / "train.py"
    big.write_text("x = 1\n" * (2 << 20 // 6 + 1) + "# " + "y" * (2 << 20))
    out = tmp_path / "scores"
    assert score(archive, out).returncode == 0
    store = load_store(out)
    code = store.code_texts()
    assert "v01" not in code[RUN]  # its only code file was too large
    skipped = store.problems[store.problems["effect"] == "code file skipped"]
    assert skipped[["run_id", "version", "code"]].values.tolist() == [
        [RUN, "v01", "archive.too_large"]
    ]
    assert skipped["path"].tolist() == [f"{RUN}/code/v01/train.py"]
    assert {r: t for r, t in code.items() if r != RUN} == {
        r: t for r, t in pristine.items() if r != RUN
    }
    assert code[RUN] == {v: t for v, t in pristine[RUN].items() if v != "v01"}
    assert RUN in set(store.runs["run_id"])  # the run itself is still scored


def test_written_files_and_directories_follow_the_umask(archive, tmp_path):
    old = os.umask(0o022)
    try:
        out = tmp_path / "scores"
        assert score(archive, out).returncode == 0
    finally:
        os.umask(old)
    entries = [p for p in (out / "cache").rglob("*") if p.is_file()]
    assert entries and {stat.S_IMODE(p.stat().st_mode) for p in entries} == {0o644}
    generation = (out / CURRENT).resolve()
    assert stat.S_IMODE(generation.stat().st_mode) == 0o755
    assert {stat.S_IMODE((generation / n).stat().st_mode) for n in store_files()} == {0o644}


def test_run_pages_show_archive_strings_as_text_and_link_only_inside_the_report(archive, tmp_path):
    """Markup in run.json, notes, code and citations; a code file linked to /etc/passwd; a
    citation of a path outside the run: the run pages show text, read nothing outside the store
    and link only to their own files (docs/security.md)."""
    from page_links import active_content, broken_links

    from automd_analysis.report.run_links import run_page
    from automd_analysis.report.run_pages import build_run_pages

    evil = "<img src=x onerror=alert(1)><script>alert('run')</script>"
    run = archive / RUN
    _edit_json(
        run / "run.json",
        llm=evil,
        notes=f"Imported by automd import aide from '{evil}' (automd-analysis 0.1.0); "
        "prediction files bound by none; no token counts.",
    )
    code = run / "code" / "v02" / "train.py"
    code.write_text(code.read_text() + f"\n# </td></tr></table>{evil}\n")
    meta = run / "versions" / "v02" / "meta.json"
    doc = json.loads(meta.read_text())
    (run / "code" / "v02" / "secret.py").symlink_to("/etc/passwd")
    doc["code_files"] = [*doc["code_files"], "code/v02/secret.py"]
    meta.write_text(json.dumps(doc))
    annotations = json.loads((run / "annotations.json").read_text())
    annotations["run"]["ensembling"]["evidence"] = [
        "code/../../../../../../etc/passwd:1", "javascript:alert(1)", f"code/v03/{evil}:2"
    ]  # fmt: skip
    (run / "annotations.json").write_text(json.dumps(annotations))
    out = tmp_path / "scores"
    assert score(archive, out).returncode == 0
    store = load_store(out)
    assert store.runs.set_index("run_id").loc[RUN, "import_source"] == evil
    report = tmp_path / "report"
    summary = build_run_pages(store, report, description=evil, log=lambda _: None)
    (report / "index.html").write_text("index")
    assert summary.failed == [] and summary.built == len(store.runs)
    pages = sorted((report / "runs").rglob("*.html"))
    assert broken_links(report, pages) == []
    passwd = Path("/etc/passwd").read_text().splitlines()[0]
    for page in pages:
        body = page.read_text()
        assert active_content(page) == [], page
        assert "<script" not in body and "<img src=x" not in body and passwd not in body, page
    body = (report / run_page(RUN)).read_text()
    assert html.escape(evil) in body  # shown, as text
    assert "code/v02/secret.py" not in body.split('id="codebook"')[0].split('id="code"')[1]


def test_an_imported_run_s_node_code_stays_text_on_its_page(archive, tmp_path):
    """Issue 31 item 3: the nodes' code of a run imported without prediction files reaches its
    page. Markup, ``</script>``, NUL and escape bytes are shown as text; a ``..`` file name in the
    log is written inside the node's folder; a file above the size limit and a symbolic link to
    /etc/passwd planted in the archive are skipped and listed; a diff too long for the page is
    folded onto a page of its own (docs/security.md)."""
    import importer_sources as src
    from page_links import active_content, broken_links

    from automd_analysis.report.run_links import run_page
    from automd_analysis.report.run_pages import build_run_pages

    evil = "<img src=x onerror=alert(1)></script><script>alert('code')</script>"
    steps = [src.fml_step(1, metadata={"node_id": "a"}),
             src.fml_step(2, metadata={"node_id": "b", "parent_id": "a"}),
             src.fml_step(3, metadata={"node_id": "c", "parent_id": "b"})]  # fmt: skip
    snapshots = {
        1: {"train.py": f"x = '{evil}'\n", "../../../escape.py": "print('outside?')\n"},
        2: {"train.py": f"x = '{evil}'\ny = 'a\x00b\x1b[31m'\n", "big.py": "#" * (1 << 20) + "\n"},
        3: {"train.py": "".join(f"z{i} = {i}\n" for i in range(400))},
    }
    log = src.build_fmlbench(tmp_path / "log", src.fml_summary(steps), snapshots)
    (log / "submission.csv").unlink()
    imported = subprocess.run(
        [sys.executable, "-m", "automd_analysis", "import", "fmlbench", str(log), "--archive",
         str(archive), "--agent", "fml", "--task", "fx_cls", "--manifests", str(MANIFESTS)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    run_id = "main/fml/fx_cls/rep0"
    run = archive / run_id
    assert (run / "code" / "step-0001" / "escape.py").is_file()
    assert [p.relative_to(archive) for p in tmp_path.rglob("escape.py")] == [
        Path(run_id, "code", "step-0001", "escape.py")
    ]  # written inside the node's folder, nowhere else
    (run / "code" / "step-0002" / "leak.py").symlink_to("/etc/passwd")
    out = tmp_path / "scores"
    assert score(archive, out).returncode == 0
    store = load_store(out)
    files = store.code_files_texts([run_id])[run_id]
    assert sorted(files) == ["step-0001", "step-0002", "step-0003"]
    assert sorted(files["step-0002"]) == ["code/step-0002/train.py"]
    skipped = store.problems[(store.problems["run_id"] == run_id)
                             & (store.problems["effect"] == "code file skipped")]  # fmt: skip
    assert sorted(zip(skipped["path"], skipped["code"], strict=True)) == [
        (f"{run_id}/code/step-0002/big.py", "archive.too_large"),
        (f"{run_id}/code/step-0002/leak.py", "archive.unsafe_path"),
    ]
    report = tmp_path / "report"
    summary = build_run_pages(store, report, log=lambda _: None)
    (report / "index.html").write_text("index")
    assert summary.failed == []
    page = report / run_page(run_id)
    pages = sorted((report / "runs").rglob("*.html"))
    assert broken_links(report, pages) == []
    passwd = Path("/etc/passwd").read_text().splitlines()[0]
    for shown in pages:
        body = shown.read_text()
        assert active_content(shown) == [], shown
        assert "<script" not in body and "<img src=x" not in body and passwd not in body, shown
        assert "\x00" not in body and "\x1b" not in body, shown
    body = page.read_text()
    code = body[body.index('id="code"') : body.index('id="codebook"')]
    assert "<strong>step-0002 &larr; step-0001</strong>" in code
    assert "&lt;/script&gt;&lt;script&gt;" in code and "\u2400b\u241b[31m" in code
    folded = re.findall(r'href="([^"]*_code/[^"]+)"', code[code.index('id="code-step-0003"') :])
    assert folded  # the 400-line diff is linked, not inlined
    assert code.count("<tr") < 300
