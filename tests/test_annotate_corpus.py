"""The hand-written corpora: scripts in the styles agents write, with hand-written answers.

Each case under ``tests/fixtures/annotate_scripts/<case>/`` (classic ML) or
``tests/fixtures/annotate_dl_scripts/<case>/`` (deep learning) holds the Python files of one
version (an AIDE-like single script, a multi-file Codex project, a notebook exported to .py, an
autoresearch ``train.py``, an AI-Scientist-v2 node) and ``expected.yaml``: the task facts, the
codebook answers written by reading the code, optionally the ``affected_weight`` and, per field,
lines of which at least one must be cited as evidence (and, optionally, ``never_cited``: lines no
answer may cite). None of these scripts comes from the demo harness. ``pattern_*`` cases are one
minimal script per statement form or hand-made split the analyser must read (issue 33), written
with those rules; ``codex_xgb_main_systemexit`` and ``aide_lgbm_temporal_earlystop`` are whole
scripts in the shape of the real runs that showed the misses. ``heldout_*`` cases were written
with the others but run only after the rules were frozen; ``blind_*`` cases (deep learning) were
written and labelled later, from the docs alone, and run once against the frozen rules: what that
first run got wrong is recorded in ``BLIND_FIRST_RUN``, not fixed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from automd_analysis.agreement import agreement_table
from automd_analysis.annotate.code import annotate_sources
from automd_analysis.annotate.practices import TaskFacts
from automd_analysis.codebook import CODEBOOK, Annotations, Answer

FIXTURES = Path(__file__).parent / "fixtures"
CORPORA = ("annotate_scripts", "annotate_dl_scripts")
DOCS = Path(__file__).parents[1] / "docs" / "annotation.md"

# The blind deep-learning set's first run: (case, field) -> the analyser's answer where it
# differs from the hand-written one (labels committed before the run; rules unchanged since).
_DL = "annotate_dl_scripts/"
BLIND_FIRST_RUN = {
    (_DL + "blind_aisci_gru_hourly_subgroups", "subgroup_checks"): "no",
    (_DL + "blind_aisci_split_unused_pos_weight", "validation_design"): ("single_holdout",),
    (_DL + "blind_codex_lightning_platt_unused", "model_families"): ("linear", "neural_net"),
}
# Misses the analyser still makes (it answers as recorded); a fix removes the entry.
STILL_MISSED = set(BLIND_FIRST_RUN)
# Right answers whose evidence cites none of the lines the label accepts.
EVIDENCE_MISSED = {(_DL + "blind_codex_lightning_platt_unused", "ensembling")}


def _cases(corpus: str) -> list[str]:
    root = FIXTURES / corpus
    return sorted(p.name for p in root.iterdir() if (p / "expected.yaml").is_file())


CASES = [f"{corpus}/{case}" for corpus in CORPORA for case in _cases(corpus)]


def _load(case: str):
    folder = FIXTURES / case
    expected = yaml.safe_load((folder / "expected.yaml").read_text())
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.py"))
    sources = [(f, (folder / f).read_text()) for f in files]
    return expected, sources


def _annotate(case: str):
    expected, sources = _load(case)
    found, trace = annotate_sources(sources, TaskFacts(**expected["task"]), expected.get("entries"))
    return expected, found, trace


def _hand_written(expected) -> dict:
    return {n: tuple(v) if isinstance(v, list) else v for n, v in expected["answers"].items()}


def _table(ref: dict, got: dict):
    """:func:`agreement_table` of case -> {field: value} answers against others."""

    def annotations(who: str, answers: dict) -> Annotations:
        return Annotations(who, {n: Answer(n, v, ()) for n, v in answers.items()}, ())

    fields, _ = agreement_table(
        {c: annotations("hand-written", a) for c, a in ref.items()},
        {c: annotations("automd annotate", a) for c, a in got.items()},
    )
    return fields.set_index("field")


def _agreement(cases):
    """The hand-written answers against the analyser's."""
    ref, got = {}, {}
    for case in cases:
        expected, found, _ = _annotate(case)
        ref[case] = _hand_written(expected)
        got[case] = {n: f.value for n, f in found.items()}
    return _table(ref, got)


def test_corpus_is_large_and_varied():
    cases = [c for c in CASES if c.startswith("annotate_scripts/")]
    styles = {_load(c)[0]["style"].split()[0] for c in cases}
    assert len(cases) >= 25
    assert {"aide", "multi-file", "notebook", "autoresearch", "codex"} <= styles
    n_files = sum(len(_load(c)[1]) for c in cases)
    assert n_files >= 30


