"""A corpus of malformed submissions over the four formats, the reason codes they must get, and
agreement of each task's standalone ``validate.py`` with :func:`validate_submission`.

Cases are generated from each demo task's own ``sample_submission.csv``: survival
(``demo_rotterdam``), classification AUROC (``demo_support_death30``), classification with
``PredictedLabel`` (``demo_rhc_death30``) and sequential (``demo_sepsis_newhosp``).
"""

from __future__ import annotations

import gzip
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from automd_analysis.submissions import REASON_CODES, paper_category, validate_submission
from automd_analysis.tasks import get_task, load_labels

#: Integration tests (CLI, end to end, demo cohorts): `make test-fast` skips them.
pytestmark = pytest.mark.slow

SURV, AUROC, BINARY, SEQ = (
    "demo_rotterdam",
    "demo_support_death30",
    "demo_rhc_death30",
    "demo_sepsis_newhosp",
)


def _sample(root, task_id) -> pd.DataFrame:
    path = get_task(task_id, data=root).path("sample_submission")
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _write(df: pd.DataFrame, path: Path, **kw) -> Path:
    df.to_csv(path, index=False, lineterminator=kw.pop("lineterminator", "\n"), **kw)
    return path


@dataclass(frozen=True)
class Case:
    task: str
    name: str
    make: Callable[[pd.DataFrame, Path], Path]  # (sample as text frame, tmp dir) -> file
    expected: tuple[str, ...]  # reason codes, in check order
    standalone: bool = True  # also compare with the task's validate.py
    kwargs: tuple = ()


def df_case(fn: Callable[[pd.DataFrame], pd.DataFrame]):
    """A case whose file is the transformed sample, written as plain CSV."""

    def make(df: pd.DataFrame, tmp: Path) -> Path:
        return _write(fn(df.copy()), tmp / "sub.csv")

    return make


def text_case(fn: Callable[[str], str | bytes]):
    """A case whose file is a transformation of the sample's CSV text."""

    def make(df: pd.DataFrame, tmp: Path) -> Path:
        data = fn(df.to_csv(index=False, lineterminator="\n"))
        path = tmp / "sub.csv"
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8", newline="")
        else:
            path.write_bytes(data)
        return path

    return make


def _set(df, row, col, value):
    df.iloc[row, col] = value
    return df


def _shuffle(df, seed=0):
    rng = np.random.default_rng(seed)
    return df.iloc[rng.permutation(len(df))]


def _shuffle_columns(df, seed=1):
    rng = np.random.default_rng(seed)
    return df[list(np.array(df.columns)[rng.permutation(df.shape[1])])]


def _rename(df, mapping):
    return df.rename(columns=mapping)


def _dup_header(df, col):
    cols = list(df.columns) + [col]
    data = pd.concat([df, df[[col]]], axis=1)
    data.columns = cols
    return data


def _last_line_dropped(text):
    return "".join(text.splitlines(keepends=True)[:-1])


def _grid(df):
    return list(df.columns[1:])


