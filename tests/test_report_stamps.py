"""Up-to-date notebooks and their published outputs (automd_analysis.app.stamps)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from automd_analysis.app import stamps
from automd_analysis.app.stamps import (
    check_stamp,
    notebook_inputs,
    notebook_key,
    publish_outputs,
    read_stamp,
    staging_dir,
    store_fingerprint,
    sweep,
)

NAME = "05_demo"


def _source(tmp_path: Path, text: str = '{"cells": []}') -> Path:
    path = tmp_path / "src" / f"{NAME}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _inputs(tmp_path: Path, **changes) -> dict:
    inputs = notebook_inputs(_source(tmp_path), {"seed": 0}, "generation:abc", None)
    return {**inputs, **changes}


def _stage(out: Path, tables: dict[str, str], page: str = "<html>") -> None:
    staging = staging_dir(out, NAME)
    (staging / "tables").mkdir(parents=True, exist_ok=True)
    (staging / "figures").mkdir(exist_ok=True)
    for name, text in tables.items():
        (staging / "tables" / name).write_text(text)
    (staging / "figures" / "fig.png").write_bytes(b"\x89PNG")
    (staging / f"{NAME}.ipynb").write_text("{}")
    (staging / f"{NAME}.html").write_text(page)


def _publish(out: Path, inputs: dict, **tables: str) -> list[str]:
    _stage(out, {f"{k}.csv": v for k, v in tables.items()})
    return publish_outputs(
        out, NAME, stamp=read_stamp(out, NAME), key=notebook_key(inputs), inputs=inputs, title="T"
    )


def test_every_input_changes_the_key_and_is_named(tmp_path):
    base = _inputs(tmp_path)
    assert notebook_key(base) == notebook_key(dict(reversed(list(base.items()))))  # canonical
    out = tmp_path / "out"
    _publish(out, base, a="1")
    stamp = read_stamp(out, NAME)
    assert check_stamp(out, stamp, notebook_key(base), base) is None
    for name, value, said in [
        ("notebook", "other", "the notebook changed"),
        ("parameters", {"seed": 1}, "its parameters changed"),
        ("store", "generation:def", "the score store changed"),
        ("masking", "sha", "the masking results changed"),
        ("provenance", "A new description.", "the archive's description changed"),
        ("package", "new", "the automd-analysis code changed"),
        ("environment", "new", "the Python environment changed"),
    ]:
        changed = {**base, name: value}
        assert notebook_key(changed) != notebook_key(base)
        assert check_stamp(out, stamp, notebook_key(changed), changed) == said
    assert check_stamp(out, None, "k", base) == "no earlier successful run"


def test_the_source_bytes_and_the_code_enter_the_inputs(tmp_path):
    first = notebook_inputs(_source(tmp_path, "a"), {}, "s", None)
    second = notebook_inputs(_source(tmp_path, "b"), {}, "s", None)
    assert first["notebook"] != second["notebook"]
    assert first["package"] == second["package"] and len(first["package"]) == 64
    assert first["environment"] and first["parameters"] == {}


def test_publish_replaces_the_previous_outputs_and_stamps_them(tmp_path):
    out = tmp_path / "out"
    inputs = _inputs(tmp_path)
    first = _publish(out, inputs, a="1", gone="x")
    assert "tables/gone.csv" in first and (out / "tables" / "gone.csv").is_file()
    assert not staging_dir(out, NAME).exists()
    second = _publish(out, inputs, a="2")
    assert not (out / "tables" / "gone.csv").exists()  # the old run's file went with it
    assert (out / "tables" / "a.csv").read_text() == "2"
    assert set(second) == set(read_stamp(out, NAME).outputs)
    assert {"html/05_demo.html", "notebooks/05_demo.ipynb", "figures/fig.png"} <= set(second)


def test_a_modified_or_missing_output_is_not_up_to_date(tmp_path):
    out = tmp_path / "out"
    inputs = _inputs(tmp_path)
    _publish(out, inputs, a="1", b="2")
    stamp, key = read_stamp(out, NAME), notebook_key(inputs)
    (out / "tables" / "a.csv").write_text("tampered")
    assert (
        check_stamp(out, stamp, key, inputs) == "its output tables/a.csv is missing or was modified"
    )
    (out / "tables" / "a.csv").unlink()
    assert "tables/a.csv" in check_stamp(out, stamp, key, inputs)


def test_a_failed_run_publishes_its_partial_files_without_a_stamp(tmp_path):
    out = tmp_path / "out"
    inputs = _inputs(tmp_path)
    _publish(out, inputs, a="1")
    _stage(out, {"partial.csv": "p"})
    published = publish_outputs(out, NAME, stamp=read_stamp(out, NAME), key=None)
    assert read_stamp(out, NAME) is None
    assert "tables/partial.csv" in published and not (out / "tables" / "a.csv").exists()


@pytest.mark.parametrize("crash_at", range(16))
def test_a_publish_killed_at_any_step_never_leaves_the_notebook_up_to_date(
    tmp_path, monkeypatch, crash_at
):
    """Kill the publication of a re-run after ``crash_at`` file operations: the next regenerate
    must re-execute the notebook (its stamp is gone or still names the old inputs)."""
    out = tmp_path / "out"
    old = _inputs(tmp_path)
    _publish(out, old, a="old", b="old")
    new = {**old, "store": "generation:new"}
    _stage(out, {"a.csv": "new", "b.csv": "new", "c.csv": "new"})
    calls = {"n": 0}
    real_replace, real_unlink = os.replace, Path.unlink

    def step():
        calls["n"] += 1
        if calls["n"] > crash_at:
            raise KeyboardInterrupt("killed")

    def replace(src, dst):
        step()
        return real_replace(src, dst)

    def unlink(self, missing_ok=False):
        step()
        return real_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(stamps.os, "replace", replace)
    monkeypatch.setattr(Path, "unlink", unlink)
    try:
        publish_outputs(out, NAME, stamp=read_stamp(out, NAME), key=notebook_key(new), inputs=new)
        finished = True
    except KeyboardInterrupt:
        finished = False
    monkeypatch.undo()
    stamp = read_stamp(out, NAME)
    up_to_date = check_stamp(out, stamp, notebook_key(new), new) is None
    assert up_to_date == finished
    if stamp is not None and not finished:  # the old stamp survived: its files are intact
        assert stamp.inputs == old and check_stamp(out, stamp, notebook_key(old), old) is None
    sweep(out, [NAME])
    owned = set(read_stamp(out, NAME).outputs) if read_stamp(out, NAME) else set()
    on_disk = {
        f"{p.parent.name}/{p.name}" for sub in stamps.OUTPUT_DIRS for p in (out / sub).glob("*")
    }
    assert on_disk == owned  # nothing half-published survives the next run's sweep


def test_sweep_keeps_owned_files_only(tmp_path):
    out = tmp_path / "out"
    inputs = _inputs(tmp_path)
    _publish(out, inputs, a="1")
    (out / "tables" / "stray.csv").write_text("x")
    (out / "tables" / "partial.csv").write_text("x")
    (out / "notes.txt").write_text("mine")  # outside the report layout: never touched
    (out / stamps.STATE_DIR / "99_gone.json").write_text("{}")
    staging_dir(out, "99_gone").mkdir(parents=True)
    removed = sweep(out, [NAME], also_keep=["tables/partial.csv"])
    assert removed == ["tables/stray.csv"]
    assert (out / "tables" / "partial.csv").is_file() and (out / "notes.txt").is_file()
    assert not (out / stamps.STATE_DIR / "99_gone.json").exists()
    assert not (out / stamps.STATE_DIR / "staging").exists()
    assert sweep(out, []) and read_stamp(out, NAME) is None  # a notebook that is gone


def test_store_fingerprint_is_the_generation_or_the_files(tmp_path):
    store = tmp_path / "store"
    (store / "generations" / "abc123").mkdir(parents=True)
    os.symlink("generations/abc123", store / "current")
    assert store_fingerprint(store) == "generation:abc123"
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "scores.parquet").write_bytes(b"1")
    first = store_fingerprint(plain)
    (plain / "scores.parquet").write_bytes(b"2")
    assert first.startswith("files:") and store_fingerprint(plain) != first


def test_an_unreadable_stamp_means_run_again(tmp_path):
    out = tmp_path / "out"
    (out / stamps.STATE_DIR).mkdir(parents=True)
    (out / stamps.STATE_DIR / f"{NAME}.json").write_text("{not json")
    assert read_stamp(out, NAME) is None
