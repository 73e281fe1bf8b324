"""Hand-made splits of the rows, and random numbers that are data (issue 33 item 6).

Real scripts split by hand: index slices (``X[:n_train]``, ``iloc[:cut]``), boolean masks by time
(``df[df.date < cutoff]``), ``np.split`` and k-fold loops written without scikit-learn. They also
draw synthetic data with ``np.random.*``, which used to read as a random hold-out whose evidence
cited the data-generation lines. Each case states the design and the line the evidence must cite
(the split itself).
"""

from __future__ import annotations

import ast
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from automd_analysis.annotate.code import annotate_sources
from automd_analysis.annotate.hand_splits import (
    MIN_LITERAL_CUT,
    is_cut,
    random_fold_ids,
    selected_rows,
    time_column,
)
from automd_analysis.annotate.practices import TaskFacts
from automd_analysis.annotate.values import Value

CLS = TaskFacts(kind="classification", ehr=True, external_shift=False)
HEAD = """
import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
df = pd.read_csv("train.csv")
te = pd.read_csv("test.csv")
"""
TAIL = """
pd.DataFrame({"p": m.predict_proba(te[["a"]])[:, 1]}).to_csv("submission.csv")
"""


def _validation(body: str) -> tuple[tuple, list[str]]:
    """The design and the source lines its evidence cites."""
    code = HEAD + textwrap.dedent(body) + TAIL
    found, trace = annotate_sources([("train.py", code)], CLS, ["train.py"])
    assert not trace.notes
    lines = code.splitlines()
    f = found["validation_design"]
    return f.value, [lines[line - 1].strip() for _, line in f.evidence]


