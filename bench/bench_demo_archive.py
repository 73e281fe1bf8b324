"""Benchmark: build time of the scripted-agent demo archive, and time per simple-baseline fit.

Usage::

    python bench/bench_demo_archive.py [--size small] [--jobs 2] [--data DIR] [--manifests DIR]
                                       [--skip-archive] [--skip-baselines]

Needs the demo tasks (``automd demo data``). Prints wall time, the CPU time of the worker
processes, run and version counts, and per-fit seconds of the App. D baselines (one seed per demo
task). Numbers and the machine they came from go to docs/performance.md ("Demo archive").

On a machine other jobs share, wall time says little; the CPU seconds do. From each run's CPU
seconds the benchmark also replays the build's schedule - the pool's jobs in their submission
order, each to the first free worker - and prints the wall time ``--jobs`` idle cores would need
and the parallel fraction (CPU / (jobs x that wall time): 1.0 means every core busy throughout).
``--json FILE`` writes every run's summary.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path


def replay_schedule(runs: list[dict], groups: list[list[str]], jobs: int) -> tuple[float, float]:
    """(wall s, parallel fraction) of the pool on ``jobs`` idle cores: the jobs (``groups`` of
    run paths, in submission order) each start on the first free worker and take the summed CPU
    seconds of their runs."""
    import heapq

    cpu = {r["run"]: r["cpu_seconds"] for r in runs}
    free = [0.0] * jobs
    for group in groups:
        start = heapq.heappop(free)
        heapq.heappush(free, start + sum(cpu[run] for run in group))
    wall = max(free)
    return wall, sum(cpu.values()) / (jobs * wall) if wall else 1.0


def bench_archive(
    size: str, jobs: int, data, manifests, keep: str | None = None, json_out: str | None = None
) -> None:
    from automd_demo.harness.build import build_archive, job_groups, plan

    with tempfile.TemporaryDirectory(prefix="bench-demo-archive-") as tmp:
        if keep:
            tmp = keep
        start = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        self_before = resource.getrusage(resource.RUSAGE_SELF)
        result = build_archive(Path(tmp) / "demo", data=data, manifests=manifests, size=size,
                               jobs=jobs)  # fmt: skip
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self_after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) + (
            self_after.ru_utime + self_after.ru_stime - self_before.ru_utime - self_before.ru_stime
        )
        runs = result["runs"]
        versions = sum(r.get("versions", 1) for r in runs)
        files = sum(1 for _ in (Path(tmp) / "demo").rglob("*") if _.is_file())
        mbytes = sum(p.stat().st_size for p in (Path(tmp) / "demo").rglob("*") if p.is_file())
        by_agent = Counter(r["agent"] for r in runs)
        invalid = sum(1 for r in runs if r["agent"] != "baseline" and not r["expected_valid"])
        print(f"demo archive, size {size}, --jobs {jobs}")
        print(f"  wall {wall:.0f} s, CPU {cpu:.0f} s (all processes)")
        print(f"  {len(runs)} runs {dict(sorted(by_agent.items()))}, {versions} versions, "
              f"{files} files, {mbytes / 1e6:.0f} MB")  # fmt: skip
        print("  CPU seconds by agent and task kind (sum over runs):")
        kinds = {"sepsis": "sequential", "death30": "classification"}
        table: dict[tuple[str, str], float] = {}
        for r in runs:
            kind = next((v for k, v in kinds.items() if k in r["run"]), "survival")
            key = (r["agent"], kind)
            table[key] = table.get(key, 0.0) + r["cpu_seconds"]
        for (agent, kind), cpu_s in sorted(table.items()):
            print(f"    {agent:<13} {kind:<15} {cpu_s:7.0f}")
        print(f"  {invalid} agent runs with a malformed selected submission, "
              f"{sum(r.get('real_time_violation', False) for r in runs)} real-time violations")  # fmt: skip
        groups = [[spec.run_path for spec in g] for g in job_groups(plan(size))]
        ideal, fraction = replay_schedule(runs, groups, jobs)
        run_cpu = sum(r["cpu_seconds"] for r in runs)
        print(f"  runs' CPU {run_cpu:.0f} s; replayed on {jobs} idle cores: wall {ideal:.0f} s, "
              f"parallel fraction {fraction:.3f} (largest job {max(sum(r['cpu_seconds'] for r in runs if r['run'] in set(g)) for g in groups):.0f} s)")  # fmt: skip
        if json_out:
            Path(json_out).write_text(
                json.dumps({"wall": wall, "cpu": cpu, "runs": runs}, indent=1)
            )


def bench_baselines(data, manifests) -> None:
    from automd_analysis.tasks import get_task
    from automd_demo.baselines import fit_baseline
    from automd_demo.harness.build import DEMO_TASKS

    print("simple baselines (paper App. D), seed 0, one thread")
    print(f"  {'task':<22} {'kind':<15} {'fit s':>7}")
    for task_id in DEMO_TASKS:
        task = get_task(task_id, data, manifests)
        fit = fit_baseline(task, 0)
        print(f"  {task_id:<22} {task.manifest.kind.value:<15} {fit.fit_seconds:7.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="small")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--data", default=None)
    parser.add_argument("--manifests", default=None)
    parser.add_argument("--skip-archive", action="store_true")
    parser.add_argument("--skip-baselines", action="store_true")
    parser.add_argument("--keep", default=None, help="build into DIR/demo and keep it")
    parser.add_argument("--json", default=None, help="write every run's summary to FILE")
    args = parser.parse_args(argv)
    if not args.skip_baselines:
        bench_baselines(args.data, args.manifests)
    if not args.skip_archive:
        bench_archive(args.size, args.jobs, args.data, args.manifests, args.keep, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
