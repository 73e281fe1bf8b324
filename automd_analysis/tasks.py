"""Task manifests: the typed schema, where manifests and data live, and checksum-verified access.

No code in this package knows a task by name. Everything the scorer needs - kind, metric, null
score m0, submission schema, the hidden-label file and its sha256, subgroup columns - comes from a
YAML manifest in ``data_manifests/<task_id>.yaml`` (``docs/tasks.md``), validated on load by
:class:`TaskManifest`.

Paths inside a manifest are relative to a *data root*: ``--data DIR`` on the command line, else the
``AUTOMD_DATA`` environment variable, else ``<repo>/data`` (where ``automd demo data`` builds the demo
tasks). Manifests are found in ``--manifests DIR``, ``AUTOMD_MANIFESTS``, else ``<repo>/data_manifests``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from automd_analysis._atomic import write_text_atomic
from automd_analysis.errors import DataError, ManifestError
from automd_analysis.schema import NULL_SCORES

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MANIFEST_DIR = REPO_ROOT / "data_manifests"
DEFAULT_DATA_ROOT = REPO_ROOT / "data"


class Kind(StrEnum):
    survival = "survival"
    classification = "classification"
    sequential = "sequential"


class Metric(StrEnum):
    ctd_adj_antolini = "ctd_adj_antolini"
    auroc = "auroc"
    min_se_ppv = "min_se_ppv"
    utility_2019 = "utility_2019"


#: Which primary metrics a task kind may use.
KIND_METRICS: dict[Kind, set[Metric]] = {
    Kind.survival: {Metric.ctd_adj_antolini},
    Kind.classification: {Metric.auroc, Metric.min_se_ppv},
    Kind.sequential: {Metric.utility_2019},
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False)


class FileSpec(_Strict):
    """One data file of a task, relative to the data root."""

    path: str
    sha256: str | None = Field(
        default=None,
        description="Hex sha256 of the file; null only for paper tasks whose data the user "
        "supplies (pin it with `automd tasks --pin`).",
    )
    role: Literal["public", "hidden"] = "public"

    @model_validator(mode="after")
    def _check(self) -> FileSpec:
        if Path(self.path).is_absolute() or ".." in Path(self.path).parts:
            raise ValueError(f"path {self.path!r} must be relative to the data root, without '..'")
        if self.sha256 is not None and (
            len(self.sha256) != 64 or any(c not in "0123456789abcdef" for c in self.sha256)
        ):
            raise ValueError(f"sha256 {self.sha256!r} is not 64 lower-case hex digits")
        return self


class SubmissionSpec(_Strict):
    """The columns a valid submission must have (``docs/tasks.md``, "Submission formats")."""

    id_columns: list[str] = Field(min_length=1, max_length=2)
    probability_column: str | None = "PredictedProbability"
    label_column: str | None = None
    time_grid: str | None = Field(
        default=None, description="Key in `files` of the survival time grid (one column `time`)."
    )
    max_bytes: int | None = Field(
        default=None,
        ge=1,
        description="Size limit of a submission file in bytes; default scales with the test set "
        "(see automd_analysis.submissions.default_max_bytes).",
    )


class LabelsSpec(_Strict):
    """Where the hidden test outcomes live and which columns hold them."""

    file: str = Field(description="Key in `files` of the hidden labels CSV.")
    id_columns: list[str] = Field(min_length=1, max_length=2)
    duration: str | None = None
    event: str | None = None
    label: str | None = None


class SubgroupSpec(_Strict):
    """One subgroup attribute of the test set (paper App. F)."""

    column: str
    rule: Literal["tertiles", "categorical", "top4_other"]
    file: str = Field(default="labels", description="Key in `files` holding the column.")


class SizeSpec(_Strict):
    train: int = Field(ge=0)
    test: int = Field(ge=0)
    unit: str = "patients"
    extra_train: int = Field(default=0, ge=0, description="e.g. 500 local target-hospital labels")
    test_rows: int | None = Field(default=None, description="patient-hours for sequential tasks")


class SourceSpec(_Strict):
    name: str
    citation: str
    url: str | None = None
    access: Literal["public", "credentialed", "dua", "synthetic"]
    license: str | None = None
    notes: str | None = None


class BuildSpec(_Strict):
    """How a demo task is built (``automd demo data``)."""

    recipe: str
    seed: int = 42
    params: dict[str, Any] = Field(default_factory=dict)


class TaskManifest(_Strict):
    """A task, as declared by ``data_manifests/<id>.yaml``."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_\-]*$")
    title: str
    description: str | None = Field(
        default=None, description="What is predicted, for whom, from what (one paragraph)."
    )
    origin: Literal["paper", "demo", "fixture"]
    kind: Kind
    outcome: str
    validation: Literal["internal", "external"]
    shift: Literal["none", "cohort", "hospital", "period"]
    internal_counterpart: str | None = None
    shared_test_set: str
    metric: Metric
    null_score: float
    time_unit: str | None = None
    synthetic: bool = False
    sizes: SizeSpec
    submission: SubmissionSpec
    labels: LabelsSpec
    subgroups: dict[str, SubgroupSpec] = Field(default_factory=dict)
    files: dict[str, FileSpec]
    source: SourceSpec
    build: BuildSpec | None = None
    paper: dict[str, Any] = Field(
        default_factory=dict, description="Facts from the paper (Table 8 row) kept for checks."
    )

    @model_validator(mode="after")
    def _consistent(self) -> TaskManifest:
        if self.metric not in KIND_METRICS[self.kind]:
            allowed = sorted(m.value for m in KIND_METRICS[self.kind])
            raise ValueError(
                f"metric {self.metric.value!r} is not allowed for kind "
                f"{self.kind.value!r} (allowed: {allowed})"
            )
        if self.null_score != NULL_SCORES[self.metric]:
            raise ValueError(
                f"null_score must be {NULL_SCORES[self.metric]} for metric "
                f"{self.metric.value!r} (paper eq. 1), got {self.null_score}"
            )
        if self.validation == "external":
            if not self.internal_counterpart:
                raise ValueError("external tasks need `internal_counterpart`")
            if self.shift == "none":
                raise ValueError("external tasks need a `shift` other than 'none'")
        elif self.shift != "none" or self.internal_counterpart:
            raise ValueError("internal tasks have shift 'none' and no internal_counterpart")
        if self.labels.file not in self.files:
            raise ValueError(f"labels.file {self.labels.file!r} is not a key of `files`")
        if self.files[self.labels.file].role != "hidden":
            raise ValueError(f"the labels file {self.labels.file!r} must have role 'hidden'")
        for name, sg in self.subgroups.items():
            if sg.file not in self.files:
                raise ValueError(f"subgroups.{name}.file {sg.file!r} is not a key of `files`")
        if self.kind is Kind.survival:
            if not self.submission.time_grid or self.submission.time_grid not in self.files:
                raise ValueError("survival tasks need submission.time_grid naming a key of `files`")
            if not (self.labels.duration and self.labels.event):
                raise ValueError("survival tasks need labels.duration and labels.event")
        else:
            if not self.labels.label:
                raise ValueError(f"{self.kind.value} tasks need labels.label")
            if not self.submission.probability_column:
                raise ValueError(f"{self.kind.value} tasks need submission.probability_column")
        if self.kind is Kind.sequential and (
            len(self.submission.id_columns) != 2 or not self.submission.label_column
        ):
            raise ValueError("sequential tasks need id_columns [patient, hour] and a label_column")
        if self.metric is Metric.min_se_ppv and not self.submission.label_column:
            raise ValueError("min_se_ppv tasks need submission.label_column (PredictedLabel)")
        if self.submission.id_columns != self.labels.id_columns:
            raise ValueError(
                "submission.id_columns and labels.id_columns must be the same columns "
                f"(got {self.submission.id_columns} and {self.labels.id_columns})"
            )
        reserved = set(self.submission.id_columns)
        for col in (self.submission.probability_column, self.submission.label_column):
            if col is not None and col in reserved:
                raise ValueError(f"submission column {col!r} is declared twice")
            if col is not None:
                reserved.add(col)
        if self.internal_counterpart == self.id:
            raise ValueError("internal_counterpart must name a different task")
        return self


