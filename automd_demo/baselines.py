"""Simple baseline models of Auto-MD-bench (paper App. D), for any task with a manifest.

Fixed settings, the task's public training data only, one fit per seed (the paper uses seeds 0-4
and averages the five scores):

- **survival** - pycox ``CoxPH`` on an MLP with two hidden layers of 32 units, batch
  normalisation, dropout 0.1 and no output bias; Adam (learning rate 1e-3), batch size 256,
  64 epochs on the whole training set, no early stopping. Features: non-numeric columns one-hot
  encoded with the training categories, missing values imputed with training medians, every
  column standardised with training statistics (columns listed in the manifest's
  ``paper.baseline_passthrough`` are kept as supplied, as the paper does for SUPPORT's x1-x6).
  The Breslow baseline hazard is estimated on the training data; survival curves are read on the
  task's time grid as right-continuous step functions (S = 1 before the first training time).
- **classification** - ``HistGradientBoostingClassifier(max_iter=300, learning_rate=0.1,
  early_stopping=False)`` on the supplied features (non-numeric columns as native categorical
  features with the training categories). Long-format inputs (manifest ``paper.long_format:
  {id, time, variable, value}``) are first summarised per stay by the mean, minimum, maximum and
  last value of each variable. For tasks that need a binary ``PredictedLabel`` the label is 1 for
  the test predictions at or above the (1 - training event rate) quantile of the test
  predictions, i.e. as many alarms as expected events (App. D does not give the rule; see
  docs/decisions.md).
- **sequential** - records sorted by patient and hour and forward-filled within patient;
  features = current-hour values, ICU hour and the hospital indicator (every non-id column of the
  test features); columns never observed in training are dropped; the classifier above with at
  most 31 leaves. 15% of training patients (stratified by ever-septic, seeded) are held out to
  choose the alarm threshold among 40 quantiles from 0.80 to 0.999 of the holdout probabilities,
  by the highest PhysioNet/CinC 2019 utility (:func:`automd_analysis.metrics.sepsis_utility`);
  the model trained on the other 85% predicts the test set.

torch and pycox are imported lazily (only survival needs them); without them a clear error names
the ``baselines`` extra. Each fit sets the numpy and torch seeds and limits torch to one thread.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split

from automd_analysis.errors import AutomdError, DataError

#: Hyperparameters of paper App. D (fixed across tasks within a family).
SURVIVAL_NET = {"hidden": [32, 32], "batch_norm": True, "dropout": 0.1, "output_bias": False}
SURVIVAL_FIT = {"lr": 1e-3, "batch_size": 256, "epochs": 64}
CLASSIFIER = {"max_iter": 300, "learning_rate": 0.1, "early_stopping": False}
SEQUENTIAL_MAX_LEAVES = 31
HOLDOUT_FRACTION = 0.15
THRESHOLD_QUANTILES = np.linspace(0.80, 0.999, 40)


class BaselineDependencyError(AutomdError):
    """An optional dependency of a baseline (torch / pycox) is missing."""


@dataclass
class BaselineFit:
    """Result of one baseline fit.

    Attributes
    ----------
    submission : DataFrame
        The prediction file, in the task's submission format.
    fit_seconds : float
        Wall-clock seconds of preprocessing + fitting + predicting (not stored in the archive).
    details : dict
        Kind-specific facts (holdout threshold and utility for sequential tasks, ...).
    """

    submission: pd.DataFrame
    fit_seconds: float
    details: dict = field(default_factory=dict)


def _import_pycox():
    """torch, torchtuples and pycox, or a clear error naming the ``baselines`` extra."""
    try:
        import torch
        import torchtuples as tt
        from pycox.models import CoxPH
    except ImportError as exc:  # pragma: no cover - exercised by monkeypatching in tests
        raise BaselineDependencyError(
            f"the survival baseline needs torch and pycox ({exc})",
            code="baselines.missing_dependency",
            fix='pip install "automd-analysis[baselines]" (torch==2.13.0 CPU, pycox==0.3.0)',
        ) from None
    return torch, tt, CoxPH


# --------------------------------------------------------------------------------------------
# survival: pycox CoxPH MLP
# --------------------------------------------------------------------------------------------


def survival_features(
    train: pd.DataFrame, test: pd.DataFrame, features: list[str], passthrough=()
) -> tuple[np.ndarray, np.ndarray]:
    """One-hot (training categories) -> median imputation -> standardisation (App. D).

    Columns in ``passthrough`` are imputed but not standardised. Constant columns get scale 1.
    Returns float32 arrays (train, test).
    """
    numeric = [c for c in features if pd.api.types.is_numeric_dtype(train[c])]
    categorical = [c for c in features if c not in numeric]
    xtr = [train[numeric].astype(float).reset_index(drop=True)]
    xte = [test[numeric].astype(float).reset_index(drop=True)]
    for col in categorical:
        for level in sorted(train[col].dropna().astype(str).unique()):
            name = f"{col}={level}"
            xtr.append(
                pd.Series((train[col].astype(str) == level).astype(float).to_numpy(), name=name)
            )
            xte.append(
                pd.Series((test[col].astype(str) == level).astype(float).to_numpy(), name=name)
            )
    x_train = pd.concat(xtr, axis=1)
    x_test = pd.concat(xte, axis=1)
    medians = x_train.median().fillna(0.0)
    x_train, x_test = x_train.fillna(medians), x_test.fillna(medians)
    scale_cols = [c for c in x_train.columns if c not in set(passthrough)]
    mean = x_train[scale_cols].mean()
    std = x_train[scale_cols].std(ddof=0).replace(0.0, 1.0)
    x_train[scale_cols] = (x_train[scale_cols] - mean) / std
    x_test[scale_cols] = (x_test[scale_cols] - mean) / std
    return x_train.to_numpy(np.float32), x_test.to_numpy(np.float32)


def step_survival(times: np.ndarray, surv: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Read curves given at ``times`` (rows) on ``grid`` as right-continuous steps.

    ``S(t) = surv[k]`` for the last ``times[k] <= t``, and 1 before the first time.
    ``surv`` has shape (len(times), n); the result has shape (n, len(grid)).
    """
    idx = np.searchsorted(times, grid, side="right") - 1
    out = np.ones((surv.shape[1], len(grid)))
    ok = idx >= 0
    out[:, ok] = surv[idx[ok]].T
    return np.clip(np.minimum.accumulate(out, axis=1), 0.0, 1.0)


