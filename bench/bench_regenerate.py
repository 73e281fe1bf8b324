"""Wall time of `automd regenerate` by stage: scoring (cold, cached), notebooks, HTML site.

Usage::

    python bench/bench_regenerate.py                       # the committed fixture archive
    python bench/bench_regenerate.py --archive runs_archive/demo --data data --manifests data_manifests
    python bench/bench_regenerate.py --jobs 1 2            # notebook parallelism to compare

Each configuration runs once into a fresh temporary directory (the stages take seconds to
minutes, so one run per configuration; repeat the command to see the spread). Prints a Markdown
table for docs/performance.md.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "small"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, default=FIXTURE / "archive")
    parser.add_argument("--data", type=Path, default=FIXTURE / "data")
    parser.add_argument("--manifests", type=Path, default=FIXTURE / "manifests")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()

    from automd_analysis.analysis.store import load_store
    from automd_analysis.report.run_notebooks import discover_notebooks, execute_notebooks
    from automd_analysis.report.site import render_site, summarise_store
    from automd_analysis.scoring import score_archive

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        scores = Path(tmp) / "scores"
        for label in ("score (cold cache)", "score (unchanged archive)"):
            start = time.perf_counter()
            summary = score_archive(
                args.archive, scores, data=args.data, manifests=args.manifests, jobs=max(args.jobs)
            )
            rows.append((label, max(args.jobs), time.perf_counter() - start))
        store = load_store(scores)
        notebooks = discover_notebooks(ROOT / "notebooks")
        parameters = {
            "archive": str(args.archive.resolve()),
            "scores_dir": str(scores),
            "manifests_dir": str(args.manifests.resolve()),
            "data_root": str(args.data.resolve()),
            "seed": 0,
        }
        for jobs in args.jobs:
            out = Path(tmp) / f"report-{jobs}"
            params = {**parameters, "output_dir": str(out)}
            start = time.perf_counter()
            results = execute_notebooks(notebooks, out / "notebooks", params, jobs=jobs)
            rows.append((f"{len(notebooks)} notebooks", jobs, time.perf_counter() - start))
            failed = [r.failure.describe() for r in results if r.failure]
            if failed:
                raise SystemExit(f"notebook failures: {failed}")
            start = time.perf_counter()
            render_site(out, results, summarise_store(store))
            rows.append(("HTML pages + index", 1, time.perf_counter() - start))

    print(f"archive {summary.archive}: {summary.n_runs} runs, {summary.n_files} files\n")
    print("| stage | jobs | wall s |\n|---|---|---|")
    for label, jobs, seconds in rows:
        print(f"| {label} | {jobs} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
