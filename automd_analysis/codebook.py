"""The annotation codebook (paper App. H and I): its questions, allowed values and answer types.

``docs/archive.md`` is the human-readable copy of :data:`CODEBOOK`; a test keeps the two equal.
These are plain definitions shared by every layer that speaks of codebook answers: the archive
reader validates ``annotations.json`` against them (:mod:`automd_analysis.archive.codebook`),
``automd annotate`` produces them, and the analyses read the answers from the score store.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "CODEBOOK",
    "FORENSICS",
    "PAIR_CHANGES",
    "Annotations",
    "Answer",
    "CodebookField",
    "ForensicAnswer",
    "PairAnnotation",
]


@dataclass(frozen=True)
class CodebookField:
    """One codebook question.

    Attributes
    ----------
    multi : bool
        ``True`` when the answer is a list of distinct values, else a single value.
    values : tuple of str
        The allowed values.
    eligible : str
        Which valid runs the question applies to (paper Table 20); informative only.
    extra : tuple of str
        Keys allowed in an answer besides ``value`` and ``evidence``.
    """

    multi: bool
    values: tuple[str, ...]
    eligible: str
    extra: tuple[str, ...] = ()


_YNU = ("yes", "no", "uncertain")
#: Codebook questions about the selected submission's code (paper App. I, Table 20).
CODEBOOK: dict[str, CodebookField] = {
    "model_families": CodebookField(
        True,
        ("gbdt", "random_forest", "linear", "neural_net", "cox", "parametric_survival", "knn")
        + ("other",),
        "all valid",
    ),
    "ensembling": CodebookField(
        True, ("single_model", "seed_fold_average", "model_blend", "stacking"), "all valid"
    ),
    "validation_design": CodebookField(
        True, ("single_holdout", "kfold_cv", "repeated_cv", "group_split", "none"), "all valid"
    ),
    "probability_calibration": CodebookField(False, _YNU, "all valid"),
    "averaged_ranks_as_probabilities": CodebookField(False, (*_YNU, "na"), "all valid"),
    "class_imbalance_handling": CodebookField(
        False,
        ("none", "class_weight", "oversampling", "undersampling", "smote", "na"),
        "classification + sequential",
    ),
    "recalibration_after_imbalance": CodebookField(
        False, ("yes", "no", "na"), "runs with imbalance handling"
    ),
    "censoring_handling": CodebookField(
        False,
        ("correct", "censored_as_death", "censored_as_survivor", "wrong_ipcw", "na"),
        "survival",
        extra=("affected_weight",),
    ),
    "missingness_features": CodebookField(False, ("yes", "no", "na"), "EHR tasks + NHANES"),
    "subgroup_checks": CodebookField(False, ("yes", "no"), "all valid"),
    "validation_under_shift": CodebookField(
        False, ("yes", "no", "na"), "external tasks with a cohort/hospital shift"
    ),
}
#: Allowed ``changes`` of a version-pair annotation (paper App. H).
PAIR_CHANGES = (
    "ensembling",
    "hyperparameter_tuning",
    "feature_engineering",
    "preprocessing",
    "model_family",
    "calibration",
    "imbalance_handling",
    "validation",
    "other",
)


#: Prediction forensics (optional; written by ``automd annotate``): field -> allowed values.
#: Statistics of the submitted file alone, reported next to the codebook answers (docs/archive.md).
FORENSICS: dict[str, tuple[str, ...]] = {
    "ranks_as_probabilities": ("yes", "no", "na"),
    "mean_risk_far_from_prevalence": ("yes", "no", "na"),
    "constant_or_binary": ("constant", "near_binary", "no", "na"),
    "identical_survival_rows": ("yes", "no", "na"),
}


@dataclass(frozen=True)
class Answer:
    """A codebook answer; ``value`` is a str, or a tuple of str for multi-valued fields."""

    field: str
    value: str | tuple[str, ...]
    evidence: tuple[str, ...]
    affected_weight: float | None = None


@dataclass(frozen=True)
class PairAnnotation:
    """Changes between two versions of a run (paper App. H)."""

    earlier: str
    later: str
    changes: tuple[str, ...]
    affects_predictions: bool
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class ForensicAnswer:
    """A prediction-forensics answer: a value, the statistics it rests on and its rule."""

    field: str
    value: str
    statistics: dict[str, float | None]
    threshold: str
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Annotations:
    """A validated ``annotations.json``: answers keyed by codebook field, and version pairs.

    ``annotator`` says who produced the answers (harness ground truth, a human, or
    ``automd annotate <version>``); ``forensics`` is empty unless the file has the optional
    ``forensics`` object.
    """

    annotator: str
    answers: dict[str, Answer]
    pairs: tuple[PairAnnotation, ...]
    forensics: dict[str, ForensicAnswer] = field(default_factory=dict)
