"""Write imported runs into an archive (docs/archive.md), atomically per run.

Everything that can refuse a run is checked before DEST is touched: names, ``run.json``'s size,
the total size of what the run would write. Then DEST is locked (:mod:`.destination`: one writer
at a time, real folders only) and every run is staged in a temporary directory inside DEST
(``DEST/.import-*``, ignored by the reader because it starts with ``.``), complete with a copy of
``archive.yaml``; the staged archive is opened with :func:`~automd_analysis.archive.open_archive`
and must read without a single problem. Only then is each run directory moved into place (a
replaced run is swapped atomically with the new one). Any failure before that leaves DEST as it
was; DEST never lacks a run it had.

JSON is written with sorted keys, one-space indentation and ``\\n`` endings; file contents depend
only on the source and the options, so importing the same source twice gives byte-identical runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

from automd_analysis._atomic import write_text_atomic
from automd_analysis._version import __version__
from automd_analysis.archive import MAX_JSON_BYTES, NAME_PATTERN, open_archive
from automd_analysis.errors import ArchiveError
from automd_analysis.importers._common import iso
from automd_analysis.importers._source import Limits, SourceDir
from automd_analysis.importers.destination import Dest, dest_error, locked_dest
from automd_analysis.importers.journal import render_journal
from automd_analysis.importers.model import FINAL_VERSION, ImportedNode, ImportedRun
from automd_analysis.importers.problems import SourceError, problem
from automd_analysis.importers.text import repair_text

__all__ = ["RUN_SCHEMA_VERSION", "WrittenRun", "dump_json", "write_runs"]

#: ``run.json`` schema version written by the importers (2 adds ``tokens.source``).
RUN_SCHEMA_VERSION = 2


def dump_json(payload: dict) -> str:
    """JSON text with sorted keys, one-space indent and a final newline (as the demo harness).

    Parameters
    ----------
    payload : dict

    Returns
    -------
    str

    See Also
    --------
    write_runs

    References
    ----------
    docs/archive.md (metadata files are strict JSON).

    Examples
    --------
    >>> print(dump_json({"b": 1, "a": [None]}), end="")
    {
     "a": [
      null
     ],
     "b": 1
    }
    """
    return json.dumps(payload, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


@dataclass(frozen=True)
class WrittenRun:
    """Where one run went and whether an existing run was replaced."""

    run_id: str
    path: Path
    replaced: bool


def _write(path: Path, text: str) -> None:
    if not path.parent.is_dir():
        path.parent.mkdir(parents=True)
    path.write_bytes(repair_text(text)[0].encode("utf-8"))  # the importer recorded repairs


def _archive_yaml(dest: Path, runs: list[ImportedRun]) -> tuple[str, bool]:
    """The text ``archive.yaml`` must have, and whether it differs from the file on disk: the
    runs' experiments declared, and their process-only tasks (:func:`_declare_process_tasks`)."""
    experiments = {r.experiment for r in runs}
    meta_path = dest / "archive.yaml"
    if os.path.lexists(meta_path):
        try:
            meta = open_archive(dest).meta
            raw = yaml.safe_load(meta_path.read_text(encoding="utf-8"))
        except (ArchiveError, OSError, yaml.YAMLError) as exc:
            raise SourceError(
                f"DEST holds an archive.yaml that cannot be used: {exc}",
                path=meta_path,
                code="import.archive_invalid",
                fix="fix archive.yaml (docs/archive.md) or import into a new directory",
            ) from None
        missing = sorted(experiments - set(meta.experiments))
        declared = _declare_process_tasks(raw, meta.process_tasks, runs)
        if not missing and not declared:
            return meta_path.read_text(encoding="utf-8"), False
        raw["experiments"] = {
            **raw["experiments"],
            **{e: "Imported agent runs (automd import)" for e in missing},
        }
        return yaml.safe_dump(raw, sort_keys=False, allow_unicode=False), True
    name = dest.resolve().name
    if not NAME_PATTERN.match(name):
        name = "imported"
    raw = {
        "schema_version": 1,
        "name": name,
        "description": "Agent runs imported with automd import (docs/importing.md).",
        "experiments": {e: "Imported agent runs (automd import)" for e in sorted(experiments)},
        "provenance": {"built_by": "automd import", "version": __version__},
    }
    _declare_process_tasks(raw, {}, runs)
    return yaml.safe_dump(raw, sort_keys=False, allow_unicode=False), True


