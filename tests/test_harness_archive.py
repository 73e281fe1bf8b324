"""Integration: a tiny scripted-agent archive on the toy tasks, checked against docs/archive.md,
the archive reader, submission validation and the harness's own ground truth."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from automd_analysis.archive import open_archive
from automd_analysis.errors import ArchiveError
from automd_analysis.submissions import paper_category, validate_submission
from automd_analysis.tasks import get_task
from automd_demo.harness import configs as C
from automd_demo.harness.build import RunSpec, build_archive
from automd_demo.harness.lab import Lab
from automd_demo.harness.rerun import rerun_submission
from automd_demo.harness.script_runner import Memo
from automd_demo.harness.taskdata import load_profile
from automd_demo.harness.toy import make_toy_tasks

#: Integration tests (CLI, end to end, demo cohorts): `make test-fast` skips them.
pytestmark = pytest.mark.slow

AGENTS = ("autoresearch", "codex", "aide", "aiscientist")
TASKS = ("toy_survival", "toy_label", "toy_hourly_local")


def _specs() -> list[RunSpec]:
    specs = [RunSpec("main", a, "sim-llm-a", t, 0) for a in AGENTS for t in TASKS]
    specs.append(RunSpec("main", "baseline", "none", "toy_hourly_local", 0))
    specs.append(RunSpec("objectives", "autoresearch", "sim-llm-a", "toy_label", 0, "brier"))
    specs.append(RunSpec("llm", "codex", "sim-llm-c", "toy_label", 3))
    return specs


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    root, man = make_toy_tasks(tmp_path_factory.mktemp("toy"))
    return root, man


@pytest.fixture(scope="module")
def archive(toy, tmp_path_factory):
    root, man = toy
    out = tmp_path_factory.mktemp("arch") / "tiny"
    build_archive(out, data=root, manifests=man, specs=_specs(), jobs=1, size="tiny")
    return out


def _runs(archive: Path):
    return sorted(p.parent for p in archive.glob("*/*/*/rep*/run.json"))


def test_layout_matches_docs_archive_md(archive):
    meta = archive / "archive.yaml"
    assert meta.is_file()
    runs = _runs(archive)
    assert len(runs) == len(_specs())
    for run in runs:
        doc = json.loads((run / "run.json").read_text())
        exp, agent, task, rep = run.relative_to(archive).parts
        assert (doc["experiment"], doc["agent"], doc["task"], f"rep{doc['rep']}") == (
            exp,
            agent,
            task,
            rep,
        )
        assert (run / "journal.md").is_file() and (run / "annotations.json").is_file()
        selected = doc["selection"]["selected_version"]
        versions = sorted(p.name for p in (run / "versions").iterdir())
        assert versions, run
        for v in versions:
            meta_v = json.loads((run / "versions" / v / "meta.json").read_text())
            assert meta_v["version"] == v
            for rel in meta_v["code_files"]:
                assert (run / rel).is_file()
        if selected is not None:
            # the selected submission is a byte copy of the selected version's file
            assert (run / "submission.csv").read_bytes() == (
                run / "versions" / selected / "submission.csv"
            ).read_bytes()
        if agent != "baseline":
            # every development step is in run.json, the journal and the code directory
            steps = doc["steps"]
            assert [s["step"] for s in steps] == list(range(1, len(steps) + 1))
            journal = (run / "journal.md").read_text()
            for s in steps:
                assert f"step {s['step']} [code/v{s['step']:04d}/train.py]" in journal
                assert (run / "code" / f"v{s['step']:04d}" / "train.py").is_file()
                assert (s["version"] is not None) == s["ok"]


def test_archive_reader_accepts_every_run(archive):
    arch = open_archive(archive)
    runs = arch.runs()
    assert not arch.problems, arch.problems
    assert len(runs) == len(_specs())
    by_id = {r.run_id: r for r in runs}
    base = by_id["main/baseline/toy_hourly_local/rep0"]
    assert base.reference and base.search == "none"
    llm = by_id["llm/codex/toy_label/rep3"]
    assert llm.llm == "sim-llm-c"
    obj = by_id["objectives/autoresearch/toy_label/rep0"]
    assert obj.objective == "brier"
    for run in runs:
        assert run.annotations is not None


def test_tree_and_linear_selection_rules(archive):
    for run in _runs(archive):
        doc = json.loads((run / "run.json").read_text())
        if doc["agent"] == "baseline":
            continue
        metas = {p.parent.name: json.loads(p.read_text()) for p in run.glob("versions/*/meta.json")}
        sel = doc["selection"]["selected_version"]
        if doc["search"] == "linear":
            # final file: the last prediction file written
            last = max(metas, key=lambda v: (metas[v]["created_at"], v))
            assert sel == last
            assert all(m["parent"] is None for m in metas.values())
        elif doc["agent"] == "aide":
            scores = {v: m["reported_val_score"] for v, m in metas.items() if not m["faulty"]}
            assert metas[sel]["reported_val_score"] == max(scores.values())
        for m in metas.values():
            if m["parent"] is not None:
                assert m["parent"] in metas  # parents are versions that saved a file


def test_selected_submissions_validate_as_the_harness_expects(archive, toy):
    root, man = toy
    for run in _runs(archive):
        doc = json.loads((run / "run.json").read_text())
        task = get_task(doc["task"], root, man)
        facts = json.loads((run / "logs/harness.json").read_text()) if doc["agent"] != "baseline" else {"expected_valid": True}  # fmt: skip
        if doc["selection"]["selected_version"] is None:
            continue
        result = validate_submission(task, run / "submission.csv")
        assert result.valid == facts["expected_valid"], (run, result.reasons[:1])


def test_annotations_are_ground_truth_for_the_selected_code(archive, toy):
    root, man = toy
    seen_fields = set()
    for run in _runs(archive):
        doc = json.loads((run / "run.json").read_text())
        ann = json.loads((run / "annotations.json").read_text())
        sel = doc["selection"]["selected_version"]
        if sel is None or doc["agent"] == "baseline":
            continue
        config = json.loads((run / "code" / sel / "config.json").read_text())["config"]
        code = (run / "code" / sel / "train.py").read_text().split("\n")
        answers = ann["run"]
        seen_fields |= set(answers)
        # every cited line exists and shows the practice it is cited for
        for field, answer in answers.items():
            for ev in answer["evidence"]:
                path, line = ev.rsplit(":", 1)
                assert path == f"code/{sel}/train.py"
                text = code[int(line) - 1]
                if field == "averaged_ranks_as_probabilities":
                    assert "rank_average" in text
                if field == "class_imbalance_handling" and answer["value"] == "class_weight":
                    assert "balanced_weights" in text
                if field == "probability_calibration":
                    assert any(k in text for k in ("isotonic", "platt", "prevalence", "calibrator"))
        assert (answers["averaged_ranks_as_probabilities"]["value"] == "yes") == (
            config["combine"] == "rank_mean"
        )
        assert (answers["probability_calibration"]["value"] == "yes") == (
            config["calibration"] != "none"
        )
        families = sorted({C.FAMILY_CODE[m["family"]] for m in config["members"]})
        assert answers["model_families"]["value"] == families
        if answers["averaged_ranks_as_probabilities"]["value"] == "yes":
            sub = pd.read_csv(run / "submission.csv")
            _assert_rank_like(sub["PredictedProbability"].to_numpy())
    assert {"model_families", "censoring_handling", "validation_under_shift"} <= seen_fields


def _assert_rank_like(p: np.ndarray) -> None:
    """Averaged ranks are spread evenly over (0, 1]: the empirical CDF is close to uniform."""
    p = np.sort(p)
    n = len(p)
    uniform = np.arange(1, n + 1) / n
    assert p.max() <= 1 and p.min() > 0
    assert np.max(np.abs(p - uniform)) < 0.2


def test_rank_average_configs_submit_ranks(toy):
    root, man = toy
    task = get_task("toy_label", root, man)
    profile = load_profile(task)
    cfg = C.base_config("classification", "gbdt")
    cfg["members"].append(C.member("logistic"))
    cfg["features"]["impute"] = "median"
    cfg["combine"] = "rank_mean"
    cfg["threshold"] = "tuned"
    _, result = Lab(task, profile, Memo(None)).execute(C.normalise(cfg), ["t"], "v0001")
    assert result.ok, result.log
    sub = pd.read_csv(pd.io.common.BytesIO(result.csv))
    _assert_rank_like(sub["PredictedProbability"].to_numpy())
    # ... which keeps AUROC but not calibration: the event rate is ~30%, the mean rank ~0.5
    assert sub["PredictedProbability"].mean() == pytest.approx(0.5, abs=0.03)


@pytest.mark.parametrize(
    ("task_id", "bug", "category"),
    [
        ("toy_survival", "grid_index_headers", "malformed survival columns"),
        ("toy_survival", "drop_time_zero", "malformed survival columns"),
        ("toy_label", "row_position_ids", "incorrect patient identifiers"),
        ("toy_label", "batch_tail_dropped", "incorrect patient identifiers"),
        ("toy_hourly_local", "dropna_first_hours", "incorrect patient-hour rows"),
    ],
)
def test_output_bugs_are_invalid_with_the_intended_reason(toy, tmp_path, task_id, bug, category):
    root, man = toy
    task = get_task(task_id, root, man)
    profile = load_profile(task)
    family = {"survival": "cox", "classification": "gbdt", "sequential": "gbdt"}[profile.kind]
    cfg = C.base_config(profile.kind, family, scale=family == "cox")
    cfg["output_bug"] = bug
    if profile.kind != "survival":
        cfg["threshold"] = "fixed"
    lab = Lab(task, profile, Memo(None))
    _, result = lab.execute(C.normalise(cfg), ["t"], "v0001")
    assert result.ok, result.log
    path = tmp_path / "submission.csv"
    path.write_bytes(result.csv)
    check = validate_submission(task, path)
    assert not check.valid
    assert paper_category(check.reasons[0].code, profile.kind, "patients") == category
    # the same config without the bug is valid
    cfg["output_bug"] = None
    _, clean = lab.execute(C.normalise(cfg), ["t"], "v0002")
    path.write_bytes(clean.csv)
    assert validate_submission(task, path).valid


def test_rerun_reproduces_the_selected_submission(archive, toy, tmp_path):
    root, man = toy
    checked = 0
    for run in _runs(archive):
        doc = json.loads((run / "run.json").read_text())
        if doc["task"] != "toy_hourly_local" or doc["selection"]["selected_version"] is None:
            continue
        task = get_task(doc["task"], root, man)
        out = rerun_submission(
            run, task.path("test_features"), tmp_path / f"{doc['agent']}.csv", root, man
        )
        assert out.read_bytes() == (run / "submission.csv").read_bytes(), run
        checked += 1
    assert checked == 5  # four agents + the baseline


def test_rerun_refuses_a_tampered_script(archive, toy, tmp_path):
    root, man = toy
    run = archive / "main/autoresearch/toy_hourly_local/rep0"
    copy = tmp_path / "run"
    import shutil

    shutil.copytree(run, copy)
    sel = json.loads((copy / "run.json").read_text())["selection"]["selected_version"]
    script = copy / "code" / sel / "train.py"
    script.write_text(script.read_text().replace("def run(data):", "def run(data):  # edited"))
    with pytest.raises(ArchiveError) as err:
        rerun_submission(copy, get_task("toy_hourly_local", root, man).path("test_features"),
                         tmp_path / "x.csv", root, man)  # fmt: skip
    assert err.value.code == "archive.rerun_mismatch"


def _masked(test: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Paper App. G masking: keep the first min(n, max(4, floor(u n))) hours of each patient."""
    rng = np.random.default_rng(seed)
    parts = []
    for _, rows in test.groupby("patient_id", sort=True):
        n = len(rows)
        keep = min(n, max(4, int(np.floor(rng.uniform(0.4, 0.9) * n))))
        parts.append(rows.sort_values("ICULOS").iloc[:keep])
    return pd.concat(parts)


