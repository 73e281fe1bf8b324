"""Wall and CPU time of `automd regenerate`, cold (fresh report folder) and unchanged (again).

Usage::

    python bench/bench_regenerate.py                        # the committed fixture archive
    python bench/bench_regenerate.py --archive runs_archive/demo --data data --manifests \
        data_manifests --annotations annotations/demo -- --masking-results scores/demo/masking.parquet
    python bench/bench_regenerate.py ... --reference /tmp/ref   # also time an older checkout

The archive is scored first (into ``--scores``, default a temporary folder; a scored store is
reused). Then, through the command line exactly as a user runs it:

1. **cold** - ``automd regenerate --no-score`` into a fresh ``--out`` (every notebook runs; the
   scoring is excluded, the store is already scored);
2. **unchanged** - the full ``automd regenerate`` (scoring included) into the same ``--out``
   (an unchanged archive: no notebook should run);
3. with ``--reference DIR`` (a checkout of another commit, e.g. ``git worktree add /tmp/ref
   2ca8809``), the cold run once more with that code on ``PYTHONPATH``, for a ratio measured
   in the same session.

Arguments after ``--`` are passed to every ``automd regenerate``. Prints the load average, wall and
CPU seconds (this process's children: the pipeline, its workers and their kernels) and each
notebook's seconds as logged, as Markdown for docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "small"
_NOTEBOOK_LINE = re.compile(r"notebook (\S+): (ok|FAILED) \((\d+) s\)")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(args: list[str], checkout: Path = ROOT) -> dict:
    """One ``automd regenerate`` of the code in ``checkout``: wall and CPU seconds, per-notebook
    seconds, how many notebooks were reused."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    cpu, start = _cpu(), time.perf_counter()
    proc = subprocess.run(  # `python -m` puts the working directory first on sys.path
        [sys.executable, "-m", "automd_analysis", "regenerate", *args],
        capture_output=True, text=True, cwd=checkout, env=env,
    )  # fmt: skip
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"regenerate failed:\n{proc.stderr[-3000:]}")
    notebooks = {m[0]: int(m[2]) for m in _NOTEBOOK_LINE.findall(proc.stderr)}
    reused = proc.stderr.count("reused (inputs unchanged)")
    return {"wall": wall, "cpu": _cpu() - cpu, "notebooks": notebooks, "reused": reused}


def main() -> None:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, default=FIXTURE / "archive")
    parser.add_argument("--data", type=Path, default=FIXTURE / "data")
    parser.add_argument("--manifests", type=Path, default=FIXTURE / "manifests")
    parser.add_argument("--scores", type=Path, default=None)
    parser.add_argument("--annotations", type=Path, default=None, help="automd annotate output")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--reference", type=Path, default=None, help="an older checkout")
    parser.add_argument("--keep", type=Path, default=None, help="keep the reports in this folder")
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)

    inputs = [str(args.archive.resolve()), "--data", str(args.data.resolve()),
              "--manifests", str(args.manifests.resolve()), "--jobs", str(args.jobs)]  # fmt: skip
    if args.annotations is not None:
        inputs += ["--annotations", str(args.annotations.resolve())]
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep.resolve() if args.keep is not None else Path(scratch)
        scores = (args.scores or tmp / "scores").resolve()
        subprocess.run(
            [sys.executable, "-m", "automd_analysis", "score", *inputs, "--out", str(scores),
             "--no-progress"],
            check=True, capture_output=True, cwd=ROOT,
        )  # fmt: skip
        common = [*inputs, "--scores", str(scores), *extra]
        load = os.getloadavg()[0]
        out = str(Path(tmp) / "report")
        rows = [("cold (fresh --out, store scored)", run([*common, "--no-score", "--out", out]))]
        rows.append(("unchanged (again, with scoring)", run([*common, "--out", out])))
        if args.reference is not None:
            ref_out = str(Path(tmp) / "reference")
            cold = [*common, "--no-score", "--out", ref_out]
            rows.append(("cold, reference checkout", run(cold, args.reference.resolve())))

    print(f"archive {args.archive}, --jobs {args.jobs}, load average at start {load:.1f}\n")
    print("| run | wall s | CPU s | notebooks run | reused |\n|---|---|---|---|---|")
    for label, r in rows:
        print(f"| {label} | {r['wall']:.1f} | {r['cpu']:.1f} | {len(r['notebooks'])} | "
              f"{r['reused']} |")  # fmt: skip
    names = sorted({n for _, r in rows for n in r["notebooks"]})
    print("\n| notebook | " + " | ".join(label for label, _ in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for name in names:
        cells = [str(r["notebooks"].get(name, "-")) for _, r in rows]
        print(f"| {name} | " + " | ".join(cells) + " |")
    if args.reference is not None:
        ratio = rows[0][1]["wall"] / rows[2][1]["wall"]
        print(f"\ncold wall time, this checkout / reference: {ratio:.2f}")


if __name__ == "__main__":
    main()
