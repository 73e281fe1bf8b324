"""Strict schemas of the archive's metadata files (docs/archive.md).

``run.json`` has schema version 1 or 2 (2 adds the optional ``tokens.source``); the other files
have version 1.

Unknown keys are errors, integers are not strings and lie in [0, 2**53 - 1] (so every count fits
int64 and float64 exactly), floats are finite, timestamps carry a zone.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_serializer,
    model_validator,
)

from automd_analysis.archive.safe import MAX_INT, NAME_PATTERN, read_bounded
from automd_analysis.errors import ArchiveError

_NAME = NAME_PATTERN.pattern
_EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
_LATEST = datetime(2200, 1, 1, tzinfo=UTC)


def _plausible_time(value: datetime) -> datetime:
    """Timestamps lie in [1970, 2200) (no overflow when converted to UTC or subtracted)."""
    if not _EARLIEST <= value < _LATEST:
        raise ValueError("timestamp must lie between 1970-01-01 and 2200-01-01")
    return value


Timestamp = Annotated[AwareDatetime, AfterValidator(_plausible_time)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)


class ArchiveYaml(BaseModel):
    """``archive.yaml`` (YAML gives Python objects, so this model is not strict)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    schema_version: Literal[1]
    name: str = Field(pattern=_NAME)
    description: str = ""
    experiments: dict[str, str] = Field(min_length=1)
    roles: dict[Literal["main", "objectives", "llm"], str] | None = None
    reference_agents: list[str] | None = None
    # process-only tasks: id -> automd_analysis.tasks.ProcessTask fields without `id`
    process_tasks: dict[str, dict[str, Any]] | None = None
    provenance: dict[str, Any] = Field(default_factory=dict)


class TokensJson(_Strict):
    prompt: int = Field(ge=0, le=MAX_INT)
    completion: int = Field(ge=0, le=MAX_INT)
    total: int = Field(ge=0, le=MAX_INT)
    simulated: bool = False
    # schema version 2: where the counts came from (absent: not recorded)
    source: Literal["agent_log", "user_file", "harness"] | None = None

    @model_serializer(mode="wrap")
    def _without_absent_source(self, handler):
        data = handler(self)
        if data.get("source") is None:
            data.pop("source", None)
        return data


class SelectionJson(_Strict):
    rule: str
    selected_version: str | None = Field(pattern=_NAME)


class StepJson(_Strict):
    step: int = Field(ge=1, le=MAX_INT)
    ok: bool
    reported_val_score: float | None = None
    created_at: Timestamp | None = None
    version: str | None = Field(default=None, pattern=_NAME)
    node: str | None = Field(default=None, pattern=_NAME)
    parent: str | None = Field(default=None, pattern=_NAME)


class RunJson(_Strict):
    """``run.json``."""

    schema_version: Literal[1, 2]
    experiment: str
    agent: str
    task: str
    rep: int = Field(ge=0, le=999_999)
    llm: str = Field(min_length=1)
    reference: bool = False
    search: Literal["linear", "tree", "none"]
    objective: str | None = None
    started_at: Timestamp
    ended_at: Timestamp
    budget_minutes: float = Field(gt=0, le=1e9)
    tokens: TokensJson | None = None
    selection: SelectionJson
    reported_val_score: float | None = None
    steps: list[StepJson] | None = None
    notes: str | None = None
    # part of the run is missing or unreadable, or it stopped inside a stage (automd import)
    incomplete: bool = False

    @model_validator(mode="after")
    def _version_fields(self) -> RunJson:
        if self.schema_version == 1 and self.tokens is not None and self.tokens.source is not None:
            raise ValueError("tokens.source needs schema_version 2")
        return self


class VersionJson(_Strict):
    """``versions/<version_id>/meta.json``."""

    version: str
    created_at: Timestamp
    step: int = Field(ge=1, le=MAX_INT)
    parent: str | None = Field(default=None, pattern=_NAME)
    node: str | None = Field(default=None, pattern=_NAME)
    reported_val_score: float | None = None
    faulty: bool = False
    code_files: list[str] = Field(default_factory=list)
    tokens: int | None = Field(default=None, ge=0, le=MAX_INT)
    stage: str | None = None


def pydantic_error(exc: ValidationError, path: Path, code: str, fix: str) -> ArchiveError:
    """An :class:`ArchiveError` naming the first failing field (all failures in ``details``)."""
    errs = exc.errors()
    first = errs[0]
    loc = ".".join(str(p) for p in first["loc"]) or "<root>"
    return ArchiveError(
        f"{first['msg']} (field {loc})",
        path=path,
        location=loc,
        code=code,
        fix=fix,
        details={
            "errors": [{"loc": ".".join(str(p) for p in e["loc"]), "msg": e["msg"]} for e in errs]
        },
    )


def load_json_model(path: Path, model: type[BaseModel], root: Path, max_bytes: int, code: str):
    """Read ``path`` (bounded, inside ``root``) and validate it as ``model``.

    Raises
    ------
    ArchiveError
        From :func:`~automd_analysis.archive.safe.read_bounded`, or ``code`` when the JSON does
        not match the schema (the message names the field).
    """
    data = read_bounded(path, max_bytes, root)
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        raise pydantic_error(exc, path, code, f"see docs/archive.md ({path.name})") from None