def _manifest_missing(message: str, path: Path, fix: str) -> ManifestError:
    """``manifest.missing`` for a manifest or the manifest directory."""
    return ManifestError(message, path=path, code="manifest.missing", fix=fix)


def load_manifest(path: str | Path) -> TaskManifest:
    """Read and validate one manifest file.

    Raises
    ------
    ManifestError
        If the file is missing, is not YAML, or does not match :class:`TaskManifest`; the message
        names the offending field.
    """
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        raise _manifest_missing(
            "manifest not found", path, "check the task id and --manifests / AUTOMD_MANIFESTS"
        ) from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ManifestError(
            f"manifest is not readable YAML: {exc}",
            path=path,
            code="manifest.unreadable",
            fix="check that the file is readable UTF-8 YAML (docs/tasks.md)",
        ) from None
    if not isinstance(raw, dict):
        raise ManifestError("manifest must be a YAML mapping", path=path, code="manifest.invalid")
    try:
        manifest = TaskManifest.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "<root>"
        raise ManifestError(
            f"invalid manifest: {first['msg']}",
            path=path,
            location=loc,
            code="manifest.invalid",
            fix="see docs/tasks.md for the manifest schema",
            details={
                "errors": [
                    {"loc": ".".join(str(p) for p in e["loc"]), "msg": e["msg"]}
                    for e in exc.errors()
                ]
            },
        ) from None
    if manifest.id != path.stem:
        raise ManifestError(
            f"manifest id {manifest.id!r} does not match its file name",
            path=path,
            location="id",
            code="manifest.invalid",
            fix=f"rename the file to {manifest.id}.yaml or fix `id`",
        )
    return manifest