def _declare_process_tasks(raw: dict, known: dict, runs: list[ImportedRun]) -> bool:
    """Add the runs' process-only tasks that ``archive.yaml`` (``raw``, read as ``known``) does
    not declare yet; a run whose declaration differs from the one kept records
    ``import.process_task_kept``. Returns whether ``raw`` changed."""
    kept = dict(known)
    changed = False
    for run in runs:
        task = run.process_task
        if task is None:
            continue
        if task.id not in kept:
            kept[task.id] = task
            raw.setdefault("process_tasks", {})[task.id] = task.model_dump(
                mode="json", exclude={"id"}
            )
            changed = True
        elif kept[task.id] != task:
            run.problems.append(
                problem(
                    "import.process_task_kept",
                    f"archive.yaml declares task {task.id!r} with "
                    f"{kept[task.id].model_dump(exclude={'id'})}; this run's log says "
                    f"{task.model_dump(exclude={'id'})}; the archive's declaration is kept",
                    path="archive.yaml",
                    fix="edit archive.yaml process_tasks if the run's values are the right ones",
                )
            )
    return changed


def _check_names(run: ImportedRun) -> None:
    for what, value in (
        ("experiment", run.experiment),
        ("agent", run.agent),
        ("task", run.task),
    ):
        if not isinstance(value, str) or not NAME_PATTERN.match(value) or len(value) > 200:
            raise SourceError(
                f"{what} name {value!r} is not allowed in an archive",
                code="import.options_invalid",
                fix=f"names must match {NAME_PATTERN.pattern} (at most 200 characters)",
            )
    if not 0 <= run.rep <= 999_999:
        raise SourceError(
            f"--rep {run.rep} is outside 0-999999",
            code="import.options_invalid",
            fix="pass --rep between 0 and 999999",
        )


def _log_plan(source: SourceDir, run: ImportedRun) -> dict[str, str]:
    """Raw logs that can be copied; oversize ones become recorded problems."""
    plan = {}
    for dest, rel in sorted(run.raw_logs.items()):
        size = source.file_size(rel, 1 << 62, what="log")
        if size > source.limits.copy_bytes:
            run.problems.append(
                problem(
                    "import.optional_file_skipped",
                    f"{rel} ({size} bytes) is above the copy cap and was not copied to logs/",
                    path=rel,
                )
            )
            continue
        plan[dest] = rel
    return plan


def _notes(run: ImportedRun) -> str:
    tokens = f"tokens from {run.tokens.source}" if run.tokens else "no token counts"
    codes = sorted({p.code for p in run.problems})
    text = (
        f"Imported by automd import {run.format} from '{run.source_name}' (automd-analysis "
        f"{__version__}); prediction files bound by {run.binding}; {tokens}."
    )
    if codes:
        text += f" Problems: {', '.join(codes)} (see journal.md)."
    return text


def _fill(run_dir: Path, run: ImportedRun, limits: Limits | None) -> None:
    """Write one run's files into the (temporary) run directory ``run_dir``."""
    source = SourceDir(run.source, limits)
    logs = _log_plan(source, run)  # first: skipped logs become problems the notes count
    for node in run.nodes:
        for name, text in node.code:
            _write(run_dir / "code" / node.node_id / name, text)
    for node in run.versions:
        _write_version(run_dir, run, node, source)
    if run.final_file is not None:
        _write_final_version(run_dir, run, source)
    if run.selected_version is not None and _has_file(run, run.selected_version):
        shutil.copyfile(
            run_dir / "versions" / run.selected_version / "submission.csv",
            run_dir / "submission.csv",
        )
    for dest, rel in logs.items():
        try:
            source.copy_to(rel, run_dir / "logs" / dest, source.limits.copy_bytes)
        except SourceError as exc:
            if exc.code not in ("import.unreadable", "import.not_a_file", "import.too_large"):
                raise
            with contextlib.suppress(FileNotFoundError):
                (run_dir / "logs" / dest).unlink()
            run.problems.append(
                problem(
                    "import.optional_file_skipped", f"{rel} was not copied: {exc.message}", path=rel
                )  # fmt: skip
            )
    for dest, text in sorted(run.log_texts.items()):
        _write(run_dir / "logs" / dest, text)
    _write(run_dir / "run.json", _run_json_text(run))
    _write(run_dir / "journal.md", render_journal(run))


def _has_file(run: ImportedRun, version: str) -> bool:
    """Whether ``version`` has a prediction file (only a process-only run has versions
    without one)."""
    if run.process_task is None or version == FINAL_VERSION:
        return True
    return any(n.node_id == version and n.prediction is not None for n in run.versions)


