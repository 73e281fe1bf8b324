"""Discover the runs of an archive: ``<experiment>/<agent>/<task>/rep<k>/`` (docs/archive.md).

Nothing unreadable is dropped silently. What cannot be read becomes an
:class:`~automd_analysis.errors.ArchiveError` in :attr:`Archive.problems` whose
``details["effect"]`` says what was left out:

``"run skipped"``           run.json missing/invalid/mismatched, bad directory names
``"version skipped"``       a version's meta.json missing/invalid/mismatched, unsafe code_files
``"annotations skipped"``   annotations.json unreadable or not matching the codebook
``"submission unreadable"`` a submission.csv that is a symlink leaving the archive / not a file
``"directory skipped"``     an undeclared experiment, an entry resolving outside the archive
``"reference dangling"``    selected/step/parent version ids naming nothing archived (kept)
``"reference ignored"``     ``reference: true`` on an agent not declared in ``reference_agents``
                            (the run is kept as an ordinary, ranked run)
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import yaml
from pydantic import ValidationError

from automd_analysis.archive.codebook import validate_annotations
from automd_analysis.archive.model import ArchiveMeta, Run, Step, Version
from automd_analysis.archive.safe import (
    MAX_JSON_BYTES,
    REP_PATTERN,
    RESERVED_VERSION_NAMES,
    check_inside_root,
    check_name,
    exists_or_link,
    json_loads_strict,
    read_bounded,
    resolve_inside,
)
from automd_analysis.archive.schema import (
    ArchiveYaml,
    RunJson,
    VersionJson,
    load_json_model,
    pydantic_error,
)
from automd_analysis.codebook import Annotations
from automd_analysis.errors import ArchiveError
from automd_analysis.tasks import ProcessTask

__all__ = ["DEFAULT_ROLES", "Archive", "open_archive"]

#: Experiment ids of the analysis roles when ``archive.yaml`` has no ``roles:``.
DEFAULT_ROLES = {"main": "main", "objectives": "objectives", "llm": "llm"}


def _problem(exc: ArchiveError, run_id: str | None, effect: str) -> ArchiveError:
    exc.details = {**exc.details, "run_id": run_id, "effect": effect}
    return exc


def _require_file(path: Path, code: str, fix: str) -> None:
    """``code`` (``<name> not found``) unless ``path`` exists (a dangling link counts)."""
    if not exists_or_link(path):
        raise ArchiveError(f"{path.name} not found", path=path, code=code, fix=fix)


def _utc(dt: datetime | None) -> datetime | None:
    return None if dt is None else dt.astimezone(UTC)


@dataclass
class Archive:
    """An opened runs archive; create it with :func:`open_archive`.

    Attributes
    ----------
    root : Path
        The archive directory (symlinks resolved).
    meta : ArchiveMeta
        ``archive.yaml``.
    """

    root: Path
    meta: ArchiveMeta
    _runs: list[Run] | None = field(default=None, repr=False)
    _problems: list[ArchiveError] = field(default_factory=list, repr=False)

    @property
    def name(self) -> str:
        """The archive name from ``archive.yaml``."""
        return self.meta.name

    def runs(self) -> list[Run]:
        """Every readable run, sorted by ``(experiment, agent, task, rep)``.

        Discovery happens on the first call; runs that cannot be read are in :attr:`problems`.
        """
        if self._runs is None:
            self._runs, self._problems = _discover(self.root, self.meta)
        return list(self._runs)

    @property
    def problems(self) -> list[ArchiveError]:
        """Structured errors found while reading, in discovery order.

        Each has ``details["run_id"]`` (``None`` outside a run) and ``details["effect"]`` (see the
        module docstring).
        """
        self.runs()
        return list(self._problems)

    def run(self, run_id: str) -> Run:
        """The run ``"<experiment>/<agent>/<task>/rep<k>"``.

        Raises
        ------
        ArchiveError
            ``archive.run_unknown`` if no readable run has this id.
        """
        for r in self.runs():
            if r.run_id == run_id:
                return r
        raise ArchiveError(
            f"no readable run {run_id!r}",
            path=self.root,
            code="archive.run_unknown",
            fix="list runs with Archive.runs(); unreadable runs are in Archive.problems",
        )


def open_archive(path: str | Path) -> Archive:
    """Open the runs archive at ``path`` (read-only; runs are discovered on first use).

    Parameters
    ----------
    path : str or Path
        The archive directory, holding ``archive.yaml``.

    Returns
    -------
    Archive

    Raises
    ------
    ArchiveError
        ``archive.missing`` if the directory or its ``archive.yaml`` does not exist;
        ``archive.unreadable`` if ``archive.yaml`` is not UTF-8 YAML; ``archive.invalid`` if it
        does not match schema version 1 (docs/archive.md) or a role names an undeclared
        experiment; ``archive.too_large`` above 1 MiB.
    """
    given = Path(path)
    if not given.is_dir():
        raise ArchiveError(
            "this path is a file, not an archive directory"
            if given.exists()
            else "archive directory not found",
            path=given,
            code="archive.missing",
            fix="pass the directory that holds archive.yaml",
        )
    root = given.resolve()
    meta_path = root / "archive.yaml"
    _require_file(
        meta_path,
        "archive.missing",
        "an archive directory must contain archive.yaml (docs/archive.md)",
    )
    data = read_bounded(meta_path, MAX_JSON_BYTES, root)
    try:
        raw = yaml.safe_load(data.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ArchiveError(
            f"archive.yaml is not readable YAML: {exc}",
            path=meta_path,
            code="archive.unreadable",
            fix="fix the YAML syntax",
        ) from None
    if not isinstance(raw, dict):
        raise ArchiveError(
            "archive.yaml must be a mapping",
            path=meta_path,
            code="archive.invalid",
            fix="see docs/archive.md",
        )
    try:
        parsed = ArchiveYaml.model_validate(raw)
    except ValidationError as exc:
        raise pydantic_error(exc, meta_path, "archive.invalid", "see docs/archive.md") from None
    for exp in parsed.experiments:
        check_name(exp, meta_path, "experiment")
    for agent in parsed.reference_agents or ():
        check_name(agent, meta_path, "reference agent")
    roles = dict(DEFAULT_ROLES)
    for role, exp in (parsed.roles or {}).items():
        if exp not in parsed.experiments:
            raise ArchiveError(
                f"role {role!r} names undeclared experiment {exp!r}",
                path=meta_path,
                location=f"roles.{role}",
                code="archive.invalid",
                fix="declare the experiment under `experiments:`",
            )
        roles[role] = exp
    meta = ArchiveMeta(
        name=parsed.name,
        description=parsed.description,
        experiments=dict(parsed.experiments),
        roles=roles,
        provenance=dict(parsed.provenance),
        reference_agents=tuple(
            parsed.reference_agents if parsed.reference_agents is not None else ("baseline",)
        ),
        process_tasks=_process_tasks(parsed.process_tasks or {}, meta_path),
    )
    return Archive(root=root, meta=meta)


def _process_tasks(raw: dict, meta_path: Path) -> dict[str, ProcessTask]:
    """``archive.yaml`` ``process_tasks`` as :class:`ProcessTask` declarations (by task id)."""
    out = {}
    for task_id, fields in sorted(raw.items()):
        check_name(task_id, meta_path, "process task")
        try:
            if not isinstance(fields, dict) or "id" in fields:
                raise ValueError("a declaration is a mapping of ProcessTask fields without `id`")
            out[task_id] = ProcessTask.model_validate({**fields, "id": task_id})
        except (ValidationError, ValueError) as exc:
            first = exc.errors()[0] if isinstance(exc, ValidationError) else {"loc": (), "msg": exc}
            loc = ".".join(str(p) for p in first["loc"])
            raise ArchiveError(
                f"process task {task_id!r} is invalid: {first['msg']}",
                path=meta_path,
                location=f"process_tasks.{task_id}" + (f".{loc}" if loc else ""),
                code="archive.invalid",
                fix="see docs/archive.md, 'Process-only tasks'",
            ) from None
    return out


def _subdirs(path: Path, root: Path, problems: list, run_id: str | None) -> list[Path]:
    """Non-hidden subdirectories of ``path`` by name; entries leaving ``root`` are reported."""
    out = []
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if entry.name.startswith("."):
            continue
        p = Path(entry.path)
        try:
            resolved = check_inside_root(p, root)
        except ArchiveError as exc:
            problems.append(_problem(exc, run_id, "directory skipped"))
            continue
        if resolved.is_dir():
            out.append(p)
    return out


def _discover(root: Path, meta: ArchiveMeta) -> tuple[list[Run], list[ArchiveError]]:
    problems: list[ArchiveError] = []
    runs: list[Run] = []
    for exp_dir in _subdirs(root, root, problems, None):
        if exp_dir.name not in meta.experiments:
            exc = ArchiveError(
                f"directory {exp_dir.name!r} is not an experiment declared in archive.yaml",
                path=exp_dir,
                code="archive.undeclared_experiment",
                fix="declare it under `experiments:` in archive.yaml, or move it out",
            )
            problems.append(_problem(exc, None, "directory skipped"))
            continue
        for agent_dir in _subdirs(exp_dir, root, problems, None):
            for task_dir in _subdirs(agent_dir, root, problems, None):
                for rep_dir in _subdirs(task_dir, root, problems, None):
                    run_id = "/".join(p.name for p in (exp_dir, agent_dir, task_dir, rep_dir))
                    try:
                        runs.append(_read_run(rep_dir, root, meta, problems, run_id))
                    except ArchiveError as exc:
                        problems.append(_problem(exc, run_id, "run skipped"))
    runs.sort(key=lambda r: r.key)
    return runs, problems


def _dangling(problems: list, run_id: str, msg: str, path: Path, location: str, code: str):
    exc = ArchiveError(
        msg,
        path=path,
        location=location,
        code=code,
        fix="archive the version, or set the reference to null",
    )
    problems.append(_problem(exc, run_id, "reference dangling"))


def _reference(rj: RunJson, meta: ArchiveMeta, run_json: Path, problems: list, run_id: str) -> bool:
    """``run.json`` ``reference``, honoured only for agents declared as reference agents."""
    if not rj.reference or rj.agent in meta.reference_agents:
        return rj.reference
    exc = ArchiveError(
        f"agent {rj.agent!r} is not a reference agent, so its run cannot be marked "
        "reference: true (reference runs are never ranked)",
        path=run_json,
        location="reference",
        code="archive.reference_not_allowed",
        fix="declare it in archive.yaml `reference_agents:` (default [baseline]), or drop the flag",
    )
    problems.append(_problem(exc, run_id, "reference ignored"))
    return False


def _read_run(rep_dir: Path, root: Path, meta: ArchiveMeta, problems: list, run_id: str) -> Run:
    task_dir = rep_dir.parent
    agent_dir = task_dir.parent
    exp, agent, task = agent_dir.parent.name, agent_dir.name, task_dir.name
    check_name(agent, agent_dir, "agent")
    check_name(task, task_dir, "task")
    m = REP_PATTERN.match(rep_dir.name)
    if not m:
        raise ArchiveError(
            f"repetition directory {rep_dir.name!r} is not rep<k>",
            path=rep_dir,
            code="archive.bad_name",
            fix="name repetition directories rep0, rep1, ...",
        )
    rep = int(m.group(1))
    run_json = rep_dir / "run.json"
    _require_file(
        run_json,
        "archive.run_json_missing",
        "every rep<k> directory needs a run.json (docs/archive.md)",
    )
    rj: RunJson = load_json_model(run_json, RunJson, root, MAX_JSON_BYTES, "archive.run_invalid")
    for key, expected in (("experiment", exp), ("agent", agent), ("task", task), ("rep", rep)):
        if getattr(rj, key) != expected:
            raise ArchiveError(
                f"run.json says {key} = {getattr(rj, key)!r} but the directory says {expected!r}",
                path=run_json,
                location=key,
                code="archive.run_mismatch",
                fix="directory names are the source of truth: fix run.json or move the run",
            )
    if rj.ended_at < rj.started_at:
        raise ArchiveError(
            "ended_at is before started_at",
            path=run_json,
            location="ended_at",
            code="archive.run_invalid",
            fix="write the run's wall-clock bounds in UTC",
        )

    versions = _read_versions(rep_dir, root, problems, run_id)
    _check_references(rj, versions, run_json, problems, run_id)
    submission_path, issue = _submission(rep_dir / "submission.csv", root, problems, run_id)
    steps = None
    if rj.steps is not None:
        steps = tuple(
            Step(
                s.step, s.ok, s.reported_val_score, _utc(s.created_at), s.version, s.node, s.parent
            )
            for s in rj.steps
        )
    return Run(
        run_id=run_id,
        dir=rep_dir,
        archive_root=root,
        experiment=exp,
        agent=agent,
        llm=rj.llm,
        task=task,
        rep=rep,
        reference=_reference(rj, meta, run_json, problems, run_id),
        search=rj.search,
        objective=rj.objective,
        started_at=_utc(rj.started_at),
        ended_at=_utc(rj.ended_at),
        budget_minutes=float(rj.budget_minutes),
        tokens=None if rj.tokens is None else rj.tokens.model_dump(),
        selection_rule=rj.selection.rule,
        selected_version=rj.selection.selected_version,
        reported_val_score=rj.reported_val_score,
        steps=steps,
        submission_path=submission_path,
        versions=versions,
        annotations=_read_annotations(
            rep_dir, root, {v.version_id for v in versions}, problems, run_id
        ),
        submission_issue=issue,
        notes=rj.notes,
        incomplete=rj.incomplete,
    )


def _check_references(
    rj: RunJson, versions: tuple[Version, ...], run_json: Path, problems: list, run_id: str
) -> None:
    """Record selected/step/parent version ids that name nothing archived (the run is kept)."""
    ids = {v.version_id for v in versions}
    sel = rj.selection.selected_version
    if sel is not None and sel not in ids:
        _dangling(
            problems,
            run_id,
            f"selection.selected_version {sel!r} is not an archived version",
            run_json,
            "selection.selected_version",
            "archive.selected_version_unknown",
        )
    for i, s in enumerate(rj.steps or []):
        if s.version is not None and s.version not in ids:
            _dangling(
                problems,
                run_id,
                f"steps[{i}].version {s.version!r} is not an archived version",
                run_json,
                f"steps[{i}].version",
                "archive.step_version_unknown",
            )
    # A parent may be a node that saved no file; it can only be checked when steps list nodes.
    step_nodes = {s.node for s in rj.steps or [] if s.node is not None}
    nodes = ids | {v.node for v in versions} | step_nodes
    for v in versions:
        if step_nodes and v.parent is not None and v.parent not in nodes:
            _dangling(
                problems,
                run_id,
                f"version {v.version_id!r} names parent {v.parent!r}, which is neither an "
                "archived version nor a node in run.json steps",
                v.dir / "meta.json",
                "parent",
                "archive.parent_unknown",
            )


def _read_annotations(
    rep_dir: Path, root: Path, version_ids: set[str], problems: list, run_id: str
) -> Annotations | None:
    path = rep_dir / "annotations.json"
    if not exists_or_link(path):
        return None
    try:
        data = read_bounded(path, MAX_JSON_BYTES, root)
        raw = json_loads_strict(data, path, "archive.annotation_invalid")
        return validate_annotations(raw, rep_dir.resolve(), root, version_ids, path)
    except ArchiveError as exc:
        problems.append(_problem(exc, run_id, "annotations skipped"))
        return None


def _submission(
    path: Path, root: Path, problems: list, run_id: str
) -> tuple[Path | None, str | None]:
    """``(path, None)`` for a safe regular file, ``(None, None)`` if absent, else an issue code."""
    if not exists_or_link(path):
        return None, None
    try:
        resolved = check_inside_root(path, root)
        if not resolved.is_file():
            raise ArchiveError(
                "submission.csv is not a regular file (or a dangling link)",
                path=path,
                code="archive.not_a_file",
                fix="store submissions as plain CSV files",
            )
    except ArchiveError as exc:
        problems.append(_problem(exc, run_id, "submission unreadable"))
        return None, exc.code
    return path, None


def _read_version(d: Path, rep_dir: Path, root: Path) -> VersionJson:
    check_name(d.name, d, "version")
    if d.name in RESERVED_VERSION_NAMES:
        raise ArchiveError(
            f"version directory {d.name!r} uses a name the toolkit reserves for the selected "
            "submission",
            path=d,
            code="archive.reserved_name",
            fix="rename the version (e.g. v0001) and update the references to it",
        )
    meta_path = d / "meta.json"
    _require_file(
        meta_path,
        "archive.version_meta_missing",
        "every versions/<id>/ directory needs a meta.json (docs/archive.md)",
    )
    vj: VersionJson = load_json_model(
        meta_path, VersionJson, root, MAX_JSON_BYTES, "archive.version_invalid"
    )
    if vj.version != d.name:
        raise ArchiveError(
            f"meta.json says version {vj.version!r} but the directory is {d.name!r}",
            path=meta_path,
            location="version",
            code="archive.version_mismatch",
            fix="make `version` equal the directory name",
        )
    for i, cf in enumerate(vj.code_files):
        try:
            resolve_inside(rep_dir, cf, base=rep_dir, what="code_files")
        except ArchiveError as exc:
            exc.path, exc.location = meta_path, f"code_files[{i}]"
            raise
    return vj


def _read_versions(rep_dir: Path, root: Path, problems: list, run_id: str) -> tuple[Version, ...]:
    vdir = rep_dir / "versions"
    if not vdir.is_dir():
        return ()
    out = []
    for d in _subdirs(vdir, root, problems, run_id):
        try:
            vj = _read_version(d, rep_dir, root)
        except ArchiveError as exc:
            problems.append(_problem(exc, run_id, "version skipped"))
            continue
        sub_path, issue = _submission(d / "submission.csv", root, problems, run_id)
        out.append(
            Version(
                version_id=vj.version,
                dir=d,
                submission_path=sub_path,
                created_at=_utc(vj.created_at),
                step=vj.step,
                parent=vj.parent,
                node=vj.node,
                reported_val_score=vj.reported_val_score,
                faulty=vj.faulty,
                code_files=tuple(vj.code_files),
                tokens=vj.tokens,
                stage=vj.stage,
                submission_issue=issue,
            )
        )
    out.sort(key=lambda v: (v.created_at, v.version_id))
    return tuple(out)