@pytest.mark.parametrize("violates", [True, False])
def test_masking_flags_whole_stay_features_only(toy, tmp_path, violates):
    """A whole-stay maximum changes alarms at retained hours when later hours are removed; the
    causal features do not."""
    root, man = toy
    task = get_task("toy_hourly_local", root, man)
    profile = load_profile(task)
    cfg = C.base_config("sequential", "gbdt")
    cfg["threshold"] = "tuned"
    cfg["features"]["rolling"] = 6
    cfg["features"]["whole_stay_max"] = violates
    cfg = C.normalise(cfg)
    masked_path = tmp_path / "masked.csv"
    _masked(pd.read_csv(task.path("test_features"))).to_csv(masked_path, index=False)
    _, full = Lab(task, profile, Memo(None)).execute(cfg, ["t"], "v0001")
    _, masked = Lab(task, profile, Memo(None), test_features=masked_path).execute(cfg, ["t"], "v0001")  # fmt: skip
    a = pd.read_csv(pd.io.common.BytesIO(full.csv))
    b = pd.read_csv(pd.io.common.BytesIO(masked.csv))
    merged = b.merge(a, on=["patient_id", "ICULOS"], suffixes=("_masked", "_full"))
    assert len(merged) == len(b)
    changed = (merged["PredictedLabel_masked"] != merged["PredictedLabel_full"]).mean()
    probs = np.abs(merged["PredictedProbability_masked"] - merged["PredictedProbability_full"])
    if violates:
        assert probs.max() > 0
    else:
        assert changed == 0 and probs.max() == 0


def _tree_bytes(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_same_command_gives_a_byte_identical_archive(toy, archive, tmp_path):
    """Rebuilding (here with two worker processes and a cold memo) changes no byte."""
    root, man = toy
    specs = [s for s in _specs() if s.task == "toy_label" or s.agent == "baseline"]
    again = tmp_path / "again"
    build_archive(again, data=root, manifests=man, specs=specs, jobs=2, size="tiny")
    first = _tree_bytes(archive)
    second = _tree_bytes(again)
    for rel, digest in second.items():
        if rel == "archive.yaml":
            continue
        assert first[rel] == digest, rel


def test_refuses_to_replace_a_foreign_directory(tmp_path, toy):
    root, man = toy
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(ArchiveError) as err:
        build_archive(foreign, data=root, manifests=man, specs=_specs()[:1], size="tiny")
    assert err.value.code == "archive.exists"
    assert (foreign / "notes.txt").read_text() == "keep me"
