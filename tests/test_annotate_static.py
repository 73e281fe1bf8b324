"""Static analysis of Python source: aliasing, cross-file resolution, dead code, safety, rules."""

from __future__ import annotations

import string
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis.annotate.code import annotate_sources, common_root
from automd_analysis.annotate.interpreter import module_names
from automd_analysis.annotate.practices import TaskFacts

CLS = TaskFacts(kind="classification", ehr=True, external_shift=False)
SURV = TaskFacts(kind="survival", ehr=False, external_shift=False)

HEAD = """
import numpy as np
import pandas as pd
tr = pd.read_csv("train.csv")
te = pd.read_csv("test.csv")
X, y, Xt = tr[["a", "b"]], tr["y"], te[["a", "b"]]
"""


def answers(code: str, task: TaskFacts = CLS, **files) -> dict:
    sources = [("train.py", textwrap.dedent(code))]
    sources += [(name.replace("__", "/") + ".py", textwrap.dedent(t)) for name, t in files.items()]
    found, _ = annotate_sources(sources, task, entries=["train.py"])
    return {k: v.value for k, v in found.items()}


# --------------------------------------------------------------------------- import resolution

CCV_FORMS = {
    "from_as": ("from sklearn.calibration import CalibratedClassifierCV as {a}", "{a}"),
    "module_as": ("import sklearn.calibration as {a}", "{a}.CalibratedClassifierCV"),
    "from_module": ("from sklearn import calibration as {a}", "{a}.CalibratedClassifierCV"),
    "dotted": ("import sklearn.calibration", "sklearn.calibration.CalibratedClassifierCV"),
    "rebound": (
        "from sklearn.calibration import CalibratedClassifierCV\n{a} = CalibratedClassifierCV",
        "{a}",
    ),
}
GBM_FORMS = {
    "plain": ("import lightgbm", "lightgbm.LGBMClassifier"),
    "as": ("import lightgbm as {b}", "{b}.LGBMClassifier"),
    "from_as": ("from lightgbm import LGBMClassifier as {b}", "{b}"),
}


def _program(ccv_form: str, gbm_form: str, a: str, b: str) -> str:
    ci, cc = CCV_FORMS[ccv_form]
    gi, gc = GBM_FORMS[gbm_form]
    return "\n".join(
        [
            ci.format(a=a),
            gi.format(b=b),
            HEAD,
            f"base = {gc.format(b=b)}(class_weight='balanced')",
            f"model = {cc.format(a=a)}(base, method='isotonic', cv=3).fit(X, y)",
            "pd.DataFrame({'p': model.predict_proba(Xt)[:, 1]}).to_csv('submission.csv')",
        ]
    )


_IDENT = st.text(string.ascii_lowercase, min_size=3, max_size=8).filter(
    lambda s: s not in {"base", "model", "pd", "np", "tr", "te", "for", "not", "and", "def"}
)


@settings(max_examples=40)
@given(
    ccv=st.sampled_from(sorted(CCV_FORMS)),
    gbm=st.sampled_from(sorted(GBM_FORMS)),
    a=_IDENT,
    b=_IDENT,
)
def test_aliasing_does_not_change_the_answers(ccv, gbm, a, b):
    if a == b:
        return
    got = answers(_program(ccv, gbm, a, b))
    assert got["model_families"] == ("gbdt",)
    assert got["probability_calibration"] == "yes"
    assert got["class_imbalance_handling"] == "class_weight"
    assert got["recalibration_after_imbalance"] == "yes"


