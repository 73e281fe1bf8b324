"""The demo generator's commands, plugged into ``automd`` (entry point group ``automd.commands``).

``automd demo data``     build the demo tasks from real public cohorts (+ a synthetic sepsis cohort)
``automd demo archive``  the scripted-agent demo archive on those tasks
``automd baselines``     the paper's simple baselines (App. D) as runs of agent ``baseline``

Exit codes: 0 success; 2 usage, data or archive error (message names the file and the fix).
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from pathlib import Path

import typer
import yaml

from automd_analysis._atomic import check_writable_dir, write_text_atomic
from automd_analysis.cli._apps import GROUP_SETTINGS, HELP_SETTINGS, DataOpt, ManifestsOpt
from automd_analysis.errors import ArchiveError, AutomdError
from automd_analysis.tasks import data_root

__all__ = [
    "BUILD_STAMP",
    "build_stamp",
    "demo_app",
    "ensure_archive_yaml",
    "parse_seeds",
    "register",
]

demo_app = typer.Typer(
    help="Build the demo tasks (real public cohorts) and the demo archive.", **GROUP_SETTINGS
)
baselines_app = typer.Typer(**HELP_SETTINGS)

DEFAULT_DEMO_ARCHIVE = Path("runs_archive/demo")
#: File in the demo archive recording the inputs it was built from (ignored by the reader: hidden).
BUILD_STAMP = ".build-stamp"


def build_stamp(*, size: str, seed: int, tasks, data, manifests) -> str:
    """sha256 of everything a demo archive build depends on.

    The source of the ``automd_demo`` package and of the metric code its agents call, the
    manifests of the tasks (they pin the sha256 of every task file) and the options. Same stamp
    => the build would write the same bytes.
    """
    import hashlib

    import automd_analysis
    import automd_demo
    from automd_analysis.tasks import load_manifests

    h = hashlib.sha256()
    h.update(repr((size, seed, tuple(tasks), automd_analysis.__version__)).encode())
    for package in (automd_demo, automd_analysis):
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".md", ".j2") and "__pycache__" not in path.parts:
                h.update(path.relative_to(root).as_posix().encode() + b"\0")
                h.update(hashlib.sha256(path.read_bytes()).digest())
    found = load_manifests(manifests)
    for task_id in sorted(tasks):
        manifest = found.get(task_id)
        h.update(task_id.encode() + b"\0")
        h.update(b"" if manifest is None else manifest.model_dump_json().encode())
    h.update(str(Path(data).resolve() if data is not None else "").encode())
    return h.hexdigest()


DEFAULT_BASELINE_ARCHIVE = Path("runs_archive/baselines")


def _fail(exc: AutomdError) -> None:
    typer.echo(f"automd: error: {exc}", err=True)
    raise typer.Exit(2)


def parse_seeds(text: str) -> list[int]:
    """``"0-4"`` -> [0, 1, 2, 3, 4]; ``"0,2,7"``; ``"3"``. Raises ValueError on anything else."""
    seeds: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise ValueError(f"bad seed list {text!r}: use e.g. 0-4 or 0,1,2")
        lo = int(m[1])
        hi = int(m[2]) if m[2] else lo
        if hi < lo or hi - lo > 999:
            raise ValueError(f"bad seed range {part!r}")
        seeds.update(range(lo, hi + 1))
    return sorted(seeds)


@demo_app.command("archive")
def demo_archive_command(
    archive: Path = typer.Option(DEFAULT_DEMO_ARCHIVE, "--archive", help="Archive directory."),
    data: Path | None = DataOpt,
    manifests: Path | None = ManifestsOpt,
    size: str = typer.Option(
        "small", "--size", help="small (default, a few minutes), medium or large (more steps/reps)."
    ),
    jobs: int = typer.Option(2, "--jobs", min=1, help="Worker processes."),
    seed: int = typer.Option(
        42, "--seed", help="Archive seed (every random step derives from it)."
    ),
    task: list[str] | None = typer.Option(
        None, "--task", help="Only these tasks (repeatable; default: every demo task)."
    ),
    force: bool = typer.Option(
        False, "--force", help="Rebuild even when the archive is up to date with its inputs."
    ),
) -> None:
    """Build the scripted-agent demo archive on the demo tasks (after `automd demo data`).

    The agents are scripted policies that really fit models on the public task files; no LLM is
    used; timestamps and token counts are simulated. Same command => byte-identical archive, so an
    archive whose inputs (harness code, task files, options) have not changed since it was built
    is kept as it is (--force rebuilds it).
    """
    try:
        check_writable_dir(archive, "--archive", code="archive.unwritable")
    except AutomdError as exc:
        _fail(exc)
    from tqdm import tqdm

    from automd_demo.harness.build import DEMO_TASKS, SIZES, build_archive, plan

    if size not in SIZES:
        _fail(ArchiveError(f"unknown size {size!r}", location="--size", code="archive.size",
                           fix="use small, medium or large"))  # fmt: skip
    tasks = tuple(task) if task else DEMO_TASKS
    stamp = build_stamp(size=size, seed=seed, tasks=tasks, data=data, manifests=manifests)
    stamp_file = archive / BUILD_STAMP
    built = (archive / "archive.yaml").is_file() and stamp_file.is_file()
    if not force and built and stamp_file.read_text(encoding="utf-8").strip() == stamp:
        typer.echo(f"{archive} is up to date with its inputs (--force rebuilds it)")
        return
    specs = plan(size, tasks=tasks)
    start = time.perf_counter()
    bars: list = []  # the bar appears with the first finished run, not before a quick refusal

    def progress(summary: dict) -> None:
        if not bars:
            bars.append(tqdm(total=len(specs), desc="demo archive", unit="run", file=sys.stderr))
        bars[0].update(1)
        bars[0].set_postfix_str(summary["run"], refresh=False)

    try:
        result = build_archive(
            archive, data=data, manifests=manifests, size=size, jobs=jobs, seed=seed,
            specs=specs, progress=progress,
        )  # fmt: skip
    except AutomdError as exc:
        for bar in bars:
            bar.close()
        _fail(exc)
    for bar in bars:
        bar.close()
    write_text_atomic(stamp_file, stamp + "\n")
    runs = result["runs"]
    agents = Counter(r["agent"] for r in runs)
    versions = sum(r.get("versions", 1) for r in runs)
    invalid = sum(1 for r in runs if r["agent"] != "baseline" and not r["expected_valid"])
    violations = sum(1 for r in runs if r.get("real_time_violation"))
    typer.echo(
        f"built {result['archive']}: {len(runs)} runs "
        f"({', '.join(f'{a} {n}' for a, n in sorted(agents.items()))}), {versions} versions, "
        f"{invalid} runs with a malformed selected submission, {violations} real-time-rule "
        f"violation(s), in {time.perf_counter() - start:.0f} s"
    )


@baselines_app.command("baselines")
def baselines_command(
    task_id: str = typer.Argument(..., help="Task id (any task with a manifest and public files)."),
    seeds: str = typer.Option("0-4", "--seeds", help="Seeds = repetitions, e.g. 0-4 or 0,2."),
    archive: Path = typer.Option(DEFAULT_BASELINE_ARCHIVE, "--archive", help="Archive directory."),
    experiment: str = typer.Option("main", "--experiment", help="Experiment of the runs."),
    data: Path | None = DataOpt,
    manifests: Path | None = ManifestsOpt,
    force: bool = typer.Option(False, "--force", help="Refit seeds whose run already exists."),
) -> None:
    """Fit the simple baseline of paper App. D and write runs of agent `baseline` (reference).

    Runs go to <archive>/<experiment>/baseline/<task>/rep<seed>; existing reps are kept unless
    --force. archive.yaml is created (or the experiment added to it) when needed.
    """
    try:
        check_writable_dir(archive, "--archive", code="archive.unwritable")
    except AutomdError as exc:
        _fail(exc)
    from automd_analysis.archive.safe import NAME_PATTERN
    from automd_analysis.tasks import get_task
    from automd_demo.harness.baseline_runs import write_baseline_run

    try:
        seed_list = parse_seeds(seeds)
    except ValueError as exc:
        _fail(AutomdError(str(exc), location="--seeds", code="usage.seeds", fix="e.g. --seeds 0-4"))
    if not NAME_PATTERN.match(experiment):
        _fail(AutomdError(f"bad experiment name {experiment!r}", location="--experiment",
                          code="usage.experiment", fix="letters, digits, '_', '.', '-'"))  # fmt: skip
    try:
        task = get_task(task_id, data=data, manifests=manifests)
        for key, spec in task.manifest.files.items():  # the inputs, before anything is written
            if spec.role == "public":
                task.verified_path(key)
        ensure_archive_yaml(archive, experiment)
        for seed in seed_list:
            run_dir = archive / experiment / "baseline" / task.id / f"rep{seed}"
            if run_dir.exists() and not force:
                typer.echo(f"kept {run_dir} (exists; --force refits it)")
                continue
            info = write_baseline_run(task, seed, run_dir, experiment=experiment)
            extra = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                              for k, v in sorted(info["details"].items()))  # fmt: skip
            typer.echo(
                f"wrote {run_dir} (fit {info['fit_seconds']:.1f} s{', ' + extra if extra else ''})"
            )
    except AutomdError as exc:
        _fail(exc)


def ensure_archive_yaml(archive: Path, experiment: str) -> None:
    """Create ``archive.yaml`` (or declare ``experiment`` in it) - written atomically."""
    from automd_analysis._version import __version__

    path = archive / "archive.yaml"
    if path.exists():
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ArchiveError(f"archive.yaml is not readable YAML: {exc}", path=path,
                               code="archive.invalid_yaml") from None  # fmt: skip
        if not isinstance(doc, dict) or not isinstance(doc.get("experiments"), dict):
            raise ArchiveError("archive.yaml has no `experiments:` mapping", path=path,
                               code="archive.invalid_yaml",
                               fix="see docs/archive.md")  # fmt: skip
        if experiment in doc["experiments"]:
            return
        doc["experiments"][experiment] = "Simple baselines (paper App. D)"
    else:
        archive.mkdir(parents=True, exist_ok=True)
        doc = {
            "schema_version": 1,
            "name": archive.resolve().name,
            "description": "Simple baseline runs (paper App. D) written by `automd baselines`.",
            "experiments": {experiment: "Simple baselines (paper App. D)"},
            "provenance": {"built_by": "automd baselines", "version": __version__},
        }
    write_text_atomic(path, yaml.safe_dump(doc, sort_keys=True))


@demo_app.command("data")
def demo_data_command(
    data: Path | None = DataOpt,
    manifests: Path | None = ManifestsOpt,
    task: list[str] | None = typer.Option(
        None, "--task", help="Build only this demo task (repeatable)."
    ),
    repin: bool = typer.Option(
        False, "--repin", help="Write the built files' sha256 into the demo manifests."
    ),
) -> None:
    """Build the demo tasks (real public cohorts + a synthetic sepsis cohort) under the data root.

    Deterministic (seed 42): a rebuild writes byte-identical files whose sha256 match the
    manifests. Exit 2 if a built file does not match its pinned sha256 (unless --repin).
    """
    root = data_root(data)
    try:
        check_writable_dir(root, "--data", code="data.unwritable")
    except AutomdError as exc:
        _fail(exc)
    from automd_demo.task_files import build_demo_data, repin_demo_manifests

    start = time.perf_counter()

    def progress(task_id: str) -> None:
        print(f"building {task_id} ...", file=sys.stderr, flush=True)

    try:
        built = build_demo_data(root, manifests, task or None, progress=progress)
        if repin:
            changed = repin_demo_manifests(built, manifests)
            for task_id in changed:
                typer.echo(f"re-pinned {task_id}")
    except AutomdError as exc:
        _fail(exc)
    elapsed = time.perf_counter() - start
    tasks = sorted({b.task for b in built})
    typer.echo(
        f"built {len(tasks)} demo tasks ({len(built)} files) under {root} in {elapsed:.1f} s"
    )
    mismatched = [b for b in built if not b.matches]
    if mismatched and not repin:
        for b in mismatched:
            expected = b.expected[:12] + "..." if b.expected else "unpinned"
            typer.echo(
                f"  sha256 mismatch: {b.task}/{b.key}: built {b.sha256[:12]}..., "
                f"manifest {expected}",
                err=True,
            )
        typer.echo(
            "automd: error: the build does not reproduce the pinned files; check the SurvSet, "
            "numpy and pandas versions, or re-pin deliberately with --repin",
            err=True,
        )
        raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    """Add ``automd demo ...`` and ``automd baselines`` to the ``automd`` application."""
    app.add_typer(demo_app, name="demo")
    app.registered_commands.extend(baselines_app.registered_commands)
