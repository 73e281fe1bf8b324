"""Speed and exactness of the bootstrap replicate kernels against a loop of reference calls.

Run: ``python bench/bench_bootstrap.py [--repeat 3] [--quick]``. Prints a Markdown table (copied
into docs/performance.md, section "Bootstrap replicates").

Every row times 1,000 replicates of one metric computed by ``automd_analysis.metrics.*_bootstrap``
(resample generation included) against a loop that evaluates the reference implementation on the
*same* resampled rows, in the same run:

- C^td ``adj_antolini`` vs pycox 0.3.0 ``EvalSurv(...).concordance_td`` at n = 1,775 (G = 101,
  SUPPORT-test-sized) over all 1,000 replicates, and at n = 49,291 (SEER-sized) over
  ``--ref-large`` replicates (default 2; pycox needs about 8 s per call there), extrapolated to
  1,000;
- AUROC vs ``sklearn.metrics.roc_auc_score`` at n = 50,000 (all 1,000 replicates);
- the PhysioNet 2019 utility on 1.5 M patient-hours (patients resampled) vs
  :func:`~automd_analysis.metrics.sepsis_utility` on each resampled cohort (copies relabelled), over
  ``--ref-utility`` replicates (default 50), extrapolated;
- ECE at n = 50,000 vs :func:`~automd_analysis.metrics.ece` per replicate (all 1,000);
- survival ECE per replicate at n = 1,775 and 49,291 vs ``survival_ece`` on the resampled rows
  (a subset, extrapolated);
- the two-stage aggregate intervals (Tables 2 and 3, pairwise comparisons, power table) on a
  paper-sized synthetic store (4 agents x 15 tasks x 3 repetitions + baseline x 5 = 255 runs,
  1,000 replicates each); no reference.

Each row also checks the values: the largest |replicate - reference| over the compared replicates.
Kernel timings are medians of ``--repeat`` runs after a warm-up call (the numba JIT is cached on
disk); reference loops run once. Wall and CPU seconds of this process are both printed: on a
shared machine the CPU time is the load-independent figure (all of it is single-threaded).
Synthetic data with fixed seeds (``bench_metrics.py``).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from bench_metrics import pycox_ctd, sepsis_case, survival_case

from automd_analysis.metrics import (
    UndefinedMetricWarning,
    auroc_bootstrap,
    bootstrap_indices,
    concordance_td_bootstrap,
    ece,
    ece_bootstrap,
    sepsis_utility,
    sepsis_utility_bootstrap,
    survival_ece,
    survival_ece_bootstrap,
)

N_BOOT = 1000


def timed_cpu(fn, repeat: int):
    """((median wall s, median CPU s of this process), last result) over ``repeat`` calls."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        result = fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return (float(np.median(walls)), float(np.median(cpus))), result


def loop_time(fn, idx, n_ref):
    """((wall, CPU) seconds of n_ref reference calls extrapolated to N_BOOT), their values."""
    c0, w0 = time.process_time(), time.perf_counter()
    values = [fn(rows) for rows in idx[:n_ref]]
    scale = N_BOOT / n_ref
    wall = (time.perf_counter() - w0) * scale
    return (wall, (time.process_time() - c0) * scale), np.array(values)


def row(name, size, ours, ref_name, ref, n_ref, diff):
    """A table row; ``ours`` and ``ref`` are (wall, CPU) seconds."""
    est = "" if n_ref == N_BOOT else f" (est. from {n_ref})"
    return (
        f"| {name} | {size} | {ours[0]:.3f} ({ours[1]:.3f}) | {ref_name} | "
        f"{ref[0]:.1f} ({ref[1]:.1f}){est} | **{ref[0] / ours[0]:,.0f}x** "
        f"({ref[1] / ours[1]:,.0f}x) | {diff:.1e} |"
    )


