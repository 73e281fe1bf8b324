"""Paper scale: a synthetic archive with the paper's test sizes and version counts, scored and
reported through the command line as a user runs it.

Usage::

    python bench/bench_scoring.py --workdir DIR --keep [--jobs 2] [--json out.json]
    python bench/bench_scoring.py --version-scale 0.04 --size-scale 0.05     # a quick smoke run

What it builds (seeded, deterministic; into ``--workdir``, reused when it already holds an archive
built with the same scales, else a temporary directory that is deleted at the end unless
``--keep``):

* the 15 paper tasks, from ``data_manifests/<task>.yaml`` (kind, metric, id/label/subgroup columns,
  shared test sets) with synthetic hidden labels of the paper's test sizes (Table 8; sequential
  tasks: 38.5 hours per patient on average, the PhysioNet 2019 mean) and a 101-point survival grid;
* the main experiment: AIDE-, Codex-, Autoresearch- and AI-Scientist-like agents x 15 tasks x 3
  reps with, per run, about the paper's mean number of versions (Table 18: 25.3, 6.4, 7.8, 41.0;
  3,622 versions at scale 1), the selected submission a copy of one version, ~4% invalid versions,
  plus 5 baseline reps per task. Each version differs from its run's base predictions in a few
  rows, so every file has its own content and is really scored. At scale 1 the archive is
  about 23 GB (almost all of it the two SEER tasks).

Then it times, each in a fresh ``automd`` process, wall and CPU seconds (the process and all its
children: scoring workers, notebook kernels, run-page workers) and the peak resident memory
(sampled every 0.2 s: the largest process and the sum over the process tree):

1. ``automd regenerate`` cold: a new score store and a new report folder (scoring, notebooks, run
   pages, HTML), each step timed from the stage lines the command logs (``REGENERATE_STEPS``);
2. ``automd regenerate`` again, unchanged (nothing is scored, no notebook runs);
3. ``automd score`` again, unchanged (every file hashed, nothing scored).

Before that, the fixture archive is scored once into a scratch store so that the numba kernels are
compiled and cached (a first run after an install pays that once; ``--no-warm-up`` skips it). After
the cold run it prints where the scoring's CPU time went, per task and kind of work, from the store's
``scoring_profile.json`` (``automd_analysis.scoring.profile``). Everything is printed as Markdown for
docs/performance.md, with the load average before and after each command (the machine may be
shared: compare CPU seconds; ``bench_scoring_files.py`` measures the uncontended cost per file).
"""

from __future__ import annotations

import argparse
import json
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
sys.path.insert(0, str(REPO / "bench"))

from _process_tree import Command  # noqa: E402

from automd_analysis.scoring.profile import WORK_KINDS, read_profile  # noqa: E402
from automd_analysis.tasks import load_manifests, sha256_file  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "small"
#: Marker of a built archive in --workdir (the scales and the per-task file counts and bytes).
BUILT = "build.json"

#: Agents: search style and mean versions per run (paper Table 18).
AGENTS = {"aide": ("tree", 25.3), "codex": ("linear", 6.4), "autoresearch": ("linear", 7.8),
          "ai_scientist": ("tree", 41.0)}  # fmt: skip
REPS = 3
HOURS_PER_PATIENT = 38.5
GRID_POINTS = 101
INVALID_SHARE = 0.04
SEED = 20260101

#: Stage lines of ``automd regenerate`` (``automd_analysis/app/pipeline.py``,
#: ``report/run_pages.py``) that start each step, in the order they run.
REGENERATE_STEPS = [
    ("score, load the store", r"^scoring "),
    ("plan notebooks", r"^  notebook \S+: (runs|reused)"),
    ("notebooks (and code embeddings)", r"^notebooks: running"),
    ("run pages", r"^run pages: building"),
    ("HTML index", r"^rendering the HTML report"),
]


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


def _warm_up() -> None:
    """Score the fixture archive once, so that the numba kernels are compiled and cached."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "automd_analysis", "score", str(FIXTURE / "archive"),
                        "--data", str(FIXTURE / "data"), "--manifests", str(FIXTURE / "manifests"),
                        "--out", str(Path(tmp) / "s"), "--jobs", "2", "--no-progress"],
                       check=True, capture_output=True, cwd=REPO)  # fmt: skip


def profile_table(profile: dict) -> list[str]:
    """Markdown: CPU seconds per task and kind of work (the kinds that are not all zero), files
    worked on (of them selected), totals and each kind's share."""
    cpu, files = profile.get("cpu_seconds", {}), profile.get("files", {})
    kinds = [k for k in WORK_KINDS if any(cpu[t].get(k, 0.0) > 0.005 for t in cpu)]
    totals = {t: sum(cpu[t].values()) for t in cpu}
    out = ["| task | files (selected) | " + " | ".join(kinds) + " | total CPU s |",
           "|---|---|" + "---|" * len(kinds) + "---|"]  # fmt: skip
    for t in sorted(cpu, key=lambda t: (-totals[t], t)):
        n = files.get(t, {})
        cells = " | ".join(f"{cpu[t].get(k, 0.0):.1f}" for k in kinds)
        out.append(f"| {t} | {n.get('scored', 0)} ({n.get('selected', 0)}) | {cells} | "
                   f"{totals[t]:.1f} |")  # fmt: skip
    col = [sum(cpu[t].get(k, 0.0) for t in cpu) for k in kinds]
    grand = sum(col) or 1.0
    n_all = sum(f.get("scored", 0) for f in files.values())
    n_sel = sum(f.get("selected", 0) for f in files.values())
    out.append(f"| **all** | {n_all} ({n_sel}) | " + " | ".join(f"**{c:.0f}**" for c in col)
               + f" | **{sum(col):.0f}** |")  # fmt: skip
    out.append("| share | | " + " | ".join(f"{100 * c / grand:.0f} %" for c in col) + " | 100 % |")
    return out


