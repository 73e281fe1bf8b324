"""A run's versions as its page lists and draws them: one row per version, parents resolved.

Every field is a stored value or read off stored values; nothing is scored here. The
validation-test gap of a version is the agent's reported validation score minus the held-out
primary metric, on the metric's own scale, under the rule of Table 18
(:func:`automd_analysis.analysis.development.development_summary`: a valid file of an AUROC or
C^td task with a finite reported score; "—" otherwise).

A version's parent is the one ``scores.parquet`` (or ``steps.parquet``) records when that version
is archived; a linear agent's version without one follows the version before it (its parent is
*inferred*: the page says so); a tree agent's version without an archived parent is a root.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from automd_analysis.analysis.development import VAL_TEST_METRICS
from automd_analysis.report.run_data import RunInputs

__all__ = ["TreeNode", "VersionRow", "tree_nodes", "version_rows"]


@dataclass(frozen=True)
class VersionRow:
    """One row of a run page's version table.

    Attributes
    ----------
    version : str
        Version id (``"selected"`` for the selected submission).
    source_version : str or None
        For the selected submission, the version it was chosen from.
    step : int or None
    parent : str or None
        The version its code is compared with (``None``: a root).
    parent_inferred : bool
        ``parent`` follows the order of a linear agent's versions (not recorded).
    minutes : float or None
        Minutes from the run's start.
    reported_val : float or None
        The agent's own validation score.
    valid : bool or None
        The held-out checks passed (``None``: not scorable here).
    reason_codes, reason_message : str or None
    raw, score, score_ci_low, score_ci_high, ece, ece_bc, ece_bc_ci_low, ece_bc_ci_high : float
        As stored (``None`` when absent); intervals where the scorer computed them.
    gap : float or None
        ``reported_val - raw`` (Table 18's rule).
    ok : bool or None
        For a run without scores: whether the step succeeded (``steps.ok``).
    changes : list of dict
        Version-pair rows whose later version is this one.
    """

    version: str
    source_version: str | None = None
    step: int | None = None
    parent: str | None = None
    parent_inferred: bool = False
    minutes: float | None = None
    reported_val: float | None = None
    valid: bool | None = None
    reason_codes: str | None = None
    reason_message: str | None = None
    raw: float | None = None
    score: float | None = None
    score_ci_low: float | None = None
    score_ci_high: float | None = None
    ece: float | None = None
    ece_bc: float | None = None
    ece_bc_ci_low: float | None = None
    ece_bc_ci_high: float | None = None
    gap: float | None = None
    ok: bool | None = None
    changes: list[dict] = field(default_factory=list)

    @property
    def is_selected(self) -> bool:
        """The selected submission's row."""
        return self.version == "selected"


@dataclass(frozen=True)
class TreeNode:
    """A point of the development figure: a version, or a step that saved none.

    ``y_test`` is the held-out primary metric, ``y_val`` the agent's validation score; ``failed``
    marks an invalid file or a failed step.
    """

    id: str
    x: float | None
    y_test: float | None
    y_val: float | None
    failed: bool
    parent: str | None
    selected: bool = False


_NUMBERS = ("raw", "score", "score_ci_low", "score_ci_high", "ece", "ece_bc", "ece_bc_ci_low",
            "ece_bc_ci_high")  # fmt: skip


def _finite(value) -> float | None:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _int(value) -> int | None:
    number = _finite(value)
    return None if number is None else int(number)


def _gap(row: dict) -> float | None:
    val, raw = _finite(row.get("reported_val")), _finite(row.get("raw"))
    if not row.get("valid") or row.get("metric") not in VAL_TEST_METRICS:
        return None
    return None if val is None or raw is None else val - raw


def _scored_row(row: dict, parent: str | None, inferred: bool, changes: list[dict]) -> VersionRow:
    numbers = {name: _finite(row.get(name)) for name in _NUMBERS}
    return VersionRow(
        version=str(row["version"]),
        source_version=row.get("source_version"),
        step=_int(row.get("step")),
        parent=parent,
        parent_inferred=inferred,
        minutes=_finite(row.get("elapsed_min")),
        reported_val=_finite(row.get("reported_val")),
        valid=bool(row.get("valid")),
        reason_codes=row.get("reason_codes") or row.get("reason_code"),
        reason_message=row.get("reason_message"),
        gap=_gap(row),
        changes=changes,
        **numbers,
    )


def _unscored_versions(inputs: RunInputs) -> list[dict]:
    """The rows of a run without scores: one per step (its version, else its search-tree node,
    else ``step <n>``), then every other version with code."""
    rows, seen = [], set()
    for step in inputs.steps:
        name = str(step.get("version") or step.get("node") or f"step {step.get('step')}")
        if name in seen:
            name = f"{name} (step {step.get('step')})"
        seen.add(name)
        rows.append({"version": name, "step": step.get("step"), "parent": step.get("parent"),
                     "elapsed_min": step.get("elapsed_min"), "ok": step.get("ok"),
                     "reported_val": step.get("reported_val_score")})  # fmt: skip
    for version in sorted(set(inputs.files) - seen):
        rows.append({"version": version})
    return rows


def _parents(ids: list[str], declared: list[str | None], search: str) -> list[tuple]:
    """(parent, inferred) of each version: the recorded one when archived, else the previous
    version of a linear agent, else none."""
    known = set(ids)
    out = []
    for i, parent in enumerate(declared):
        if parent in known and parent != ids[i]:
            out.append((parent, False))
        elif search == "linear" and i > 0:
            out.append((ids[i - 1], True))
        else:
            out.append((None, False))
    return out


def version_rows(inputs: RunInputs) -> list[VersionRow]:
    """The version table of a run's page: the selected submission first (when scored), then the
    versions in the store's order (creation time).

    Parameters
    ----------
    inputs : RunInputs

    Returns
    -------
    list of VersionRow
    """
    changes: dict[str, list[dict]] = {}
    for pair in inputs.pairs:
        if pair.get("change") and pair["change"] != "none":
            changes.setdefault(str(pair["later"]), []).append(pair)
    search = str(inputs.run.get("search") or "")
    rows = inputs.versions if inputs.scored else _unscored_versions(inputs)
    ids = [str(r["version"]) for r in rows]
    parents = _parents(ids, [r.get("parent") for r in rows], search)
    out = []
    if inputs.selected is not None:
        out.append(_scored_row(inputs.selected, None, False, []))
    for row, (parent, inferred) in zip(rows, parents, strict=True):
        version = str(row["version"])
        if inputs.scored:
            out.append(_scored_row(row, parent, inferred, changes.get(version, [])))
        else:
            out.append(
                VersionRow(
                    version=version,
                    step=_int(row.get("step")),
                    parent=parent,
                    parent_inferred=inferred,
                    minutes=_finite(row.get("elapsed_min")),
                    reported_val=_finite(row.get("reported_val")),
                    ok=row.get("ok"),
                    changes=changes.get(version, []),
                )  # fmt: skip
            )
    return out


def tree_nodes(inputs: RunInputs, versions: list[VersionRow]) -> list[TreeNode]:
    """The points and edges of the development figure: the rows of :func:`version_rows` (an
    invalid file or a failed step is failed) and, for a scored run, its failed steps that saved
    no version."""
    chosen = next((v.source_version for v in versions if v.is_selected), None)
    chosen = chosen or inputs.run.get("selected_version")
    nodes = [
        TreeNode(
            v.version,
            v.minutes,
            v.raw,
            v.reported_val,
            v.valid is False or v.ok is False,
            v.parent,
            chosen is not None and v.version == chosen,
        )  # fmt: skip
        for v in versions
        if not v.is_selected
    ]
    if inputs.scored:
        listed = {v.version for v in versions}
        for step in inputs.steps:
            if not step.get("ok") and step.get("version") not in listed:
                nodes.append(TreeNode(f"step {step.get('step')}", _finite(step.get("elapsed_min")),
                                      None, None, True, None))  # fmt: skip
    return nodes
