"""Uncontended CPU of scoring the paper-scale archive: per-file cost by task and kind of work,
summed over the archive's files.

Usage::

    python bench/bench_scoring.py --workdir DIR --keep          # builds the archive once
    python bench/bench_scoring_files.py --workdir DIR [--repeat 3] [--versions 3]
    python bench/bench_scoring_files.py        # a small archive in a temporary folder (make bench)

On a shared machine the CPU seconds of a whole scoring grow with the load (other processes evict
the caches the parser and the kernels work in). This script measures what two idle cores would
spend instead: it plans the archive as ``automd score`` does (``make_plan``: which distinct files
are versions only, which are selected submissions), then in one process, with numba on one
thread as in a worker, scores ``--versions`` valid version files and two selected files of every
task ``--repeat`` times each (``score_file`` with the task's labels loaded once, as a worker does)
and keeps the fastest CPU time per kind of work (``automd_analysis.scoring.profile.WORK_KINDS``;
the task's resample weights are drawn once per process, as in a worker). The estimate for the
archive is, per task, files x fastest cost per file, summed; planning (hashing every file),
loading labels, cache writes and publishing are not included. Prints Markdown tables for
docs/performance.md. Without ``--workdir`` it builds the paper's runs with 4 % of the versions
and 5 % of the test sizes in a temporary folder and deletes it afterwards.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from automd_analysis.archive import open_archive  # noqa: E402
from automd_analysis.metrics import set_kernel_threads  # noqa: E402
from automd_analysis.scoring.plan import make_plan  # noqa: E402
from automd_analysis.scoring.profile import WORK_KINDS  # noqa: E402
from automd_analysis.scoring.worker import score_file  # noqa: E402
from automd_analysis.tasks import load_labels  # noqa: E402

#: Scales of the archive built without --workdir: (versions, test sizes).
SMALL_SCALES = (0.04, 0.05)


def fastest(task, labels, paths, details: bool, repeat: int, bootstrap) -> dict[str, float]:
    """Per kind of work, the fastest CPU seconds over ``repeat`` rounds, mean over ``paths``."""
    best: dict[str, float] = {}
    for path in paths:
        mine: dict[str, float] = {}
        for _ in range(repeat):
            work: dict[str, float] = {}
            score_file(task, path, labels, details=details, bootstrap=bootstrap, work=work)
            for kind, seconds in work.items():
                mine[kind] = min(mine.get(kind, seconds), seconds)
        for kind, seconds in mine.items():
            best[kind] = best.get(kind, 0.0) + seconds / len(paths)
    return best


def _jobs_by_task(work: Path, boot: tuple[int, ...]):
    """The plan's distinct files per task, split into versions only and selected submissions."""
    runs = open_archive(work / "archive").runs()
    plan = make_plan(runs, data=work / "data", manifests=work / "manifests", hash_workers=2,
                     bootstrap=boot)  # fmt: skip
    by_task: dict[str, dict[bool, list]] = {}
    for job in plan.jobs.values():
        by_task.setdefault(job.task_id, {True: [], False: []})[job.details].append(job)
    return plan, by_task


def _task_row(task, jobs: dict[bool, list], args, boot) -> tuple:
    """(versions, selected, CPU s per version, per selected, cost per kind) of one task."""
    labels = load_labels(task)
    valid = [j for j in jobs[False] if score_file(task, j.path, labels, bootstrap=boot)["valid"]]
    versions = fastest(task, labels, [j.path for j in valid[: args.versions]], False,
                       args.repeat, boot)  # fmt: skip
    selected = fastest(task, labels, [j.path for j in jobs[True][:2]], True, args.repeat, boot)
    n_v, n_s = len(jobs[False]), len(jobs[True])
    cost = {k: n_v * versions.get(k, 0.0) + n_s * selected.get(k, 0.0) for k in WORK_KINDS}
    return n_v, n_s, sum(versions.values()), sum(selected.values()), cost


def _print_table(rows: dict[str, tuple], args, load: float) -> None:
    total = {k: sum(r[4][k] for r in rows.values()) for k in WORK_KINDS}
    kinds = [k for k in WORK_KINDS if total[k] > 0.05] or [k for k in WORK_KINDS if total[k] > 0]
    print(f"fastest of {args.repeat}, {args.versions} version files and 2 selected files per task; "
          f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end\n")  # fmt: skip
    print("| task | version files | selected | CPU s per version | CPU s per selected | "
          + " | ".join(kinds) + " | total CPU s |")  # fmt: skip
    print("|---|---|---|---|---|" + "---|" * len(kinds) + "---|")
    for task_id, (n_v, n_s, per_v, per_s, cost) in sorted(
        rows.items(), key=lambda kv: (-sum(kv[1][4].values()), kv[0])
    ):
        print(f"| {task_id} | {n_v} | {n_s} | {per_v:.3f} | {per_s:.2f} | "
              + " | ".join(f"{cost[k]:.1f}" for k in kinds)
              + f" | {sum(cost.values()):.1f} |")  # fmt: skip
    grand = sum(total.values())
    print("| **all** | | | | | " + " | ".join(f"**{total[k]:.0f}**" for k in kinds)
          + f" | **{grand:.0f}** |")  # fmt: skip
    print(f"\nuncontended CPU of the files' work: {grand:.0f} s = {grand / 2:.0f} s on two idle "
          f"cores (planning, labels, cache writes and publishing not included); measured in "
          f"{time.process_time():.0f} CPU s")  # fmt: skip


def estimate(work: Path, args) -> dict[str, tuple]:
    """Time the per-file costs of the archive in ``work``, print the table, return its rows."""
    boot = (args.bootstrap, 0) + ((args.version_bootstrap,) if args.version_bootstrap else ())
    plan, by_task = _jobs_by_task(work, boot)
    load = os.getloadavg()[0]
    rows = {t: _task_row(plan.tasks[t], by_task[t], args, boot) for t in sorted(by_task)}
    _print_table(rows, args, load)
    return rows


def _arguments(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, default=None,
                    help="built by bench_scoring.py (default: a small archive, built here)")  # fmt: skip
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--versions", type=int, default=3, help="version files timed per task")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--version-bootstrap", type=int, default=0)
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = _arguments(argv)
    set_kernel_threads(1)  # as in a scoring worker
    if args.workdir is not None:
        if not (args.workdir / "archive" / "archive.yaml").is_file():
            raise SystemExit(f"{args.workdir} holds no archive built by bench_scoring.py "
                             "(run it with --workdir and --keep first)")  # fmt: skip
        estimate(args.workdir, args)
        return 0
    from bench_scoring import build

    work = Path(tempfile.mkdtemp(prefix="automd-bench-files-"))
    try:
        build(work, *SMALL_SCALES)
        estimate(work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
