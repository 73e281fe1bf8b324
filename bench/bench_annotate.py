"""``automd annotate`` at paper scale: ~3,600 versions of 150-400-line scripts on 2 cores.

Usage: ``python bench/bench_annotate.py [--archive runs_archive/demo] [--versions 3600]
[--jobs 2]``

Wall times depend on what else the machine runs; each worker also reports the CPU time it
spent, whose sum divided by the number of workers is the wall time on otherwise idle cores.

* **static analysis**: every archived version's Python files are collected from the archive
  (the demo archive's scripts are 100-400 lines, about 190 on average) and cycled until
  ``--versions`` versions are reached; each copy gets a distinct trailing comment, so nothing is
  shared or cached. The versions are analysed exactly as ``automd annotate`` analyses one
  (interpretation, codebook rules, code signature) by ``--jobs`` spawned worker processes.
* **reference, same run**: ``ast.parse`` of the same sources by the same pool - the cost of
  merely parsing the code, a lower bound for any AST-based analyser.
* **end to end**: ``annotate_archive`` on the whole archive (every version, the version pairs,
  the forensics, files written; cold cache) and again with the cache warm.

Prints one line per measurement; docs/performance.md quotes them.
"""

from __future__ import annotations

import argparse
import ast
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from automd_analysis.annotate.code import analyse_sources
from automd_analysis.annotate.practices import code_findings, code_signature
from automd_analysis.annotate.runs import annotate_archive
from automd_analysis.archive import open_archive
from automd_analysis.tasks import load_manifests


def _versions(archive) -> list[list[tuple[str, str]]]:
    out = []
    for run in archive.runs():
        for v in run.versions:
            files = [f for f in v.code_files if f.endswith(".py")]
            sources = [(f, run.read_text(f)) for f in files]
            if sources:
                out.append(sources)
    return out


def _analyse(sources: list[tuple[str, str]]) -> float:
    """CPU seconds of analysing one version as ``automd annotate`` does."""
    start = time.process_time()
    trace = analyse_sources(sources)
    code_findings(trace)
    code_signature(trace)
    return time.process_time() - start


def _parse(sources: list[tuple[str, str]]) -> float:
    start = time.process_time()
    for _, text in sources:
        ast.parse(text)
    return time.process_time() - start


def _pool_time(fn, work, jobs: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds summed over the workers)."""
    ctx = get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        list(pool.map(fn, work[: jobs * 2]))  # start the workers (imports) before timing
        start = time.perf_counter()
        cpu = sum(pool.map(fn, work, chunksize=16))
        return time.perf_counter() - start, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--archive", type=Path, default=Path("runs_archive/demo"))
    ap.add_argument("--manifests", type=Path, default=None)
    ap.add_argument("--versions", type=int, default=3600)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()

    archive = open_archive(args.archive)
    base = _versions(archive)
    lines = [sum(t.count("\n") for _, t in s) for s in base]
    work = [
        [(p, t + f"\n# bench copy {k}\n") for p, t in base[k % len(base)]]
        for k in range(args.versions)
    ]
    print(
        f"archive {args.archive}: {len(base)} versions with code, "
        f"{min(lines)}-{max(lines)} lines (mean {sum(lines) / len(lines):.0f}); "
        f"workload {len(work)} versions, {args.jobs} workers, cpu_count {os.cpu_count()}"
    )
    t_parse, cpu_parse = _pool_time(_parse, work, args.jobs)
    t_analyse, cpu_analyse = _pool_time(_analyse, work, args.jobs)
    n, j = len(work), args.jobs
    print(
        f"reference ast.parse        wall {t_parse:6.1f} s; CPU {cpu_parse:6.1f} s "
        f"({1000 * cpu_parse / n:.1f} ms/version; {cpu_parse / j:.1f} s on {j} idle cores)"
    )
    print(
        f"static analysis            wall {t_analyse:6.1f} s; CPU {cpu_analyse:6.1f} s "
        f"({1000 * cpu_analyse / n:.1f} ms/version; {cpu_analyse / j:.1f} s on {j} idle cores; "
        f"{cpu_analyse / cpu_parse:.1f}x parsing)"
    )
    manifests = load_manifests(args.manifests)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        cold = annotate_archive(archive, Path(tmp) / "out", manifests=manifests, jobs=args.jobs)
        t_cold = time.perf_counter() - start
        start = time.perf_counter()
        warm = annotate_archive(archive, Path(tmp) / "out", manifests=manifests, jobs=args.jobs)
        t_warm = time.perf_counter() - start
    print(
        f"annotate_archive cold      {t_cold:7.1f} s  ({cold.n_runs} runs, {cold.n_versions} "
        f"versions analysed, {cold.n_cached} identical to an earlier one)"
    )
    print(f"annotate_archive warm      {t_warm:7.1f} s  ({warm.n_cached} from cache)")


if __name__ == "__main__":
    main()