def manifest_dir(override: str | Path | None = None, root: str | Path = REPO_ROOT) -> Path:
    """The manifest directory: argument, else ``AUTOMD_MANIFESTS``, else ``<root>/data_manifests``
    (``root``: the repository; :mod:`automd_analysis.archive.workspace` passes its own)."""
    if override is not None:
        return Path(override)
    env = os.environ.get("AUTOMD_MANIFESTS")
    return Path(env) if env else Path(root) / DEFAULT_MANIFEST_DIR.name


def data_root(override: str | Path | None = None, root: str | Path = REPO_ROOT) -> Path:
    """The data root: argument, else ``AUTOMD_DATA``, else ``<root>/data``."""
    if override is not None:
        return Path(override)
    env = os.environ.get("AUTOMD_DATA")
    return Path(env) if env else Path(root) / DEFAULT_DATA_ROOT.name


def load_manifests(directory: str | Path | None = None) -> dict[str, TaskManifest]:
    """All manifests of a directory, keyed by task id (sorted)."""
    directory = manifest_dir(directory)
    if not directory.is_dir():
        raise _manifest_missing("manifest directory not found", directory, "pass --manifests DIR")
    out = {}
    for path in sorted(directory.glob("*.yaml")):
        m = load_manifest(path)
        out[m.id] = m
    return out


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file, streamed."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


class Task:
    """A manifest bound to a data root: resolves and checksum-verifies its files.

    Parameters
    ----------
    manifest : TaskManifest
    root : Path
        The data root the manifest's relative paths are resolved against.
    """

    def __init__(self, manifest: TaskManifest, root: str | Path):
        self.manifest = manifest
        self.root = Path(root)
        self._verified: set[str] = set()
        self._labels: TaskLabels | None = None

    @property
    def id(self) -> str:
        return self.manifest.id

    def path(self, key: str) -> Path:
        """Absolute path of file ``key`` (no existence check)."""
        try:
            spec = self.manifest.files[key]
        except KeyError:
            raise ManifestError(
                f"task {self.id!r} declares no file {key!r}",
                location=f"files.{key}",
                code="manifest.invalid",
            ) from None
        return self.root / spec.path

    def verified_path(self, key: str) -> Path:
        """Path of file ``key`` after checking it exists and matches its manifest sha256.

        Raises
        ------
        DataError
            ``data.missing`` if absent; ``checksum.mismatch`` if modified;
            ``checksum.unpinned`` if the manifest has no sha256 for it.
        """
        path = self.path(key)
        if key in self._verified:
            return path
        spec = self.manifest.files[key]
        if not path.is_file():
            raise DataError(
                f"task {self.id!r}: file {key!r} not found",
                path=path,
                code="data.missing",
                fix=(
                    f"build it with `automd demo data --data {shlex.quote(str(self.root))}`, "
                    "or point --data / AUTOMD_DATA at the data root that holds it"
                    if self.manifest.origin == "demo"
                    else f"prepare it under {self.root} (docs/tasks.md) or point --data / "
                    "AUTOMD_DATA at the benchmark data root"
                ),
            )
        if spec.sha256 is None:
            raise DataError(
                f"task {self.id!r}: file {key!r} has no pinned sha256",
                path=path,
                code="checksum.unpinned",
                fix=f"pin it with `automd tasks --pin {self.id}` after checking the data",
            )
        actual = sha256_file(path)
        if actual != spec.sha256:
            raise DataError(
                f"task {self.id!r}: file {key!r} does not match its manifest sha256 "
                f"(expected {spec.sha256[:12]}..., found {actual[:12]}...)",
                path=path,
                code="checksum.mismatch",
                fix="restore the original file (hidden labels must never change) or "
                "rebuild it with `automd demo data`",
            )
        self._verified.add(key)
        return path

    @cached_property
    def content_hash(self) -> str:
        """sha256 over the canonical manifest JSON: part of every score cache key."""
        return hashlib.sha256(self.manifest.model_dump_json().encode()).hexdigest()


def closest_task_ids(task_id: str, known: list[str] | tuple[str, ...], n: int = 3) -> list[str]:
    """The known task ids closest to a mistyped ``task_id`` (:func:`difflib.get_close_matches`).

    >>> closest_task_ids("demo_rhc_deat30", ["demo_rhc_death30", "demo_support", "seer"])
    ['demo_rhc_death30']
    """
    import difflib

    return difflib.get_close_matches(str(task_id), list(known), n=n, cutoff=0.6)


