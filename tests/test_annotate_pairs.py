"""Change types between two versions from their code (paper App. H categories)."""

from __future__ import annotations

from automd_analysis.annotate.code import analyse_sources
from automd_analysis.annotate.pairs import VersionCode, changed_lines, pair_changes
from automd_analysis.annotate.practices import code_findings, code_signature

HEAD = '''"""Step {step}: {what}."""
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
tr, te = pd.read_csv("train.csv"), pd.read_csv("test.csv")
X, y, Xt = tr[["a", "b"]], tr["y"], te[["a", "b"]]
'''
TAIL = 'pd.DataFrame({"p": m.predict_proba(Xt)[:, 1]}).to_csv("submission.csv")\n'


def _version(path: str, body: str, step: int = 1, what: str = "x") -> VersionCode:
    text = HEAD.format(step=step, what=what) + body + TAIL
    trace = analyse_sources([(path, text)])
    answers = {k: f.value for k, f in code_findings(trace).items()}
    return VersionCode(answers, code_signature(trace), ((path, text),))


BASE = "m = HistGradientBoostingClassifier(max_iter=100).fit(X, y)\n"


def test_identical_code_with_a_new_docstring_and_import_has_no_change():
    a = _version("code/v1/train.py", BASE, 1, "baseline")
    b = _version("code/v2/train.py", "import numpy as np\n" + BASE, 2, "rerun")
    assert pair_changes(a, b) == ([], [])


def test_hyperparameters_preprocessing_and_features():
    a = _version("code/v1/train.py", BASE)
    hp = _version("code/v2/train.py", BASE.replace("max_iter=100", "max_iter=300"))
    assert pair_changes(a, hp) == (["hyperparameter_tuning"], ["code/v2/train.py:6"])
    pre = _version("code/v2/train.py", "X = X.fillna(X.median())\n" + BASE)
    assert pair_changes(a, pre)[0] == ["preprocessing"]
    feat = _version("code/v2/train.py", 'X["ab"] = X["a"] * X["b"]\n' + BASE)
    assert pair_changes(a, feat)[0] == ["feature_engineering"]


def test_a_new_helper_counts_only_where_it_is_called():
    helper = "def unused(frame):\n    return frame.fillna(0)\n"
    a = _version("code/v1/train.py", BASE)
    b = _version("code/v2/train.py", helper + BASE)
    assert pair_changes(a, b)[0] == []
    removed, added = changed_lines(a.files, b.files)
    assert removed == [] and added == []


def test_model_family_and_removal_evidence_cites_the_earlier_version():
    a = _version("code/v1/train.py", "X = X.fillna(0)\n" + BASE)
    b = _version("code/v2/train.py", BASE)
    changes, evidence = pair_changes(a, b)
    assert changes == ["preprocessing"] and evidence == ["code/v1/train.py:6"]
    rf = _version(
        "code/v2/train.py",
        "from sklearn.ensemble import RandomForestClassifier\n"
        "m = RandomForestClassifier().fit(X, y)\n",
    )
    assert "model_family" in pair_changes(a, rf)[0]
