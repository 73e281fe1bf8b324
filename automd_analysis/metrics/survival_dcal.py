"""Distribution calibration (D-calibration) of survival curves (Haider et al. 2020)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from automd_analysis.metrics._docstrings import PATIENT_WEIGHTS, SURVIVAL_INPUTS, fill_doc
from automd_analysis.metrics._validation import (
    check_survival_inputs,
)
from automd_analysis.metrics._weights import as_weight_vector
from automd_analysis.metrics.survival import grid_index_post

__all__ = ["INTERPOLATIONS", "DCalibrationResult", "d_calibration", "survival_at_observed_time"]


@dataclass(frozen=True)
class DCalibrationResult:
    """D-calibration histogram and its chi-squared test against the uniform distribution.

    Attributes
    ----------
    statistic : float
        Pearson chi-squared statistic sum_b (h_b - N/B)^2 / (N/B).
    p_value : float
        Upper tail of chi-squared with B - 1 degrees of freedom.
    divergence : float
        statistic / N = B sum_b (h_b/N - 1/B)^2, a sample-size-free distance from uniform (used to
        compare models across test sets of different size).
    histogram : numpy.ndarray
        h_b, bin 1 = lowest survival probability [0, 1/B); sums to N.
    lo, hi : numpy.ndarray
        Bin edges ``linspace(0, 1, B + 1)``.
    n, n_events, n_bins : int
    """

    statistic: float
    p_value: float
    divergence: float
    histogram: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    n: int
    n_events: int
    n_bins: int

    def __float__(self) -> float:
        return float(self.statistic)


#: How :func:`d_calibration` reads a curve between grid times.
INTERPOLATIONS = ("linear", "step")


def survival_at_observed_time(durations, surv, time_grid, interpolation: str = "linear"):
    """S_i(T_i): each patient's predicted survival read at their own follow-up time.

    ``"step"``: the right-continuous step (the value at the last grid time <= T_i, as
    :func:`~automd_analysis.metrics.grid_index_post` reads curves for the concordance).
    ``"linear"``: linear interpolation between the two grid times around T_i. Either way a time
    before the first grid time reads the first value and one after the last grid time reads the last
    value (nothing is extrapolated). Inputs are assumed validated.

    Linear: S(T) = S(g_k) + (T - g_k) / (g_{k+1} - g_k) * (S(g_{k+1}) - S(g_k)) for g_k <= T < g_{k+1}.

    Parameters
    ----------
    durations : numpy.ndarray of shape (n,)
        Follow-up times T_i.
    surv : numpy.ndarray of shape (n, G)
        Survival curves on ``time_grid``.
    time_grid : numpy.ndarray of shape (G,)
        Strictly increasing grid times.
    interpolation : {"linear", "step"}, default "linear"

    Returns
    -------
    numpy.ndarray of shape (n,)
        S_i(T_i).

    See Also
    --------
    d_calibration : uses these values.
    automd_analysis.metrics.grid_index_post : the step rule.

    References
    ----------
    .. [1] Haider H, Hoehn B, Davis S, Greiner R (2020). Effective ways to build and evaluate
       individual survival distributions. JMLR 21(85):1-63.

    Examples
    --------
    >>> import numpy as np
    >>> grid = np.array([0.0, 10.0, 20.0])
    >>> surv = np.array([[1.0, 0.8, 0.4]])
    >>> survival_at_observed_time(np.array([15.0]), surv, grid).tolist()
    [0.6000000000000001]
    >>> survival_at_observed_time(np.array([15.0]), surv, grid, "step").tolist()
    [0.8]
    """
    idx = grid_index_post(time_grid, durations)
    rows = np.arange(len(durations))
    value = surv[rows, idx]
    if interpolation == "step" or len(time_grid) == 1:
        return value
    nxt = np.minimum(idx + 1, len(time_grid) - 1)
    width = time_grid[nxt] - time_grid[idx]
    inside = (nxt > idx) & (durations > time_grid[idx])
    frac = np.zeros(len(durations))
    frac[inside] = (durations[inside] - time_grid[idx[inside]]) / width[inside]
    return value + frac * (surv[rows, nxt] - value)


@fill_doc(survival_inputs=SURVIVAL_INPUTS, patient_weights=PATIENT_WEIGHTS)
def d_calibration(
    durations,
    events,
    surv,
    time_grid,
    n_bins: int = 10,
    *,
    interpolation: str = "linear",
    weights=None,
) -> DCalibrationResult:
    """D-calibration: is the predicted survival at the observed time uniform on [0, 1]?

    For a calibrated model S_i(T_i) ~ U(0, 1) (probability integral transform). With B bins
    [k/B, (k+1)/B) (the last one closed, so S = 1 is in the top bin):

    - a patient with an event adds 1 to the bin containing S_i(T_i);
    - a censored patient with s = S_i(C_i) > 0 in bin k adds (s - k/B)/s to bin k and 1/(B s) to every
      lower bin (their event lies later, so its survival value is uniform on [0, s)); with s = 0 it
      adds 1 to the lowest bin (the limit as s -> 0).

    .. math::

        X^2 = \\sum_{b=1}^B \\frac{(h_b - N/B)^2}{N/B}, \\qquad p = P(\\chi^2_{B-1} > X^2)

    (Haider et al. 2020). S_i(T_i) is read by linear interpolation between the grid times around T_i
    (:func:`survival_at_observed_time`; the last value is carried forward after the last grid time).
    Reading the curve as a right-continuous step (``interpolation="step"``, the concordance's rule)
    overstates every S_i(T_i) by up to one grid interval's drop, which a test of uniformity detects on
    large test sets even for a perfect model. SurvivalEVAL also interpolates linearly but extrapolates
    beyond the last grid time along the line through (0, 1); bin edges differ in the last bit (see
    docs/calibration.md). With integer weights each patient adds its contributions ``weights[i]``
    times and N is the total weight (the histogram of the repeated rows).

    Parameters
    ----------
    {survival_inputs}
    n_bins : int, default 10
        B >= 2.
    interpolation : {"linear", "step"}, default "linear"
        How S_i(T_i) is read between grid times.
    {patient_weights}

    Returns
    -------
    DCalibrationResult
        Defined for any non-empty input, including all-censored test sets.

    Raises
    ------
    ValueError
        Shape mismatch, NaN/inf/negative durations, events other than 0/1, a non-increasing grid,
        survival values outside [0, 1], ``n_bins`` not an integer >= 2, unknown ``interpolation``,
        bad weights.

    See Also
    --------
    automd_analysis.metrics.survival_ece : Kaplan-Meier ECE at three times (the paper's).
    survival_calibration_at : calibration at one horizon.

    References
    ----------
    .. [1] Haider H, Hoehn B, Davis S, Greiner R (2020). Effective ways to build and evaluate
       individual survival distributions. Journal of Machine Learning Research 21(85):1-63.
    .. [2] Qi S-A, Kumar N, Farrokh M, et al. (2024). SurvivalEVAL: a comprehensive open-source
       Python package for evaluating individual survival distributions. AAAI Fall Symposium Series.

    Examples
    --------
    >>> import numpy as np
    >>> from automd_analysis.metrics import d_calibration
    >>> grid = np.array([0.0, 1.0, 2.0, 3.0])
    >>> surv = np.array([[1.0, 0.9, 0.5, 0.2]] * 4)
    >>> res = d_calibration([1.5, 2.5, 3.5, 1.0], [1, 1, 1, 0], surv, grid, n_bins=4)
    >>> np.round(res.histogram, 4).tolist()
    [1.2778, 1.2778, 1.2778, 0.1667]
    >>> round(res.statistic, 4), round(res.p_value, 4)
    (0.9259, 0.8192)
    """
    t, e, s, grid = check_survival_inputs(durations, events, surv, time_grid)
    n = len(t)
    if isinstance(n_bins, bool) or int(n_bins) != n_bins or n_bins < 2:
        raise ValueError(f"n_bins must be an integer >= 2, got {n_bins!r}.")
    b = int(n_bins)
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"interpolation must be one of {INTERPOLATIONS}, got {interpolation!r}.")
    w = as_weight_vector(weights, n, unit="patient")
    w = np.ones(n) if w is None else w.astype(np.float64)
    from scipy.stats import chi2

    s_t = survival_at_observed_time(t, s, grid, interpolation)
    edges = np.linspace(0.0, 1.0, b + 1)
    k = np.clip(np.searchsorted(edges, s_t, side="right") - 1, 0, b - 1)
    event = e == 1
    hist = np.bincount(k[event], weights=w[event], minlength=b).astype(np.float64)
    cens_s, cens_k, cens_w = s_t[~event], k[~event], w[~event]
    zero = cens_s == 0.0
    hist[0] += float(cens_w[zero].sum())
    cs, ck, cw = cens_s[~zero], cens_k[~zero], cens_w[~zero]
    if cs.size:
        hist += np.bincount(ck, weights=cw * ((cs - edges[ck]) / cs), minlength=b)
        up = ck > 0  # only patients above the lowest bin spread mass downwards (and s >= 1/B there)
        spread = np.bincount(ck[up], weights=cw[up] / (b * cs[up]), minlength=b)
        # bin j receives the spread of every censored patient whose own bin is above j
        above = np.cumsum(spread[::-1])[::-1]
        hist[:-1] += above[1:]
    n = int(w.sum())
    expected = n / b
    statistic = float(np.sum((hist - expected) ** 2) / expected)
    return DCalibrationResult(
        statistic=statistic,
        p_value=float(chi2.sf(statistic, b - 1)),
        divergence=statistic / n,
        histogram=hist,
        lo=edges[:-1],
        hi=edges[1:],
        n=n,
        n_events=int(w[event].sum()),
        n_bins=b,
    )
