"""Wall time of notebook 07's pipeline pieces: the masking step and the notebook itself.

Usage::

    python bench/bench_nb07.py                         # tiny demo archive on the toy hourly task
    python bench/bench_nb07.py --archive runs_archive/demo --data data --manifests data_manifests
    python bench/bench_nb07.py --backend minilm        # notebook 07 with MiniLM embeddings

Without ``--archive`` it builds the toy tasks and a tiny scripted-agent archive
(``automd demo archive --size tiny --task toy_hourly_local``) in a temporary directory. Then it
scores the archive, runs the masking step twice (re-running every eligible run of every agent,
then from the cache) and executes notebook 07 twice (empty embedding cache, then warm). One run
per configuration; prints a Markdown table for docs/performance.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "07_methods_and_development.ipynb"
AGENTS = ["aide", "aiscientist", "autoresearch", "codex"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path)
    parser.add_argument("--data", type=Path)
    parser.add_argument("--manifests", type=Path)
    parser.add_argument("--backend", default="hashing", choices=["hashing", "minilm", "auto"])
    parser.add_argument("--jobs", type=int, default=1, help="masking-step worker processes")
    args = parser.parse_args()

    from automd_analysis.analysis.store import load_store
    from automd_analysis.app.run_notebooks import execute_notebook
    from automd_analysis.masking.sandbox import SandboxedRerun
    from automd_analysis.masking.step import run_masking_step
    from automd_analysis.scoring import score_archive

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        archive, data, manifests = args.archive, args.data, args.manifests
        if archive is None:
            from automd_demo.harness.toy import make_toy_tasks

            data, manifests = make_toy_tasks(tmp / "toy")
            archive = tmp / "demo"
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "automd_analysis", "demo", "archive", "--archive",
                 str(archive), "--data", str(data), "--manifests", str(manifests), "--size",
                 "tiny", "--task", "toy_hourly_local", "--jobs", "1"],
                check=True, capture_output=True,
            )  # fmt: skip
            rows.append(("build tiny demo archive (toy hourly task)", time.perf_counter() - start))
        scores = tmp / "scores"
        start = time.perf_counter()
        score_archive(archive, scores, data=data, manifests=manifests, jobs=2)
        rows.append(("score the archive", time.perf_counter() - start))
        store = load_store(scores)
        rerun = SandboxedRerun("demo", data=str(data), manifests=str(manifests))
        for label in ("masking step, every agent (cold)", "masking step (cached)"):
            start = time.perf_counter()
            summary = run_masking_step(archive, store, scores, agents=AGENTS, data=data,
                                       manifests=manifests, jobs=args.jobs, rerun=rerun,
                                       allow_code_execution=True)  # fmt: skip
            rows.append((f"{label}: {summary.n_eligible} runs, {summary.n_rerun} re-run "
                         f"({rerun.isolation})",
                         time.perf_counter() - start))  # fmt: skip
        params = {
            "archive": str(Path(archive).resolve()),
            "scores_dir": str(scores),
            "output_dir": str(tmp / "report"),
            "seed": 0,
            "embedding_backend": args.backend,
            "embedding_cache": str(tmp / "embeddings"),
        }
        for label in ("notebook 07 (empty embedding cache)", "notebook 07 (warm cache)"):
            start = time.perf_counter()
            result = execute_notebook(NOTEBOOK, tmp / "out.ipynb", params)
            if result.failure is not None:
                raise SystemExit(result.failure.describe())
            rows.append((f"{label}, backend {args.backend}", time.perf_counter() - start))
    print("| step | wall s |\n|---|---|")
    for label, seconds in rows:
        print(f"| {label} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
