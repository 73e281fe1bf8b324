"""Demo task recipes: cohort + split rule -> the tables of one task (paper App. A rules).

A demo manifest names its recipe in ``build.recipe`` with parameters in ``build.params``; no code
here knows a task id. Every recipe returns a :class:`TaskTables` whose columns follow the
manifest (id, outcome and submission column names), so the writer (:mod:`.task_files`) only
formats and writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from automd_analysis.errors import ManifestError
from automd_analysis.tasks import Kind, TaskManifest, format_grid_time
from automd_demo.cohorts import Cohort, fixed_horizon_outcome, get_cohort
from automd_demo.sequential_synth import FEATURES as SEPSIS_FEATURES
from automd_demo.sequential_synth import simulate_sepsis_cohort
from automd_demo.splits import kaplan_meier_at, split_ids, time_grid


@dataclass
class TaskTables:
    """Everything written for one task, before formatting.

    Attributes
    ----------
    train : DataFrame
        What the agent trains on (features + outcome columns).
    test_features : DataFrame
        Test rows without outcomes (id columns first).
    labels : DataFrame
        Hidden test outcomes + subgroup attributes, rows in ``test_features`` order.
    sample_submission : DataFrame
        Valid null predictions in the submission format.
    time_grid : ndarray or None
        Survival grid (paper App. A.1).
    facts : dict
        Numbers quoted in the task description (sizes, rates, exclusions).
    """

    train: pd.DataFrame
    test_features: pd.DataFrame
    labels: pd.DataFrame
    sample_submission: pd.DataFrame
    time_grid: np.ndarray | None = None
    facts: dict[str, Any] = field(default_factory=dict)


Recipe = Callable[[TaskManifest], TaskTables]
RECIPES: dict[str, Recipe] = {}


def recipe(name: str) -> Callable[[Recipe], Recipe]:
    """Register a recipe under ``name`` (the manifest's ``build.recipe``)."""

    def register(fn: Recipe) -> Recipe:
        RECIPES[name] = fn
        return fn

    return register


def build_tables(manifest: TaskManifest) -> TaskTables:
    """Run the manifest's recipe.

    Raises
    ------
    ManifestError
        If the manifest has no ``build`` section or names an unknown recipe / parameter.
    """
    if manifest.build is None:
        raise ManifestError(
            f"task {manifest.id!r} has no build recipe (only demo tasks can be built)",
            location="build",
            code="manifest.invalid",
        )
    try:
        fn = RECIPES[manifest.build.recipe]
    except KeyError:
        raise ManifestError(
            f"unknown build recipe {manifest.build.recipe!r} (known: {sorted(RECIPES)})",
            location="build.recipe",
            code="manifest.invalid",
        ) from None
    try:
        return fn(manifest)
    except KeyError as exc:
        raise ManifestError(
            f"task {manifest.id!r}: build parameter {exc} is missing",
            location="build.params",
            code="manifest.invalid",
        ) from None


# --------------------------------------------------------------------------------------------
# Shared pieces


def _labels_frame(
    manifest: TaskManifest, cohort_rows: pd.DataFrame, outcome: dict[str, np.ndarray]
) -> pd.DataFrame:
    """Id columns + outcome columns + the subgroup attribute columns the manifest declares."""
    out = pd.DataFrame({manifest.labels.id_columns[0]: cohort_rows["patient_id"].to_numpy()})
    for col, values in outcome.items():
        out[col] = values
    for sg in manifest.subgroups.values():
        out[sg.column] = cohort_rows[sg.column].to_numpy()
    return out


def null_survival_submission(
    manifest: TaskManifest, test_ids: np.ndarray, train_duration, train_event, grid
) -> pd.DataFrame:
    """Kaplan-Meier curve of the training set at every grid time, for every test patient."""
    km = kaplan_meier_at(train_duration, train_event, grid)
    data = {manifest.submission.id_columns[0]: test_ids}
    for t, s in zip(grid, km, strict=True):
        data[format_grid_time(t)] = np.full(len(test_ids), float(s))
    return pd.DataFrame(data)


def null_binary_submission(
    manifest: TaskManifest, test_ids: pd.DataFrame, prevalence: float
) -> pd.DataFrame:
    """Training prevalence as the probability (and label 0 when a label is required)."""
    out = test_ids.reset_index(drop=True).copy()
    out[manifest.submission.probability_column] = float(prevalence)
    if manifest.submission.label_column:
        out[manifest.submission.label_column] = 0
    return out


def _check_columns(manifest: TaskManifest) -> None:
    if manifest.labels.id_columns[0] != "patient_id":
        raise ManifestError(
            "demo cohorts identify patients by `patient_id`",
            location="labels.id_columns",
            code="manifest.invalid",
        )


# --------------------------------------------------------------------------------------------
# Survival: internal split


def _survival_tables(
    manifest: TaskManifest,
    cohort: Cohort,
    train: pd.DataFrame,
    test: pd.DataFrame,
    grid_source: pd.DataFrame | None = None,
) -> TaskTables:
    spec = manifest.labels
    grid_source = train if grid_source is None else grid_source
    grid = time_grid(grid_source["duration"], grid_source["event"])
    train_out = train[["patient_id", *cohort.features]].copy()
    train_out[spec.duration] = train["duration"].to_numpy()
    train_out[spec.event] = train["event"].to_numpy()
    labels = _labels_frame(
        manifest,
        test,
        {spec.duration: test["duration"].to_numpy(), spec.event: test["event"].to_numpy()},
    )
    sample = null_survival_submission(
        manifest, test["patient_id"].to_numpy(), train["duration"], train["event"], grid
    )
    facts = {
        "n_train": len(train),
        "n_test": len(test),
        "train_events": int(train["event"].sum()),
        "grid_points": len(grid),
        "source_rows": cohort.source_rows,
        "cohort_rows": len(cohort.frame),
    }
    return TaskTables(
        train=train_out,
        test_features=test[["patient_id", *cohort.features]].reset_index(drop=True),
        labels=labels,
        sample_submission=sample,
        time_grid=grid,
        facts=facts,
    )


@recipe("survival_split")
def survival_split(manifest: TaskManifest) -> TaskTables:
    """80/20 patient split of a survival cohort (``params.stratify``: ``event`` or null).

    Paper App. A.1: SUPPORT unstratified, Rotterdam stratified by event status; seed 42.
    """
    _check_columns(manifest)
    params = manifest.build.params
    cohort = get_cohort(params["cohort"])
    df = cohort.frame
    strat = df[params["stratify"]] if params.get("stratify") else None
    train_ids, test_ids = split_ids(
        df["patient_id"],
        test_size=params.get("test_size", 0.2),
        seed=manifest.build.seed,
        stratify=strat,
    )
    indexed = df.set_index("patient_id", drop=False)
    train = indexed.loc[train_ids].reset_index(drop=True)
    test = indexed.loc[test_ids].reset_index(drop=True)
    return _survival_tables(manifest, cohort, train, test)


# --------------------------------------------------------------------------------------------
# Survival: calendar-period shift (mirrors SEER / SEER, later period)


def period_split(
    cohort: Cohort, column: str, later_from: int, test_fraction: float, seed: int
) -> dict[str, pd.DataFrame]:
    """Early/late period split with a shared test half of the later period.

    Returns ``early`` (period < ``later_from``), ``later_train`` (later-period subjects not in
    the test half) and ``test`` (a random ``test_fraction`` of the later period, seed ``seed``).
    """
    df = cohort.frame
    later = df[df[column] >= later_from]
    early = df[df[column] < later_from]
    rest, test_ids = split_ids(later["patient_id"], test_size=test_fraction, seed=seed)
    indexed = df.set_index("patient_id", drop=False)
    return {
        "early": early.reset_index(drop=True),
        "later_train": indexed.loc[rest].reset_index(drop=True),
        "test": indexed.loc[test_ids].reset_index(drop=True),
    }


@recipe("period_shift")
def period_shift(manifest: TaskManifest) -> TaskTables:
    """Calendar-period shift: both variants test on the same random half of the later period.

    ``params.variant == "internal"`` trains on every other subject; ``"external"`` trains on the
    early period only. Both use the time grid of the early period's events (as both SEER tasks
    use the grid of the 2010-2013 training data; paper App. A.1).
    """
    _check_columns(manifest)
    params = manifest.build.params
    cohort = get_cohort(params["cohort"])
    parts = period_split(
        cohort,
        params["period_column"],
        int(params["later_from"]),
        float(params.get("test_fraction", 0.5)),
        manifest.build.seed,
    )
    variant = params["variant"]
    if variant == "internal":
        train = pd.concat([parts["early"], parts["later_train"]]).sort_values("patient_id")
        train = train.reset_index(drop=True)
    elif variant == "external":
        train = parts["early"]
    else:
        raise ManifestError(
            f"period_shift variant must be 'internal' or 'external', got {variant!r}",
            location="build.params.variant",
            code="manifest.invalid",
        )
    tables = _survival_tables(manifest, cohort, train, parts["test"], grid_source=parts["early"])
    tables.facts.update(
        n_early=len(parts["early"]),
        n_later=len(parts["later_train"]) + len(parts["test"]),
        later_from=int(params["later_from"]),
    )
    return tables


# --------------------------------------------------------------------------------------------
# Classification: fixed-horizon death


@recipe("fixed_horizon_classification")
def fixed_horizon_classification(manifest: TaskManifest) -> TaskTables:
    """Death within ``params.horizon`` days of a survival cohort, as a binary task.

    Patients censored before the horizon have no observed outcome and are excluded (SUPPORT has
    none: no censoring before day 344; RHC has 8 before day 30). The 80/20 split is stratified by
    the label (as the paper's MIMIC-IV task), seed ``build.seed``.
    """
    _check_columns(manifest)
    params = manifest.build.params
    cohort = get_cohort(params["cohort"])
    df = cohort.frame
    label, observed = fixed_horizon_outcome(df["duration"], df["event"], float(params["horizon"]))
    df = df.loc[observed].assign(_label=label[observed]).reset_index(drop=True)
    train_ids, test_ids = split_ids(
        df["patient_id"],
        test_size=params.get("test_size", 0.2),
        seed=manifest.build.seed,
        stratify=df["_label"],
    )
    indexed = df.set_index("patient_id", drop=False)
    train = indexed.loc[train_ids].reset_index(drop=True)
    test = indexed.loc[test_ids].reset_index(drop=True)
    label_col = manifest.labels.label
    train_out = train[["patient_id", *cohort.features]].copy()
    train_out[label_col] = train["_label"].to_numpy()
    labels = _labels_frame(manifest, test, {label_col: test["_label"].to_numpy()})
    prevalence = float(train["_label"].mean())
    sample = null_binary_submission(manifest, test[["patient_id"]], prevalence)
    facts = {
        "n_train": len(train),
        "n_test": len(test),
        "prevalence": prevalence,
        "excluded_censored": int((~observed).sum()),
        "horizon": params["horizon"],
        "source_rows": cohort.source_rows,
        "cohort_rows": len(cohort.frame),
    }
    return TaskTables(
        train=train_out,
        test_features=test[["patient_id", *cohort.features]].reset_index(drop=True),
        labels=labels,
        sample_submission=sample,
        facts=facts,
    )


# --------------------------------------------------------------------------------------------
# Sequential: synthetic two-hospital sepsis cohort (mirrors paper App. A.3)


@lru_cache(maxsize=2)
def _sepsis(n_patients: int, share_b: float, seed: int):
    return simulate_sepsis_cohort(n_patients=n_patients, share_b=share_b, seed=seed)


def sepsis_split(patients: pd.DataFrame, local_labels: int, seed: int) -> dict[str, np.ndarray]:
    """Patient sets of the three sepsis tasks (paper App. A.3), each sorted.

    ``internal_train`` / ``internal_test``: 80/20 split stratified by hospital x ever-septic.
    ``external_test``: the hospital-B patients of ``internal_test`` (shared test set).
    ``hospital_a``: every hospital-A patient. ``local``: ``local_labels`` hospital-B patients
    from outside ``internal_test``, stratified by ever-septic.
    """
    train, test = split_ids(
        patients["patient_id"],
        test_size=0.2,
        seed=seed,
        stratify=patients[["hospital", "ever_septic"]],
    )
    by_id = patients.set_index("patient_id")
    hosp = by_id["hospital"]
    external_test = np.sort(test[hosp.loc[test].to_numpy() == "B"])
    b_pool = patients[(patients["hospital"] == "B") & ~patients["patient_id"].isin(test)]
    local, _ = split_ids(
        b_pool["patient_id"],
        test_size=len(b_pool) - local_labels,
        seed=seed,
        stratify=b_pool["ever_septic"],
    )
    return {
        "internal_train": train,
        "internal_test": test,
        "external_test": external_test,
        "hospital_a": np.sort(patients.loc[patients["hospital"] == "A", "patient_id"].to_numpy()),
        "local": local,
    }


@recipe("sepsis_synthetic")
def sepsis_synthetic(manifest: TaskManifest) -> TaskTables:
    """Hourly sepsis tasks on the SYNTHETIC two-hospital cohort (``params.variant``:
    ``internal`` | ``new_hospital`` | ``local_labels``)."""
    params = manifest.build.params
    pid_col, hour_col = manifest.labels.id_columns
    label_col = manifest.labels.label
    cohort = _sepsis(
        int(params.get("n_patients", 2500)), float(params.get("share_b", 0.5)), manifest.build.seed
    )
    sets = sepsis_split(cohort.patients, int(params.get("local_labels", 500)), manifest.build.seed)
    variant = params["variant"]
    if variant == "internal":
        train_ids, test_ids, extra = sets["internal_train"], sets["internal_test"], 0
    elif variant == "new_hospital":
        train_ids, test_ids, extra = sets["hospital_a"], sets["external_test"], 0
    elif variant == "local_labels":
        train_ids = np.sort(np.concatenate([sets["hospital_a"], sets["local"]]))
        test_ids, extra = sets["external_test"], len(sets["local"])
    else:
        raise ManifestError(
            f"sepsis variant must be internal, new_hospital or local_labels, got {variant!r}",
            location="build.params.variant",
            code="manifest.invalid",
        )
    hourly = cohort.hourly.rename(
        columns={"patient_id": pid_col, "ICULOS": hour_col, "SepsisLabel": label_col}
    )
    columns = [pid_col, hour_col, "hospital", *SEPSIS_FEATURES]
    train = hourly[hourly[pid_col].isin(train_ids)]
    test = hourly[hourly[pid_col].isin(test_ids)]
    train_out = train[[*columns, label_col]].reset_index(drop=True)
    labels = test[[pid_col, hour_col, label_col]].reset_index(drop=True)
    prevalence = float(train[label_col].mean())
    sample = null_binary_submission(manifest, test[[pid_col, hour_col]], prevalence)
    pats = cohort.patients.set_index("patient_id")
    facts = {
        "n_train": len(train_ids) - extra,
        "extra_train": extra,
        "n_test": len(test_ids),
        "train_rows": len(train),
        "test_rows": len(test),
        "prevalence": prevalence,
        "train_septic": int(pats.loc[train_ids, "ever_septic"].sum()),
        "test_septic": int(pats.loc[test_ids, "ever_septic"].sum()),
    }
    return TaskTables(
        train=train_out,
        test_features=test[columns].reset_index(drop=True),
        labels=labels,
        sample_submission=sample,
        facts=facts,
    )


def kinds_supported() -> dict[str, Kind]:
    """Recipe -> task kind it produces (used by a manifest consistency test)."""
    return {
        "survival_split": Kind.survival,
        "period_shift": Kind.survival,
        "fixed_horizon_classification": Kind.classification,
        "sepsis_synthetic": Kind.sequential,
    }
