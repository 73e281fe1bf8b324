"""The model zoo of the scripted agents: small, pure building blocks of an agent's training script.

Every function here is *copied verbatim* into the generated script of each development version
(:mod:`automd_demo.harness.render` embeds their source with :func:`inspect.getsource`), and
the harness then executes that script text. So the archived code is exactly the code that produced
the archived predictions, and ``file:line`` evidence points at real lines.

Rules for this module (they keep the embedding sound):

- functions only use names imported at the top of this module, other functions of this module, and
  their arguments (the renderer resolves both automatically);
- no module-level state, no decorators, no default arguments that refer to module objects;
- every random step takes an explicit ``seed``.

The functions are ordinary, tested library code too: ``tests/test_harness_models.py`` checks them
against hand-computed values and reference implementations (lifelines, scikit-learn).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from lifelines import CoxPHFitter, WeibullAFTFitter
from lifelines.utils import concordance_index
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss, roc_auc_score
from sklearn.model_selection import StratifiedKFold, train_test_split

# --------------------------------------------------------------------------------------------
# tabular features
# --------------------------------------------------------------------------------------------


def encode_tabular(train, test, features):
    """Numeric copies of ``features``: numbers as float, other columns one-hot with the training
    categories (unseen test categories get all-zero indicators; missing stays missing)."""
    numeric, categorical = [], []
    for col in features:
        (numeric if pd.api.types.is_numeric_dtype(train[col]) else categorical).append(col)
    parts_tr = [train[numeric].astype(float)]
    parts_te = [test[numeric].astype(float)]
    for col in categorical:
        levels = sorted(train[col].dropna().astype(str).unique())
        for level in levels:
            name = f"{col}={level}"
            parts_tr.append(pd.Series((train[col].astype(str) == level).astype(float), name=name))
            parts_te.append(pd.Series((test[col].astype(str) == level).astype(float), name=name))
    x_train = pd.concat(parts_tr, axis=1).reset_index(drop=True)
    x_test = pd.concat(parts_te, axis=1).reset_index(drop=True)
    return x_train, x_test


def add_missing_indicators(x_train, x_test):
    """Append a 0/1 ``<col>_missing`` column for every column with missing training values."""
    cols = [c for c in x_train.columns if x_train[c].isna().any()]
    ind_tr = x_train[cols].isna().astype(float).add_suffix("_missing")
    ind_te = x_test[cols].isna().astype(float).add_suffix("_missing")
    return pd.concat([x_train, ind_tr], axis=1), pd.concat([x_test, ind_te], axis=1)


def log_transform_skewed(x_train, x_test, min_skew=2.0):
    """log1p of non-negative columns whose training skewness exceeds ``min_skew``."""
    x_train, x_test = x_train.copy(), x_test.copy()
    for col in x_train.columns:
        values = x_train[col].dropna()
        nonnegative = len(values) > 2 and values.min() >= 0 and values.nunique() > 2
        if nonnegative and values.skew() > min_skew:
            x_train[col] = np.log1p(x_train[col])
            x_test[col] = np.log1p(x_test[col].clip(lower=0))
    return x_train, x_test


def impute_median(x_train, x_test):
    """Fill missing values with training medians (0 for all-missing columns)."""
    medians = x_train.median().fillna(0.0)
    return x_train.fillna(medians), x_test.fillna(medians)


def standardize(x_train, x_test):
    """Centre and scale with training means and standard deviations (constant columns: scale 1)."""
    mean = x_train.mean()
    std = x_train.std(ddof=0).replace(0.0, 1.0).fillna(1.0)
    return (x_train - mean) / std, (x_test - mean) / std


# --------------------------------------------------------------------------------------------
# validation designs
# --------------------------------------------------------------------------------------------


def holdout_split(strata, fraction, seed):
    """One stratified holdout split: ``[(train_idx, val_idx)]``."""
    idx = np.arange(len(strata))
    tr, va = train_test_split(idx, test_size=fraction, random_state=seed, stratify=strata)
    return [(np.sort(tr), np.sort(va))]


def kfold_splits(strata, k, seed):
    """Stratified k-fold: a list of ``(train_idx, val_idx)``; every row is validated once."""
    folds = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    return list(folds.split(np.zeros(len(strata)), strata))


def patient_splits(patient_ids, row_strata, n_splits, fraction, seed):
    """Patient-level splits for hourly data: rows of one patient never straddle a split.

    ``row_strata`` (e.g. ever-septic) is constant within a patient; ``n_splits == 1`` gives one
    stratified holdout of ``fraction`` of the patients, otherwise stratified k-fold over patients.
    """
    patients = pd.Series(np.asarray(row_strata)).groupby(np.asarray(patient_ids)).max()
    if n_splits == 1:
        pat_splits = holdout_split(patients.to_numpy(), fraction, seed)
    else:
        pat_splits = kfold_splits(patients.to_numpy(), n_splits, seed)
    ids = pd.Series(np.asarray(patient_ids))
    out = []
    for _, va in pat_splits:
        in_val = ids.isin(set(patients.index[va])).to_numpy()
        out.append((np.flatnonzero(~in_val), np.flatnonzero(in_val)))
    return out


def target_site_split(site_values, target_site):
    """Validate on the labelled target-site rows only (external task with local labels)."""
    is_target = np.asarray(site_values).astype(str) == str(target_site)
    return [(np.flatnonzero(~is_target), np.flatnonzero(is_target))]


# --------------------------------------------------------------------------------------------
# classifiers and class imbalance
# --------------------------------------------------------------------------------------------


def fit_gbdt(x, y, params, seed, sample_weight=None):
    """Histogram gradient boosting with scikit-learn's defaults otherwise (early stopping on a
    seeded 10% split when there are more than 10,000 rows)."""
    model = HistGradientBoostingClassifier(random_state=seed, **params)
    return model.fit(x, y, sample_weight=sample_weight)


def fit_logistic(x, y, params, seed, sample_weight=None):
    """L2 logistic regression (raises on missing values, like scikit-learn does)."""
    model = LogisticRegression(max_iter=300, random_state=seed, **params)
    return model.fit(x, y, sample_weight=sample_weight)


def fit_random_forest(x, y, params, seed, sample_weight=None):
    """Random forest (each tree on a half-size bootstrap sample)."""
    model = RandomForestClassifier(n_jobs=1, max_samples=0.5, random_state=seed, **params)
    return model.fit(x, y, sample_weight=sample_weight)


def balanced_weights(y):
    """Class weights n / (2 n_c), as scikit-learn's ``class_weight='balanced'``."""
    y = np.asarray(y)
    n_pos = max(int(y.sum()), 1)
    n_neg = max(len(y) - int(y.sum()), 1)
    return np.where(y == 1, len(y) / (2.0 * n_pos), len(y) / (2.0 * n_neg))


