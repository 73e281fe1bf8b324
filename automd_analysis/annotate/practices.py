"""Codebook answers (``docs/archive.md``) from a :class:`~.interpreter.Trace`.

The answers describe the code that produced the *submitted* predictions: the interpreter follows
predictions from the models that made them to the files the code writes, and the submission file
is the written file whose name mentions ``submission`` (else every written file that carries
predictions). Models, calibrations, rank transforms and averaging whose output never reaches it
are exploratory and do not count; when no written file carries predictions (the code writes
through a route the analyser cannot follow), every reached construct counts and answers that
depend on the route are ``uncertain``. ``docs/annotation.md`` lists every rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from automd_analysis.annotate.trace import ModelSite, Trace
from automd_analysis.codebook import CODEBOOK

__all__ = [
    "MAX_EVIDENCE",
    "Finding",
    "TaskFacts",
    "apply_eligibility",
    "code_findings",
    "code_signature",
]

#: Evidence items cited per answer.
MAX_EVIDENCE = 4
_META_ROLES = {"calibrator", "stacker", "ccv", "voting", "stack_wrapper", "censoring_km"}
_IMBALANCE_ORDER = ("smote", "oversampling", "undersampling", "class_weight")
_SURVIVAL_FAMILIES = {"cox", "parametric_survival"}
_SURVIVAL_ROOTS = {"lifelines", "sksurv", "pycox"}


@dataclass(frozen=True)
class Finding:
    """One codebook answer with its evidence.

    Attributes
    ----------
    field : str
        Codebook field.
    value : str or tuple of str
        A codebook value (a tuple for multi-valued fields).
    evidence : tuple of (int, int)
        ``(file number, line)`` pairs, at most :data:`MAX_EVIDENCE`.
    affected_weight : float or None
        ``censoring_handling`` only: ensemble weight of the members with the censoring error.
    """

    field: str
    value: str | tuple[str, ...]
    evidence: tuple[tuple[int, int], ...] = ()
    affected_weight: float | None = None


@dataclass(frozen=True)
class TaskFacts:
    """What eligibility needs to know about the task (``None``: unknown, answer from code).

    Attributes
    ----------
    kind : {"survival", "classification", "sequential"} or None
    ehr : bool or None
        Manifest ``paper.ehr`` (EHR tasks and NHANES: ``missingness_features`` applies).
    external_shift : bool or None
        External validation task with a cohort or hospital shift (``validation_under_shift``).
    """

    kind: str | None = None
    ehr: bool | None = None
    external_shift: bool | None = None


class _Context:
    """The trace seen from the submission: final labels, final models, citations."""

    def __init__(self, trace: Trace):
        self.trace = trace
        sinks = [s for s in trace.sinks if s[0].labels]
        named = [s for s in sinks if _names_submission(s[1])]
        with_preds = [s for s in sinks if s[0].has("src")]
        chosen = named if any(s[0].has("src") for s in named) else with_preds
        self.sink_labels = [frozenset(s[0].labels) for s in chosen]
        self.sink_eids = [s[2] for s in chosen]
        self.fallback = not self.sink_labels
        if self.fallback:
            labels: set = set()
            for (kind, _detail, eid), reached in trace.events.items():
                if reached and kind in ("blend", "foldavg", "rank", "cal"):
                    labels.add((kind, eid))
            for mid, m in trace.models.items():
                if m.reached:
                    labels.add(("src", mid))
            self.labels = frozenset(labels)
        else:
            self.labels = frozenset().union(*self.sink_labels)
        self.final = self._final_models()
        self.base = [m for m in self.final if not (m.roles & _META_ROLES)]
        if any("nonparametric" not in m.roles for m in self.base):
            self.base = [m for m in self.base if "nonparametric" not in m.roles]

    def _final_models(self) -> list[ModelSite]:
        todo = [lab[1] for lab in self.labels if lab[0] == "src"]
        seen: set[int] = set()
        while todo:
            mid = todo.pop()
            if mid in seen or mid not in self.trace.models:
                continue
            seen.add(mid)
            m = self.trace.models[mid]
            todo.extend(m.inner)
            todo.extend(m.meta_inputs)
        models = [self.trace.models[mid] for mid in sorted(seen)]
        if self.fallback:
            models = [m for m in models if m.reached]
        return models

    def cite(self, eids: Iterable[int]) -> tuple[tuple[int, int], ...]:
        spots = sorted({self.trace.cite(e) for e in eids})
        return tuple(spots[:MAX_EVIDENCE])

    def cite_lines(self, spots: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
        return tuple(sorted(set(spots))[:MAX_EVIDENCE])

    def label_eids(self, tag: str, labels=None) -> list[int]:
        return [lab[1] for lab in (self.labels if labels is None else labels) if lab[0] == tag]

    def reached_events(self, kind: str) -> list[tuple[object, int]]:
        return [(d, e) for (k, d, e), r in self.trace.events.items() if k == kind and r]

    def per_sink(self, tag: str) -> list[bool]:
        return [any(lab[0] == tag for lab in labels) for labels in self.sink_labels]


def _names_submission(path) -> bool:
    names = [lab[1] for lab in path.labels if lab[0] == "fname"]
    if isinstance(path.const, str):
        names.append(path.const.lower())
    return any("submission" in n or "submit" in n for n in names)


def code_findings(trace: Trace) -> dict[str, Finding]:
    """Codebook answers about the code of a trace, before task eligibility is applied.

    Parameters
    ----------
    trace : Trace
        Output of :func:`~.interpreter.analyse_program`.

    Returns
    -------
    dict
        Field -> :class:`Finding`. ``model_families`` is omitted when the code constructs no
        recognised model; ``censoring_handling`` is ``"na"`` when no survival model is used.

    Examples
    --------
    >>> from automd_analysis.annotate.interpreter import SourceFile, analyse_program
    >>> code = '''
    ... from sklearn.linear_model import LogisticRegression as LR
    ... import pandas as pd
    ... train, test = pd.read_csv("train.csv"), pd.read_csv("test.csv")
    ... model = LR(class_weight="balanced").fit(train[["x"]], train["y"])
    ... pd.DataFrame({"p": model.predict_proba(test[["x"]])[:, 1]}).to_csv("submission.csv")
    ... '''
    >>> found = code_findings(analyse_program([SourceFile("train.py", "train", code)]))
    >>> found["model_families"].value, found["class_imbalance_handling"].value
    (('linear',), 'class_weight')
    >>> found["class_imbalance_handling"].evidence
    ((0, 5),)
    """
    ctx = _Context(trace)
    out: dict[str, Finding] = {}
    for fn in (
        _families,
        _ensembling,
        _validation,
        _calibration,
        _ranks,
        _imbalance,
        _censoring,
        _missingness,
        _subgroups,
        _shift,
    ):
        for f in fn(ctx):
            out[f.field] = f
    imb = out["class_imbalance_handling"]
    cal = out["probability_calibration"]
    if imb.value == "none":
        out["recalibration_after_imbalance"] = Finding("recalibration_after_imbalance", "na")
    else:
        yes = cal.value == "yes"
        out["recalibration_after_imbalance"] = Finding(
            "recalibration_after_imbalance", "yes" if yes else "no", cal.evidence if yes else ()
        )
    return out


def _families(ctx: _Context) -> list[Finding]:
    spots: dict[str, set] = {}
    for m in ctx.base:
        for fam in m.families:
            spots.setdefault(fam, set()).add((m.file, m.line))
    if not spots:
        return []
    evidence = [min(s) for s in spots.values()]
    return [Finding("model_families", tuple(sorted(spots)), ctx.cite_lines(evidence))]


def _ensembling(ctx: _Context) -> list[Finding]:
    values: dict[str, list] = {}
    stack = [m for m in ctx.final if m.roles & {"stacker", "stack_wrapper"}]
    if stack:
        values["stacking"] = [(m.file, m.line) for m in stack]
    blends = ctx.label_eids("blend")
    voting = [m for m in ctx.final if "voting" in m.roles]
    if blends or voting:
        values["model_blend"] = [ctx.trace.cite(e) for e in blends] + [
            (m.file, m.line) for m in voting
        ]
    folds = ctx.label_eids("foldavg")
    if folds:
        values["seed_fold_average"] = [ctx.trace.cite(e) for e in folds]
    if not values:
        values["single_model"] = [(m.file, m.line) for m in ctx.base]
    evidence = [s for v in values.values() for s in sorted(v)[:2]]
    return [Finding("ensembling", tuple(sorted(values)), ctx.cite_lines(evidence))]


def _validation(ctx: _Context) -> list[Finding]:
    designs: dict[str, list[int]] = {}
    for detail, eid in ctx.reached_events("validation"):
        designs.setdefault(detail, []).append(eid)
    site = [e for m in ctx.base for e in ctx.label_eids("sitemask", m.fit_labels)]
    if site:
        designs.setdefault("group_split", []).extend(site)
    if not designs:
        return [Finding("validation_design", ("none",))]
    evidence = [ctx.trace.cite(e) for v in designs.values() for e in sorted(v)[:2]]
    return [Finding("validation_design", tuple(sorted(designs)), ctx.cite_lines(evidence))]


def _yes_no(ctx: _Context, field: str, tag: str, reached_kind: str) -> Finding:
    if ctx.fallback:
        eids = [e for _, e in ctx.reached_events(reached_kind)]
        if eids:
            return Finding(field, "uncertain", ctx.cite(eids))
        return Finding(field, "no")
    per_sink = ctx.per_sink(tag)
    eids = ctx.label_eids(tag)
    if all(per_sink):
        return Finding(field, "yes", ctx.cite(eids))
    if any(per_sink):
        return Finding(field, "uncertain", ctx.cite(eids + ctx.sink_eids))
    return Finding(field, "no")


def _calibration(ctx: _Context) -> list[Finding]:
    return [_yes_no(ctx, "probability_calibration", "cal", "cal")]


def _ranks(ctx: _Context) -> list[Finding]:
    return [_yes_no(ctx, "averaged_ranks_as_probabilities", "rank", "rank")]


def _imbalance(ctx: _Context) -> list[Finding]:
    found: dict[str, set] = {}
    for m in ctx.base:
        for kind, eids in m.imbalance.items():
            found.setdefault(kind, set()).update(eids)
    for kind, eid in ctx.reached_events("imbalance"):
        found.setdefault(kind, set()).add(eid)
    for kind in _IMBALANCE_ORDER:
        if kind in found:
            return [Finding("class_imbalance_handling", kind, ctx.cite(found[kind]))]
    return [Finding("class_imbalance_handling", "none")]


def _is_survival(m: ModelSite) -> bool:
    return bool(set(m.families) & _SURVIVAL_FAMILIES) or m.key[0] in _SURVIVAL_ROOTS


def _censoring_error(m: ModelSite) -> tuple[str, set[int]] | None:
    labels = m.fit_labels
    death = {lab[1] for lab in labels if lab[0] == "forcedevent"}
    if death:
        return "censored_as_death", death
    survivor = {lab[1] for lab in labels if lab[0] == "survext"}
    known = any(lab[0] == "known" for lab in labels)
    horizon = {lab[1] for lab in labels if lab[0] == "horizon"}
    if survivor or (horizon and not known):
        return "censored_as_survivor", survivor | horizon
    durle = {lab[1] for lab in labels if lab[0] == "durle"}
    if durle and not horizon and not known and not _is_survival(m):
        return "censored_as_death", durle
    return None


def _censoring(ctx: _Context) -> list[Finding]:
    if not any(_is_survival(m) or m.fit_labels & {("event",), ("dur",)} for m in ctx.base):
        return [Finding("censoring_handling", "na")]
    wrong: dict[str, set[int]] = {}
    affected: set[int] = set()
    for m in ctx.base:
        err = _censoring_error(m)
        if err is not None:
            wrong.setdefault(err[0], set()).update(err[1])
            affected.add(m.mid)
    if not wrong:
        fits = [e for m in ctx.base for e in sorted(m.fit_eids)[:1]]
        return [Finding("censoring_handling", "correct", ctx.cite(fits))]
    kind = sorted(wrong)[0]
    return [
        Finding(
            "censoring_handling",
            kind,
            ctx.cite(wrong[kind]),
            affected_weight=_affected_weight(ctx, affected),
        )
    ]


def _affected_weight(ctx: _Context, affected: set[int]) -> float:
    """Share of the blend weight carried by the affected models (equal weights if unknown)."""
    for (kind, detail, _eid), reached in ctx.trace.events.items():
        if kind != "blend_weights" or not reached:
            continue
        groups = [(frozenset(lab[1] for lab in g), w) for g, w in detail]
        covered = frozenset().union(*(g for g, _ in groups))
        base = {m.mid for m in ctx.base}
        if not base <= covered and not (base & covered):
            continue
        total = sum(w for _, w in groups)
        if total <= 0:
            continue
        hit = sum(w for g, w in groups if g & affected)
        return round(hit / total, 6)
    n = max(len(ctx.base), 1)
    return round(len(affected & {m.mid for m in ctx.base}) / n, 6)


def _missingness(ctx: _Context) -> list[Finding]:
    eids = [e for m in ctx.base for e in ctx.label_eids("missflag", m.fit_labels)]
    if eids:
        return [Finding("missingness_features", "yes", ctx.cite(eids))]
    return [Finding("missingness_features", "no")]


def _subgroups(ctx: _Context) -> list[Finding]:
    eids = [e for _, e in ctx.reached_events("subgroup")]
    if eids:
        return [Finding("subgroup_checks", "yes", ctx.cite(eids))]
    return [Finding("subgroup_checks", "no")]


def _shift(ctx: _Context) -> list[Finding]:
    eids = [e for m in ctx.base for e in ctx.label_eids("sitemask", m.fit_labels)]
    eids += [e for _, e in ctx.reached_events("shift")]
    if eids:
        return [Finding("validation_under_shift", "yes", ctx.cite(eids))]
    return [Finding("validation_under_shift", "no")]


def apply_eligibility(findings: dict[str, Finding], task: TaskFacts) -> dict[str, Finding]:
    """Set fields that do not apply to the task to ``"na"`` (docs/archive.md, Table 20 column).

    Parameters
    ----------
    findings : dict
        Output of :func:`code_findings`.
    task : TaskFacts
        Unknown facts (``None``) leave the code answer unchanged.

    Returns
    -------
    dict
        A new mapping; every value is allowed by the codebook.

    Examples
    --------
    >>> f = {"censoring_handling": Finding("censoring_handling", "correct", ((0, 3),)),
    ...      "class_imbalance_handling": Finding("class_imbalance_handling", "class_weight")}
    >>> out = apply_eligibility(f, TaskFacts(kind="classification"))
    >>> out["censoring_handling"].value, out["class_imbalance_handling"].value
    ('na', 'class_weight')
    """
    out = dict(findings)

    def na(field: str) -> None:
        if field in out:
            out[field] = Finding(field, "na")

    if task.kind is not None:
        if task.kind == "survival":
            na("class_imbalance_handling")
            na("recalibration_after_imbalance")
        else:
            na("censoring_handling")
    if task.ehr is False:
        na("missingness_features")
    if task.external_shift is False:
        na("validation_under_shift")
    for name, f in out.items():
        spec = CODEBOOK[name]
        values = f.value if isinstance(f.value, tuple) else (f.value,)
        if any(v not in spec.values for v in values):  # pragma: no cover - a rule bug
            raise AssertionError(f"{name}: {f.value!r} is not a codebook value")
    return out


#: Keyword arguments that are not hyperparameters (seeds, threads, logging) or are answered by
#: another codebook field (class weights).
_NOT_HYPERPARAMETERS = frozenset(
    {
        "random_state",
        "seed",
        "random_seed",
        "n_jobs",
        "verbose",
        "verbosity",
        "silent",
        "thread_count",
        "nthread",
        "class_weight",
        "class_weights",
        "scale_pos_weight",
        "is_unbalance",
        "auto_class_weights",
        "eval_metric",
    }
)


def code_signature(trace: Trace) -> dict:
    """What a version's code does, beyond the codebook answers, for comparing two versions.

    Returns
    -------
    dict
        ``models`` (library class of each submitted model), ``params`` (literal hyperparameters of
        the submitted models), ``calibration`` (calibration methods reaching the submission),
        ``blend_weights`` (literal blend weights), all sorted lists of strings (JSON-ready).

    Examples
    --------
    >>> from automd_analysis.annotate.interpreter import SourceFile, analyse_program
    >>> code = '''
    ... import pandas as pd
    ... from sklearn.ensemble import RandomForestClassifier
    ... d = pd.read_csv("train.csv")
    ... m = RandomForestClassifier(n_estimators=300, random_state=0).fit(d[["x"]], d["y"])
    ... pd.DataFrame({"p": m.predict_proba(d[["x"]])[:, 1]}).to_csv("submission.csv")
    ... '''
    >>> sig = code_signature(analyse_program([SourceFile("t.py", "t", code)]))
    >>> sig["models"], sig["params"]
    (['RandomForestClassifier'], ['RandomForestClassifier.n_estimators=300'])
    """
    ctx = _Context(trace)
    models = sorted(m.key[1] for m in ctx.base)
    params = sorted(
        f"{m.key[1]}.{k}={v!r}"
        for m in ctx.base
        for k, v in m.kwargs.items()
        if k not in _NOT_HYPERPARAMETERS and v != "<expr>"
    )
    calibration = sorted({lab[2] for lab in ctx.labels if lab[0] == "cal" and len(lab) > 2})
    weights = sorted(
        repr(sorted(w for _, w in detail))
        for (kind, detail, _), reached in trace.events.items()
        if kind == "blend_weights" and reached
    )
    return {
        "models": models,
        "params": params,
        "calibration": calibration,
        "blend_weights": weights,
    }
