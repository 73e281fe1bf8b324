"""``automd score --ece-bins N``: the ECE of binary and hourly tasks (value, bootstrap replicates,
reliability rows) with N equal-width bins, recorded in ``store.json``; survival tasks unchanged; a
different N is a different cache key, the default keeps the keys it always had."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from automd_analysis import metrics
from automd_analysis.cli import main
from automd_analysis.scoring.cache import cache_key
from automd_analysis.submissions import validate_submission
from automd_analysis.tasks import get_task, load_labels

pytestmark = pytest.mark.slow

SMALL = Path(__file__).resolve().parent / "fixtures" / "small"
FIXTURE = ["--data", str(SMALL / "data"), "--manifests", str(SMALL / "manifests")]


def score(out: Path, capsys, *extra: str) -> str:
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main(["score", str(SMALL / "archive"), *FIXTURE, "--out", str(out), "--jobs", "1",
              "--bootstrap", "20", "--no-progress", *extra])  # fmt: skip
    out_text, err = capsys.readouterr()
    assert stop.value.code in (0, None), err
    return out_text


def test_ece_bins_changes_the_binary_ece_only_and_is_recorded(tmp_path, capsys):
    default, fifteen = tmp_path / "ten", tmp_path / "fifteen"
    score(default, capsys)
    printed = score(fifteen, capsys, "--ece-bins", "15")
    assert " 0 from cache" in printed  # its own cache (another key), nothing reused
    settings = json.loads((fifteen / "store.json").read_text())["settings"]
    assert settings["ece_n_bins"] == 15
    assert json.loads((default / "store.json").read_text())["settings"]["ece_n_bins"] == 10

    ten, fif = (pd.read_parquet(d / "scores.parquet").set_index(["run_id", "version"]) for d in
                (default, fifteen))  # fmt: skip
    kind = ten["task"].map(
        lambda t: get_task(t, SMALL / "data", SMALL / "manifests").manifest.kind.value
    )
    binary = kind.isin(["classification", "sequential"]) & ten["valid"]
    survival = (kind == "survival") & ten["valid"]
    assert binary.any() and survival.any()
    assert (ten.loc[binary, "ece"] != fif.loc[binary, "ece"]).any()
    pd.testing.assert_series_equal(ten.loc[survival, "ece"], fif.loc[survival, "ece"])
    pd.testing.assert_series_equal(ten["score"], fif["score"])  # only the ECE moves

    # one selected classification submission, computed here from its file and the labels
    row = fif[binary & fif["is_selected"]].iloc[0]
    task = get_task(row["task"], SMALL / "data", SMALL / "manifests")
    run_id = row.name[0]
    result = validate_submission(task, SMALL / "archive" / run_id / "submission.csv")
    y, p = load_labels(task).label, result.predictions.probability
    assert row["ece"] == pytest.approx(metrics.ece(y, p, 15), abs=1e-12)
    assert ten.loc[row.name, "ece"] == pytest.approx(metrics.ece(y, p, 10), abs=1e-12)

    bins = pd.read_parquet(fifteen / "calibration_bins.parquet")
    binary_bins = bins[(bins["kind"] == "binary") & (bins["run_id"] == run_id)]
    assert sorted(binary_bins["bin"]) == list(range(15))
    replicates = [pd.read_parquet(d / "replicates.parquet").set_index(["run_id", "replicate"])
                  for d in (default, fifteen)]  # fmt: skip
    assert not np.allclose(replicates[0].loc[run_id, "ece"], replicates[1].loc[run_id, "ece"])


def test_default_bins_keep_the_cache_keys_they_always_had():
    args = ("a" * 64, "t", "l", "0.1.0", (1000, 0), None)
    assert cache_key(*args) == cache_key(*args, None) == cache_key(*args, {})
    assert cache_key(*args, {"ece_n_bins": 15}) != cache_key(*args)


@pytest.mark.parametrize("bad", ["1", "0", "x"])
def test_a_bad_bin_count_is_a_usage_error(bad, tmp_path, capsys):
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main(["score", str(SMALL / "archive"), *FIXTURE, "--out", str(tmp_path / "s"),
              "--ece-bins", bad])  # fmt: skip
    assert stop.value.code == 2
    assert "--ece-bins" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()
