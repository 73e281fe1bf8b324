"""The shared atomic-write helper: complete file or previous file, never a partial one."""

from __future__ import annotations

import os
import stat

import pytest

from automd_analysis._atomic import atomic_path, write_bytes_atomic, write_text_atomic


def test_writes_bytes_and_text_exactly(tmp_path):
    target = tmp_path / "sub" / "a.csv"  # the parent is created
    write_text_atomic(target, "x,y\r\n1,2\n")
    assert target.read_bytes() == b"x,y\r\n1,2\n"  # line endings untouched
    write_bytes_atomic(target, b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in target.parent.iterdir()) == ["a.csv"]  # no temporary left


def test_failure_keeps_the_previous_file_and_removes_the_temporary(tmp_path):
    target = tmp_path / "t.parquet"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_path(target, prefix=".tmp-") as tmp:
        assert os.path.basename(tmp).startswith(".tmp-") and tmp.endswith(".parquet.tmp")
        with open(tmp, "wb") as fh:
            fh.write(b"half")
        raise RuntimeError("writer crashed")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.parquet"]


def test_written_files_get_the_mode_open_would_give(tmp_path):
    umask = os.umask(0)
    os.umask(umask)
    target = write_bytes_atomic(tmp_path / "m.bin", b"1")
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
