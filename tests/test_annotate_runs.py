"""``annotate_archive``: files outside the archive, validation on reading back, cache, bad input,
determinism, and the choice between archived and generated annotations."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from automd_analysis.annotate.runs import ANNOTATOR, annotate_archive
from automd_analysis.archive import open_archive
from automd_analysis.archive.generated import (
    apply_annotations,
    choose_annotations,
    load_generated_annotations,
)
from automd_analysis.codebook import FORENSICS, Annotations
from automd_analysis.errors import AutomdError
from automd_analysis.tasks import load_manifests

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SMALL = FIXTURES / "small"
CORPUS = FIXTURES / "annotate_scripts"


def _kit():
    name = "automd_test_fixture_kit"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, FIXTURES / "make_small_fixture.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


kit = _kit()
MANIFESTS = load_manifests(SMALL / "manifests")


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _outputs(out: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and ".cache" not in p.parts
    }


def _probabilities(n: int, seed: int, ranks: bool = False) -> bytes:
    rng = np.random.default_rng(seed)
    p = rng.beta(1, 6, n)
    if ranks:
        p = (np.argsort(np.argsort(p)) + 1) / n
    rows = [[f"e{i}", f"{x:.6f}"] for i, x in enumerate(p)]
    return kit.csv_bytes(["encounter_id", "PredictedProbability"], rows)


def _add_run(root: Path, rep: int, files: dict[str, str], submission: bytes | None, task="fx_cls"):
    run_dir = kit.write_run(
        root, "main", "alpha", task, rep, selection={"rule": "final_file", "selected_version": "v1"}
    )
    code = [f"code/v1/{name}" for name in files]
    for name, text in files.items():
        path = run_dir / "code" / "v1" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text) if isinstance(text, str) else path.write_bytes(text)
    kit.write_version(run_dir, "v1", kit.T0 + timedelta(minutes=5), 1, submission, code_files=code)
    if submission is not None:
        (run_dir / "submission.csv").write_bytes(submission)
    return run_dir


@pytest.fixture
def arch(tmp_path: Path) -> Path:
    """Three classification runs whose code comes from the hand-written corpus."""
    root = tmp_path / "arch"
    kit.write_archive_yaml(root, experiments={"main": "main experiment"})
    rank = (CORPUS / "aide_rank_blend" / "solution.py").read_text()
    spw = (CORPUS / "aide_xgb_spw_isotonic" / "solution.py").read_text()
    project = CORPUS / "codex_project_blend_platt"
    files = {
        p.relative_to(project).as_posix(): p.read_text() for p in sorted(project.rglob("*.py"))
    }
    _add_run(root, 0, {"solution.py": rank}, _probabilities(120, 0, ranks=True))
    _add_run(root, 1, {"solution.py": spw}, _probabilities(120, 1))
    _add_run(root, 2, files, _probabilities(120, 2))
    return root


def _annotate(root: Path, out: Path, **kw):
    return annotate_archive(open_archive(root), out, manifests=MANIFESTS, **kw)


def test_writes_valid_annotations_outside_the_archive(arch, tmp_path):
    before = _tree(arch)
    out = tmp_path / "generated"
    summary = _annotate(arch, out)
    assert _tree(arch) == before  # the archive is never written
    assert summary.n_runs == summary.n_written == 3 and summary.problems == []
    archive = open_archive(arch)
    generated, problems = load_generated_annotations(archive, out)
    assert problems == [] and set(generated) == {r.run_id for r in archive.runs()}
    rank = generated["main/alpha/fx_cls/rep0"]
    assert rank.annotator == ANNOTATOR
    assert rank.answers["averaged_ranks_as_probabilities"].value == "yes"
    assert rank.answers["censoring_handling"].value == "na"  # fx_cls is a classification task
    assert rank.forensics["ranks_as_probabilities"].value == "yes"
    assert set(rank.forensics) == set(FORENSICS)
    assert rank.forensics["ranks_as_probabilities"].evidence == ("submission.csv",)
    ev = rank.answers["averaged_ranks_as_probabilities"].evidence
    assert ev and all(e.startswith("code/v1/solution.py:") for e in ev)
    spw = generated["main/alpha/fx_cls/rep1"]
    assert spw.answers["recalibration_after_imbalance"].value == "yes"
    assert spw.forensics["ranks_as_probabilities"].value == "no"
    project = generated["main/alpha/fx_cls/rep2"]
    assert project.answers["missingness_features"].value == "na"  # fx_cls is not an EHR task
    assert project.answers["ensembling"].value == ("model_blend", "seed_fold_average")
    calibration = project.answers["probability_calibration"]
    assert calibration.value == "yes"
    assert all(e.startswith("code/v1/train.py:") for e in calibration.evidence)


def test_refuses_an_output_directory_inside_the_archive(arch):
    with pytest.raises(AutomdError) as err:
        _annotate(arch, arch / "generated")
    assert err.value.code == "annotate.out_inside_archive"


def test_parallel_and_repeated_runs_give_byte_identical_files(arch, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    _annotate(arch, one, jobs=1, cache=False)
    _annotate(arch, two, jobs=2)
    assert _outputs(one) == _outputs(two)
    again = _annotate(arch, two, jobs=1)
    assert again.n_cached == 3
    assert _outputs(one) == _outputs(two)


def test_cache_entries_use_the_umask_mode_and_corrupt_entries_are_recomputed(arch, tmp_path):
    out = tmp_path / "out"
    _annotate(arch, out)
    entries = [p for p in (out / ".cache").rglob("*.json")]
    assert entries
    umask = os.umask(0)
    os.umask(umask)
    assert all((p.stat().st_mode & 0o777) == (0o666 & ~umask) for p in entries)
    reference = _outputs(out)
    for p in entries:
        p.write_text("{not json")
    summary = _annotate(arch, out)
    assert summary.n_cached == 0
    assert _outputs(out) == reference


def test_bad_code_and_bad_submissions_are_problems_not_crashes(arch, tmp_path):
    outside = tmp_path / "secret.py"
    outside.write_text("import os\n")
    _add_run(arch, 3, {"train.py": "def broken(:\n    pass\n"}, _probabilities(60, 3))
    _add_run(arch, 4, {"train.py": b"\xff\xfe\x00binary\x00"}, b'\x00\x01garbage,,\n"unclosed')
    run5 = _add_run(arch, 5, {"train.py": "x = 1\n"}, None)
    (run5 / "code" / "v1" / "train.py").unlink()
    (run5 / "code" / "v1" / "train.py").symlink_to(outside)
    summary = _annotate(arch, tmp_path / "out")
    codes = {(p["run_id"], p["code"]) for p in summary.problems}
    assert ("main/alpha/fx_cls/rep3", "annotate.partial") in codes  # not parsed: noted
    # the reader refuses a code file that links outside the run; the annotator names it, and
    # with no other file the run has no code
    assert ("main/alpha/fx_cls/rep5", "annotate.no_code") in codes
    unsafe = [p for p in summary.problems if p["code"] == "archive.unsafe_path"]
    assert [(p["run_id"], p["path"]) for p in unsafe] == [
        ("main/alpha/fx_cls/rep5", "code/v1/train.py")
    ]
    refused = [p for p in open_archive(arch).problems if p.details["run_id"].endswith("rep5")]
    assert "archive.unsafe_path" in [p.code for p in refused]
    assert any(r == "main/alpha/fx_cls/rep4" for r, _ in codes)
    generated, problems = load_generated_annotations(open_archive(arch), tmp_path / "out")
    assert problems == []
    assert {"main/alpha/fx_cls/rep0", "main/alpha/fx_cls/rep1", "main/alpha/fx_cls/rep2"} <= set(
        generated
    )
    assert generated["main/alpha/fx_cls/rep3"].answers["validation_design"].value == ("none",)
    listed = json.loads((tmp_path / "out" / "problems.json").read_text())["problems"]
    assert len(listed) == len(summary.problems)
    # a run that can no longer be annotated loses its earlier file; the others are untouched
    kept = (tmp_path / "out" / "main/alpha/fx_cls/rep0/annotations.json").read_bytes()
    stale = tmp_path / "out" / "main/alpha/fx_cls/rep5/annotations.json"
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_text("{}")
    _annotate(arch, tmp_path / "out")
    assert not (tmp_path / "out" / "main/alpha/fx_cls/rep5/annotations.json").exists()
    assert (tmp_path / "out" / "main/alpha/fx_cls/rep0/annotations.json").read_bytes() == kept


def test_a_symlinked_code_file_is_named_and_the_versions_safe_files_are_read(arch, tmp_path):
    outside = tmp_path / "secret.py"
    outside.write_text("from sklearn.svm import SVC\n")
    main = "import helper\nfrom sklearn.linear_model import LogisticRegression\nm = LogisticRegression(class_weight='balanced')\n"
    run = _add_run(arch, 6, {"train.py": main, "helper.py": "x = 1\n"}, _probabilities(60, 6))
    (run / "code" / "v1" / "helper.py").unlink()
    (run / "code" / "v1" / "helper.py").symlink_to(outside)
    summary = _annotate(arch, tmp_path / "out")
    mine = [p for p in summary.problems if p["run_id"] == "main/alpha/fx_cls/rep6"]
    assert [(p["code"], p["path"]) for p in mine] == [("archive.unsafe_path", "code/v1/helper.py")]
    assert "resolves outside" in mine[0]["message"]
    generated, errors = load_generated_annotations(open_archive(arch), tmp_path / "out")
    assert errors == []
    answers = generated["main/alpha/fx_cls/rep6"].answers
    assert answers["class_imbalance_handling"].value == "class_weight"
    assert answers["class_imbalance_handling"].evidence == ("code/v1/train.py:3",)


def test_the_selected_versions_code_folder_is_its_code_when_meta_json_lists_none(arch, tmp_path):
    run = _add_run(arch, 7, {"solution.py": "from sklearn.svm import SVC\nm = SVC()\n"}, None)
    kit.write_version(run, "v1", kit.T0 + timedelta(minutes=5), 1, None, code_files=[])
    summary = _annotate(arch, tmp_path / "out")
    assert [p for p in summary.problems if p["run_id"].endswith("rep7")] == []
    generated, _ = load_generated_annotations(open_archive(arch), tmp_path / "out")
    assert generated["main/alpha/fx_cls/rep7"].answers["model_families"].value == ("other",)


@pytest.mark.parametrize("listed", [True, False], ids=["listed", "folder only"])
def test_an_aide_run_without_node_predictions_has_its_final_code_annotated(arch, tmp_path, listed):
    """Issue 20 finding 3: 20 nodes' code archived, no node saved predictions, the run's final
    file is version ``final`` with AIDE's ``best_solution.py``."""
    nodes = [f"n{i:02d}" for i in range(20)]
    steps = [
        {"step": i + 1, "ok": True, "reported_val_score": 0.7, "created_at": None,
         "version": None, "node": n, "parent": None}
        for i, n in enumerate(nodes)
    ]  # fmt: skip
    run = kit.write_run(
        arch, "main", "aide", "fx_cls", 0, search="tree", steps=steps,
        selection={"rule": "best_reported_val_non_faulty", "selected_version": "final"},
    )  # fmt: skip
    for n in nodes:
        (run / "code" / n).mkdir(parents=True)
        (run / "code" / n / "runfile.py").write_text("from sklearn.svm import SVC\nm = SVC()\n")
    best = "import lightgbm as lgb\nm = lgb.LGBMClassifier(is_unbalance=True)\n"
    (run / "code" / "final").mkdir()
    (run / "code" / "final" / "best_solution.py").write_text(best)
    code = ["code/final/best_solution.py"] if listed else []
    sub = _probabilities(60, 11)
    kit.write_version(run, "final", kit.T0 + timedelta(minutes=9), 20, sub, code_files=code)
    (run / "submission.csv").write_bytes(sub)
    summary = _annotate(arch, tmp_path / "out")
    assert [p for p in summary.problems if p["run_id"] == "main/aide/fx_cls/rep0"] == []
    generated, _ = load_generated_annotations(open_archive(arch), tmp_path / "out")
    answers = generated["main/aide/fx_cls/rep0"].answers
    assert answers["model_families"].value == ("gbdt",)
    assert answers["class_imbalance_handling"].evidence == ("code/final/best_solution.py:2",)


