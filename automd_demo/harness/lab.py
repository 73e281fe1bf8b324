"""The agent's workbench on one task: render a config, execute the script, memoise the result.

A :class:`Lab` binds a task's public files (through its :class:`~.taskdata.TaskProfile`) to a
:class:`~.execute.Memo`. The data fingerprint - the manifest sha256 of every public file the
script reads, plus the sha256 of a replacement test file if one is given - is part of every memo
key, so a masked test file can never reuse predictions made on the full one.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from automd_analysis.tasks import Task, sha256_file
from automd_demo.harness.render import Script, render
from automd_demo.harness.script_runner import ExecResult, Memo, load_data, run_script
from automd_demo.harness.taskdata import TaskProfile

#: Placeholder for the script path inside memoised logs (the same code runs under many paths).
SCRIPT_PLACEHOLDER = "<script>"

_DATA_CACHE: dict[tuple[str, str], dict] = {}


class Lab:
    """Render + execute configs of one task (and optionally another test-features file)."""

    def __init__(
        self, task: Task, profile: TaskProfile, memo: Memo, test_features: Path | None = None
    ):
        self.task = task
        self.profile = profile
        self.memo = memo
        self.test_features = Path(test_features) if test_features is not None else None
        parts = [
            task.manifest.files[key].sha256 or ""
            for key in sorted(task.manifest.files)
            if task.manifest.files[key].role == "public"
        ]
        if self.test_features is not None:
            parts.append("test:" + sha256_file(self.test_features))
        self.fingerprint = hashlib.sha256("|".join([task.id, *parts]).encode()).hexdigest()

    def _data(self, script: Script, filename: str) -> dict:
        key = (self.task.id, self.fingerprint)
        if key not in _DATA_CACHE:
            _DATA_CACHE.clear()  # one task at a time per process keeps memory flat
            _DATA_CACHE[key] = load_data(
                script, filename, self.profile.task_dir, self.test_features
            )
        return _DATA_CACHE[key]

    def execute(self, config: dict, header: list[str], version: str) -> tuple[Script, ExecResult]:
        """Render ``config`` as ``code/<version>/train.py`` and run it (or reuse the memo)."""
        script = render(config, self.profile, header)
        filename = f"code/{version}/train.py"
        key = Memo.key(script, self.fingerprint)
        cached = self.memo.get(key)
        if cached is not None:
            log = cached.log.replace(SCRIPT_PLACEHOLDER, filename)
            return script, ExecResult(cached.ok, cached.validation, cached.csv, log, cached.error)
        result = run_script(script, filename, self._data(script, filename))
        generic = ExecResult(
            result.ok,
            result.validation,
            result.csv,
            result.log.replace(filename, SCRIPT_PLACEHOLDER),
            result.error,
        )
        self.memo.put(key, generic)
        return script, result
