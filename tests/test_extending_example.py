"""docs/extending.md end to end: its example module, saved as the user would save it, registered
with ``automd score --metric`` and as an entry point, on the committed small archive ->
extra_metrics.parquet -> table extra_metrics_by_agent."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from automd_analysis import submissions, tasks
from automd_analysis.analysis.extra_metrics import extra_metrics_by_agent
from automd_analysis.analysis.store import load_store
from automd_analysis.scoring.replicates import task_resample_weights

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("extending_example")]

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "tests" / "fixtures" / "small"
DOC = ROOT / "docs" / "extending.md"
N_BOOT = 40


def _example_source() -> str:
    """The first Python block of docs/extending.md (the module a user saves)."""
    return re.search(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S).group(1)


def _score(out: Path, pythonpath: Path, *extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    command = [sys.executable, "-m", "automd_analysis", "score", str(SMALL / "archive")]
    command += ["--data", str(SMALL / "data"), "--manifests", str(SMALL / "manifests")]
    command += ["--out", str(out), "--jobs", "1", "--no-progress", *extra]
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


def _function(site: Path):
    sys.path.insert(0, str(site))
    try:
        import my_metrics

        return my_metrics.sensitivity_at_90_specificity
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("my_metrics", None)


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    (site / "my_metrics.py").write_text(_example_source(), encoding="utf-8")
    out = tmp_path_factory.mktemp("scores") / "small"
    proc = _score(out, site, "--metric", "my_metrics:sens_at_90_spec", "--bootstrap", str(N_BOOT))
    assert proc.returncode == 0, proc.stderr
    return site, out


def test_the_example_is_scored_into_extra_metrics_parquet(scored):
    site, out = scored
    sens = _function(site)
    table = pd.read_parquet(out / "extra_metrics.parquet")
    store = load_store(out)
    selected = store.scores.loc[store.scores["is_selected"]]
    expected_runs = selected.loc[selected["valid"] & (selected["task_kind"] == "classification")]
    assert set(table["run_id"]) == set(expected_runs["run_id"]) and len(table) == len(expected_runs)
    assert (table["metric"] == "sens_at_90_spec").all() and table["higher_is_better"].all()
    # one run recomputed from its own files: the value, every replicate and the interval
    row = table.sort_values("run_id").iloc[0]
    run = store.runs.set_index("run_id").loc[row["run_id"]]
    task = tasks.get_task(run["task"], data=SMALL / "data", manifests=SMALL / "manifests")
    labels = tasks.load_labels(task)
    path = SMALL / "archive" / Path(*row["run_id"].split("/")) / "submission.csv"
    preds = submissions.validate_submission(task, path, labels).predictions
    y, p = labels.label, preds.probability
    assert row["value"] == sens(y, p, weights=np.ones(len(y), dtype=np.int64))
    weights = task_resample_weights(task.id, len(y), N_BOOT, 0)
    reps = np.array([sens(y, p, weights=w.astype(np.int64)) for w in weights])
    np.testing.assert_array_equal(np.asarray(row["replicates"], dtype=float), reps)
    low, high = np.quantile(reps, [0.025, 0.975])
    assert (row["ci_low"], row["ci_high"]) == (low, high)


def test_the_table_shows_it_by_agent_and_task_class(scored):
    _, out = scored
    store = load_store(out)
    table = extra_metrics_by_agent(store)
    runs = store.scores.loc[store.scores["is_selected"] & (store.scores["experiment"] == "main")]
    agents = sorted(runs.loc[runs["task_kind"] == "classification", "agent"].unique())
    assert sorted(table["agent"]) == agents and (table["metric"] == "sens_at_90_spec").all()
    assert table["classification"].notna().all()
    assert table[["survival", "sequential"]].isna().all().all()
    np.testing.assert_array_equal(table["all"], table["classification"])
    assert (table["classification_ci_low"] <= table["classification"]).all()
    assert (table["classification"] <= table["classification_ci_high"]).all()
    # the point value by hand: mean over tasks of the mean over valid runs
    extra = pd.read_parquet(out / "extra_metrics.parquet")
    extra = extra.loc[extra["experiment"] == "main"]
    for agent, mine in extra.groupby("agent"):
        expected = mine.groupby("task")["value"].mean().mean()
        got = table.set_index("agent").loc[agent, "classification"]
        assert got == pytest.approx(expected, abs=1e-15)


def test_the_example_as_an_entry_point(scored, tmp_path):
    site, with_flag = scored
    info = site / "my_metrics_pkg-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-metrics-pkg\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        '[automd.metrics]\nsens_at_90_spec = "my_metrics:sens_at_90_spec"\n'.replace('"', "")
    )
    out = tmp_path / "small"
    proc = _score(out, site, "--bootstrap", str(N_BOOT))
    assert proc.returncode == 0, proc.stderr
    a = pd.read_parquet(with_flag / "extra_metrics.parquet")
    b = pd.read_parquet(out / "extra_metrics.parquet")
    pd.testing.assert_frame_equal(a, b)
