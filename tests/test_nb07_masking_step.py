"""automd_analysis.masking.step: eligible runs, the step with a stand-in re-run, caching, and the
masking-results file format (write, read, every check); analysis.realtime summaries."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import storebuilder
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from automd_analysis.analysis import catalog, realtime
from automd_analysis.analysis.store import ScoreStore
from automd_analysis.cli.commands_masking import agents_option
from automd_analysis.errors import AutomdError
from automd_analysis.masking import FLAG_THRESHOLD
from automd_analysis.masking.results import (
    MASKING_COLUMNS,
    MASKING_FILE,
    REQUIRED_COLUMNS,
    MaskingResultsError,
    read_masking_results,
    write_masking_results,
)
from automd_analysis.masking.step import (
    eligible_runs,
    run_cache_key,
    run_masking_step,
)
from automd_demo.harness.toy import make_toy_tasks

TASK = "toy_hourly_local"
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "small"


# ---------------------------------------------------------------------------------------------
# a hand-built store and archive on the toy hourly task


def _store(specs: list[tuple[str, int, bool, str, bool]]) -> ScoreStore:
    """Runs (agent, rep, valid, search, reference) on the toy hourly task."""
    runs = [
        storebuilder.run(agent, TASK, rep, valid=valid, reference=reference)
        for agent, rep, valid, _, reference in specs
    ]
    frames = storebuilder.frames(runs)
    search = {storebuilder.run_id(r): s for r, (_, _, _, s, _) in zip(runs, specs, strict=True)}
    for name in ("scores", "runs"):
        frames[name]["task_kind"] = "sequential"
        frames[name]["metric"] = "utility_2019"
    frames["runs"]["search"] = frames["runs"]["run_id"].map(search)
    frames["scores"]["submission_sha256"] = [f"{i:064x}" for i in range(len(runs))]
    store = ScoreStore.from_frames(**frames)
    return ScoreStore.from_frames(
        **{k: getattr(store, k) for k in ("scores", "runs", "subgroups", "calibration_bins",
                                          "reasons", "annotations", "pairs")},
        meta={"tasks": {TASK: "taskhash"}},
    )  # fmt: skip


SPECS = [
    ("peeker", 0, True, "tree", False),  # looks at the whole stay: must be flagged
    ("causal", 0, True, "tree", False),  # uses only the current hour
    ("broken", 0, True, "tree", False),  # its re-run fails
    ("peeker", 1, False, "tree", False),  # invalid selected submission: not tested
    ("linear", 0, True, "linear", False),  # not a tree-search agent: tested only on request
    ("baseline", 0, True, "none", True),  # simple baseline: never tested
]


def _alarms(test_csv: Path, rule: str) -> pd.DataFrame:
    features = pd.read_csv(test_csv)
    if rule == "peeker":  # alarm when the patient's record in the *file* is long: looks ahead
        length = features.groupby("patient_id")["ICULOS"].transform("size")
        label = (length > 12).astype(int)
    else:  # the current hour only
        label = (features["ICULOS"] % 3 == 0).astype(int)
    return pd.DataFrame(
        {
            "patient_id": features["patient_id"],
            "ICULOS": features["ICULOS"],
            "PredictedProbability": label * 0.9,
            "PredictedLabel": label,
        }
    )


class StandInRerun:
    """Plays the harness's ``rerun_submission``: alarms from a rule chosen by the run's agent."""

    def __init__(self):
        self.calls: list[str] = []

    def __call__(self, run_dir, test_csv, out_csv):
        agent = Path(run_dir).parts[-3]
        self.calls.append(agent)
        if agent == "broken":
            raise RuntimeError("the model could not be refitted")
        out = Path(out_csv)
        out.parent.mkdir(parents=True, exist_ok=True)
        _alarms(Path(test_csv), agent).to_csv(out, index=False)
        return out


@pytest.fixture
def setup(tmp_path):
    data, manifests = make_toy_tasks(tmp_path / "toy")
    archive = tmp_path / "arch"
    archive.mkdir()
    (archive / "archive.yaml").write_text(
        yaml.safe_dump({"provenance": {"built_by": "automd demo archive"}})
    )
    test_csv = data / "tasks" / TASK / "test_features.csv"
    for agent, rep, _, _, _ in SPECS:
        run_dir = archive / "main" / agent / TASK / f"rep{rep}"
        (run_dir / "code" / "v0001").mkdir(parents=True)
        (run_dir / "run.json").write_text(json.dumps({"agent": agent, "rep": rep}))
        (run_dir / "code" / "v0001" / "train.py").write_text(f"# {agent}\n")
        if agent in (
            "peeker",
            "causal",
        ):  # the archived file = what the code gives on the full file
            _alarms(test_csv, agent).to_csv(run_dir / "submission.csv", index=False)
    return archive, _store(SPECS), data, manifests, tmp_path / "scores"


# ---------------------------------------------------------------------------------------------
# which runs


def test_eligible_runs_are_valid_tree_runs_on_sequential_tasks(setup):
    _, store, *_ = setup
    got = eligible_runs(store)
    assert list(got["run_id"]) == sorted(
        f"main/{a}/{TASK}/rep{r}"
        for a, r, valid, search, ref in SPECS
        if valid and search == "tree" and not ref
    )
    by_agent = eligible_runs(store, agents=["linear", "peeker", "baseline"])
    assert list(by_agent["agent"]) == ["linear", "peeker"]  # invalid and baseline runs never
    assert eligible_runs(store, experiment="other").empty


def test_non_sequential_tasks_are_not_eligible():
    frames = storebuilder.frames([storebuilder.run("tree_agent", "clf_a", 0)])
    frames["runs"]["search"] = "tree"
    assert eligible_runs(ScoreStore.from_frames(**frames)).empty


def test_the_step_never_runs_code_without_explicit_consent(setup):
    archive, store, data, manifests, scores = setup
    rerun = StandInRerun()
    for consent in (False, None, "yes", 1):
        with pytest.raises(AutomdError) as info:
            run_masking_step(archive, store, scores, rerun=rerun, data=data, manifests=manifests,
                             allow_code_execution=consent)  # fmt: skip
        assert info.value.code == "masking.code_execution_not_allowed"
    assert rerun.calls == [] and not (scores / MASKING_FILE).exists()


def test_agents_option_accepts_repeats_and_commas():
    assert agents_option(["aide,codex", " aide ", ""]) == ["aide", "codex"]
    assert agents_option(None) is None and agents_option([""]) is None


# ---------------------------------------------------------------------------------------------
# the step


def test_step_flags_the_look_ahead_run_only(setup):
    archive, store, data, manifests, scores = setup
    rerun = StandInRerun()
    summary = run_masking_step(archive, store, scores, allow_code_execution=True, seed=3, rerun=rerun, data=data,
                               manifests=manifests)  # fmt: skip
    results = read_masking_results(scores / MASKING_FILE).set_index("agent")
    assert summary.path == scores / MASKING_FILE
    assert (summary.n_eligible, summary.n_rerun, summary.n_cached) == (3, 3, 0)
    assert (summary.n_flagged, summary.n_errors) == (1, 1)
    assert results.at["peeker", "status"] == "violation" and results.at["peeker", "flagged"]
    assert results.at["causal", "status"] == "no_change" and not results.at["causal", "flagged"]
    assert results.at["broken", "status"] == "error"
    assert pd.isna(results.at["broken", "flagged"])
    assert "could not be refitted" in results.at["broken", "reason"]
    # the look-ahead rule changes alarms; both fractions are computed on the retained rows
    peek = results.loc["peeker"]
    assert peek["fraction_all_rows"] == peek["n_changed_rows"] / peek["n_retained_rows"] > 0.001
    assert peek["fraction_last_rows"] == peek["n_changed_last"] / peek["n_patients"]
    assert results.at["causal", "fraction_all_rows"] == 0.0
    # the full re-run reproduces the archived submission
    assert (
        results.at["peeker", "reproduces_original"] and results.at["causal", "reproduces_original"]
    )
    assert set(results["seed"]) == {3} and set(results["threshold"]) == {FLAG_THRESHOLD}
    assert set(results["search"]) == {"tree"}
    # every run was re-run twice (complete and masked file), except the failing one (once)
    assert sorted(rerun.calls) == ["broken", "causal", "causal", "peeker", "peeker"]


def test_unchanged_runs_come_from_the_cache_and_changed_code_is_rerun(setup):
    archive, store, data, manifests, scores = setup
    run_masking_step(
        archive,
        store,
        scores,
        allow_code_execution=True,
        rerun=StandInRerun(),
        data=data,
        manifests=manifests,
    )
    first = (scores / MASKING_FILE).read_bytes()
    rerun = StandInRerun()
    summary = run_masking_step(
        archive,
        store,
        scores,
        allow_code_execution=True,
        rerun=rerun,
        data=data,
        manifests=manifests,
    )
    assert rerun.calls == [] and (summary.n_rerun, summary.n_cached) == (0, 3)
    assert (scores / MASKING_FILE).read_bytes() == first  # same rows, same bytes
    # edit one run's code: only that run is re-run
    (archive / "main" / "causal" / TASK / "rep0" / "code" / "v0001" / "train.py").write_text("#\n")
    rerun = StandInRerun()
    summary = run_masking_step(
        archive,
        store,
        scores,
        allow_code_execution=True,
        rerun=rerun,
        data=data,
        manifests=manifests,
    )
    assert rerun.calls == ["causal", "causal"] and summary.n_cached == 2
    # another seed is another masked file: everything is re-run; --force ignores the cache
    rerun = StandInRerun()
    run_masking_step(
        archive,
        store,
        scores,
        allow_code_execution=True,
        seed=1,
        rerun=rerun,
        data=data,
        manifests=manifests,
    )
    assert len(rerun.calls) == 5
    rerun = StandInRerun()
    run_masking_step(archive, store, scores, allow_code_execution=True, seed=1, rerun=rerun, data=data, manifests=manifests,
                     force=True)  # fmt: skip
    assert len(rerun.calls) == 5


def test_requested_agents_and_a_missing_task_give_error_rows_not_exceptions(setup, tmp_path):
    archive, store, data, _, scores = setup
    summary = run_masking_step(archive, store, scores, allow_code_execution=True, agents=["linear"], rerun=StandInRerun(),
                               data=data, manifests=tmp_path / "no_manifests")  # fmt: skip
    results = read_masking_results(scores / MASKING_FILE)
    assert list(results["agent"]) == ["linear"] and summary.n_errors == 1
    assert results["status"].tolist() == ["error"] and "toy_hourly_local" in results["reason"][0]


def test_unsafe_run_files_are_an_error_row(setup, tmp_path):
    archive, store, data, manifests, scores = setup
    outside = tmp_path / "outside.py"
    outside.write_text("secret")
    target = archive / "main" / "causal" / TASK / "rep0" / "code" / "v0001" / "evil.py"
    target.symlink_to(outside)
    run_masking_step(
        archive,
        store,
        scores,
        allow_code_execution=True,
        rerun=StandInRerun(),
        data=data,
        manifests=manifests,
    )
    results = read_masking_results(scores / MASKING_FILE).set_index("agent")
    assert results.at["causal", "status"] == "error"
    assert "outside" in results.at["causal", "reason"] or "unsafe" in results.at["causal", "reason"]
    assert results.at["peeker", "status"] == "violation"  # the other runs are still tested


def test_cache_key_covers_every_input(setup):
    archive, *_ = setup
    run_dir = archive / "main" / "peeker" / TASK / "rep0"
    base = dict(selected_version="v0001", submission_sha256="a", task_hash="t", seed=0,
                threshold=0.001)  # fmt: skip
    key = run_cache_key(run_dir, **base)
    assert key == run_cache_key(run_dir, **base)
    for change in ({"submission_sha256": "b"}, {"task_hash": "u"}, {"seed": 1},
                   {"threshold": 0.002}, {"selected_version": None}):  # fmt: skip
        assert run_cache_key(run_dir, **{**base, **change}) != key, change
    (run_dir / "run.json").write_text("{}")
    assert run_cache_key(run_dir, **base) != key


def test_bad_jobs_is_a_usage_error(setup):
    archive, store, _, _, scores = setup
    with pytest.raises(AutomdError) as info:
        run_masking_step(archive, store, scores, allow_code_execution=True, rerun=StandInRerun(),
                         jobs=0)  # fmt: skip
    assert info.value.code == "usage"


# ---------------------------------------------------------------------------------------------
# the results file


def _minimal(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(REQUIRED_COLUMNS))


GOOD = [
    {"run_id": "main/aide/seq/rep0", "status": "violation", "flagged": "true",
     "fraction_all_rows": "0.25", "fraction_last_rows": "0"},
    {"run_id": "main/aide/seq/rep1", "status": "error", "flagged": "",
     "fraction_all_rows": "", "fraction_last_rows": "nan"},
]  # fmt: skip


def test_read_minimal_csv_fills_the_run_key_from_run_id(tmp_path):
    path = tmp_path / "m.csv"
    _minimal(GOOD).to_csv(path, index=False)
    got = read_masking_results(path)
    assert list(got.columns[: len(MASKING_COLUMNS)]) == list(MASKING_COLUMNS)
    assert got["experiment"].tolist() == ["main", "main"]
    assert got["agent"].tolist() == ["aide", "aide"] and got["task"].tolist() == ["seq", "seq"]
    assert got["rep"].tolist() == [0, 1]
    assert got["flagged"].tolist()[0] is True and pd.isna(got["flagged"][1])
    assert got["fraction_all_rows"][0] == 0.25 and math.isnan(got["fraction_all_rows"][1])


def test_fixture_masking_csv_is_valid_and_summarised_as_designed():
    results = read_masking_results(FIXTURE / "masking.csv")
    summary = realtime.masking_summary(results).set_index(["agent", "task"])
    total = summary.loc[(realtime.ALL, realtime.ALL)]
    design = pd.read_csv(FIXTURE / "masking.csv", keep_default_na=False)  # raw text, no parsing
    assert total["n_runs"] == len(design)
    assert total["n_flagged"] == (design["status"] == "violation").sum()
    assert total["n_errors"] == (design["status"] == "error").sum()
    assert total["n_tested"] == total["n_runs"] - total["n_errors"]


@pytest.mark.parametrize(
    "column, value, message",
    [
        ("status", "violated", "status must be one of"),
        ("flagged", "yes", "true/false"),
        ("flagged", "false", "flagged must be true exactly"),
        ("fraction_all_rows", "1.5", "fraction in [0, 1]"),
        ("fraction_all_rows", "", "fraction in [0, 1]"),
        ("fraction_last_rows", "lots", "must hold numbers"),
        ("fraction_last_rows", "inf", "must hold numbers"),
        ("run_id", "aide-rep0", "run_id must look like"),
        ("run_id", "main/aide/seq/rep1", "run_id must be unique"),
    ],
)
def test_malformed_results_name_the_file_column_and_row(tmp_path, column, value, message):
    rows = [dict(r) for r in GOOD]
    rows[0][column] = value
    path = tmp_path / "m.csv"
    _minimal(rows).to_csv(path, index=False)
    with pytest.raises(MaskingResultsError) as info:
        read_masking_results(path)
    err = info.value
    assert message in err.message and err.path == path and err.fix
    assert err.code == "masking.results_invalid"
    assert err.location in ("rows 2", "rows 3")


def test_missing_column_disagreeing_key_and_bad_counts(tmp_path):
    path = tmp_path / "m.csv"
    _minimal(GOOD).drop(columns="flagged").to_csv(path, index=False)
    with pytest.raises(MaskingResultsError, match="missing column"):
        read_masking_results(path)
    _minimal(GOOD).assign(agent=["aide", "codex"]).to_csv(path, index=False)
    with pytest.raises(MaskingResultsError, match="'agent' disagrees with run_id") as info:
        read_masking_results(path)
    assert info.value.location == "rows 3"
    _minimal(GOOD).assign(n_patients=["3", "-1"]).to_csv(path, index=False)
    with pytest.raises(MaskingResultsError, match="must not be negative"):
        read_masking_results(path)
    _minimal(GOOD).assign(n_patients=["3.5", ""]).to_csv(path, index=False)
    with pytest.raises(MaskingResultsError, match="must hold integers"):
        read_masking_results(path)


def test_missing_and_unreadable_files(tmp_path):
    assert read_masking_results(tmp_path / "absent.parquet", missing_ok=True) is None
    with pytest.raises(MaskingResultsError) as info:
        read_masking_results(tmp_path / "absent.parquet")
    assert info.value.code == "masking.results_missing"
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(MaskingResultsError, match="cannot read"):
        read_masking_results(bad)
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(MaskingResultsError):
        read_masking_results(tmp_path / "dir.csv", missing_ok=True)


_statuses = st.sampled_from(["violation", "below_threshold", "no_change", "error"])


@st.composite
def result_rows(draw):
    n = draw(st.integers(0, 6))
    rows = []
    for i in range(n):
        status = draw(_statuses)
        tested = status != "error"
        kept = draw(st.integers(1, 500))
        changed = draw(st.integers(0, kept)) if status != "no_change" else 0
        rows.append(
            {
                "run_id": f"main/{draw(st.sampled_from(['aide', 'ais']))}/t{i % 2}/rep{i}",
                "status": status,
                "flagged": (status == "violation") if tested else None,
                "fraction_all_rows": changed / kept if tested else math.nan,
                "fraction_last_rows": draw(st.floats(0, 1)) if tested else math.nan,
                "n_retained_rows": kept if tested else None,
                "n_changed_rows": changed if tested else None,
                "reproduces_original": draw(st.sampled_from([True, False, None])),
                "reason": None if tested else draw(st.text(max_size=20)),
            }
        )
    return rows


@pytest.mark.slow
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=result_rows())
def test_write_read_round_trip_and_summary_counts(tmp_path, rows):
    path = tmp_path / "r.parquet"
    frame = pd.DataFrame(rows)
    for name in ("experiment", "agent", "task", "rep"):
        if len(frame):
            frame[name] = (
                frame["run_id"]
                .str.split("/")
                .str[["experiment", "agent", "task", "rep"].index(name)]
            )
    if len(frame):
        frame["rep"] = frame["rep"].str[3:].astype(int)
    write_masking_results(frame.reindex(columns=list(MASKING_COLUMNS)), path)
    again = read_masking_results(path)
    assert list(again["run_id"]) == sorted(r["run_id"] for r in rows)
    by_id = {r["run_id"]: r for r in rows}
    for record in again.to_dict("records"):
        want = by_id[record["run_id"]]
        assert record["status"] == want["status"]
        for name in ("fraction_all_rows", "fraction_last_rows"):
            assert (math.isnan(want[name]) and math.isnan(record[name])) or record[name] == want[
                name
            ]
    # the same rows as CSV text (floats written as repr) read back to the same values
    csv = tmp_path / "r.csv"
    frame.reindex(columns=list(REQUIRED_COLUMNS)).to_csv(
        csv, index=False, float_format=lambda x: repr(float(x))
    )
    from_csv = read_masking_results(csv)
    for name in ("fraction_all_rows", "fraction_last_rows"):
        assert from_csv[name].equals(again[name]), name
    assert from_csv["flagged"].equals(again["flagged"])
    summary = realtime.masking_summary(again).set_index(["agent", "task"])
    total = summary.loc[(realtime.ALL, realtime.ALL)]
    statuses = [r["status"] for r in rows]
    assert total["n_runs"] == len(rows)
    for status, column in (("violation", "n_flagged"), ("below_threshold", "n_below_threshold"),
                           ("no_change", "n_no_change"), ("error", "n_errors")):  # fmt: skip
        assert total[column] == statuses.count(status)
    assert total["n_not_reproduced"] == sum(
        r["reproduces_original"] is False and r["status"] != "error" for r in rows
    )
    tested = [r["fraction_all_rows"] for r in rows if r["status"] != "error"]
    assert (not tested and math.isnan(total["max_fraction_all_rows"])) or total[
        "max_fraction_all_rows"
    ] == max(tested)
    # per-agent rows add up to the total
    agents = summary.xs(realtime.ALL, level="task").drop(index=realtime.ALL, errors="ignore")
    assert agents["n_runs"].sum() == len(rows)


def test_write_is_atomic_and_deterministic(tmp_path):
    frame = read_masking_results(FIXTURE / "masking.csv")
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    write_masking_results(frame, a)
    write_masking_results(frame.iloc[::-1], b)  # row order does not matter
    assert a.read_bytes() == b.read_bytes()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_masking_runs_orders_by_agent_task_and_rep():
    results = pd.DataFrame(
        {
            "run_id": ["m/b/t/rep10", "m/b/t/rep2", "m/a/t/rep0"],
            "agent": ["b", "b", "a"],
            "task": ["t", "t", "t"],
            "rep": [10, 2, 0],
            "status": ["no_change", "violation", "error"],
            "flagged": [False, True, None],
            "fraction_all_rows": [0.0, 0.5, np.nan],
            "fraction_last_rows": [0.0, 0.1, np.nan],
        }
    )
    table = realtime.masking_runs(results)
    assert list(table.columns) == catalog.table("masking_runs").named
    assert table["run_id"].tolist() == ["m/a/t/rep0", "m/b/t/rep2", "m/b/t/rep10"]
    with pytest.raises(AutomdError):
        realtime.masking_runs(results.drop(columns="status"))
