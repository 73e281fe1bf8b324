"""Rendered training scripts: they are real, standalone code; tags point at the right lines;
change types and codebook answers derived from configs are right by hand."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from automd_analysis.tasks import get_task
from automd_demo.harness import configs as C
from automd_demo.harness import menus
from automd_demo.harness.lab import Lab
from automd_demo.harness.render import render, zoo_closure
from automd_demo.harness.script_runner import Memo, run_script
from automd_demo.harness.taskdata import load_profile
from automd_demo.harness.toy import make_toy_tasks


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    root, man = make_toy_tasks(tmp_path_factory.mktemp("toy_render"))
    profiles = {t: load_profile(get_task(t, root, man)) for t in ("toy_survival", "toy_label", "toy_hourly_local")}  # fmt: skip
    return root, man, profiles


def test_zoo_closure_pulls_in_helpers_in_source_order():
    funcs = zoo_closure({"choose_alarm_threshold"})
    assert funcs == ["sepsis_utility_score", "choose_alarm_threshold"]
    assert "holdout_split" in zoo_closure({"patient_splits"})


def test_script_contains_only_used_functions_and_their_imports(toy):
    _, _, profiles = toy
    cfg = C.base_config("classification", "gbdt")
    text = render(cfg, profiles["toy_label"], ["x"]).text
    assert "def fit_gbdt(" in text and "def fit_logistic(" not in text
    assert "from sklearn.ensemble import HistGradientBoostingClassifier" in text
    assert "LogisticRegression" not in text.split("def ")[0]  # no unused import at the top
    compile(text, "train.py", "exec")


def test_tags_point_at_the_lines_that_implement_the_practice(toy):
    _, _, profiles = toy
    cfg = C.base_config("classification", "gbdt")
    cfg["members"].append(C.member("logistic"))
    cfg["combine"] = "rank_mean"
    cfg["imbalance"] = "class_weight"
    cfg["calibration"] = "isotonic"
    cfg["subgroup_check"] = True
    cfg["validation"] = {"design": "kfold", "k": 3, "fraction": 0.2}
    script = render(C.normalise(cfg), profiles["toy_label"], ["x"])
    lines = script.text.split("\n")

    def at(tag):
        return [lines[i - 1] for i in script.tags[tag]]

    assert all("rank_average" in t for t in at("ranks"))
    assert all("balanced_weights" in t for t in at("imbalance:class_weight"))
    assert any("fit_isotonic" in t for t in at("calibration"))
    assert all("kfold_splits" in t for t in at("validation:kfold_cv"))
    assert any("fit_gbdt(" in t for t in at("family:gbdt"))
    assert any("fit_logistic(" in t for t in at("family:linear"))
    assert any("age_sex_groups" in t for t in at("subgroup"))


def test_survival_censoring_tags(toy):
    _, _, profiles = toy
    cfg = C.base_config("survival", "cox", scale=True)
    cfg["members"][0]["censoring"] = "censored_as_death"
    cfg["members"].append(C.member("discrete_gbdt", weight=0.5, censoring="censored_as_survivor"))
    script = render(C.normalise(cfg), profiles["toy_survival"], ["x"])
    lines = script.text.split("\n")
    death = [lines[i - 1] for i in script.tags["censoring:censored_as_death"]]
    assert any("np.ones_like(events[fit_rows])" in t for t in death)
    surv = [lines[i - 1] for i in script.tags["censoring:censored_as_survivor"]]
    assert any("'censored_as_survivor'" in t for t in surv)


@pytest.mark.slow
def test_standalone_script_equals_in_process_execution(toy, tmp_path):
    """`python train.py <task_dir> out.csv` writes exactly what the harness archived."""
    root, man, profiles = toy
    profile = profiles["toy_hourly_local"]
    cfg = C.base_config("sequential", "gbdt")
    cfg["features"]["rolling"] = 6
    cfg["threshold"] = "tuned"
    cfg["validation"] = {"design": "target_site", "k": 5, "fraction": 0.2}
    cfg = C.normalise(cfg)
    task = get_task("toy_hourly_local", root, man)
    script, result = Lab(task, profile, Memo(None)).execute(cfg, ["header"], "v0001")
    assert result.ok, result.log
    path = tmp_path / "train.py"
    path.write_text(script.text)
    out = tmp_path / "submission.csv"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    subprocess.run(
        [sys.executable, str(path), str(profile.task_dir), str(out)],
        check=True,
        capture_output=True,
        timeout=300,
        env=env,
    )
    assert out.read_bytes() == result.csv


def test_fit_cache_does_not_change_outputs(toy):
    root, man, profiles = toy
    profile = profiles["toy_survival"]
    cfg = C.base_config("survival", "discrete_gbdt")
    cfg["members"].append(C.member("cox", weight=0.5))
    cfg["features"]["impute"] = "median"
    cfg["features"]["scale"] = True
    script = render(C.normalise(cfg), profile, ["x"])
    task = get_task("toy_survival", root, man)
    lab = Lab(task, profile, Memo(None))
    data = lab._data(script, "code/v0001/train.py")
    plain = run_script(script, "code/v0001/train.py", data, use_fit_cache=False)
    cached1 = run_script(script, "code/v0001/train.py", data)
    cached2 = run_script(script, "code/v0001/train.py", data)  # served from the cache
    assert plain.csv == cached1.csv == cached2.csv
    assert plain.validation == cached2.validation


def test_crashing_scripts_record_real_exceptions(toy):
    root, man, profiles = toy
    profile = profiles["toy_label"]
    task = get_task("toy_label", root, man)
    lab = Lab(task, profile, Memo(None))
    cfg = C.base_config("classification", "logistic", impute="none")  # NaN into LogisticRegression
    _, result = lab.execute(cfg, ["x"], "v0003")
    assert not result.ok and result.error.startswith("ValueError")
    assert 'File "code/v0003/train.py"' in result.log and "in run" in result.log
    fixed, text = menus.debug(cfg, profile, result.error)
    assert fixed["features"]["impute"] == "median" and "missing values" in text
    _, ok = lab.execute(fixed, ["x"], "v0004")
    assert ok.ok


def test_memo_replays_logs_under_the_new_path(toy, tmp_path):
    root, man, profiles = toy
    profile = profiles["toy_label"]
    task = get_task("toy_label", root, man)
    memo = Memo(tmp_path / "memo")
    cfg = C.base_config("classification", "gbdt")
    cfg["features"]["bug"] = "typo_column"
    _, first = Lab(task, profile, memo).execute(cfg, ["a"], "v0002")
    _, again = Lab(task, profile, memo).execute(cfg, ["b"], "v0009")
    assert memo.hits == 1
    assert 'File "code/v0009/train.py"' in again.log
    assert again.log == first.log.replace("v0002", "v0009")


# --------------------------------------------------------------------------------------------
# ground truth derived from configs
# --------------------------------------------------------------------------------------------


def test_change_categories_by_hand():
    a = C.base_config("classification", "gbdt")
    b = C.clone(a)
    b["members"][0]["params"]["max_iter"] = 150
    assert C.change_categories(a, b) == ["hyperparameter_tuning"]
    c = C.clone(a)
    c["members"].append(C.member("logistic", weight=0.5))
    assert C.change_categories(a, c) == ["ensembling", "model_family"]
    d = C.clone(a)
    d["features"]["missing_indicators"] = True
    d["calibration"] = "platt"
    assert C.change_categories(a, d) == ["calibration", "feature_engineering"]
    e = C.clone(a)
    e["subgroup_check"] = True
    assert C.change_categories(a, e) == ["other"]
    assert C.change_categories(a, C.clone(a)) == []


def test_practices_by_hand():
    cfg = C.base_config("classification", "gbdt")
    cfg["imbalance"] = "class_weight"
    got = C.practices(cfg, kind="classification", external_with_shift=False, has_missing=True)
    assert got["class_imbalance_handling"] == "class_weight"
    assert got["recalibration_after_imbalance"] == "no"
    assert got["ensembling"] == ["single_model"]
    assert got["validation_design"] == ["single_holdout"]
    assert got["censoring_handling"] == "na" and got["validation_under_shift"] == "na"
    cfg["calibration"] = "prevalence"
    cfg["seeds"] = 3
    got = C.practices(cfg, kind="classification", external_with_shift=False, has_missing=True)
    assert got["recalibration_after_imbalance"] == "yes"
    assert got["probability_calibration"] == "yes"
    assert got["ensembling"] == ["seed_fold_average"]
    surv = C.base_config("survival", "cox")
    surv["members"].append(C.member("discrete_gbdt", weight=0.25, censoring="censored_as_death"))
    got = C.practices(surv, kind="survival", external_with_shift=False, has_missing=False)
    assert got["censoring_handling"] == "censored_as_death"
    assert got["affected_weight"] == pytest.approx(0.2)  # 0.25 / (1 + 0.25)
    assert got["class_imbalance_handling"] == "na" and got["missingness_features"] == "na"
    seq = C.base_config("sequential", "gbdt")
    seq["validation"] = {"design": "target_site", "k": 5, "fraction": 0.2}
    got = C.practices(seq, kind="sequential", external_with_shift=True, has_missing=True)
    assert got["validation_under_shift"] == "yes" and got["validation_design"] == ["group_split"]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1), task=st.sampled_from(["toy_survival", "toy_label", "toy_hourly_local"]),  # fmt: skip
       steps=st.integers(1, 6), llm=st.sampled_from(menus.LLMS),
       agent=st.sampled_from(["autoresearch", "codex", "aide", "aiscientist"]))  # fmt: skip
def test_menu_walks_give_renderable_configs_with_consistent_changes(toy, seed, task, steps, llm, agent):  # fmt: skip
    """Any sequence of proposals yields a normalised config that renders to valid Python, and the
    change categories are non-empty exactly when the config changed."""
    _, _, profiles = toy
    profile = profiles[task]
    rng = np.random.default_rng(seed)
    cfg, _, _ = menus.draw_draft(agent, profile, rng)
    weights = menus.weights_for(llm, agent, None)
    for _ in range(steps):
        prop = menus.propose(cfg, profile, rng, weights)
        if prop is None:
            break
        new, items, texts = prop
        assert new == C.normalise(new)
        assert items and len(items) == len(texts)
        assert C.change_categories(cfg, new), items
        compile(render(new, profile, ["h"]).text, "train.py", "exec")
        cfg = new


def test_objectives_shift_propensities_towards_calibration():
    base = menus.weights_for("sim-llm-a", "autoresearch", None)
    brier = menus.weights_for("sim-llm-a", "autoresearch", "brier")
    both = menus.weights_for("sim-llm-a", "autoresearch", "auroc+ece")
    assert brier["calibrate"] > 4 * base["calibrate"] and both["calibrate"] > brier["calibrate"]
    assert brier["rank_average"] < 0.1 * base["rank_average"]
    # the simulated LLMs differ in calibration habits
    a, c = (menus.weights_for(m, "codex", None) for m in ("sim-llm-a", "sim-llm-c"))
    assert a["rank_average"] > 10 * c["rank_average"] and c["calibrate"] > 5 * a["calibrate"]
    # only the faulty agent breaks submission writers; only AIDE leaks future hours
    for agent in ("autoresearch", "codex", "aide"):
        assert menus.weights_for("sim-llm-a", agent, None)["output_refactor"] == 0
    for agent in ("autoresearch", "codex", "aiscientist"):
        assert menus.weights_for("sim-llm-a", agent, None)["whole_stay_max"] == 0


def test_agents_cannot_open_hidden_files(toy):
    from automd_analysis.errors import DataError
    from automd_demo.harness.taskdata import public_path

    root, man, _ = toy
    task = get_task("toy_label", root, man)
    assert public_path(task, "train").name == "train.csv"
    with pytest.raises(DataError) as err:
        public_path(task, "labels")
    assert err.value.code == "harness.hidden_file"
