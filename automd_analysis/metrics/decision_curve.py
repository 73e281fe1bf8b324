"""Decision-curve analysis: net benefit of treating patients whose predicted risk reaches a threshold."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from automd_analysis.metrics._docstrings import BINARY_INPUTS, PATIENT_WEIGHTS, fill_doc
from automd_analysis.metrics._validation import (
    as_finite_1d,
    check_binary_inputs,
)
from automd_analysis.metrics._weights import as_weight_vector

__all__ = ["DecisionCurve", "net_benefit"]


@dataclass(frozen=True)
class DecisionCurve:
    """Net benefit at each threshold, with the treat-all and treat-none references.

    Attributes
    ----------
    threshold : numpy.ndarray
        Threshold probabilities t, as given.
    net_benefit : numpy.ndarray
        TP(t)/N - FP(t)/N * t / (1 - t) of the model.
    treat_all : numpy.ndarray
        pi - (1 - pi) * t / (1 - t) with pi the event rate (treat everyone).
    treat_none : numpy.ndarray
        0 everywhere (treat no one).
    true_positive_rate, false_positive_rate : numpy.ndarray
        TP(t)/N and FP(t)/N (shares of *all* patients, not of the positives/negatives).
    prevalence : float
        pi.
    n : int
        Patients (the total weight with weights).
    """

    threshold: np.ndarray
    net_benefit: np.ndarray
    treat_all: np.ndarray
    treat_none: np.ndarray
    true_positive_rate: np.ndarray
    false_positive_rate: np.ndarray
    prevalence: float
    n: int

    def as_dict(self) -> dict[str, np.ndarray]:
        """Per-threshold columns as a dict of arrays (e.g. for ``pandas.DataFrame``)."""
        return {
            "threshold": self.threshold,
            "net_benefit": self.net_benefit,
            "treat_all": self.treat_all,
            "treat_none": self.treat_none,
            "true_positive_rate": self.true_positive_rate,
            "false_positive_rate": self.false_positive_rate,
        }


@fill_doc(binary_inputs=BINARY_INPUTS, patient_weights=PATIENT_WEIGHTS)
def net_benefit(y_true, y_prob, thresholds, *, weights=None) -> DecisionCurve:
    """Net benefit of a risk model across threshold probabilities (decision-curve analysis).

    A patient is treated when p_i >= t (the ``dcurves`` / Vickers convention). With N patients,
    TP(t) treated patients who have the event and FP(t) treated patients who do not:

    .. math::

        \\mathrm{NB}(t) = \\frac{\\mathrm{TP}(t)}{N} - \\frac{\\mathrm{FP}(t)}{N}\\,\\frac{t}{1 - t},
        \\qquad
        \\mathrm{NB}_{\\text{all}}(t) = \\pi - (1 - \\pi)\\frac{t}{1 - t},
        \\qquad \\mathrm{NB}_{\\text{none}} = 0

    (Vickers and Elkin 2006). The odds t/(1-t) is the harm-to-benefit ratio implied by choosing t.
    For sequential tasks the units are patient-hours. With integer weights N, TP(t), FP(t) and pi
    count copies (the curve of the repeated rows).

    Parameters
    ----------
    {binary_inputs}
    thresholds : array-like of shape (k,)
        Threshold probabilities in [0, 1) (t = 1 has infinite odds), any order.
    {patient_weights}

    Returns
    -------
    DecisionCurve

    Raises
    ------
    ValueError
        Malformed ``y_true``/``y_prob`` (as :func:`~automd_analysis.metrics.brier`), a threshold
        NaN/inf or outside [0, 1), or no threshold; bad weights.

    See Also
    --------
    calibration_intercept_slope : miscalibration lowers net benefit at thresholds where the risk is
        mis-stated.

    References
    ----------
    .. [1] Vickers AJ, Elkin EB (2006). Decision curve analysis: a novel method for evaluating
       prediction models. Medical Decision Making 26:565-574.
    .. [2] Vickers AJ, van Calster B, Steyerberg EW (2019). A simple, step-by-step guide to
       interpreting decision curve analysis. Diagnostic and Prognostic Research 3:18.

    Examples
    --------
    >>> from automd_analysis.metrics import net_benefit
    >>> dc = net_benefit([1, 0, 1, 0], [0.8, 0.6, 0.4, 0.1], [0.2, 0.5])
    >>> dc.net_benefit.tolist(), dc.treat_all.tolist()
    ([0.4375, 0.0], [0.375, 0.0])
    """
    y, p, n = check_binary_inputs(y_true, y_prob)
    t = as_finite_1d("thresholds", thresholds)
    bad = (t < 0.0) | (t >= 1.0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"thresholds must be in [0, 1) (t = 1 has infinite odds); thresholds[{i}] is "
            f"{t[i].item()!r}."
        )
    w = as_weight_vector(weights, n)
    w = np.ones(n, dtype=np.int64) if w is None else w.astype(np.int64)
    order = np.argsort(p, kind="stable")
    above = np.r_[0, np.cumsum(w[order])]  # weight of the patients below each sorted position
    above_pos = np.r_[0, np.cumsum((w * y)[order])]
    k = np.searchsorted(p[order], t, side="left")  # patients with p >= t are treated
    total, positives = int(above[-1]), int(above_pos[-1])
    treated = total - above[k]
    tp = positives - above_pos[k]
    fp = treated - tp
    odds = t / (1.0 - t)
    tpr = tp / total
    fpr = fp / total
    prevalence = float(positives / total)
    return DecisionCurve(
        threshold=t,
        net_benefit=tpr - fpr * odds,
        treat_all=prevalence - (1.0 - prevalence) * odds,
        treat_none=np.zeros_like(t),
        true_positive_rate=tpr,
        false_positive_rate=fpr,
        prevalence=prevalence,
        n=total,
    )
