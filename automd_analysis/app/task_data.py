"""Task manifests and submissions as ``automd tasks`` and ``automd validate`` ask for them.

:func:`validate_file` checks one submission against its task (paper App. E);
:func:`task_listing` lists the manifests with the status of their data; :func:`pin_task` writes
the sha256 of a task's prepared files into its manifest. The command line only prints.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from automd_analysis.errors import AutomdError
from automd_analysis.submissions import ValidationResult, validate_submission
from automd_analysis.tasks import (
    Task,
    data_root,
    file_statuses,
    get_task,
    load_manifests,
    manifest_path,
    pin_manifest,
    task_status,
)

__all__ = ["pin_task", "task_listing", "validate_file"]


def validate_file(
    task_id: str, file: Path, *, data=None, manifests=None, root: Path | None = None
) -> tuple[Task, ValidationResult]:
    """Validate ``file`` against task ``task_id``; ``root`` refuses a file resolving outside it.

    Raises
    ------
    AutomdError
        The task's manifest or data cannot be used; ``file`` does not exist (``file.missing``)
        or is a directory (``file.not_regular``): usage errors, not invalid submissions.
    """
    task = get_task(task_id, data=data, manifests=manifests)
    if not file.exists() and not file.is_symlink():
        raise AutomdError(
            "submission file not found",
            path=file,
            code="file.missing",
            fix="check the path of the CSV file to validate",
        )
    if file.is_dir():
        raise AutomdError(
            "the submission path is a directory, not a CSV file",
            path=file,
            code="file.not_regular",
            fix="pass the submission CSV inside it, e.g. "
            f"{shlex.quote(str(file / 'submission.csv'))}",
        )
    return task, validate_submission(task, file, root=root)


def pin_task(task_id: str, *, data=None, manifests=None, force: bool = False):
    """Write the sha256 of ``task_id``'s prepared data files into its manifest; return the
    manifest's path and ``{file key: sha256}``."""
    path = manifest_path(task_id, manifests)
    return path, pin_manifest(path, data_root(data), overwrite=force)


def task_listing(*, data=None, manifests=None, verify: bool = True) -> tuple[Path, list[dict]]:
    """The data root and one row per manifest: id, origin, kind, metric, validation (with the
    shift), sizes, unit, the data status and each file's state.

    Raises
    ------
    ManifestError
        The manifest directory is missing or a manifest is invalid.
    """
    found = load_manifests(manifests)
    root = data_root(data)
    rows = []
    for task_id, m in found.items():
        statuses = file_statuses(Task(m, root), verify=verify)
        rows.append(
            {
                "id": task_id,
                "origin": m.origin,
                "kind": m.kind.value,
                "metric": m.metric.value,
                "validation": m.validation if m.shift == "none" else f"{m.validation} ({m.shift})",
                "train": m.sizes.train,
                "extra_train": m.sizes.extra_train,
                "test": m.sizes.test,
                "unit": m.sizes.unit,
                "status": task_status(statuses),
                "files": {s.key: s.state for s in statuses},
            }
        )
    return root, rows