FIT = 'm = LogisticRegression().fit({rows}[["a"]], {rows}["y"])'
CASES = {
    # index slices
    "literal_bound": (
        f"train, valid = df.iloc[:8000], df.iloc[8000:]\n{FIT.format(rows='train')}",
        "single_holdout",
        "train, valid = df.iloc[:8000], df.iloc[8000:]",
    ),
    "negative_literal_bound": (
        f"train = df.iloc[:-365]\nvalid = df.iloc[-365:]\n{FIT.format(rows='train')}",
        "single_holdout",
        "train = df.iloc[:-365]",
    ),
    "length_minus_literal": (
        "cut = len(df) - 500\ntrain, valid = df.iloc[:cut], df.iloc[cut:]\n"
        + FIT.format(rows="train"),
        "single_holdout",
        "train, valid = df.iloc[:cut], df.iloc[cut:]",
    ),
    "count_before_a_date": (
        'df = df.sort_values("admit_date")\ncut = (df.admit_date < "2019-01-01").sum()\n'
        "train, valid = df.iloc[:cut], df.iloc[cut:]\n" + FIT.format(rows="train"),
        "single_holdout",
        "train, valid = df.iloc[:cut], df.iloc[cut:]",
    ),
    "searchsorted": (
        'cut = np.searchsorted(df["admit_date"].values, np.datetime64("2019-01-01"))\n'
        "train, valid = df[:cut], df[cut:]\n" + FIT.format(rows="train"),
        "single_holdout",
        "train, valid = df[:cut], df[cut:]",
    ),
    # masks by time
    "date_mask_both_sides": (
        'train = df[df["date"] < "2019-01-01"]\nvalid = df[df["date"] >= "2019-01-01"]\n'
        + FIT.format(rows="train"),
        "single_holdout",
        'train = df[df["date"] < "2019-01-01"]',
    ),
    "mask_and_its_inverse": (
        "late = df.admit_year >= 2019\ntrain, valid = df[~late], df[late]\n"
        + FIT.format(rows="train"),
        "single_holdout",
        "late = df.admit_year >= 2019",
    ),
    "cutoff_on_the_right": (
        'cutoff = pd.Timestamp("2019-01-01")\ntrain = df[cutoff > pd.to_datetime(df.visit_date)]\n'
        "valid = df[cutoff <= pd.to_datetime(df.visit_date)]\n" + FIT.format(rows="train"),
        "single_holdout",
        "train = df[cutoff > pd.to_datetime(df.visit_date)]",
    ),
    "one_year_against_another": (
        "train = df[df.year == 2018]\ntest = df[df.year == 2019]\n" + FIT.format(rows="train"),
        "single_holdout",
        "train = df[df.year == 2018]",
    ),
    # np.split and k folds by hand
    "np_split_indices": (
        "train, valid, hold = np.split(df, [int(0.6 * len(df)), int(0.8 * len(df))])\n"
        + FIT.format(rows="train"),
        "single_holdout",
        "train, valid, hold = np.split(df, [int(0.6 * len(df)), int(0.8 * len(df))])",
    ),
    "array_split_folds": (
        "folds = np.array_split(np.arange(len(df)), 5)\nfor k in range(5):\n"
        "    tr = np.concatenate([folds[j] for j in range(5) if j != k])\n"
        '    m = LogisticRegression().fit(df[["a"]].values[tr], df["y"].values[tr])',
        "kfold_cv",
        "folds = np.array_split(np.arange(len(df)), 5)",
    ),
    "window_folds_and_concatenated_rest": (
        "n = len(df)\nsize = n // 5\nidx = np.arange(n)\nfor i in range(5):\n"
        "    va = idx[i * size : (i + 1) * size]\n"
        "    tr = np.concatenate([idx[: i * size], idx[(i + 1) * size :]])\n"
        '    m = LogisticRegression().fit(df[["a"]].values[tr], df["y"].values[tr])',
        "kfold_cv",
        "tr = np.concatenate([idx[: i * size], idx[(i + 1) * size :]])",
    ),
    "strided_folds": (
        "idx = np.arange(len(df))\nfor i in range(5):\n    tr = np.setdiff1d(idx, idx[i::5])\n"
        '    m = LogisticRegression().fit(df[["a"]].values[tr], df["y"].values[tr])',
        "kfold_cv",
        "tr = np.setdiff1d(idx, idx[i::5])",
    ),
    "random_fold_ids": (
        "fold = np.random.randint(5, size=len(df))\nfor k in range(5):\n"
        "    tr = df[fold != k]\n    " + FIT.format(rows="tr"),
        "kfold_cv",
        "tr = df[fold != k]",
    ),
    "precomputed_fold_column": (
        'folds = pd.read_csv("folds.csv")\nfor k in range(5):\n'
        '    tr = df[folds["kfold"] != k]\n    ' + FIT.format(rows="tr"),
        "kfold_cv",
        'tr = df[folds["kfold"] != k]',
    ),
    # rows drawn at random, and random numbers that are data
    "random_mask": (
        "mask = np.random.rand(len(df)) < 0.8\n" + FIT.format(rows="df[mask]"),
        "single_holdout",
        "mask = np.random.rand(len(df)) < 0.8",
    ),
    "random_mask_stored_in_a_column": (
        'df["is_val"] = np.random.default_rng(1).random(len(df)) < 0.2\n'
        'train = df[~df["is_val"]]\n' + FIT.format(rows="train"),
        "single_holdout",
        'df["is_val"] = np.random.default_rng(1).random(len(df)) < 0.2',
    ),
    "random_indices": (
        "idx = np.random.choice(len(df), size=800, replace=False)\n"
        + FIT.format(rows="df.iloc[idx]"),
        "single_holdout",
        "idx = np.random.choice(len(df), size=800, replace=False)",
    ),
    "random_indices_through_take": (
        "idx = np.random.default_rng(0).choice(len(df), 800, replace=False)\n"
        + FIT.format(rows="df.take(idx)"),
        "single_holdout",
        "idx = np.random.default_rng(0).choice(len(df), 800, replace=False)",
    ),
    # not splits
    "noise_feature": (
        'df["noise"] = np.random.default_rng(0).normal(size=len(df))\n'
        'm = LogisticRegression().fit(df[["a", "noise"]], df["y"])',
        "none",
        None,
    ),
    "synthetic_data_filtered_by_itself": (
        "df = pd.DataFrame(np.random.randn(1000, 2), columns=['a', 'b'])\n"
        "df['y'] = (df.a + np.random.randn(1000) > 0).astype(int)\n"
        "pos = df[df.b > 0]\n" + FIT.format(rows="pos"),
        "none",
        None,
    ),
    "random_binary_labels": (
        "df['y'] = np.random.default_rng(0).integers(0, 2, len(df))\n" + FIT.format(rows="df"),
        "none",
        None,
    ),
    "train_and_test_cut_apart": (
        'both = pd.get_dummies(pd.concat([df[["a"]], te[["a"]]]))\n'
        "X_tr, X_te = both.iloc[: len(df)], both.iloc[len(df) :]\n"
        'm = LogisticRegression().fit(X_tr, df["y"])',
        "none",
        None,
    ),
    "short_literal_cuts_strings": (
        'df["icd3"] = df["icd"].str[:3]\ndf["icd_rest"] = df["icd"].str[3:]\n'
        + FIT.format(rows="df"),
        "none",
        None,
    ),
    "one_sided_time_filter": (
        "df = df[df.year >= 2010]\n" + FIT.format(rows="df"),
        "none",
        None,
    ),
    "both_sides_of_a_duration_are_not_time": (
        "a, b = df[df.time < 365], df[df.time >= 365]\n" + FIT.format(rows="a"),
        "none",
        None,
    ),
    "comparing_two_dates_is_a_feature": (
        'df["late"] = df.admit_date < df.discharge_date\n'
        'df["early"] = df.admit_date >= df.discharge_date\n' + FIT.format(rows="df"),
        "none",
        None,
    ),
    "masks_by_time_stored_as_a_feature": (
        'df.loc[df.date < "2019-01-01", "period"] = 0\n'
        'df.loc[df.date >= "2019-01-01", "period"] = 1\n'
        'df["post"] = np.where(df.date >= "2019-01-01", 1, 0)\n'
        'm = LogisticRegression().fit(df[["a", "period", "post"]], df["y"])',
        "none",
        None,
    ),
    "split_not_reaching_a_fit": (
        "head, tail = df.iloc[:8000], df.iloc[8000:]\nprint(len(head), len(tail))\n"
        + FIT.format(rows="df"),
        "none",
        None,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hand_made_splits_and_their_evidence(case):
    body, design, cited = CASES[case]
    value, lines = _validation(body)
    assert value == (design,)
    if cited is None:
        assert lines == []
    else:
        assert cited in lines, lines


def test_synthetic_features_with_a_real_split_cite_the_split_only():
    body = """
    from sklearn.model_selection import train_test_split
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 5))
    noise = np.random.randn(1000)
    y = (X[:, 0] + noise > 0).astype(int)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25)
    m = LogisticRegression().fit(X_tr, y_tr)
    """
    assert _validation(body) == (
        ("single_holdout",),
        ["X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25)"],
    )


def test_random_rows_and_class_still_make_resampling():
    """Random numbers that select rows *and* the class keep the resampling rules."""
    code = HEAD + textwrap.dedent(
        """
        rng = np.random.default_rng(0)
        keep = (df["y"] == 1) | (rng.random(len(df)) < 0.3)
        m = LogisticRegression().fit(df[keep][["a"]], df[keep]["y"])
        pos = np.where(df["y"] == 1)[0]
        extra = rng.choice(pos, size=len(pos), replace=True)
        rows = np.concatenate([np.arange(len(df)), extra])
        m2 = LogisticRegression().fit(df.iloc[rows][["a"]], df.iloc[rows]["y"])
        """
    )
    for model, kind in (("m", "undersampling"), ("m2", "oversampling")):
        tail = f'pd.DataFrame({{"p": {model}.predict_proba(te[["a"]])[:, 1]}}).to_csv("submission.csv")'
        found, _ = annotate_sources([("t.py", code + tail)], CLS, ["t.py"])
        assert found["class_imbalance_handling"].value == kind
        assert found["validation_design"].value == ("none",)


def test_random_indices_into_a_torch_subset_are_a_holdout():
    code = """
    import numpy as np
    import pandas as pd
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, Subset, TensorDataset
    d = pd.read_csv("train.csv")
    ds = TensorDataset(torch.tensor(d[["a"]].values), torch.tensor(d["y"].values))
    fit_idx = np.random.default_rng(0).choice(len(ds), size=len(ds) * 4 // 5, replace=False)
    net = nn.Sequential(nn.Linear(1, 1))
    for xb, yb in DataLoader(Subset(ds, fit_idx), batch_size=64):
        loss = nn.BCEWithLogitsLoss()(net(xb).squeeze(1), yb)
        loss.backward()
    pd.DataFrame({"p": net(torch.tensor(d[["a"]].values)).detach().numpy().ravel()}).to_csv(
        "submission.csv"
    )
    """
    code = textwrap.dedent(code)
    found, _ = annotate_sources([("t.py", code)], CLS, ["t.py"])
    assert found["validation_design"].value == ("single_holdout",)
    split = next(i for i, line in enumerate(code.splitlines(), 1) if "fit_idx =" in line)
    assert found["validation_design"].evidence == ((0, split),)


# ---------------------------------------------------------------------------------- helpers


def _expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("df.date", True),
        ('df["admit_date"].dt.year', True),
        ("pd.to_datetime(df['charttime'])", True),
        ("visit_dates", True),
        ("df.intime", True),
        ("df.time", False),  # a survival duration
        ('df["days"]', False),
        ("df.age", False),
        ("df.date.quantile(0.8)", False),  # a cutoff computed from dates, not the column
        ("df.admission_type", True),
    ],
)
def test_time_column_names(text, expected):
    assert time_column(_expr(text)) is expected


