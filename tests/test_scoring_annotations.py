"""``automd score --annotations DIR``: generated codebook answers enter the store, the archive's own
win unless ``--prefer-generated``, and the runs table says which annotator produced each."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from automd_analysis.agreement import agreement_table, confusion_table
from automd_analysis.analysis.annotator_agreement import annotator_agreement
from automd_analysis.analysis.store import load_store
from automd_analysis.annotate.runs import annotate_archive
from automd_analysis.archive import open_archive
from automd_analysis.archive.generated import load_generated_annotations
from automd_analysis.scoring import score_archive
from automd_analysis.tasks import load_manifests

# every test scores the fixture archive
pytestmark = pytest.mark.slow

SMALL = Path(__file__).resolve().parent / "fixtures" / "small"
DATA, MANIFESTS = SMALL / "data", SMALL / "manifests"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    base = tmp_path_factory.mktemp("annotated")
    archive = base / "archive"
    shutil.copytree(SMALL / "archive", archive)
    # one run without annotations of its own: only generated answers can fill it
    (archive / "main" / "alpha" / "fx_cls" / "rep0" / "annotations.json").unlink()
    out = base / "generated"
    annotate_archive(open_archive(archive), out, manifests=load_manifests(MANIFESTS), jobs=1)
    return archive, out


def _score(archive, out, **kw):
    score_archive(archive, out, data=DATA, manifests=MANIFESTS, bootstrap=0, **kw)
    return load_store(out)


def test_archive_annotations_win_and_generated_fill_the_gaps(generated, tmp_path):
    archive, directory = generated
    store = _score(archive, tmp_path / "s", annotations=directory)
    runs = store.runs.set_index("run_id")
    assert runs.at["main/alpha/fx_cls/rep0", "annotations_source"] == "generated"
    assert runs.at["main/alpha/fx_cls/rep0", "annotator"].startswith("automd annotate")
    has_own = {r.run_id for r in open_archive(archive).runs() if r.annotations is not None}
    assert has_own and "main/alpha/fx_cls/rep0" not in has_own
    assert set(runs.loc[sorted(has_own), "annotations_source"]) == {"archive"}
    assert not runs.loc[sorted(has_own), "annotator"].str.startswith("automd").any()
    others = runs.drop(index=sorted(has_own))
    assert set(others.loc[others["has_annotations"], "annotations_source"]) == {"generated"}
    assert store.meta["annotations"] == {"generated": True, "prefer_generated": False}
    answers = store.annotations[store.annotations["run_id"] == "main/alpha/fx_cls/rep0"]
    assert len(answers) > 0


def test_prefer_generated_replaces_the_archives_answers(generated, tmp_path):
    archive, directory = generated
    store = _score(archive, tmp_path / "s", annotations=directory, prefer_generated=True)
    annotated = store.runs[store.runs["has_annotations"]]
    assert set(annotated["annotations_source"]) == {"generated"}
    assert annotated["annotator"].str.startswith("automd annotate").all()


def test_without_a_directory_nothing_changes(generated, tmp_path):
    archive, _ = generated
    store = _score(archive, tmp_path / "s")
    runs = store.runs.set_index("run_id")
    assert runs.at["main/alpha/fx_cls/rep0", "annotations_source"] == "none"
    assert not runs.at["main/alpha/fx_cls/rep0", "has_annotations"]
    assert store.meta["annotations"] == {"generated": False, "prefer_generated": False}


def test_a_missing_directory_is_a_clear_error(generated, tmp_path):
    archive, _ = generated
    from automd_analysis.errors import AutomdError

    with pytest.raises(AutomdError) as info:
        _score(archive, tmp_path / "s", annotations=tmp_path / "nope")
    assert info.value.code == "annotate.missing"


def test_the_store_keeps_both_answers_and_the_agreement_equals_the_files(generated, tmp_path):
    archive, directory = generated
    store = _score(archive, tmp_path / "s", annotations=directory)
    arch = open_archive(archive)
    has_own = {r.run_id for r in arch.runs() if r.annotations is not None}
    mine, _ = load_generated_annotations(arch, directory)
    both = {r for r in has_own if mine[r].answers}  # a run without code gets no answers
    compared = set(store.annotation_comparison["run_id"])
    # only runs with answers on both sides; the run without its own file is not compared
    assert compared == both and "main/alpha/fx_cls/rep0" not in compared
    assert len(both) >= len(has_own) - 1
    row = store.annotation_comparison.iloc[0]
    own = next(r for r in arch.runs() if r.run_id == row["run_id"]).annotations
    value = own.answers[row["field"]].value
    assert row["reference_value"] == ("+".join(value) if isinstance(value, tuple) else value)
    assert row["generated_annotator"].startswith("automd annotate")
    # the same tables from the store and straight from the two sets of files (main experiment)
    agreement = annotator_agreement(store, include_reference=True)
    main = {r for r in both if r.startswith("main/")}
    own = {r.run_id: r.annotations for r in arch.runs() if r.run_id in main}
    fields, values = agreement_table(own, mine)
    fields = fields[fields["n_runs"] > 0].reset_index(drop=True)
    values = values[values["field"].isin(fields["field"])].reset_index(drop=True)
    assert agreement.n_runs == len(main) > 0
    assert agreement.reference_annotators == tuple(sorted({a.annotator for a in own.values()}))
    pd.testing.assert_frame_equal(agreement.fields, fields, check_dtype=False)
    pd.testing.assert_frame_equal(agreement.values, values, check_dtype=False)
    pd.testing.assert_frame_equal(
        agreement.confusion, confusion_table(own, mine), check_dtype=False
    )


def test_without_generated_answers_the_agreement_is_empty(generated, tmp_path):
    archive, _ = generated
    agreement = annotator_agreement(_score(archive, tmp_path / "s"))
    assert agreement.empty and agreement.fields.empty
    assert list(agreement.fields.columns) == ["field", "n_runs", "exact", "kappa", "multi"]