def test_calls_resolve_across_the_files_of_a_version():
    main = HEAD + textwrap.dedent("""
        from helpers.models import make_model as mk
        import helpers.post as post
        m = mk().fit(X, y)
        p = post.calibrate(m.predict_proba(X)[:, 1], y, m.predict_proba(Xt)[:, 1])
        pd.DataFrame({"p": p}).to_csv("submission.csv")
    """)
    models = """
        from xgboost import XGBClassifier
        def make_model():
            return XGBClassifier(scale_pos_weight=9.0)
    """
    post = """
        from sklearn.isotonic import IsotonicRegression
        def calibrate(p_fit, y_fit, p_new):
            return IsotonicRegression().fit(p_fit, y_fit).predict(p_new)
    """
    got = answers(main, helpers__models=models, helpers__post=post, helpers____init__="")
    assert got["model_families"] == ("gbdt",)
    assert got["class_imbalance_handling"] == "class_weight"
    assert got["probability_calibration"] == "yes"


def test_relative_imports_inside_a_package():
    main = HEAD + "from pkg.train import run\nrun(X, y, Xt)\n"
    train = """
        import pandas as pd
        from .zoo import forest
        def run(X, y, Xt):
            p = forest().fit(X, y).predict_proba(Xt)[:, 1]
            pd.DataFrame({"p": p}).to_csv("submission.csv")
    """
    zoo = "from sklearn.ensemble import RandomForestClassifier\ndef forest():\n    return RandomForestClassifier()\n"
    got = answers(main, pkg____init__="", pkg__train=train, pkg__zoo=zoo)
    assert got["model_families"] == ("random_forest",)


def test_module_names_and_common_root():
    assert module_names(["a/b/c.py", "a/__init__.py", "x.py"]) == ["a.b.c", "a", "x"]
    assert common_root(["code/v1/a.py", "code/v1/b/c.py"]) == "code/v1"
    assert common_root(["a.py", "b/c.py"]) == ""


# --------------------------------------------------------------------------- what counts

DEAD_SNIPPETS = [
    "from sklearn.isotonic import IsotonicRegression\n"
    "def unused_cal(p, y):\n    return IsotonicRegression().fit(p, y).predict(p)\n",
    "from imblearn.over_sampling import SMOTE\n"
    "def unused_smote(X, y):\n    return SMOTE().fit_resample(X, y)\n",
    "from scipy.stats import rankdata\ndef unused_rank(p):\n    return rankdata(p) / len(p)\n",
    "from sklearn.linear_model import LogisticRegression\n"
    "def unused_weighted(X, y):\n    return LogisticRegression(class_weight='balanced').fit(X, y)\n",
]
LIVE = (
    HEAD
    + """
from sklearn.ensemble import HistGradientBoostingClassifier
m = HistGradientBoostingClassifier().fit(X, y)
pd.DataFrame({"p": m.predict_proba(Xt)[:, 1]}).to_csv("submission.csv")
"""
)


@settings(max_examples=30)
@given(st.lists(st.sampled_from(DEAD_SNIPPETS), max_size=4), st.booleans())
def test_code_that_never_reaches_the_submission_does_not_count(snippets, at_end):
    dead = "\n".join(snippets)
    code = LIVE + "\n" + dead if at_end else dead + "\n" + LIVE
    got = answers(code)
    assert got == answers(LIVE)
    assert got["probability_calibration"] == "no"
    assert got["averaged_ranks_as_probabilities"] == "no"
    assert got["class_imbalance_handling"] == "none"
    assert got["model_families"] == ("gbdt",)


def test_exploratory_model_comparison_is_not_the_submitted_model():
    code = LIVE + textwrap.dedent("""
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import cross_val_score
        print(cross_val_score(LogisticRegression(class_weight="balanced"), X, y, cv=5).mean())
    """)
    got = answers(code)
    assert got["model_families"] == ("gbdt",)
    assert got["class_imbalance_handling"] == "none"
    assert got["validation_design"] == ("kfold_cv",)  # the CV did run


def test_the_analysed_code_is_never_executed(tmp_path):
    marker = tmp_path / "executed"
    code = f"""
import os, pickle, subprocess
open({str(marker)!r}, "w").write("x")
os.system("touch {marker}")
subprocess.run(["touch", {str(marker)!r}])
pickle.loads(b"garbage")
raise SystemExit(3)
"""
    found, trace = annotate_sources([("evil.py", code)])
    assert not marker.exists()
    assert found["validation_design"].value == ("none",)