def test_cut_points_and_fold_ids():
    assert is_cut(Value(const=MIN_LITERAL_CUT)) and is_cut(Value(const=-MIN_LITERAL_CUT))
    assert not is_cut(Value(const=MIN_LITERAL_CUT - 1)) and not is_cut(Value(const=True))
    assert not is_cut(Value())  # a bare length: train and test cut apart
    assert is_cut(Value(frozenset({("cut",)}))) and is_cut(Value(frozenset({("tmask", 3)})))
    consts = [Value(const=c) for c in (0, 5)]
    assert random_fold_ids("integers", consts, {}) == 5
    assert random_fold_ids("integers", [Value(const=0)], {"high": Value(const=10)}) == 10
    assert random_fold_ids("choice", [Value(const=4)], {}) == 4
    assert random_fold_ids("integers", [Value(const=0), Value(const=2)], {}) is None  # binary
    assert random_fold_ids("normal", consts, {}) is None


def test_selected_rows_needs_a_selector_not_the_data_itself():
    rand = ("randval", "norep", 7)
    mask = Value(frozenset({rand}))
    assert selected_rows(Value(), mask) == {("rand", "norep", 7)}
    assert selected_rows(mask, mask) == set()
    stored = Value(frozenset({("randmask", "norep", 7)}))
    assert selected_rows(stored, stored) == {("rand", "norep", 7)}
    by_time = Value(frozenset({("tmask", 4)}))
    assert selected_rows(Value(), by_time) == {("split", ("single_holdout",), 4)}
    assert selected_rows(by_time, by_time) == set()  # a stored period column selecting rows