CASES = [
    # ---------------- survival ----------------
    Case(SURV, "shuffled rows and columns", df_case(lambda d: _shuffle_columns(_shuffle(d))), ()),
    Case(
        SURV,
        "headers with trailing zeros",
        df_case(lambda d: _rename(d, {c: c + "0" for c in _grid(d) if "." in c})),
        (),
    ),
    Case(
        SURV,
        "BOM, CRLF and quoted cells",
        text_case(
            lambda t: (
                "\ufeff"
                + "\r\n".join('"' + ln.replace(",", '","') + '"' for ln in t.splitlines())
                + "\r\n"
            )
        ),
        (),
    ),
    Case(
        SURV,
        "prefixed grid headers",
        df_case(lambda d: _rename(d, {c: f"t_{c}" for c in _grid(d)})),
        ("columns.grid_missing", "columns.grid_extra"),
    ),
    Case(
        SURV,
        "one header rounded",
        df_case(lambda d: _rename(d, {_grid(d)[1]: f"{float(_grid(d)[1]):.3f}"})),
        ("columns.grid_missing", "columns.grid_extra"),
    ),
    Case(
        SURV,
        "one grid column dropped",
        df_case(lambda d: d.drop(columns=_grid(d)[5])),
        ("columns.grid_missing",),
    ),
    Case(
        SURV,
        "probability column added",
        df_case(lambda d: d.assign(PredictedProbability="0.5")),
        ("columns.grid_extra",),
    ),
    Case(
        SURV,
        "id column renamed",
        df_case(lambda d: _rename(d, {"patient_id": "id"})),
        ("columns.missing", "columns.grid_extra"),
    ),
    Case(
        SURV,
        "grid column repeated",
        df_case(lambda d: _dup_header(d, _grid(d)[3])),
        ("columns.duplicate",),
    ),
    Case(
        SURV,
        "two headers for one grid time",
        df_case(lambda d: d.assign(**{"0": d[_grid(d)[0]]})),
        ("columns.grid_duplicate",),
    ),
    Case(
        SURV,
        "curve increases",
        df_case(lambda d: _set(d, 4, d.shape[1] - 1, "0.999")),
        ("survival.increasing",),
    ),
    Case(
        SURV,
        "survival above 1",
        df_case(lambda d: _set(d, 2, 1, "1.5")),
        ("survival.out_of_range",),
    ),
    Case(
        SURV,
        "negative survival",
        df_case(lambda d: _set(d, 2, d.shape[1] - 1, "-0.1")),
        ("survival.out_of_range",),
    ),
    Case(SURV, "nan cell", df_case(lambda d: _set(d, 3, 7, "nan")), ("values.non_finite",)),
    Case(SURV, "empty cell", df_case(lambda d: _set(d, 3, 7, "")), ("values.missing",)),
    Case(SURV, "text cell", df_case(lambda d: _set(d, 3, 7, "abc")), ("values.non_numeric",)),
    Case(SURV, "patient missing", df_case(lambda d: d.drop(index=10)), ("ids.missing",)),
    Case(
        SURV,
        "patient repeated",
        df_case(lambda d: pd.concat([d, d.iloc[[0]]])),
        ("ids.duplicate",),
    ),
    Case(
        SURV,
        "unknown patient",
        df_case(lambda d: pd.concat([d, d.iloc[[0]].assign(patient_id="rot99999")])),
        ("ids.extra",),
    ),
    Case(
        SURV,
        "id case changed",
        df_case(lambda d: _set(d, 0, 0, d.iloc[0, 0].upper())),
        ("ids.missing", "ids.extra"),
    ),
    Case(SURV, "header only", df_case(lambda d: d.iloc[:0]), ("ids.missing",)),
    # ---------------- classification, AUROC ----------------
    Case(AUROC, "shuffled", df_case(_shuffle), ()),
    Case(
        AUROC,
        "BOM, CRLF, quotes, spaces, blank lines",
        text_case(
            lambda t: (
                "\ufeff"
                + "\r\n\r\n".join(
                    '"' + ln.replace(",", '"," ') + ' "' if i else ln
                    for i, ln in enumerate(t.splitlines())
                )
            )
        ),
        (),
    ),
    Case(
        AUROC,
        "probability above 1",
        df_case(lambda d: _set(d, 1, 1, "1.2")),
        ("probability.out_of_range",),
    ),
    Case(
        AUROC,
        "negative probability",
        df_case(lambda d: _set(d, 1, 1, "-0.1")),
        ("probability.out_of_range",),
    ),
    Case(
        AUROC,
        "infinite probability",
        df_case(lambda d: _set(d, 1, 1, "inf")),
        ("values.non_finite",),
    ),
    Case(
        AUROC,
        "digit separators are not numbers",
        df_case(lambda d: _set(d, 1, 1, "0_5")),
        ("values.non_numeric",),
    ),
    Case(
        AUROC,
        "probability column renamed",
        df_case(lambda d: _rename(d, {"PredictedProbability": "prob"})),
        ("columns.missing", "columns.extra"),
    ),
    Case(
        AUROC,
        "label column not expected",
        df_case(lambda d: d.assign(PredictedLabel="0")),
        ("columns.extra",),
    ),
    Case(
        AUROC,
        "duplicate column",
        df_case(lambda d: _dup_header(d, "PredictedProbability")),
        ("columns.duplicate",),
    ),
    Case(
        AUROC,
        "row with an extra field",
        text_case(lambda t: t.replace("\n", ",0.3\n", 5).replace(",0.3\n", "\n", 4)),
        ("csv.ragged",),
    ),
    Case(
        AUROC,
        "unterminated quote",
        text_case(lambda t: _last_line_dropped(t) + '"sup99999,0.5\n'),
        ("csv.malformed",),
    ),
    Case(
        AUROC,
        "latin-1 bytes",
        text_case(lambda t: t.encode("utf-8") + "café,0.5\n".encode("latin-1")),
        ("file.encoding",),
    ),
    Case(AUROC, "UTF-16", text_case(lambda t: t.encode("utf-16")), ("file.binary",)),
    Case(AUROC, "gzip", text_case(lambda t: gzip.compress(t.encode(), mtime=0)), ("file.binary",)),
    Case(AUROC, "empty file", text_case(lambda t: b""), ("file.empty",)),
    Case(AUROC, "only blank lines", text_case(lambda t: "\n\r\n \n"), ("file.empty",)),
    Case(AUROC, "70,000 blank lines before the header", text_case(lambda t: "\n" * 70_000 + t), ()),
    Case(
        AUROC,
        "file does not exist",
        lambda d, tmp: tmp / "nothing.csv",
        ("file.missing",),
    ),
    Case(AUROC, "a directory", lambda d, tmp: tmp, ("file.not_regular",)),
    Case(
        AUROC,
        "over the size limit",
        df_case(lambda d: d),
        ("file.too_large",),
        standalone=False,
        kwargs=(("max_bytes", 100),),
    ),
    # ---------------- classification with PredictedLabel ----------------
    Case(BINARY, "shuffled", df_case(_shuffle), ()),
    Case(BINARY, "labels written as 1.0", df_case(lambda d: _set(d, 0, 2, "1.0")), ()),
    Case(
        BINARY,
        "label column missing",
        df_case(lambda d: d.drop(columns="PredictedLabel")),
        ("columns.missing",),
    ),
    Case(BINARY, "label 2", df_case(lambda d: _set(d, 0, 2, "2")), ("label.not_binary",)),
    Case(BINARY, "label 0.5", df_case(lambda d: _set(d, 0, 2, "0.5")), ("label.not_binary",)),
    Case(BINARY, "label NA", df_case(lambda d: _set(d, 0, 2, "NA")), ("values.missing",)),
    Case(BINARY, "label yes", df_case(lambda d: _set(d, 0, 2, "yes")), ("values.non_numeric",)),
    Case(
        BINARY,
        "NaN probability and label 3",
        df_case(lambda d: _set(_set(d, 0, 1, "NaN"), 5, 2, "3")),
        ("values.non_finite", "label.not_binary"),
    ),
    # ---------------- sequential ----------------
    Case(SEQ, "shuffled", df_case(_shuffle), ()),
    Case(
        SEQ, "hours written as floats", df_case(lambda d: d.assign(ICULOS=d["ICULOS"] + ".0")), ()
    ),
    Case(SEQ, "one patient-hour missing", df_case(lambda d: d.drop(index=3)), ("rows.missing",)),
    Case(
        SEQ,
        "one patient missing",
        df_case(lambda d: d[d["patient_id"] != d["patient_id"].iloc[0]]),
        ("rows.missing",),
    ),
    Case(
        SEQ,
        "hour after discharge",
        df_case(lambda d: pd.concat([d, d.iloc[[0]].assign(ICULOS="999")])),
        ("rows.extra",),
    ),
    Case(
        SEQ,
        "patient-hour repeated",
        df_case(lambda d: pd.concat([d, d.iloc[[7]]])),
        ("rows.duplicate",),
    ),
    Case(
        SEQ,
        "fractional hour",
        df_case(lambda d: _set(d, 2, 1, "2.5")),
        ("rows.missing", "rows.extra"),
    ),
    Case(SEQ, "blank hour", df_case(lambda d: _set(d, 2, 1, "")), ("rows.missing", "rows.extra")),
    Case(
        SEQ,
        "unknown patient",
        df_case(lambda d: pd.concat([d, d.iloc[[0]].assign(patient_id="p99999")])),
        ("rows.extra",),
    ),
    Case(SEQ, "alarm 2", df_case(lambda d: _set(d, 4, 3, "2")), ("label.not_binary",)),
    Case(
        SEQ,
        "hour column missing",
        df_case(lambda d: d.drop(columns="ICULOS")),
        ("columns.missing",),
    ),
    Case(
        SEQ,
        "probability above 1 on a duplicated row",
        df_case(lambda d: pd.concat([d, _set(d.iloc[[9]].copy(), 0, 2, "1.01")])),
        ("rows.duplicate", "probability.out_of_range"),
    ),
]


