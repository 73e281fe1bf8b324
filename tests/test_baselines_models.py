"""Simple baselines (paper App. D): hand-computed pieces, the real pycox / scikit-learn
references, determinism, and clear errors."""

from __future__ import annotations

import builtins

import numpy as np
import pandas as pd
import pytest
from references import require
from sklearn.ensemble import HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

from automd_analysis.errors import DataError
from automd_analysis.submissions import validate_submission
from automd_analysis.tasks import get_task
from automd_demo import baselines as B
from automd_demo.harness.toy import make_toy_tasks

#: Fits the demo generator's baseline models: `make test-fast` skips this module.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return make_toy_tasks(tmp_path_factory.mktemp("toy_base"))


def _pycox_or_fail():
    require("torch", "pycox")


def test_step_survival_is_right_continuous_with_one_before_the_first_time():
    times = np.array([1.0, 3.0, 5.0])
    surv = np.array([[0.9, 0.8], [0.6, 0.5], [0.2, 0.1]])  # rows = times, columns = patients
    grid = np.array([0.0, 0.99, 1.0, 2.0, 3.0, 4.9, 5.0, 9.0])
    out = B.step_survival(times, surv, grid)
    np.testing.assert_allclose(out[0], [1, 1, 0.9, 0.9, 0.6, 0.6, 0.2, 0.2])
    np.testing.assert_allclose(out[1], [1, 1, 0.8, 0.8, 0.5, 0.5, 0.1, 0.1])


@pytest.mark.reference
def test_step_survival_matches_pycox_idx_at_times():
    _pycox_or_fail()
    from pycox.utils import idx_at_times

    rng = np.random.default_rng(0)
    times = np.sort(rng.uniform(0, 10, 30))
    surv = np.sort(rng.uniform(size=(30, 4)), axis=0)[::-1]
    grid = np.sort(rng.uniform(times[0], 12, 50))  # on/after the first time: pycox's own rule
    rows = idx_at_times(times, grid, steps="post")
    np.testing.assert_allclose(B.step_survival(times, surv, grid), surv[rows].T)


def test_survival_features_onehot_impute_standardise_by_hand():
    train = pd.DataFrame({"a": [1.0, 2.0, np.nan, 5.0], "c": ["u", "v", "u", None]})
    test = pd.DataFrame({"a": [np.nan], "c": ["w"]})
    x_train, x_test = B.survival_features(train, test, ["a", "c"])
    # a: median 2 -> [1, 2, 2, 5], mean 2.5, sd 1.5
    np.testing.assert_allclose(x_train[:, 0], [-1.0, -1 / 3, -1 / 3, 5 / 3], rtol=1e-6)
    assert x_test[0, 0] == pytest.approx(-1 / 3)
    # c=u: [1, 0, 1, 0] -> standardised; an unseen test level is all-zero before scaling
    np.testing.assert_allclose(x_train[:, 1], [1, -1, 1, -1], rtol=1e-6)
    assert x_test[0, 1] == pytest.approx(-1.0)
    kept, _ = B.survival_features(train, test, ["a", "c"], passthrough=["a"])
    np.testing.assert_allclose(kept[:, 0], [1, 2, 2, 5])


def test_expected_rate_labels_predicts_the_expected_number_of_events():
    p = np.linspace(0, 1, 101)
    labels = B.expected_rate_labels(p, 0.2)
    assert labels.sum() == 21 and labels[-21:].all() and not labels[:-21].any()


def test_summarise_long_by_hand():
    long = pd.DataFrame(
        {
            "RecordID": [1, 1, 1, 2],
            "Time": [0, 5, 9, 1],
            "Parameter": ["HR", "HR", "Temp", "HR"],
            "Value": [80.0, 100.0, 37.0, 60.0],
            "label": [1, 1, 1, 0],
        }
    )
    wide = B.summarise_long(long, {"id": "RecordID", "time": "Time", "variable": "Parameter", "value": "Value"})  # fmt: skip
    row1 = wide.set_index("RecordID").loc[1]
    assert (row1["HR_mean"], row1["HR_min"], row1["HR_max"], row1["HR_last"]) == (90, 80, 100, 100)
    assert row1["Temp_last"] == 37.0 and row1["label"] == 1
    assert np.isnan(wide.set_index("RecordID").loc[2, "Temp_mean"])


