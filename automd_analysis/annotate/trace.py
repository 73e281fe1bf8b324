"""What the static analyser records about a version's code: its files, models and events.

:class:`Trace` is the output of :func:`~.interpreter.analyse_program` and the input of
:mod:`.practices`; :class:`ModelSite` is one model constructed in the code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from automd_analysis.annotate.values import Value

__all__ = ["ModelSite", "SourceFile", "Trace"]


@dataclass
class SourceFile:
    """One Python file of a version.

    Attributes
    ----------
    path : str
        How evidence cites the file (run-relative, e.g. ``code/v0007/train.py``).
    module : str
        Dotted module name used to resolve imports between the files (``train``, ``src.models``).
    text : str
        The source text.
    """

    path: str
    module: str
    text: str


@dataclass
class ModelSite:
    """A model constructed (or trained through a functional API) somewhere in the code.

    ``roles`` may hold ``calibrator`` (fitted on one model's predictions, or a library
    calibrator), ``stacker`` (fitted on several models' predictions), ``ccv``
    (``CalibratedClassifierCV``), ``voting``, ``stack_wrapper``, ``nonparametric`` (Kaplan-Meier)
    and ``censoring_km`` (Kaplan-Meier of the censoring distribution).
    """

    mid: int
    key: tuple[str, str]
    families: tuple[str, ...]
    file: int
    line: int
    roles: set[str] = field(default_factory=set)
    calibration: str | None = None
    inner: set[int] = field(default_factory=set)
    imbalance: dict[str, set[int]] = field(default_factory=dict)
    fit_labels: set[tuple] = field(default_factory=set)
    fit_eids: set[int] = field(default_factory=set)
    meta_inputs: set[int] = field(default_factory=set)
    kwargs: dict[str, object] = field(default_factory=dict)
    reached: bool = True


@dataclass
class Trace:
    """What the interpreter saw.

    Attributes
    ----------
    files : list of str
        Evidence paths, indexed by file number.
    evidence : list of (int, int)
        ``(file number, line)`` of each evidence id.
    models : dict
        Model id -> :class:`ModelSite`.
    events : dict
        ``(kind, detail, evidence id)`` -> reached (bool): validation designs, subgroup metrics,
        imbalance handling not tied to one model, calibration fits.
    sinks : list of (Value, Value, int)
        ``(data written, path, evidence id)`` for every file write.
    notes : list of str
        Problems (unparsable files, budget exceeded).
    """

    files: list[str]
    evidence: list[tuple[int, int]] = field(default_factory=list)
    models: dict[int, ModelSite] = field(default_factory=dict)
    events: dict[tuple, bool] = field(default_factory=dict)
    sinks: list[tuple[Value, Value, int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def cite(self, eid: int) -> tuple[int, int]:
        """``(file number, line)`` of evidence id ``eid``."""
        return self.evidence[eid]