def unknown_task_fix(task_id: str, known: list[str] | tuple[str, ...], directory: Path) -> str:
    """The fix of an unknown task id: the closest known ids, else every known one."""
    if not known:
        return f"no task manifests in {directory}: pass --manifests DIR or set AUTOMD_MANIFESTS"
    close = closest_task_ids(task_id, known)
    if close:
        others = f" (or {', '.join(close[1:])})" if close[1:] else ""
        return f"did you mean {close[0]}{others}? `automd tasks` lists every task"
    return f"known tasks: {', '.join(sorted(known))}"


def manifest_path(task_id: str, manifests: str | Path | None = None) -> Path:
    """The manifest file of ``task_id`` in the manifest directory, checked to exist.

    Raises
    ------
    ManifestError
        ``manifest.bad_id`` for an id that is not a plain name; ``manifest.missing`` for an
        unknown id (the error names the manifest directory, not the absent file, and suggests
        the closest known ids).
    """
    directory = manifest_dir(manifests)
    if not isinstance(task_id, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\-]*", task_id):
        raise ManifestError(
            f"{task_id!r} is not a task id",
            code="manifest.bad_id",
            fix="task ids are plain names such as demo_support (see `automd tasks`)",
        )
    path = directory / f"{task_id}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in directory.glob("*.yaml")) if directory.is_dir() else []
        raise _manifest_missing(
            f"no task {task_id!r} among the manifests",
            directory,
            unknown_task_fix(task_id, known, directory),
        )
    return path


def get_task(
    task_id: str, data: str | Path | None = None, manifests: str | Path | None = None
) -> Task:
    """Load manifest ``task_id`` and bind it to the data root.

    Raises
    ------
    ManifestError
        ``manifest.missing`` (the message suggests the closest known task ids) or
        ``manifest.bad_id`` for an id that is not a plain name (:func:`manifest_path`); and the
        errors of :func:`load_manifest`.
    """
    return Task(load_manifest(manifest_path(task_id, manifests)), data_root(data))


def has_manifest(task_id: str, manifests: str | Path | None = None) -> bool:
    """Whether the manifest directory (resolved as :func:`manifest_dir`) holds ``<task_id>.yaml``."""
    return (manifest_dir(manifests) / f"{task_id}.yaml").is_file()


# --------------------------------------------------------------------------------------------
# Process-only tasks (runs with a development process and nothing to score)

#: Transforms of a reported value before it is normalised (``neg_log10``: FML-bench's
#: unlearning task reads a KS-test p-value as ``-log10(p)``, lower is better).
VALUE_TRANSFORMS = ("none", "neg_log10")


