"""Speed of the calibration measures of one submission, against the reference computations.

Run: ``python bench/bench_calibration_measures.py [--repeat 5] [--quick]``. Prints a Markdown table
(copied into docs/performance.md, section "Calibration measures"):

- all measures of one survival submission (``scoring.calibration_measures``: KM-ECE at 10 and 15
  groups, D-calibration, calibration at the median-event horizon with the Cox slope, pseudo-value
  ICI) at n = 49,291 patients on a 101-point grid (SEER-test-sized); target <= 1 s;
- all measures of one sequential submission (10/15-bin and equal-mass ECE, intercept and slope with
  patient-clustered SEs, ICI, Spiegelhalter, Brier decomposition, net benefit at 10 thresholds) at
  1.5 M patient-hours; target <= 2 s;
- the expensive pieces next to the reference implementation, timed in the same run:
  calibration intercept + slope vs two statsmodels GLM fits (cluster-robust for the hourly case),
  the Cox slope vs statsmodels PHReg (Breslow), the ICI smoother vs statsmodels ``lowess`` (local
  linear, ``it=0``, ``delta`` = 1 % of the range - without ``delta`` lowess is quadratic in n), the
  pseudo-observations vs leave-one-out lifelines fits (at n = 500: O(n^2)).

Values are compared where the reference computes the same quantity (max |diff| printed). Times are
medians of ``--repeat`` runs after a warm-up call; synthetic data, fixed seeds.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
from _timing import timed as _median_timed
from bench_metrics import sepsis_case, survival_case

from automd_analysis import metrics
from automd_analysis.metrics import UndefinedMetricWarning
from automd_analysis.scoring.calibration_measures import calibration_measures, survival_horizon
from automd_analysis.submissions import AlignedPredictions
from automd_analysis.tasks import TaskLabels

_LAST_MIN = [float("nan")]


def timed(fn, repeat):
    """(median wall seconds, last result), remembering the fastest run (printed in parentheses:
    on a shared machine the minimum is the best estimate of the uncontended cost)."""
    times = []

    def once():
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
        return out

    median, result = _median_timed(once, repeat)
    _LAST_MIN[0] = min(times)
    return median, result


SEER_N = 49_291
HOURLY_ROWS = 1_500_000


def hourly_case(n_rows: int, seed: int = 0):
    """Patient-hours of the utility benchmark with a probability per hour (miscalibrated)."""
    ids, labels, _ = sepsis_case(n_rows, seed)
    rng = np.random.default_rng(seed + 1)
    lp = -3.0 + 2.5 * labels + rng.normal(0, 1.0, n_rows)
    prob = 1.0 / (1.0 + np.exp(-lp))
    return ids, labels, prob


def _row(name, size, ours, ref_name="-", ref=None, diff="-", ours_min=None):
    ratio = f"{ref / ours:.1f}x" if ref is not None else "-"
    ref_s = f"{ref:.4f}" if ref is not None else "-"
    mine = f"{ours:.4f}" + (f" ({ours_min:.4f})" if ours_min is not None else "")
    return f"| {name} | {size} | {mine} | {ref_name} | {ref_s} | {ratio} | {diff} |"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    args = parser.parse_args()
    repeat = 1 if args.quick else args.repeat
    n_surv = 5_000 if args.quick else SEER_N
    n_rows = 100_000 if args.quick else HOURLY_ROWS
    warnings.simplefilter("ignore", UndefinedMetricWarning)
    import statsmodels.api as sm
    from lifelines import KaplanMeierFitter
    from statsmodels.duration.hazard_regression import PHReg
    from statsmodels.nonparametric.smoothers_lowess import lowess

    rows = [
        f"load average before the run: {os.getloadavg()[0]:.2f}",
        "",
        "| measure | size | project, median (min) s | reference | reference (s) | speed-up | values |",
        "|---|---|---|---|---|---|---|",
    ]

    # --- survival ----------------------------------------------------------------------------
    t, e, surv, grid = survival_case(n_surv, seed=0)
    labels = TaskLabels(
        ids=pd.DataFrame({"id": np.arange(n_surv).astype(str)}), duration=t, event=e
    )
    preds = AlignedPredictions(surv=surv, time_grid=grid)
    size = f"n={n_surv:,}, G={len(grid)}"
    calibration_measures("survival", labels, preds)
    sec, _ = timed(lambda: calibration_measures("survival", labels, preds), repeat)
    rows.append(_row("all survival measures (target <= 1 s)", size, sec, ours_min=_LAST_MIN[0]))
    for name, fn in (
        (
            "survival ECE, 10 + 15 groups",
            lambda: (
                metrics.survival_ece(t, e, surv, grid),
                metrics.survival_ece(t, e, surv, grid, n_groups=15),
            ),
        ),
        ("D-calibration", lambda: metrics.d_calibration(t, e, surv, grid)),
    ):
        sec, _ = timed(fn, repeat)
        rows.append(_row(name, size, sec, ours_min=_LAST_MIN[0]))
    h = survival_horizon(t, e, grid)
    g = int(np.searchsorted(grid, h, side="right") - 1)
    s_h = surv[:, g]
    ours, res = timed(lambda: metrics.cox_calibration_slope(t, e, s_h, h), repeat)
    x = np.log(-np.log(s_h))
    status = ((e == 1) & (t <= h)).astype(int)
    ref, fit = timed(
        lambda: PHReg(np.minimum(t, h), x[:, None], status=status, ties="breslow").fit(),
        max(1, repeat // 2),
    )
    rows.append(
        _row(
            "Cox calibration slope at h",
            size,
            ours,
            "statsmodels PHReg (Breslow)",
            ref,
            f"{abs(res[0] - fit.params[0]):.1e}",
        )
    )
    ours, res = timed(lambda: metrics.survival_ici_at(t, e, surv, grid, h), repeat)
    rows.append(_row("survival ICI at h (pseudo-values + loess)", size, ours))
    n_small = 500
    ts, es = t[:n_small], e[:n_small]

    def loo():
        km = [
            KaplanMeierFitter().fit(np.delete(ts, i), np.delete(es, i)).predict(h)
            for i in range(n_small)
        ]
        full = KaplanMeierFitter().fit(ts, es).predict(h)
        return n_small * (1 - full) - (n_small - 1) * (1 - np.asarray(km))

    ours, res = timed(lambda: metrics.km_pseudo_observations(ts, es, h), repeat)
    ref, refv = timed(loo, 1)
    rows.append(
        _row(
            "KM pseudo-observations",
            f"n={n_small:,}",
            ours,
            "lifelines leave-one-out",
            ref,
            f"{np.max(np.abs(res - refv)):.1e}",
        )
    )

    # --- hourly ------------------------------------------------------------------------------
    ids, y, p = hourly_case(n_rows, seed=0)
    labels = TaskLabels(
        ids=pd.DataFrame({"patient": ids.astype(str), "hour": np.zeros(n_rows, int).astype(str)}),
        label=y,
    )
    preds = AlignedPredictions(probability=p)
    size = f"{n_rows:,} patient-hours"
    calibration_measures("sequential", labels, preds)
    sec, _ = timed(lambda: calibration_measures("sequential", labels, preds), repeat)
    rows.append(_row("all sequential measures (target <= 2 s)", size, sec, ours_min=_LAST_MIN[0]))
    ours, res = timed(lambda: metrics.calibration_intercept_slope(y, p, groups=ids), repeat)
    lp = np.log(p) - np.log1p(-p)

    def glm():
        fam = sm.families.Binomial()
        kw = {"cov_type": "cluster", "cov_kwds": {"groups": ids}}
        a = sm.GLM(y, np.ones((len(y), 1)), family=fam, offset=lp).fit(**kw)
        b = sm.GLM(y, sm.add_constant(lp), family=fam).fit(**kw)
        return a, b

    ref, (a, b) = timed(glm, max(1, repeat // 2))
    diff = max(
        abs(res.intercept - a.params[0]), abs(res.slope - b.params[1]), abs(res.slope_se - b.bse[1])
    )
    rows.append(
        _row(
            "intercept + slope, clustered SEs",
            size,
            ours,
            "2 x statsmodels GLM (cluster)",
            ref,
            f"{diff:.1e}",
        )
    )
    ours, res = timed(lambda: metrics.ici(y, p), repeat)
    delta = 0.01 * (p.max() - p.min())
    ref, lw = timed(
        lambda: lowess(y.astype(float), p, frac=0.75, it=0, delta=delta, return_sorted=False), 1
    )
    rows.append(
        _row(
            "ICI (loess, local quadratic)",
            size,
            ours,
            "statsmodels lowess (local linear, delta 1 %)",
            ref,
            f"ICI {res.ici:.4f} vs {np.mean(np.abs(lw - p)):.4f}",
        )
    )
    for name, fn in (
        (
            "ECE 10 + 15 bins + equal-mass",
            lambda: (
                metrics.ece(y, p, 10),
                metrics.ece(y, p, 15),
                metrics.ece_equal_mass(y, p, 10),
            ),
        ),
        ("Brier decomposition", lambda: metrics.brier_decomposition(y, p)),
        (
            "net benefit, 10 thresholds",
            lambda: metrics.net_benefit(y, p, np.linspace(0.01, 0.5, 10)),
        ),
        ("Spiegelhalter z", lambda: metrics.spiegelhalter_z(y, p)),
    ):
        sec, _ = timed(fn, repeat)
        rows.append(_row(name, size, sec, ours_min=_LAST_MIN[0]))
    print("\n".join(rows))


if __name__ == "__main__":
    main()
