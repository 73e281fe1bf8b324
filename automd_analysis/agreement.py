"""Agreement between two annotators: Cohen's kappa, precision/recall per value, confusion.

Pure functions on sequences of labels, plus :func:`agreement_table` over two sets of
:class:`~automd_analysis.codebook.Annotations` (e.g. harness ground truth vs
``automd annotate``). Multi-valued codebook fields (``model_families``, ``ensembling``,
``validation_design``) are compared value by value: each (run, allowed value) pair is one binary
"present/absent" rating, and kappa, precision and recall are computed over those pairs;
``exact`` is the share of runs whose whole set agrees.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from automd_analysis.codebook import CODEBOOK, Annotations

__all__ = [
    "agreement_table",
    "cohen_kappa",
    "confusion",
    "confusion_table",
    "pair_agreement",
    "paired_answers",
    "precision_recall",
]


def _labels(a: Sequence, b: Sequence, labels: Sequence | None) -> list:
    if len(a) != len(b):
        raise ValueError(f"the two raters have {len(a)} and {len(b)} ratings; need equal lengths")
    if labels is not None:
        return list(labels)
    return sorted(set(a) | set(b), key=str)


def confusion(a: Sequence, b: Sequence, labels: Sequence | None = None) -> tuple[list, np.ndarray]:
    """Confusion matrix ``C[i, j]`` = number of items rated ``labels[i]`` by ``a`` and ``labels[j]``
    by ``b``.

    Parameters
    ----------
    a, b : sequence
        Ratings of the same items by two raters (``a`` is the reference, rows).
    labels : sequence, optional
        Row/column order; default the sorted union of both. Ratings outside ``labels`` are
        ignored.

    Returns
    -------
    (list, ndarray of int)

    Examples
    --------
    >>> labs, m = confusion(["yes", "no", "no"], ["yes", "yes", "no"])
    >>> labs, m.tolist()
    (['no', 'yes'], [[1, 1], [0, 1]])
    """
    labs = _labels(a, b, labels)
    index = {lab: i for i, lab in enumerate(labs)}
    m = np.zeros((len(labs), len(labs)), dtype=np.int64)
    for x, y in zip(a, b, strict=True):
        if x in index and y in index:
            m[index[x], index[y]] += 1
    return labs, m


def cohen_kappa(a: Sequence, b: Sequence, labels: Sequence | None = None) -> float:
    """Cohen's kappa: ``(p_o - p_e) / (1 - p_e)``.

    ``p_o`` is the observed share of agreement and ``p_e = sum_k p_a(k) p_b(k)`` the agreement
    expected from the raters' marginal frequencies. When ``p_e == 1`` (both raters always give the
    same single label) kappa is undefined and NaN is returned, as
    :func:`sklearn.metrics.cohen_kappa_score` does.

    Parameters
    ----------
    a, b : sequence
        Ratings of the same items.
    labels : sequence, optional
        Labels to use (others are ignored).

    Returns
    -------
    float

    See Also
    --------
    sklearn.metrics.cohen_kappa_score : the reference implementation (unweighted).

    References
    ----------
    Cohen J. A coefficient of agreement for nominal scales. Educ Psychol Meas 1960;20:37-46.

    Examples
    --------
    >>> round(cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"]), 4)
    0.5
    """
    _, m = confusion(a, b, labels)
    n = m.sum()
    if n == 0:
        return float("nan")
    po = np.trace(m) / n
    pe = float(np.sum(m.sum(axis=1) * m.sum(axis=0))) / (n * n)
    if pe >= 1.0:
        return float("nan")
    return float((po - pe) / (1.0 - pe))


def precision_recall(a: Sequence, b: Sequence, labels: Sequence | None = None) -> pd.DataFrame:
    """Per label: precision and recall of rater ``b`` against reference ``a``.

    ``precision(k) = #(a = k and b = k) / #(b = k)``, ``recall(k) = #(a = k and b = k) / #(a = k)``
    (NaN when the denominator is 0).

    Returns
    -------
    DataFrame
        ``label, n_reference, n_rated, precision, recall``.

    Examples
    --------
    >>> precision_recall(["yes", "no", "no"], ["yes", "yes", "no"]).round(3).to_dict("records")[1]
    {'label': 'yes', 'n_reference': 1, 'n_rated': 2, 'precision': 0.5, 'recall': 1.0}
    """
    labs, m = confusion(a, b, labels)
    rows = []
    for i, lab in enumerate(labs):
        tp, n_ref, n_rated = int(m[i, i]), int(m[i].sum()), int(m[:, i].sum())
        rows.append(
            {
                "label": lab,
                "n_reference": n_ref,
                "n_rated": n_rated,
                "precision": tp / n_rated if n_rated else float("nan"),
                "recall": tp / n_ref if n_ref else float("nan"),
            }
        )
    return pd.DataFrame(rows, columns=["label", "n_reference", "n_rated", "precision", "recall"])


def paired_answers(
    reference: Mapping[str, Annotations], rated: Mapping[str, Annotations], field: str
) -> tuple[list[str], list, list]:
    """Runs answered by both, with both answers to ``field`` (tuples for multi-valued fields).

    Examples
    --------
    >>> from automd_analysis.codebook import Annotations, Answer
    >>> ref = {"r1": Annotations("h", {"subgroup_checks": Answer("subgroup_checks", "no", ())}, ())}
    >>> paired_answers(ref, ref, "subgroup_checks")
    (['r1'], ['no'], ['no'])
    """
    runs, a, b = [], [], []
    for run_id in sorted(set(reference) & set(rated)):
        x = reference[run_id].answers.get(field)
        y = rated[run_id].answers.get(field)
        if x is None or y is None:
            continue
        runs.append(run_id)
        a.append(x.value)
        b.append(y.value)
    return runs, a, b


def _binary_ratings(a: list, b: list, values: Sequence[str]) -> tuple[list, list, list]:
    """One (value present in a, present in b) rating per run and allowed value."""
    which, ra, rb = [], [], []
    for x, y in zip(a, b, strict=True):
        for v in values:
            which.append(v)
            ra.append(v in x)
            rb.append(v in y)
    return which, ra, rb


def agreement_table(
    reference: Mapping[str, Annotations],
    rated: Mapping[str, Annotations],
    fields: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Agreement of ``rated`` with ``reference`` per codebook field, and per field value.

    Parameters
    ----------
    reference : mapping
        Run id -> reference annotations (e.g. harness ground truth).
    rated : mapping
        Run id -> annotations to assess (e.g. ``automd annotate``).
    fields : sequence of str, optional
        Default: every codebook field.

    Returns
    -------
    (DataFrame, DataFrame)
        Per field: ``field, n_runs, exact, kappa, multi`` (kappa pooled over (run, value)
        ratings for multi-valued fields). Per value: ``field, value, n_reference, n_rated,
        precision, recall``.

    See Also
    --------
    cohen_kappa, precision_recall, confusion_table

    Examples
    --------
    >>> from automd_analysis.codebook import Annotations, Answer
    >>> def ann(v):
    ...     return Annotations("x", {"subgroup_checks": Answer("subgroup_checks", v, ())}, ())
    >>> ref = {"a": ann("no"), "b": ann("yes"), "c": ann("no")}
    >>> got = {"a": ann("no"), "b": ann("yes"), "c": ann("yes")}
    >>> fields, values = agreement_table(ref, got, ["subgroup_checks"])
    >>> fields[["n_runs", "exact", "kappa"]].round(3).to_dict("records")
    [{'n_runs': 3, 'exact': 0.667, 'kappa': 0.4}]
    """
    rows, value_rows = [], []
    for name in fields or sorted(CODEBOOK):
        spec = CODEBOOK[name]
        runs, a, b = paired_answers(reference, rated, name)
        exact = float(np.mean([x == y for x, y in zip(a, b, strict=True)])) if runs else np.nan
        if spec.multi:
            which, ra, rb = _binary_ratings(a, b, spec.values)
            kappa = cohen_kappa(ra, rb, [False, True]) if runs else np.nan
            for v in spec.values:
                sel = [i for i, w in enumerate(which) if w == v]
                pr = precision_recall([ra[i] for i in sel], [rb[i] for i in sel], [False, True])
                hit = pr[pr["label"]].iloc[0] if len(pr) else None
                value_rows.append(_value_row(name, v, hit))
        else:
            kappa = cohen_kappa(a, b) if runs else np.nan
            pr = precision_recall(a, b, spec.values)
            for rec in pr.itertuples(index=False):
                value_rows.append(_value_row(name, rec.label, rec))
        rows.append(
            {
                "field": name,
                "n_runs": len(runs),
                "exact": exact,
                "kappa": kappa,
                "multi": spec.multi,
            }
        )
    return pd.DataFrame(rows), pd.DataFrame(value_rows)


def _value_row(field: str, value: str, rec) -> dict:
    if rec is None:
        return {
            "field": field,
            "value": value,
            "n_reference": 0,
            "n_rated": 0,
            "precision": np.nan,
            "recall": np.nan,
        }
    return {
        "field": field,
        "value": value,
        "n_reference": int(rec.n_reference),
        "n_rated": int(rec.n_rated),
        "precision": float(rec.precision),
        "recall": float(rec.recall),
    }


def confusion_table(
    reference: Mapping[str, Annotations],
    rated: Mapping[str, Annotations],
    fields: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Long-format confusion of answers: ``field, reference, rated, n`` (non-zero cells only).

    Multi-valued answers are written as their values joined by ``+``.

    Examples
    --------
    >>> from automd_analysis.codebook import Annotations, Answer
    >>> def ann(v):
    ...     return Annotations("x", {"subgroup_checks": Answer("subgroup_checks", v, ())}, ())
    >>> confusion_table({"a": ann("no")}, {"a": ann("yes")}, ["subgroup_checks"]).to_dict("records")
    [{'field': 'subgroup_checks', 'reference': 'no', 'rated': 'yes', 'n': 1}]
    """
    rows = []
    for name in fields or sorted(CODEBOOK):
        _, a, b = paired_answers(reference, rated, name)
        a = ["+".join(x) if isinstance(x, tuple) else x for x in a]
        b = ["+".join(x) if isinstance(x, tuple) else x for x in b]
        labs, m = confusion(a, b)
        for i, x in enumerate(labs):
            for j, y in enumerate(labs):
                if m[i, j]:
                    rows.append({"field": name, "reference": x, "rated": y, "n": int(m[i, j])})
    return pd.DataFrame(rows, columns=["field", "reference", "rated", "n"])


def pair_agreement(
    reference: Mapping[str, Annotations], rated: Mapping[str, Annotations]
) -> pd.DataFrame:
    """Agreement on version-pair change types, over the pairs both annotate.

    Pairs are matched by ``(run, earlier, later)``. Each change type is a binary rating per pair
    (present or not); ``affects_predictions`` is compared as a binary rating too.

    Returns
    -------
    DataFrame
        ``change, n_pairs, n_reference, n_rated, kappa, precision, recall``.

    Examples
    --------
    >>> from automd_analysis.codebook import Annotations, PairAnnotation
    >>> def ann(*changes):
    ...     return Annotations("x", {}, (PairAnnotation("v1", "v2", changes, True, ()),))
    >>> t = pair_agreement({"r": ann("ensembling")}, {"r": ann("ensembling", "other")})
    >>> t.set_index("change").loc[["ensembling", "other"], ["n_reference", "n_rated"]].to_dict("index")
    {'ensembling': {'n_reference': 1, 'n_rated': 1}, 'other': {'n_reference': 0, 'n_rated': 1}}
    """
    from automd_analysis.codebook import PAIR_CHANGES

    matched = []
    for run_id in sorted(set(reference) & set(rated)):
        mine = {(p.earlier, p.later): p for p in rated[run_id].pairs}
        for p in reference[run_id].pairs:
            q = mine.get((p.earlier, p.later))
            if q is not None:
                matched.append((p, q))
    rows = []
    for change in (*PAIR_CHANGES, "affects_predictions"):
        if change == "affects_predictions":
            a = [p.affects_predictions for p, _ in matched]
            b = [q.affects_predictions for _, q in matched]
        else:
            a = [change in p.changes for p, _ in matched]
            b = [change in q.changes for _, q in matched]
        pr = precision_recall(a, b, [False, True])
        hit = pr[pr["label"]].iloc[0]
        rows.append(
            {
                "change": change,
                "n_pairs": len(matched),
                "n_reference": int(hit.n_reference),
                "n_rated": int(hit.n_rated),
                "kappa": cohen_kappa(a, b, [False, True]) if matched else float("nan"),
                "precision": float(hit.precision),
                "recall": float(hit.recall),
            }
        )
    return pd.DataFrame(rows)
