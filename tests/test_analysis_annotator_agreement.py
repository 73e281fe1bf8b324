"""analysis.annotator_agreement: agreement tables from the store's annotation_comparison rows,
checked against scikit-learn and hand counts."""

from __future__ import annotations

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from automd_analysis.analysis.annotator_agreement import agreement_text, annotator_agreement
from automd_analysis.analysis.store import ScoreStore

KEY = ["run_id", "experiment", "agent", "llm", "task", "rep", "reference"]


def _store(comparison: list[tuple]) -> ScoreStore:
    """Runs r0..r{n-1} of experiment main (plus one of `llm`); comparison rows
    (run index, field, reference answer, generated answer)."""
    rows = []
    for i in range(6):
        experiment = "llm" if i == 5 else "main"
        rows.append(
            {"run_id": f"{experiment}/a/t/rep{i}", "experiment": experiment, "agent": "a",
             "llm": None, "task": "t", "rep": i, "reference": False, "version": "v",
             "is_selected": True, "task_kind": "classification", "validation": "internal",
             "shift": "none", "internal_counterpart": None, "valid": True, "reason_code": None,
             "raw": 0.7, "score": 0.4, "auroc": 0.7, "ece": 0.1, "brier": 0.2}
        )  # fmt: skip
    scores = pd.DataFrame(rows)
    runs = scores[KEY].assign(objective=None, tokens_total=None)
    by_index = runs.set_index(runs.index)
    comp = pd.DataFrame(
        [
            by_index.loc[i, KEY].to_dict()
            | {
                "field": f,
                "reference_value": a,
                "generated_value": b,
                "reference_annotator": "truth",
                "generated_annotator": "automd annotate 9",
            }
            for i, f, a, b in comparison
        ]  # fmt: skip
    )
    return ScoreStore.from_frames(
        scores=scores, runs=runs, annotation_comparison=comp if comparison else None
    )


def test_single_valued_field_equals_sklearn_and_hand_counts():
    ref = ["yes", "no", "no", "yes", "no"]
    gen = ["yes", "no", "yes", "no", "no"]
    store = _store(
        [
            (i, "probability_calibration", a, b)
            for i, (a, b) in enumerate(zip(ref, gen, strict=True))
        ]
    )
    agreement = annotator_agreement(store)
    row = agreement.fields.set_index("field").loc["probability_calibration"]
    assert row["n_runs"] == 5 and row["exact"] == pytest.approx(3 / 5)
    assert row["kappa"] == pytest.approx(cohen_kappa_score(ref, gen))
    values = agreement.values.set_index("value")
    # 'yes': generated twice, once right; truth twice, once found
    assert values.loc["yes", ["precision", "recall"]].tolist() == [0.5, 0.5]
    assert values.loc["no", ["precision", "recall"]].tolist() == pytest.approx([2 / 3, 2 / 3])
    cells = {(r.reference, r.rated): r.n for r in agreement.confusion.itertuples()}
    assert cells == {("no", "no"): 2, ("no", "yes"): 1, ("yes", "no"): 1, ("yes", "yes"): 1}
    assert agreement.n_runs == 5 and agreement.generated_annotators == ("automd annotate 9",)


def test_multi_valued_answers_are_rated_per_value():
    store = _store(
        [
            (0, "model_families", "gbdt+linear", "gbdt"),
            (1, "model_families", "gbdt", "gbdt"),
            (2, "model_families", "linear", "linear"),
        ]
    )
    agreement = annotator_agreement(store)
    row = agreement.fields.set_index("field").loc["model_families"]
    assert row["multi"] and row["exact"] == pytest.approx(2 / 3)
    values = agreement.values.set_index("value")
    # linear: in the truth of runs 0 and 2, generated for run 2 only
    assert values.loc["linear", ["n_reference", "n_rated", "precision", "recall"]].tolist() == [
        2, 1, 1.0, 0.5
    ]  # fmt: skip
    assert values.loc["gbdt", ["precision", "recall"]].tolist() == [1.0, 1.0]


def test_scope_is_the_experiment_and_text_lists_low_kappas():
    store = _store([(i, "subgroup_checks", "no", "yes" if i == 5 else "no") for i in range(6)])
    main = annotator_agreement(store)
    assert main.n_runs == 5 and main.fields["exact"].tolist() == [1.0]
    other = annotator_agreement(store, "llm")
    assert other.n_runs == 1 and other.fields["exact"].tolist() == [0.0]
    ref = ["yes", "no", "no", "yes", "no"]
    gen = ["yes", "no", "yes", "no", "no"]
    low = annotator_agreement(
        _store(
            [
                (i, "probability_calibration", a, b)
                for i, (a, b) in enumerate(zip(ref, gen, strict=True))
            ]
        )
    )
    text = agreement_text(low)
    assert text.startswith("automd annotate 9 agrees with truth on 5 runs")
    assert "below 0.8: probability_calibration (0.17)" in text


def test_a_store_without_comparison_gives_empty_tables():
    store = _store([])
    agreement = annotator_agreement(store)
    assert agreement.empty and agreement.fields.empty and agreement.confusion.empty
    assert "--annotations" in agreement_text(agreement)
