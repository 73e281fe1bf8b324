"""Re-run archived code in a separate, limited process - the only place the toolkit runs it.

The masking test of the real-time rule (paper App. G) needs the code behind a submission to run
again on a masked test file. Archive code is untrusted, so it runs only when the user asks for it
(``automd masking run ARCHIVE --allow-code-execution``), and then only here:

- **a separate process** (``python -s -P -m automd_analysis.masking._child``) started with a
  scrubbed environment (no variable of the caller's environment is passed on: no credentials, no
  proxies, no ``PYTHON*`` settings; single-threaded BLAS; ``HOME``/``TMPDIR`` inside the sandbox);
- **its own temporary working directory** holding only copies of what the re-run needs: the run's
  ``run.json`` and the selected version's code, the task's *public* files (manifest role
  ``public``; hidden labels never), the task manifests and the test-features file to predict. The
  directory is deleted afterwards; the original archive and data files are never handed over;
- **no network**: the process starts in a new network namespace (``unshare -n``, or ``unshare -rn``
  as an unprivileged user) where the machine allows it. Where it does not, the re-run still happens
  and the result records ``isolation = "process"`` instead of ``"process+netns"`` (and
  :attr:`SandboxLimits.require_network_isolation` refuses to run at all);
- **limits**: CPU time, address space, largest file written and open files are set with
  ``setrlimit`` in the child before any re-runner code is imported; a wall-clock timeout kills the
  whole process group; the prediction file handed back is size-checked;
- **no archive value becomes source text**: the child calls an *installed* re-runner - a function
  registered under the entry-point group :data:`RERUNNER_GROUP` (the demo harness registers
  ``demo``) - with file paths as data. Which re-runner to use is the user's choice, never the
  archive's.

The threat model, what an archive can and cannot do, is in ``docs/security.md``.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from automd_analysis.archive.safe import MAX_JSON_BYTES, check_name, read_bounded
from automd_analysis.archive.schema import RunJson, load_json_model
from automd_analysis.errors import ArchiveError, AutomdError
from automd_analysis.masking.procedure import MaskingError

__all__ = [
    "RERUNNER_GROUP",
    "SandboxLimits",
    "SandboxedRerun",
    "available_rerunners",
    "network_isolation_command",
]

#: Entry-point group of installed re-runners: ``name = "module:function"`` where the function is
#: ``rerun(run_dir, test_features_csv, out_csv, data=None, manifests=None) -> Path``.
RERUNNER_GROUP = "automd.rerunners"
#: Largest code file copied into the sandbox, and largest code directory in total.
MAX_CODE_FILE = 8 << 20
MAX_CODE_TOTAL = 64 << 20


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one re-run process.

    Attributes
    ----------
    cpu_seconds : int
        ``RLIMIT_CPU`` (the process is killed by SIGXCPU/SIGKILL beyond it).
    memory_bytes : int
        ``RLIMIT_AS``: address space of the process.
    file_bytes : int
        ``RLIMIT_FSIZE``: largest file the process may write.
    open_files : int
        ``RLIMIT_NOFILE``.
    wall_seconds : float
        Wall-clock timeout; the process group is killed after it.
    output_bytes : int
        Largest prediction file accepted back from the sandbox.
    require_network_isolation : bool
        Refuse to run when no network namespace can be created (default: run, and record it).
    """

    cpu_seconds: int = 900
    memory_bytes: int = 8 << 30
    file_bytes: int = 1 << 30
    open_files: int = 256
    wall_seconds: float = 1800.0
    output_bytes: int = 512 << 20
    require_network_isolation: bool = False

    def rlimits(self) -> dict[str, int]:
        """The ``resource.RLIMIT_*`` names and values the child applies to itself."""
        return {
            "RLIMIT_CPU": int(self.cpu_seconds),
            "RLIMIT_AS": int(self.memory_bytes),
            "RLIMIT_FSIZE": int(self.file_bytes),
            "RLIMIT_NOFILE": int(self.open_files),
            "RLIMIT_CORE": 0,
        }


def available_rerunners() -> dict[str, str]:
    """Installed re-runners: entry-point name -> ``"module:function"``."""
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group=RERUNNER_GROUP)}


