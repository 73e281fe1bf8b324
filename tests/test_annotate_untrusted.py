"""The annotator's inputs are untrusted (issue 21): one regression test per class of hostile
input, through the analyser and through ``automd annotate code``; the archive-level classes
(symlinked files, unbound code, deep nesting inside a run) are in test_annotate_runs.py.

Every class ends in a reason (a ``problems`` entry or a warning with its code), never a
traceback, and never reads more than the size limit of a file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

import automd_analysis.annotate.sources as sources
import automd_analysis.archive.safe as safe
from automd_analysis.annotate.code import annotate_sources
from automd_analysis.annotate.practices import TaskFacts
from automd_analysis.cli import main
from automd_analysis.codebook import CODEBOOK

HOSTILE = {
    "sum of 900 terms": ("x = " + "+".join(["y"] * 900) + "\n", "nested more than 100 levels"),
    "attribute chain of 20,000": (
        "x = a" + ".b" * 20000 + "\n",
        "too deeply for the Python parser",
    ),
    "100,000 unary minus": ("x = " + "-" * 100_000 + "1\n", "too deeply for the Python parser"),
    "300 parentheses": ("x = " + "(" * 300 + "1" + ")" * 300 + "\n", "too many nested parentheses"),
    "90 nested blocks": (
        "".join("    " * i + "if x:\n" for i in range(90)) + "    " * 90 + "y = 1 + 2\n",
        None,
    ),
    "99 nested blocks": (
        "".join("    " * i + "if x:\n" for i in range(99)) + "    " * 99 + "y = 1 + 2\n",
        "nested more than 100 levels",
    ),
    "101 nested blocks": (
        "".join("    " * i + "if x:\n" for i in range(101)) + "    " * 101 + "y = 1\n",
        "not parsed: too many levels of indentation",
    ),
    "NUL byte": ("x = 1\x00\n", "not parsed"),
    "lone surrogate": ("name = '\udcff'\n", "lone surrogate"),
    "3,000 chained subclasses": (
        "\n".join(["class A0: pass", *(f"class A{i}(A{i - 1}): pass" for i in range(1, 3000))])
        + "\nA2999().fit()\n",
        None,
    ),
    "3,000 nested lists": ("a = 1\n" + "a = [a]\n" * 3000 + "b = [a] if c else [a]\n", None),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_code_gives_a_reason_and_answers(name):
    code, reason = HOSTILE[name]
    found, trace = annotate_sources(
        [("train.py", code), ("ok.py", "from sklearn.svm import SVC\nm = SVC()\n")],
        TaskFacts(kind="classification"),
    )
    if reason is None:
        assert trace.notes == []
    else:
        assert any(reason in n and n.startswith("train.py") for n in trace.notes), trace.notes
    assert found["model_families"].value == ("other",)  # the other file is still read
    for field, f in found.items():
        values = f.value if isinstance(f.value, tuple) else (f.value,)
        assert set(values) <= set(CODEBOOK[field].values)


def test_an_import_chain_longer_than_the_nesting_budget_is_cut_with_a_note():
    files = [(f"m{i}.py", f"import m{i + 1}\n") for i in range(199)]
    files.append(("m199.py", "from sklearn.svm import SVC\nm = SVC()\n"))
    found, trace = annotate_sources(files, entries=["m0.py"])
    assert any("nested more than 250 levels" in n for n in trace.notes)


# ------------------------------------------------------------------ automd annotate code


@pytest.fixture
def annotate_code(capsys):
    """``automd annotate code ARGS`` through the console entry point: exit code and output."""

    def run(*args: str) -> SimpleNamespace:
        try:
            main(["annotate", "code", *args])
            code = 0
        except SystemExit as exc:
            code = exc.code
        out = capsys.readouterr()
        return SimpleNamespace(
            exit_code=code, stdout=out.out, stderr=out.err, output=out.out + out.err
        )

    return run


def test_annotate_code_reports_partial_reads_on_stderr_and_exits_1(tmp_path, annotate_code):
    deep = tmp_path / "deep.py"
    deep.write_text("import lightgbm\nm = lightgbm.LGBMClassifier()\nx = " + "+".join(["y"] * 900))
    res = annotate_code(str(deep), "--json")
    assert res.exit_code == 1
    report = json.loads(res.stdout)
    families = [a for a in report[str(deep)] if a["field"] == "model_families"]
    assert families[0]["value"] == ["gbdt"]
    assert "[annotate.partial]" in res.stderr and "nested more than 100 levels" in res.stderr
    assert "Traceback" not in res.stderr + res.stdout


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda p: p.mkdir(), "annotate.not_a_file"),
        (lambda p: os.mkfifo(p), "annotate.not_a_file"),
        (lambda p: None, "annotate.file_missing"),
    ],
    ids=["directory", "fifo", "missing"],
)
def test_annotate_code_refuses_what_is_not_a_regular_file(tmp_path, make, code, annotate_code):
    path = tmp_path / "x.py"
    make(path)
    res = annotate_code(str(path))
    assert res.exit_code == 2
    assert "x.py" in res.output and "Traceback" not in res.output
    with pytest.raises(sources.AutomdError) as err:
        sources.read_loose_file(path)
    assert err.value.code == code


def test_a_huge_loose_file_is_refused_before_it_is_read(tmp_path, monkeypatch, annotate_code):
    huge = tmp_path / "huge.py"
    with open(huge, "wb") as fh:  # 1 GiB, sparse: no disk space used
        fh.truncate(1 << 30)

    def no_open(*a, **k):
        raise AssertionError("the file was opened")

    monkeypatch.setattr(safe, "open", no_open, raising=False)
    with pytest.raises(sources.AutomdError) as err:
        sources.read_loose_file(huge)
    assert err.value.code == "annotate.file_too_large"
    assert err.value.details == {"size": 1 << 30, "limit": sources.MAX_LOOSE_BYTES}
    monkeypatch.undo()
    res = annotate_code(str(huge))
    assert res.exit_code == 2 and "larger than the limit" in res.output


def test_a_file_that_grows_after_the_size_check_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "grows.py"
    path.write_text("x = 1\n")
    real_open = open

    def grown(p, mode="r", *a, **k):
        with real_open(p, "ab") as fh:
            fh.write(b"#" * (sources.MAX_LOOSE_BYTES + 10))
        return real_open(p, mode, *a, **k)

    monkeypatch.setattr(safe, "open", grown, raising=False)
    with pytest.raises(sources.AutomdError) as err:
        sources.read_loose_file(path)
    assert err.value.code == "annotate.file_too_large"


def test_an_unreadable_loose_file_is_a_reason(tmp_path, monkeypatch):
    path = tmp_path / "locked.py"
    path.write_text("x = 1\n")

    def denied(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(safe, "open", denied, raising=False)
    with pytest.raises(sources.AutomdError) as err:
        sources.read_loose_file(path)
    assert (err.value.code, err.value.message) == (
        "annotate.file_unreadable",
        "cannot be read (Permission denied)",
    )


def test_odd_file_names_and_encodings(tmp_path, annotate_code):
    odd = Path(os.fsdecode(bytes(tmp_path) + b"/odd\xff name.py"))
    odd.write_bytes(b"# -*- coding: latin-1 -*-\nname = '\xe9'\nimport catboost\n")
    bad = tmp_path / "bad.py"
    bad.write_bytes(b"x = '\xff'\nimport xgboost\nm = xgboost.XGBClassifier()\n")
    res = annotate_code(str(odd), str(bad))
    assert res.exit_code == 1  # bad.py's bytes were replaced: a warning
    assert "odd\\udcff name.py" in res.stdout  # the undecodable name is printed escaped
    assert "[annotate.encoding]" in res.stderr and "bad.py" in res.stderr
    assert "1 undecodable byte(s)" in res.stderr
    as_json = json.loads(annotate_code(str(odd), "--json").stdout)
    assert list(as_json) == [str(odd)]


def test_an_unreadable_archived_code_file_is_a_problem_and_the_others_are_read(
    tmp_path, monkeypatch
):
    run = tmp_path / "run"
    (run / "code" / "v1").mkdir(parents=True)
    (run / "code" / "v1" / "a.py").write_text("x = 1\n")
    (run / "code" / "v1" / "b.py").write_text("y = 2\n")
    real_open = open

    def denied(p, *a, **k):
        if str(p).endswith("a.py"):
            raise PermissionError(13, "Permission denied")
        return real_open(p, *a, **k)

    monkeypatch.setattr(safe, "open", denied, raising=False)
    problems: list = []
    read = sources.read_version_files(
        run, tmp_path, ["code/v1/a.py", "code/v1/b.py"], problems, lambda *a: a
    )
    assert read == [("code/v1/b.py", "y = 2\n")]
    assert problems == [
        ("annotate.file_unreadable", "cannot be read (Permission denied)", "code/v1/a.py")
    ]
