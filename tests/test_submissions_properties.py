"""Property tests: random bytes and random CSV mutations never raise, verdicts are consistent,
the standalone validate.py agrees, row order does not matter, numbers are parsed exactly."""

from __future__ import annotations

import importlib.util
import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_tasks_tiny import FORMATS, make_tiny_task

from automd_analysis.submissions import REASON_CODES, canonical_hours, validate_submission
from automd_analysis.tasks import canonical_hour, load_labels, parse_floats

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    base = tmp_path_factory.mktemp("tiny")
    out = {}
    for fmt in FORMATS:
        t = make_tiny_task(base / fmt, fmt)
        spec = importlib.util.spec_from_file_location(f"tiny_validate_{fmt}", t.validator)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out[fmt] = (t, load_labels(t.task), module)
    return out


def _check_result(result, labels, kind):
    """Invariants every result satisfies."""
    json.dumps(result.to_dict())  # JSON-serialisable
    assert set(result.codes) <= set(REASON_CODES)
    assert len(result.codes) == len(set(result.codes))
    if not result.valid:
        assert result.reasons and result.predictions is None
        return
    assert not result.reasons
    p = result.predictions
    n = len(labels.ids)
    if kind == "survival":
        assert p.surv.shape == (n, len(labels.time_grid))
        assert np.isfinite(p.surv).all() and (p.surv >= 0).all() and (p.surv <= 1).all()
        assert (np.diff(p.surv, axis=1) <= 0).all()
    else:
        assert p.probability.shape == (n,)
        assert np.isfinite(p.probability).all()
        assert ((p.probability >= 0) & (p.probability <= 1)).all()
        if p.label is not None:
            assert set(np.unique(p.label)) <= {0, 1}


def _validate(tiny, fmt, data: bytes, chunk_rows=5):
    t, labels, module = tiny[fmt]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "sub.csv"
        path.write_bytes(data)
        result = validate_submission(t.task, path, labels=labels, chunk_rows=chunk_rows)
        strict = validate_submission(t.task, path, labels=labels, engine="python")
        standalone = module.check(str(path))
    _check_result(result, labels, t.task.manifest.kind.value)
    assert {r.code: r.count for r in result.reasons} == standalone.counts
    # the fast reader never changes a verdict, a reason or a value
    assert result.to_dict() == strict.to_dict()
    assert [r.count for r in result.reasons] == [r.count for r in strict.reasons]
    if result.valid:
        for field in ("probability", "label", "surv", "time_grid"):
            x, y = getattr(result.predictions, field), getattr(strict.predictions, field)
            assert (x is None and y is None) or (x.dtype == y.dtype and np.array_equal(x, y))
    return result


@SETTINGS
@given(fmt=st.sampled_from(sorted(FORMATS)), data=st.binary(max_size=600))
def test_random_bytes_never_raise(tiny, fmt, data):
    _validate(tiny, fmt, data)