@functools.cache
def network_isolation_command() -> tuple[str, ...] | None:
    """The command prefix that starts a process without network, or ``None`` if none works here.

    Tries ``unshare -n`` (root) and ``unshare -rn`` (a user namespace, unprivileged), once per
    process.
    """
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    for flags in (("-n",), ("-r", "-n")):
        try:
            probe = subprocess.run(
                [unshare, *flags, "--", "true"], capture_output=True, timeout=10, env={}
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if probe.returncode == 0:
            return (unshare, *flags, "--")
    return None


def _import_roots(*modules: str) -> list[str]:
    """Directories that make ``modules`` importable (the parents of their top-level packages)."""
    roots: list[str] = []
    for name in modules:
        spec = importlib.util.find_spec(name.split(".")[0])
        if spec is None or spec.origin is None:
            continue
        origin = Path(spec.origin).resolve()
        root = str(origin.parent.parent if spec.submodule_search_locations else origin.parent)
        if root not in roots:
            roots.append(root)
    return roots


def _copy_bounded(src: Path, dst: Path, root: Path, limit: int) -> int:
    data = read_bounded(src, limit, root)
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(data)
    return len(data)


def _stage_run(run_dir: Path, dest: Path) -> None:
    """Copy ``run.json`` and the selected version's code (regular files, bounded) into ``dest``."""
    run = load_json_model(
        run_dir / "run.json", RunJson, run_dir, MAX_JSON_BYTES, "archive.run_invalid"
    )
    _copy_bounded(run_dir / "run.json", dest / "run.json", run_dir, MAX_JSON_BYTES)
    version = run.selection.selected_version
    if version is None:
        return
    check_name(version, run_dir / "run.json", "selected version")
    code = run_dir / "code" / version
    if not code.is_dir() or code.is_symlink():
        return
    total = 0
    for path in sorted(code.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        rel = path.relative_to(run_dir)
        total += _copy_bounded(path, dest / rel, run_dir, MAX_CODE_FILE)
        if total > MAX_CODE_TOTAL:
            raise ArchiveError(
                f"the code of version {version!r} is larger than {MAX_CODE_TOTAL} bytes",
                path=code,
                code="archive.too_large",
                fix="archive only the files that produce the submission",
            )


def _stage_task(task_id: str, data, manifests, dest: Path) -> tuple[Path, Path]:
    """Copy the task's public files (checksum-verified) and the manifests; return their roots."""
    from automd_analysis.tasks import get_task, manifest_dir

    task = get_task(task_id, data=data, manifests=manifests)
    data_dest, manifest_dest = dest / "data", dest / "manifests"
    for key, spec in sorted(task.manifest.files.items()):
        if spec.role != "public":
            continue
        target = data_dest / spec.path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(task.verified_path(key), target)
    manifest_dest.mkdir(parents=True)
    for path in sorted(Path(manifest_dir(manifests)).glob("*.yaml")):
        shutil.copyfile(path, manifest_dest / path.name)
    return data_dest, manifest_dest


@dataclass(frozen=True)
class SandboxedRerun:
    """A ``rerun(run_dir, test_features_csv, out_csv)`` that runs an installed re-runner sandboxed.

    Parameters
    ----------
    rerunner : str
        Name of an installed re-runner (:func:`available_rerunners`), e.g. ``"demo"``, or an
        explicit ``"module:function"`` importable in this environment.
    data, manifests : path, optional
        Task data root and manifest directory (the task's public files are copied from there).
    limits : SandboxLimits

    Examples
    --------
    >>> rerun = SandboxedRerun("demo")          # doctest: +SKIP
    >>> rerun(run_dir, masked_csv, "out.csv")   # doctest: +SKIP
    """

    rerunner: str
    data: str | None = None
    manifests: str | None = None
    limits: SandboxLimits = field(default_factory=SandboxLimits)

    @property
    def isolation(self) -> str:
        """``"process+netns"`` when the child has no network, else ``"process"``."""
        return "process+netns" if network_isolation_command() else "process"

    def _target(self) -> str:
        if ":" in self.rerunner:  # an explicit "module:function" chosen by the user
            return self.rerunner
        targets = available_rerunners()
        if self.rerunner not in targets:
            raise MaskingError(
                f"no installed re-runner called {self.rerunner!r}",
                code="masking.no_rerunner",
                fix="installed re-runners: " + (", ".join(sorted(targets)) or "none"),
            )
        return targets[self.rerunner]

    def __call__(self, run_dir, test_features_csv, out_csv) -> Path:
        """Re-run ``run_dir``'s selected code on ``test_features_csv``; write ``out_csv``.

        Raises
        ------
        AutomdError
            ``masking.sandbox_failed`` (the re-run raised, was killed by a limit, or timed out;
            the message carries the child's structured error), ``masking.no_network_isolation``
            (with ``require_network_isolation``), ``masking.sandbox_output``, and the archive
            errors of a run that cannot be staged.
        """
        return self.many(run_dir, [(test_features_csv, out_csv)])[0]

    def many(self, run_dir, pairs) -> list[Path]:
        """Re-run ``run_dir`` on several ``(test_features_csv, out_csv)`` pairs in one process.

        The same sandbox (one staging, one child process) serves every pair, so a re-runner that
        caches its fits within a process fits the model once. Errors as :meth:`__call__`.
        """
        target = self._target()
        prefix = network_isolation_command()
        if prefix is None and self.limits.require_network_isolation:
            raise MaskingError(
                "no network namespace can be created on this machine",
                code="masking.no_network_isolation",
                fix="run as a user allowed to create namespaces (unshare -rn), or accept a "
                "re-run without network isolation",
            )
        run_dir = Path(run_dir).resolve()
        task_id = run_dir.parent.name
        with tempfile.TemporaryDirectory(prefix="automd-sandbox-") as tmp:
            work = Path(tmp)
            _stage_run(run_dir, work / "run")
            data, manifests = _stage_task(task_id, self.data, self.manifests, work)
            for sub in ("input", "out", "home", "tmp"):
                (work / sub).mkdir()
            jobs = []
            for i, (test_csv, _) in enumerate(pairs):
                test = work / "input" / f"test_features_{i}.csv"
                shutil.copyfile(test_csv, test)
                jobs.append([str(test), str(work / "out" / f"predictions_{i}.csv")])
            spec = {
                "target": target,
                "run_dir": str(work / "run"),
                "jobs": jobs,
                "result": str(work / "out" / "result.json"),
                "data": str(data),
                "manifests": str(manifests),
                "rlimits": self.limits.rlimits(),
            }
            (work / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
            returncode, log = self._spawn(work, prefix, target)
            self._check_result(work, Path(spec["result"]), returncode, log)
            return [
                self._collect(work, Path(made), Path(out_csv))
                for (_, made), (_, out_csv) in zip(jobs, pairs, strict=True)
            ]

    def _spawn(self, work: Path, prefix, target: str) -> tuple[int, str]:
        roots = _import_roots("automd_analysis", target.split(":")[0])
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(work / "home"),
            "TMPDIR": str(work / "tmp"),
            "LANG": "C.UTF-8",
            "PYTHONHASHSEED": "0",
            "PYTHONPATH": os.pathsep.join(roots),
            "PYTHONDONTWRITEBYTECODE": "1",
            "MPLBACKEND": "Agg",
            "NUMBA_CACHE_DIR": str(work / "tmp" / "numba"),
            **{v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")},
        }
        cmd = [*(prefix or ()), sys.executable, "-s", "-P", "-m", "automd_analysis.masking._child",
               str(work / "spec.json")]  # fmt: skip
        proc = subprocess.Popen(
            cmd,
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            output, _ = proc.communicate(timeout=self.limits.wall_seconds)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise MaskingError(
                f"the re-run did not finish within {self.limits.wall_seconds:g} s and was killed",
                code="masking.sandbox_failed",
                fix="raise the wall-clock limit if the model really needs longer",
            ) from None
        return proc.returncode, output.decode("utf-8", errors="replace")[-4000:]

    def _check_result(self, work: Path, result_path: Path, returncode: int, log: str) -> None:
        result = {}
        if result_path.is_file() and not result_path.is_symlink():
            try:
                result = json.loads(read_bounded(result_path, MAX_JSON_BYTES, work))
            except (ValueError, AutomdError):
                result = {}
        if isinstance(result, dict) and result.get("ok") is True and returncode == 0:
            return
        error = result.get("error") if isinstance(result, dict) else None
        error = error if isinstance(error, dict) else {}
        how = f"killed by signal {-returncode}" if returncode < 0 else f"exit {returncode}"
        raise MaskingError(
            f"the sandboxed re-run failed ({how}): "
            + (f"[{error.get('code')}] {error.get('message')}" if error else log[-1500:]),
            code="masking.sandbox_failed",
            fix=str(error.get("fix") or "see the message; the re-run's output is in details"),
            details={"log": log[-2000:], "child_error": error},
        )

    def _collect(self, work: Path, made: Path, out_csv: Path) -> Path:
        try:
            data = read_bounded(made, self.limits.output_bytes, work)
        except ArchiveError as exc:
            raise MaskingError(
                f"the re-run's prediction file cannot be used: {exc.message}",
                code="masking.sandbox_output",
                fix="the re-runner must write one regular CSV file below the size limit",
                details=exc.details,
            ) from None
        out_csv.parent.mkdir(parents=True, exist_ok=True)
        out_csv.write_bytes(data)
        return out_csv