def _write_version(run_dir: Path, run: ImportedRun, node: ImportedNode, source: SourceDir) -> None:
    """``versions/<node id>/``: the node's prediction file and its ``meta.json``."""
    vdir = run_dir / "versions" / node.node_id
    if node.prediction is not None:  # a process-only run's version is its code alone
        source.copy_to(node.prediction, vdir / "submission.csv", source.limits.prediction_bytes)
    meta = {
        "version": node.node_id,
        "created_at": iso(node.created_at or run.ended_at),
        "step": node.ordinal,
        "parent": node.parent if run.search == "tree" else None,
        "reported_val_score": node.metric.value,
        "faulty": bool(node.buggy),
        "code_files": [f"code/{node.node_id}/{name}" for name, _ in node.code],
    }
    if node.tokens is not None:
        meta["tokens"] = int(node.tokens)
    if node.stage is not None:
        meta["stage"] = node.stage
    _write(vdir / "meta.json", dump_json(meta))


def _write_final_version(run_dir: Path, run: ImportedRun, source: SourceDir) -> None:
    """``versions/final/``: the run's final file, its code and ``meta.json`` (last step)."""
    vdir = run_dir / "versions" / FINAL_VERSION
    source.copy_to(run.final_file, vdir / "submission.csv", source.limits.prediction_bytes)
    for name, text in run.final_code:
        _write(run_dir / "code" / FINAL_VERSION / name, text)
    meta = {
        "version": FINAL_VERSION,
        "created_at": iso(run.final_created_at or run.ended_at),
        "step": max((n.ordinal for n in run.nodes), default=1),
        "parent": None,
        "reported_val_score": None,
        "faulty": False,
        "code_files": [f"code/{FINAL_VERSION}/{name}" for name, _ in run.final_code],
    }
    _write(vdir / "meta.json", dump_json(meta))


def _steps_payload(run: ImportedRun) -> list[dict] | None:
    """``run.json``'s ``steps``: one entry per development step (``None`` when not recorded)."""
    if not (run.steps_in_run_json and run.nodes):
        return None
    steps = []
    for n in run.nodes:
        if not n.is_step:
            continue
        s = {
            "step": n.ordinal,
            "ok": not n.buggy,
            "reported_val_score": n.metric.value,
            "created_at": None if n.created_at is None else iso(n.created_at),
            "version": n.node_id if n.prediction is not None or run.process_task else None,
        }
        if run.search == "tree":
            s["node"], s["parent"] = n.node_id, n.parent
        steps.append(s)
    return steps


def _run_json_text(run: ImportedRun) -> str:
    """The text of ``run.json`` (compact when the indented form is above the size cap)."""
    steps = _steps_payload(run)
    payload = {
        "schema_version": RUN_SCHEMA_VERSION,
        "experiment": run.experiment,
        "agent": run.agent,
        "task": run.task,
        "rep": run.rep,
        "llm": run.llm,
        "reference": False,
        "search": run.search,
        "objective": None,
        "started_at": iso(run.started_at),
        "ended_at": iso(run.ended_at),
        "budget_minutes": run.budget_minutes,
        "tokens": None
        if run.tokens is None
        else {**run.tokens.counts(), "source": run.tokens.source},
        "selection": {"rule": run.selection.rule, "selected_version": run.selected_version},
        "reported_val_score": run.reported_val_score,
        "steps": steps,
        "notes": _notes(run),
    }
    if run.incomplete:
        payload["incomplete"] = True
    text = dump_json(payload)
    if len(text.encode()) > MAX_JSON_BYTES:  # many steps: the compact form is still valid
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True) + "\n"
    if len(text.encode()) > MAX_JSON_BYTES:
        raise SourceError(
            f"run.json would have {len(text.encode())} bytes ({len(steps or [])} steps), above "
            f"the archive's limit of {MAX_JSON_BYTES}",
            code="import.too_large",
            fix="the archive format caps run.json at 1 MiB; split the run or drop steps in a copy "
            "of the log",
        )
    return text


def _parts(run: ImportedRun) -> tuple[str, str, str, str]:
    return (run.experiment, run.agent, run.task, f"rep{run.rep}")


def _target(root: Path, run: ImportedRun) -> Path:
    return root.joinpath(*_parts(run))


def _output_bytes(run: ImportedRun, limits: Limits | None) -> int:
    """What writing ``run`` costs in bytes (prediction files, code, logs), before writing it."""
    source = SourceDir(run.source, limits)
    files = [n.prediction for n in run.versions if n.prediction is not None]
    files += [run.final_file] if run.final_file else []
    size = sum(source.file_size(rel, source.limits.prediction_bytes) for rel in files)
    size += sum(len(t) for n in run.nodes for _name, t in n.code)
    size += sum(len(t) for _name, t in run.final_code) + sum(map(len, run.log_texts.values()))
    size += sum(min(source.file_size(rel, 1 << 62, what="log"), source.limits.copy_bytes)
                for rel in run.raw_logs.values())  # fmt: skip
    return size


