"""CPU and wall time of notebook 02's per-task figures (reliability diagrams, smoothed curves).

Usage::

    python bench/bench_nb02_figures.py --archive runs_archive/demo --scores scores/demo \
        --data data --manifests data_manifests [--repeat 3]
    PYTHONPATH=/tmp/ref python bench/bench_nb02_figures.py ...   # the code of another checkout

Builds the tables the two figure cells of notebook 02 draw from (the reliability bins and the
smoothed calibration curves of the main experiment), then, ``--repeat`` times, draws and saves
(PNG + SVG, :meth:`~automd_analysis.report.notebook.Report.figure`) one reliability diagram and one
smoothed-curve figure per task into a temporary folder, as the notebook does. Prints the fastest
repetition's CPU seconds (this process) and wall seconds per cell, as Markdown.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, required=True)
    parser.add_argument("--scores", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--manifests", type=Path, default=None)
    parser.add_argument("--experiment", default="main")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import automd_analysis
    from automd_analysis.analysis import calibration_practices
    from automd_analysis.analysis.measure_comparison import compare_calibration_measures
    from automd_analysis.app.notebook import open_report
    from automd_analysis.report import calibration_figures

    with tempfile.TemporaryDirectory() as out:
        report = open_report(
            archive=str(args.archive), scores_dir=str(args.scores), output_dir=out,
            data_root=None if args.data is None else str(args.data),
            manifests_dir=None if args.manifests is None else str(args.manifests),
            seed=0, min_cell=None, notebook="02_calibration_and_practices",
        )  # fmt: skip
        reliability = calibration_practices.reliability_table(report.store, args.experiment)
        curves = compare_calibration_measures(report.store, experiment=args.experiment).curves
        published = report.table(reliability, "reliability_bins").frame
        best: dict[str, tuple[float, float]] = {}
        n_figures = 0
        for _ in range(args.repeat):
            cpu, wall = time.process_time(), time.perf_counter()
            n_figures = len(report.reliability_figures(reliability))
            cpu1, wall1 = time.process_time(), time.perf_counter()
            for task, fig in calibration_figures.smoothed_calibration_figures(
                curves, published
            ).items():
                report.figure(fig, f"calibration_curve_{task}")
            cpu2, wall2 = time.process_time(), time.perf_counter()
            for key, value in (("reliability diagrams", (cpu1 - cpu, wall1 - wall)),
                               ("smoothed calibration curves", (cpu2 - cpu1, wall2 - wall1))):  # fmt: skip
                best[key] = min(best.get(key, value), value)

    print(f"code {Path(automd_analysis.__file__).parent.parent}, {n_figures} tasks, "
          f"load average {os.getloadavg()[0]:.1f}, fastest of {args.repeat}\n")  # fmt: skip
    print("| cell (one figure per task, PNG + SVG) | CPU s | wall s |\n|---|---|---|")
    for key, (cpu_s, wall_s) in best.items():
        print(f"| {key} | {cpu_s:.2f} | {wall_s:.2f} |")
    total = [sum(v[i] for v in best.values()) for i in (0, 1)]
    print(f"| both | {total[0]:.2f} | {total[1]:.2f} |")


if __name__ == "__main__":
    main()