def survival_baseline(
    train: pd.DataFrame,
    test: pd.DataFrame,
    *,
    features: list[str],
    duration: str,
    event: str,
    grid: np.ndarray,
    seed: int,
    passthrough=(),
) -> np.ndarray:
    """pycox CoxPH MLP survival curves on ``grid`` for the rows of ``test`` (shape n x G)."""
    torch, tt, CoxPH = _import_pycox()
    torch.manual_seed(seed)
    np.random.seed(seed)  # noqa: NPY002 (torchtuples/pycox may use numpy's global RNG)
    torch.set_num_threads(1)
    x_train, x_test = survival_features(train, test, features, passthrough)
    target = (
        train[duration].to_numpy(np.float32),
        train[event].to_numpy(np.float32),
    )
    net = tt.practical.MLPVanilla(
        x_train.shape[1],
        SURVIVAL_NET["hidden"],
        1,
        batch_norm=SURVIVAL_NET["batch_norm"],
        dropout=SURVIVAL_NET["dropout"],
        output_bias=SURVIVAL_NET["output_bias"],
    )
    model = CoxPH(net, tt.optim.Adam(lr=SURVIVAL_FIT["lr"]))
    model.fit(
        x_train,
        target,
        batch_size=SURVIVAL_FIT["batch_size"],
        epochs=SURVIVAL_FIT["epochs"],
        verbose=False,
    )
    model.compute_baseline_hazards()
    surv = model.predict_surv_df(x_test)
    return step_survival(surv.index.to_numpy(dtype=float), surv.to_numpy(), np.asarray(grid))


# --------------------------------------------------------------------------------------------
# classification and sequential: histogram gradient boosting
# --------------------------------------------------------------------------------------------


def tabular_features(
    train: pd.DataFrame, test: pd.DataFrame, features: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame, list[bool]]:
    """Numeric columns as supplied; other columns as integer category codes (training levels;
    unseen levels and missing values -> NaN). Returns (train, test, categorical mask)."""
    x_train = pd.DataFrame(index=range(len(train)))
    x_test = pd.DataFrame(index=range(len(test)))
    mask = []
    for col in features:
        if pd.api.types.is_numeric_dtype(train[col]):
            x_train[col] = train[col].astype(float).to_numpy()
            x_test[col] = pd.to_numeric(test[col], errors="coerce").astype(float).to_numpy()
            mask.append(False)
        else:
            levels = sorted(train[col].dropna().astype(str).unique())
            codes = {level: float(i) for i, level in enumerate(levels)}
            x_train[col] = train[col].astype(str).map(codes).astype(float).to_numpy()
            x_test[col] = test[col].astype(str).map(codes).astype(float).to_numpy()
            mask.append(len(levels) <= 250)
    return x_train, x_test, mask


