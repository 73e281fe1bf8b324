"""Prediction forensics: what the submitted file alone says about how it was made.

Four statistics, each with a documented threshold (``docs/annotation.md``), reported next to the
code answers and never overwriting them:

``ranks_as_probabilities``
    The probabilities are ranks: the values lie on a lattice ``k / (D L)`` with ``D`` one of
    ``n - 1, n, n + 1`` (``n`` rows) and ``L`` a small integer (averaged or weighted ranks of a
    few models), more often than chance allows; or they are spread uniformly over (0, 1) with mean
    near 0.5 whatever the event rate (Kolmogorov-Smirnov distance to U(0, 1)).
``mean_risk_far_from_prevalence``
    The mean predicted risk differs from the training event rate by a factor of at least 2 in
    odds (``|logit(mean) - logit(prevalence)| >= log 2``): the signature of class re-weighting or
    resampling without recalibration.
``constant_or_binary``
    One distinct value (``constant``); at most two distinct values, or at least 95% of values
    within 0.01 of 0 or 1 with at least 1% at each end (``near_binary``: hard labels written as
    probabilities, or an overfitted model). Low-risk populations, where almost every calibrated
    probability is below 0.01, are not near-binary.
``identical_survival_rows``
    Every row of the survival curves is the same curve (one distinct row): no patient-level
    information.

All functions are pure (arrays in, numbers out); :func:`submission_forensics` reads nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "BINARY_EPS",
    "BINARY_SHARE",
    "KS_UNIFORM",
    "LATTICE_SHARE",
    "MIN_ROWS",
    "PREVALENCE_LOG_ODDS",
    "Forensic",
    "binary_share",
    "identical_rows",
    "ks_uniform",
    "log_odds_gap",
    "rank_lattice",
    "submission_forensics",
]

#: Fewer rows than this: the rank statistics are not computed (``na``).
MIN_ROWS = 50
#: Share of values on the best lattice above which the file holds ranks.
LATTICE_SHARE = 0.95
#: A lattice only counts if a random value would fall on it at most this often.
LATTICE_CHANCE = 0.2
#: Kolmogorov-Smirnov distance to U(0, 1) at or below which (with a mean within 0.05 of 0.5) the
#: values are spread uniformly.
KS_UNIFORM = 0.03
#: |logit(mean prediction) - logit(training prevalence)| at or above which the mean risk is far.
PREVALENCE_LOG_ODDS = math.log(2.0)
#: Values within this distance of 0 or 1 count as binary.
BINARY_EPS = 0.01
#: Share of near-0/1 values at or above which the predictions are near-binary.
BINARY_SHARE = 0.95
#: ... provided each end (near 0, near 1) holds at least this share.
BINARY_END_SHARE = 0.01
#: Lattice multipliers tried (averages of 1-6 rankings and decimal weights).
LATTICE_MULTIPLIERS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 20)
#: Rounding of the written values assumed when the lattice tolerance is set.
WRITTEN_DECIMALS = 6


@dataclass(frozen=True)
class Forensic:
    """One forensics answer.

    Attributes
    ----------
    value : str
        ``yes``/``no``/``na`` (``constant``/``near_binary``/``no``/``na`` for
        ``constant_or_binary``).
    statistics : dict
        The numbers the answer rests on (``None`` where undefined).
    threshold : str
        The rule, in words.
    """

    value: str
    statistics: dict[str, float | None] = field(default_factory=dict)
    threshold: str = ""


def _as_float(values) -> np.ndarray:
    a = np.asarray(values, dtype=float).ravel()
    return a[np.isfinite(a)]


def rank_lattice(values, decimals: int = WRITTEN_DECIMALS) -> tuple[float, int, int, float]:
    """Best rank lattice: the share of values ``v`` with ``v * D * L`` within rounding of an integer.

    For ``D`` in ``n - 1, n, n + 1`` and ``L`` in :data:`LATTICE_MULTIPLIERS`, the tolerance is
    the written rounding, ``0.5 * 10**-decimals * D * L`` lattice units (plus 1e-9); the chance
    share of a random value is ``min(1, 2 * tolerance)``. Among lattices whose chance share is at
    most :data:`LATTICE_CHANCE`, the one with the highest share wins (ties: the smaller ``L``).

    Parameters
    ----------
    values : array-like of float
        Predicted probabilities (non-finite values are dropped).
    decimals : int
        Decimal places the file was written with.

    Returns
    -------
    (share, D, L, chance) : (float, int, int, float)
        ``share`` is NaN (and ``D``, ``L`` are 0) for fewer than 2 values or when no lattice is
        discriminative.

    References
    ----------
    Ranks divided by the number of rows take the values ``k / n``; averages of ``m`` such rankings
    take values ``k / (m n)`` (half-integers for tied ranks double ``m``).

    Examples
    --------
    >>> import numpy as np
    >>> ranks = np.round(np.arange(1, 201) / 200, 6)
    >>> share, d, m, chance = rank_lattice(ranks)
    >>> share, d, m
    (1.0, 200, 1)
    >>> round(rank_lattice(np.linspace(0.013, 0.91, 200) ** 2)[0], 2) < 0.5
    True
    """
    v = _as_float(values)
    n = len(v)
    if n < 2:
        return float("nan"), 0, 0, float("nan")
    half = 0.5 * 10.0**-decimals
    best = (float("nan"), 0, 0, float("nan"))
    for mult in LATTICE_MULTIPLIERS:
        for d in (n - 1, n, n + 1):
            if d <= 0:
                continue
            scale = d * mult
            tol = half * scale + 1e-9
            chance = min(1.0, 2.0 * tol)
            if chance > LATTICE_CHANCE:
                continue
            x = v * scale
            share = float(np.mean(np.abs(x - np.round(x)) <= tol))
            if math.isnan(best[0]) or share > best[0] + 1e-12:
                best = (share, d, mult, chance)
    return best


def ks_uniform(values) -> float:
    """Kolmogorov-Smirnov distance between the values and U(0, 1).

    ``D = max_i max(i/n - v_(i), v_(i) - (i-1)/n)`` over the sorted values (NaN if empty).

    Examples
    --------
    >>> import numpy as np
    >>> round(ks_uniform((np.arange(100) + 0.5) / 100), 3)
    0.005
    >>> round(ks_uniform(np.full(10, 0.1)), 2)
    0.9
    """
    v = np.sort(np.clip(_as_float(values), 0.0, 1.0))
    n = len(v)
    if n == 0:
        return float("nan")
    i = np.arange(1, n + 1)
    return float(max(np.max(i / n - v), np.max(v - (i - 1) / n)))


def log_odds_gap(mean_prediction: float, prevalence: float) -> float:
    """``logit(mean prediction) - logit(prevalence)`` (values clipped to [1e-6, 1 - 1e-6]).

    Examples
    --------
    >>> round(log_odds_gap(0.5, 0.2), 4)  # odds 1 vs 0.25
    1.3863
    """
    m = min(max(float(mean_prediction), 1e-6), 1 - 1e-6)
    p = min(max(float(prevalence), 1e-6), 1 - 1e-6)
    return math.log(m / (1 - m)) - math.log(p / (1 - p))


def binary_share(values, eps: float = BINARY_EPS) -> tuple[float, float, int]:
    """Share of values within ``eps`` of 0 or 1, the smaller of the two end shares, and the
    number of distinct values.

    Examples
    --------
    >>> binary_share([0.0, 1.0, 0.995, 0.3])
    (0.75, 0.25, 4)
    """
    v = _as_float(values)
    if len(v) == 0:
        return float("nan"), float("nan"), 0
    low, high = v <= eps, v >= 1 - eps
    ends = min(float(np.mean(low)), float(np.mean(high)))
    return float(np.mean(low | high)), ends, int(len(np.unique(v)))


def identical_rows(matrix) -> tuple[float, int]:
    """Share of rows equal to the most common row, and the number of distinct rows.

    Examples
    --------
    >>> identical_rows([[1.0, 0.9], [1.0, 0.9], [1.0, 0.8]])
    (0.6666666666666666, 2)
    """
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.shape[0] == 0:
        return float("nan"), 0
    _, counts = np.unique(m, axis=0, return_counts=True)
    return float(counts.max() / m.shape[0]), int(len(counts))


def _rounded(x: float | None) -> float | None:
    if x is None or not math.isfinite(x):
        return None
    return round(float(x), 6)


def _ranks(p: np.ndarray) -> Forensic:
    rule = (
        f"yes if >= {LATTICE_SHARE:.0%} of values lie on a rank lattice k/(D*L) "
        f"(chance <= {LATTICE_CHANCE:.0%}), or the KS distance to U(0,1) is <= {KS_UNIFORM} with "
        f"mean within 0.05 of 0.5; needs >= {MIN_ROWS} rows"
    )
    if len(p) < MIN_ROWS:
        return Forensic("na", {"n": float(len(p))}, rule)
    share, d, mult, chance = rank_lattice(p)
    ks = ks_uniform(p)
    mean = float(np.mean(p))
    on_lattice = math.isfinite(share) and share >= LATTICE_SHARE
    uniform = ks <= KS_UNIFORM and abs(mean - 0.5) <= 0.05
    stats = {
        "n": float(len(p)),
        "lattice_share": _rounded(share),
        "lattice_denominator": float(d * mult) if d else None,
        "lattice_chance": _rounded(chance),
        "ks_uniform": _rounded(ks),
        "mean": _rounded(mean),
    }
    return Forensic("yes" if on_lattice or uniform else "no", stats, rule)


def _prevalence(p: np.ndarray, prevalence: float | None) -> Forensic:
    rule = f"yes if |logit(mean prediction) - logit(training prevalence)| >= log 2 ({PREVALENCE_LOG_ODDS:.4f})"
    if prevalence is None or not math.isfinite(prevalence) or len(p) == 0:
        return Forensic("na", {"mean": _rounded(float(np.mean(p))) if len(p) else None}, rule)
    mean = float(np.mean(p))
    gap = log_odds_gap(mean, prevalence)
    stats = {
        "mean": _rounded(mean),
        "prevalence": _rounded(prevalence),
        "log_odds_gap": _rounded(gap),
    }
    return Forensic("yes" if abs(gap) >= PREVALENCE_LOG_ODDS else "no", stats, rule)


def _binary(p: np.ndarray) -> Forensic:
    rule = (
        f"constant if one distinct value; near_binary if at most two distinct values, or >= "
        f"{BINARY_SHARE:.0%} of values within {BINARY_EPS} of 0 or 1 with >= "
        f"{BINARY_END_SHARE:.0%} at each end"
    )
    if len(p) == 0:
        return Forensic("na", {}, rule)
    share, ends, distinct = binary_share(p)
    stats = {
        "binary_share": _rounded(share),
        "smaller_end_share": _rounded(ends),
        "distinct_values": float(distinct),
    }
    if distinct <= 1:
        return Forensic("constant", stats, rule)
    if distinct <= 2 or (share >= BINARY_SHARE and ends >= BINARY_END_SHARE):
        return Forensic("near_binary", stats, rule)
    return Forensic("no", stats, rule)


def _survival_rows(curves: np.ndarray) -> Forensic:
    rule = "yes if every row (patient) has the same survival curve"
    share, distinct = identical_rows(curves)
    if distinct == 0:
        return Forensic("na", {}, rule)
    stats = {"modal_row_share": _rounded(share), "distinct_rows": float(distinct)}
    return Forensic("yes" if distinct == 1 and curves.shape[0] > 1 else "no", stats, rule)


def submission_forensics(
    kind: str,
    probabilities=None,
    curves=None,
    prevalence: float | None = None,
) -> dict[str, Forensic]:
    """All four forensics of one submitted file.

    Parameters
    ----------
    kind : {"classification", "sequential", "survival"}
    probabilities : array-like of float, optional
        The probability column (binary kinds).
    curves : 2-D array-like, optional
        Survival probabilities, one row per patient (survival).
    prevalence : float, optional
        Training event rate (binary kinds); ``None``: ``mean_risk_far_from_prevalence`` is
        ``na``.

    Returns
    -------
    dict
        ``ranks_as_probabilities``, ``mean_risk_far_from_prevalence``, ``constant_or_binary``,
        ``identical_survival_rows`` -> :class:`Forensic` (``na`` where the kind does not apply).

    See Also
    --------
    rank_lattice, ks_uniform, log_odds_gap, binary_share, identical_rows

    Examples
    --------
    >>> import numpy as np
    >>> p = np.round(np.argsort(np.argsort(np.sin(np.arange(300)))) / 299, 6)
    >>> out = submission_forensics("classification", probabilities=p, prevalence=0.1)
    >>> out["ranks_as_probabilities"].value, out["mean_risk_far_from_prevalence"].value
    ('yes', 'yes')
    >>> out["identical_survival_rows"].value
    'na'
    """
    na = Forensic("na")
    if kind == "survival":
        m = np.asarray(curves if curves is not None else np.empty((0, 0)), dtype=float)
        return {
            "ranks_as_probabilities": na,
            "mean_risk_far_from_prevalence": na,
            "constant_or_binary": na,
            "identical_survival_rows": _survival_rows(m) if m.ndim == 2 else na,
        }
    p = _as_float(probabilities if probabilities is not None else [])
    return {
        "ranks_as_probabilities": _ranks(p),
        "mean_risk_far_from_prevalence": _prevalence(p, prevalence),
        "constant_or_binary": _binary(p),
        "identical_survival_rows": na,
    }