def oversample_minority(x, y, seed):
    """Random oversampling of the positive class (with replacement) up to the negative count."""
    y = np.asarray(y)
    rng = np.random.default_rng(seed)
    pos = np.flatnonzero(y == 1)
    neg = np.flatnonzero(y == 0)
    extra = rng.choice(pos, size=max(len(neg) - len(pos), 0), replace=True)
    rows = np.concatenate([np.arange(len(y)), extra])
    return x.iloc[rows].reset_index(drop=True), y[rows]


def undersample_majority(x, y, seed, keep=0.25):
    """Keep every positive row and a random ``keep`` share of the negative rows."""
    y = np.asarray(y)
    rng = np.random.default_rng(seed)
    rows = np.flatnonzero((y == 1) | (rng.random(len(y)) < keep))
    return x.iloc[rows].reset_index(drop=True), y[rows]


def positive_probability(model, x):
    """Predicted probability of class 1."""
    return model.predict_proba(x)[:, 1]


# --------------------------------------------------------------------------------------------
# combining members and post-processing probabilities
# --------------------------------------------------------------------------------------------


def weighted_average(predictions, weights):
    """Weighted mean of member predictions (weights are normalised)."""
    w = np.asarray(weights, dtype=float)
    return np.tensordot(w / w.sum(), np.asarray(predictions, dtype=float), axes=1)


def rank_average(predictions):
    """Average of the members' rank-transformed scores, scaled to (0, 1]: rank / n.

    Ranks keep the ordering (AUROC) but not the level: the result is spread uniformly over
    (0, 1] whatever the event rate.
    """
    ranks = [
        pd.Series(np.asarray(p, dtype=float)).rank(method="average").to_numpy() / len(p)
        for p in predictions
    ]
    return np.mean(ranks, axis=0)


def fit_stacker(member_oof, y, seed):
    """Logistic-regression stacker on out-of-fold member predictions (columns = members)."""
    return LogisticRegression(max_iter=300, random_state=seed).fit(np.column_stack(member_oof), y)


def fit_isotonic(p, y):
    """Isotonic regression of outcomes on predictions (clipped outside the fitted range)."""
    return IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(p, y)