def paper_sized_store():
    """255 selected runs (4 agents x 15 tasks x 3 reps + baseline x 5) and 1,000 replicates each."""
    import pandas as pd

    from automd_analysis.analysis.store import ScoreStore

    rng = np.random.default_rng(5)
    kinds = ["survival"] * 6 + ["classification"] * 6 + ["sequential"] * 3
    scores, runs, reps = [], [], []
    agents = {
        "aide": 0.47,
        "autoresearch": 0.52,
        "codex": 0.52,
        "scientist": 0.36,
        "baseline": 0.49,
    }
    for agent, level in agents.items():
        for t, kind in enumerate(kinds):
            task = f"task{t:02d}"
            for rep in range(5 if agent == "baseline" else 3):
                run_id = f"main/{agent}/{task}/rep{rep}"
                valid = bool(rng.random() > 0.1)
                score = float(np.clip(level + rng.normal(0, 0.08), 0, 1))
                key = {"run_id": run_id, "experiment": "main", "agent": agent, "llm": None,
                       "task": task, "rep": rep, "reference": agent == "baseline"}  # fmt: skip
                scores.append(
                    key
                    | {"version": "selected", "is_selected": True, "task_kind": kind,
                       "validation": "internal", "shift": "none", "internal_counterpart": None,
                       "valid": valid, "reason_code": None if valid else "rows.missing",
                       "raw": score, "score": score, "auroc": np.nan, "ece": 0.05, "brier": np.nan}
                )  # fmt: skip
                runs.append(key | {"objective": None, "tokens_total": 1e6})
                if valid:
                    reps.append(
                        pd.DataFrame(
                            {
                                "run_id": run_id,
                                "replicate": np.arange(N_BOOT),
                                "score": np.clip(score + rng.normal(0, 0.02, N_BOOT), 0, 1),
                                "ece": np.clip(0.05 + rng.normal(0, 0.01, N_BOOT), 0, 1),
                            }
                        )
                    )
    store = ScoreStore.from_frames(scores=pd.DataFrame(scores), runs=pd.DataFrame(runs))
    return store, pd.concat(reps, ignore_index=True)


