"""``automd import`` on journals far too large to import: refused in seconds, in bounded memory.

Usage: ``python bench/bench_import_limits.py [--nodes 5000000] [--reference-nodes 100000]
[--baseline PATH]``

Writes AIDE journals of ``--nodes`` and ``--reference-nodes`` minimal nodes
(``{"id", "step", "ctime"}``; 5 M nodes are about 230 MB, under the 256 MiB log cap) and runs
``automd import aide`` on each in a fresh process, reporting wall time and the child's peak
resident memory (``getrusage``). The import must refuse them (``import.too_large``) before it
builds nodes. The reference, measured in the same run on the smaller journal, is the same command
with the package of ``--baseline`` (a checkout of the round's starting commit, which parsed the
whole journal, built every node and wrote a code directory per node before it checked the run's
size); without ``--baseline`` only the current code is measured.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_journal(path: Path, n: int) -> int:
    """A compact AIDE journal of ``n`` minimal nodes; returns its size in bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fh.write('{"nodes":[')
        for start in range(0, n, 100_000):
            chunk = range(start, min(n, start + 100_000))
            fh.write(("," if start else "") + ",".join(
                f'{{"id":"{i:08x}","step":{i},"ctime":1.78e9}}' for i in chunk))  # fmt: skip
        fh.write('],"node2parent":{},"__version":"2"}')
    return path.stat().st_size


#: Runs ``automd`` and reports its own peak resident memory (KiB) on stderr when it exits.
_CHILD = (
    "import atexit, resource, runpy, sys; u = lambda: resource.getrusage(resource.RUSAGE_SELF); "
    "atexit.register(lambda: sys.stderr.write('MAXRSS %d %.3f\\n' % (u().ru_maxrss, "
    "u().ru_utime + u().ru_stime))); "
    "sys.argv = ['automd'] + sys.argv[1:]; runpy.run_module('automd_analysis', run_name='__main__')"
)


def run_import(src: Path, dest: Path, pythonpath: Path | None):
    """(wall s, CPU s and peak RSS MiB of the child, reason code or "imported")."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    cmd = [sys.executable, "-c", _CHILD, "import", "aide", str(src), "--archive", str(dest),
           "--agent", "aide", "--task", "demo_support_death30", "--llm", "m",
           "--manifests", str(ROOT / "data_manifests"), "--json"]  # fmt: skip
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=pythonpath or ROOT, env=env)
    wall = time.perf_counter() - start
    usage = [line.split()[1:] for line in proc.stderr.splitlines() if line.startswith("MAXRSS")]
    lines = proc.stdout.strip().splitlines()
    out = json.loads(lines[-1]) if lines else {}
    code = out.get("error", {}).get("code") if out.get("ok") is False else "imported"
    if code is None:
        code = f"exit {proc.returncode}: {proc.stderr.strip().splitlines()[-2:]}"
    rss, cpu = (int(usage[-1][0]) / 1024, float(usage[-1][1])) if usage else (math.nan, math.nan)
    return wall, cpu, rss, code


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5_000_000)
    ap.add_argument("--reference-nodes", type=int, default=100_000)
    ap.add_argument("--baseline", type=Path, default=None,
                    help="a checkout of the starting commit (its automd_analysis/ is imported)")  # fmt: skip
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for n in (args.reference_nodes, args.nodes):
            src = tmp / f"n{n}"
            size = write_journal(src / "journal.json", n)
            (src / "submission.csv").write_text("patient_id,PredictedProbability\n")
            runs = [("this commit", None)]
            if args.baseline is not None and n == args.reference_nodes:
                runs.insert(0, ("baseline (reference)", args.baseline))
            for label, path in runs:
                wall, cpu, rss, code = run_import(src, tmp / f"dest-{n}-{len(rows)}", path)
                rows.append((f"{n:,}", f"{size / 2**20:.0f}", label, wall, cpu, rss, code))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.1f}")
    print("| nodes | journal MiB | code | wall s | CPU s | peak RSS MiB | outcome |")
    print("|---|---|---|---|---|---|---|")
    for nodes, mib, label, wall, cpu, rss, code in rows:
        print(f"| {nodes} | {mib} | {label} | {wall:.1f} | {cpu:.1f} | {rss:.0f} | {code} |")


if __name__ == "__main__":
    main()