def fit_platt(p, y):
    """Platt scaling: logistic regression on the logit of the prediction."""
    z = np.log(np.clip(p, 1e-6, 1 - 1e-6) / (1 - np.clip(p, 1e-6, 1 - 1e-6)))
    return LogisticRegression(C=1e6, max_iter=300).fit(z.reshape(-1, 1), y)


def apply_platt(model, p):
    """Apply a Platt model fitted by :func:`fit_platt`."""
    z = np.log(np.clip(p, 1e-6, 1 - 1e-6) / (1 - np.clip(p, 1e-6, 1 - 1e-6)))
    return model.predict_proba(z.reshape(-1, 1))[:, 1]


def prevalence_correction(p, true_rate, trained_rate):
    """Undo a shifted training event rate: rescale the odds by the prior-odds ratio."""
    p = np.clip(np.asarray(p, dtype=float), 1e-9, 1 - 1e-9)
    ratio = (true_rate / (1 - true_rate)) / (trained_rate / (1 - trained_rate))
    odds = p / (1 - p) * ratio
    return odds / (1 + odds)


def min_se_ppv(y, label):
    """min(sensitivity, positive predictive value); an undefined part is ignored."""
    y, label = np.asarray(y), np.asarray(label)
    tp = float(np.sum((y == 1) & (label == 1)))
    se = tp / y.sum() if y.sum() else np.nan
    ppv = tp / label.sum() if label.sum() else np.nan
    return float(np.nanmin([se, ppv])) if not (np.isnan(se) and np.isnan(ppv)) else 0.0


def tune_threshold_min_se_ppv(p, y):
    """Threshold (among the predicted values) that maximises min(Se, PPV) on validation data."""
    candidates = np.unique(np.quantile(p, np.linspace(0.3, 0.97, 68)))
    scores = [min_se_ppv(y, (p >= t).astype(int)) for t in candidates]
    return float(candidates[int(np.argmax(scores))])


def ece_equal_width(y, p, n_bins=10):
    """Expected calibration error over ``n_bins`` equal-width bins [lo, hi) (last bin closed),
    with the edges of ``np.linspace(0, 1, n_bins + 1)`` (so 0.3 falls below the edge 0.3000...04)."""
    y, p = np.asarray(y, dtype=float), np.asarray(p, dtype=float)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, n_bins - 1)
    total = 0.0
    for b in range(n_bins):
        mask = bins == b
        if mask.any():
            total += mask.sum() / len(p) * abs(p[mask].mean() - y[mask].mean())
    return float(total)


def binary_scores(y, p):
    """The validation numbers an agent prints for a binary outcome."""
    return {
        "auroc": float(roc_auc_score(y, p)),
        "brier": float(brier_score_loss(y, np.clip(p, 0, 1))),
        "ece": ece_equal_width(y, p),
    }


def subgroup_auroc(y, p, groups):
    """Exploratory check: validation AUROC by subgroup (printed, not used for the submission)."""
    out = {}
    for name, mask in sorted(groups.items()):
        mask = np.asarray(mask)
        if mask.sum() >= 30 and len(np.unique(np.asarray(y)[mask])) == 2:
            out[name] = round(float(roc_auc_score(np.asarray(y)[mask], np.asarray(p)[mask])), 4)
    return out


def age_sex_groups(frame, age_column, sex_column):
    """Boolean masks for age tertiles and sex levels of a validation frame (columns optional)."""
    groups = {}
    if age_column in frame:
        age = pd.to_numeric(frame[age_column], errors="coerce")
        cuts = age.quantile([1 / 3, 2 / 3]).to_numpy()
        groups["age_low"] = (age <= cuts[0]).to_numpy()
        groups["age_mid"] = ((age > cuts[0]) & (age <= cuts[1])).to_numpy()
        groups["age_high"] = (age > cuts[1]).to_numpy()
    if sex_column in frame:
        for level in sorted(frame[sex_column].dropna().astype(str).unique()):
            groups[f"sex_{level}"] = (frame[sex_column].astype(str) == level).to_numpy()
    return groups


# --------------------------------------------------------------------------------------------
# survival models (curves on the task's time grid)
# --------------------------------------------------------------------------------------------


def fit_cox(x, durations, events, params):
    """lifelines Cox proportional-hazards model (Breslow baseline)."""
    frame = x.copy()
    frame["_T"], frame["_E"] = durations, events
    return CoxPHFitter(**params).fit(frame, duration_col="_T", event_col="_E")


def fit_weibull(x, durations, events, params):
    """lifelines Weibull accelerated-failure-time model."""
    frame = x.copy()
    frame["_T"], frame["_E"] = np.maximum(durations, 1e-3), events
    return WeibullAFTFitter(**params).fit(frame, duration_col="_T", event_col="_E")


