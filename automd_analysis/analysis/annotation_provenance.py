"""Who produced the codebook answers behind the practice analyses (Figure 2a, Tables 6/16/20).

A run's codebook answers (``docs/archive.md``) come from its own ``annotations.json`` in the
archive (the demo harness's ground truth, a human annotator) or from ``automd annotate``, whose
output enters the score store with ``automd score --annotations DIR``. ``runs.parquet`` records
both facts per run: ``annotator`` (the file's ``annotator`` string, e.g. ``automd annotate 0.1.0``)
and ``annotations_source`` (``archive``, ``generated`` or ``none``). A table built on the answers
should say which annotator produced them, because agreement with the truth differs by annotator
(``docs/annotation.md``). :func:`annotation_provenance` counts the runs per (annotator, source)
and :func:`provenance_text` words the counts in one line.
"""

from __future__ import annotations

import pandas as pd

from automd_analysis.analysis.catalog.calibration_and_practices import PROVENANCE
from automd_analysis.analysis.store import DEFAULT_EXPERIMENTS, ScoreStore, selected_runs

__all__ = ["UNRECORDED", "annotation_provenance", "provenance_text"]

#: Columns of :func:`annotation_provenance`.
#: ``annotator`` of annotated runs in a store that does not record it (written by an older
#: ``automd score``).
UNRECORDED = "(annotator not recorded)"
_NONE = "none"


def _sources(store: ScoreStore, run_ids: pd.Series) -> pd.DataFrame:
    """``run_id, annotator, annotations_source`` of the given runs (one row each)."""
    runs = store.runs.set_index("run_id")
    ids = pd.Index(run_ids.astype(str), name="run_id")
    annotated_ids = set(store.annotations["run_id"].astype(str))
    if "annotations_source" in runs.columns:
        source = runs["annotations_source"].reindex(ids).astype(object)
        source = source.where(source.notna(), None)
        fallback = pd.Series(
            ["archive" if r in annotated_ids else _NONE for r in ids], index=ids, dtype=object
        )
        source = source.fillna(fallback)
    else:
        source = pd.Series(
            ["archive" if r in annotated_ids else _NONE for r in ids], index=ids, dtype=object
        )
    if "annotator" in runs.columns:
        annotator = runs["annotator"].reindex(ids).astype(object)
    else:
        annotator = pd.Series(None, index=ids, dtype=object)
    text = annotator.map(lambda v: str(v).strip() if isinstance(v, str) else "")
    annotator = text.where(text != "", UNRECORDED).where(source != _NONE, None)
    return pd.DataFrame(
        {"run_id": ids, "annotator": annotator.to_numpy(), "annotations_source": source.to_numpy()}
    )


def annotation_provenance(
    store: ScoreStore,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    include_reference: bool = False,
    valid_only: bool = True,
) -> pd.DataFrame:
    """Runs per annotator and annotation source among the runs a practice analysis reads.

    The default scope is the one of Figure 2a and Table 20: the valid selected runs of the agents
    (simple baseline excluded) of ``experiment``. Each run is counted once, under its
    ``runs.annotator`` and ``runs.annotations_source``; runs without codebook answers form the row
    with ``annotations_source = "none"`` and an empty ``annotator``.

    Parameters
    ----------
    store : ScoreStore
    experiment : str
    include_reference : bool, default False
        Count the simple baseline's runs too.
    valid_only : bool, default True
        Count only runs whose selected submission is valid.

    Returns
    -------
    DataFrame
        ``annotator, annotations_source, n_runs``, sorted by ``n_runs`` (descending), then annotator;
        the ``none`` row last. An annotated run of a store that does not record its annotator
        has ``annotator =`` :data:`UNRECORDED`.

    Raises
    ------
    ScoreStoreError
        ``experiment`` is not in the store.

    See Also
    --------
    provenance_text : the rows in words.
    automd_analysis.analysis.calibration_practices.ece_decomposition : Figure 2a.
    automd_analysis.analysis.calibration_practices.practice_prevalence : Table 20.

    References
    ----------
    .. [1] Auto-MD-bench, App. I: the practice annotations behind Figure 2 and Table 20.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import three_run_store
    >>> store = three_run_store(annotator=["automd annotate 0.1.0", "automd annotate 0.1.0", None],
    ...     annotations_source=["generated", "generated", "none"])
    >>> annotation_provenance(store)
                   annotator annotations_source  n_runs
    0  automd annotate 0.1.0          generated       2
    1                   None               none       1
    """
    runs = selected_runs(store, experiment, include_reference=include_reference)
    if valid_only:
        runs = runs.loc[runs["valid"]]
    sources = _sources(store, runs["run_id"])
    if sources.empty:
        return PROVENANCE.frame()
    key = sources["annotator"].fillna("")
    counts = (
        sources.assign(_key=key)
        .groupby(["_key", "annotations_source"], sort=True)
        .size()
        .rename("n_runs")
        .reset_index()
    )
    counts["annotator"] = counts["_key"].where(counts["_key"] != "", None)
    counts["_none"] = counts["annotations_source"] == _NONE
    counts = counts.sort_values(
        ["_none", "n_runs", "_key", "annotations_source"],
        ascending=[True, False, True, True],
        kind="mergesort",
    )
    return PROVENANCE.frame(counts[PROVENANCE.named].reset_index(drop=True))


def _runs(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def provenance_text(provenance: pd.DataFrame) -> str:
    """The annotators of :func:`annotation_provenance` in one line of plain text.

    ``"<annotator> (<n> runs)"`` per annotator, joined by ``"; "``; answers that came from
    ``automd score --annotations`` (source ``generated``) say so; runs without answers are
    counted last. Archive strings are returned as they are: escape them for the output format.

    See Also
    --------
    annotation_provenance : the counts.

    References
    ----------
    .. [1] Auto-MD-bench, App. I: the practice annotations behind Figure 2 and Table 20.

    Examples
    --------
    >>> rows = pd.DataFrame({"annotator": ["harness ground truth", "automd annotate 0.1.0", None],
    ...     "annotations_source": ["archive", "generated", "none"], "n_runs": [186, 12, 3]})
    >>> provenance_text(rows)
    'Codebook answers by harness ground truth (186 runs); automd annotate 0.1.0 (12 runs, generated outside the archive); no answers for 3 runs.'
    >>> provenance_text(rows.iloc[[2]])
    'No codebook answers for these 3 runs.'
    """
    parts, missing = [], 0
    for row in provenance.to_dict("records"):
        n = int(row["n_runs"])
        if row["annotations_source"] == _NONE:
            missing += n
            continue
        extra = (
            ", generated outside the archive" if row["annotations_source"] == "generated" else ""
        )
        parts.append(f"{row['annotator']} ({_runs(n)}{extra})")
    if not parts:
        if missing == 0:
            return "No runs to annotate."
        return f"No codebook answers for {'this run' if missing == 1 else f'these {missing} runs'}."
    text = "Codebook answers by " + "; ".join(parts)
    if missing:
        text += f"; no answers for {_runs(missing)}"
    return text + "."
