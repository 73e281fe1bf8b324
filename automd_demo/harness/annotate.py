"""Ground-truth ``annotations.json`` for a scripted run (codebook in docs/archive.md).

The harness knows which practices each version's config applies (:func:`.configs.practices`) and
the renderer tagged the script lines that implement them, so the answers are ground truth and
every ``file:line`` evidence points at a real line of the archived script. Version pairs are the
ones the analysis forms (paper App. H; :func:`.agents.pairs`), annotated with the change types
between their configs and whether the submitted predictions changed.
"""

from __future__ import annotations

from automd_demo.harness.agents import Step, pair_changes, pairs
from automd_demo.harness.configs import practices

ANNOTATOR = "automd demo harness (ground truth from the scripted configs)"
MAX_EVIDENCE = 4

#: Script tags that evidence each codebook answer value.
_VALUE_TAGS = {
    ("ensembling", "seed_fold_average"): ("ensembling:seed_fold_average",),
    ("ensembling", "model_blend"): ("ensembling:model_blend",),
    ("ensembling", "stacking"): ("ensembling:stacking",),
    ("probability_calibration", "yes"): ("calibration",),
    ("averaged_ranks_as_probabilities", "yes"): ("ranks",),
    ("class_imbalance_handling", "class_weight"): ("imbalance:class_weight",),
    ("class_imbalance_handling", "oversampling"): ("imbalance:oversampling",),
    ("class_imbalance_handling", "undersampling"): ("imbalance:undersampling",),
    ("recalibration_after_imbalance", "yes"): ("calibration",),
    ("censoring_handling", "correct"): ("censoring:correct",),
    ("censoring_handling", "censored_as_death"): ("censoring:censored_as_death",),
    ("censoring_handling", "censored_as_survivor"): ("censoring:censored_as_survivor",),
    ("missingness_features", "yes"): ("missingness",),
    ("subgroup_checks", "yes"): ("subgroup",),
    ("validation_under_shift", "yes"): ("shift_validation",),
}


def _cite(step: Step, lines: list[int]) -> list[str]:
    return [f"code/{step.version}/train.py:{n}" for n in lines[:MAX_EVIDENCE]]


def _evidence(step: Step, field: str, value) -> list[str]:
    tags: tuple[str, ...] = ()
    if field == "model_families":
        tags = tuple(f"family:{v}" for v in value)
    elif field == "validation_design":
        tags = tuple(f"validation:{v}" for v in value)
    elif field == "ensembling":
        if value == ["single_model"]:
            tags = tuple(t for t in step.script.tags if t.startswith("family:"))
        else:
            tags = tuple(t for v in value for t in _VALUE_TAGS.get((field, v), ()))
    else:
        tags = _VALUE_TAGS.get((field, value), ())
    return _cite(step, step.script.lines_for(*tags)) if tags else []


def run_answers(step: Step, *, kind: str, external_with_shift: bool, has_missing: bool) -> dict:
    """Codebook answers (with evidence) about the code of ``step``."""
    values = practices(
        step.config, kind=kind, external_with_shift=external_with_shift, has_missing=has_missing
    )
    weight = values.pop("affected_weight")
    out = {}
    for field in sorted(values):
        value = values[field]
        answer = {"value": value, "evidence": _evidence(step, field, value)}
        if field == "censoring_handling" and weight is not None:
            answer["affected_weight"] = weight
        out[field] = answer
    return out


def pair_answers(steps: list[Step], search: str) -> list[dict]:
    """Annotated version pairs (all pairs the analysis can form; it samples from them)."""
    out = []
    for earlier, later in pairs(steps, search):
        changes = pair_changes(earlier, later)
        lines = later.script.lines_for(*(f"chg:{c}" for c in changes))
        evidence = _cite(later, lines)
        if not evidence and changes:  # a removal: cite where it was in the earlier code
            evidence = _cite(earlier, earlier.script.lines_for(*(f"chg:{c}" for c in changes)))
        out.append(
            {
                "earlier": earlier.version,
                "later": later.version,
                "changes": changes,
                "affects_predictions": earlier.result.csv != later.result.csv,
                "evidence": evidence,
            }
        )
    return out


def annotations(
    steps: list[Step],
    selected: str | None,
    search: str,
    *,
    kind: str,
    external_with_shift: bool,
    has_missing: bool,
) -> dict:
    """The whole ``annotations.json`` document of a run."""
    chosen = next((s for s in steps if s.version == selected), None)
    run = (
        run_answers(
            chosen, kind=kind, external_with_shift=external_with_shift, has_missing=has_missing
        )
        if chosen is not None
        else {}
    )
    return {
        "schema_version": 1,
        "annotator": ANNOTATOR,
        "run": run,
        "pairs": pair_answers(steps, search),
    }