@settings(max_examples=60)
@given(st.text(alphabet=string.printable, max_size=300))
def test_arbitrary_text_never_raises(text):
    found, trace = annotate_sources([("x.py", text)], CLS)
    assert found["averaged_ranks_as_probabilities"].value in ("yes", "no", "uncertain")


@pytest.mark.parametrize(
    "code",
    [
        "x = " + "(" * 3000 + "1" + ")" * 3000,
        "def f(n):\n    return f(n - 1) + f(n - 2)\nf(30)\n",
        "while True:\n    x = [x, x]\n",
        "a = 'x' * 10**9\nb = 2 ** 10 ** 9\n",
        "\x00\x01 not python",
    ],
)
def test_pathological_input_terminates_with_a_note_or_an_answer(code):
    found, trace = annotate_sources([("x.py", code)], CLS)
    assert "class_imbalance_handling" in found


# --------------------------------------------------------------------------- individual rules


def test_rank_transforms_of_predictions():
    base = (
        HEAD
        + """
from sklearn.linear_model import LogisticRegression
from sklearn.ensemble import RandomForestClassifier
a = LogisticRegression().fit(X, y).predict_proba(Xt)[:, 1]
b = RandomForestClassifier().fit(X, y).predict_proba(Xt)[:, 1]
"""
    )
    forms = {
        "pct": "p = (pd.Series(a).rank(pct=True) + pd.Series(b).rank(pct=True)) / 2",
        "argsort": "p = (a.argsort().argsort() + np.argsort(np.argsort(b))) / (2 * len(a))",
        "rankdata": "from scipy.stats import rankdata\np = np.mean([rankdata(a), rankdata(b)], axis=0) / len(a)",
        "quantile": "from sklearn.preprocessing import QuantileTransformer\n"
        "p = QuantileTransformer().fit_transform(((a + b) / 2).reshape(-1, 1)).ravel()",
    }
    for name, line in forms.items():
        got = answers(base + line + "\npd.DataFrame({'p': p}).to_csv('submission.csv')\n")
        assert got["averaged_ranks_as_probabilities"] == "yes", name
        assert got["ensembling"] == ("model_blend",), name
    plain = answers(base + "p = (a + b) / 2\npd.DataFrame({'p': p}).to_csv('submission.csv')\n")
    assert plain["averaged_ranks_as_probabilities"] == "no"


def test_ranks_recalibrated_by_isotonic_regression_are_not_submitted_as_ranks():
    code = (
        HEAD
        + """
from scipy.stats import rankdata
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.ensemble import RandomForestClassifier
m1, m2 = LogisticRegression().fit(X, y), RandomForestClassifier().fit(X, y)
r = lambda Z: (rankdata(m1.predict_proba(Z)[:, 1]) + rankdata(m2.predict_proba(Z)[:, 1])) / (2 * len(Z))
iso = IsotonicRegression().fit(r(X), y)
pd.DataFrame({"p": iso.predict(r(Xt))}).to_csv("submission.csv")
"""
    )
    got = answers(code)
    assert got["averaged_ranks_as_probabilities"] == "no"
    assert got["probability_calibration"] == "yes"