def test_no_code_says_what_was_looked_for_and_where(arch, tmp_path):
    run = _add_run(arch, 8, {}, _probabilities(60, 8))
    kit.write_version(run, "v1", kit.T0 + timedelta(minutes=5), 1, None, code_files=["run.R"])
    for node in ("n1", "n2"):
        (run / "code" / node).mkdir(parents=True)
        (run / "code" / node / "runfile.py").write_text("x = 1\n")
    summary = _annotate(arch, tmp_path / "out")
    (problem,) = [p for p in summary.problems if p["run_id"].endswith("rep8")]
    assert problem["code"] == "annotate.no_code"
    assert problem["path"] == "versions/v1/meta.json"
    message = problem["message"]
    assert "versions/v1/meta.json code_files lists no Python file (it lists run.R)" in message
    assert "there is no code/v1/" in message
    assert "code of 2 other version(s) or node(s) (n1, n2)" in message


def test_deeply_nested_code_is_partial_never_an_internal_error(arch, tmp_path):
    deep = "from sklearn.svm import SVC\nm = SVC()\nx = " + "+".join(["y"] * 900) + "\n"
    chain = "x = a" + ".b" * 20000 + "\n"
    _add_run(arch, 9, {"train.py": deep, "util.py": chain}, _probabilities(60, 9))
    summary = _annotate(arch, tmp_path / "out")
    mine = sorted(
        (p["code"], p["message"]) for p in summary.problems if p["run_id"].endswith("rep9")
    )
    assert [c for c, _ in mine] == ["annotate.partial", "annotate.partial"]
    assert "nested more than 100 levels deep" in mine[0][1] + mine[1][1]
    assert "nested too deeply for the Python parser" in mine[0][1] + mine[1][1]
    generated, _ = load_generated_annotations(open_archive(arch), tmp_path / "out")
    assert generated["main/alpha/fx_cls/rep9"].answers["model_families"].value == ("other",)