def built_archive(work: Path, version_scale: float, size_scale: float):
    """(archive, data, manifests, per-task stats) in ``work``: reused when built there before with
    the same scales, else built (``SystemExit`` for other scales or a half-built folder)."""
    marker = work / BUILT
    if marker.is_file():
        meta = json.loads(marker.read_text())
        if meta["scales"] == [version_scale, size_scale]:
            print(f"reusing the archive built in {work}")
            return work / "archive", work / "data", work / "manifests", meta["stats"]
        raise SystemExit(f"{work} holds an archive of other scales {meta['scales']}: "
                         "choose another --workdir")  # fmt: skip
    if (work / "archive").exists():
        raise SystemExit(f"{work} holds an archive this script did not finish building "
                         f"(no {BUILT}): delete it or choose another --workdir")  # fmt: skip
    t0 = time.perf_counter()
    arch, data, manifests, stats = build(work, version_scale, size_scale)
    print(f"built the archive in {time.perf_counter() - t0:.0f} s")
    marker.write_text(json.dumps({"scales": [version_scale, size_scale], "stats": stats}))
    return arch, data, manifests, stats


def _commands(work: Path, arch: Path, data: Path, manifests: Path, jobs: int) -> dict:
    """Run the three timed commands; their :class:`Command` and the cold scoring's profile."""
    scores, out = work / "scores", work / "report"
    for old in (scores, out):
        shutil.rmtree(old, ignore_errors=True)
    inputs = [str(arch), "--data", str(data), "--manifests", str(manifests), "--jobs", str(jobs)]
    regen = ["regenerate", *inputs, "--scores", str(scores), "--out", str(out)]
    cold = Command(regen)
    profile = read_profile(scores)
    again = Command(regen)
    rescore = Command(["score", *inputs, "--out", str(scores), "--no-progress"])
    if read_profile(scores).get("scored") != 0:
        raise SystemExit("the unchanged `automd score` did metric work")
    return {"cold": cold, "unchanged": again, "score_unchanged": rescore, "profile": profile}


def report_lines(runs: dict, n_files: int, n_bytes: int, jobs: int) -> list[str]:
    """The Markdown tables of one bench: commands, steps, scoring phases, profile, notebooks."""
    cold, profile = runs["cold"], runs["profile"]
    lines = [
        f"archive: {n_files} files, {n_bytes / 1e9:.1f} GB; --jobs {jobs}", "",
        "| command | wall s | CPU s | largest process GiB | process tree GiB | "
        "load average before / after |",
        "|---|---|---|---|---|---|",
        cold.row("`automd regenerate`, cold (new store, new report)"),
        runs["unchanged"].row("`automd regenerate`, unchanged"),
        runs["score_unchanged"].row("`automd score`, unchanged"), "",
        "| step of the cold `automd regenerate` | wall s | CPU s |", "|---|---|---|",
    ]  # fmt: skip
    lines += [f"| {name} | {w:.1f} | {c:.1f} |" for name, w, c in cold.steps(REGENERATE_STEPS)]
    lines += [
        "",
        "scoring phases (wall s): "
        + ", ".join(f"{k} {v:.1f}" for k, v in profile.get("phases_wall_s", {}).items()),
        "main process CPU s: "
        + ", ".join(f"{k} {v:.1f}" for k, v in profile.get("main_cpu_s", {}).items()),
        f"files scored: {profile.get('scored')}, from cache: {profile.get('cached')}",
        "",
        "CPU seconds of the cold scoring's workers, per task and kind of work:",
        "",
        *profile_table(profile),
        "",
        "| notebook (cold) | s |",
        "|---|---|",
    ]
    return lines + [f"| {k} | {v} |" for k, v in sorted(cold.notebooks().items())]


def _arguments(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--version-scale", type=float, default=1.0)
    ap.add_argument("--size-scale", type=float, default=1.0)
    ap.add_argument("--workdir", type=Path, default=None,
                    help="build the archive here, or reuse the one built here before")  # fmt: skip
    ap.add_argument("--keep", action="store_true", help="keep the archive, store and report")
    ap.add_argument("--no-warm-up", action="store_true", help="do not compile the kernels first")
    ap.add_argument("--json", type=Path, default=None, help="write the numbers here")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = _arguments(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="automd-bench-scoring-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        arch, data, manifests, stats = built_archive(work, args.version_scale, args.size_scale)
        n_files = sum(s["files"] for s in stats.values())
        n_bytes = sum(s["bytes"] for s in stats.values())
        print(f"archive: {n_files} submission files, {n_bytes / 1e9:.2f} GB")
        if not args.no_warm_up:
            _warm_up()
        runs = _commands(work, arch, data, manifests, args.jobs)
        print("\n".join(report_lines(runs, n_files, n_bytes, args.jobs)))
        if args.json:
            numbers = {name: runs[name].to_dict(REGENERATE_STEPS)
                       for name in ("cold", "unchanged", "score_unchanged")}  # fmt: skip
            args.json.write_text(json.dumps({
                "jobs": args.jobs, "version_scale": args.version_scale,
                "size_scale": args.size_scale, "files": n_files, "gb": n_bytes / 1e9,
                "commands": numbers, "profile": runs["profile"]}, indent=1))  # fmt: skip
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