def _check_runs(runs: list[ImportedRun], limits: Limits | None) -> None:
    """Everything that refuses a run before DEST is touched: names, distinct run ids, the size
    of ``run.json`` and of everything the run would write."""
    cap = (limits or Limits()).output_bytes
    seen: set[str] = set()
    for run in runs:
        _check_names(run)
        if run.run_id in seen:
            raise SourceError(
                f"two imported runs map to {run.run_id}",
                code="import.options_invalid",
                fix="use distinct --rep values",
            )
        seen.add(run.run_id)
        _run_json_text(run)
        size = _output_bytes(run, limits)
        if size > cap:
            raise SourceError(
                f"run {run.run_id} would write {size} bytes into the archive, above the cap of "
                f"{cap}",
                code="import.too_large",
                fix="bind fewer prediction files (--predictions) or split the run",
                details={"size": size, "limit": cap},
            )


def write_runs(
    dest: str | Path,
    runs: list[ImportedRun],
    *,
    replace: bool = False,
    limits: Limits | None = None,
):
    """Write ``runs`` into the archive ``dest`` (created when missing), all or nothing.

    Parameters
    ----------
    dest : str or Path
        The archive directory; ``archive.yaml`` is created when missing, and an experiment the
        runs use is declared in it when it is not.
    runs : list of ImportedRun
    replace : bool
        Replace runs that already exist; without it an existing run is ``import.run_exists``.
    limits : Limits, optional
        Size caps for the files copied from each run's source.

    Returns
    -------
    list of WrittenRun

    Raises
    ------
    SourceError
        ``import.run_exists``, ``import.archive_invalid``, ``import.options_invalid`` (a name not
        allowed in an archive), ``import.too_large`` (``run.json`` or the run's output over its
        cap), ``import.dest_unsafe`` (a symlink on the way to the run),
        ``import.dest_unwritable``, ``import.internal_invalid`` (the staged archive did not read
        cleanly), or any source error met while copying. Nothing is written then.

    See Also
    --------
    automd_analysis.importers.destination.locked_dest : the lock and the atomic swap.
    automd_analysis.archive.open_archive : the reader every written run must pass.

    References
    ----------
    docs/archive.md (archive format), docs/importing.md.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> write_runs(pathlib.Path(tempfile.mkdtemp()) / "archive", [])
    []
    """
    if not runs:
        return []
    _check_runs(runs, limits)
    with locked_dest(dest) as lock:
        for run in runs:
            if lock.run_exists(_parts(run)) and not replace:
                raise SourceError(
                    f"run {run.run_id} already exists in the archive",
                    path=_target(lock.path, run),
                    code="import.run_exists",
                    fix="pass --replace to overwrite it, or import under another --rep",
                )
        meta_text, meta_changed = _archive_yaml(lock.path, runs)
        staging = lock.stage()
        try:
            return _stage_and_commit(lock, staging, runs, limits, meta_text, meta_changed)
        finally:
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(staging)


def _stage_and_commit(lock: Dest, staging: Path, runs: list[ImportedRun], limits, meta_text: str,
                      meta_changed: bool) -> list[WrittenRun]:  # fmt: skip
    try:
        _write(staging / "archive.yaml", meta_text)
        for run in runs:
            _fill(_target(staging, run), run, limits)
    except OSError as exc:
        raise dest_error(exc, lock.path, "write the staged run") from None
    staged = open_archive(staging)
    read_ids = {r.run_id for r in staged.runs()}
    if staged.problems or read_ids != {r.run_id for r in runs}:
        first = staged.problems[0] if staged.problems else None
        raise SourceError(
            "the imported run does not read cleanly: "
            + (f"{first.code}: {first}" if first else "a run is missing"),
            code="import.internal_invalid",
            fix="please report this importer bug with the source layout",
            details={"problems": [p.to_dict() for p in staged.problems]},
        )
    if meta_changed:
        try:
            write_text_atomic(lock.path / "archive.yaml", meta_text)
        except OSError as exc:
            raise dest_error(exc, lock.path / "archive.yaml", "write archive.yaml") from None
    out = []
    for run in runs:
        replaced = lock.commit(_target(staging, run), _parts(run), staging)
        out.append(WrittenRun(run.run_id, _target(lock.path, run), replaced))
    return out
