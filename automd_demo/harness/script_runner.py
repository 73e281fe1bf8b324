"""Execute a rendered training script in-process, with a content-addressed memo.

The harness runs the *archived script text* itself: it compiles the text under its archive path
(``code/v0003/train.py``), executes it in a fresh namespace, loads the public task files with the
script's own ``load_task`` and calls its ``run(data)``. A script that raises is a failed development
step, recorded with the exception and the script frames of its traceback - the failure is real.

Two caches make the many near-identical scripts of a search affordable; neither changes a
single output byte (every zoo function is deterministic: models are seeded and BLAS/OpenMP pools
are limited to one thread):

- :class:`Memo` - whole results keyed by ``sha256(script body + data fingerprint)``, shared by the
  worker processes through a directory (entries written atomically: temp file + ``os.replace``);
- :class:`FitCache` - within a process, the zoo's *fit* and *predict* functions of the executed
  script are wrapped so that a call with identical arguments (hashed by content) returns the
  object computed the first time. A step that only changes the alarm threshold or adds a blend
  member thus reuses the fits it shares with its parent. The wrapped function is the script's
  own function object, so on a miss exactly the archived code runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from automd_analysis._atomic import write_bytes_atomic
from automd_demo.harness.render import Script

#: Zoo functions whose results are cached by argument content (fits, then predictions).
FIT_FUNCTIONS = frozenset(
    {"fit_gbdt", "fit_logistic", "fit_random_forest", "fit_cox", "fit_weibull", "fit_stacker"}
)
PREDICT_FUNCTIONS = frozenset({"positive_probability", "lifelines_curves", "discrete_curves"})
_KEY_ATTR = "_automd_fit_key"


class Unhashable(Exception):
    """An argument the fit cache cannot key (the call then simply runs uncached)."""


def content_digest(value, h=None):
    """Feed a canonical description of ``value`` into a sha256 (DataFrames by content)."""
    h = h if h is not None else hashlib.sha256()
    if value is None or isinstance(value, bool | int | float | str):
        h.update(f"{type(value).__name__}:{value!r};".encode())
    elif isinstance(value, pd.DataFrame):
        h.update(f"df{value.shape}{list(value.columns)}{[str(d) for d in value.dtypes]};".encode())
        h.update(pd.util.hash_pandas_object(value, index=False).to_numpy().tobytes())
    elif isinstance(value, pd.Series):
        h.update(f"series{value.dtype}{len(value)};".encode())
        h.update(pd.util.hash_pandas_object(value, index=False).to_numpy().tobytes())
    elif isinstance(value, np.ndarray):
        if value.dtype == object:
            content_digest(pd.Series(value.ravel()), h)
        else:
            h.update(f"nd{value.dtype}{value.shape};".encode())
            h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, list | tuple):
        h.update(f"seq{len(value)}[".encode())
        for v in value:
            content_digest(v, h)
        h.update(b"]")
    elif isinstance(value, dict):
        h.update(f"dict{len(value)}{{".encode())
        for k in sorted(value, key=repr):
            content_digest(k, h)
            content_digest(value[k], h)
        h.update(b"}")
    elif hasattr(value, _KEY_ATTR):
        h.update(f"model:{getattr(value, _KEY_ATTR)};".encode())
    else:
        raise Unhashable(type(value).__name__)
    return h


def _code_digest(code) -> str:
    """sha256 of a code object's bytecode, constants and names (recursing into nested code)."""
    h = hashlib.sha256()
    h.update(code.co_code)
    h.update(repr(code.co_names).encode())
    h.update(repr(code.co_varnames).encode())
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            h.update(_code_digest(const).encode())
        else:
            h.update(repr(const).encode())
    return h.hexdigest()


class FitCache:
    """In-process LRU cache of zoo fit/predict results, keyed by function source + arguments."""

    def __init__(self, max_entries: int = 400):
        from collections import OrderedDict

        self.max_entries = max_entries
        self.entries: OrderedDict = OrderedDict()
        self.hits = 0
        self.misses = 0

    def wrap(self, name: str, fn):
        code = getattr(fn, "__code__", None)
        if code is None:
            return fn
        prefix = name + ":" + _code_digest(code)

        def cached(*args, **kwargs):
            try:
                key = content_digest([prefix, list(args), kwargs]).hexdigest()
            except Unhashable:
                return fn(*args, **kwargs)
            if key in self.entries:
                self.entries.move_to_end(key)
                self.hits += 1
                value = self.entries[key]
                return value.copy() if isinstance(value, np.ndarray) else value
            value = fn(*args, **kwargs)
            self.misses += 1
            if name in FIT_FUNCTIONS:
                setattr(value, _KEY_ATTR, key)
            self.entries[key] = value.copy() if isinstance(value, np.ndarray) else value
            while len(self.entries) > self.max_entries:
                self.entries.popitem(last=False)
            return value

        cached.__wrapped__ = fn
        return cached

    def install(self, namespace: dict) -> None:
        for name in FIT_FUNCTIONS | PREDICT_FUNCTIONS:
            if callable(namespace.get(name)):
                namespace[name] = self.wrap(name, namespace[name])


