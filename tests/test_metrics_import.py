"""Importing the metrics is cheap: numba and scipy load only when a function needs them (the
import time itself is measured in bench/bench_metrics_import.py, docs/performance.md)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("numba", "llvmlite", "scipy", "scipy.stats", "scipy.special", "scipy.interpolate")


def _loaded_after(code: str) -> list[str]:
    probe = (
        f"import json, sys\n{code}\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_importing_the_metrics_loads_neither_numba_nor_scipy():
    assert _loaded_after("import automd_analysis.metrics") == []


def test_a_kernel_loads_numba_on_first_use_and_scipy_stats_stays_out():
    loaded = _loaded_after(
        "from automd_analysis.metrics import auroc\nassert auroc([0, 1], [0.2, 0.7]) == 1.0"
    )
    assert "numba" in loaded and "scipy.stats" not in loaded