def test_code_that_is_not_valid_utf8_gives_a_reason(arch, tmp_path):
    latin = b"# -*- coding: latin-1 -*-\nname = '\xe9'\nfrom sklearn.svm import SVC\nm = SVC()\n"
    _add_run(arch, 10, {"a.py": latin, "b.py": b"x = '\xff\xfe'\n"}, _probabilities(60, 10))
    summary = _annotate(arch, tmp_path / "out")
    mine = [(p["code"], p["path"]) for p in summary.problems if p["run_id"].endswith("rep10")]
    assert mine == [("annotate.encoding", "code/v1/b.py")]


def test_versions_with_too_much_code_are_read_up_to_the_limits(arch, tmp_path, monkeypatch):
    import automd_analysis.annotate.sources as sources

    monkeypatch.setattr(sources, "MAX_CODE_FILES", 2)
    summary = _annotate(arch, tmp_path / "out")  # rep2 is a 4-file project
    limited = [p for p in summary.problems if p["code"] == "annotate.too_much_code"]
    assert [p["run_id"] for p in limited] == ["main/alpha/fx_cls/rep2"]
    generated, problems = load_generated_annotations(open_archive(arch), tmp_path / "out")
    assert problems == [] and "main/alpha/fx_cls/rep2" in generated


def test_tampered_generated_files_are_skipped_with_a_structured_error(arch, tmp_path):
    out = tmp_path / "out"
    _annotate(arch, out)
    bad_line = out / "main/alpha/fx_cls/rep0/annotations.json"
    doc = json.loads(bad_line.read_text())
    doc["run"]["model_families"]["evidence"] = ["code/v1/solution.py:100000"]
    bad_line.write_text(json.dumps(doc))
    (out / "main/alpha/fx_cls/rep1/annotations.json").write_text("{")
    escaped = out / "main/alpha/fx_cls/rep2/annotations.json"
    doc = json.loads(escaped.read_text())
    doc["run"]["model_families"]["evidence"] = ["../../../../etc/passwd"]
    escaped.write_text(json.dumps(doc))
    generated, problems = load_generated_annotations(open_archive(arch), out)
    assert generated == {}
    assert sorted(p.code for p in problems) == [
        "archive.annotation_invalid",
        "archive.evidence_line",
        "archive.evidence_unsafe",
    ]
    assert all(p.details["effect"] == "annotations skipped" for p in problems)
    with pytest.raises(AutomdError) as err:
        load_generated_annotations(open_archive(arch), tmp_path / "nowhere")
    assert err.value.code == "annotate.missing"


