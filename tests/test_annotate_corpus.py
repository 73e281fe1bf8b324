"""The hand-written corpus: scripts in the styles agents write, with hand-written answers.

Each case under ``tests/fixtures/annotate_scripts/<case>/`` holds the Python files of one version
(an AIDE-like single script, a multi-file Codex project, a notebook exported to .py, an
autoresearch ``train.py``) and ``expected.yaml``: the task facts, the codebook answers written by
reading the code, optionally the ``affected_weight`` and, per field, lines of which at least one
must be cited as evidence. None of these scripts comes from the demo harness.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from automd_analysis.annotate.agreement import agreement_table
from automd_analysis.annotate.code import annotate_sources
from automd_analysis.annotate.practices import TaskFacts
from automd_analysis.archive.codebook import CODEBOOK, Annotations, Answer

CORPUS = Path(__file__).parent / "fixtures" / "annotate_scripts"
CASES = sorted(p.name for p in CORPUS.iterdir() if (p / "expected.yaml").is_file())


def _load(case: str):
    folder = CORPUS / case
    expected = yaml.safe_load((folder / "expected.yaml").read_text())
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.py"))
    sources = [(f, (folder / f).read_text()) for f in files]
    return expected, sources


def _annotate(case: str):
    expected, sources = _load(case)
    found, trace = annotate_sources(sources, TaskFacts(**expected["task"]), expected.get("entries"))
    return expected, found, trace


def test_corpus_is_large_and_varied():
    styles = {_load(c)[0]["style"].split()[0] for c in CASES}
    assert len(CASES) >= 25
    assert {"aide", "multi-file", "notebook", "autoresearch", "codex"} <= styles
    n_files = sum(len(_load(c)[1]) for c in CASES)
    assert n_files >= 30


@pytest.mark.parametrize("case", CASES)
def test_expected_answers_are_complete_and_valid(case):
    expected, _ = _load(case)
    assert set(expected["answers"]) == set(CODEBOOK)
    for name, value in expected["answers"].items():
        values = value if isinstance(value, list) else [value]
        assert all(v in CODEBOOK[name].values for v in values), (name, value)


@pytest.mark.parametrize("case", CASES)
def test_answers_match_the_hand_written_ones(case):
    expected, found, trace = _annotate(case)
    assert not trace.notes
    for name, value in expected["answers"].items():
        want = tuple(value) if isinstance(value, list) else value
        assert found[name].value == want, name


@pytest.mark.parametrize("case", CASES)
def test_evidence_cites_the_lines_that_show_the_practice(case):
    expected, found, trace = _annotate(case)
    _, sources = _load(case)
    n_lines = {p: t.count("\n") + (not t.endswith("\n")) for p, t in sources}
    for f in found.values():
        for i, line in f.evidence:
            assert 1 <= line <= n_lines[trace.files[i]]
    for name, acceptable in (expected.get("evidence") or {}).items():
        cited = {f"{trace.files[i]}:{line}" for i, line in found[name].evidence}
        assert cited & set(acceptable), (name, sorted(cited))
    if "affected_weight" in expected:
        assert found["censoring_handling"].affected_weight == pytest.approx(
            expected["affected_weight"]
        )


def test_corpus_agreement_meets_the_targets():
    """Kappa over the whole corpus: >= 0.9 on the three calibration practices, >= 0.8 else."""
    ref, got = {}, {}
    for case in CASES:
        expected, found, _ = _annotate(case)
        answers = {}
        for name, value in expected["answers"].items():
            value = tuple(value) if isinstance(value, list) else value
            answers[name] = Answer(name, value, ())
        ref[case] = Annotations("hand-written", answers, ())
        got[case] = Annotations(
            "automd annotate", {n: Answer(n, f.value, ()) for n, f in found.items()}, ()
        )
    fields, _ = agreement_table(ref, got)
    kappa = dict(zip(fields["field"], fields["kappa"], strict=True))
    for name in (
        "averaged_ranks_as_probabilities",
        "class_imbalance_handling",
        "recalibration_after_imbalance",
    ):
        assert kappa[name] >= 0.9, name
    for name, k in kappa.items():
        assert k >= 0.8, name
