"""``automd import aide`` on a 500-node journal with 500 per-node prediction files.

Usage: ``python bench/bench_import.py [--nodes 500] [--rows 1775] [--repeat 3]``

Writes a synthetic AIDE log directory (``journal.json`` in AIDE's compact serialisation, every
tenth node buggy, a random tree; ``node_predictions/<id>/submission.csv`` of ``--rows`` rows for
every node, like ``demo_support_death30``'s test set) into a temporary directory, then times

* ``import_source`` (read, select, stage, validate the staged archive with the reader, rename)
  into a fresh archive, median of ``--repeat``;
* the same through the CLI in a fresh process (``python -m automd_analysis import ...``), once;
* CPU time (this process, mean per call) next to wall time, since the shared machine's load
  inflates wall time mostly through I/O waits;
* the reference floor measured in the same run: ``shutil.copytree`` of the whole source
  directory plus ``json.loads`` of the journal (the bytes any importer must move and parse).

The task is checked against the repository's manifests (``data_manifests/``) and every bound file's
header against the task's submission columns, as a real import does; no task data is needed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _timing import timed

from automd_analysis.importers import ImportOptions, import_source, parse_predictions

ROOT = Path(__file__).resolve().parent.parent
PATTERN = "node_predictions/{node_id}/submission.csv"


def build_source(src: Path, n_nodes: int, rows: int) -> int:
    """Write the AIDE log directory; return its size in bytes."""
    rng = np.random.default_rng(0)
    nodes, n2p = [], {}
    for step in range(n_nodes):
        nid = f"{step:032x}"
        buggy = step % 10 == 9
        code = "import pandas as pd\n" + "".join(
            f"x{i} = {i} * 2  # step {step}\n" for i in range(60)
        )
        nodes.append({
            "code": code, "plan": f"idea {step}", "step": step, "id": nid,
            "ctime": 1.78e9 + 60.0 * step, "parent": None, "children": [],
            "_term_out": ["Validation AUC: 0.8\n"], "exec_time": 30.0,
            "exc_type": "KeyError" if buggy else None, "exc_info": None, "exc_stack": None,
            "analysis": "ok", "metric": {"value": None if buggy else float(rng.random()),
                                         "maximize": None if buggy else True},
            "is_buggy": buggy,
        })  # fmt: skip
        if step:
            n2p[nid] = f"{int(rng.integers(0, step)):032x}"
        probs = rng.random(rows)
        text = "patient_id,PredictedProbability\n" + "".join(
            f"sup{i:05d},{p:.6f}\n" for i, p in enumerate(probs)
        )
        path = src / "node_predictions" / nid / "submission.csv"
        path.parent.mkdir(parents=True)
        path.write_text(text)
    (src / "journal.json").write_text(
        json.dumps({"nodes": nodes, "node2parent": n2p, "__version": "2"}, separators=(",", ":"))
    )
    (src / "submission.csv").write_text(text)
    return sum(p.stat().st_size for p in src.rglob("*") if p.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--rows", type=int, default=1775)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = tmp / "logs" / "0-exp"
        src.mkdir(parents=True)
        size = build_source(src, args.nodes, args.rows)
        manifests = ROOT / "data_manifests"
        opts = ImportOptions(agent="aide", task="demo_support_death30", llm="gpt-4.1",
                             predictions=parse_predictions(PATTERN))  # fmt: skip
        counter = iter(range(10_000))

        def api():
            return import_source(
                "aide", src, tmp / f"api{next(counter)}", opts, manifests=manifests
            )

        cpu0 = time.process_time()
        t_api, report = timed(api, args.repeat)
        cpu_api = (time.process_time() - cpu0) / args.repeat
        (run,) = report.runs
        assert len(run.versions) == args.nodes

        def reference():
            shutil.copytree(src, tmp / f"ref{next(counter)}")
            json.loads((src / "journal.json").read_text())

        cpu0 = time.process_time()
        t_ref, _ = timed(reference, args.repeat)
        cpu_ref = (time.process_time() - cpu0) / args.repeat
        cmd = [sys.executable, "-m", "automd_analysis", "import", "aide", str(src), "--archive",
               str(tmp / "cli"), "--agent", "aide", "--task", "demo_support_death30",
               "--llm", "gpt-4.1", "--predictions", PATTERN, "--manifests", str(manifests)]  # fmt: skip
        start = time.perf_counter()
        subprocess.run(cmd, check=True, cwd=ROOT, capture_output=True)
        t_cli = time.perf_counter() - start
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"source: {args.nodes} nodes, {args.nodes} prediction files of {args.rows} rows, "
          f"{size / 1e6:.1f} MB; load average {load:.1f}")  # fmt: skip
    print("| step | wall s | CPU s | wall ratio to reference |")
    print("|---|---|---|---|")
    print(f"| reference: copytree + json.loads | {t_ref:.2f} | {cpu_ref:.2f} | 1.0 |")
    print(f"| import_source (median of {args.repeat}) | {t_api:.2f} | {cpu_api:.2f} | "
          f"{t_api / t_ref:.1f} |")  # fmt: skip
    print(f"| automd import, fresh process (once) | {t_cli:.2f} | | {t_cli / t_ref:.1f} |")


if __name__ == "__main__":
    main()