def test_deep_learning_corpus_covers_the_frameworks_and_styles():
    cases = [c for c in CASES if c.startswith("annotate_dl_scripts/")]
    assert len(cases) >= 30
    assert sum("/heldout_" in c for c in cases) >= 10
    assert sum("/blind_" in c for c in cases) >= 12
    styles = " ".join(_load(c)[0]["style"] for c in cases)
    assert "ai-scientist-v2" in styles and "codex" in styles
    imports = set()
    for case in cases:
        for _, text in _load(case)[1]:
            imports |= set(re.findall(r"^\s*(?:import|from) ([a-z_]+)", text, re.MULTILINE))
    frameworks = {"torch", "tensorflow", "skorch", "transformers", "timm", "torchvision"}
    assert frameworks <= imports
    assert imports & {"lightning", "pytorch_lightning"}


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
    for name, want in _hand_written(expected).items():
        if (case, name) in STILL_MISSED:
            assert found[name].value == BLIND_FIRST_RUN[case, name] != want, name
        else:
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
        if (case, name) in STILL_MISSED:
            continue  # the evidence of a wrong answer
        cited = {f"{trace.files[i]}:{line}" for i, line in found[name].evidence}
        assert bool(cited & set(acceptable)) != ((case, name) in EVIDENCE_MISSED), (
            name,
            sorted(cited),
        )
    never = set(expected.get("never_cited") or ())
    for f in found.values():
        assert not {f"{trace.files[i]}:{line}" for i, line in f.evidence} & never, f.field
    if "affected_weight" in expected:
        assert found["censoring_handling"].affected_weight == pytest.approx(
            expected["affected_weight"]
        )


def test_corpus_agreement_meets_the_targets():
    """Kappa over the whole corpus: >= 0.9 on the three calibration practices, >= 0.8 else."""
    fields = _agreement([c for c in CASES if c.startswith("annotate_scripts/")])
    kappa = fields["kappa"].to_dict()
    for name in (
        "averaged_ranks_as_probabilities",
        "class_imbalance_handling",
        "recalibration_after_imbalance",
    ):
        assert kappa[name] >= 0.9, name
    for name, k in kappa.items():
        assert k >= 0.8, name


CORPUS_COLUMNS = r"^\| `(\w+)` \| ([0-9.]+) \| ([0-9.]+) \|"
BLIND_COLUMN = r"^\| `(\w+)` \|(?:[^|\n]*\|){3} ([0-9.]+) / ([0-9.]+) \|"


def _documented_deep_learning_agreement(row: str = CORPUS_COLUMNS) -> dict[str, tuple[str, str]]:
    """Field -> (kappa, accuracy) as printed in docs/annotation.md's deep-learning table."""
    table = DOCS.read_text().split("<!-- deep-learning agreement -->")[1]
    return {name: (kappa, acc) for name, kappa, acc in re.findall(row, table, re.MULTILINE)}


def _measured(fields) -> dict[str, tuple[str, str]]:
    varying = fields[fields["kappa"].notna()]
    return {name: (f"{row.kappa:.3f}", f"{row.exact:.3f}") for name, row in varying.iterrows()}


def test_deep_learning_corpus_agreement_meets_the_targets_and_is_documented():
    """kappa >= 0.8 and accuracy >= 0.9 on every field that varies, as docs/annotation.md says."""
    cases = [c for c in CASES if c.startswith("annotate_dl_scripts/")]
    fields = _agreement(cases)
    varying = fields[fields["kappa"].notna()]
    assert len(varying) >= 10  # every codebook field but (at most) one takes several values
    assert (varying["kappa"] >= 0.8).all(), varying
    assert (varying["exact"] >= 0.9).all(), varying
    assert _documented_deep_learning_agreement() == _measured(fields)


def test_blind_first_run_is_documented():
    """The blind column of docs/annotation.md is the first run: hand-written answers against
    them with the recorded misses (the per-case tests check the record while the misses last)."""
    cases = [c for c in CASES if "/blind_" in c]
    assert {c for c, _ in BLIND_FIRST_RUN} <= set(cases)
    ref = {c: _hand_written(_load(c)[0]) for c in cases}
    first = {c: {n: BLIND_FIRST_RUN.get((c, n), v) for n, v in a.items()} for c, a in ref.items()}
    fields = _table(ref, first)
    assert fields["kappa"].notna().all()  # every field varies on the blind set
    assert _documented_deep_learning_agreement(BLIND_COLUMN) == _measured(fields)
