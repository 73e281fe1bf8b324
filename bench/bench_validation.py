"""Submission validation at paper scale, and the demo data build.

Usage: ``python bench/bench_validation.py [--quick]``

* survival: SEER-sized test set (49,291 patients x 101 grid times, ~95 MB CSV);
* sequential: ~300,000 test patient-hours (PhysioNet 2019 scale);
* for each: wall time of :func:`validate_submission` (labels loaded and key index built
  beforehand, as the scorer does once per task) and, from a second traced run, its peak traced
  memory (tracemalloc, so numpy buffers count), next to ``pandas.read_csv`` of the same file;
* ``automd demo data`` into a temporary directory (all 9 demo tasks).

Tasks and submissions are synthetic and written to a temporary directory (seeded, deterministic).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from automd_analysis.submissions import validate_submission
from automd_analysis.tasks import get_task, load_labels, sha256_file
from automd_demo.task_files import build_demo_data


def _write_task(base: Path, kind: str, n: int, grid_size: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    data, manifests = base / "data", base / "manifests"
    task_id = f"bench_{kind}"
    (data / "labels").mkdir(parents=True, exist_ok=True)
    manifests.mkdir(parents=True, exist_ok=True)
    files = {"labels": {"path": "labels/labels.csv", "role": "hidden"}}
    if kind == "survival":
        ids = np.array([f"pt{i:06d}" for i in range(n)])
        labels = pd.DataFrame(
            {"patient_id": ids, "duration": rng.integers(1, 120, n), "event": rng.integers(0, 2, n)}
        )
        grid = np.unique(
            np.concatenate(
                [[0.0], np.quantile(rng.random(5000) * 120, np.linspace(0, 1, grid_size - 1))]
            )
        )
        (data / "grid.csv").write_text("time\n" + "".join(f"{float(t)!r}\n" for t in grid))
        files["time_grid"] = {"path": "grid.csv", "role": "public"}
        submission = {
            "id_columns": ["patient_id"],
            "probability_column": None,
            "time_grid": "time_grid",
        }
        label_spec = {
            "file": "labels",
            "id_columns": ["patient_id"],
            "duration": "duration",
            "event": "event",
        }
        metric, sizes = "ctd_adj_antolini", {"train": 0, "test": n}
        curves = np.sort(rng.random((n, len(grid))), axis=1)[:, ::-1]
        sub = pd.DataFrame(curves, columns=[repr(float(t)) for t in grid])
        sub.insert(0, "patient_id", ids)
    else:
        hours = rng.integers(10, 65, n // 10 + 1)
        pids = np.repeat([f"p{i:06d}" for i in range(len(hours))], hours)[:n]
        iculos = np.concatenate([np.arange(1, h + 1) for h in hours])[:n]
        labels = pd.DataFrame({"patient_id": pids, "ICULOS": iculos, "SepsisLabel": 0})
        submission = {
            "id_columns": ["patient_id", "ICULOS"],
            "probability_column": "PredictedProbability",
            "label_column": "PredictedLabel",
        }
        label_spec = {
            "file": "labels",
            "id_columns": ["patient_id", "ICULOS"],
            "label": "SepsisLabel",
        }
        n_patients = len(np.unique(pids))
        metric, sizes = "utility_2019", {"train": 0, "test": n_patients, "test_rows": n}
        sub = labels[["patient_id", "ICULOS"]].copy()
        sub["PredictedProbability"] = rng.random(n)
        sub["PredictedLabel"] = rng.integers(0, 2, n)
    labels.to_csv(data / "labels/labels.csv", index=False, lineterminator="\n")
    for spec in files.values():
        spec["sha256"] = sha256_file(data / spec["path"])
    manifest = {
        "id": task_id, "title": task_id, "origin": "fixture", "kind": kind, "outcome": "x",
        "validation": "internal", "shift": "none", "shared_test_set": task_id, "metric": metric,
        "null_score": 0.5 if metric == "ctd_adj_antolini" else 0.0, "sizes": sizes,
        "submission": submission, "labels": label_spec, "files": files,
        "source": {"name": "bench", "citation": "bench", "access": "synthetic"},
    }  # fmt: skip
    (manifests / f"{task_id}.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    sub_path = base / f"{task_id}_submission.csv"
    sub.sample(frac=1.0, random_state=seed).to_csv(sub_path, index=False, lineterminator="\n")
    return get_task(task_id, data=data, manifests=manifests), sub_path


def _measure(fn):
    """(result, wall seconds without tracing, peak traced MiB from a second, traced run)."""
    start = time.perf_counter()
    out = fn()
    elapsed = time.perf_counter() - start
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, elapsed, peak / 2**20


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10x smaller inputs")
    args = parser.parse_args(argv)
    scale = 10 if args.quick else 1
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for kind, n, grid_size in (
            ("survival", 49_291 // scale, 101),
            ("sequential", 300_000 // scale, 0),
        ):
            task, path = _write_task(tmp / kind, kind, n, grid_size)
            labels = load_labels(task)
            validate_submission(task, path, labels=labels)  # warm: key index, pyarrow import
            size_mb = path.stat().st_size / 2**20
            aligned_mb = len(labels.ids) * (grid_size or 2) * 8 / 2**20
            _, t_pd, m_pd = _measure(lambda p=path: pd.read_csv(p))
            rows.append(
                (kind, n, size_mb, "pandas.read_csv (reference)", t_pd, m_pd, aligned_mb, "")
            )
            runs = [
                ("auto (fast reader)", {}, path),
            ]
            runs += [
                (f"strict csv path, chunk_rows={c:,}", {"engine": "python", "chunk_rows": c}, path)
                for c in (5_000, 100_000)
            ]
            invalid = path.with_name("invalid.csv")
            invalid.write_bytes(b"".join(path.open("rb").readlines()[:-1]))  # one row short
            runs.append(("invalid file (one row short): strict path", {}, invalid))
            for what, kw, file in runs:
                result, t, m = _measure(
                    lambda kw=kw, tk=task, f=file, lb=labels: validate_submission(
                        tk, f, labels=lb, **kw
                    )
                )
                assert result.valid == (file == path), result.to_dict()
                rows.append((kind, n, size_mb, what, t, m, aligned_mb, result.codes))
        start = time.perf_counter()
        built = build_demo_data(tmp / "demo")
        demo_s = time.perf_counter() - start
        matches = all(b.matches for b in built)
    print(
        f"{'kind':<10} {'rows':>9} {'file MB':>8}  {'what':<40} {'time s':>7} {'peak MB':>8} {'aligned MB':>10}"
    )
    for kind, n, size, what, t, m, aligned, _ in rows:
        print(f"{kind:<10} {n:>9,} {size:>8.1f}  {what:<40} {t:>7.2f} {m:>8.1f} {aligned:>10.1f}")
    print(
        f"\nautomd demo data (9 tasks, {len(built)} files): {demo_s:.1f} s; sha256 match manifests: {matches}"
    )
    return 0 if matches else 1


if __name__ == "__main__":
    sys.exit(main())