def _ids(case):
    return f"{case.task}-{case.name}"


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_corpus_reason_codes(demo_root, tmp_path, case):
    task = get_task(case.task, data=demo_root)
    path = case.make(_sample(demo_root, case.task), tmp_path)
    result = validate_submission(task, path, **dict(case.kwargs))
    assert tuple(result.codes) == case.expected, result.to_dict()
    assert result.valid == (not case.expected)
    for reason in result.reasons:
        assert reason.code in REASON_CODES
        assert reason.message and reason.count >= 1
        assert len(reason.examples) <= 5
    if result.valid:
        assert result.predictions is not None
    else:
        assert result.predictions is None
    # the fast reader (default) and the strict csv path give the same verdict, reasons and values
    strict = validate_submission(task, path, engine="python", **dict(case.kwargs))
    assert strict.to_dict() == result.to_dict()
    if result.valid:
        for field in ("probability", "label", "surv", "time_grid"):
            x, y = getattr(result.predictions, field), getattr(strict.predictions, field)
            assert (x is None and y is None) or np.array_equal(x, y)


def test_corpus_covers_every_format_and_many_cases():
    invalid = [c for c in CASES if c.expected]
    assert len(invalid) >= 30
    assert {c.task for c in invalid} == {SURV, AUROC, BINARY, SEQ}
    covered = {code for c in invalid for code in c.expected}
    # every code except the ones that need a special file system setup is exercised here
    assert set(REASON_CODES) - covered == {
        "file.outside_root",
        "file.unreadable",
    }


