"""``make bench`` (bench/run_benchmarks.py): scripts that would build paper-scale inputs run small,
and scripts that need the demo's inputs get them, unless the caller passes arguments."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _module():
    spec = importlib.util.spec_from_file_location("run_benchmarks", BENCH / "run_benchmarks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_default_args_name_real_scripts_and_give_way_to_the_callers():
    rb = _module()
    assert rb.DEFAULT_ARGS and all((BENCH / name).is_file() for name in rb.DEFAULT_ARGS)
    scoring = BENCH / "bench_scoring.py"
    small = rb.script_args(scoring, [])
    assert small[small.index("--size-scale") + 1] == "0.05"  # not the 23 GB paper-scale archive
    assert rb.script_args(scoring, ["--workdir", "w"]) == ["--workdir", "w"]
    assert rb.script_args(BENCH / "bench_metrics.py", []) == []
