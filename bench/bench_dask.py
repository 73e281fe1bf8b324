"""Scoring through Dask on a local cluster against the local process pool: same store, and how the
time divides across the workers.

Run: ``python bench/bench_dask.py --archive runs_archive/demo --data data --manifests
data_manifests [--workers 2] [--threads 1] [--jobs 2] [--bootstrap 1000]`` (without
``--archive``: the test fixture archive, so that ``make bench`` runs it from a fresh clone;
``--quick``: no bootstrap replicates).

Scores the archive twice from an empty cache, each into its own temporary store: with the local
process pool (``score_archive(jobs=--jobs)``) and through a ``distributed.LocalCluster`` of
``--workers`` worker processes with ``--threads`` threads each (``score_archive(scheduler=...)``,
as ``automd score --scheduler ADDRESS`` does). Prints a Markdown table per run (wall seconds of
the plan / score / publish phases, CPU seconds of all processes) and, for the Dask run, one row per
worker from the scheduler's task stream: chunks and files scored, seconds computing, CPU seconds of
the worker process, and seconds idle at the end of the scoring phase. Finally it checks that both
stores are byte-identical (every Parquet table and ``store.json``).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "small"
sys.path.insert(0, str(REPO))

from automd_analysis.scoring import score_archive  # noqa: E402
from automd_analysis.scoring.publish import TABLES  # noqa: E402


def _cpu(who: int = resource.RUSAGE_SELF) -> float:
    use = resource.getrusage(who)
    return use.ru_utime + use.ru_stime


def _process_cpu() -> float:
    """CPU seconds of the calling process (run on each Dask worker)."""
    return _cpu()


def _store_bytes(out: Path) -> dict[str, bytes]:
    return {f: (out / f).read_bytes() for f in [*(f"{t}.parquet" for t in TABLES), "store.json"]}


def _phases(summary) -> str:
    t = summary.timings
    return f"{t['plan']:.1f} / {t['score']:.1f} / {t['publish']:.1f}"


def run_local(args, out: Path) -> tuple[str, object]:
    c0, w0 = _cpu() + _cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
    s = score_archive(args.archive, out=out, data=args.data, manifests=args.manifests,
                      jobs=args.jobs, bootstrap=args.bootstrap)  # fmt: skip
    wall = time.perf_counter() - w0
    cpu = _cpu() + _cpu(resource.RUSAGE_CHILDREN) - c0
    row = f"| local pool, {args.jobs} processes | {wall:.1f} | {_phases(s)} | {cpu:.1f} |"
    return row, s


def run_dask(args, out: Path) -> tuple[list[str], list[str], object]:
    import distributed

    with (
        distributed.LocalCluster(
            n_workers=args.workers,
            threads_per_worker=args.threads,
            processes=True,
            dashboard_address=None,
        ) as cluster,  # fmt: skip
        distributed.Client(cluster) as client,
    ):
        before = client.run(_process_cpu)
        c0, w0 = _cpu(), time.perf_counter()
        with distributed.get_task_stream(client=client) as stream:
            s = score_archive(args.archive, out=out, data=args.data, manifests=args.manifests,
                              scheduler=cluster.scheduler_address, bootstrap=args.bootstrap)  # fmt: skip
        wall = time.perf_counter() - w0
        after = client.run(_process_cpu)
        own = _cpu() - c0
    busy: dict[str, float] = defaultdict(float)
    chunks: dict[str, int] = defaultdict(int)
    last: dict[str, float] = defaultdict(float)
    first = float("inf")
    for task in stream.data:
        if not str(task["key"]).startswith("run_chunk"):
            continue
        for ss in task["startstops"]:
            if ss["action"] == "compute":
                busy[task["worker"]] += ss["stop"] - ss["start"]
                last[task["worker"]] = max(last[task["worker"]], ss["stop"])
                first = min(first, ss["start"])
        chunks[task["worker"]] += 1
    end = max(last.values(), default=first)
    worker_cpu = {w: after[w] - before[w] for w in after}
    total = own + sum(worker_cpu.values())
    label = f"Dask LocalCluster, {args.workers} workers x {args.threads} thread(s)"
    runs = [f"| {label} | {wall:.1f} | {_phases(s)} | {total:.1f} |"]
    workers = [
        f"| {i} | {chunks[w]} | {busy[w]:.1f} | {worker_cpu[w]:.1f} | {end - last[w]:.1f} |"
        for i, w in enumerate(sorted(after), start=1)
    ]
    workers.append(f"| client process (plan, publish, scheduler) | | | {own:.1f} | |")
    return runs, workers, s


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--archive", type=Path, default=FIXTURE / "archive")
    ap.add_argument("--data", type=Path, default=None, help="default: the fixture's with it")
    ap.add_argument("--manifests", type=Path, default=None, help="default: the fixture's with it")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="processes of the local pool run")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="no bootstrap replicates")
    args = ap.parse_args(argv)
    if args.archive == FIXTURE / "archive":  # the committed fixture: runs from a fresh clone
        args.data = args.data or FIXTURE / "data"
        args.manifests = args.manifests or FIXTURE / "manifests"
    if args.quick:
        args.bootstrap = 0
    work = Path(tempfile.mkdtemp(prefix="automd-bench-dask-"))
    try:
        local_row, local = run_local(args, work / "local")
        dask_rows, worker_rows, dask = run_dask(args, work / "dask")
        print(f"{local.n_files:,} files ({local.n_unique:,} distinct), {local.n_runs} runs, "
              f"{args.bootstrap} replicates per selected submission\n")  # fmt: skip
        print("| scoring | wall s | plan / score / publish wall s | CPU s (all processes) |")
        print("|---|---|---|---|")
        print("\n".join([local_row, *dask_rows]))
        print("\n| Dask worker | chunks | computing s | CPU s | idle at the end s |")
        print("|---|---|---|---|---|")
        print("\n".join(worker_rows))
        same = _store_bytes(work / "local") == _store_bytes(work / "dask")
        print(f"\nstores byte-identical: {same}")
        return 0 if same and dask.n_errors == 0 and local.n_errors == 0 else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
