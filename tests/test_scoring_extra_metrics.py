"""Metrics of the user's own: declarations, loading (``--metric``, entry points), the cache key,
failures as problems, and the same bootstrap resamples as the built-in metrics."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from automd_analysis import metrics
from automd_analysis.errors import AutomdError
from automd_analysis.metrics import Metric, MetricInputs
from automd_analysis.scoring.cache import cache_key
from automd_analysis.scoring.extra_metrics import (
    extra_metric_results,
    fingerprint,
    load_metric,
    user_metrics,
)

MODULE = textwrap.dedent(
    """
    import numpy as np
    from automd_analysis.metrics import Metric, auroc

    def _mean_prob(y_true, y_prob, *, weights):
        return float(np.average(y_prob, weights=weights))

    def _my_auroc(y_true, y_prob, *, weights):
        return auroc(y_true, y_prob, weights=weights)

    def _boom(y_true, y_prob, *, weights):
        raise RuntimeError("kaput")

    def _nan(y_true, y_prob, *, weights):
        return float("nan")

    def _text(y_true, y_prob, *, weights):
        return "high"

    def _sometimes(y_true, y_prob, *, weights):
        if weights[0] == 0:
            raise ValueError("first patient missing")
        if weights[0] == 2:
            return float("inf")
        return 1.0

    def _labels(y_true, y_prob, *, weights, y_pred_label):
        return float(np.average(y_pred_label, weights=weights))

    mean_prob = Metric("mean_prob", "classification", False, _mean_prob)
    my_auroc = Metric("my_auroc", ["classification"], True, _my_auroc)
    boom = Metric("boom", "classification", True, _boom)
    nan = Metric("nan_metric", "classification", True, _nan)
    text = Metric("text_metric", "classification", True, _text)
    sometimes = Metric("sometimes", "classification", True, _sometimes)
    labels = Metric("label_rate", "classification", False, _labels)
    clash = Metric("auroc", "classification", True, _my_auroc)
    twin = Metric("mean_prob", "classification", True, _mean_prob)
    not_a_metric = 42
    """
)


@pytest.fixture
def module(tmp_path, monkeypatch):
    (tmp_path / "user_metrics_fixture.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "user_metrics_fixture"
    sys.modules.pop("user_metrics_fixture", None)


def _inputs(n: int = 40, seed: int = 0) -> MetricInputs:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(np.int8)
    y[:2] = [0, 1]
    p = np.round(rng.random(n), 2)
    label = (p > 0.5).astype(np.int8)
    return MetricInputs("classification", (y, p), label=label, n_units=n)


# --- declarations ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("", "classification", True), "name"),
        (("has space", "classification", True), "name"),
        (("m", "regression", True), "kinds"),
        (("m", (), True), "kinds"),
        (("m", "survival", "yes"), "higher_is_better"),
    ],
)
def test_a_bad_declaration_is_rejected(args, match):
    with pytest.raises(ValueError, match=match):
        Metric(*args, lambda *a, weights: 0.0)
    with pytest.raises(ValueError, match="callable"):
        Metric("m", "survival", True, 3)


def test_builtins_are_declared_like_user_metrics():
    assert set(metrics.BUILTIN_METRICS) == {
        "ctd_adj_antolini",
        "auroc",
        "min_se_ppv",
        "utility_2019",
    }
    for name, m in metrics.BUILTIN_METRICS.items():
        assert isinstance(m, Metric) and m.name == name and m.higher_is_better and m.vectorized
    assert metrics.BUILTIN_METRICS["min_se_ppv"].takes_label
    assert not metrics.BUILTIN_METRICS["auroc"].takes_label
    inputs = _inputs()
    y, p = inputs.args
    assert metrics.BUILTIN_METRICS["auroc"].evaluate(inputs) == metrics.auroc(y, p)
    got = metrics.BUILTIN_METRICS["min_se_ppv"].evaluate(inputs)
    assert got == metrics.min_se_ppv(y, inputs.label)
    with pytest.raises(ValueError, match="does not score classification"):
        metrics.BUILTIN_METRICS["ctd_adj_antolini"].evaluate(inputs)


# --- loading ---------------------------------------------------------------------------------


def test_load_metric_imports_the_named_metric(module):
    user = load_metric(f"{module}:mean_prob")
    assert user.metric.name == "mean_prob" and user.origin == "--metric"
    assert user.spec == f"{module}:mean_prob"


@pytest.mark.parametrize(
    ("attribute", "code", "match"),
    [
        (None, "metric.bad_spec", "not of the form MODULE:ATTRIBUTE"),
        ("not_a_metric", "metric.not_a_metric", "is a int, not an automd_analysis.metrics.Metric"),
        ("missing", "metric.import_failed", "AttributeError"),
    ],
)
def test_load_metric_errors_name_the_fix(module, attribute, code, match):
    spec = module if attribute is None else f"{module}:{attribute}"
    with pytest.raises(AutomdError, match=match) as info:
        load_metric(spec)
    assert info.value.code == code and "--metric MODULE:ATTRIBUTE" in info.value.fix
    with pytest.raises(AutomdError, match="ModuleNotFoundError"):
        load_metric("no_such_module_for_automd:m")


def test_names_are_unique_and_never_a_builtin(module):
    with pytest.raises(AutomdError, match="already taken by a built-in") as info:
        user_metrics([f"{module}:clash"], include_entry_points=False)
    assert info.value.code == "metric.duplicate_name"
    with pytest.raises(AutomdError, match="already taken by"):
        user_metrics([f"{module}:mean_prob", f"{module}:twin"], include_entry_points=False)


def test_entry_points_are_found(tmp_path):
    site = tmp_path / "site"
    (site / "ep_metrics_fixture-1.0.dist-info").mkdir(parents=True)
    (site / "ep_metrics_fixture.py").write_text(MODULE)
    info = site / "ep_metrics_fixture-1.0.dist-info"
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ep-metrics-fixture\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[automd.metrics]\nmean_prob = ep_metrics_fixture:mean_prob\n"
    )
    code = (
        "from automd_analysis.scoring.extra_metrics import user_metrics\n"
        "print([(u.spec, u.origin) for u in user_metrics()])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(site), "PATH": ""},
    ).stdout
    assert out.strip() == "[('ep_metrics_fixture:mean_prob', 'entry point mean_prob')]"


# --- fingerprints and the cache key ------------------------------------------------------------


def test_the_cache_key_changes_with_the_set_of_metrics_and_their_source(module, tmp_path):
    base = ("a" * 64, "b" * 64, "c" * 64, "0.1.0", (100, 0))
    plain = cache_key(*base)
    assert cache_key(*base, None) == plain == cache_key(*base, [])  # no metric: the key as before
    one = [fingerprint(load_metric(f"{module}:mean_prob"))]
    two = one + [fingerprint(load_metric(f"{module}:boom"))]
    assert len({plain, cache_key(*base, one), cache_key(*base, two)}) == 3
    assert one[0]["source_sha256"] is not None and one[0]["spec"] == f"{module}:mean_prob"
    # the same declaration with another function body is another metric
    edited = MODULE.replace("np.average(y_prob, weights=weights)", "float(np.max(y_prob))")
    (tmp_path / "user_metrics_edited.py").write_text(edited)
    changed = [fingerprint(load_metric("user_metrics_edited:mean_prob"))]
    assert changed[0]["name"] == one[0]["name"] and cache_key(*base, changed) != cache_key(
        *base, one
    )


# --- evaluation --------------------------------------------------------------------------------


def test_values_and_replicates_use_the_builtin_resample_weights(module):
    inputs = _inputs()
    weights = metrics.bootstrap_weights(inputs.n_units, 60, seed=3)
    users = user_metrics([f"{module}:my_auroc", f"{module}:mean_prob"], include_entry_points=False)
    rows, problems = extra_metric_results(users, inputs, weights, alpha=0.1)
    assert problems == []
    auc = {r["metric"]: r for r in rows}["my_auroc"]
    y, p = inputs.args
    assert auc["value"] == metrics.auroc(y, p) and auc["higher_is_better"] is True
    # replicate b is the built-in AUROC on resample b: the same resamples, so the same values
    np.testing.assert_array_equal(auc["replicates"], metrics.auroc(y, p, weights=weights))
    low, high = metrics.percentile_interval(np.array(auc["replicates"]), 0.1)
    assert (auc["ci_low"], auc["ci_high"]) == (low, high)
    mean = {r["metric"]: r for r in rows}["mean_prob"]
    assert mean["value"] == pytest.approx(float(np.mean(p)), abs=1e-15)


def test_labels_reach_the_functions_that_ask_for_them(module):
    inputs = _inputs()
    rows, _ = extra_metric_results(
        user_metrics([f"{module}:labels"], include_entry_points=False), inputs, None, alpha=0.05
    )
    assert rows[0]["value"] == pytest.approx(float(np.mean(inputs.label)), abs=1e-15)
    assert math.isnan(rows[0]["ci_low"]) and rows[0]["replicates"] == []


@pytest.mark.parametrize(
    ("attribute", "code", "message"),
    [
        ("boom", "metric.failed", "failed: RuntimeError: kaput"),
        ("nan", "metric.non_finite", "returned nan"),
        ("text", "metric.failed", "TypeError: returned str 'high', not a number"),
    ],
)
def test_a_failing_metric_is_a_problem_not_an_error(module, attribute, code, message):
    users = user_metrics([f"{module}:{attribute}"], include_entry_points=False)
    rows, problems = extra_metric_results(users, _inputs(), np.ones((5, 40), int), 0.05)
    assert rows == []
    assert [p["code"] for p in problems] == [code]
    assert message in problems[0]["message"] and problems[0]["metric"] == users[0].metric.name


def test_failures_on_some_replicates_leave_them_out_of_the_interval(module):
    users = user_metrics([f"{module}:sometimes"], include_entry_points=False)
    weights = np.ones((6, 40), dtype=int)
    weights[1, 0], weights[2, 0], weights[3, 0] = 0, 2, 0  # raises, inf, raises
    weights[1, 1] = weights[2, 1] = weights[3, 1] = 2
    rows, problems = extra_metric_results(users, _inputs(), weights, 0.05)
    assert rows[0]["value"] == 1.0
    assert rows[0]["replicates"] == [1.0, None, None, None, 1.0, 1.0]
    assert (rows[0]["ci_low"], rows[0]["ci_high"]) == (1.0, 1.0)
    codes = {p["code"]: p["message"] for p in problems}
    assert "failed on 2 of 6 bootstrap replicates" in codes["metric.failed"]
    assert "first: ValueError: first patient missing" in codes["metric.failed"]
    assert "non-finite value on 1 of 6" in codes["metric.non_finite"]


def test_metrics_of_other_kinds_are_skipped(module):
    survival_only = Metric("surv_only", "survival", True, lambda *a, weights: 1.0)
    from automd_analysis.scoring.extra_metrics import UserMetric

    rows, problems = extra_metric_results(
        [UserMetric("x:y", survival_only, "--metric")], _inputs(), None, 0.05
    )
    assert rows == [] and problems == []


def test_cli_exits_2_with_one_line_for_a_bad_metric(module, tmp_path):
    for spec, fragment in (
        (f"{module}:not_a_metric", "is a int, not an automd_analysis.metrics.Metric"),
        ("no_such_module_for_automd:m", "cannot import"),
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "automd_analysis", "score", str(tmp_path), "--metric", spec],
            capture_output=True,
            text=True,
            env={"PYTHONPATH": str(tmp_path), "PATH": ""},
        )
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("automd: error: "), proc.stderr
        assert fragment in lines[0] and "Fix: pass --metric MODULE:ATTRIBUTE" in lines[0]
        assert "Traceback" not in proc.stderr
