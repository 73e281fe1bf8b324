"""Intervals of every version (``version_bootstrap``): the first replicates of the task's shared
resamples, the same numbers whether a content is also a selected submission or not; the selected
submissions, their replicates and the default store do not change."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from automd_analysis.errors import ScoreStoreError
from automd_analysis.metrics import percentile_interval
from automd_analysis.scoring import score_archive
from automd_analysis.scoring.metrics_for import metric_inputs
from automd_analysis.scoring.replicates import RunReplicates, run_replicates
from automd_analysis.scoring.worker import score_file
from automd_analysis.submissions import validate_submission
from automd_analysis.tasks import get_task, load_labels

SMALL = Path(__file__).resolve().parent / "fixtures" / "small"
DATA, MANIFESTS = SMALL / "data", SMALL / "manifests"
RUNS = [f"main/{a}/{t}/rep{r}" for a in ("alpha", "beta") for t in ("fx_cls", "fx_seq", "fx_surv")
        for r in (0, 1)]  # fmt: skip


def _without_warnings(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "warnings"}


@pytest.mark.parametrize("task_id", ["fx_cls", "fx_seq", "fx_surv"])
def test_a_version_interval_is_the_first_replicates_of_the_shared_resamples(task_id):
    task = get_task(task_id, data=DATA, manifests=MANIFESTS)
    labels = load_labels(task)
    path = next((SMALL / "archive" / "main" / "alpha" / task_id).glob("rep*/submission.csv"))
    version = score_file(task, path, labels, bootstrap=(130, 0, 70))
    selected = score_file(task, path, labels, details=True, bootstrap=(130, 0, 70))
    assert version["details"] is None
    assert json.dumps(version["metrics"]) == json.dumps(selected["metrics"])
    # computed on its own, or the head of the selected submission's 130 replicates: the same
    assert _without_warnings(version["interval"]) == _without_warnings(selected["interval"])
    m = task.manifest
    preds = validate_submission(task, path, labels).predictions
    direct = run_replicates(m.kind.value, m.metric.value, m.null_score, labels, preds,
                            task_id=task_id, n_boot=70, seed=0)  # fmt: skip
    assert _without_warnings(direct.to_dict()) == _without_warnings(version["interval"])
    full = RunReplicates.from_dict(selected["details"]["bootstrap"])
    assert np.array_equal(full.score[:70], direct.score, equal_nan=True)
    assert metric_inputs(m.kind.value, labels, preds).n_units == direct.n_units
    low, high = percentile_interval(direct.score, 0.05)
    assert (version["interval"]["score_ci_low"], version["interval"]["score_ci_high"]) == (
        low,
        high,
    )


def test_head_needs_two_to_all_replicates():
    res = RunReplicates(np.arange(5.0), np.arange(5.0), 0, 4, 0, 4, n_boot=5, seed=0, alpha=0.05,
                        n_units=3)  # fmt: skip
    assert res.head(5).score.tolist() == res.score.tolist()
    for bad in (1, 6):
        with pytest.raises(ValueError, match="k must lie in"):
            res.head(bad)


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    base = tmp_path_factory.mktemp("versions")
    arch = base / "arch"
    arch.mkdir()
    shutil.copy(SMALL / "archive" / "archive.yaml", arch / "archive.yaml")
    for run in RUNS:
        shutil.copytree(SMALL / "archive" / run, arch / run)
    plain, versions = base / "plain", base / "versions"
    kw = dict(data=DATA, manifests=MANIFESTS, jobs=1, bootstrap=96)
    score_archive(arch, out=plain, **kw)
    score_archive(arch, out=versions, version_bootstrap=40, **kw)
    return arch, plain, versions


@pytest.mark.slow
def test_every_valid_version_gets_an_interval_that_holds_its_score(stores):
    _, plain, versions = stores
    scores = pd.read_parquet(versions / "scores.parquet")
    rows = scores[~scores.is_selected & scores.valid]
    assert len(rows) > 0
    assert rows[["score_ci_low", "score_ci_high", "ece_bc"]].notna().all().all()
    assert ((rows.score_ci_low <= rows.score) & (rows.score <= rows.score_ci_high)).all()
    assert ((rows.ece_bc_ci_low <= rows.ece_bc) & (rows.ece_bc <= rows.ece_bc_ci_high)).all()
    invalid = scores[~scores.is_selected & ~scores.valid]
    assert invalid[["score_ci_low", "ece_bc"]].isna().all().all()
    meta = json.loads((versions / "store.json").read_text())
    assert meta["settings"]["version_bootstrap_n"] == 40
    assert "version_bootstrap_n" not in json.loads((plain / "store.json").read_text())["settings"]


@pytest.mark.slow
def test_selected_numbers_do_not_change(stores):
    _, plain, versions = stores
    for table in ("replicates", "subgroup_replicates", "subgroups", "calibration_measures"):
        a, b = (pd.read_parquet(d / f"{table}.parquet") for d in (plain, versions))
        pd.testing.assert_frame_equal(a, b)
    cols = ["run_id", "version", "score", "ece", "score_ci_low", "score_ci_high", "ece_bc",
            "ece_bc_ci_low", "ece_bc_ci_high"]  # fmt: skip
    a, b = (pd.read_parquet(d / "scores.parquet") for d in (plain, versions))
    pd.testing.assert_frame_equal(a.loc[a.is_selected, cols], b.loc[b.is_selected, cols])
    assert a.loc[~a.is_selected, "score_ci_low"].isna().all()  # default: versions get none
    # a version whose content is a selected submission shows the first 40 of its replicates
    same = b[~b.is_selected & b.cache_key.isin(b.loc[b.is_selected, "cache_key"])]
    assert len(same) > 0
    reps = pd.read_parquet(versions / "replicates.parquet")
    for _, row in same.iterrows():
        run = b[(b.cache_key == row.cache_key) & b.is_selected].run_id.iloc[0]
        first = reps[(reps.run_id == run) & (reps.replicate < 40)].score.to_numpy()
        low, high = percentile_interval(first, 0.05)
        assert math.isclose(row.score_ci_low, min(low, row.score), abs_tol=0)
        assert math.isclose(row.score_ci_high, max(high, row.score), abs_tol=0)


@pytest.mark.parametrize(("boot", "versions"), [(100, 1), (100, 101), (0, 50), (100, -2)])
def test_version_replicates_outside_two_to_bootstrap_are_refused(stores, tmp_path, boot, versions):
    arch = stores[0]
    with pytest.raises(ScoreStoreError, match="version replicates") as info:
        score_archive(arch, out=tmp_path / "s", data=DATA, manifests=MANIFESTS,
                      bootstrap=boot, version_bootstrap=versions)  # fmt: skip
    assert info.value.code == "usage" and info.value.fix


@pytest.mark.slow
def test_the_command_line_option(stores, tmp_path):
    arch = stores[0]
    base = [sys.executable, "-m", "automd_analysis", "score", str(arch), "--data", str(DATA),
            "--manifests", str(MANIFESTS), "--jobs", "1", "--no-progress", "--bootstrap", "96"]  # fmt: skip
    bad = subprocess.run([*base, "--out", str(tmp_path / "bad"), "--version-bootstrap", "97"],
                         capture_output=True, text=True)  # fmt: skip
    assert bad.returncode == 2 and "version replicates" in bad.stderr
    assert not (tmp_path / "bad" / "scores.parquet").exists()
    out = tmp_path / "cli"
    ok = subprocess.run([*base, "--out", str(out), "--version-bootstrap", "40"],
                        capture_output=True, text=True)  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    for table in ("scores", "replicates"):
        a, b = (pd.read_parquet(d / f"{table}.parquet") for d in (stores[2], out))
        pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("task_id", ["fx_cls", "fx_seq", "fx_surv"])
def test_a_version_s_metrics_are_those_scored_without_replicates(task_id):
    task = get_task(task_id, data=DATA, manifests=MANIFESTS)
    labels = load_labels(task)
    path = next((SMALL / "archive" / "main" / "beta" / task_id).glob("rep*/submission.csv"))
    plain = score_file(task, path, labels)
    assert "interval" not in plain  # the default cache entry is unchanged
    assert json.dumps(score_file(task, path, labels, bootstrap=(96, 0, 40))["metrics"]) == (
        json.dumps(plain["metrics"])
    )


def test_regenerate_passes_the_option_to_scoring(stores, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from automd_analysis.app import pipeline
    from automd_analysis.cli import app

    arch, seen = stores[0], {}

    def fake_regenerate(config, log=print):
        seen["stage"] = pipeline.score_stage(pipeline.resolve(config, lambda _: None))
        raise SystemExit(0)

    monkeypatch.setattr(pipeline, "regenerate", fake_regenerate)
    monkeypatch.setattr(pipeline, "score_archive", lambda *a, **kw: kw)
    result = CliRunner().invoke(app, ["regenerate", str(arch), "--data", str(DATA), "--manifests",
                                      str(MANIFESTS), "--scores", str(tmp_path / "s"), "--out",
                                      str(tmp_path / "r"), "--bootstrap", "96",
                                      "--version-bootstrap", "40"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (seen["stage"]["bootstrap"], seen["stage"]["version_bootstrap"]) == (96, 40)
