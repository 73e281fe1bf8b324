"""The typed schema of a version config (``code/<version>/config.json``), checked before a re-run.

:mod:`.render` writes config values into the script it generates (``SEED = 42``, model
parameters, thresholds). When a config comes back from an archive - which is untrusted - it is
validated here first, so that only values of the declared types reach the renderer: integers,
finite floats, booleans, ``null`` and strings from closed vocabularies (or short identifiers for
model-parameter strings). A seed of ``"42; import os"`` is a string where an integer is required
and is refused; so is every unknown key. The re-run then renders the script from the *validated*
values, so no archive text can ever become source code.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from automd_analysis.errors import ArchiveError
from automd_demo.harness.configs import CLASSIFIER_FAMILIES, OUTPUT_BUGS, SURVIVAL_FAMILIES

__all__ = ["BaselineConfigFile", "ConfigFile", "validate_config_file"]

_MAX_INT = 2**31 - 1
Int = Annotated[int, Field(strict=True, ge=0, le=_MAX_INT)]
Float = Annotated[float, Field(allow_inf_nan=False, ge=-1e12, le=1e12)]
Ident = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.\-]{1,64}$")]
Family = Literal[tuple(CLASSIFIER_FAMILIES + SURVIVAL_FAMILIES)]  # type: ignore[valid-type]
OutputBug = Literal[tuple(b for bugs in OUTPUT_BUGS.values() for b in bugs)]  # type: ignore[valid-type]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Features(_Strict):
    impute: Literal["median", "none"]
    scale: bool
    missing_indicators: bool
    log_skewed: bool
    measured_flags: bool
    rolling: Annotated[int, Field(strict=True, ge=0, le=1000)]
    deltas: bool
    whole_stay_max: bool
    bug: Literal["typo_column", "train_only_feature"] | None


class Member(_Strict):
    family: Family
    params: dict[Ident, Int | Float | bool | Ident | None]
    weight: Float
    censoring: Literal["correct", "censored_as_death", "censored_as_survivor"]


class Validation(_Strict):
    design: Literal["holdout", "kfold", "target_site"]
    k: Annotated[int, Field(strict=True, ge=2, le=100)]
    fraction: Annotated[float, Field(gt=0, lt=1)]


class Config(_Strict):
    kind: Literal["survival", "classification", "sequential"]
    seed: Int
    features: Features
    members: list[Member] = Field(min_length=1, max_length=20)
    combine: Literal["mean", "rank_mean", "stack"]
    seeds: Annotated[int, Field(strict=True, ge=1, le=100)]
    validation: Validation
    imbalance: Literal["none", "class_weight", "oversample", "undersample", "smote"]
    calibration: Literal["none", "isotonic", "platt", "prevalence"]
    threshold: Literal["none", "fixed", "tuned"]
    subgroup_check: bool
    output_bug: OutputBug | None
    intervals: Annotated[int, Field(strict=True, ge=1, le=1000)]


class ConfigFile(_Strict):
    """``config.json`` of an agent version."""

    agent: Ident
    task: Ident
    version: Ident
    config: Config


class BaselineConfigFile(_Strict):
    """``config.json`` of a simple-baseline run (``automd baselines``)."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)
    task: Ident
    seed: Int
    procedure: str


def validate_config_file(raw: object, path) -> ConfigFile | BaselineConfigFile:
    """Validate a parsed ``config.json``; raise ``archive.config_invalid`` naming the field.

    Parameters
    ----------
    raw : object
        The parsed JSON.
    path : Path
        The file, for the message.

    Returns
    -------
    ConfigFile or BaselineConfigFile
    """
    model = BaselineConfigFile if isinstance(raw, dict) and "procedure" in raw else ConfigFile
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "<root>"
        raise ArchiveError(
            f"config.json does not match the harness schema: {first['msg']} (field {loc})",
            path=path,
            location=loc,
            code="archive.config_invalid",
            fix="only configs written by the demo harness can be re-run; rebuild the run with "
            "`automd demo archive`",
        ) from None
