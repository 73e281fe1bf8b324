"""Import time of ``automd_analysis.metrics`` in a fresh process, today and at 2ca8809.

Run: ``python bench/bench_metrics_import.py [--runs 9]``. Prints a Markdown table (copied into
docs/performance.md, section "Importing the metrics"). Each figure is the fastest and the median of
``--runs`` fresh interpreters (warm file-system cache; the first run of each is discarded, it
compiles the ``.pyc`` files), interleaved (baseline, today, ...):

- the whole command ``python -c "import automd_analysis.metrics"`` (what a user waits for);
- the import alone, measured inside the process (``time.perf_counter`` around the import);
- ``python -c pass`` for the interpreter's own start-up;
- whether numba and scipy.stats are loaded after the import.

2ca8809's package is extracted with ``git archive`` and imported under another name
(``bench/_baseline.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
from _baseline import BASELINE_COMMIT, extract, package_name

PROBE = (
    "import sys, time, json\n"
    "t = time.perf_counter()\n"
    "import {module}\n"
    "print(json.dumps([time.perf_counter() - t, 'numba' in sys.modules, "
    "'scipy.stats' in sys.modules]))"
)


def _run(module: str | None, env: dict) -> tuple[float, float, bool, bool]:
    code = "pass" if module is None else PROBE.format(module=module)
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env
    ).stdout
    wall = time.perf_counter() - start
    if module is None:
        return wall, 0.0, False, False
    inner, numba, stats = json.loads(out)
    return wall, inner, numba, stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    base_env = dict(os.environ, PYTHONPATH=str(extract(BASELINE_COMMIT)))
    cases = {
        "interpreter start-up (`python -c pass`)": (None, dict(os.environ)),
        f"2ca8809 (`import {package_name()}.metrics`)": (f"{package_name()}.metrics", base_env),
        "today (`import automd_analysis.metrics`)": ("automd_analysis.metrics", dict(os.environ)),
    }
    results = {name: [] for name in cases}
    for module, env in cases.values():
        _run(module, env)  # .pyc compilation, file-system cache
    for _ in range(args.runs):
        for name, (module, env) in cases.items():
            results[name].append(_run(module, env))
    print(
        "| command | whole process: best / median s | import alone: best / median s | "
        "numba loaded | scipy.stats loaded |\n|---|---|---|---|---|"
    )
    for name, runs in results.items():
        wall = np.array([r[0] for r in runs])
        inner = np.array([r[1] for r in runs])
        numba, stats = runs[-1][2], runs[-1][3]
        inner_text = (
            "-" if cases[name][0] is None else f"{inner.min():.2f} / {np.median(inner):.2f}"
        )
        flags = ("-", "-") if cases[name][0] is None else (str(numba), str(stats))
        print(
            f"| {name} | {wall.min():.2f} / {np.median(wall):.2f} | {inner_text} | "
            f"{flags[0]} | {flags[1]} |"
        )


if __name__ == "__main__":
    main()
