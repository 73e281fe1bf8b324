"""Speed of the score-store analyses and the report layer (tables + figures).

The tables and figures are published the way report notebooks 01-06 publish them (analysis
functions, then ``Report.table`` / ``Report.figure``; ``tests/notebook_exports.py``).

Run: ``python bench/bench_analysis_report.py [--repeat 3]``. Prints a Markdown table of the median
wall time of each operation (see docs/performance.md, section "Analysis tables and figures").

Input: the hand-built complete store of the test suite (``tests/storebuilder.complete_runs``:
every task kind, external tasks, objectives and LLM experiments, subgroups, calibration bins,
annotations) at two sizes: 4 agents (paper-like: 4 agents x 9 tasks x 3 reps + baseline x 5 +
24 objective runs + 54 LLM runs = 231 runs) and 12 agents (three times the agents: 495 runs).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import notebook_exports as nx  # noqa: E402
import storebuilder as sb  # noqa: E402
from _timing import timed  # noqa: E402

from automd_analysis.analysis import primary  # noqa: E402
from automd_analysis.analysis.store import load_store  # noqa: E402


def _publish(store, out: Path, draw_figures: bool) -> None:
    nx.export_notebook_outputs(nx.report_on(store, out), draw_figures=draw_figures)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("| operation | runs | median s |")
    print("|---|---|---|")
    for n_agents in (4, 12):
        data = sb.complete_runs(seed=0, agents=tuple(f"agent{i:02d}" for i in range(n_agents)))
        with tempfile.TemporaryDirectory() as tmp:
            directory = sb.write_store(
                data["runs"],
                Path(tmp) / "store",
                subgroups=data["subgroups"],
                calibration_bins=data["calibration_bins"],
            )
            store = load_store(directory)
            n = len(store.runs)
            rows = [
                ("load_store (Parquet)", lambda d=directory: load_store(d)),
                ("primary.agent_summary", lambda s=store: primary.agent_summary(s)),
                (
                    "notebooks 01-06 tables (Report.table: CSV/TeX/HTML)",
                    lambda s=store, t=tmp: _publish(s, Path(t) / "tables_only", False),
                ),
                (
                    "notebooks 01-06 tables + figures (Report.figure: PNG + SVG)",
                    lambda s=store, t=tmp: _publish(s, Path(t) / "everything", True),
                ),
            ]
            for label, fn in rows:
                print(f"| {label} | {n:,} | {timed(fn, args.repeat)[0]:.2f} |")


if __name__ == "__main__":
    main()
