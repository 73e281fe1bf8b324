"""Task manifests: the 15 paper tasks against paper Table 8, demo manifests, schema errors,
checksum verification and pinning."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from test_tasks_tiny import make_tiny_task

from automd_analysis.errors import DataError, ManifestError
from automd_analysis.tasks import (
    DEFAULT_MANIFEST_DIR,
    Task,
    data_root,
    file_statuses,
    get_task,
    load_labels,
    load_manifest,
    load_manifests,
    manifest_dir,
    pin_manifest,
    task_status,
)
from automd_demo.recipes import RECIPES, kinds_supported

# Paper Table 8, typed from the paper (not from the manifests):
# id -> (kind, metric, validation, shift, train, extra_train, test, unit)
TABLE8 = {
    "support": ("survival", "ctd_adj_antolini", "internal", "none", 7098, 0, 1775, "patients"),
    "metabric": ("survival", "ctd_adj_antolini", "internal", "none", 1523, 0, 381, "patients"),
    "rotterdam": ("survival", "ctd_adj_antolini", "internal", "none", 2385, 0, 597, "patients"),
    "rotterdam_gbsg": (
        "survival",
        "ctd_adj_antolini",
        "external",
        "cohort",
        2982,
        0,
        686,
        "patients",
    ),
    "seer": ("survival", "ctd_adj_antolini", "internal", "none", 232625, 0, 49291, "patients"),
    "seer_later": (
        "survival",
        "ctd_adj_antolini",
        "external",
        "period",
        183334,
        0,
        49291,
        "patients",
    ),
    "nhanes": ("survival", "ctd_adj_antolini", "internal", "none", 11639, 0, 2910, "patients"),
    "uci_diabetes": ("classification", "auroc", "internal", "none", 81347, 0, 20419, "encounters"),
    "physionet2012": ("classification", "min_se_ppv", "internal", "none", 4000, 0, 8000, "stays"),
    "mimic_iv": ("classification", "auroc", "internal", "none", 41471, 0, 10368, "patients"),
    "eicu": ("classification", "auroc", "internal", "none", 94823, 0, 11133, "stays"),
    "eicu_newhosp": ("classification", "auroc", "external", "hospital", 83626, 0, 11133, "stays"),
    "sepsis": ("sequential", "utility_2019", "internal", "none", 32268, 0, 8068, "patients"),
    "sepsis_newhosp": (
        "sequential",
        "utility_2019",
        "external",
        "hospital",
        20336,
        0,
        4000,
        "patients",
    ),
    "sepsis_local": (
        "sequential",
        "utility_2019",
        "external",
        "hospital",
        20336,
        500,
        4000,
        "patients",
    ),
}
# Matching symbols of Table 8 (shared test sets) and the internal task each external one mirrors.
SHARED_TEST_GROUPS = [
    {"seer", "seer_later"},
    {"eicu", "eicu_newhosp"},
    {"sepsis_newhosp", "sepsis_local"},
]
COUNTERPARTS = {
    "rotterdam_gbsg": "rotterdam",
    "seer_later": "seer",
    "eicu_newhosp": "eicu",
    "sepsis_newhosp": "sepsis",
    "sepsis_local": "sepsis",
}
DEMO_IDS = {
    "demo_support",
    "demo_rotterdam",
    "demo_flchain",
    "demo_flchain_later",
    "demo_support_death30",
    "demo_rhc_death30",
    "demo_sepsis",
    "demo_sepsis_newhosp",
    "demo_sepsis_local",
}


@pytest.fixture(scope="module")
def manifests():
    return load_manifests(DEFAULT_MANIFEST_DIR)


def test_all_paper_and_demo_manifests_load(manifests):
    paper = {k for k, m in manifests.items() if m.origin == "paper"}
    demo = {k for k, m in manifests.items() if m.origin == "demo"}
    assert paper == set(TABLE8)
    assert demo == DEMO_IDS


@pytest.mark.parametrize("task_id", sorted(TABLE8))
def test_paper_manifest_matches_table8(manifests, task_id):
    m = manifests[task_id]
    kind, metric, validation, shift, train, extra, test, unit = TABLE8[task_id]
    assert m.kind.value == kind
    assert m.metric.value == metric
    assert m.validation == validation
    assert m.shift == shift
    assert (m.sizes.train, m.sizes.extra_train, m.sizes.test, m.sizes.unit) == (
        train,
        extra,
        test,
        unit,
    )
    assert m.null_score == (0.5 if metric in ("ctd_adj_antolini", "auroc") else 0.0)
    assert m.internal_counterpart == COUNTERPARTS.get(task_id)
    # Paper data is not redistributable: nothing is pinned, and nothing can be built.
    assert all(f.sha256 is None for f in m.files.values())
    assert m.build is None
    assert m.source.access in {"public", "credentialed", "dua"}


def test_paper_table8_aggregates(manifests):
    paper = [m for m in manifests.values() if m.origin == "paper"]
    assert sum(m.validation == "internal" for m in paper) == 10
    assert sum(m.validation == "external" for m in paper) == 5
    kinds = sorted(m.kind.value for m in paper)
    assert kinds.count("survival") == 7
    assert kinds.count("classification") == 5
    assert kinds.count("sequential") == 3
    assert {manifests["mimic_iv"].source.access, manifests["eicu"].source.access} == {
        "credentialed"
    }
    assert manifests["seer"].source.access == "dua"


def test_paper_shared_test_sets(manifests):
    paper = {k: m for k, m in manifests.items() if m.origin == "paper"}
    groups: dict[str, set[str]] = {}
    for k, m in paper.items():
        groups.setdefault(m.shared_test_set, set()).add(k)
    shared = [g for g in groups.values() if len(g) > 1]
    assert sorted(map(sorted, shared)) == sorted(map(sorted, SHARED_TEST_GROUPS))


def test_paper_subgroups_follow_app_f(manifests):
    # SUPPORT and METABRIC (generic covariate names) and sequential tasks have no subgroups.
    for task_id in ("support", "metabric", "sepsis", "sepsis_newhosp", "sepsis_local"):
        assert manifests[task_id].subgroups == {}
    assert set(manifests["nhanes"].subgroups) == {"age", "sex", "race"}
    assert manifests["nhanes"].subgroups["age"].rule == "tertiles"
    assert manifests["nhanes"].subgroups["race"].rule == "top4_other"


def test_demo_manifests_mirror_their_paper_task(manifests):
    for task_id in DEMO_IDS:
        m = manifests[task_id]
        mirror = manifests[m.paper["mirrors"]]
        assert (m.kind, m.metric, m.validation, m.shift) == (
            mirror.kind,
            mirror.metric,
            mirror.validation,
            mirror.shift,
        ), task_id
        assert m.build is not None and m.build.recipe in RECIPES
        assert kinds_supported()[m.build.recipe] is m.kind
        assert m.build.seed == 42
        assert all(f.sha256 is not None for f in m.files.values()), task_id
        assert m.files["labels"].path.startswith("labels/")
        assert all(
            f.path.startswith(f"tasks/{task_id}/") for k, f in m.files.items() if k != "labels"
        )
        if m.validation == "external":
            assert manifests[m.internal_counterpart].validation == "internal"
    assert (
        manifests["demo_flchain"].shared_test_set == manifests["demo_flchain_later"].shared_test_set
    )
    assert (
        manifests["demo_sepsis_newhosp"].shared_test_set
        == manifests["demo_sepsis_local"].shared_test_set
        != manifests["demo_sepsis"].shared_test_set
    )
    synthetic = {k for k in DEMO_IDS if manifests[k].synthetic}
    assert synthetic == {"demo_sepsis", "demo_sepsis_newhosp", "demo_sepsis_local"}
    assert all(manifests[k].source.access == "synthetic" for k in synthetic)


# --------------------------------------------------------------------------------------------
# Schema errors name the field


def _write(tmp_path: Path, name: str, doc) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False))
    return path


def _base() -> dict:
    return yaml.safe_load((DEFAULT_MANIFEST_DIR / "demo_support_death30.yaml").read_text())


@pytest.mark.parametrize(
    ("mutate", "location", "text"),
    [
        (lambda d: d.update(kind="regression"), "kind", "Input should be"),
        (lambda d: d.update(metric="auroc", kind="survival"), "<root>", "not allowed for kind"),
        (lambda d: d.update(null_score=0.0), "<root>", "null_score must be 0.5"),
        (lambda d: d.update(colour="red"), "colour", "Extra inputs"),
        (lambda d: d["files"]["labels"].update(path="/etc/passwd"), "files.labels", "relative"),
        (lambda d: d["files"]["labels"].update(path="../x.csv"), "files.labels", "relative"),
        (lambda d: d["files"]["labels"].update(sha256="ABC"), "files.labels", "64 lower-case"),
        (lambda d: d["files"]["labels"].update(role="public"), "<root>", "must have role 'hidden'"),
        (lambda d: d.update(validation="external"), "<root>", "internal_counterpart"),
        (lambda d: d["submission"].update(id_columns=["pid"]), "<root>", "must be the same"),
        (lambda d: d["sizes"].update(test=-1), "sizes.test", "greater than or equal"),
        (lambda d: d.pop("metric"), "metric", "Field required"),
    ],
)
def test_invalid_manifest_names_the_field(tmp_path, mutate, location, text):
    doc = _base()
    mutate(doc)
    path = _write(tmp_path, doc["id"], doc)
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    err = info.value
    assert err.code == "manifest.invalid"
    assert err.location == location
    assert text in str(err)
    assert err.path == path


def test_manifest_file_level_errors(tmp_path):
    with pytest.raises(ManifestError) as info:
        load_manifest(tmp_path / "nope.yaml")
    assert info.value.code == "manifest.missing"
    with pytest.raises(ManifestError) as info:
        load_manifest(_write(tmp_path, "bad", "id: [unclosed\n"))
    assert info.value.code == "manifest.unreadable"
    with pytest.raises(ManifestError) as info:
        load_manifest(_write(tmp_path, "list", "- a\n- b\n"))
    assert info.value.code == "manifest.invalid"
    doc = _base()
    with pytest.raises(ManifestError) as info:
        load_manifest(_write(tmp_path, "renamed", doc))
    assert info.value.location == "id"


def test_data_root_and_manifest_dir_resolution(tmp_path, monkeypatch):
    monkeypatch.delenv("AUTOMD_DATA", raising=False)
    monkeypatch.delenv("AUTOMD_MANIFESTS", raising=False)
    assert data_root().name == "data"
    assert manifest_dir() == DEFAULT_MANIFEST_DIR
    monkeypatch.setenv("AUTOMD_DATA", str(tmp_path / "d"))
    monkeypatch.setenv("AUTOMD_MANIFESTS", str(tmp_path / "m"))
    assert data_root() == tmp_path / "d"
    assert manifest_dir() == tmp_path / "m"
    assert data_root(tmp_path / "x") == tmp_path / "x"


# --------------------------------------------------------------------------------------------
# Checksums


def test_modified_hidden_labels_are_an_error(tmp_path):
    tiny = make_tiny_task(tmp_path, "auroc")
    path = tiny.task.path("labels")
    text = path.read_text()
    path.write_text(text.replace("id000,0", "id000,1", 1))
    fresh = get_task(tiny.task.id, data=tiny.data, manifests=tiny.manifests)
    with pytest.raises(DataError) as info:
        load_labels(fresh)
    assert info.value.code == "checksum.mismatch"
    assert info.value.path == path
    assert task_status(file_statuses(fresh)) == "checksum mismatch"


def test_missing_and_unpinned_files(tmp_path):
    tiny = make_tiny_task(tmp_path, "survival")
    grid = tiny.task.path("time_grid")
    grid.unlink()
    fresh = get_task(tiny.task.id, data=tiny.data, manifests=tiny.manifests)
    with pytest.raises(DataError) as info:
        load_labels(fresh)
    assert info.value.code == "data.missing"
    assert task_status(file_statuses(fresh)) == "missing"

    tiny = make_tiny_task(tmp_path / "b", "auroc")
    manifest = tiny.task.manifest
    files = {k: f.model_copy(update={"sha256": None}) for k, f in manifest.files.items()}
    unpinned = Task(manifest.model_copy(update={"files": files}), tiny.data)
    with pytest.raises(DataError) as info:
        load_labels(unpinned)
    assert info.value.code == "checksum.unpinned"
    assert "automd tasks --pin" in info.value.fix
    assert task_status(file_statuses(unpinned)) == "unpinned"
    assert task_status(file_statuses(tiny.task)) == "present"


def test_pin_paper_manifest_keeps_comments_and_then_verifies(tmp_path):
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    src = DEFAULT_MANIFEST_DIR / "rotterdam.yaml"
    dst = manifests / "rotterdam.yaml"
    shutil.copy(src, dst)
    data = tmp_path / "data"
    m = load_manifest(dst)
    (data / m.files["labels"].path).parent.mkdir(parents=True)
    (data / m.files["labels"].path).write_text(
        "patient_id,duration,event,age\np1,10,1,50\np2,20,0,60\n"
    )
    (data / m.files["time_grid"].path).parent.mkdir(parents=True)
    (data / m.files["time_grid"].path).write_text("time\n0.0\n10.0\n")
    before = get_task("rotterdam", data=data, manifests=manifests)
    assert task_status(file_statuses(before)) == "unpinned"

    hashes = pin_manifest(dst, data)
    assert set(hashes) == {"labels", "time_grid"}
    text = dst.read_text()
    original = src.read_text()
    assert text.splitlines()[:3] == original.splitlines()[:3]  # header comments kept
    assert len(text.splitlines()) == len(original.splitlines())
    task = get_task("rotterdam", data=data, manifests=manifests)
    assert task_status(file_statuses(task)) == "present"
    labels = load_labels(task)
    assert list(labels.ids["patient_id"]) == ["p1", "p2"]
    assert list(labels.subgroups.columns) == ["age"]

    # A later change of the data is refused unless re-pinned deliberately.
    (data / m.files["labels"].path).write_text(
        "patient_id,duration,event,age\np1,10,1,50\np2,21,0,60\n"
    )
    with pytest.raises(DataError) as info:
        pin_manifest(dst, data)
    assert info.value.code == "checksum.mismatch"
    assert dst.read_text() == text
    assert pin_manifest(dst, data, overwrite=True)["labels"] != hashes["labels"]


def test_pin_refuses_missing_data_and_multiline_entries(tmp_path):
    manifests = tmp_path / "m"
    manifests.mkdir()
    shutil.copy(DEFAULT_MANIFEST_DIR / "support.yaml", manifests / "support.yaml")
    with pytest.raises(DataError) as info:
        pin_manifest(manifests / "support.yaml", tmp_path / "empty")
    assert info.value.code == "data.missing"

    tiny = make_tiny_task(tmp_path / "t", "auroc")
    path = tiny.manifests / "tiny_auroc.yaml"
    doc = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump(doc, sort_keys=False, default_flow_style=False))
    with pytest.raises(ManifestError) as info:
        pin_manifest(path, tiny.data, overwrite=True)
    assert info.value.location == "files"
