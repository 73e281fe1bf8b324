"""``make bench``: run every ``bench/bench_*.py`` script in turn and report which ones failed.

Usage: ``python bench/run_benchmarks.py [-k SUBSTRING] [-- extra args passed to every script]``.
Each script runs in its own process with this interpreter (so JIT warm-up and memory are per script)
and prints its own table; the exit status is non-zero if any script failed. Without extra args, a
script listed in :data:`DEFAULT_ARGS` gets its entry: a size that finishes in minutes from a fresh
clone (``bench_scoring.py`` at paper scale builds a 23 GB archive: run it by hand with
``--workdir DIR``), or the demo's inputs (``make demo`` builds them).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
#: Arguments of the scripts that ``make bench`` must not run at their full default size, or that
#: need inputs (the demo's), when no extra args are given.
DEMO_INPUTS = ("--data", "data", "--manifests", "data_manifests")
DEFAULT_ARGS: dict[str, tuple[str, ...]] = {
    "bench_scoring.py": ("--version-scale", "0.04", "--size-scale", "0.05"),
    "bench_nb02_figures.py": ("--archive", "runs_archive/demo", "--scores", "scores/demo",
                              *DEMO_INPUTS),
}  # fmt: skip


def script_args(script: Path, extra: list[str]) -> list[str]:
    """The arguments ``script`` runs with: ``extra`` if given, else its :data:`DEFAULT_ARGS`."""
    return list(extra) if extra else list(DEFAULT_ARGS.get(script.name, ()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="only run scripts whose file name contains this")
    parser.add_argument("extra", nargs="*", help="arguments passed to every script (after --)")
    args = parser.parse_args(argv)
    scripts = sorted(p for p in BENCH_DIR.glob("bench_*.py") if args.k in p.name)
    if not scripts:
        print(f"no bench/bench_*.py script matches {args.k!r}", file=sys.stderr)
        return 1
    failed = []
    for script in scripts:
        print(f"\n=== {script.name} ===", flush=True)
        start = time.perf_counter()
        command = [sys.executable, str(script), *script_args(script, args.extra)]
        result = subprocess.run(command, cwd=BENCH_DIR.parent)
        status = "ok" if result.returncode == 0 else f"FAILED (exit {result.returncode})"
        print(f"--- {script.name}: {status} in {time.perf_counter() - start:.1f} s", flush=True)
        if result.returncode != 0:
            failed.append(script.name)
    if failed:
        print(f"\n{len(failed)} benchmark script(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"\nall {len(scripts)} benchmark script(s) finished")
    return 0


if __name__ == "__main__":
    sys.exit(main())