def test_every_run_of_the_committed_fixture_archive(tmp_path):
    archive = open_archive(SMALL / "archive")
    summary = annotate_archive(archive, tmp_path / "out", manifests=MANIFESTS)
    generated, problems = load_generated_annotations(archive, tmp_path / "out")
    assert problems == []
    selected = {r.run_id for r in archive.runs() if r.selected_version}
    assert selected <= set(generated)
    for run in archive.runs():
        if run.run_id in generated and run.task in MANIFESTS:
            kind = MANIFESTS[run.task].kind.value
            answers = generated[run.run_id].answers
            if not run.selected_version:  # no selected code: pairs and forensics only
                assert answers == {}
                assert generated[run.run_id].forensics or generated[run.run_id].pairs
                continue
            if kind == "survival":
                assert answers["class_imbalance_handling"].value == "na"
            else:
                assert answers["censoring_handling"].value == "na"
    assert summary.n_runs == len(archive.runs())


def test_choose_annotations_archived_win_unless_preferred():
    archived = Annotations("automd demo harness", {}, ())
    generated = Annotations(ANNOTATOR, {}, ())
    assert choose_annotations(archived, generated) == (archived, "archive")
    assert choose_annotations(archived, generated, prefer_generated=True) == (
        generated,
        "generated",
    )
    assert choose_annotations(None, generated) == (generated, "generated")
    assert choose_annotations(archived, None, prefer_generated=True) == (archived, "archive")
    assert choose_annotations(None, None) == (None, "none")


