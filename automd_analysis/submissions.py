"""Read and validate a submission file against a task (paper App. E; SPEC section 3.2).

Contract (used by ``scoring``; keep these names):

- :func:`validate_submission` ``(task, path, labels=None) -> ValidationResult`` never raises for a
  bad *submission*: every problem becomes a :class:`Reason` with a stable ``code``. It raises
  :class:`~automd_analysis.errors.DataError` only when the *task's own* data is missing or corrupt.
- On success, ``ValidationResult.predictions`` holds arrays **aligned to the row order of the hidden
  labels** (:func:`automd_analysis.tasks.load_labels`), so scoring never re-joins.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Reason:
    """One failed check: stable machine code, human message and a few offending rows/columns."""

    code: str
    message: str
    examples: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"code": self.code, "message": self.message, "examples": list(self.examples)}


@dataclass(frozen=True)
class AlignedPredictions:
    """Validated predictions, aligned to the hidden-label row order.

    Attributes
    ----------
    probability : ndarray of float64, shape (n,) or None
        ``PredictedProbability`` (classification, sequential).
    label : ndarray of int8, shape (n,) or None
        ``PredictedLabel`` when the task requires it.
    surv : ndarray of float64, shape (n, G) or None
        Survival curves on the task grid (survival).
    time_grid : ndarray of float64, shape (G,) or None
    """

    probability: np.ndarray | None = None
    label: np.ndarray | None = None
    surv: np.ndarray | None = None
    time_grid: np.ndarray | None = None


@dataclass(frozen=True)
class ValidationResult:
    valid: bool
    reasons: list[Reason]
    predictions: AlignedPredictions | None
    sha256: str | None
    n_rows: int = 0

    def to_dict(self) -> dict:
        """The ``automd validate --json`` payload."""
        return {"valid": self.valid, "reasons": [r.to_dict() for r in self.reasons]}


def validate_submission(task, path, labels=None) -> ValidationResult:  # pragma: no cover - stub
    raise NotImplementedError
