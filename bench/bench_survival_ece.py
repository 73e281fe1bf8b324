"""Survival ECE replicates against the kernels they replaced (dd125a2), and where the scoring time
of a SEER-sized selected submission goes.

Run: ``python bench/bench_survival_ece.py [--repeat 5] [--quick]``. Prints two Markdown tables
(copied into docs/performance.md, section "Survival ECE replicates and one SEER file"):

1. **Survival ECE, 1,000 bootstrap replicates** at n = 49,291 on a 101-point grid, one call with
   the weight matrix (generated before timing; its cost is row "resample weights" of table 2), on
   three cohorts: continuous times, times rounded to 0.1 (the synthetic SEER of
   ``bench_scoring.py``) and whole numbers (SEER's survival months). Today's ``survival_ece``
   against the same function of commit dd125a2 (one weighted Kaplan-Meier pass per replicate,
   quantile and group), extracted with ``git archive`` (``bench/_baseline.py``) and timed in this
   process, interleaved, fastest of ``--repeat`` rounds (``bench_kernels.interleaved``); CPU
   seconds of the process and, in brackets, wall seconds; the values must be identical.
2. **One selected submission of the SEER task** (``bench_scoring.SyntheticTask`` at the paper's
   test size, 1,000 replicates): CPU seconds of each piece of work ``score_file(...,
   details=True)`` does, called one by one as ``scoring/worker.py`` calls them (fastest of
   ``--repeat``), the survival ECE replicates also with dd125a2's function, and ``score_file``
   end to end as the check that the pieces add up.

``--quick``: n = 5,000 and 200 replicates (a smoke run).
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import yaml
from _baseline import baseline_metrics
from bench_kernels import interleaved, row
from bench_metrics import survival_case
from bench_scoring import SyntheticTask

from automd_analysis import metrics as new
from automd_analysis.metrics import UndefinedMetricWarning

REPO = Path(__file__).resolve().parent.parent
#: The implementation before the batched survival ECE kernels.
PREVIOUS = "dd125a2"
N_BOOT = 1000
COHORTS = {"continuous times": None, "times to 0.1": 1, "whole-number times": 0}


def ece_rows(old, n: int, n_boot: int, repeat: int) -> list[str]:
    out = []
    for name, decimals in COHORTS.items():
        t, e, s, grid = survival_case(n)
        if decimals is not None:
            t = np.round(t, decimals)
        w = new.bootstrap_weights(n, n_boot)
        timings = interleaved(
            {
                "old": lambda t=t, e=e, s=s, g=grid, w=w: old.survival_ece(t, e, s, g, weights=w),
                "new": lambda t=t, e=e, s=s, g=grid, w=w: new.survival_ece(t, e, s, g, weights=w),
            },
            repeat,
        )
        assert np.array_equal(timings["old"][1], timings["new"][1], equal_nan=True), name
        out.append(row(f"survival ECE, {n_boot:,} replicates, {name}", f"n={n:,}, G={len(grid)}",
                       timings))  # fmt: skip
    return out


def seer_task(work: Path, size_scale: float):
    """(Task, labels, submission path) of the synthetic SEER task in ``work``."""
    from automd_analysis.tasks import get_task, load_labels, load_manifests

    manifest = load_manifests(REPO / "data_manifests")["seer"]
    data, manifests = work / "data", work / "manifests"
    manifests.mkdir(parents=True)
    synthetic = SyntheticTask(manifest, size_scale, data, seed=20260101)
    doc = synthetic.manifest_doc(manifest, data)
    (manifests / "seer.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    task = get_task("seer", data=data, manifests=manifests)
    path = work / "submission.csv"
    path.write_bytes(synthetic.file_bytes(np.random.default_rng(1), 3, invalid=False))
    return task, load_labels(task), path


def fastest(fn, repeat: int) -> float:
    """Fastest CPU seconds of ``repeat`` calls after a warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        c0 = time.process_time()
        fn()
        best = min(best, time.process_time() - c0)
    return best