class ProcessTask(_Strict):
    """A task known only by its metric: no hidden labels, nothing to score.

    Runs of such a task (FML-bench's own tasks, docs/importing.md) carry their development
    process - the steps, their reported validation values, code, tokens and times - from which
    the process metrics are computed (``automd_analysis.analysis.process``). The declaration lives
    in the archive's ``archive.yaml`` ``process_tasks:`` (docs/archive.md), written by
    ``automd import``. The normalised validation improvement of a reported value ``v`` is
    FML-bench's (App. E)

    .. math:: \\hat p(v) = \\max\\!\\left(0, \\frac{s\\,(f(v) - f(b))}{|p_{best} - p_{worst}|}\\right)

    with ``f`` the ``transform``, ``b`` the ``baseline``, ``s = +1`` when ``f(v)`` is better
    higher and ``-1`` otherwise, and ``p_worst = f(b)`` when ``worst`` is ``"baseline"``.

    Examples
    --------
    >>> t = ProcessTask(id="Causality_causalml", metric="mae_mean", higher_is_better=False,
    ...                 baseline=0.5, best=0.0, worst="baseline")
    >>> t.transformed_higher_is_better, t.span
    (False, 0.5)
    >>> ProcessTask(id="u", metric="p", higher_is_better=True, transform="neg_log10",
    ...             baseline=1e-4, best=0.0, worst="baseline").span
    4.0
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$", max_length=200)
    title: str = Field(default="", max_length=500)
    metric: str = Field(min_length=1, max_length=200, description="The metric's name in the log.")
    higher_is_better: bool = Field(description="Direction of the metric as the agent reports it.")
    baseline: float | None = Field(
        default=None,
        description="Validation value of the task's untouched baseline code (the zero of the "
        "normalised improvement); null when the log does not give it.",
    )
    transform: Literal["none", "neg_log10"] = "none"
    best: float | None = Field(default=None, description="Theoretical best (transformed scale).")
    worst: float | Literal["baseline"] | None = Field(
        default=None, description="Worst value (transformed scale), or `baseline`."
    )
    source: str = Field(default="", max_length=200, description="Where the declaration came from.")

    @property
    def transformed_higher_is_better(self) -> bool:
        """Direction after ``transform`` (``neg_log10`` reverses it)."""
        return self.higher_is_better != (self.transform == "neg_log10")

    def transformed(self, value: float | None) -> float:
        """``f(value)``: NaN for ``None``, non-positive values under ``neg_log10`` and NaN."""
        if value is None:
            return float("nan")
        v = float(value)
        if self.transform == "neg_log10":
            return float(-np.log10(v)) if v > 0 else float("nan")
        return v

    @property
    def worst_value(self) -> float:
        """``p_worst`` on the transformed scale (NaN when unknown)."""
        if self.worst == "baseline":
            return self.transformed(self.baseline)
        return float("nan") if self.worst is None else float(self.worst)

    @property
    def span(self) -> float:
        """``|p_best - p_worst|``, NaN when either is unknown or the span is 0."""
        best = float("nan") if self.best is None else float(self.best)
        span = abs(best - self.worst_value)
        return span if np.isfinite(span) and span > 0 else float("nan")

    @property
    def content_hash(self) -> str:
        """sha256 of the canonical declaration JSON (the store's ``tasks`` hash)."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()


@dataclass(frozen=True)
class TaskLabels:
    """Hidden test outcomes of a task, in the row order of its labels file.

    Attributes
    ----------
    ids : DataFrame
        The id column(s) as strings (sequential: patient id and hour), one row per scored unit/row.
    duration, event : ndarray or None
        Survival outcome (float64 durations, int8 0/1 events).
    label : ndarray of int8 or None
        Binary outcome (classification; sequential: per patient-hour ``SepsisLabel``).
    subgroups : DataFrame
        One column per manifest subgroup attribute (raw values, e.g. age in years), aligned to rows.
    time_grid : ndarray or None
        Survival time grid (increasing), from the public grid file.
    """

    ids: pd.DataFrame
    duration: np.ndarray | None = None
    event: np.ndarray | None = None
    label: np.ndarray | None = None
    subgroups: pd.DataFrame | None = None
    time_grid: np.ndarray | None = None


#: Strings a CSV reader (pandas' defaults) treats as a missing value.
NA_STRINGS = frozenset(
    {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
     "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}
)  # fmt: skip


def format_grid_time(value: float) -> str:
    """The canonical text of a grid time: Python's shortest round-trip ``repr`` of the float.

    ``float(format_grid_time(t)) == t`` exactly, so survival-submission headers written with
    ``str(t)`` for the grid values read from ``time_grid.csv`` match the grid bit for bit.
    """
    return repr(float(value))


def canonical_hour(text: str) -> str | None:
    """Canonical text of an hour key (``"7"``, ``"7.0"``, ``" 7 "`` -> ``"7"``); None if not integral.

    Digit separators (``"1_0"``) and non-ASCII digits are not numbers here, as in
    :func:`parse_floats`.
    """
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    if "_" in str(text) or not str(text).isascii():
        return None
    if not np.isfinite(value) or value != int(value):
        return None
    return str(int(value))


def parse_floats(cells) -> np.ndarray:
    """Parse text cells to float64 exactly as Python's ``float`` does (correctly rounded).

    pandas' ``to_numeric`` and its default CSV float parser are faster but can land one ulp away
    from the decimal written in the file; scores must not depend on that, so every number the
    toolkit reads from a task or submission CSV goes through this function. Cells that are not
    numbers become NaN, including the spellings only Python accepts (``_`` digit separators,
    non-ASCII digits or spaces); callers classify them from the raw text.
    """
    arr = np.asarray(cells, dtype=object)
    flat = arr.ravel()  # row-major: cells in file order, which keeps string memory local
    try:
        values = flat.astype(np.float64)
    except (ValueError, TypeError):
        values = np.fromiter((_float_or_nan(x) for x in flat), dtype=np.float64, count=len(flat))
    texts = flat.tolist()
    try:
        joined = "".join(texts)
    except TypeError:
        texts = [str(x) for x in texts]
        joined = "".join(texts)
    if "_" in joined or not joined.isascii():
        odd = np.fromiter(
            ("_" in x or not x.isascii() for x in texts), dtype=bool, count=len(texts)
        )
        values[odd] = np.nan
    return values.reshape(arr.shape)


def _float_or_nan(text) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return float("nan")


def _read_task_csv(path: Path, task_id: str, what: str) -> pd.DataFrame:
    """Read a task-owned CSV with every cell as text (the file was checksum-verified)."""
    try:
        return pd.read_csv(
            path, dtype=str, keep_default_na=False, na_filter=False, encoding="utf-8-sig"
        )
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DataError(
            f"task {task_id!r}: {what} is not a readable CSV: {exc}",
            path=path,
            code="data.unreadable",
            fix="rebuild the task data (demo: `automd demo data`) or restore the original file",
        ) from None


def _invalid_data(
    task_id: str, message: str, path: Path, *, location: str | None = None, fix: str
) -> DataError:
    """``data.invalid`` for a task data file: ``task '<id>': <message>``."""
    return DataError(
        f"task {task_id!r}: {message}", path=path, location=location, code="data.invalid", fix=fix
    )


def _require_columns(df: pd.DataFrame, columns: list[str], path: Path, task_id: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise _invalid_data(
            task_id,
            f"columns {missing} declared in the manifest are missing",
            path,
            location="header",
            fix="fix the file or the manifest's column names",
        )


def _numeric(
    df: pd.DataFrame, column: str, path: Path, task_id: str, *, binary: bool = False
) -> np.ndarray:
    """Parse a label column; raise DataError naming the first bad row."""
    values = parse_floats(df[column].to_numpy())
    bad = ~np.isfinite(values)
    if binary:
        bad |= ~np.isin(values, (0.0, 1.0))
    else:
        bad |= values < 0
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        rule = "0 or 1" if binary else "a finite number >= 0"
        raise _invalid_data(
            task_id,
            f"column {column!r} must be {rule}, found {df[column].iloc[row]!r}",
            path,
            location=f"row {row + 1}, column {column}",
            fix="fix the task data file (and re-pin its sha256 with `automd tasks --pin`)",
        )
    return values


def read_time_grid(task: Task) -> tuple[np.ndarray, list[str]]:
    """The survival time grid of ``task`` (checksum-verified), as floats and as written.

    The grid file has one column ``time``; values must be finite, >= 0 and strictly increasing
    (paper App. A.1: unique quantiles of the training event times at 100 levels, plus 0).

    Returns
    -------
    grid : ndarray of float64, shape (G,)
    texts : list of str
        The values exactly as written in the file (the expected submission headers).

    Raises
    ------
    DataError
        If the file is missing, modified, or not a valid grid.
    """
    key = task.manifest.submission.time_grid
    if key is None:
        raise ManifestError(
            f"task {task.id!r} has no time grid (kind {task.manifest.kind.value!r})",
            location="submission.time_grid",
            code="manifest.invalid",
        )
    path = task.verified_path(key)
    df = _read_task_csv(path, task.id, "the time grid")
    if list(df.columns) != ["time"] or len(df) == 0:
        raise _invalid_data(
            task.id,
            "the time grid must have exactly one column 'time' and >= 1 row",
            path,
            fix="rebuild the task data",
        )
    texts = [t.strip() for t in df["time"].tolist()]
    grid = _numeric(df, "time", path, task.id)
    if len(grid) > 1 and not np.all(np.diff(grid) > 0):
        row = int(np.flatnonzero(np.diff(grid) <= 0)[0]) + 1
        raise _invalid_data(
            task.id,
            "the time grid is not strictly increasing",
            path,
            location=f"row {row + 1}",
            fix="rebuild the task data",
        )
    return grid, texts


def load_labels(task: Task) -> TaskLabels:
    """Load the checksum-verified hidden labels, subgroup attributes and time grid of ``task``.

    The labels file (manifest ``labels.file``) is read with every cell as text; id columns stay
    strings (the hour of a sequential task is canonicalised to an integer string, ``"7.0"`` ->
    ``"7"``). Survival tasks get float64 ``duration`` (>= 0) and int8 ``event`` in {0, 1};
    classification and sequential tasks get an int8 ``label`` in {0, 1}. Subgroup attributes
    (paper App. F) are returned raw, one column per manifest attribute: ``tertiles`` attributes as
    float64 (NaN when blank), the others as strings. The result is cached on the task.

    Parameters
    ----------
    task : Task

    Returns
    -------
    TaskLabels
        Rows in the order of the labels file (the order every aligned prediction uses).

    Raises
    ------
    DataError
        ``data.missing`` / ``checksum.mismatch`` / ``checksum.unpinned`` when a file is absent or
        not the pinned one; ``data.invalid`` when the file breaks the contract (missing column,
        duplicate id, outcome not 0/1, negative duration, sequential rows of a patient not
        contiguous in increasing hour order).
    """
    if task._labels is not None:
        return task._labels
    m = task.manifest
    spec = m.labels
    path = task.verified_path(spec.file)
    df = _read_task_csv(path, task.id, "the labels file")
    outcome_cols = [c for c in (spec.duration, spec.event, spec.label) if c]
    sub_cols = [sg.column for sg in m.subgroups.values() if sg.file == spec.file]
    _require_columns(df, [*spec.id_columns, *outcome_cols, *sub_cols], path, task.id)
    if len(df) == 0:
        raise _invalid_data(
            task.id, "the labels file has no rows", path, fix="rebuild the task data"
        )
    ids = df[spec.id_columns].copy()
    if m.kind is Kind.sequential:
        hour_col = spec.id_columns[1]
        hours = [canonical_hour(h) for h in ids[hour_col]]
        if any(h is None for h in hours):
            row = next(i for i, h in enumerate(hours) if h is None)
            raise _invalid_data(
                task.id,
                f"hour {ids[hour_col].iloc[row]!r} is not an integer",
                path,
                location=f"row {row + 1}, column {hour_col}",
                fix="fix the hidden-label file",
            )
        ids[hour_col] = hours
        _check_sequential_order(ids, path, task.id)
    dup = ids.duplicated()
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise _invalid_data(
            task.id,
            f"duplicate id {tuple(ids.iloc[row])} in the labels file",
            path,
            location=f"row {row + 1}",
            fix="fix the hidden-label file",
        )
    duration = event = label = None
    if m.kind is Kind.survival:
        duration = _numeric(df, spec.duration, path, task.id)
        event = _numeric(df, spec.event, path, task.id, binary=True).astype(np.int8)
    else:
        label = _numeric(df, spec.label, path, task.id, binary=True).astype(np.int8)
    subgroups = pd.DataFrame(index=pd.RangeIndex(len(df)))
    for name, sg in m.subgroups.items():
        source = (
            df
            if sg.file == spec.file
            else _read_task_csv(task.verified_path(sg.file), task.id, sg.file)
        )
        if sg.file != spec.file:
            _require_columns(source, [*spec.id_columns, sg.column], task.path(sg.file), task.id)
            source = ids.merge(
                source[[*spec.id_columns, sg.column]], how="left", on=spec.id_columns
            )
        raw = source[sg.column].reset_index(drop=True)
        if sg.rule == "tertiles":
            subgroups[name] = parse_floats(raw.fillna("").to_numpy())
        else:
            subgroups[name] = raw.fillna("").astype(str).to_numpy()
    time_grid = read_time_grid(task)[0] if m.kind is Kind.survival else None
    task._labels = TaskLabels(
        ids=ids.reset_index(drop=True),
        duration=duration,
        event=event,
        label=label,
        subgroups=subgroups,
        time_grid=time_grid,
    )
    return task._labels


def _check_sequential_order(ids: pd.DataFrame, path: Path, task_id: str) -> None:
    """Rows of one patient must be contiguous and in strictly increasing hour order."""
    pid = ids.iloc[:, 0].to_numpy()
    hour = ids.iloc[:, 1].astype(np.int64).to_numpy()
    new_patient = np.r_[True, pid[1:] != pid[:-1]]
    starts = pid[new_patient]
    if len(set(starts)) != len(starts):
        seen: set = set()
        for row in np.flatnonzero(new_patient):
            if pid[row] in seen:
                break
            seen.add(pid[row])
        raise _invalid_data(
            task_id,
            f"rows of patient {pid[row]!r} are not contiguous in the labels file",
            path,
            location=f"row {int(row) + 1}",
            fix="sort the hidden-label file by patient and hour",
        )
    bad = ~new_patient[1:] & (hour[1:] <= hour[:-1])
    if bad.any():
        row = int(np.flatnonzero(bad)[0]) + 1
        raise _invalid_data(
            task_id,
            f"hours of patient {pid[row]!r} are not increasing",
            path,
            location=f"row {row + 1}",
            fix="sort the hidden-label file by patient and hour",
        )


# --------------------------------------------------------------------------------------------
# Data status and pinning (``automd tasks``)

FileState = Literal["present", "missing", "checksum mismatch", "unpinned"]


@dataclass(frozen=True)
class FileStatus:
    """State of one declared file of a task under a data root."""

    key: str
    path: Path
    state: FileState
    sha256: str | None = None


def file_statuses(task: Task, *, verify: bool = True) -> list[FileStatus]:
    """Status of every file a task declares (``verify=False`` skips hashing: present/missing)."""
    out = []
    for key, spec in task.manifest.files.items():
        path = task.path(key)
        if not path.is_file():
            out.append(FileStatus(key, path, "missing"))
            continue
        if not verify:
            out.append(FileStatus(key, path, "present" if spec.sha256 else "unpinned"))
            continue
        actual = sha256_file(path)
        if spec.sha256 is None:
            state: FileState = "unpinned"
        else:
            state = "present" if actual == spec.sha256 else "checksum mismatch"
        out.append(FileStatus(key, path, state, actual))
    return out


def task_status(statuses: list[FileStatus]) -> FileState:
    """Overall data status of a task: the worst of its files' states.

    Order (worst first): missing, checksum mismatch, unpinned, present.
    """
    for state in ("missing", "checksum mismatch", "unpinned"):
        if any(s.state == state for s in statuses):
            return state  # type: ignore[return-value]
    return "present"


def pin_manifest(
    manifest_path: str | Path, root: str | Path, *, overwrite: bool = False
) -> dict[str, str]:
    """Write the sha256 of the task's data files (under ``root``) into its manifest file.

    For paper tasks the data is not redistributable, so the shipped manifests carry
    ``sha256: null``; a user who has prepared the data checks it and pins it once
    (``automd tasks --pin TASK``). From then on a modified hidden-label file is an error.
    Only the ``sha256:`` value of each file entry is rewritten (comments and layout are kept).

    Parameters
    ----------
    manifest_path : path
        The manifest YAML file.
    root : path
        Data root the manifest paths are resolved against.
    overwrite : bool
        Replace hashes that are already pinned (needed to accept a deliberate data change).

    Returns
    -------
    dict
        File key -> the sha256 written.

    Raises
    ------
    DataError
        If a declared file is missing, or a pinned hash differs and ``overwrite`` is False.
    ManifestError
        If the manifest is invalid or its ``files`` entries are not one line each.
    """
    manifest_path = Path(manifest_path)
    manifest = load_manifest(manifest_path)
    task = Task(manifest, root)
    hashes: dict[str, str] = {}
    for key, spec in manifest.files.items():
        path = task.path(key)
        if not path.is_file():
            raise DataError(
                f"task {task.id!r}: file {key!r} not found; nothing was pinned",
                path=path,
                code="data.missing",
                fix="point --data / AUTOMD_DATA at the prepared data root (see docs/tasks.md)",
            )
        actual = sha256_file(path)
        if spec.sha256 not in (None, actual) and not overwrite:
            raise DataError(
                f"task {task.id!r}: file {key!r} differs from its pinned sha256; nothing was "
                "pinned",
                path=path,
                code="checksum.mismatch",
                fix="restore the original file, or re-pin deliberately with --force",
            )
        hashes[key] = actual
    write_manifest_hashes(manifest_path, hashes)
    return hashes


def write_manifest_hashes(manifest_path: str | Path, hashes: dict[str, str]) -> None:
    """Rewrite the ``sha256:`` values of the given file keys in a manifest, keeping its layout.

    The new text is validated against :class:`TaskManifest` before it atomically replaces the
    file.

    Raises
    ------
    ManifestError
        If an entry is not a one-line flow mapping, or the result does not validate.
    """
    manifest_path = Path(manifest_path)
    text = manifest_path.read_text(encoding="utf-8")
    new_text = _replace_file_hashes(text, hashes, manifest_path)
    try:
        check = TaskManifest.model_validate(yaml.safe_load(new_text))
    except ValidationError as exc:  # pragma: no cover - defensive
        raise ManifestError(
            f"rewritten manifest does not validate: {exc.errors()[0]['msg']}",
            path=manifest_path,
            code="manifest.invalid",
        ) from None
    if any(check.files[k].sha256 != v for k, v in hashes.items()):  # pragma: no cover
        raise ManifestError(
            "could not rewrite the sha256 entries", path=manifest_path, code="manifest.invalid"
        )
    write_text_atomic(manifest_path, new_text)


_FILE_LINE = re.compile(r"^(?P<indent>\s+)(?P<key>[A-Za-z0-9_\-]+):\s*\{(?P<body>.*)\}\s*$")
_SHA = re.compile(r"sha256:\s*(null|~|[0-9a-f]{64}|'[0-9a-f]{64}'|\"[0-9a-f]{64}\")")


def _replace_file_hashes(text: str, hashes: dict[str, str], path: Path) -> str:
    """Rewrite ``sha256:`` in the one-line flow mappings under ``files:``."""
    lines = text.splitlines(keepends=True)
    in_files = False
    done: set[str] = set()
    for i, line in enumerate(lines):
        if re.match(r"^files:\s*$", line):
            in_files = True
            continue
        if in_files and line.strip() and not line[0].isspace():
            in_files = False
        if not in_files:
            continue
        m = _FILE_LINE.match(line.rstrip("\n"))
        if m and m["key"] in hashes and _SHA.search(m["body"]):
            lines[i] = _SHA.sub(f"sha256: {hashes[m['key']]}", line, count=1)
            done.add(m["key"])
    missing = sorted(set(hashes) - done)
    if missing:
        raise ManifestError(
            f"cannot pin files {missing}: each entry under `files:` must be one line "
            "`key: {path: ..., role: ..., sha256: ...}`",
            path=path,
            location="files",
            code="manifest.invalid",
            fix="write the entries in that form (see docs/tasks.md)",
        )
    return "".join(lines)
