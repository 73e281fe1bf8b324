"""Submission selection rules of paper App. C, as pure functions over candidate nodes.

=====================================  ==========================================================
rule                                   agent / format
=====================================  ==========================================================
``final_file``                         Codex, Autoresearch: the ``submission.csv`` left at run end
``best_reported_val_non_faulty``       AIDE (and MLE-bench's AIDE): the best node by its own
                                       reported validation metric among nodes that are not buggy
                                       and have a prediction file; earliest node on ties
``latest_stage_best_node``             AI-Scientist-v2: sub-stages from latest to earliest; in
                                       each, the saved best node if it is not buggy, else the best
                                       non-buggy node by the metric rule; the first such node with
                                       its own file; else the final file
``earliest_best_val_metric_step``      FML-bench: the earliest step whose primary metric equals
                                       the run's ``best_val_metric``
=====================================  ==========================================================

The metric rule compares a node's value in *that node's own* direction (``maximize``), at the
project's one precision (:func:`automd_analysis.precision.comparable`, 12 significant digits):
values equal to 12 digits are a tie, which goes to the earlier node. Values of
different types (``kind``) or directions are incomparable (the paper's patched agents treat them
so): the rule ranks only the largest group of mutually comparable candidates (ties: the group that
holds the earliest node) and reports the others. Every function returns a :class:`Selection` with
the reasoning, which the importer writes into ``journal.md``. Nothing here reads files; every
result is independent of the order in which candidates are listed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from automd_analysis.precision import comparable_scalar
from automd_analysis.schema import (
    RULE_BEST_NON_FAULTY,
    RULE_FINAL_FILE,
    RULE_FML_BEST_STEP,
    RULE_LATEST_STAGE,
)

__all__ = [
    "RULE_BEST_NON_FAULTY",
    "RULE_FINAL_FILE",
    "RULE_FML_BEST_STEP",
    "RULE_LATEST_STAGE",
    "Candidate",
    "Selection",
    "StageCandidates",
    "best_reported_val_non_faulty",
    "earliest_best_val_metric_step",
    "final_file",
    "latest_stage_best_node",
    "rank_by_metric",
]


@dataclass(frozen=True)
class Candidate:
    """A node as the selection rules see it.

    Attributes
    ----------
    node_id : str
    order : int
        Creation order (AIDE ``step``, FML-bench ``step_id``...); lower is earlier.
    value : float or None
        The agent's reported validation metric (``None``: none reported).
    maximize : bool or None
        The node's own direction (``None``: unknown, the node cannot be ranked).
    kind : str
        Metric type; values of different kinds are incomparable.
    buggy : bool
        Marked buggy / failed by the agent (plot-only problems do not count).
    has_file : bool
        A prediction file of this node is bound.
    rankable : bool
        ``False`` keeps the node out of metric comparisons (AI-Scientist-v2 seed nodes).
    """

    node_id: str
    order: int
    value: float | None = None
    maximize: bool | None = None
    kind: str = "scalar"
    buggy: bool = False
    has_file: bool = False
    rankable: bool = True


@dataclass(frozen=True)
class StageCandidates:
    """One AI-Scientist-v2 sub-stage: its nodes and the saved best-node id (``None``: absent)."""

    name: str
    order: tuple[int, int]
    best_node_id: str | None
    candidates: tuple[Candidate, ...]


@dataclass(frozen=True)
class Selection:
    """The outcome of a selection rule.

    Attributes
    ----------
    rule : str
        The rule that decided (one of the ``RULE_*`` names).
    node_id : str or None
        The selected node; ``None`` when the final file is used (``use_final_file``) or nothing
        qualifies.
    use_final_file : bool
        The run's final submission file is the selection.
    reasons : tuple of str
        The decision trace, for ``journal.md``.
    incomparable : tuple of str
        Nodes left out because their metric type or direction differs (sorted).
    """

    rule: str
    node_id: str | None
    use_final_file: bool
    reasons: tuple[str, ...]
    incomparable: tuple[str, ...] = ()


def _finite(x: float | None) -> bool:
    return x is not None and isinstance(x, int | float) and math.isfinite(x)


def _direction(maximize: bool) -> str:
    return "higher is better" if maximize else "lower is better"


def rank_by_metric(candidates: Iterable[Candidate]):
    """The best candidate by the metric rule, among mutually comparable candidates.

    Candidates without a finite value or a direction, or with ``rankable=False``, are not ranked.
    The rest are grouped by ``(kind, maximize)``; the largest group is ranked (ties: the group
    holding the earliest node), the others are *incomparable*. Within the group the best value
    wins in the group's direction:

    .. math:: c^* = \\arg\\max_{c \\in G} s \\cdot v_c, \\quad s = +1 \\text{ if maximize else } -1,

    where values are compared as :func:`~automd_analysis.precision.comparable` (values equal to
    12 significant digits, a relative difference of about 1e-12, tie), ties broken by the lowest
    ``order`` (then ``node_id``).

    Parameters
    ----------
    candidates : iterable of Candidate

    Returns
    -------
    best : Candidate or None
    incomparable : tuple of str
        Sorted ids of rankable candidates outside the chosen group.
    reasons : tuple of str

    See Also
    --------
    best_reported_val_non_faulty, latest_stage_best_node

    References
    ----------
    Auto-MD-bench, App. C (framework adaptations: incomparable metric types and directions).

    Examples
    --------
    >>> best, incomparable, _ = rank_by_metric([
    ...     Candidate("a", 0, 0.80, True), Candidate("b", 1, 0.85, True),
    ...     Candidate("c", 2, 0.10, False)])
    >>> best.node_id, incomparable
    ('b', ('c',))
    >>> rank_by_metric([Candidate("a", 0, 0.83, True), Candidate("b", 1, 0.8300000000001, True)])[0].node_id
    'a'
    """
    cands = list(candidates)
    pool = [c for c in cands if c.rankable and _finite(c.value) and c.maximize is not None]
    if not pool:
        return (
            None,
            (),
            (f"none of the {len(cands)} candidate(s) reports a finite metric with a direction",),
        )
    groups: dict[tuple[str, bool], list[Candidate]] = {}
    for c in pool:
        groups.setdefault((c.kind, bool(c.maximize)), []).append(c)
    (kind, maximize), group = min(
        groups.items(),
        key=lambda kv: (-len(kv[1]), min((c.order, c.node_id) for c in kv[1]), kv[0]),
    )
    sign = 1.0 if maximize else -1.0
    best = min(group, key=lambda c: (-sign * comparable_scalar(c.value), c.order, c.node_id))
    incomparable = tuple(
        sorted(c.node_id for c in pool if (c.kind, bool(c.maximize)) != (kind, maximize))
    )
    reasons = [
        f"{len(group)} comparable candidate(s) ({kind}, {_direction(maximize)}); best "
        f"{best.node_id} with {float(best.value):.6g}"
    ]
    if incomparable:
        reasons.append(
            f"{len(incomparable)} candidate(s) with another metric type or direction are "
            f"incomparable and were not ranked: {', '.join(incomparable)}"
        )
    return best, incomparable, tuple(reasons)


def final_file() -> Selection:
    """Codex and Autoresearch: the ``submission.csv`` present when the run ends.

    Returns
    -------
    Selection
        ``rule="final_file"``, ``use_final_file=True``.

    See Also
    --------
    best_reported_val_non_faulty

    References
    ----------
    Auto-MD-bench, App. C (submission selection).

    Examples
    --------
    >>> final_file().rule
    'final_file'
    """
    return Selection(
        RULE_FINAL_FILE, None, True, ("the submission file present when the run ended is used",)
    )


def best_reported_val_non_faulty(candidates: Iterable[Candidate]) -> Selection:
    """AIDE: the highest-ranked node that is not buggy and has a prediction file.

    Candidates are nodes with ``buggy=False`` and ``has_file=True``; they are ranked by
    :func:`rank_by_metric` (each node's own direction, incomparable groups reported, earliest on
    ties). When no node qualifies, the run's final file is used (rule ``final_file``).

    Parameters
    ----------
    candidates : iterable of Candidate

    Returns
    -------
    Selection

    See Also
    --------
    rank_by_metric, latest_stage_best_node

    References
    ----------
    Auto-MD-bench, App. C: "the highest-ranked node that is not marked as faulty by the agent and
    has an available prediction file" (AIDE ``Journal.get_best_node`` with ``only_good=True``).

    Examples
    --------
    >>> sel = best_reported_val_non_faulty([
    ...     Candidate("a", 0, 0.81, True, has_file=True),
    ...     Candidate("b", 1, None, None, buggy=True, has_file=True),
    ...     Candidate("c", 2, 0.83, True, has_file=True),
    ...     Candidate("d", 3, 0.90, True, has_file=False)])
    >>> sel.rule, sel.node_id
    ('best_reported_val_non_faulty', 'c')
    """
    cands = list(candidates)
    n_buggy = sum(c.buggy for c in cands)
    n_nofile = sum(not c.buggy and not c.has_file for c in cands)
    pool = [c for c in cands if not c.buggy and c.has_file]
    head = (
        f"{len(cands)} node(s): {n_buggy} buggy, {n_nofile} non-buggy without a prediction file, "
        f"{len(pool)} candidate(s)"
    )
    best, incomparable, reasons = rank_by_metric(pool)
    if not pool:
        scored = sum(
            not c.buggy and c.rankable and _finite(c.value) and c.maximize is not None
            for c in cands
        )
        reasons = (
            f"no non-buggy node has a prediction file ({scored} non-buggy node(s) report a metric)",
        )
    if best is None:
        return Selection(
            RULE_FINAL_FILE,
            None,
            True,
            (head, *reasons, "no node qualifies; the run's final submission file is used"),
            incomparable,
        )
    return Selection(RULE_BEST_NON_FAULTY, best.node_id, False, (head, *reasons), incomparable)


def latest_stage_best_node(stages: Sequence[StageCandidates]) -> Selection:
    """AI-Scientist-v2: latest sub-stage first, the saved best node unless buggy, else the metric rule.

    For each sub-stage, from the latest ``order`` to the earliest, the stage's node is its saved
    best node if that node is in the stage and not buggy; otherwise the best non-buggy node by
    :func:`rank_by_metric` (``rankable=False`` nodes, e.g. seed re-runs, are not ranked). The first
    stage node that has its own prediction file is selected; stages whose node has none are
    skipped. If no stage yields one, the file left in the working directory (the final file) is
    used. Plot problems (``is_buggy_plots``) are not faults.

    Parameters
    ----------
    stages : sequence of StageCandidates

    Returns
    -------
    Selection
        ``rule="latest_stage_best_node"``; ``use_final_file`` when no stage yields a node.

    See Also
    --------
    rank_by_metric, best_reported_val_non_faulty

    References
    ----------
    Auto-MD-bench, App. C (AI Scientist v2 submission selection).

    Examples
    --------
    >>> s1 = StageCandidates("stage_1_a_1_b", (1, 1), "n1", (Candidate("n1", 0, 0.7, True, has_file=True),))
    >>> s2 = StageCandidates("stage_2_c_1_d", (2, 1), "n3", (
    ...     Candidate("n2", 1, 0.8, True, has_file=True),
    ...     Candidate("n3", 2, None, None, buggy=True, has_file=True)))
    >>> sel = latest_stage_best_node([s1, s2])
    >>> sel.node_id
    'n2'
    """
    reasons: list[str] = []
    incomparable: set[str] = set()
    for st in sorted(stages, key=lambda s: (s.order, s.name), reverse=True):
        by_id = {c.node_id: c for c in st.candidates}
        chosen = None
        saved = by_id.get(st.best_node_id) if st.best_node_id is not None else None
        if st.best_node_id is None:
            reasons.append(f"{st.name}: no saved best node; metric rule")
        elif saved is None:
            reasons.append(
                f"{st.name}: saved best node {st.best_node_id} is not in the stage; metric rule"
            )
        elif saved.buggy:
            reasons.append(
                f"{st.name}: saved best node {saved.node_id} is marked buggy; metric rule"
            )
        else:
            chosen = saved
            reasons.append(f"{st.name}: saved best node {saved.node_id} is not buggy")
        if chosen is None:
            best, inc, why = rank_by_metric(c for c in st.candidates if not c.buggy)
            incomparable.update(inc)
            reasons.extend(f"{st.name}: {w}" for w in why)
            chosen = best
        if chosen is None:
            reasons.append(f"{st.name}: no node selected; stage skipped")
            continue
        if not chosen.has_file:
            reasons.append(
                f"{st.name}: {chosen.node_id} has no saved prediction file; stage skipped"
            )
            continue
        reasons.append(f"selected {chosen.node_id} from {st.name}")
        return Selection(
            RULE_LATEST_STAGE, chosen.node_id, False, tuple(reasons), tuple(sorted(incomparable))
        )
    reasons.append("no sub-stage yields a node with its own file; the final file is used")
    return Selection(RULE_LATEST_STAGE, None, True, tuple(reasons), tuple(sorted(incomparable)))


def earliest_best_val_metric_step(
    candidates: Iterable[Candidate], best_val_metric: float | None
) -> Selection:
    """FML-bench: the earliest step whose primary metric equals the run's ``best_val_metric``.

    Equality is at the project's precision (:func:`~automd_analysis.precision.comparable`, 12
    significant digits; FML-bench copies ``best_val_metric`` from a step's ``primary_metric``).
    When that step has no bound prediction file, or no step matches, the final file is used.

    Parameters
    ----------
    candidates : iterable of Candidate
        One per step (``order`` = ``step_id``).
    best_val_metric : float or None

    Returns
    -------
    Selection
        ``rule="earliest_best_val_metric_step"``.

    See Also
    --------
    best_reported_val_non_faulty

    References
    ----------
    FML-bench ``summary.json`` (``best_val_metric``, ``val_steps[].primary_metric``).

    Examples
    --------
    >>> sel = earliest_best_val_metric_step([
    ...     Candidate("step-0001", 1, 0.2, has_file=True),
    ...     Candidate("step-0002", 2, 0.1, has_file=True),
    ...     Candidate("step-0003", 3, 0.1, has_file=True)], 0.1)
    >>> sel.node_id
    'step-0002'
    """
    cands = sorted(candidates, key=lambda c: (c.order, c.node_id))
    if not _finite(best_val_metric):
        return Selection(
            RULE_FML_BEST_STEP,
            None,
            True,
            ("the run has no finite best_val_metric; the final file is used",),
        )
    target = comparable_scalar(best_val_metric)
    hit = next(
        (c for c in cands if _finite(c.value) and comparable_scalar(c.value) == target), None
    )
    if hit is None:
        return Selection(
            RULE_FML_BEST_STEP,
            None,
            True,
            (f"no step reports best_val_metric {best_val_metric!r}; the final file is used",),
        )
    why = f"{hit.node_id} is the earliest step with primary metric {best_val_metric!r}"
    if not hit.has_file:
        return Selection(
            RULE_FML_BEST_STEP,
            None,
            True,
            (why, f"{hit.node_id} has no bound prediction file; the final file is used"),
        )
    return Selection(RULE_FML_BEST_STEP, hit.node_id, False, (why,))
