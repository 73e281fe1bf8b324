"""The fast reader over many batches: rows in label order take no lookup, any other order, a
repeated or a missing row gives exactly the strict reader's verdict, reasons and values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_submissions_properties import SETTINGS
from test_tasks_tiny import FORMATS, make_tiny_task

from automd_analysis import submissions
from automd_analysis.submissions import validate_submission
from automd_analysis.tasks import load_labels


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    base = tmp_path_factory.mktemp("batches")
    out = {}
    for fmt in FORMATS:
        t = make_tiny_task(base / fmt, fmt, n=40)
        out[fmt] = (t, load_labels(t.task))
    return out


def _same(a, b) -> None:
    assert a.to_dict() == b.to_dict()
    if a.valid:
        for field in ("probability", "label", "surv", "time_grid"):
            x, y = getattr(a.predictions, field), getattr(b.predictions, field)
            assert (x is None and y is None) or (x.dtype == y.dtype and np.array_equal(x, y))


def _rows(t) -> tuple[str, list[str]]:
    lines = t.sample.read_text().splitlines()
    return lines[0], lines[1:]


def _write(tmp: Path, header: str, rows: list[str]) -> Path:
    path = tmp / "sub.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_rows_in_label_order_are_read_without_a_lookup(tasks, fmt, tmp_path, monkeypatch):
    t, labels = tasks[fmt]
    header, rows = _rows(t)
    path = _write(tmp_path, header, rows)
    monkeypatch.setattr(submissions, "_FAST_BLOCK_BYTES", 64)  # a batch every few rows

    def no_lookup(*args, **kwargs):
        raise AssertionError("rows in label order were looked up")

    monkeypatch.setattr(submissions, "_fast_positions", no_lookup)
    fast = submissions._fast_validate(t.task, labels, labels.time_grid, path)
    assert fast is not None and fast[1] == len(rows)
    _same(validate_submission(t.task, path, labels), validate_submission(t.task, path, labels,
                                                                         engine="python"))  # fmt: skip


@SETTINGS
@given(
    fmt=st.sampled_from(sorted(FORMATS)),
    block=st.integers(16, 400),
    edits=st.lists(
        st.tuples(
            st.sampled_from(["swap", "repeat", "drop", "move"]),
            st.integers(0, 10**6),
            st.integers(0, 10**6),
        ),
        max_size=3,
    ),  # fmt: skip
)
def test_any_row_order_in_any_batches_agrees_with_the_strict_reader(tasks, fmt, block, edits):
    t, labels = tasks[fmt]
    header, rows = _rows(t)
    rows = list(rows)
    for op, a, b in edits:
        i, j = a % len(rows), b % len(rows)
        if op == "swap":
            rows[i], rows[j] = rows[j], rows[i]
        elif op == "repeat":  # the same key twice, in one batch or in two
            rows.insert(j, rows[i])
        elif op == "drop" and len(rows) > 1:
            rows.pop(i)
        elif op == "move":
            rows.insert(j, rows.pop(i))
    original = submissions._FAST_BLOCK_BYTES
    submissions._FAST_BLOCK_BYTES = block
    try:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            path = _write(Path(d), header, rows)
            fast = validate_submission(t.task, path, labels)
            strict = validate_submission(t.task, path, labels, engine="python")
    finally:
        submissions._FAST_BLOCK_BYTES = original
    _same(fast, strict)