def test_classification_baseline_is_scikit_learns_hgb(toy):
    root, man = toy
    task = get_task("toy_auroc", root, man)
    fit = B.fit_baseline(task, seed=3)
    train = pd.read_csv(task.path("train"))
    test = pd.read_csv(task.path("test_features"))
    features = [c for c in test.columns if c != "patient_id"]
    x_tr, x_te, cat = B.tabular_features(train, test, features)
    with threadpool_limits(limits=1):
        ref = HistGradientBoostingClassifier(
            max_iter=300, learning_rate=0.1, early_stopping=False, random_state=3,
            categorical_features=np.array(cat),
        ).fit(x_tr, train["outcome"])  # fmt: skip
    np.testing.assert_allclose(
        fit.submission["PredictedProbability"], np.round(ref.predict_proba(x_te)[:, 1], 6)
    )
    path = root / "b.csv"
    fit.submission.to_csv(path, index=False)
    assert validate_submission(task, path).valid


def test_label_task_gets_expected_count_labels_and_validates(toy, tmp_path):
    root, man = toy
    task = get_task("toy_label", root, man)
    fit = B.fit_baseline(task, seed=0)
    sub = fit.submission
    rate = pd.read_csv(task.path("train"))["outcome"].mean()
    assert abs(sub["PredictedLabel"].mean() - rate) < 0.05
    sub.to_csv(tmp_path / "s.csv", index=False)
    assert validate_submission(task, tmp_path / "s.csv").valid


def test_sequential_baseline_holdout_threshold_and_determinism(toy, tmp_path):
    root, man = toy
    task = get_task("toy_hourly", root, man)
    a = B.fit_baseline(task, seed=1)
    b = B.fit_baseline(task, seed=1)
    c = B.fit_baseline(task, seed=2)
    pd.testing.assert_frame_equal(a.submission, b.submission)
    assert a.details == b.details
    # the seed changes the 15% holdout, hence the model and the threshold
    assert not a.submission.equals(c.submission)
    p = a.submission["PredictedProbability"].to_numpy()
    alarms = a.submission["PredictedLabel"].to_numpy()
    clear = np.abs(p - a.details["threshold"]) > 1e-6  # away from the rounding boundary
    np.testing.assert_array_equal(alarms[clear], (p[clear] >= a.details["threshold"]).astype(int))
    a.submission.to_csv(tmp_path / "s.csv", index=False)
    assert validate_submission(task, tmp_path / "s.csv").valid


def test_sequential_threshold_is_the_best_of_the_40_holdout_quantiles(toy, monkeypatch):
    """Re-derive the holdout choice independently with a per-row utility loop."""
    root, man = toy
    task = get_task("toy_hourly", root, man)
    from automd_analysis import metrics

    calls = []
    real = metrics.sepsis_utility

    def spy(ids, labels, alarms, hours=None):
        calls.append((np.asarray(ids), np.asarray(labels), np.asarray(alarms)))
        return real(ids, labels, alarms, hours=hours)

    monkeypatch.setattr(metrics, "sepsis_utility", spy)
    fit = B.fit_baseline(task, seed=4)
    assert len(calls) == 40
    utilities = [_loop_utility(*c) for c in calls]
    best = int(np.nanargmax(utilities))
    assert fit.details["holdout_utility"] == pytest.approx(utilities[best], abs=1e-9)
    held = calls[0][0]
    n_pat = len(np.unique(held))
    total = pd.read_csv(task.path("train"))["patient_id"].nunique()
    assert abs(n_pat - 0.15 * total) <= 1


