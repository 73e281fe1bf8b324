"""Real public clinical cohorts for the demo tasks, loaded from the SurvSet package.

SurvSet (PyPI, 77 survival datasets) ships each cohort as a pickled DataFrame with columns ``pid``,
``event``, ``time`` and covariates prefixed ``num_`` / ``fac_`` (categorical missingness is a
``'missing'`` level). This module turns four of them into tidy cohort tables with stable string
patient ids, readable covariate names and the subgroup attributes of paper App. F (age, sex,
race/ethnicity where the cohort records them). Nothing here splits or writes files.

Provenance and what differs from the paper's cohorts is documented in ``docs/tasks.md``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from automd_analysis.errors import DataError

#: The 14 covariates of the benchmark's SUPPORT task (pycox's processed SUPPORT set):
#: SurvSet column -> column name in the demo task files.
SUPPORT_COVARIATES: dict[str, str] = {
    "num_age": "age",
    "fac_sex": "sex",
    "fac_race": "race",
    "num_num_co": "num_comorbidities",
    "fac_diabetes": "diabetes",
    "fac_dementia": "dementia",
    "fac_ca": "cancer",
    "num_meanbp": "mean_bp",
    "num_hrt": "heart_rate",
    "num_resp": "resp_rate",
    "num_temp": "temperature",
    "num_wblc": "wbc",
    "num_sod": "sodium",
    "num_crea": "creatinine",
}


@dataclass(frozen=True)
class Cohort:
    """A cleaned cohort: one row per patient.

    Attributes
    ----------
    name : str
        SurvSet dataset name.
    frame : DataFrame
        ``patient_id`` (str), the feature columns, ``duration`` (float), ``event`` (0/1 int),
        sorted by ``patient_id``.
    features : list of str
        Covariates an agent receives (order as in the task files).
    subgroups : dict
        Subgroup attribute -> column in ``frame`` (``age``, ``sex``, ``race`` where available).
    time_unit : str
    source_rows : int
        Rows in the SurvSet table before any exclusion.
    exclusions : dict
        Exclusion step -> number of rows it removed (for the docs and tests).
    """

    name: str
    frame: pd.DataFrame
    features: list[str]
    subgroups: dict[str, str]
    time_unit: str
    source_rows: int
    exclusions: dict[str, int] = field(default_factory=dict)


def load_survset(name: str) -> pd.DataFrame:
    """Load a SurvSet dataset as a DataFrame (a copy), silencing its numpy deprecation warning.

    SurvSet 0.2.11 unpickles frames that reference ``numpy.core``, which numpy 2 reports with a
    ``DeprecationWarning`` on every load; the warning is filtered here only.

    Raises
    ------
    DataError
        If SurvSet is not installed or does not provide ``name``.
    """
    return _load_survset_cached(name).copy()


@lru_cache(maxsize=8)
def _load_survset_cached(name: str) -> pd.DataFrame:
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=DeprecationWarning)
            from SurvSet.data import SurvLoader

            return SurvLoader().load_dataset(name)["df"]
    except ImportError:
        raise DataError(
            "the SurvSet package is not installed",
            code="data.missing",
            fix="pip install 'SurvSet>=0.2.11' (a dependency of automd-analysis)",
        ) from None
    except Exception as exc:  # SurvSet raises plain exceptions for unknown names
        raise DataError(
            f"SurvSet cannot load dataset {name!r}: {exc}",
            code="data.missing",
            fix="install SurvSet 0.2.11 (the version the demo manifests were pinned with)",
        ) from None


def _ids(prefix: str, pid: pd.Series) -> pd.Series:
    return prefix + pid.astype(np.int64).map("{:05d}".format)


def _categorical(series: pd.Series) -> pd.Series:
    return series.astype(str).str.strip().str.lower()


def _finish(
    name: str,
    df: pd.DataFrame,
    features: list[str],
    subgroups: dict[str, str],
    time_unit: str,
    source_rows: int,
    exclusions: dict[str, int],
) -> Cohort:
    frame = df[["patient_id", *features, "duration", "event"]].sort_values("patient_id")
    frame = frame.reset_index(drop=True)
    if frame["patient_id"].duplicated().any():  # pragma: no cover - SurvSet pids are unique
        raise DataError(f"SurvSet {name}: duplicate pid", code="data.invalid")
    return Cohort(name, frame, features, subgroups, time_unit, source_rows, exclusions)


@lru_cache(maxsize=1)
def support_cohort() -> Cohort:
    """SUPPORT (SurvSet ``support2``): time to death in days, the 14 benchmark covariates.

    Complete cases on the 12 numeric/binary covariates; race keeps SurvSet's ``missing`` level
    (as pycox's processed set keeps those patients). 9,105 -> 8,873 patients (6,036 deaths),
    the size of the benchmark's SUPPORT task (paper Table 8: 7,098 + 1,775).
    """
    raw = load_survset("support2")
    source_rows = len(raw)
    numeric = [c for c in SUPPORT_COVARIATES if not c.startswith("fac_")]
    complete = raw[numeric].notna().all(axis=1)
    df = raw.loc[complete].rename(columns=SUPPORT_COVARIATES)
    df["patient_id"] = _ids("sup", df["pid"])
    for col in ("sex", "race", "cancer"):
        df[col] = _categorical(df[col])
    for col in ("diabetes", "dementia", "num_comorbidities"):
        df[col] = df[col].astype(np.int64)
    df["duration"] = df["time"].astype(np.float64)
    df["event"] = df["event"].astype(np.int64)
    return _finish(
        "support2",
        df,
        list(SUPPORT_COVARIATES.values()),
        {"age": "age", "sex": "sex", "race": "race"},
        "days",
        source_rows,
        {"incomplete numeric covariates": int((~complete).sum())},
    )


@lru_cache(maxsize=1)
def rotterdam_cohort() -> Cohort:
    """Rotterdam breast cancer (SurvSet ``rott2``): overall survival in months, 2,982 patients.

    SurvSet dropped the recurrence times, so the benchmark's recurrence-or-death endpoint cannot
    be rebuilt; the demo predicts death. ``recent`` (a period band of ``year``) is dropped as a
    duplicate of ``year``. Everyone is female; there is no race variable.
    """
    raw = load_survset("rott2")
    df = raw.rename(
        columns={
            "num_year": "year",
            "num_age": "age",
            "fac_meno": "menopause",
            "fac_tsize": "tumor_size",
            "fac_grade": "grade",
            "num_nodes": "positive_nodes",
            "num_progesterone": "progesterone",
            "num_estrogen": "estrogen",
            "fac_hormon": "hormonal_therapy",
            "fac_chemo": "chemotherapy",
        }
    )
    features = [
        "year",
        "age",
        "menopause",
        "tumor_size",
        "grade",
        "positive_nodes",
        "progesterone",
        "estrogen",
        "hormonal_therapy",
        "chemotherapy",
    ]
    for col in ("menopause", "tumor_size", "hormonal_therapy", "chemotherapy"):
        df[col] = _categorical(df[col])
    df["grade"] = df["grade"].astype(np.int64)
    df["patient_id"] = _ids("rot", df["pid"])
    df["duration"] = df["time"].astype(np.float64)
    df["event"] = df["event"].astype(np.int64)
    return _finish("rott2", df, features, {"age": "age"}, "months", len(raw), {})


@lru_cache(maxsize=1)
def flchain_cohort() -> Cohort:
    """Serum free light chain study (SurvSet ``flchain``): death in days, sample year 1995-2003.

    ``chapter`` (cause-of-death chapter, known only for the dead) is dropped because it reveals
    the outcome; ``flc_grp`` is kept (a decile of kappa+lambda in the source study). The 3
    subjects with non-positive follow-up are excluded (7,874 -> 7,871).
    """
    raw = load_survset("flchain")
    keep = raw["time"] > 0
    df = raw.loc[keep].rename(
        columns={
            "num_age": "age",
            "fac_sex": "sex",
            "num_sample_yr": "sample_year",
            "num_kappa": "kappa",
            "num_lambda": "lambda",
            "num_flc_grp": "flc_group",
            "num_creatinine": "creatinine",
            "fac_mgus": "mgus",
        }
    )
    df["sex"] = df["sex"].astype(str).map({"F": "female", "M": "male"})
    df["mgus"] = df["mgus"].astype(np.int64)
    df["patient_id"] = _ids("flc", df["pid"])
    df["duration"] = df["time"].astype(np.float64)
    df["event"] = df["event"].astype(np.int64)
    features = [
        "age",
        "sex",
        "sample_year",
        "kappa",
        "lambda",
        "flc_group",
        "creatinine",
        "mgus",
    ]
    return _finish(
        "flchain",
        df,
        features,
        {"age": "age", "sex": "sex"},
        "days",
        len(raw),
        {"non-positive follow-up": int((~keep).sum())},
    )


@lru_cache(maxsize=1)
def rhc_cohort() -> Cohort:
    """Right heart catheterization study (SurvSet ``rhc``): 5,735 ICU patients, death in days.

    All 53 baseline covariates are kept (names without SurvSet's ``num_``/``fac_`` prefixes;
    categorical levels lower-cased); ``urin1`` and ``adld3p`` keep their missing values.
    """
    raw = load_survset("rhc")
    covariates = [c for c in raw.columns if c.startswith(("num_", "fac_"))]
    rename = {c: c.split("_", 1)[1] for c in covariates}
    df = raw.rename(columns=rename)
    features = list(rename.values())
    for col in features:
        if isinstance(df[col].dtype, pd.CategoricalDtype):
            cats = df[col].cat.categories
            if pd.api.types.is_integer_dtype(cats):
                df[col] = df[col].astype(np.int64)
            else:
                df[col] = _categorical(df[col])
    df["patient_id"] = _ids("rhc", df["pid"])
    df["duration"] = df["time"].astype(np.float64)
    df["event"] = df["event"].astype(np.int64)
    return _finish(
        "rhc",
        df,
        features,
        {"age": "age", "sex": "sex", "race": "race"},
        "days",
        len(raw),
        {},
    )


#: Cohort name (manifest ``build.params.cohort``) -> loader.
COHORTS = {
    "support": support_cohort,
    "rotterdam": rotterdam_cohort,
    "flchain": flchain_cohort,
    "rhc": rhc_cohort,
}


def get_cohort(name: str) -> Cohort:
    """The cohort ``name`` (one of :data:`COHORTS`)."""
    try:
        return COHORTS[name]()
    except KeyError:
        raise DataError(
            f"unknown demo cohort {name!r} (known: {sorted(COHORTS)})",
            location="build.params.cohort",
            code="manifest.invalid",
        ) from None


def fixed_horizon_outcome(
    duration: np.ndarray, event: np.ndarray, horizon: float
) -> tuple[np.ndarray, np.ndarray]:
    """Binary death-by-``horizon`` outcome and which patients have it observed.

    ``label = 1`` if the patient died at or before ``horizon`` (``event == 1`` and
    ``duration <= horizon``); the outcome is unknown for patients censored before the horizon
    (``event == 0`` and ``duration < horizon``).

    Returns
    -------
    label : ndarray of int64
    observed : ndarray of bool
    """
    duration = np.asarray(duration, dtype=np.float64)
    event = np.asarray(event)
    label = ((event == 1) & (duration <= horizon)).astype(np.int64)
    observed = ~((event == 0) & (duration < horizon))
    return label, observed