def lifelines_curves(model, x, grid):
    """Survival curves (patients x grid) from a fitted lifelines regression model."""
    surv = model.predict_survival_function(x, times=grid).to_numpy().T
    return np.clip(np.minimum.accumulate(surv, axis=1), 0.0, 1.0)


def interval_cuts(durations, events, n_intervals):
    """Interval edges for a discrete-time model: 0, quantiles of training event times, max."""
    times = np.asarray(durations)[np.asarray(events) == 1]
    inner = np.unique(np.quantile(times, np.linspace(0, 1, n_intervals + 1)[1:-1]))
    return np.concatenate([[0.0], inner, [float(np.max(durations)) + 1.0]])


def person_period(x, durations, events, cuts, censoring):
    """Expand patients into one row per interval at risk, with the interval's event indicator.

    ``censoring='correct'``: a censored patient contributes the intervals it was observed in;
    ``'censored_as_death'``: its last interval is labelled as a death;
    ``'censored_as_survivor'``: it is treated as a known survivor of every later interval.
    """
    durations, events = np.asarray(durations, dtype=float), np.asarray(events, dtype=int)
    last = np.searchsorted(cuts[1:-1], durations, side="left")
    label_last = events.copy()
    if censoring == "censored_as_death":
        label_last = np.ones_like(events)
    n_int = len(cuts) - 1
    if censoring == "censored_as_survivor":
        last = np.where(events == 1, last, n_int - 1)
    counts = last + 1
    rows = np.repeat(np.arange(len(durations)), counts)
    interval = np.concatenate([np.arange(c) for c in counts])
    target = np.zeros(len(rows), dtype=int)
    ends = np.cumsum(counts) - 1
    is_event_row = label_last == 1
    if censoring == "censored_as_survivor":
        is_event_row = events == 1
    target[ends[is_event_row]] = 1
    expanded = x.iloc[rows].reset_index(drop=True)
    expanded["interval"] = interval
    return expanded, target


def discrete_curves(hazard_model, x, cuts, grid):
    """Survival on the grid from per-interval hazards, log-linear within each interval."""
    n_int = len(cuts) - 1
    log_s = np.zeros((len(x), n_int + 1))
    for j in range(n_int):
        xj = x.copy()
        xj["interval"] = j
        h = np.clip(hazard_model.predict_proba(xj)[:, 1], 1e-6, 1 - 1e-6)
        log_s[:, j + 1] = log_s[:, j] + np.log1p(-h)
    grid = np.asarray(grid, dtype=float)
    j = np.clip(np.searchsorted(cuts, grid, side="right") - 1, 0, n_int - 1)
    frac = np.clip((grid - cuts[j]) / (cuts[j + 1] - cuts[j]), 0.0, 1.0)
    log_at = log_s[:, j] + frac * (log_s[:, j + 1] - log_s[:, j])
    return np.clip(np.minimum.accumulate(np.exp(log_at), axis=1), 0.0, 1.0)


def survival_concordance(durations, events, curves):
    """Harrell's C of the curves' area under the grid (higher area = longer survival)."""
    return float(concordance_index(durations, np.asarray(curves).sum(axis=1), events))


# --------------------------------------------------------------------------------------------
# hourly (sequential) data
# --------------------------------------------------------------------------------------------


def sort_hourly(frame, patient_column, hour_column):
    """Rows ordered by patient, then hour (a stable order the writer keeps)."""
    return frame.sort_values([patient_column, hour_column], kind="mergesort").reset_index(drop=True)


def add_measured_flags(frame, patient_column, columns):
    """Count of measurements so far per variable (uses only the current and earlier hours)."""
    counts = frame[columns].notna().astype(float).groupby(frame[patient_column]).cumsum()
    return pd.concat([frame, counts.add_suffix("_n_measured")], axis=1)


def forward_fill(frame, patient_column, columns):
    """Carry each patient's last observed value forward in time."""
    frame = frame.copy()
    frame[columns] = frame.groupby(patient_column)[columns].ffill()
    return frame


