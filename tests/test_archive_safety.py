"""Archive reader as a guard against untrusted input: traversal, symlinks, sizes, read_text."""

from __future__ import annotations

import os
import string
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_archive_reader import kit

from automd_analysis.archive import open_archive
from automd_analysis.archive.safe import read_bounded, resolve_inside
from automd_analysis.errors import ArchiveError


@pytest.fixture
def arch(tmp_path: Path) -> Path:
    root = tmp_path / "arch"
    kit.write_archive_yaml(root, experiments={"main": "main experiment"})
    run_dir = kit.write_run(root, "main", "alpha", "t1", 0)
    kit.write_version(run_dir, "v1", kit.T0 + timedelta(minutes=5), 1, b"id,p\n1,0.5\n")
    (run_dir / "submission.csv").write_bytes(b"id,p\n1,0.5\n")
    (run_dir / "code").mkdir()
    (run_dir / "code" / "train.py").write_text("line1\nline2\n")
    (run_dir / "journal.md").write_text("# journal\nstep 1 ok\n")
    (tmp_path / "secret.txt").write_text("outside the archive\n")
    return root


def _run_dir(root: Path) -> Path:
    return root / "main" / "alpha" / "t1" / "rep0"


def test_read_text_inside_the_run(arch):
    (run,) = open_archive(arch).runs()
    assert run.read_text("journal.md") == "# journal\nstep 1 ok\n"
    assert run.read_text("code/train.py").splitlines() == ["line1", "line2"]


def test_read_text_replaces_undecodable_bytes(arch):
    (_run_dir(arch) / "logs").mkdir()
    (_run_dir(arch) / "logs" / "out.txt").write_bytes(b"ok \xff\xfe end")
    (run,) = open_archive(arch).runs()
    assert run.read_text("logs/out.txt") == "ok \ufffd\ufffd end"


@pytest.mark.parametrize(
    "rel",
    [
        "../../../../secret.txt",
        "code/../../rep0/../../../../../secret.txt",
        "code/../journal.md",  # '..' is refused even when it would stay inside
        "/etc/passwd",
        "C:/Windows/win.ini",
        "code\\train.py",
        "",
        "journal.md\x00.png",
    ],
)
def test_read_text_refuses_traversal(arch, rel):
    (run,) = open_archive(arch).runs()
    with pytest.raises(ArchiveError) as exc:
        run.read_text(rel)
    assert exc.value.code == "archive.unsafe_path"
    assert exc.value.fix


def test_read_text_refuses_symlink_escaping_the_root(arch, tmp_path):
    os.symlink(tmp_path / "secret.txt", _run_dir(arch) / "code" / "leak.py")
    (run,) = open_archive(arch).runs()
    with pytest.raises(ArchiveError) as exc:
        run.read_text("code/leak.py")
    assert exc.value.code == "archive.unsafe_path"


def test_read_text_refuses_symlink_to_another_run(arch):
    other = kit.write_run(arch, "main", "alpha", "t1", 1)
    (other / "private.txt").write_text("other run\n")
    os.symlink(other / "private.txt", _run_dir(arch) / "code" / "peek.txt")
    run = open_archive(arch).run("main/alpha/t1/rep0")
    with pytest.raises(ArchiveError) as exc:
        run.read_text("code/peek.txt")
    assert exc.value.code == "archive.unsafe_path"


def test_read_text_size_limit_and_missing_and_directory(arch):
    (run,) = open_archive(arch).runs()
    (_run_dir(arch) / "big.log").write_bytes(b"x" * 101)
    with pytest.raises(ArchiveError) as exc:
        run.read_text("big.log", max_bytes=100)
    assert exc.value.code == "archive.too_large"
    assert exc.value.details == {"size": 101, "limit": 100}
    assert run.read_text("big.log", max_bytes=101) == "x" * 101
    with pytest.raises(ArchiveError) as exc:
        run.read_text("nope.txt")
    assert exc.value.code == "archive.file_missing"
    with pytest.raises(ArchiveError) as exc:
        run.read_text("code")
    assert exc.value.code == "archive.not_a_file"


def test_fifo_is_not_read(arch):
    fifo = _run_dir(arch) / "pipe"
    os.mkfifo(fifo)
    (run,) = open_archive(arch).runs()
    with pytest.raises(ArchiveError) as exc:
        run.read_text("pipe")  # must not block
    assert exc.value.code == "archive.not_a_file"