def test_stacking_versus_platt_scaling():
    base = (
        HEAD
        + """
from sklearn.linear_model import LogisticRegression
from sklearn.ensemble import RandomForestClassifier, HistGradientBoostingClassifier
a = RandomForestClassifier().fit(X, y)
b = HistGradientBoostingClassifier().fit(X, y)
pa, pb = a.predict_proba(X)[:, 1], b.predict_proba(X)[:, 1]
ta, tb = a.predict_proba(Xt)[:, 1], b.predict_proba(Xt)[:, 1]
"""
    )
    stack = (
        base
        + """
meta = LogisticRegression().fit(np.column_stack([pa, pb]), y)
pd.DataFrame({"p": meta.predict_proba(np.column_stack([ta, tb]))[:, 1]}).to_csv("submission.csv")
"""
    )
    platt = (
        base
        + """
z = np.log((pa + pb) / 2 / (1 - (pa + pb) / 2)).reshape(-1, 1)
cal = LogisticRegression().fit(z, y)
zt = np.log((ta + tb) / 2 / (1 - (ta + tb) / 2)).reshape(-1, 1)
pd.DataFrame({"p": cal.predict_proba(zt)[:, 1]}).to_csv("submission.csv")
"""
    )
    s, p = answers(stack), answers(platt)
    assert s["ensembling"] == ("stacking",) and s["probability_calibration"] == "no"
    assert s["model_families"] == ("gbdt", "random_forest")
    assert p["ensembling"] == ("model_blend",) and p["probability_calibration"] == "yes"
    assert p["model_families"] == ("gbdt", "random_forest")


@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        ("w = compute_sample_weight('balanced', y)", "class_weight"),
        ("w = np.where(y == 1, 10.0, 1.0)", "class_weight"),
        ("w = y.map({0: 1.0, 1: 5.0})", "class_weight"),
        ("w = tr['survey_weight']", "none"),
        ("w = None", "none"),
    ],
)
def test_sample_weights_count_when_derived_from_the_classes(weights, expected):
    code = (
        HEAD
        + f"""
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.ensemble import GradientBoostingClassifier
{weights}
m = GradientBoostingClassifier().fit(X, y, sample_weight=w)
pd.DataFrame({{"p": m.predict_proba(Xt)[:, 1]}}).to_csv("submission.csv")
"""
    )
    assert answers(code)["class_imbalance_handling"] == expected


@pytest.mark.parametrize(
    ("sampling", "expected"),
    [
        (
            "pos = np.flatnonzero(y == 1)\nextra = rng.choice(pos, size=500, replace=True)\n"
            "rows = np.concatenate([np.arange(len(y)), extra])",
            "oversampling",
        ),
        ("rows = np.flatnonzero((y == 1) | (rng.random(len(y)) < 0.3))", "undersampling"),
        ("rows = rng.choice(len(y), size=len(y), replace=True)", "none"),  # plain bootstrap
    ],
)
def test_hand_written_resampling(sampling, expected):
    code = (
        HEAD
        + f"""
from sklearn.ensemble import RandomForestClassifier
rng = np.random.default_rng(0)
y = y.to_numpy()
{sampling}
m = RandomForestClassifier().fit(X.iloc[rows], y[rows])
pd.DataFrame({{"p": m.predict_proba(Xt)[:, 1]}}).to_csv("submission.csv")
"""
    )
    assert answers(code)["class_imbalance_handling"] == expected


def test_bootstrap_confidence_intervals_are_not_resampling():
    code = (
        LIVE
        + """
from sklearn.metrics import roc_auc_score
rng = np.random.default_rng(0)
pv = m.predict_proba(X)[:, 1]
for _ in range(200):
    idx = rng.choice(len(y), len(y), replace=True)
    print(roc_auc_score(y.to_numpy()[idx], pv[idx]))
"""
    )
    assert answers(code)["class_imbalance_handling"] == "none"


SURV_HEAD = """
import numpy as np
import pandas as pd
from lifelines import CoxPHFitter
df = pd.read_csv("train.csv")
te = pd.read_csv("test.csv")
grid = np.array([100.0, 200.0])
"""


