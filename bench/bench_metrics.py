"""Speed and exactness of the metric core against the references it reproduces.

Run: ``python bench/bench_metrics.py [--repeat 5] [--quick]`` (or ``make bench``). Prints a Markdown
table (copied into docs/performance.md, section "Metrics"):

- C^td (``adj_antolini`` and ``antolini``) vs pycox 0.3.0 ``EvalSurv.concordance_td`` at
  n = 1,775 / 10,000 / 49,291 patients on a 101-point grid (SUPPORT-, 10k- and SEER-test-sized);
- the PhysioNet 2019 utility vs a per-row Python loop written here from the official definition, at
  1.5 M patient-hours;
- AUROC vs ``sklearn.metrics.roc_auc_score`` and the binary ECE at the same 1.5 M rows;
- survival ECE and the IPCW Brier curve + IBS at n = 49,291 (no reference timing: pycox's
  ``censor_surv='km'`` path runs out of memory at that size);
- the numba JIT cost of C^td: cold compile (empty cache) and loading from the on-disk cache, each in a
  fresh process.

Every comparison also checks the values: C^td must be identical to pycox (== on floats), the utility
equal to the loop up to float rounding of the loop (max |diff| printed), AUROC within 1e-12 of sklearn.
Times are medians of ``--repeat`` runs after a warm-up call (references: fewer runs when slow).
Synthetic data, fixed seeds.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
from _timing import timed

from automd_analysis.metrics import (
    auroc,
    concordance_td,
    ece,
    integrated_brier_score,
    sepsis_utility,
    survival_ece,
    survival_time_grid,
)

CTD_SIZES = (1_775, 10_000, 49_291)
UTILITY_ROWS = 1_500_000


def survival_case(n: int, seed: int = 0):
    """Cox-like synthetic cohort with continuous times (so the App. A.1 grid has 101 points)."""
    rng = np.random.default_rng(seed)
    risk = rng.normal(size=n)
    t_event = rng.exponential(60.0 * np.exp(-0.7 * risk))
    t_censor = rng.uniform(0.0, 150.0, n)
    durations = np.minimum(t_event, t_censor)
    events = (t_event <= t_censor).astype(np.int64)
    grid = survival_time_grid(durations, events)
    surv = np.exp(-np.outer(np.exp(0.7 * risk), grid) / 60.0)
    return durations, events, surv, grid


def pycox_ctd(durations, events, surv, grid, method):
    import pandas as pd
    from pycox.evaluation import EvalSurv

    frame = pd.DataFrame(surv.T, index=grid)
    return EvalSurv(frame, durations, events, steps="post").concordance_td(method)


def sepsis_case(n_rows: int, seed: int = 0):
    """Contiguous patients of 10-65 h, ~8 % septic, noisy alarms around onset."""
    rng = np.random.default_rng(seed)
    lengths = []
    while sum(lengths) < n_rows:
        lengths.append(int(rng.integers(10, 66)))
    lengths[-1] -= sum(lengths) - n_rows
    ids, labels, preds = [], [], []
    for pid, length in enumerate(lengths):
        lab = np.zeros(length, dtype=np.int8)
        if rng.random() < 0.08:
            lab[int(rng.integers(0, length)) :] = 1
        p_alarm = np.where(lab == 1, 0.6, 0.04)
        ids.append(np.full(length, pid, dtype=np.int64))
        labels.append(lab)
        preds.append((rng.random(length) < p_alarm).astype(np.int8))
    return np.concatenate(ids), np.concatenate(labels), np.concatenate(preds)


def hour_utility(t, t_sepsis, septic, predicted):
    """Utility of one patient-hour, official piecewise-linear form (the table in the module
    docstring of ``automd_analysis.metrics.utility``)."""
    if not septic:
        return -0.05 if predicted else 0.0
    d = t - t_sepsis
    if predicted:
        if d <= -6:
            return max((d + 12) / 6, -0.05)
        return (3 - d) / 9 if d <= 3 else 0.0
    return -2 * (d + 6) / 9 if -6 < d <= 3 else 0.0


def patient_utility(labels, predictions):
    """Sum of hour utilities of one patient; onset = first label-1 row + 6."""
    septic = 1 in labels
    t_sepsis = labels.index(1) + 6 if septic else 0
    return sum(hour_utility(t, t_sepsis, septic, predictions[t] == 1) for t in range(len(labels)))


def loop_utility(patient_ids, labels, predictions):
    """Per-row loop with the official scorer's structure: per patient, the utility of the observed,
    best and all-zero predictions, each a loop over the patient's hours; cohort sums; normalise."""
    ids, lab, pred = patient_ids.tolist(), labels.tolist(), predictions.tolist()
    u_obs = u_best = u_none = 0.0
    any_septic = False
    start = 0
    while start < len(ids):
        end = start
        while end < len(ids) and ids[end] == ids[start]:
            end += 1
        p_lab, p_pred = lab[start:end], pred[start:end]
        septic = 1 in p_lab
        any_septic |= septic
        onset = p_lab.index(1) + 6 if septic else None
        best = [int(septic and -12 <= t - onset <= 3) for t in range(end - start)]
        u_obs += patient_utility(p_lab, p_pred)
        u_best += patient_utility(p_lab, best)
        u_none += patient_utility(p_lab, [0] * (end - start))
        start = end
    return (u_obs - u_none) / (u_best - u_none) if any_septic else float("nan")


