"""Importing the metrics is cheap: numba and scipy load only when a function needs them (the
import time itself is measured in bench/bench_metrics_import.py, docs/performance.md)."""

from __future__ import annotations

import json
import os
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


def test_the_numba_cache_folder_changes_with_any_kernel_source(tmp_path):
    """numba validates a cached kernel against its own file only; a changed callee elsewhere in
    the package must not load a stale caller, so the folder is keyed by all the sources."""
    from automd_analysis.metrics._numba import sources_digest

    (tmp_path / "a.py").write_text("def f(): return 1\n")
    (tmp_path / "b.py").write_text("def g(): return f()\n")
    (tmp_path / "notes.txt").write_text("not a source")
    first = sources_digest(tmp_path)
    (tmp_path / "notes.txt").write_text("changed, still not a source")
    assert sources_digest(tmp_path) == first
    (tmp_path / "a.py").write_text("def f(): return 2\n")
    assert sources_digest(tmp_path) != first


def test_the_numba_cache_folder_is_per_source_digest(tmp_path):
    code = (
        "from pathlib import Path\nimport automd_analysis.metrics._numba as m\n"
        "print(Path(m.cache_dir()).name == m.sources_digest(Path(m.__file__).parent))"
    )
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env
    ).stdout
    assert out.strip() == "True"
