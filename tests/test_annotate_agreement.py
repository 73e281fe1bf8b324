"""Agreement functions against scikit-learn, plus the codebook-level table."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, confusion_matrix, precision_recall_fscore_support

from automd_analysis.agreement import (
    agreement_table,
    cohen_kappa,
    confusion,
    confusion_table,
    precision_recall,
)
from automd_analysis.codebook import Annotations, Answer

LABELS = ["yes", "no", "uncertain", "na"]
_pairs = st.lists(
    st.tuples(st.sampled_from(LABELS), st.sampled_from(LABELS)), min_size=1, max_size=60
)


@settings(max_examples=100)
@given(_pairs)
def test_kappa_equals_sklearn(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    ours = cohen_kappa(a, b)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns when kappa is undefined (NaN)
        ref = cohen_kappa_score(a, b)
    if math.isnan(ref):
        assert math.isnan(ours)
    else:
        assert ours == pytest.approx(ref, abs=1e-12)


@settings(max_examples=60)
@given(_pairs)
def test_confusion_and_precision_recall_equal_sklearn(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    labs, m = confusion(a, b, LABELS)
    assert m.tolist() == confusion_matrix(a, b, labels=LABELS).tolist()
    pr = precision_recall(a, b, LABELS)
    with np.errstate(all="ignore"):
        p, r, _, support = precision_recall_fscore_support(
            a, b, labels=LABELS, zero_division=np.nan
        )
    np.testing.assert_allclose(pr["precision"], p, equal_nan=True)
    np.testing.assert_allclose(pr["recall"], r, equal_nan=True)
    assert pr["n_reference"].tolist() == support.tolist()


def test_kappa_hand_computed_and_degenerate():
    # po = 0.75; pe = 0.5 * 0.25 + 0.5 * 0.75 = 0.5 -> kappa = 0.5
    assert cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"]) == pytest.approx(0.5)
    assert math.isnan(cohen_kappa(["x", "x"], ["x", "x"]))
    assert cohen_kappa(["x", "y"], ["x", "y"]) == 1.0
    with pytest.raises(ValueError, match="equal lengths"):
        cohen_kappa(["x"], ["x", "y"])


def _ann(**answers) -> Annotations:
    return Annotations(
        "t",
        {k: Answer(k, tuple(v) if isinstance(v, list) else v, ()) for k, v in answers.items()},
        (),
    )


def test_agreement_table_pools_values_of_multi_valued_fields():
    ref = {
        "r1": _ann(model_families=["gbdt"], probability_calibration="yes"),
        "r2": _ann(model_families=["gbdt", "linear"], probability_calibration="no"),
    }
    got = {
        "r1": _ann(model_families=["gbdt"], probability_calibration="yes"),
        "r2": _ann(model_families=["gbdt"], probability_calibration="yes"),
        "r3": _ann(model_families=["knn"]),  # not in the reference: ignored
    }
    fields, values = agreement_table(ref, got, ["model_families", "probability_calibration"])
    fam = fields.set_index("field").loc["model_families"]
    assert fam["n_runs"] == 2 and fam["exact"] == 0.5
    # 2 runs x 8 family values: one disagreement (linear in r2)
    a = [v in x for x in (("gbdt",), ("gbdt", "linear")) for v in _FAMILIES]
    b = [v in x for x in (("gbdt",), ("gbdt",)) for v in _FAMILIES]
    assert fam["kappa"] == pytest.approx(cohen_kappa_score(a, b))
    lin = values[(values["field"] == "model_families") & (values["value"] == "linear")].iloc[0]
    assert lin["n_reference"] == 1 and lin["recall"] == 0.0
    cal = fields.set_index("field").loc["probability_calibration"]
    assert cal["kappa"] == pytest.approx(cohen_kappa_score(["yes", "no"], ["yes", "yes"]))
    conf = confusion_table(ref, got, ["model_families"])
    assert conf.to_dict("records") == [
        {"field": "model_families", "reference": "gbdt", "rated": "gbdt", "n": 1},
        {"field": "model_families", "reference": "gbdt+linear", "rated": "gbdt", "n": 1},
    ]


_FAMILIES = [
    "gbdt",
    "random_forest",
    "linear",
    "neural_net",
    "cox",
    "parametric_survival",
    "knn",
    "other",
]
