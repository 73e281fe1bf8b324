"""SYNTHETIC hourly ICU cohort with two hospitals, for the demo sepsis tasks (paper App. A.3).

No hourly ICU data (PhysioNet/CinC 2019, MIMIC, eICU) installs from a package registry, so the
demo sequential tasks are simulated. Nothing in these tables is patient data. The generating
process imitates the structure of the PhysioNet/CinC 2019 challenge records:

* one row per ICU hour (``ICULOS`` = 1, 2, ...), variable names as in the challenge (HR, O2Sat,
  Temp, SBP, MAP, DBP, Resp, WBC, Lactate, Creatinine, Platelets, Bilirubin_total, Glucose, BUN,
  Age, Gender, Unit1, Unit2, HospAdmTime) plus ``hospital`` (A or B);
* each patient has a latent severity that shifts every variable and raises sepsis risk;
  measurements follow a per-patient AR(1) process around that baseline;
* for septic patients, vitals and labs drift over the ~12 h before onset (heart rate, temperature,
  respiration, WBC and lactate rise, blood pressure and platelets fall), and some non-septic
  patients have a transient deterioration that mimics it;
* measurement is sparse and informative: vitals are recorded most hours, temperature every few
  hours, labs rarely (an admission panel, then more often when the patient deteriorates);
* ``SepsisLabel`` is 1 from 6 h before onset onwards (onset >= hour 7, so the first positive
  hour is >= 1 and the 2019 scorer's onset = first positive row + 6 recovers it exactly);
* the hospitals differ in case mix (B younger, more surgical, fewer septic patients),
  measurement frequency (B records vitals, temperature and labs less often, lactate rarely) and
  device calibration (B's temperature +0.3 degC, heart rate +3 bpm, MAP -3 mmHg, creatinine x1.1),
  so a model trained on hospital A meets a real shift on hospital B.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

#: Hourly feature columns in file order (after ``patient_id``, ``ICULOS``, ``hospital``).
VITALS = ["HR", "O2Sat", "Temp", "SBP", "MAP", "DBP", "Resp"]
LABS = ["WBC", "Lactate", "Creatinine", "Platelets", "Bilirubin_total", "Glucose", "BUN"]
DEMOGRAPHICS = ["Age", "Gender", "Unit1", "Unit2", "HospAdmTime"]
FEATURES = [*VITALS, *LABS, *DEMOGRAPHICS]


@dataclass(frozen=True)
class HospitalProfile:
    """Case mix, measurement habits and device offsets of one hospital."""

    age_mean: float
    male: float
    micu: float  # share admitted to the medical ICU (Unit1); the rest surgical (Unit2)
    sepsis_intercept: float
    vital_rate: float  # probability a vital sign is charted in a given hour
    bp_rate: float  # SBP/DBP (MAP is charted with the other vitals)
    temp_rate: float
    lab_rate: float  # per-hour probability of a lab draw at baseline
    lactate_rate: float
    admission_panel: float  # probability of labs in the first ICU hour
    temp_offset: float
    hr_offset: float
    map_offset: float
    creatinine_scale: float


HOSPITALS: dict[str, HospitalProfile] = {
    "A": HospitalProfile(
        age_mean=64.0,
        male=0.56,
        micu=0.60,
        sepsis_intercept=-2.75,
        vital_rate=0.94,
        bp_rate=0.85,
        temp_rate=0.33,
        lab_rate=0.060,
        lactate_rate=0.025,
        admission_panel=0.75,
        temp_offset=0.0,
        hr_offset=0.0,
        map_offset=0.0,
        creatinine_scale=1.0,
    ),
    "B": HospitalProfile(
        age_mean=58.0,
        male=0.52,
        micu=0.35,
        sepsis_intercept=-3.1,
        vital_rate=0.80,
        bp_rate=0.55,
        temp_rate=0.20,
        lab_rate=0.040,
        lactate_rate=0.008,
        admission_panel=0.55,
        temp_offset=0.3,
        hr_offset=3.0,
        map_offset=-3.0,
        creatinine_scale=1.1,
    ),
}

MAX_HOURS = 168  # stays are truncated at one week (as in the 2019 challenge data)
ONSET_MIN = 7  # earliest onset hour: the first positive label (onset - 6) is ICU hour >= 1
LABEL_LEAD = 6  # SepsisLabel = 1 from this many hours before onset


@dataclass(frozen=True)
class SepsisCohort:
    """The simulated cohort.

    Attributes
    ----------
    patients : DataFrame
        One row per patient: ``patient_id``, ``hospital``, ``n_hours``, ``ever_septic`` (0/1),
        ``onset_hour`` (ICU hour of sepsis onset; NaN if never septic), ``age``, ``sex``.
    hourly : DataFrame
        One row per patient-hour: ``patient_id``, ``ICULOS``, ``hospital``, :data:`FEATURES`,
        ``SepsisLabel``; sorted by patient and hour.
    """

    patients: pd.DataFrame
    hourly: pd.DataFrame


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def simulate_sepsis_cohort(
    n_patients: int = 2500, share_b: float = 0.5, seed: int = 42
) -> SepsisCohort:
    """Simulate the two-hospital hourly ICU cohort (see the module docstring).

    Parameters
    ----------
    n_patients : int
        Patients in total (about 35 ICU hours each on average).
    share_b : float
        Fraction of patients from hospital B (the rest from A).
    seed : int
        Seed of the single :class:`numpy.random.Generator` (PCG64) driving every random draw.

    Returns
    -------
    SepsisCohort
    """
    rng = np.random.default_rng(seed)
    n_b = round(n_patients * share_b)
    hospital = np.array(["A"] * (n_patients - n_b) + ["B"] * n_b)
    rng.shuffle(hospital)
    prof = [HOSPITALS[h] for h in hospital]

    def per(attr: str) -> np.ndarray:
        return np.array([getattr(p, attr) for p in prof], dtype=np.float64)

    age = np.clip(rng.normal(per("age_mean"), 15.0), 18, 90).round(0)
    male = (rng.random(n_patients) < per("male")).astype(np.int64)
    micu = (rng.random(n_patients) < per("micu")).astype(np.int64)
    severity = rng.standard_normal(n_patients)
    risk = per("sepsis_intercept") + 0.8 * severity + 0.02 * (age - 60) + 0.4 * micu
    septic = rng.random(n_patients) < _sigmoid(risk)

    # Stay length and onset.
    los = np.clip(np.round(np.exp(rng.normal(3.35, 0.6, n_patients))), 8, MAX_HOURS)
    onset = ONSET_MIN + np.round(rng.gamma(2.0, 12.0, n_patients))
    onset = np.minimum(onset, MAX_HOURS - 4)
    after = rng.integers(4, 25, n_patients)
    los = np.where(septic, np.minimum(onset + after, MAX_HOURS), los).astype(np.int64)
    onset = np.where(septic, onset, np.nan)

    # Hour grid (patients x hours), masked to each stay.
    hours = np.arange(1, MAX_HOURS + 1, dtype=np.float64)[None, :]
    in_stay = hours <= los[:, None]
    drift = np.where(septic[:, None], _sigmoid((hours - (onset[:, None] - 5.0)) / 2.0), 0.0)
    drift = np.nan_to_num(drift)
    mimic = (~septic) & (rng.random(n_patients) < 0.2)
    centre = rng.uniform(0, 1, n_patients) * los
    width = rng.uniform(3, 8, n_patients)
    bump = 0.6 * np.exp(-(((hours - centre[:, None]) / width[:, None]) ** 2))
    drift = drift + np.where(mimic[:, None], bump, 0.0)
    fever = np.where(rng.random(n_patients) < 0.85, 1.0, -0.7)  # some septic patients cool down

    def ar1(sd: float, phi: float = 0.8) -> np.ndarray:
        shocks = rng.standard_normal((n_patients, MAX_HOURS)) * sd * np.sqrt(1 - phi**2)
        out = np.empty_like(shocks)
        out[:, 0] = rng.standard_normal(n_patients) * sd
        for t in range(1, MAX_HOURS):
            out[:, t] = phi * out[:, t - 1] + shocks[:, t]
        return out

    def baseline(weight: float) -> np.ndarray:
        return (weight * severity + np.sqrt(1 - weight**2) * rng.standard_normal(n_patients))[
            :, None
        ]

    true = {
        "HR": 84 + 10 * baseline(0.5) + 22 * drift + ar1(5) + per("hr_offset")[:, None],
        "O2Sat": np.clip(97 - 1.2 * baseline(0.4) - 3.5 * drift + ar1(1.0), 70, 100),
        "Temp": 36.9
        + 0.25 * baseline(0.3)
        + 1.1 * drift * fever[:, None]
        + ar1(0.2, 0.9)
        + per("temp_offset")[:, None],
        "Resp": 18 + 3 * baseline(0.5) + 7 * drift + ar1(2.0),
        "MAP": 80 - 8 * baseline(0.5) - 14 * drift + ar1(5) + per("map_offset")[:, None],
        "WBC": np.clip(10 + 3 * baseline(0.4) + 7 * drift + ar1(1.5, 0.95), 0.5, None),
        "Lactate": np.exp(np.log(1.3) + 0.25 * baseline(0.5) + 0.8 * drift + ar1(0.1, 0.9)),
        "Creatinine": np.exp(np.log(1.0) + 0.35 * baseline(0.5) + 0.35 * drift + ar1(0.05, 0.95))
        * per("creatinine_scale")[:, None],
        "Platelets": np.clip(230 + 60 * baseline(0.3) - 70 * drift + ar1(10, 0.95), 10, None),
        "Bilirubin_total": np.exp(np.log(0.8) + 0.5 * baseline(0.3) + 0.5 * drift),
        "Glucose": np.clip(135 + 30 * baseline(0.2) + 20 * drift + ar1(15, 0.6), 40, None),
        "BUN": np.clip(20 + 8 * baseline(0.4) + 8 * drift + ar1(2, 0.95), 2, None),
    }
    true["SBP"] = true["MAP"] + 40 + ar1(6, 0.5)
    true["DBP"] = true["MAP"] - 20 + ar1(3, 0.5)

    # Which values are charted.
    worry = np.clip(drift, 0, 1)
    charted = {}
    for name in ("HR", "O2Sat", "MAP", "Resp"):
        charted[name] = rng.random((n_patients, MAX_HOURS)) < per("vital_rate")[:, None]
    for name in ("SBP", "DBP"):
        charted[name] = charted["MAP"] & (
            rng.random((n_patients, MAX_HOURS)) < per("bp_rate")[:, None]
        )
    charted["Temp"] = rng.random((n_patients, MAX_HOURS)) < (
        per("temp_rate")[:, None] * (1 + worry)
    )
    first_hour = hours == 1
    for name in LABS:
        rate = per("lactate_rate" if name == "Lactate" else "lab_rate")[:, None]
        draw = rng.random((n_patients, MAX_HOURS)) < rate * (1 + 3 * worry)
        panel = first_hour & (rng.random((n_patients, 1)) < per("admission_panel")[:, None])
        charted[name] = draw | (panel & (name != "Lactate"))

    decimals = {"Temp": 2, "Platelets": 0, "Lactate": 2, "Creatinine": 2, "Bilirubin_total": 2}
    rows = np.nonzero(in_stay)
    patient_ids = np.array([f"p{i + 1:05d}" for i in range(n_patients)])
    hourly = pd.DataFrame(
        {
            "patient_id": patient_ids[rows[0]],
            "ICULOS": (rows[1] + 1).astype(np.int64),
            "hospital": hospital[rows[0]],
        }
    )
    for name in [*VITALS, *LABS]:
        values = np.round(true[name], decimals.get(name, 1))
        values = np.where(charted[name], values, np.nan)
        hourly[name] = values[rows]
    adm = -np.round(np.minimum(np.exp(rng.normal(1.0, 1.3, n_patients)), 720.0), 2)
    hourly["Age"] = age[rows[0]]
    hourly["Gender"] = male[rows[0]]
    hourly["Unit1"] = micu[rows[0]]
    hourly["Unit2"] = 1 - micu[rows[0]]
    hourly["HospAdmTime"] = adm[rows[0]]
    label_from = onset - LABEL_LEAD
    hourly["SepsisLabel"] = (
        np.where(septic[:, None], hours >= label_from[:, None], False)[rows]
    ).astype(np.int64)
    patients = pd.DataFrame(
        {
            "patient_id": patient_ids,
            "hospital": hospital,
            "n_hours": los,
            "ever_septic": septic.astype(np.int64),
            "onset_hour": onset,
            "age": age,
            "sex": np.where(male == 1, "male", "female"),
        }
    )
    return SepsisCohort(patients=patients, hourly=hourly)