def test_apply_annotations_replaces_only_what_is_chosen(arch, tmp_path):
    out = tmp_path / "out"
    _annotate(arch, out)
    archive = open_archive(arch)
    generated, _ = load_generated_annotations(archive, out)
    runs = archive.runs()
    assert all(r.annotations is None for r in runs)
    chosen, sources = apply_annotations(runs, generated)
    assert set(sources.values()) == {"generated"}
    assert all(r.annotations is generated[r.run_id] for r in chosen)
    assert [r.run_id for r in chosen] == [r.run_id for r in runs]
    kept, sources = apply_annotations(chosen, {}, prefer_generated=True)
    assert set(sources.values()) == {"archive"}


def test_version_pairs_follow_the_app_h_rule_and_describe_the_change(tmp_path):
    """A linear run v1 -> v2 -> v3: v2 adds class weights, v3 adds a calibration step."""
    root = tmp_path / "arch"
    kit.write_archive_yaml(root, experiments={"main": "main experiment"})
    run_dir = kit.write_run(
        root,
        "main",
        "alpha",
        "fx_cls",
        0,
        selection={"rule": "final_file", "selected_version": "v3"},
    )
    head = (
        "import pandas as pd\nfrom lightgbm import LGBMClassifier\n"
        "from sklearn.isotonic import IsotonicRegression\n"
        "tr, te = pd.read_csv('train.csv'), pd.read_csv('test.csv')\n"
        "X, y, Xt = tr[['a']], tr['y'], te[['a']]\n"
    )
    codes = {
        "v1": head
        + "m = LGBMClassifier(n_estimators=100).fit(X, y)\np = m.predict_proba(Xt)[:, 1]\n",
        "v2": head + "m = LGBMClassifier(n_estimators=100, class_weight='balanced').fit(X, y)\n"
        "p = m.predict_proba(Xt)[:, 1]\n",
        "v3": head + "m = LGBMClassifier(n_estimators=100, class_weight='balanced').fit(X, y)\n"
        "iso = IsotonicRegression().fit(m.predict_proba(X)[:, 1], y)\n"
        "p = iso.predict(m.predict_proba(Xt)[:, 1])\n",
    }
    for step, (vid, text) in enumerate(codes.items(), start=1):
        path = run_dir / "code" / vid / "train.py"
        path.parent.mkdir(parents=True)
        path.write_text(text + "pd.DataFrame({'p': p}).to_csv('submission.csv')\n")
        kit.write_version(
            run_dir, vid, kit.T0 + timedelta(minutes=5 * step), step,
            _probabilities(60, step), code_files=[f"code/{vid}/train.py"],
        )  # fmt: skip
    (run_dir / "submission.csv").write_bytes(_probabilities(60, 3))
    out = tmp_path / "out"
    summary = _annotate(root, out)
    assert summary.n_versions == 3
    generated, problems = load_generated_annotations(open_archive(root), out)
    assert problems == []
    pairs = generated["main/alpha/fx_cls/rep0"].pairs
    assert [(p.earlier, p.later) for p in pairs] == [("v1", "v2"), ("v2", "v3")]
    assert pairs[0].changes == ("imbalance_handling",)
    assert pairs[1].changes == ("calibration",)
    assert all(p.affects_predictions for p in pairs)
    assert pairs[1].evidence and all(e.startswith("code/v3/train.py:") for e in pairs[1].evidence)
    no_pairs = _annotate(root, tmp_path / "no_pairs", pairs=False)
    assert no_pairs.n_versions == 1
    again, _ = load_generated_annotations(open_archive(root), tmp_path / "no_pairs")
    assert again["main/alpha/fx_cls/rep0"].pairs == ()