def _load_validator(root, task_id):
    path = get_task(task_id, data=root).path("validate")
    spec = importlib.util.spec_from_file_location(f"validate_{task_id}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("case", [c for c in CASES if c.standalone], ids=_ids)
def test_standalone_validator_agrees(demo_root, tmp_path, case):
    task = get_task(case.task, data=demo_root)
    path = case.make(_sample(demo_root, case.task), tmp_path)
    result = validate_submission(task, path)
    report = _load_validator(demo_root, case.task).check(str(path))
    assert {r.code: r.count for r in result.reasons} == report.counts


def test_standalone_validator_shares_the_codes(demo_root):
    from automd_analysis.tasks import NA_STRINGS

    module = _load_validator(demo_root, SEQ)
    assert list(REASON_CODES) == module.ORDER
    assert set(NA_STRINGS) == module.NA_STRINGS
    assert module.CONFIG["id_columns"] == ["patient_id", "ICULOS"]


def test_standalone_validator_cli(demo_root, tmp_path):
    import subprocess
    import sys

    task = get_task(AUROC, data=demo_root)
    ok = subprocess.run(
        [sys.executable, str(task.path("validate")), str(task.path("sample_submission"))],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0 and ok.stdout.startswith("valid")
    bad = _write(_sample(demo_root, AUROC).drop(index=0), tmp_path / "bad.csv")
    out = subprocess.run(
        [sys.executable, str(task.path("validate")), str(bad), "--json"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1
    assert '"ids.missing"' in out.stdout


# --------------------------------------------------------------------------------------------
# Alignment: valid predictions come back in the hidden-label order, whatever the file order


@pytest.mark.parametrize("task_id", [SURV, AUROC, BINARY, SEQ])
def test_predictions_aligned_to_label_order(demo_root, tmp_path, task_id):
    task = get_task(task_id, data=demo_root)
    labels = load_labels(task)
    df = _sample(demo_root, task_id)
    rng = np.random.default_rng(5)
    # distinct, recognisable predictions per row
    n = len(df)
    if task_id == SURV:
        base = rng.random(n)
        for k, col in enumerate(df.columns[1:]):
            df[col] = [repr(float(b * (0.99**k))) for b in base]
    else:
        df["PredictedProbability"] = [repr(float(x)) for x in rng.random(n)]
    if "PredictedLabel" in df.columns:
        df["PredictedLabel"] = rng.integers(0, 2, n).astype(str)
    shuffled = _shuffle(df, seed=11)
    path = _write(shuffled, tmp_path / "s.csv")
    result = validate_submission(task, path, labels=labels, chunk_rows=97)
    assert result.valid, result.to_dict()
    key_cols = list(labels.ids.columns)
    expected = labels.ids.merge(df, on=key_cols, how="left")
    p = result.predictions
    if task_id == SURV:
        np.testing.assert_array_equal(p.surv, expected[df.columns[1:]].to_numpy(float))
        np.testing.assert_array_equal(p.time_grid, labels.time_grid)
    else:
        np.testing.assert_array_equal(p.probability, expected["PredictedProbability"].astype(float))
    if "PredictedLabel" in df.columns:
        np.testing.assert_array_equal(p.label, expected["PredictedLabel"].astype(np.int8))
    assert result.n_rows == n


def test_values_are_parsed_exactly(demo_root, tmp_path):
    # pandas' fast float parser can be one ulp off; the validator must read the decimal exactly.
    task = get_task(AUROC, data=demo_root)
    df = _sample(demo_root, AUROC)
    rng = np.random.default_rng(0)
    values = rng.random(len(df))
    df["PredictedProbability"] = [repr(float(v)) for v in values]
    result = validate_submission(task, _write(df, tmp_path / "x.csv"))
    assert result.valid
    order = load_labels(task).ids["patient_id"]
    expected = pd.Series(values, index=df["patient_id"]).loc[order].to_numpy()
    np.testing.assert_array_equal(result.predictions.probability, expected)


def test_chunk_size_does_not_change_the_verdict(demo_root, tmp_path):
    task = get_task(SEQ, data=demo_root)
    df = _sample(demo_root, SEQ)
    df = pd.concat([df.drop(index=[5, 500]), df.iloc[[9, 9]]])
    df.iloc[3, 3] = "7"
    path = _write(df, tmp_path / "x.csv")
    a = validate_submission(task, path)
    b = validate_submission(task, path, chunk_rows=13)
    assert a.codes == b.codes == ["rows.missing", "rows.duplicate", "label.not_binary"]
    assert [r.count for r in a.reasons] == [r.count for r in b.reasons] == [2, 2, 1]
    assert a.to_dict() == b.to_dict()


# --------------------------------------------------------------------------------------------
# Paths: symlinks, roots, special files


def test_paths_outside_root_and_special_files(demo_root, tmp_path):
    task = get_task(AUROC, data=demo_root)
    sample = task.path("sample_submission")
    root = tmp_path / "archive"
    root.mkdir()
    inside = root / "sub.csv"
    inside.write_bytes(sample.read_bytes())
    assert validate_submission(task, inside, root=root).valid
    link_in = root / "link_in.csv"
    link_in.symlink_to(inside)
    assert validate_submission(task, link_in, root=root).valid
    link_out = root / "link_out.csv"
    link_out.symlink_to(sample)
    result = validate_submission(task, link_out, root=root)
    assert result.codes == ["file.outside_root"]
    assert validate_submission(task, root / ".." / "archive" / ".." / "x.csv", root=root).codes == [
        "file.missing"
    ]
    outside = tmp_path / "outside.csv"
    outside.write_bytes(sample.read_bytes())
    assert validate_submission(task, root / ".." / "outside.csv", root=root).codes == [
        "file.outside_root"
    ]
    broken = root / "broken.csv"
    broken.symlink_to(root / "gone.csv")
    assert validate_submission(task, broken).codes == ["file.missing"]
    fifo = root / "fifo.csv"
    os.mkfifo(fifo)
    assert validate_submission(task, fifo).codes == ["file.not_regular"]  # never opened
    loop = root / "loop.csv"
    loop.symlink_to(loop)
    assert validate_submission(task, loop).codes in (["file.unreadable"], ["file.missing"])


def test_to_dict_is_the_cli_json_shape(demo_root, tmp_path):
    task = get_task(SURV, data=demo_root)
    result = validate_submission(task, tmp_path / "none.csv")
    assert result.to_dict() == {
        "valid": False,
        "reasons": [
            {
                "code": "file.missing",
                "message": "the submission file does not exist",
                "examples": [str(tmp_path / "none.csv")[-200:]],
            }
        ],
    }


# --------------------------------------------------------------------------------------------
# Paper categories


@pytest.mark.parametrize(
    ("code", "kind", "unit", "category"),
    [
        ("columns.grid_missing", "survival", None, "malformed survival columns"),
        ("columns.missing", "survival", None, "malformed survival columns"),
        ("columns.missing", "classification", None, "incorrect columns"),
        ("rows.missing", "sequential", None, "incorrect patient-hour rows"),
        ("rows.duplicate", "sequential", None, "incorrect patient-hour rows"),
        ("ids.missing", "classification", "patients", "incorrect patient identifiers"),
        ("ids.extra", "classification", "encounters", "incorrect encounter identifiers"),
        ("ids.duplicate", "classification", "stays", "incorrect stay identifiers"),
        ("ids.missing", "survival", None, "incorrect patient identifiers"),
        ("file.missing", None, None, "missing or unreadable file"),
        ("csv.malformed", "survival", None, "missing or unreadable file"),
        ("values.non_finite", "survival", None, "invalid survival curves"),
        ("values.non_finite", "classification", None, "invalid probabilities"),
        ("survival.increasing", "survival", None, "invalid survival curves"),
        ("probability.out_of_range", "sequential", None, "invalid probabilities"),
        ("label.not_binary", "sequential", None, "invalid binary predictions"),
        ("something.new", None, None, "other"),
    ],
)
def test_paper_category(code, kind, unit, category):
    assert paper_category(code, kind=kind, unit=unit) == category


def test_every_code_has_a_paper_category():
    for code in REASON_CODES:
        for kind in ("survival", "classification", "sequential"):
            assert paper_category(code, kind=kind) != "other", code
