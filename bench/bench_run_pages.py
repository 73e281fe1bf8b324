"""Wall and CPU time of the run pages (``build_run_pages``) on a paper-scale synthetic store.

Usage::

    python bench/bench_run_pages.py --source scores/demo            # 255 runs, ~3,800 versions
    python bench/bench_run_pages.py --source scores/demo --quick    # 11 runs, in seconds
    python bench/bench_run_pages.py --source scores/demo --as-is    # the demo store itself

The store is **synthetic**: :func:`_synthetic_store.paper_scale_store` copies the runs of a scored
store that has code (``--source``, the demo store) into the paper's shape (45 runs for each of
four agents, 75 simple-baseline runs, 21 versions per agent run), every code file tagged so that
no two versions share a text (``--as-is``: the source store itself, whose versions share the
files they did not change). Then, in this process, as ``automd regenerate`` calls it:

1. **cold** - ``build_run_pages`` into a fresh report folder;
2. **unchanged** - again into the same folder (every page should be reused);
3. **one run changed** - one agent run's validation score changed (only its page is rebuilt).

Prints the load average, wall and CPU seconds (this process and its page workers), pages built
and reused, the size of ``runs/`` by kind against the size of the distinct code text, and the
ratios, as Markdown for docs/performance.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from _synthetic_store import paper_scale_store

import automd_analysis.report.site  # noqa: F401 (loaded when `automd regenerate` builds the pages)
from automd_analysis.analysis.store import BASELINE_AGENT, load_store
from automd_analysis.report.run_pages import MANIFEST, build_run_pages

ROOT = Path(__file__).resolve().parent.parent


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def timed_build(store, out: Path, jobs: int) -> dict:
    """One ``build_run_pages``: wall and CPU seconds, pages built and reused."""
    cpu, start = _cpu(), time.perf_counter()
    summary = build_run_pages(store, out, jobs=jobs, log=lambda line: None)
    wall = time.perf_counter() - start
    if summary.failed:
        raise SystemExit(f"pages failed: {summary.failed[:3]}")
    return {"wall": wall, "cpu": _cpu() - cpu, "built": summary.built, "reused": summary.reused}


def sizes(out: Path) -> dict[str, int]:
    """Bytes under ``out/runs``: shared code and diff pages (``_code/``), run pages, figures."""
    kinds = {"_code": 0, "pages": 0, "figures": 0, "other": 0}
    for path in (out / "runs").rglob("*"):
        if not path.is_file():
            continue
        rel = path.relative_to(out / "runs").as_posix()
        kind = ("_code" if rel.startswith("_code/") else "figures" if rel.endswith(".svg")
                else "pages" if rel.endswith(".html") else "other")  # fmt: skip
        kinds[kind] += path.stat().st_size
    return kinds


def code_page_links(out: Path) -> tuple[int, int]:
    """(links from run pages to ``_code/`` pages, distinct ``_code/`` pages), from the manifest."""
    doc = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    links = [f for entry in doc["runs"].values() for f in entry["files"] if "/_code/" in f]
    return len(links), len(set(links))


def one_run_changed(store):
    """``store`` with the validation score of one agent run's first version changed."""
    scores = store.scores.copy()
    agent_runs = store.runs.loc[store.runs["agent"] != BASELINE_AGENT, "run_id"]
    run_id = sorted(agent_runs)[0]
    row = scores.index[(scores["run_id"] == run_id) & ~scores["is_selected"]][0]
    scores.loc[row, "reported_val"] = float(scores.loc[row, "reported_val"] or 0.0) + 0.01
    return dataclasses.replace(store, scores=scores), run_id


def code_bytes(store) -> tuple[int, int]:
    """(bytes of every version's files, bytes of the distinct file texts)."""
    total, distinct = 0, {}
    for versions in store.code_files_texts().values():
        for files in versions.values():
            for name, text in files.items():
                size = len(text.encode("utf-8", errors="replace"))
                total += size
                distinct[(name.rsplit("/", 1)[-1], text)] = size
    return total, sum(distinct.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=ROOT / "scores" / "demo",
                        help="a scored store with code (the demo store)")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="11 runs of 5 versions")
    parser.add_argument("--as-is", action="store_true", help="the source store, not synthesised")
    parser.add_argument("--keep", type=Path, default=None, help="keep the report in this folder")
    args = parser.parse_args()
    if not (args.source / "runs.parquet").is_file():
        parser.error(f"--source {args.source}: no score store there (make demo writes scores/demo)")

    shape = (
        {"runs_per_agent": 2, "baseline_runs": 3, "versions_per_run": 5}
        if args.quick
        else {"runs_per_agent": 45, "baseline_runs": 75, "versions_per_run": 21}
    )
    start = time.perf_counter()
    store = load_store(args.source)
    store = store if args.as_is else paper_scale_store(store, **shape)
    kind = "the store" if args.as_is else "synthetic store from"
    made = time.perf_counter() - start
    n_versions = int((~store.scores["is_selected"]).sum())
    n_code = len(store.code)
    total_code, distinct_code = code_bytes(store)
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as scratch:
        out = (args.keep or Path(scratch)).resolve() / "report"
        rows = [("cold (fresh folder)", timed_build(store, out, args.jobs))]
        on_disk = sizes(out)
        links, pages = code_page_links(out)
        rows.append(("unchanged (same folder)", timed_build(store, out, args.jobs)))
        changed, run_id = one_run_changed(store)
        rows.append((f"one run changed ({run_id})", timed_build(changed, out, args.jobs)))

    print(f"{kind} {args.source}: {len(store.runs)} runs, {n_versions} versions, "
          f"{n_code} with code (built in {made:.1f} s); --jobs {args.jobs}; load average at "
          f"start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} CPUs, Python "
          f"{sys.version.split()[0]}\n")  # fmt: skip
    print("| build | wall s | CPU s | pages built | reused |\n|---|---|---|---|---|")
    for label, r in rows:
        print(f"| {label} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['built']} | {r['reused']} |")
    cold, again = rows[0][1], rows[1][1]
    print(f"\nunchanged / cold wall time: {again['wall'] / cold['wall']:.3f}")
    mib = 2**20
    total = sum(on_disk.values())
    print("\n| `runs/` after the cold build | MiB |\n|---|---|")
    for kind, label in (("_code", "shared code and diff pages (`_code/`)"),
                        ("pages", "run pages and index"), ("figures", "figures (SVG)"),
                        ("other", "stylesheet, manifest")):  # fmt: skip
        print(f"| {label} | {on_disk[kind] / mib:.1f} |")
    print(f"| **total** | **{total / mib:.1f}** |")
    print(f"\ncode text of every version's files: {total_code / mib:.1f} MiB; distinct file "
          f"texts: {distinct_code / mib:.1f} MiB; runs/ / distinct code: "
          f"{total / distinct_code:.2f}; links from run pages to `_code/` pages: {links}, "
          f"to {pages} distinct pages")  # fmt: skip


if __name__ == "__main__":
    main()
