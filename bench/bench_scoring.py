"""Scoring at paper scale: a synthetic archive with the paper's test sizes and version counts.

Usage::

    python bench/bench_scoring.py [--jobs 2] [--version-scale 1.0] [--size-scale 1.0]
                                  [--workdir DIR] [--keep] [--demo runs_archive/demo]

What it builds (seeded, deterministic, in a temporary directory unless ``--workdir``):

* the 15 paper tasks, from ``data_manifests/<task>.yaml`` (kind, metric, id/label/subgroup columns,
  shared test sets) with synthetic hidden labels of the paper's test sizes (Table 8; sequential
  tasks: 38.5 hours per patient on average, the PhysioNet 2019 mean) and a 101-point survival grid;
* the main experiment: AIDE-, Codex-, Autoresearch- and AI-Scientist-like agents x 15 tasks x 3
  reps with, per run, about the paper's mean number of versions (Table 18: 25.3, 6.4, 7.8, 41.0;
  3,622 versions at scale 1), the selected submission a copy of one version, ~4% invalid versions,
  plus 5 baseline reps per task.

Then it times (wall clock) ``score_archive`` from an empty cache, and the unchanged re-run (which
must do no metric work). Each version differs from its run's base predictions in a few rows, so
every file has its own content and is really scored. ``--version-scale``/``--size-scale`` shrink
the archive when disk or time demand it (the full archive is ~21 GB, almost all of it the two
SEER tasks); the per-task table lets the full-scale time be extrapolated. ``--demo DIR`` also
times ``automd score DIR`` twice through the CLI (the second run is the unchanged re-run).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from automd_analysis.scoring import score_archive  # noqa: E402
from automd_analysis.tasks import load_manifests, sha256_file  # noqa: E402

#: Agents: search style and mean versions per run (paper Table 18).
AGENTS = {"aide": ("tree", 25.3), "codex": ("linear", 6.4), "autoresearch": ("linear", 7.8),
          "ai_scientist": ("tree", 41.0)}  # fmt: skip
REPS = 3
HOURS_PER_PATIENT = 38.5
GRID_POINTS = 101
INVALID_SHARE = 0.04
SEED = 20260101


def _subgroup_values(rng, name: str, rule: str, n: int):
    if rule == "tertiles":
        return rng.integers(18, 95, n)
    if name == "sex":
        return rng.choice(["female", "male"], n)
    return rng.choice(["White", "Black", "Hispanic", "Asian", "Native", "Other"], n,
                      p=[0.6, 0.15, 0.12, 0.08, 0.03, 0.02])  # fmt: skip


class SyntheticTask:
    """Hidden labels + base prediction lines for one paper task (shared test sets share data)."""

    def __init__(self, manifest, size_scale: float, data_root: Path, seed: int):
        self.m = manifest
        self.kind = manifest.kind.value
        rng = np.random.default_rng(seed)
        n = max(20, int(round(manifest.sizes.test * size_scale)))
        key = manifest.shared_test_set
        folder = data_root / key
        folder.mkdir(parents=True, exist_ok=True)
        ids_cols = manifest.labels.id_columns
        lab = manifest.labels
        cols: dict[str, object] = {}
        if self.kind == "sequential":
            lengths = np.clip(rng.poisson(HOURS_PER_PATIENT, n), 8, None)
            pid = np.repeat(np.arange(100000, 100000 + n), lengths)
            hour = np.concatenate([np.arange(1, k + 1) for k in lengths])
            septic = rng.random(n) < 0.07
            onset = np.array(
                [rng.integers(1, k) if s else 10**9 for s, k in zip(septic, lengths, strict=True)]
            )
            label = (hour >= np.repeat(onset, lengths)).astype(int)
            cols = {ids_cols[0]: pid, ids_cols[1]: hour, lab.label: label}
            self.rows = len(pid)
            latent = label + rng.normal(scale=0.8, size=self.rows)
            p = 1 / (1 + np.exp(-(3 * latent - 3)))
            body = [f"{a},{b}" for a, b in zip(pid, hour, strict=True)]
            payload = [f"{x:.4f},{int(x >= 0.5)}" for x in p]
            header = [
                *ids_cols,
                manifest.submission.probability_column,
                manifest.submission.label_column,
            ]
        else:
            ids = np.arange(1_000_000, 1_000_000 + n)
            cols = {ids_cols[0]: ids}
            x = rng.normal(size=n)
            if self.kind == "survival":
                t = np.round(rng.exponential(60 * np.exp(-0.7 * x)), 1) + 0.1
                c = rng.uniform(10, 150, n)
                cols |= {
                    lab.duration: np.minimum(t, np.round(c, 1)),
                    lab.event: (t <= c).astype(int),
                }
                events = cols[lab.duration][cols[lab.event] == 1]
                grid = np.unique(
                    np.r_[0.0, np.round(np.quantile(events, np.linspace(0, 1, GRID_POINTS - 1)), 2)]
                )
                self.grid = grid
                (folder / "time_grid.csv").write_text(
                    "time\n" + "".join(f"{float(g)!r}\n" for g in grid)
                )
                risk = x + rng.normal(scale=0.7, size=n)
                surv = np.exp(-grid[None, :] / 60 * np.exp(0.7 * risk)[:, None])
                frame = pd.DataFrame(surv)
                text = frame.to_csv(
                    index=False, header=False, float_format="%.4f", lineterminator="\n"
                )
                payload = text.split("\n")[:-1]
                header = [ids_cols[0], *(repr(float(g)) for g in grid)]
            else:
                y = (rng.random(n) < 1 / (1 + np.exp(-(x - 1.5)))).astype(int)
                cols[lab.label] = y
                p = 1 / (1 + np.exp(-(x + rng.normal(scale=0.8, size=n) - 1.5)))
                if manifest.submission.label_column:
                    payload = [f"{v:.4f},{int(v >= 0.3)}" for v in p]
                    header = [ids_cols[0], "PredictedProbability", "PredictedLabel"]
                else:
                    payload = [f"{v:.4f}" for v in p]
                    header = [ids_cols[0], "PredictedProbability"]
            body = [str(i) for i in ids]
            self.rows = n
        for name, sg in manifest.subgroups.items():
            cols[sg.column] = _subgroup_values(rng, name, sg.rule, len(next(iter(cols.values()))))
        labels_path = folder / "labels.csv"
        if not labels_path.exists():
            pd.DataFrame(cols).to_csv(labels_path, index=False)
        self.folder, self.header, self.ids, self.payload = folder, ",".join(header), body, payload
        self.n_units = n

    def manifest_doc(self, manifest, data_root: Path) -> dict:
        """``manifest`` (a paper task using this test set) re-pointed at the synthetic files."""
        doc = json.loads(manifest.model_dump_json())
        files = {"labels": {"path": f"{self.m.shared_test_set}/labels.csv", "role": "hidden"}}
        if self.kind == "survival":
            files["time_grid"] = {
                "path": f"{self.m.shared_test_set}/time_grid.csv",
                "role": "public",
            }
        for f in files.values():
            f["sha256"] = sha256_file(data_root / f["path"])
        doc["files"] = files
        doc["labels"]["file"] = "labels"
        if self.kind == "survival":
            doc["submission"]["time_grid"] = "time_grid"
        doc["subgroups"] = {k: {**v, "file": "labels"} for k, v in doc["subgroups"].items()}
        doc["synthetic"] = True
        doc["source"]["access"] = "synthetic"
        doc["sizes"]["test"] = self.n_units
        if self.kind == "sequential":
            doc["sizes"]["test_rows"] = self.rows
        doc.pop("build", None)
        return doc

    def file_bytes(self, rng, n_swaps: int, invalid: bool) -> bytes:
        """The base predictions with ``n_swaps`` pairs of rows exchanged (distinct content)."""
        payload = list(self.payload)
        idx = rng.integers(0, len(payload), size=(n_swaps, 2))
        for a, b in idx:
            payload[a], payload[b] = payload[b], payload[a]
        lines = [f"{i},{p}" for i, p in zip(self.ids, payload, strict=True)]
        if invalid:
            lines = lines[:-1]  # one test unit / patient-hour missing
        return (self.header + "\n" + "\n".join(lines) + "\n").encode()


def build(work: Path, version_scale: float, size_scale: float) -> tuple[Path, Path, Path, dict]:
    data_root, man_dir, arch = work / "data", work / "manifests", work / "archive"
    man_dir.mkdir(parents=True)
    paper = {
        k: m for k, m in load_manifests(REPO / "data_manifests").items() if m.origin == "paper"
    }
    rng = np.random.default_rng(SEED)
    tasks, by_test_set = {}, {}
    for i, (tid, m) in enumerate(sorted(paper.items())):
        if m.shared_test_set not in by_test_set:  # tasks sharing a test set share its data
            by_test_set[m.shared_test_set] = SyntheticTask(m, size_scale, data_root, SEED + i)
        tasks[tid] = by_test_set[m.shared_test_set]
        doc = tasks[tid].manifest_doc(m, data_root)
        (man_dir / f"{tid}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    (arch).mkdir()
    (arch / "archive.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "bench", "description": "synthetic paper-scale archive",
        "experiments": {"main": "main"}, "provenance": {"seed": SEED}}))  # fmt: skip
    stats = defaultdict(lambda: {"files": 0, "bytes": 0})
    t0 = "2026-01-01T00:00:00Z"
    for tid, task in tasks.items():
        runs = [(a, r) for a in AGENTS for r in range(REPS)] + [("baseline", r) for r in range(5)]
        for agent, rep in runs:
            run_dir = arch / "main" / agent / tid / f"rep{rep}"
            (run_dir / "versions").mkdir(parents=True)
            if agent == "baseline":
                n_versions, search = 0, "none"
            else:
                search, mean = AGENTS[agent]
                n_versions = max(1, int(round(mean * version_scale * rng.uniform(0.7, 1.3))))
            selected, sel_bytes = None, None
            for k in range(1, n_versions + 1):
                vid = f"v{k:03d}"
                data = task.file_bytes(rng, 3 + k, invalid=rng.random() < INVALID_SHARE)
                vdir = run_dir / "versions" / vid
                vdir.mkdir()
                (vdir / "submission.csv").write_bytes(data)
                (vdir / "meta.json").write_text(json.dumps({
                    "version": vid, "created_at": f"2026-01-01T{k // 60:02d}:{k % 60:02d}:00Z",
                    "step": k, "parent": f"v{k - 1:03d}" if search == "tree" and k > 1 else None,
                    "reported_val_score": 0.7, "faulty": False, "code_files": []}))  # fmt: skip
                stats[tid]["files"] += 1
                stats[tid]["bytes"] += len(data)
                selected, sel_bytes = vid, data
            if agent == "baseline":
                sel_bytes = task.file_bytes(rng, 1, invalid=False)
            (run_dir / "submission.csv").write_bytes(sel_bytes)
            stats[tid]["files"] += 1
            stats[tid]["bytes"] += len(sel_bytes)
            (run_dir / "run.json").write_text(json.dumps({
                "schema_version": 1, "experiment": "main", "agent": agent, "task": tid, "rep": rep,
                "llm": "synthetic", "reference": agent == "baseline", "search": search,
                "objective": None, "started_at": t0, "ended_at": "2026-01-01T12:00:00Z",
                "budget_minutes": 720.0, "selection": {"rule": "last", "selected_version": selected},
                "reported_val_score": 0.7}))  # fmt: skip
    return arch, data_root, man_dir, dict(stats)


def _per_file(arch: Path, data: Path, manifests: Path, repeat: int = 3) -> dict[str, dict]:
    """Median single-file cost per task (validation alone, validation + metrics), one process."""
    from automd_analysis.scoring.worker import score_file
    from automd_analysis.submissions import validate_submission
    from automd_analysis.tasks import get_task, load_labels

    out = {}
    for man in sorted(manifests.glob("*.yaml")):
        task = get_task(man.stem, data=data, manifests=manifests)
        labels = load_labels(task)
        path = next(
            (arch / "main" / "codex" / man.stem / "rep0" / "versions").glob("*/submission.csv")
        )
        score_file(task, path, labels)  # warm-up (numba, caches)
        t_val, t_all = [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            validate_submission(task, path, labels)
            t1 = time.perf_counter()
            score_file(task, path, labels)
            t_all.append(time.perf_counter() - t1)
            t_val.append(t1 - t0)
        out[man.stem] = {"validate_s": float(np.median(t_val)), "score_s": float(np.median(t_all)),
                         "mb": path.stat().st_size / 1e6}  # fmt: skip
    return out


def _paper_files_per_task() -> float:
    """Distinct files per task in the paper-scale archive (versions + baselines)."""
    return REPS * sum(mean for _, mean in AGENTS.values()) + 5


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process and its finished children (the workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _time_score(arch, data, manifests, out, jobs) -> tuple[float, float, object]:
    t0, c0 = time.perf_counter(), _cpu_seconds()
    summary = score_archive(arch, out=out, data=data, manifests=manifests, jobs=jobs, progress=True)
    return time.perf_counter() - t0, _cpu_seconds() - c0, summary


def _demo(demo: Path, jobs: int) -> list[float]:
    out = Path(tempfile.mkdtemp(prefix="automd-bench-demo-"))
    times = []
    try:
        for _ in range(2):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "automd_analysis", "score", str(demo), "--out", str(out),
                            "--jobs", str(jobs), "--no-progress"], check=True, cwd=REPO)  # fmt: skip
            times.append(time.perf_counter() - t0)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return times


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--version-scale", type=float, default=1.0)
    ap.add_argument("--size-scale", type=float, default=1.0)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--keep", action="store_true", help="keep the generated archive")
    ap.add_argument(
        "--demo", type=Path, default=None, help="also time `automd score` on this archive"
    )
    ap.add_argument("--json", type=Path, default=None, help="write the numbers here")
    ap.add_argument(
        "--per-file", action="store_true", help="also time one file per task and extrapolate"
    )
    args = ap.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="automd-bench-scoring-"))
    work.mkdir(parents=True, exist_ok=True)
    report: dict = {
        "jobs": args.jobs,
        "version_scale": args.version_scale,
        "size_scale": args.size_scale,
    }
    try:
        t0 = time.perf_counter()
        arch, data, manifests, stats = build(work, args.version_scale, args.size_scale)
        report["build_s"] = time.perf_counter() - t0
        n_files = sum(s["files"] for s in stats.values())
        n_bytes = sum(s["bytes"] for s in stats.values())
        print(
            f"built {n_files} submission files ({n_bytes / 1e9:.2f} GB) in {report['build_s']:.0f} s"
        )
        out = work / "scores"
        load_before = os.getloadavg()[0]
        cold, cold_cpu, s1 = _time_score(arch, data, manifests, out, args.jobs)
        warm, warm_cpu, s2 = _time_score(arch, data, manifests, out, args.jobs)
        assert s2.n_scored == 0, "the unchanged re-run did metric work"
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        report |= {
            "runs": s1.n_runs, "files": s1.n_files, "distinct": s1.n_unique, "gb": n_bytes / 1e9,
            "invalid_files": s1.n_invalid, "cold_s": cold, "rerun_s": warm,
            "cold_cpu_s": cold_cpu, "rerun_cpu_s": warm_cpu,
            "load_avg_1min": [load_before, os.getloadavg()[0]],
            "cold_phases_s": s1.timings, "rerun_phases_s": s2.timings,
            "peak_rss_worker_mb": peak, "peak_rss_main_mb": own,
            "per_task": {t: {**s, "mb": s["bytes"] / 1e6} for t, s in stats.items()},
        }  # fmt: skip
        print(f"\nscored {s1.n_runs} runs / {s1.n_files} files ({s1.n_unique} distinct, "
              f"{s1.n_invalid} invalid): {cold:.1f} s with --jobs {args.jobs}")  # fmt: skip
        print(f"  CPU (main + workers): {cold_cpu:.0f} s = {cold_cpu / args.jobs:.0f} s of wall "
              f"time on {args.jobs} otherwise idle cores; 1-min load average before/after: "
              f"{report['load_avg_1min'][0]:.1f}/{report['load_avg_1min'][1]:.1f}")  # fmt: skip
        print("  phases: " + ", ".join(f"{k} {v:.1f} s" for k, v in s1.timings.items()))
        print(f"unchanged re-run: {warm:.1f} s ({s2.n_cached} cached, {s2.n_scored} scored)")
        print("  phases: " + ", ".join(f"{k} {v:.1f} s" for k, v in s2.timings.items()))
        print(f"peak RSS: main {own:.0f} MB, largest worker {peak:.0f} MB")
        print("\nper task: files, MB")
        for t, s in sorted(stats.items(), key=lambda kv: -kv[1]["bytes"]):
            print(f"  {t:16s} {s['files']:5d} {s['bytes'] / 1e6:9.1f}")
        if args.per_file:
            costs = _per_file(arch, data, manifests)
            n_paper = _paper_files_per_task()
            estimate = sum(c["score_s"] for c in costs.values()) * n_paper / args.jobs
            report["per_file"], report["paper_scale_estimate_s"] = costs, estimate
            print("\nper-file cost at these test sizes (median of 3, one process):")
            print("  task              MB   validate_s  validate+metrics_s")
            for t, c in sorted(costs.items(), key=lambda kv: -kv[1]["score_s"]):
                print(f"  {t:16s} {c['mb']:6.1f} {c['validate_s']:10.3f} {c['score_s']:12.3f}")
            print(f"estimated full paper scale ({n_paper:.0f} distinct files per task, "
                  f"--jobs {args.jobs}): {estimate / 60:.1f} min of scoring")  # fmt: skip
        if args.demo:
            report["demo_s"] = _demo(args.demo, args.jobs)
            print(f"\ndemo archive via CLI: first {report['demo_s'][0]:.1f} s, "
                  f"unchanged re-run {report['demo_s'][1]:.1f} s")  # fmt: skip
        if args.json:
            args.json.write_text(json.dumps(report, indent=1))
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