JIT_SNIPPET = """
import time, numpy as np
from automd_analysis.metrics import concordance_td, sepsis_utility

def first_call_overhead(fn):
    t0 = time.perf_counter(); fn(); t1 = time.perf_counter(); fn(); t2 = time.perf_counter()
    return (t1 - t0) - (t2 - t1)

rng = np.random.default_rng(0)
for label, n in (("ctd_serial", 50), ("ctd_threaded", 50_000)):
    t = rng.exponential(1.0, n); e = (rng.random(n) < 0.5).astype(int)
    grid = np.linspace(0, 3, 101); s = np.exp(-np.outer(rng.random(n), grid))
    print(label, first_call_overhead(lambda: concordance_td(t, e, s, grid)))
ids = np.repeat(np.arange(10), 5); lab = np.tile([0, 0, 0, 1, 1], 10)
print("utility", first_call_overhead(lambda: sepsis_utility(ids, lab, lab)))
"""

JIT_LABELS = {
    "ctd_serial": "C^td serial kernels",
    "ctd_threaded": "C^td threaded kernels",
    "utility": "utility kernel",
}


def jit_costs() -> list[tuple[str, str, str]]:
    """First-call overhead per kernel in fresh processes: empty numba cache, then the warm cache."""
    measured: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        for _ in ("compile", "load"):
            res = subprocess.run(
                [sys.executable, "-c", JIT_SNIPPET],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            for line in res.stdout.strip().splitlines():
                key, value = line.split()
                measured.setdefault(key, []).append(f"{float(value):.2f}")
    return [(JIT_LABELS[k], *v) for k, v in measured.items()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (smoke test)")
    args = parser.parse_args(argv)
    sizes = (1_775, 5_000) if args.quick else CTD_SIZES
    n_rows = 150_000 if args.quick else UTILITY_ROWS
    rows = []
    ok = True

    try:
        import pycox  # noqa: F401

        have_pycox = True
    except ImportError:
        have_pycox = False
        print("pycox is not installed: C^td reference timings skipped", file=sys.stderr)

    warm = survival_case(200, seed=1)
    concordance_td(*warm)  # JIT / cache load outside the timings
    if have_pycox:
        for method in ("adj_antolini", "antolini"):
            pycox_ctd(*warm, method)

    for n in sizes:
        case = survival_case(n, seed=n)
        assert len(case[3]) == 101
        for method in ("adj_antolini", "antolini"):
            ours_t, ours = timed(lambda c=case, m=method: concordance_td(*c, m), args.repeat)
            if have_pycox:
                reps = 1 if n > 20_000 else min(3, args.repeat)
                ref_t, ref = timed(lambda c=case, m=method: pycox_ctd(*c, m), reps)
                same = ours == ref
                ok &= same
                rows.append(
                    (f"C^td {method}", f"n={n:,}, G=101", ours_t, "pycox 0.3.0", ref_t,
                     "identical" if same else f"DIFF {abs(ours - ref):.3g}")
                )  # fmt: skip
            else:
                rows.append((f"C^td {method}", f"n={n:,}, G=101", ours_t, "-", float("nan"), "-"))

    case = survival_case(sizes[-1], seed=sizes[-1])
    sece_t, _ = timed(lambda: survival_ece(*case), args.repeat)
    rows.append(
        ("survival ECE (App. F)", f"n={sizes[-1]:,}, G=101", sece_t, "-", float("nan"), "-")
    )
    ibs_t, _ = timed(lambda: integrated_brier_score(*case), args.repeat)
    rows.append(
        (
            "IPCW Brier curve + IBS (101 times)",
            f"n={sizes[-1]:,}, G=101",
            ibs_t,
            "-",
            float("nan"),
            "-",
        )
    )

    ids, labels, preds = sepsis_case(n_rows)
    ours_t, ours = timed(lambda: sepsis_utility(ids, labels, preds), args.repeat)
    loop_t, ref = timed(lambda: loop_utility(ids, labels, preds), 1)
    diff = abs(ours - ref)
    ok &= diff <= 1e-12
    rows.append(
        ("PhysioNet 2019 utility", f"{n_rows:,} patient-hours", ours_t, "per-row Python loop",
         loop_t, f"max |diff| {diff:.1e}")
    )  # fmt: skip

    from sklearn.metrics import roc_auc_score

    prob = np.clip(preds * 0.5 + np.random.default_rng(1).random(n_rows) * 0.5, 0, 1)
    ours_t, ours = timed(lambda: auroc(labels, prob), args.repeat)
    ref_t, ref = timed(lambda: roc_auc_score(labels, prob), args.repeat)
    ok &= abs(ours - ref) <= 1e-12
    rows.append(
        ("AUROC", f"{n_rows:,} rows", ours_t, "sklearn roc_auc_score", ref_t,
         f"max |diff| {abs(ours - ref):.1e}")
    )  # fmt: skip
    ece_t, _ = timed(lambda: ece(labels, prob), args.repeat)
    rows.append(("ECE (10 bins)", f"{n_rows:,} rows", ece_t, "-", float("nan"), "-"))

    print("| metric | size | project (s) | reference | reference (s) | speed-up | values |")
    print("|---|---|---|---|---|---|---|")
    for metric, size, ours_s, ref_name, ref_s, values in rows:
        speed = f"{ref_s / ours_s:,.0f}x" if np.isfinite(ref_s) else "-"
        ref_txt = f"{ref_s:.4f}" if np.isfinite(ref_s) else "-"
        print(f"| {metric} | {size} | {ours_s:.4f} | {ref_name} | {ref_txt} | {speed} | {values} |")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        costs = jit_costs()
    print(
        "\n| numba first-call overhead (fresh process) | compile, empty cache (s) | load, warm cache (s) |"
    )
    print("|---|---|---|")
    for label, compile_s, load_s in costs:
        print(f"| {label} | {compile_s} | {load_s} |")
    if not ok:
        print("VALUE MISMATCH against a reference", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
