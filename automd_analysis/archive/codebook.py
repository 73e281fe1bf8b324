"""Validation of ``annotations.json`` against the codebook (:mod:`automd_analysis.codebook`).

Every answer cites evidence as run-relative ``file``, ``file:line`` or ``file:start-end``; each
cited file must exist inside the run directory and each cited line must exist in it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from automd_analysis.archive.safe import MAX_EVIDENCE_BYTES, read_bounded, resolve_inside
from automd_analysis.archive.schema import pydantic_error
from automd_analysis.codebook import (
    CODEBOOK,
    FORENSICS,
    PAIR_CHANGES,
    Annotations,
    Answer,
    ForensicAnswer,
    PairAnnotation,
)
from automd_analysis.errors import ArchiveError

__all__ = ["validate_annotations"]


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class _AnswerJson(_Shape):
    value: str | list[str]
    evidence: list[str] = Field(default_factory=list)
    affected_weight: float | None = None


class _PairJson(_Shape):
    earlier: str
    later: str
    changes: list[str] = Field(default_factory=list)
    affects_predictions: bool
    evidence: list[str] = Field(default_factory=list)


class _ForensicJson(_Shape):
    value: str
    statistics: dict[str, float | None] = Field(default_factory=dict)
    threshold: str = ""
    evidence: list[str] = Field(default_factory=list)


class _AnnotationsJson(_Shape):
    schema_version: int
    annotator: str = ""
    run: dict[str, _AnswerJson] = Field(default_factory=dict)
    pairs: list[_PairJson] = Field(default_factory=list)
    forensics: dict[str, _ForensicJson] = Field(default_factory=dict)


_EVIDENCE = re.compile(r"^(?P<path>.+?)(?::(?P<start>[0-9]+)(?:-(?P<end>[0-9]+))?)?$")
_FIX = "see the codebook in docs/archive.md"


def _err(msg: str, path: Path, location: str, code: str, fix: str = _FIX) -> ArchiveError:
    return ArchiveError(msg, path=path, location=location, code=code, fix=fix)


class _EvidenceChecker:
    """Checks ``file[:line[-line]]`` citations against the run directory (line counts cached)."""

    def __init__(self, run_dir: Path, root: Path, ann_path: Path):
        self.run_dir, self.root, self.ann_path = run_dir, root, ann_path
        self._lines: dict[str, int] = {}

    def __call__(self, items: list[str], location: str) -> tuple[str, ...]:
        for item in items:
            m = _EVIDENCE.match(item)
            if not m or (m["start"] and (int(m["start"]) < 1 or int(m["end"] or 1) < 1)):
                raise _err(
                    f"evidence {item!r} is not 'file', 'file:line' or 'file:start-end' "
                    "(lines count from 1)",
                    self.ann_path,
                    location,
                    "archive.annotation_invalid",
                )
            rel = m["path"]
            try:
                target = resolve_inside(self.run_dir, rel, base=self.run_dir, what="evidence")
            except ArchiveError as exc:
                raise _err(
                    exc.message,
                    self.ann_path,
                    location,
                    "archive.evidence_unsafe",
                    "cite files inside the run directory, by run-relative path",
                ) from None
            if rel not in self._lines:
                try:
                    data = read_bounded(target, MAX_EVIDENCE_BYTES, self.root)
                except ArchiveError as exc:
                    raise _err(
                        f"evidence file {rel!r} cannot be read ({exc.code}: {exc.message})",
                        self.ann_path,
                        location,
                        "archive.evidence_missing",
                        "cite files that exist in the run directory",
                    ) from None
                self._lines[rel] = data.count(b"\n") + (
                    1 if data and not data.endswith(b"\n") else 0
                )
            n_lines = self._lines[rel]
            if m["start"]:
                start = int(m["start"])
                end = int(m["end"]) if m["end"] else start
                if end < start or end > n_lines:
                    raise _err(
                        f"evidence {item!r} cites line {end} but {rel!r} has {n_lines} lines",
                        self.ann_path,
                        location,
                        "archive.evidence_line",
                        "cite lines that exist in the file",
                    )
        return tuple(items)


def _check_answer(name: str, ans: _AnswerJson, ann_path: Path) -> None:
    loc = f"run.{name}"
    spec = CODEBOOK.get(name)
    if spec is None:
        raise _err(
            f"unknown codebook field {name!r}",
            ann_path,
            loc,
            "archive.annotation_unknown_field",
            f"use one of {sorted(CODEBOOK)}",
        )
    values = ans.value if isinstance(ans.value, list) else [ans.value]
    if (
        spec.multi != isinstance(ans.value, list)
        or any(v not in spec.values for v in values)
        or len(set(values)) != len(values)
    ):
        shape = "a list of distinct values" if spec.multi else "one value"
        raise _err(
            f"value {ans.value!r} is not allowed for {name!r} (expected {shape} from "
            f"{list(spec.values)})",
            ann_path,
            f"{loc}.value",
            "archive.annotation_bad_value",
        )
    if ans.affected_weight is not None:
        if "affected_weight" not in spec.extra:
            raise _err(
                f"{name!r} takes no affected_weight",
                ann_path,
                f"{loc}.affected_weight",
                "archive.annotation_invalid",
            )
        if not (math.isfinite(ans.affected_weight) and 0.0 <= ans.affected_weight <= 1.0):
            raise _err(
                f"affected_weight {ans.affected_weight!r} is not in [0, 1]",
                ann_path,
                f"{loc}.affected_weight",
                "archive.annotation_bad_value",
                "give the ensemble weight affected by the error, between 0 and 1",
            )


def _check_pair(i: int, p: _PairJson, known: set[str], ann_path: Path) -> None:
    loc = f"pairs[{i}]"
    for key in ("earlier", "later"):
        if getattr(p, key) not in known:
            raise _err(
                f"{key} {getattr(p, key)!r} is not a version of this run",
                ann_path,
                f"{loc}.{key}",
                "archive.annotation_bad_value",
                "name versions that exist under versions/",
            )
    if p.earlier == p.later:
        raise _err(
            "a pair needs two different versions", ann_path, loc, "archive.annotation_bad_value"
        )
    if any(c not in PAIR_CHANGES for c in p.changes) or len(set(p.changes)) != len(p.changes):
        raise _err(
            f"changes {p.changes!r} must be distinct values from {list(PAIR_CHANGES)}",
            ann_path,
            f"{loc}.changes",
            "archive.annotation_bad_value",
        )


def validate_annotations(
    raw: Any, run_dir: Path, root: Path, version_ids: Iterable[str], ann_path: Path
) -> Annotations:
    """Validate a parsed ``annotations.json`` against :data:`CODEBOOK` (docs/archive.md).

    Parameters
    ----------
    raw : object
        The parsed JSON document.
    run_dir : Path
        The run directory; evidence paths are relative to it and may not leave it.
    root : Path
        The archive root.
    version_ids : iterable of str
        The run's version ids; each pair must name two different ones.
    ann_path : Path
        The annotations file, for error messages.

    Returns
    -------
    Annotations
        Answers keyed by codebook field (sorted), pairs in file order. Fields may be omitted.

    Raises
    ------
    ArchiveError
        ``archive.annotation_invalid`` (shape, schema version, evidence syntax),
        ``archive.annotation_unknown_field``, ``archive.annotation_bad_value`` (value outside the
        codebook, unknown version in a pair, weight outside [0, 1]), ``archive.evidence_unsafe``
        (a path leaving the run), ``archive.evidence_missing`` (no such file) or
        ``archive.evidence_line`` (a line beyond the end of the file).
    """
    try:
        doc = _AnnotationsJson.model_validate(raw)
    except ValidationError as exc:
        raise pydantic_error(exc, ann_path, "archive.annotation_invalid", _FIX) from None
    if doc.schema_version != 1:
        raise _err(
            "schema_version must be 1", ann_path, "schema_version", "archive.annotation_invalid"
        )
    check_evidence = _EvidenceChecker(run_dir, root, ann_path)
    answers = {}
    for name in sorted(doc.run):
        ans = doc.run[name]
        _check_answer(name, ans, ann_path)
        answers[name] = Answer(
            field=name,
            value=tuple(ans.value) if isinstance(ans.value, list) else ans.value,
            evidence=check_evidence(ans.evidence, f"run.{name}.evidence"),
            affected_weight=ans.affected_weight,
        )
    known = set(version_ids)
    pairs = []
    for i, p in enumerate(doc.pairs):
        _check_pair(i, p, known, ann_path)
        pairs.append(
            PairAnnotation(
                earlier=p.earlier,
                later=p.later,
                changes=tuple(p.changes),
                affects_predictions=p.affects_predictions,
                evidence=check_evidence(p.evidence, f"pairs[{i}].evidence"),
            )
        )
    forensics = {}
    for name in sorted(doc.forensics):
        f = doc.forensics[name]
        loc = f"forensics.{name}"
        if name not in FORENSICS:
            raise _err(
                f"unknown forensics field {name!r}",
                ann_path,
                loc,
                "archive.annotation_unknown_field",
                f"use one of {sorted(FORENSICS)}",
            )
        if f.value not in FORENSICS[name]:
            raise _err(
                f"value {f.value!r} is not allowed for forensics {name!r} "
                f"(expected one of {list(FORENSICS[name])})",
                ann_path,
                f"{loc}.value",
                "archive.annotation_bad_value",
            )
        forensics[name] = ForensicAnswer(
            field=name,
            value=f.value,
            statistics=dict(f.statistics),
            threshold=f.threshold,
            evidence=check_evidence(f.evidence, f"{loc}.evidence"),
        )
    return Annotations(
        annotator=doc.annotator, answers=answers, pairs=tuple(pairs), forensics=forensics
    )
