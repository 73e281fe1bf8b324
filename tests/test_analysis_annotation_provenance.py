"""automd_analysis.analysis.annotation_provenance: who produced the codebook answers."""

from __future__ import annotations

import pandas as pd
import pytest
import storebuilder as sb

from automd_analysis.analysis.annotation_provenance import (
    UNRECORDED,
    annotation_provenance,
    provenance_text,
)
from automd_analysis.analysis.catalog import table as declared
from automd_analysis.analysis.store import ScoreStore
from automd_analysis.errors import ScoreStoreError

ANSWER = {"class_imbalance_handling": "none"}


def _runs():
    runs = []
    for rep in range(3):
        runs.append(sb.run("aide", "clf_a", rep, annotations=ANSWER))
        runs.append(sb.run("codex", "clf_a", rep, annotations=ANSWER, valid=rep != 2))
        runs.append(sb.run("baseline", "clf_a", rep, annotations=ANSWER))
    runs.append(sb.run("codex", "clf_b", 0))  # no annotations at all
    return runs


def _store(annotator: dict | None, source: dict | None) -> ScoreStore:
    frames = sb.frames(_runs())
    runs = frames["runs"]
    if annotator is not None:
        runs["annotator"] = runs["run_id"].map(annotator)
    if source is not None:
        runs["annotations_source"] = runs["run_id"].map(source)
    return ScoreStore.from_frames(**frames)


def test_counts_per_annotator_over_valid_agent_runs():
    annotator = {
        **{f"main/aide/clf_a/rep{i}": "harness ground truth" for i in range(3)},
        **{f"main/codex/clf_a/rep{i}": "automd annotate 0.1.0" for i in range(3)},
        **{f"main/baseline/clf_a/rep{i}": "automd baselines" for i in range(3)},
    }
    source = {k: ("generated" if "codex" in k else "archive") for k in annotator}
    source["main/codex/clf_b/rep0"] = "none"
    store = _store(annotator, source)
    table = annotation_provenance(store)
    assert table.columns.tolist() == declared("annotation_provenance").named
    # valid agent runs: aide 3, codex 2 annotated (rep 2 invalid) + 1 unannotated; no baseline
    assert table.to_dict("records") == [
        {"annotator": "harness ground truth", "annotations_source": "archive", "n_runs": 3},
        {"annotator": "automd annotate 0.1.0", "annotations_source": "generated", "n_runs": 2},
        {"annotator": None, "annotations_source": "none", "n_runs": 1},
    ]
    with_base = annotation_provenance(store, include_reference=True, valid_only=False)
    counts = dict(zip(with_base["annotator"].fillna("-"), with_base["n_runs"], strict=True))
    assert counts == {
        "harness ground truth": 3,
        "automd annotate 0.1.0": 3,
        "automd baselines": 3,
        "-": 1,
    }
    assert int(with_base["n_runs"].sum()) == len(_runs())


def test_store_without_the_columns_falls_back_to_the_annotations_table():
    store = _store(None, None)  # written before runs.parquet recorded the annotator
    table = annotation_provenance(store)
    assert table.to_dict("records") == [
        {"annotator": UNRECORDED, "annotations_source": "archive", "n_runs": 5},
        {"annotator": None, "annotations_source": "none", "n_runs": 1},
    ]


def test_blank_annotator_of_an_annotated_run_is_unrecorded():
    annotator = {f"main/aide/clf_a/rep{i}": ("  " if i else None) for i in range(3)}
    store = _store(annotator, None)
    table = annotation_provenance(store)
    assert table.loc[table["annotator"] == UNRECORDED, "n_runs"].tolist() == [5]


def test_missing_experiment_is_a_structured_error():
    with pytest.raises(ScoreStoreError) as info:
        annotation_provenance(_store(None, None), "nope")
    assert info.value.code == "store.no_experiment"


def test_text_names_each_annotator_and_the_unannotated_runs():
    rows = pd.DataFrame(
        {
            "annotator": ["harness ground truth", "automd annotate 0.1.0", None],
            "annotations_source": ["archive", "generated", "none"],
            "n_runs": [186, 1, 3],
        }
    )
    assert provenance_text(rows) == (
        "Codebook answers by harness ground truth (186 runs); automd annotate 0.1.0 (1 run, "
        "generated outside the archive); no answers for 3 runs."
    )
    assert provenance_text(rows.iloc[:1]) == "Codebook answers by harness ground truth (186 runs)."
    assert provenance_text(rows.iloc[[2]].assign(n_runs=1)) == "No codebook answers for this run."
    assert provenance_text(rows.iloc[:0]) == "No runs to annotate."