#: The process-wide fit cache used by :func:`run_script` (None disables it).
FIT_CACHE: FitCache | None = FitCache()


@dataclass(frozen=True)
class ExecResult:
    """Outcome of one script execution.

    Attributes
    ----------
    ok : bool
        The script returned a submission.
    validation : dict
        The validation numbers the script computed (empty when it failed).
    csv : bytes or None
        The submission file bytes (``\\n`` line endings).
    log : str
        What the script printed, then (on failure) its traceback restricted to script frames.
    error : str or None
        ``"ExceptionType: message"`` on failure.
    """

    ok: bool
    validation: dict
    csv: bytes | None
    log: str
    error: str | None = None

    def to_json(self) -> dict:
        return {"ok": self.ok, "validation": self.validation, "log": self.log, "error": self.error}


def _script_traceback(exc: BaseException, filename: str, source_lines: list[str]) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    out = ["Traceback (script frames only):"]
    for f in frames:
        line = (
            source_lines[f.lineno - 1].strip() if f.lineno and f.lineno <= len(source_lines) else ""
        )
        out.append(f'  File "{filename}", line {f.lineno}, in {f.name}')
        if line:
            out.append(f"    {line}")
    out.append(f"{type(exc).__name__}: {exc}")
    return "\n".join(out)


def load_data(script: Script, filename: str, task_dir: Path, test_csv: Path | None = None) -> dict:
    """Run the script's own ``load_task`` on ``task_dir`` (optionally replacing the test file)."""
    namespace: dict = {"__name__": "automd_harness_script", "__file__": filename}
    exec(compile(script.text, filename, "exec"), namespace)
    data = namespace["load_task"](task_dir)
    if test_csv is not None:
        data["test"] = pd.read_csv(test_csv)
    return data


def run_script(
    script: Script, filename: str, data: dict, *, use_fit_cache: bool = True
) -> ExecResult:
    """Execute ``script`` (compiled as ``filename``) on a copy of ``data``.

    With ``use_fit_cache`` the process-wide :data:`FIT_CACHE` memoises the script's zoo
    fit/predict calls by argument content (outputs are identical either way).
    """
    cache = FIT_CACHE if use_fit_cache else None
    namespace: dict = {"__name__": "automd_harness_script", "__file__": filename}
    source_lines = script.text.split("\n")
    buffer = io.StringIO()
    frames = {k: (v.copy() if isinstance(v, pd.DataFrame) else v) for k, v in data.items()}
    with (
        warnings.catch_warnings(),
        contextlib.redirect_stdout(buffer),
        threadpool_limits(limits=1),  # deterministic and no oversubscription of shared cores
    ):
        warnings.simplefilter("ignore")
        try:
            exec(compile(script.text, filename, "exec"), namespace)
            if cache is not None:
                cache.install(namespace)
            result = namespace["run"](frames)
            submission = result["submission"]
            validation = {k: float(v) for k, v in sorted(result["validation"].items())}
            if not isinstance(submission, pd.DataFrame):
                raise TypeError("run() must return a DataFrame under 'submission'")
        except Exception as exc:  # the agent's script failed: a recorded, real failure
            log = buffer.getvalue() + _script_traceback(exc, filename, source_lines) + "\n"
            return ExecResult(
                ok=False, validation={}, csv=None, log=log, error=f"{type(exc).__name__}: {exc}"
            )
    csv = submission.to_csv(index=False, lineterminator="\n").encode()
    return ExecResult(ok=True, validation=validation, csv=csv, log=buffer.getvalue())


class Memo:
    """Content-addressed store of :class:`ExecResult` (``None`` directory disables it)."""

    def __init__(self, directory: str | Path | None):
        self.directory = Path(directory) if directory is not None else None
        self.hits = 0
        self.misses = 0
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def key(script: Script, data_fingerprint: str) -> str:
        return hashlib.sha256(f"{script.body_key}\n{data_fingerprint}".encode()).hexdigest()

    def _paths(self, key: str) -> tuple[Path, Path]:
        assert self.directory is not None
        return self.directory / f"{key}.json", self.directory / f"{key}.csv"

    def get(self, key: str) -> ExecResult | None:
        if self.directory is None:
            return None
        meta_path, csv_path = self._paths(key)
        try:
            meta = json.loads(meta_path.read_text())
            csv = csv_path.read_bytes() if meta["ok"] else None
        except (OSError, ValueError, KeyError):
            return None
        self.hits += 1
        return ExecResult(
            ok=meta["ok"], validation=meta["validation"], csv=csv, log=meta["log"],
            error=meta["error"],
        )  # fmt: skip

    def put(self, key: str, result: ExecResult) -> None:
        self.misses += 1
        if self.directory is None:
            return
        meta_path, csv_path = self._paths(key)
        if result.csv is not None:
            write_bytes_atomic(csv_path, result.csv)
        write_bytes_atomic(meta_path, json.dumps(result.to_json(), sort_keys=True).encode())