def analysis_seconds(repeat: int) -> float:
    from automd_analysis.analysis import calibration_practices, primary, uncertainty
    from automd_analysis.analysis.store import ScoreStore

    bare, reps = paper_sized_store()
    store = ScoreStore.from_frames(scores=bare.scores, runs=bare.runs, replicates=reps)

    def all_tables():  # Tables 2 and 3: the point values and their intervals, in one computation
        primary.agent_summary(store)
        calibration_practices.ece_by_task_class(store)
        uncertainty.pairwise_comparisons(store)
        uncertainty.power_table(store)

    return timed_cpu(all_tables, repeat)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ref-large", type=int, default=2)
    parser.add_argument("--ref-utility", type=int, default=50)
    parser.add_argument("--quick", action="store_true", help="small reference loops")
    args = parser.parse_args()
    if args.quick:
        args.repeat, args.ref_large, args.ref_utility = 1, 1, 5
    warnings.simplefilter("ignore", UndefinedMetricWarning)
    rows = []

    # C^td, SUPPORT- and SEER-sized
    for n, n_ref in ((1_775, 100 if args.quick else N_BOOT), (49_291, args.ref_large)):
        t, e, s, grid = survival_case(n)
        concordance_td_bootstrap(t, e, s, grid, n_boot=64)  # JIT warm-up
        ours, reps = timed_cpu(
            lambda t=t, e=e, s=s, g=grid: concordance_td_bootstrap(t, e, s, g, n_boot=N_BOOT),
            args.repeat,
        )
        idx = bootstrap_indices(n, N_BOOT, seed=0)
        ref_s, ref = loop_time(
            lambda r, t=t, e=e, s=s, g=grid: pycox_ctd(t[r], e[r], s[r], g, "adj_antolini"),
            idx,
            n_ref,
        )
        diff = float(np.max(np.abs(reps[:n_ref] - ref)))
        rows.append(
            row(
                "C^td adj_antolini",
                f"n={n:,}, G={len(grid)}",
                ours,
                "pycox loop",
                ref_s,
                n_ref,
                diff,
            )
        )

    # AUROC and ECE at n = 50,000
    rng = np.random.default_rng(1)
    n = 50_000
    y = (rng.random(n) < 0.2).astype(np.int8)
    p = np.clip(rng.normal(0.2 + 0.3 * y, 0.15), 0, 1)
    auroc_bootstrap(y, p, n_boot=64)
    ece_bootstrap(y, p, n_boot=64)
    idx = bootstrap_indices(n, N_BOOT, seed=0)
    from sklearn.metrics import roc_auc_score

    ours, reps = timed_cpu(lambda: auroc_bootstrap(y, p, n_boot=N_BOOT), args.repeat)
    n_ref = 100 if args.quick else N_BOOT
    ref_s, ref = loop_time(lambda r: roc_auc_score(y[r], p[r]), idx, n_ref)
    diff = float(np.max(np.abs(reps[:n_ref] - ref)))
    rows.append(row("AUROC", f"n={n:,}", ours, "sklearn roc_auc_score loop", ref_s, n_ref, diff))
    ours, reps = timed_cpu(lambda: ece_bootstrap(y, p, n_boot=N_BOOT), args.repeat)
    ref_s, ref = loop_time(lambda r: ece(y[r], p[r]), idx, n_ref)
    diff = float(np.max(np.abs(reps[:n_ref] - ref)))
    rows.append(row("ECE (10 bins)", f"n={n:,}", ours, "ece loop", ref_s, n_ref, diff))

    # utility, 1.5 M patient-hours, patients resampled
    pid, lab, pred = sepsis_case(1_500_000)
    sepsis_utility_bootstrap(pid, lab, pred, n_boot=64)
    ours, reps = timed_cpu(
        lambda: sepsis_utility_bootstrap(pid, lab, pred, n_boot=N_BOOT), args.repeat
    )
    starts = np.flatnonzero(np.r_[True, pid[1:] != pid[:-1]])
    ends = np.r_[starts[1:], len(pid)]
    idx = bootstrap_indices(len(starts), N_BOOT, seed=0)

    def utility_of(patients):
        rows_ = np.concatenate([np.arange(starts[k], ends[k]) for k in patients])
        copies = np.repeat(np.arange(len(patients)), ends[patients] - starts[patients])
        return sepsis_utility(copies, lab[rows_], pred[rows_])

    ref_s, ref = loop_time(utility_of, idx, args.ref_utility)
    diff = float(np.max(np.abs(reps[: args.ref_utility] - ref)))
    rows.append(
        row(
            "PhysioNet 2019 utility",
            f"1,500,000 patient-hours ({len(starts):,} patients)",
            ours,
            "sepsis_utility loop",
            ref_s,
            args.ref_utility,
            diff,
        )
    )

    # survival ECE (recomputed per replicate)
    for n, n_ref in ((1_775, 20), (49_291, 5)):
        t, e, s, grid = survival_case(n)
        survival_ece_bootstrap(t, e, s, grid, n_boot=2)
        n_ours = 100 if n > 10_000 else N_BOOT
        (wall, cpu), reps = timed_cpu(
            lambda t=t, e=e, s=s, g=grid, k=n_ours: survival_ece_bootstrap(t, e, s, g, n_boot=k), 1
        )
        ours = (wall * N_BOOT / n_ours, cpu * N_BOOT / n_ours)
        idx = bootstrap_indices(n, n_ref, seed=0)
        ref_s, ref = loop_time(
            lambda r, t=t, e=e, s=s, g=grid: survival_ece(t[r], e[r], s[r], g).ece, idx, n_ref
        )
        diff = float(np.max(np.abs(reps[:n_ref] - ref)))
        name = "survival ECE" + ("" if n_ours == N_BOOT else f" (est. from {n_ours})")
        rows.append(
            row(name, f"n={n:,}, G={len(grid)}", ours, "survival_ece loop", ref_s, n_ref, diff)
        )

    wall, cpu = analysis_seconds(args.repeat)
    rows.append(
        f"| two-stage intervals: Tables 2 + 3, pairwise, power | 255 runs x 1,000 replicates | "
        f"{wall:.3f} ({cpu:.3f}) | - | - | - | - |"
    )
    print(
        "| metric | size | ours, 1,000 replicates: wall (CPU) s | reference | reference: wall "
        "(CPU) s | speed-up: wall (CPU) | max abs diff |"
    )
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