@pytest.mark.parametrize(
    ("fit", "expected"),
    [
        ("cph.fit(df, duration_col='duration', event_col='event')", "correct"),
        ("cph.fit(df, duration_col='duration')", "censored_as_death"),
        (
            "df['event'] = 1\ncph.fit(df, duration_col='duration', event_col='event')",
            "censored_as_death",
        ),
        (
            "df['E1'] = np.ones_like(df['event'])\ncph.fit(df, duration_col='duration', event_col='E1')",
            "censored_as_death",
        ),
    ],
)
def test_censoring_in_lifelines_fits(fit, expected):
    code = (
        SURV_HEAD
        + f"""
cph = CoxPHFitter()
{fit}
s = cph.predict_survival_function(te, times=grid).T
s.to_csv("submission.csv")
"""
    )
    got = answers(code, SURV)
    assert got["censoring_handling"] == expected
    assert got["class_imbalance_handling"] == "na"


def test_censoring_is_na_for_classification_tasks():
    assert answers(LIVE)["censoring_handling"] == "na"


def test_uncertain_without_a_submission_file_the_analysis_can_follow():
    code = (
        HEAD
        + """
from sklearn.isotonic import IsotonicRegression
from sklearn.ensemble import RandomForestClassifier
m = RandomForestClassifier().fit(X, y)
p = IsotonicRegression().fit(m.predict_proba(X)[:, 1], y).predict(m.predict_proba(Xt)[:, 1])
save_somehow(p)
"""
    )
    got = answers(code)
    assert got["probability_calibration"] == "uncertain"
    assert got["model_families"] == ("random_forest",)


def test_subgroup_checks_need_a_metric_within_demographic_groups():
    code = (
        LIVE
        + """
from sklearn.metrics import roc_auc_score
va = tr.assign(p=m.predict_proba(X)[:, 1])
for g, part in va.groupby("gender"):
    print(g, roc_auc_score(part["y"], part["p"]))
"""
    )
    assert answers(code)["subgroup_checks"] == "yes"
    assert answers(LIVE + "\nprint(tr.groupby('gender').size())\n")["subgroup_checks"] == "no"


def test_missing_indicators_must_reach_the_model():
    used = (
        HEAD
        + """
from sklearn.ensemble import HistGradientBoostingClassifier
X = X.assign(a_missing=X["a"].isna().astype(int))
m = HistGradientBoostingClassifier().fit(X, y)
pd.DataFrame({"p": m.predict_proba(Xt)[:, 1]}).to_csv("submission.csv")
"""
    )
    only_printed = LIVE + "\nprint(X.isna().mean())\nX = X.fillna(X.median())\n"
    assert answers(used)["missingness_features"] == "yes"
    assert answers(only_printed)["missingness_features"] == "no"
    assert (
        answers(used, TaskFacts(kind="classification", ehr=False))["missingness_features"] == "na"
    )


def test_group_split_by_hospital_is_validation_under_shift():
    code = (
        HEAD
        + """
from sklearn.ensemble import HistGradientBoostingClassifier
target = tr["hospital"] == "B"
m = HistGradientBoostingClassifier().fit(X[~target], y[~target])
print(m.score(X[target], y[target]))
pd.DataFrame({"p": m.predict_proba(Xt)[:, 1]}).to_csv("submission.csv")
"""
    )
    shift = TaskFacts(kind="sequential", ehr=True, external_shift=True)
    got = answers(code, shift)
    assert got["validation_under_shift"] == "yes"
    assert got["validation_design"] == ("group_split",)
    assert answers(LIVE, shift)["validation_under_shift"] == "no"


def test_evidence_is_a_line_of_the_file_it_cites(tmp_path: Path):
    found, trace = annotate_sources([("train.py", _program("from_as", "as", "cc", "lg"))], CLS)
    text = _program("from_as", "as", "cc", "lg").splitlines()
    for f in found.values():
        for i, line in f.evidence:
            assert trace.files[i] == "train.py"
            assert 1 <= line <= len(text)
    lines = {text[line - 1] for _, line in found["probability_calibration"].evidence}
    assert any("cc(" in t for t in lines)