def add_rolling_features(frame, patient_column, columns, window):
    """Mean and max over the current and previous ``window - 1`` hours of each patient.

    Rows must be sorted by patient and hour (see :func:`sort_hourly`); missing values are
    ignored, as pandas' ``rolling(window, min_periods=1)`` does.
    """
    values = frame[columns].to_numpy(dtype=float)
    ids = frame[patient_column].to_numpy()
    total = np.zeros_like(values)
    count = np.zeros_like(values)
    high = np.full_like(values, np.nan)
    for lag in range(min(window, len(values))):  # a lag beyond the last row adds nothing
        shifted = np.full_like(values, np.nan)
        shifted[lag:] = values[: len(values) - lag]
        same = np.zeros(len(ids), dtype=bool)
        same[lag:] = ids[lag:] == ids[: len(ids) - lag]
        shifted[~same] = np.nan
        seen = ~np.isnan(shifted)
        total += np.where(seen, shifted, 0.0)
        count += seen
        high = np.fmax(high, shifted)
    mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    out = pd.DataFrame(
        np.hstack([mean, high]),
        columns=[f"{c}_mean{window}h" for c in columns] + [f"{c}_max{window}h" for c in columns],
        index=frame.index,
    )
    return pd.concat([frame, out], axis=1)


def add_hourly_deltas(frame, patient_column, columns):
    """Change from the previous hour (missing at each patient's first hour)."""
    delta = frame.groupby(patient_column)[columns].diff()
    return pd.concat([frame, delta.add_suffix("_delta")], axis=1)


def add_whole_stay_max(frame, patient_column, columns):
    """Per-patient maximum over the whole stay, repeated on every hour of that patient."""
    stay_max = frame.groupby(patient_column)[columns].transform("max")
    return pd.concat([frame, stay_max.add_suffix("_stay_max")], axis=1)


def sepsis_utility_score(patient_ids, labels, alarms):
    """The agent's own PhysioNet/CinC 2019 utility: (U - U_no_alarm) / (U_best - U_no_alarm).

    Onset is six hours after the first positive label; per-hour rewards use the challenge's
    parameters (-12, -6, 3 hours; 1, -2, -0.05, 0). Rows of a patient must be contiguous and in
    time order.
    """
    ids = np.asarray(patient_ids)
    y = np.asarray(labels, dtype=int)
    a = np.asarray(alarms, dtype=int)
    start = np.r_[True, ids[1:] != ids[:-1]]
    group = np.cumsum(start) - 1
    first = np.flatnonzero(start)
    t = np.arange(len(ids)) - first[group]
    never = 10**9
    pos = np.where(y == 1, t, never)
    first_pos = np.minimum.reduceat(pos, first)
    septic = first_pos[group] < never
    delta = np.where(septic, t - (first_pos[group] + 6), 0)
    tp = np.where(delta <= -6, np.maximum((delta + 12) / 6.0, -0.05), (3 - delta) / 9.0)
    tp = np.where(delta > 3, 0.0, tp)
    fn = np.where((delta > -6) & (delta <= 3), -2.0 * (delta + 6) / 9.0, 0.0)
    u_septic_alarm = np.where(septic, tp, -0.05)
    u_septic_quiet = np.where(septic, fn, 0.0)
    observed = np.where(a == 1, u_septic_alarm, u_septic_quiet).sum()
    inaction = u_septic_quiet.sum()
    length = np.bincount(group)[group]
    onset = first_pos[group] + 6
    best_alarm = (
        septic & (t >= np.maximum(0, onset - 12)) & (t <= np.minimum(onset + 3, length - 1))
    )
    best = np.where(best_alarm, u_septic_alarm, u_septic_quiet).sum()
    if best == inaction:
        return float("nan")
    return float((observed - inaction) / (best - inaction))


def choose_alarm_threshold(probabilities, labels, patient_ids, quantiles):
    """Alarm threshold with the highest validation utility among quantiles of the predictions."""
    candidates = np.quantile(probabilities, quantiles)
    utilities = [
        sepsis_utility_score(patient_ids, labels, (probabilities >= c).astype(int))
        for c in candidates
    ]
    best = int(np.nanargmax(utilities))
    return float(candidates[best]), float(utilities[best])


# --------------------------------------------------------------------------------------------
# submission writers
# --------------------------------------------------------------------------------------------


def probability_table(ids, probabilities, labels, probability_column, label_column):
    """Submission frame: id column(s), probabilities (6 decimals) and optional 0/1 labels."""
    table = ids.reset_index(drop=True).copy()
    table[probability_column] = np.round(np.clip(probabilities, 0.0, 1.0), 6)
    if label_column is not None:
        table[label_column] = np.asarray(labels, dtype=int)
    return table


def survival_table(ids, curves, grid_headers):
    """Submission frame: id column(s) and S(t) per grid time, headers exactly as in the grid file."""
    values = np.round(np.clip(curves, 0.0, 1.0), 4)
    table = pd.DataFrame(values, columns=grid_headers)
    return pd.concat([ids.reset_index(drop=True), table], axis=1)