def _loop_utility(ids, labels, alarms) -> float:
    """Straightforward per-row PhysioNet 2019 utility (official parameters)."""

    def row_u(t, onset, septic, alarm):
        if not septic:
            return -0.05 if alarm else 0.0
        d = t - onset
        if alarm:
            if d <= -6:
                return max((d + 12) / 6, -0.05)
            return (3 - d) / 9 if d <= 3 else 0.0
        return -2 * (d + 6) / 9 if -6 < d <= 3 else 0.0

    obs = best = none = 0.0
    for pid in dict.fromkeys(ids):
        idx = np.flatnonzero(ids == pid)
        y, a = labels[idx], alarms[idx]
        septic = bool(y.any())
        onset = int(np.argmax(y)) + 6 if septic else 10**9
        n = len(idx)
        for t in range(n):
            obs += row_u(t, onset, septic, a[t])
            none += row_u(t, onset, septic, 0)
            ideal = septic and max(0, onset - 12) <= t <= min(onset + 3, n - 1)
            best += row_u(t, onset, septic, int(ideal))
    return (obs - none) / (best - none) if best != none else float("nan")


@pytest.mark.reference
def test_survival_baseline_matches_a_direct_pycox_fit(toy, tmp_path):
    """Our survival baseline equals pycox CoxPH on an MLPVanilla trained directly here."""
    _pycox_or_fail()
    import torch
    import torchtuples as tt
    from pycox.models import CoxPH

    root, man = toy
    task = get_task("toy_survival", root, man)
    fit = B.fit_baseline(task, seed=5)
    train = pd.read_csv(task.path("train"))
    test = pd.read_csv(task.path("test_features"))
    features = [c for c in test.columns if c != "patient_id"]
    x_tr, x_te = B.survival_features(train, test, features)
    torch.manual_seed(5)
    np.random.seed(5)  # noqa: NPY002
    torch.set_num_threads(1)
    net = tt.practical.MLPVanilla(x_tr.shape[1], [32, 32], 1, True, 0.1, output_bias=False)
    model = CoxPH(net, tt.optim.Adam(lr=1e-3))
    target = (train["duration"].to_numpy("float32"), train["event"].to_numpy("float32"))
    model.fit(x_tr, target, batch_size=256, epochs=64, verbose=False)
    model.compute_baseline_hazards()
    surv = model.predict_surv_df(x_te)
    grid = pd.read_csv(task.path("time_grid"))["time"].to_numpy()
    expected = B.step_survival(surv.index.to_numpy(float), surv.to_numpy(), grid)
    np.testing.assert_allclose(fit.submission.iloc[:, 1:].to_numpy(), np.round(expected, 6))
    fit.submission.to_csv(tmp_path / "s.csv", index=False)
    assert validate_submission(task, tmp_path / "s.csv").valid


def test_missing_torch_gives_a_clear_error(toy, monkeypatch):
    root, man = toy
    task = get_task("toy_survival", root, man)
    real_import = builtins.__import__

    def no_torch(name, *args, **kwargs):
        if name == "torch" or name.startswith(("torch.", "pycox", "torchtuples")):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_torch)
    with pytest.raises(B.BaselineDependencyError) as err:
        B.fit_baseline(task, seed=0)
    assert err.value.code == "baselines.missing_dependency"
    assert "baselines" in err.value.fix


def test_missing_outcome_column_is_a_data_error(toy, tmp_path):
    root, man = toy
    import shutil

    import yaml

    man2 = tmp_path / "man"
    shutil.copytree(man, man2)
    path = man2 / "toy_auroc.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["labels"]["label"] = "not_there"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(DataError) as err:
        B.fit_baseline(get_task("toy_auroc", root, man2), seed=0)
    assert err.value.code == "baselines.no_outcome" and "not_there" in err.value.message


def test_task_without_public_training_file_is_a_clear_error(toy, tmp_path):
    root, man = toy
    import shutil

    import yaml

    man2 = tmp_path / "man"
    shutil.copytree(man, man2)
    path = man2 / "toy_auroc.yaml"
    doc = yaml.safe_load(path.read_text())
    del doc["files"]["train"]
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(DataError) as err:
        B.fit_baseline(get_task("toy_auroc", root, man2), seed=0)
    assert err.value.code == "baselines.no_input"
