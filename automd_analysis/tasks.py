"""Task manifests: the typed schema, where manifests and data live, and checksum-verified access.

No code in this package knows a task by name. Everything the scorer needs - kind, metric, null
score m0, submission schema, the hidden-label file and its sha256, subgroup columns - comes from a
YAML manifest in ``data_manifests/<task_id>.yaml`` (SPEC section 3.1), validated on load by
:class:`TaskManifest`.

Paths inside a manifest are relative to a *data root*: ``--data DIR`` on the command line, else the
``AUTOMD_DATA`` environment variable, else ``<repo>/data`` (where ``automd demo data`` builds the demo
tasks). Manifests are found in ``--manifests DIR``, ``AUTOMD_MANIFESTS``, else ``<repo>/data_manifests``.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from automd_analysis.errors import DataError, ManifestError

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


#: m0 of eq. (1) for each primary metric (paper section 3.3).
NULL_SCORES: dict[Metric, float] = {
    Metric.ctd_adj_antolini: 0.5,
    Metric.auroc: 0.5,
    Metric.min_se_ppv: 0.0,
    Metric.utility_2019: 0.0,
}

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
    """The columns a valid submission must have (SPEC section 3.2)."""

    id_columns: list[str] = Field(min_length=1, max_length=2)
    probability_column: str | None = "PredictedProbability"
    label_column: str | None = None
    time_grid: str | None = Field(
        default=None, description="Key in `files` of the survival time grid (one column `time`)."
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
        return self


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
    except FileNotFoundError:
        raise ManifestError(
            "manifest not found",
            path=path,
            code="manifest.missing",
            fix="check the task id and --manifests / AUTOMD_MANIFESTS",
        ) from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ManifestError(
            f"manifest is not readable YAML: {exc}", path=path, code="manifest.unreadable"
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


def manifest_dir(override: str | Path | None = None) -> Path:
    """The manifest directory: argument, else ``AUTOMD_MANIFESTS``, else ``<repo>/data_manifests``."""
    if override is not None:
        return Path(override)
    env = os.environ.get("AUTOMD_MANIFESTS")
    return Path(env) if env else DEFAULT_MANIFEST_DIR


def data_root(override: str | Path | None = None) -> Path:
    """The data root: argument, else ``AUTOMD_DATA``, else ``<repo>/data``."""
    if override is not None:
        return Path(override)
    env = os.environ.get("AUTOMD_DATA")
    return Path(env) if env else DEFAULT_DATA_ROOT


def load_manifests(directory: str | Path | None = None) -> dict[str, TaskManifest]:
    """All manifests of a directory, keyed by task id (sorted)."""
    directory = manifest_dir(directory)
    if not directory.is_dir():
        raise ManifestError(
            "manifest directory not found",
            path=directory,
            code="manifest.missing",
            fix="pass --manifests DIR",
        )
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
                    "run `automd demo data`"
                    if self.manifest.origin == "demo"
                    else "point --data / AUTOMD_DATA at the benchmark data root"
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


def get_task(
    task_id: str, data: str | Path | None = None, manifests: str | Path | None = None
) -> Task:
    """Load manifest ``task_id`` and bind it to the data root."""
    path = manifest_dir(manifests) / f"{task_id}.yaml"
    return Task(load_manifest(path), data_root(data))


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


def load_labels(task: Task) -> TaskLabels:  # pragma: no cover - stub, implemented with issue 3
    """Load (checksum-verified) hidden labels, subgroup attributes and the time grid of ``task``."""
    raise NotImplementedError