def test_symlinked_run_directory_outside_root_is_skipped(arch, tmp_path):
    outside = tmp_path / "elsewhere" / "rep3"
    outside.mkdir(parents=True)
    kit.write_json(outside / "run.json", kit.run_doc("main", "alpha", "t1", 3))
    os.symlink(outside, _run_dir(arch).parent / "rep3")
    archive = open_archive(arch)
    assert [r.rep for r in archive.runs()] == [0]
    (problem,) = archive.problems
    assert problem.code == "archive.unsafe_path"
    assert problem.details["effect"] == "directory skipped"


def test_symlink_inside_the_root_is_followed(arch):
    src = _run_dir(arch)
    os.symlink(src, src.parent / "rep5")  # same content, but directory says rep5
    archive = open_archive(arch)
    (problem,) = archive.problems  # run.json says rep 0: a mismatch, not an escape
    assert problem.code == "archive.run_mismatch"


def test_submission_symlink_escaping_root(arch, tmp_path):
    sub = _run_dir(arch) / "submission.csv"
    sub.unlink()
    os.symlink(tmp_path / "secret.txt", sub)
    vsub = _run_dir(arch) / "versions" / "v1" / "submission.csv"
    vsub.unlink()
    os.symlink(tmp_path / "secret.txt", vsub)
    archive = open_archive(arch)
    (run,) = archive.runs()
    assert run.submission_path is None and run.submission_issue == "archive.unsafe_path"
    assert run.versions[0].submission_path is None
    assert run.versions[0].submission_issue == "archive.unsafe_path"
    assert [p.details["effect"] for p in archive.problems] == ["submission unreadable"] * 2


def test_dangling_submission_symlink(arch):
    sub = _run_dir(arch) / "submission.csv"
    sub.unlink()
    os.symlink(_run_dir(arch) / "nothing.csv", sub)
    (run,) = open_archive(arch).runs()
    assert run.submission_path is None and run.submission_issue == "archive.not_a_file"


def test_run_json_symlink_escaping_root(arch, tmp_path):
    rj = _run_dir(arch) / "run.json"
    (tmp_path / "run.json").write_text(rj.read_text())
    rj.unlink()
    os.symlink(tmp_path / "run.json", rj)
    archive = open_archive(arch)
    assert archive.runs() == []
    assert archive.problems[0].code == "archive.unsafe_path"


def test_archive_yaml_symlink_escaping_root(tmp_path):
    root = tmp_path / "arch"
    root.mkdir()
    (tmp_path / "real.yaml").write_text("schema_version: 1\nname: x\nexperiments: {main: m}\n")
    os.symlink(tmp_path / "real.yaml", root / "archive.yaml")
    with pytest.raises(ArchiveError) as exc:
        open_archive(root)
    assert exc.value.code == "archive.unsafe_path"


def test_reader_never_writes(arch):
    before = {p: p.stat().st_mtime_ns for p in arch.rglob("*")}
    archive = open_archive(arch)
    for run in archive.runs():
        run.read_text("journal.md")
    after = {p: p.stat().st_mtime_ns for p in arch.rglob("*")}
    assert before == after


_SEGMENTS = st.sampled_from(["a", "b", "..", ".", "", "code", "x.py", "~", "%2e%2e", "..."])


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    parts=st.lists(_SEGMENTS, min_size=1, max_size=6),
    lead=st.sampled_from(["", "/", "//"]),
)
def test_resolve_inside_never_escapes(tmp_path, parts, lead):
    base = tmp_path / "base"
    (base / "a").mkdir(parents=True, exist_ok=True)
    if not (base / "a" / "out").is_symlink():
        os.symlink(tmp_path, base / "a" / "out")
    rel = lead + "/".join(parts)
    try:
        resolved = resolve_inside(base, rel, base=base, what="test")
    except ArchiveError as exc:
        assert exc.code == "archive.unsafe_path"
        return
    assert resolved.is_relative_to(base.resolve())
    assert ".." not in Path(rel).parts and not rel.startswith("/")


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=string.printable + "\x00\u00e9", max_size=30))
def test_resolve_inside_arbitrary_text(tmp_path, text):
    base = tmp_path / "b2"
    base.mkdir(exist_ok=True)
    try:
        resolved = resolve_inside(base, text, base=base, what="test")
    except ArchiveError as exc:
        assert exc.code == "archive.unsafe_path"
    else:
        assert resolved.is_relative_to(base.resolve())


@settings(max_examples=50, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(size=st.integers(min_value=0, max_value=64), limit=st.integers(min_value=0, max_value=64))
def test_read_bounded_limit_is_exact(tmp_path, size, limit):
    path = tmp_path / "f.bin"
    path.write_bytes(b"z" * size)
    if size <= limit:
        assert read_bounded(path, limit, tmp_path) == b"z" * size
    else:
        with pytest.raises(ArchiveError) as exc:
            read_bounded(path, limit, tmp_path)
        assert exc.value.code == "archive.too_large"