CELL = st.one_of(
    st.sampled_from(
        [
            "",
            "nan",
            "NaN",
            "inf",
            "-inf",
            "NA",
            "0",
            "1",
            "0.5",
            "1.0",
            "2",
            "-0.1",
            "1e-3",
            "1_0",
            " 0.3 ",
            '"0.4"',
            "abc",
            "id000",
            "p000",
            "3",
            "3.0",
            "3.5",
            ",",
            '"',
            "\n",
            "\r\n",
            "é",
            "\x00",
        ]
    ),  # fmt: skip
    st.text(max_size=6),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


@st.composite
def mutations(draw, fmt_names=tuple(sorted(FORMATS))):
    fmt = draw(st.sampled_from(fmt_names))
    ops = draw(
        st.lists(
            st.tuples(
                st.sampled_from(
                    ["drop", "dup", "swap", "cell", "header", "insert", "truncate", "crlf", "bom"]
                ),
                st.integers(0, 10_000),
                st.integers(0, 10_000),
                CELL,
            ),
            min_size=0,
            max_size=4,
        )
    )
    return fmt, ops


def _mutate(text: str, ops) -> bytes:
    lines = text.splitlines()
    for op, a, b, cell in ops:
        if not lines:
            lines = [""]
        i, j = a % len(lines), b % len(lines)
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(j, lines[i])
        elif op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif op in ("cell", "header"):
            k = 0 if op == "header" else i
            fields = lines[k].split(",")
            fields[b % len(fields)] = cell
            lines[k] = ",".join(fields)
        elif op == "insert":
            lines.insert(i, cell)
        elif op == "truncate":
            joined = "\n".join(lines)
            lines = joined[: a % (len(joined) + 1)].split("\n")
        elif op == "crlf":
            return ("\r\n".join(lines) + "\r\n").encode("utf-8", "surrogatepass")
        elif op == "bom":
            lines[0] = "\ufeff" + lines[0]
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")


@SETTINGS
@given(case=mutations())
def test_random_csv_mutations_never_raise_and_agree(tiny, case):
    fmt, ops = case
    t = tiny[fmt][0]
    data = _mutate(t.sample.read_text(), ops)
    _validate(tiny, fmt, data)


@pytest.mark.slow
@SETTINGS
@given(fmt=st.sampled_from(sorted(FORMATS)), seed=st.integers(0, 2**32 - 1))
def test_row_order_does_not_matter(tiny, fmt, seed):
    t, labels, _ = tiny[fmt]
    lines = t.sample.read_text().splitlines()
    header, rows = lines[0], lines[1:]
    rng = np.random.default_rng(seed)
    values = rng.random(len(rows))
    rebuilt = []
    for row, v in zip(rows, values, strict=True):
        fields = row.split(",")
        if fmt == "survival":
            fields[1:] = [repr(float(v * 0.9**k)) for k in range(len(fields) - 1)]
        else:
            fields[len(t.task.manifest.submission.id_columns)] = repr(float(v))
        rebuilt.append(",".join(fields))
    order = rng.permutation(len(rebuilt))
    a = _validate(tiny, fmt, ("\n".join([header, *rebuilt]) + "\n").encode())
    b = _validate(tiny, fmt, ("\n".join([header, *[rebuilt[k] for k in order]]) + "\n").encode())
    assert a.valid and b.valid
    for field in ("probability", "surv", "label"):
        x, y = getattr(a.predictions, field), getattr(b.predictions, field)
        assert (x is None and y is None) or np.array_equal(x, y)


NUMBERISH = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.tuples(st.floats(0, 1), st.integers(1, 25)).map(lambda t: f"{t[0]:.{t[1]}g}"),
    st.from_regex(
        r"[ +\-]?[0-9]{0,3}(\.[0-9]{0,4})?([eEdD][+\-]?[0-9]{0,3})?[ \t]?", fullmatch=True
    ),
    st.sampled_from(
        ["1_0", "0x1", "١", "infinity", "-Infinity", "+nan", "1e400", ".", "-", "0.", ".5"]
    ),
)


@pytest.mark.slow
@SETTINGS
@given(
    fmt=st.sampled_from(sorted(FORMATS)),
    row=st.integers(0, 50),
    col=st.integers(0, 9),
    cell=NUMBERISH,
)
def test_fast_reader_agrees_on_odd_numbers(tiny, fmt, row, col, cell):
    """Any cell text the fast reader accepts must mean exactly what Python's float says."""
    t = tiny[fmt][0]
    lines = t.sample.read_text().splitlines()
    r = 1 + row % (len(lines) - 1)
    fields = lines[r].split(",")
    n_id = len(t.task.manifest.submission.id_columns)
    c = n_id + col % (len(fields) - n_id) if fmt != "sequential" or col % 2 else 1
    fields[c] = cell
    lines[r] = ",".join(fields)
    _validate(tiny, fmt, ("\n".join(lines) + "\n").encode())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=20))
def test_parse_floats_is_exact(values):
    for fmt in ("{!r}", "{:.17g}", "{:.17e}"):
        cells = [fmt.format(v) for v in values]
        np.testing.assert_array_equal(parse_floats(cells), np.array(values, dtype=np.float64))


def test_parse_floats_rejects_non_numbers():
    out = parse_floats(["1_000", "abc", "", " 2.5 ", "1e3", "-0", "NaN", "\u0661", "\u2003 1"])
    assert np.isnan(out[[0, 1, 2, 6, 7, 8]]).all()
    assert list(out[[3, 4, 5]]) == [2.5, 1000.0, 0.0]


def test_canonical_hour():
    assert [canonical_hour(h) for h in ["7", "7.0", " 07 ", "1e1", "-0"]] == [
        "7",
        "7",
        "7",
        "10",
        "0",
    ]
    assert [canonical_hour(h) for h in ["7.5", "", "x", "nan", "inf", "1_0"]] == [None] * 6


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(CELL, st.integers(-(2**70), 2**70).map(str)), max_size=12))
def test_vectorised_canonical_hours(texts):
    expected = [canonical_hour(t) for t in texts]
    assert list(canonical_hours(np.array(texts, dtype=object))) == expected