def file_rows(old, size_scale: float, n_boot: int, repeat: int) -> list[str]:
    from automd_analysis import submissions
    from automd_analysis.scoring import calibration_measures as cm
    from automd_analysis.scoring import metrics_for, replicates, subgroup_scores
    from automd_analysis.scoring.worker import score_file

    with tempfile.TemporaryDirectory(prefix="automd-bench-seer-") as tmp:
        task, labels, path = seer_task(Path(tmp), size_scale)
        m = task.manifest
        kind, rules = m.kind.value, {k: sg.rule for k, sg in m.subgroups.items()}
        preds = submissions.validate_submission(task, path, labels).predictions
        inputs = metrics_for.metric_inputs(kind, labels, preds)
        w = replicates.task_resample_weights(task.id, inputs.n_units, n_boot)
        primary = metrics_for.primary_metric(kind, m.metric.value)
        t, e, s, grid = inputs.args
        pieces = {
            "validation (read, align)": lambda: submissions.validate_submission(task, path, labels),
            "point metrics (C^td, ECE, IBS, ...)": lambda: metrics_for.metric_record(
                kind, m.metric.value, m.null_score, labels, preds
            ),
            "resample weights": lambda: replicates.task_resample_weights(
                task.id, inputs.n_units, n_boot
            ),
            "replicates: C^td (primary score)": lambda: primary.evaluate(inputs, w),
            "replicates: survival ECE": lambda: new.ECE_METRICS[kind].evaluate(inputs, w),
            "subgroup point values": lambda: subgroup_scores.subgroup_rows(
                kind, rules, labels, preds
            ),
            "subgroup values and replicates (C^td per group)": lambda: (
                subgroup_scores.subgroup_scores(kind, rules, labels, preds, w)
            ),
            "reliability bins": lambda: metrics_for.calibration_rows(kind, labels, preds),
            "calibration measures": lambda: cm.calibration_measures(kind, labels, preds),
            "smoothed calibration curve": lambda: cm.calibration_curve_rows(kind, labels, preds),
        }
        seconds = {name: fastest(fn, repeat) for name, fn in pieces.items()}
        old_ece = fastest(lambda: old.survival_ece(t, e, s, grid, weights=w), repeat)
        whole = fastest(
            lambda: score_file(task, path, labels, details=True, bootstrap=(n_boot, 0)), repeat
        )
    total = sum(seconds.values())
    out = [f"| {name} | {sec:.3f} | {100 * sec / total:.0f} % |" for name, sec in seconds.items()]
    out.append(f"| **sum of the pieces** | **{total:.3f}** | 100 % |")
    out.append(f"| `score_file(details=True)` end to end | {whole:.3f} | |")
    out.append(f"| (survival ECE replicates with {PREVIOUS}'s function) | ({old_ece:.3f}) | |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="n = 5,000, 200 replicates")
    args = parser.parse_args()
    warnings.simplefilter("ignore", UndefinedMetricWarning)
    old = baseline_metrics(PREVIOUS)
    n, n_boot = (5_000, 200) if args.quick else (49_291, N_BOOT)
    print(f"Survival ECE, {n_boot:,} replicates (weights generated before timing)\n")
    print(
        f"| call | size | {PREVIOUS}: CPU (wall) s | today: CPU (wall) s | today / {PREVIOUS}: "
        "CPU (wall) | max abs diff |\n|---|---|---|---|---|---|"
    )
    print("\n".join(ece_rows(old, n, n_boot, args.repeat)))
    scale = n / 49_291
    print(f"\nOne selected SEER submission (n = {n:,}, {n_boot:,} replicates)\n")
    print("| work | CPU s | share |\n|---|---|---|")
    print("\n".join(file_rows(old, scale, n_boot, max(1, args.repeat // 2))))


if __name__ == "__main__":
    main()
