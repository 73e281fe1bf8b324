"""The weighted metric kernels against the implementation they replaced (commit 2ca8809), in one run.

Run: ``python bench/bench_kernels.py [--repeat 7] [--quick]``. Prints two Markdown tables (copied
into docs/performance.md, section "Weighted kernels"):

1. **Point value** (one call, no weights) of C^td (adj. Antolini) at n = 1,775 and 49,291 on a
   101-point grid, AUROC, ECE and min(Se, PPV) at n = 50,000, the survival ECE at n = 1,775 and
   49,291, and the PhysioNet 2019 utility on 1.5 M patient-hours: today's function against the
   same function of 2ca8809 (target: within 1.25x).
2. **1,000 bootstrap replicates**: today's kernel called with the weight matrix of
   ``bootstrap_weights`` (its generation included) against 2ca8809's ``*_bootstrap`` functions
   (their index generation included) on the same resamples (target: no slower). The survival ECE at
   n = 49,291 is timed on 200 replicates on both sides (2ca8809 takes about 8 s for 1,000).

2ca8809's ``automd_analysis/metrics`` is extracted with ``git archive`` and imported under another
package name (``bench/_baseline.py``), so both run in this process on the same data, interleaved
(old, new, old, new, ...): each figure is the fastest of ``--repeat`` rounds after a warm-up call
(numba compiles or loads its cache there; a call shorter than 50 ms is repeated within a round and
the round's time divided by the count). Both CPU time of this process (the load-independent
figure on a shared machine) and wall time are printed; the ratio column is new / old of the CPU
times. Each row also checks the values (max |new - old|). The reference ratios against pycox,
scikit-learn and plain loops are in ``bench/bench_bootstrap.py`` and ``bench/bench_metrics.py``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from _baseline import BASELINE_COMMIT, baseline_metrics
from bench_metrics import sepsis_case, survival_case

from automd_analysis import metrics as new
from automd_analysis.metrics import UndefinedMetricWarning

N_BOOT = 1000


#: A round of a fast function repeats it until it takes about this long (seconds).
ROUND_SECONDS = 0.05


def interleaved(fns: dict, repeat: int) -> dict:
    """{name: ((best wall s, best CPU s) per call, last result)}: one warm-up call each, then
    ``repeat`` rounds calling every function in turn (a fast function k times per round, k from
    the warm-up, so that a round lasts about :data:`ROUND_SECONDS`); the fastest round of each, the
    figure least inflated by other processes on a shared machine."""
    times = {name: ([], []) for name in fns}
    results, calls = {}, {}
    for name, fn in fns.items():  # warm-up (JIT, caches)
        w0 = time.perf_counter()
        results[name] = fn()
        calls[name] = max(1, int(ROUND_SECONDS / max(time.perf_counter() - w0, 1e-6)))
    k = min(calls.values())  # the same count for both sides
    for _ in range(repeat):
        for name, fn in fns.items():
            c0, w0 = time.process_time(), time.perf_counter()
            for _ in range(k):
                results[name] = fn()
            times[name][0].append((time.perf_counter() - w0) / k)
            times[name][1].append((time.process_time() - c0) / k)
    return {
        name: ((float(np.min(w)), float(np.min(c))), results[name])
        for name, (w, c) in times.items()
    }


def _value(x):
    return np.asarray(x.ece if hasattr(x, "ece") else x, dtype=np.float64)


def row(name: str, size: str, timings: dict) -> str:
    (old_w, old_c), old_v = timings["old"]
    (new_w, new_c), new_v = timings["new"]
    a, b = _value(old_v), _value(new_v)
    both = np.isfinite(a) & np.isfinite(b)
    diff = float(np.max(np.abs(a[both] - b[both]))) if both.any() else 0.0
    return (
        f"| {name} | {size} | {old_c:.4f} ({old_w:.4f}) | {new_c:.4f} ({new_w:.4f}) | "
        f"**{new_c / old_c:.2f}** ({new_w / old_w:.2f}) | {diff:.1e} |"
    )


def cases(quick: bool):
    rng = np.random.default_rng(1)
    n = 50_000
    y = (rng.random(n) < 0.2).astype(np.int8)
    p = np.clip(rng.normal(0.2 + 0.3 * y, 0.15), 0, 1)
    label = (p > 0.35).astype(np.int8)
    sizes = (1_775,) if quick else (1_775, 49_291)
    surv = {m: survival_case(m) for m in sizes}
    sepsis = sepsis_case(150_000 if quick else 1_500_000)
    return y, p, label, surv, sepsis


def same_call(old, function: str, *args) -> dict:
    """The point-value call of ``function`` in both implementations."""
    return {
        "old": lambda: getattr(old, function)(*args),
        "new": lambda: getattr(new, function)(*args),
    }


def point_rows(old, data, repeat: int) -> list[str]:
    y, p, label, surv, (pid, lab, pred) = data
    out = []
    for n, case in surv.items():
        timings = interleaved(same_call(old, "concordance_td", *case), repeat)
        out.append(row("C^td adj_antolini", f"n={n:,}, G={len(case[3])}", timings))
    for name, function, args in (
        ("AUROC", "auroc", (y, p)),
        ("ECE (10 bins)", "ece", (y, p)),
        ("min(Se, PPV)", "min_se_ppv", (y, label)),
    ):
        timings = interleaved(same_call(old, function, *args), repeat)
        out.append(row(name, f"n={len(y):,}", timings))
    for n, case in surv.items():
        timings = interleaved(same_call(old, "survival_ece", *case), repeat)
        out.append(row("survival ECE", f"n={n:,}, G={len(case[3])}", timings))
    timings = interleaved(same_call(old, "sepsis_utility", pid, lab, pred), repeat)
    out.append(row("PhysioNet 2019 utility", f"{len(pid):,} patient-hours", timings))
    return out


def replicate_rows(old, data, repeat: int, quick: bool) -> list[str]:
    y, p, label, surv, (pid, lab, pred) = data
    n_boot = 200 if quick else N_BOOT
    out = []

    def pair(name, size, f_old, f_new):
        out.append(row(name, size, interleaved({"old": f_old, "new": f_new}, repeat)))

    for n, (t, e, s, grid) in surv.items():
        pair(
            "C^td adj_antolini",
            f"n={n:,}, G={len(grid)}",
            lambda t=t, e=e, s=s, g=grid: old.concordance_td_bootstrap(t, e, s, g, n_boot=n_boot),
            lambda t=t, e=e, s=s, g=grid, n=n: new.concordance_td(
                t, e, s, g, weights=new.bootstrap_weights(n, n_boot)
            ),
        )
    n = len(y)
    pair(
        "AUROC",
        f"n={n:,}",
        lambda: old.auroc_bootstrap(y, p, n_boot=n_boot),
        lambda: new.auroc(y, p, weights=new.bootstrap_weights(n, n_boot)),
    )
    pair(
        "ECE (10 bins)",
        f"n={n:,}",
        lambda: old.ece_bootstrap(y, p, n_boot=n_boot),
        lambda: new.ece(y, p, weights=new.bootstrap_weights(n, n_boot)),
    )
    pair(
        "min(Se, PPV)",
        f"n={n:,}",
        lambda: old.min_se_ppv_bootstrap(y, label, n_boot=n_boot),
        lambda: new.min_se_ppv(y, label, weights=new.bootstrap_weights(n, n_boot)),
    )
    n_pat = int(np.count_nonzero(np.r_[True, pid[1:] != pid[:-1]]))
    pair(
        "PhysioNet 2019 utility",
        f"{len(pid):,} patient-hours ({n_pat:,} patients)",
        lambda: old.sepsis_utility_bootstrap(pid, lab, pred, n_boot=n_boot),
        lambda: new.sepsis_utility(pid, lab, pred, weights=new.bootstrap_weights(n_pat, n_boot)),
    )
    for n, (t, e, s, grid) in surv.items():
        k = n_boot if n < 10_000 else 200
        pair(
            f"survival ECE ({k:,} replicates)",
            f"n={n:,}, G={len(grid)}",
            lambda t=t, e=e, s=s, g=grid, k=k: old.survival_ece_bootstrap(t, e, s, g, n_boot=k),
            lambda t=t, e=e, s=s, g=grid, k=k, n=n: new.survival_ece(
                t, e, s, g, weights=new.bootstrap_weights(n, k)
            ),
        )
    return out


HEADER = (
    "| metric | size | 2ca8809: CPU (wall) s | today: CPU (wall) s | today / 2ca8809: CPU "
    "(wall) | max abs diff |\n|---|---|---|---|---|---|"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="small sizes, 200 replicates")
    args = parser.parse_args()
    warnings.simplefilter("ignore", UndefinedMetricWarning)
    old = baseline_metrics(BASELINE_COMMIT)
    data = cases(args.quick)
    print("Point value (one call, no weights)\n")
    print(HEADER)
    print("\n".join(point_rows(old, data, args.repeat)))
    print(f"\n{N_BOOT:,} bootstrap replicates (resample generation included)\n")
    print(HEADER)
    print("\n".join(replicate_rows(old, data, max(1, args.repeat // 2), args.quick)))


if __name__ == "__main__":
    main()