def fit_classifier(x, y, categorical, seed, max_leaf_nodes=None) -> HistGradientBoostingClassifier:
    """The App. D classifier (300 iterations, learning rate 0.1, no early stopping)."""
    params = dict(CLASSIFIER)
    if max_leaf_nodes is not None:
        params["max_leaf_nodes"] = max_leaf_nodes
    model = HistGradientBoostingClassifier(
        categorical_features=np.asarray(categorical, dtype=bool) if any(categorical) else None,
        random_state=seed,
        **params,
    )
    return model.fit(x, y)


def expected_rate_labels(probabilities: np.ndarray, event_rate: float) -> np.ndarray:
    """1 for predictions at or above the (1 - event_rate) quantile: as many alarms as events."""
    threshold = np.quantile(probabilities, 1.0 - event_rate)
    return (probabilities >= threshold).astype(int)


def summarise_long(frame: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Per-stay mean, min, max and last value of each variable (paper App. D, PhysioNet 2012).

    ``spec`` names the columns: ``id``, ``time``, ``variable``, ``value``. Other columns that are
    constant within a stay (e.g. the label) are kept.
    """
    key, t, var, val = spec["id"], spec["time"], spec["variable"], spec["value"]
    ordered = frame.sort_values([key, t], kind="mergesort")
    grouped = ordered.groupby([key, var])[val]
    stats = pd.concat(
        {
            "mean": grouped.mean(),
            "min": grouped.min(),
            "max": grouped.max(),
            "last": grouped.last(),
        },
        axis=1,
    ).unstack(var)
    stats.columns = [f"{v}_{s}" for s, v in stats.columns]
    stats = stats[sorted(stats.columns)]
    other = [c for c in frame.columns if c not in (t, var, val)]
    static = ordered[other].groupby(key).first()
    return static.join(stats).reset_index()


def classification_baseline(
    train: pd.DataFrame,
    test: pd.DataFrame,
    *,
    features: list[str],
    label: str,
    seed: int,
) -> np.ndarray:
    """Test-set probabilities of the App. D classifier."""
    x_train, x_test, categorical = tabular_features(train, test, features)
    model = fit_classifier(x_train, train[label].to_numpy().astype(int), categorical, seed)
    return model.predict_proba(x_test)[:, 1]


def sequential_features(frame: pd.DataFrame, patient: str, hour: str, columns: list[str]):
    """Sort by patient and hour, forward-fill ``columns`` within each patient."""
    frame = frame.sort_values([patient, hour], kind="mergesort").reset_index(drop=True)
    frame[columns] = frame.groupby(patient)[columns].ffill()
    return frame


def sequential_baseline(
    train: pd.DataFrame,
    test: pd.DataFrame,
    *,
    patient: str,
    hour: str,
    label: str,
    seed: int,
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, dict]:
    """Hourly probabilities and alarms for ``test`` (App. D sequential baseline).

    Returns (sorted test frame, probabilities, alarms, details) where ``details`` holds the
    chosen threshold and its holdout utility.
    """
    from automd_analysis.metrics import sepsis_utility

    features = [c for c in test.columns if c != patient]
    observed = [c for c in features if c == hour or train[c].notna().any()]
    fill = [c for c in observed if c != hour]
    train = sequential_features(train, patient, hour, fill)
    test = sequential_features(test, patient, hour, fill)
    ever = train.groupby(patient)[label].max()
    fit_ids, hold_ids = train_test_split(
        ever.index.to_numpy(), test_size=HOLDOUT_FRACTION, random_state=seed, stratify=ever
    )
    in_hold = train[patient].isin(set(hold_ids)).to_numpy()
    fit, hold = (
        train.loc[~in_hold].reset_index(drop=True),
        train.loc[in_hold].reset_index(drop=True),
    )
    x_fit, x_hold, categorical = tabular_features(fit, hold, observed)
    model = fit_classifier(
        x_fit, fit[label].to_numpy().astype(int), categorical, seed, SEQUENTIAL_MAX_LEAVES
    )
    p_hold = model.predict_proba(x_hold)[:, 1]
    candidates = np.quantile(p_hold, THRESHOLD_QUANTILES)
    utilities = [
        sepsis_utility(
            hold[patient].to_numpy(), hold[label].to_numpy(), (p_hold >= c).astype(int),
            hours=hold[hour].to_numpy(),
        )
        for c in candidates
    ]  # fmt: skip
    best = int(np.nanargmax(utilities))
    threshold = float(candidates[best])
    _, x_test, _ = tabular_features(fit, test, observed)
    p_test = model.predict_proba(x_test)[:, 1]
    details = {"threshold": threshold, "holdout_utility": float(utilities[best])}
    return test, p_test, (p_test >= threshold).astype(int), details


# --------------------------------------------------------------------------------------------
# dispatch on a task
# --------------------------------------------------------------------------------------------


def _public(task, keys: tuple[str, ...], what: str):
    for key in keys:
        spec = task.manifest.files.get(key)
        if spec is not None and spec.role == "public":
            return task.verified_path(key)
    raise DataError(
        f"task {task.id!r} declares no public {what} file (keys {list(keys)})",
        code="baselines.no_input",
        fix=f"add the {what} file to the manifest's `files` (keys {list(keys)}) and pin it",
    )


def fit_baseline(task, seed: int, *, test_features=None) -> BaselineFit:
    """Fit the App. D baseline of ``task`` with ``seed`` (BLAS/OpenMP limited to one thread)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _fit_baseline(task, seed, test_features=test_features)


def _fit_baseline(task, seed: int, *, test_features=None) -> BaselineFit:
    """Fit the App. D baseline of ``task`` with ``seed`` and predict its test features.

    Parameters
    ----------
    task : automd_analysis.tasks.Task
    seed : int
    test_features : path, optional
        Another test-features file (same columns), e.g. a masked one (paper App. G).

    Raises
    ------
    DataError
        Missing/modified public files, or outcome columns absent from the training file.
    BaselineDependencyError
        Survival task without torch/pycox.
    """
    m = task.manifest
    started = time.perf_counter()
    train_path = _public(task, ("train",), "training")
    test_path = test_features or _public(task, ("test_features", "test"), "test-features")
    train = pd.read_csv(train_path)
    test = pd.read_csv(test_path)
    ids = list(m.submission.id_columns)
    long_spec = m.paper.get("long_format")
    if long_spec:
        train, test = summarise_long(train, long_spec), summarise_long(test, long_spec)
    needed = [c for c in (m.labels.duration, m.labels.event, m.labels.label) if c]
    missing = [c for c in needed if c not in train.columns]
    if missing:
        raise DataError(
            f"task {task.id!r}: outcome column(s) {missing} are not in the training file",
            path=train_path,
            location="header",
            code="baselines.no_outcome",
            fix="the training file must carry the outcome under the manifest's label names",
        )
    details: dict = {}
    kind = m.kind.value
    if kind == "survival":
        grid_text = pd.read_csv(task.verified_path(m.submission.time_grid), dtype=str)["time"]
        headers = [s.strip() for s in grid_text]
        grid = np.array([float(s) for s in headers])
        features = [c for c in test.columns if c not in ids]
        curves = survival_baseline(
            train, test, features=features, duration=m.labels.duration, event=m.labels.event,
            grid=grid, seed=seed, passthrough=m.paper.get("baseline_passthrough", ()),
        )  # fmt: skip
        values = pd.DataFrame(np.round(curves, 6), columns=headers)
        submission = pd.concat([test[ids].reset_index(drop=True), values], axis=1)
    elif kind == "classification":
        features = [c for c in test.columns if c not in ids]
        p = classification_baseline(train, test, features=features, label=m.labels.label, seed=seed)
        submission = test[ids].reset_index(drop=True).copy()
        submission[m.submission.probability_column] = np.round(p, 6)
        if m.submission.label_column:
            rate = float(train[m.labels.label].mean())
            submission[m.submission.label_column] = expected_rate_labels(p, rate)
            details["label_rule"] = "expected event count"
    else:
        patient, hour = ids
        test_sorted, p, alarms, details = sequential_baseline(
            train, test, patient=patient, hour=hour, label=m.labels.label, seed=seed
        )
        submission = test_sorted[ids].copy()
        submission[m.submission.probability_column] = np.round(p, 6)
        submission[m.submission.label_column] = alarms
    return BaselineFit(
        submission=submission, fit_seconds=time.perf_counter() - started, details=details
    )