# --------------------------------------------------------------------------------- property

DRAWS = [
    "np.random.rand(len(df))",
    "np.random.randn(len(df))",
    "np.random.default_rng(3).random(len(df))",
    "np.random.default_rng(3).normal(size=len(df))",
    "np.random.uniform(0, 1, len(df))",
    "np.random.default_rng(3).integers(0, 2, len(df))",
    "np.random.choice([0, 1], size=len(df))",
    "np.random.binomial(1, 0.5, len(df))",
]


@given(st.sampled_from(DRAWS), st.integers(1, 4))
def test_property_random_columns_are_data_never_a_split(draw, n_columns):
    """Any number of random feature columns, fitted on every row: no validation at all."""
    names = [f"r{i}" for i in range(n_columns)]
    body = "".join(f'df["{n}"] = {draw}\n' for n in names)
    body += f'm = LogisticRegression().fit(df[["a", {", ".join(map(repr, names))}]], df["y"])'
    assert _validation(body) == (("none",), [])


@given(st.sampled_from(DRAWS[:5]), st.floats(0.05, 0.95))
def test_property_a_random_mask_that_selects_rows_is_a_holdout(draw, share):
    body = f"keep = {draw} < {share!r}\n" + FIT.format(rows="df[keep]")
    assert _validation(body) == (("single_holdout",), [f"keep = {draw} < {share!r}"])


@given(
    st.integers(-100_000, 100_000),
    st.sampled_from(["df", "df.iloc", "df.values", "df.loc"]),
    st.booleans(),
)
def test_property_a_literal_cut_is_a_split_when_long_enough(k, base, tail_first):
    head, tail = f"{base}[:{k}]", f"{base}[{k}:]"
    pair = f"valid, train = {tail}, {head}" if tail_first else f"train, valid = {head}, {tail}"
    value, lines = _validation(pair + "\n" + FIT.format(rows="train"))
    if abs(k) >= MIN_LITERAL_CUT:
        assert (value, lines) == (("single_holdout",), [pair])
    else:
        assert (value, lines) == (("none",), [])


TIME_COLUMNS = ["date", "admit_date", "admittime", "year", "visit_datetime", "charttime"]
SIDES = {"<": ">=", "<=": ">", ">": "<=", "==": "!="}


@given(st.sampled_from(TIME_COLUMNS), st.sampled_from(sorted(SIDES)), st.booleans())
def test_property_masks_by_time_need_two_sides(column, op, both):
    first = f'train = df[df["{column}"] {op} cutoff]'
    body = f'cutoff = df["{column}"].quantile(0.8)\n{first}\n'
    if both:
        body += f'valid = df[df["{column}"] {SIDES[op]} cutoff]\n'
    value, lines = _validation(body + FIT.format(rows="train"))
    if both:
        assert value == ("single_holdout",) and first in lines
    else:
        assert (value, lines) == (("none",), [])


@pytest.mark.parametrize(
    ("line", "design"),
    [
        ("a, b = df[:{big}], df[{big}:]", "none"),
        ("a, b = df[df.date < {big}], df[df.date >= {big}]", "none"),
        ("p = np.random.permutation(9)\na, b = p[:{big}], p[{big}:]", "single_holdout"),
        ("a = np.array_split(df, {big})\nb = np.random.randint(0, {big}, 9)", "none"),
        ("m = LogisticRegression(C={big}).fit(df[['a']], df['y'])", "none"),
    ],
)
def test_integer_literals_without_a_decimal_repr_are_read(line, design):
    """A hexadecimal literal of 16,000 bits parses, but has no decimal ``repr`` (Python >= 3.11
    refuses more than 4,300 digits): it is read as an unknown number, never a crash."""
    big = "0x" + "f" * 4000
    body = line.format(big=big) + "\nm = LogisticRegression().fit(df[['a']], df['y'])"
    assert _validation(body)[0] == (design,)
