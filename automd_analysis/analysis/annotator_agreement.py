"""How well ``automd annotate`` agrees with the archive's own codebook answers.

When an archive carries its own ``annotations.json`` (the demo harness's ground truth, or a human
annotator) and is scored with ``automd score --annotations DIR``, the score store keeps both
answers side by side in ``annotation_comparison.parquet`` (one row per run and codebook field).
:func:`annotator_agreement` turns those rows into the agreement tables of ``docs/annotation.md``:
per field the share of identical answers and Cohen's kappa (pooled over (run, value) present /
absent ratings for multi-valued fields), per value precision and recall of the generated answers,
and the confusion of answers. The archive's answers are the reference.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from automd_analysis.agreement import agreement_table, confusion_table
from automd_analysis.analysis.store import DEFAULT_EXPERIMENTS, ScoreStore, selected_runs
from automd_analysis.codebook import CODEBOOK, Annotations, Answer
from automd_analysis.docstrings import COHEN_1960, fill_doc

__all__ = ["AnnotatorAgreement", "agreement_text", "annotator_agreement"]


@dataclass(frozen=True)
class AnnotatorAgreement:
    """Agreement of generated codebook answers with the archive's own.

    Attributes
    ----------
    fields : DataFrame
        ``field, n_runs, exact, kappa, multi``.
    values : DataFrame
        ``field, value, n_reference, n_rated, precision, recall`` (rated = generated).
    confusion : DataFrame
        ``field, reference, rated, n`` (non-zero cells; multi-valued answers joined by ``+``).
    reference_annotators, generated_annotators : tuple of str
        The annotator strings on each side.
    n_runs : int
        Runs compared.
    """

    fields: pd.DataFrame
    values: pd.DataFrame
    confusion: pd.DataFrame
    reference_annotators: tuple[str, ...]
    generated_annotators: tuple[str, ...]
    n_runs: int

    @property
    def empty(self) -> bool:
        """``True`` when no run has both kinds of answers."""
        return self.n_runs == 0


def _answer(field: str, text: str) -> Answer:
    value = tuple(text.split("+")) if CODEBOOK[field].multi and text else text
    return Answer(field, value, ())


def _as_annotations(rows: pd.DataFrame, side: str) -> dict[str, Annotations]:
    out = {}
    for run_id, group in rows.groupby("run_id", sort=True):
        answers = {
            f: _answer(f, v)
            for f, v in zip(group["field"], group[f"{side}_value"], strict=True)
            if f in CODEBOOK
        }
        out[str(run_id)] = Annotations(str(group[f"{side}_annotator"].iloc[0]), answers, ())
    return out


@fill_doc(cohen_1960=COHEN_1960)
def annotator_agreement(
    store: ScoreStore,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    include_reference: bool = False,
) -> AnnotatorAgreement:
    """Agreement of ``automd annotate`` with the archive's own answers, per codebook field.

    For field f with N runs answered on both sides (reference answer a_r, generated answer b_r):
    ``exact`` = (1/N) Σ_r [a_r = b_r] and Cohen's kappa κ = (p_o − p_e) / (1 − p_e) with p_o the
    observed agreement and p_e = Σ_v p_a(v) p_b(v) the agreement expected from the two marginal
    distributions; a multi-valued field is rated once per (run, allowed value) as present or
    absent and κ is computed over those binary ratings. Per value v: precision =
    #{a_r = v ∧ b_r = v} / #{b_r = v}, recall = #{a_r = v ∧ b_r = v} / #{a_r = v}.

    Parameters
    ----------
    store : ScoreStore
        Scored with ``--annotations DIR`` (else the result is empty).
    experiment : str
        The selected runs of this experiment are compared.
    include_reference : bool, default False
        Include the simple baseline's runs.

    Returns
    -------
    AnnotatorAgreement

    See Also
    --------
    automd_analysis.agreement.agreement_table : the same tables from two sets of files.
    automd_analysis.analysis.annotation_provenance.annotation_provenance : who answered for whom.

    References
    ----------
    {cohen_1960}
    .. [2] Auto-MD-bench, App. I: the practice annotations behind Figure 2 and Table 20.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import three_run_store
    >>> runs = three_run_store().runs
    >>> comparison = runs[["run_id", "experiment", "agent", "llm", "task", "rep", "reference"]].assign(
    ...     field="probability_calibration", reference_value=["yes", "no", "no"],
    ...     generated_value=["yes", "no", "yes"], reference_annotator="truth",
    ...     generated_annotator="automd annotate 0.1.0")
    >>> store = three_run_store(annotation_comparison=comparison)
    >>> agreement = annotator_agreement(store)
    >>> agreement.fields[["field", "n_runs", "exact", "kappa"]].round(3).to_dict("records")
    [{'field': 'probability_calibration', 'n_runs': 3, 'exact': 0.667, 'kappa': 0.4}]
    """
    table = store.annotation_comparison
    run_ids = set(selected_runs(store, experiment, include_reference=include_reference)["run_id"])
    if table is not None:
        table = table.loc[table["run_id"].isin(run_ids) & table["field"].isin(list(CODEBOOK))]
    reference = _as_annotations(table, "reference") if table is not None else {}
    generated = _as_annotations(table, "generated") if table is not None else {}
    fields = sorted(set(table["field"])) if table is not None else []
    # with no field to compare, the tables keep their columns and have no rows
    per_field, per_value = agreement_table(reference, generated, fields or ["subgroup_checks"])
    confusion = confusion_table(reference, generated, fields or ["subgroup_checks"])
    if not fields:
        per_field, per_value, confusion = per_field[:0], per_value[:0], confusion[:0]
    return AnnotatorAgreement(
        fields=per_field.reset_index(drop=True),
        values=per_value.reset_index(drop=True),
        confusion=confusion.reset_index(drop=True),
        reference_annotators=tuple(sorted({a.annotator for a in reference.values()})),
        generated_annotators=tuple(sorted({a.annotator for a in generated.values()})),
        n_runs=len(set(reference) & set(generated)),
    )


@fill_doc(cohen_1960=COHEN_1960)
def agreement_text(agreement: AnnotatorAgreement) -> str:
    """:func:`annotator_agreement` in one line of plain text.

    Names the two annotators, the number of runs compared, the lowest kappa and the fields below
    0.8 (the target of ``docs/annotation.md``), or says that nothing could be compared.

    See Also
    --------
    annotator_agreement : the tables.

    References
    ----------
    {cohen_1960}

    Examples
    --------
    >>> fields = pd.DataFrame({"field": ["a", "b"], "n_runs": [10, 10], "exact": [1.0, 0.9],
    ...     "kappa": [1.0, 0.75], "multi": [False, False]})
    >>> empty = pd.DataFrame()
    >>> agreement = AnnotatorAgreement(fields, empty, empty, ("truth",), ("automd annotate 0.1",), 10)
    >>> agreement_text(agreement)
    'automd annotate 0.1 agrees with truth on 10 runs: identical answers on 90.0-100.0% of runs per field, kappa from 0.75 to 1.00; below 0.8: b (0.75).'
    >>> same = AnnotatorAgreement(fields.assign(exact=1.0, kappa=1.0), empty, empty, ("t",), ("g",), 4)
    >>> agreement_text(same)
    'g agrees with t on 4 runs: identical answers on 100.0% of runs in every field, kappa from 1.00 to 1.00.'
    >>> agreement_text(AnnotatorAgreement(empty, empty, empty, (), (), 0))
    'No run has both its own codebook answers and generated ones (score with --annotations DIR to compare them).'
    """
    if agreement.empty:
        return (
            "No run has both its own codebook answers and generated ones "
            "(score with --annotations DIR to compare them)."
        )
    fields = agreement.fields
    kappa = fields["kappa"].dropna()
    low_exact, high_exact = 100 * fields["exact"].min(), 100 * fields["exact"].max()
    share = (
        f"{high_exact:.1f}% of runs in every field"
        if f"{low_exact:.1f}" == f"{high_exact:.1f}"
        else f"{low_exact:.1f}-{high_exact:.1f}% of runs per field"
    )
    text = (
        f"{', '.join(agreement.generated_annotators)} agrees with "
        f"{', '.join(agreement.reference_annotators)} on {agreement.n_runs} runs: identical "
        f"answers on {share}"
    )
    if kappa.empty:
        return text + "; kappa is undefined (one answer on both sides in every field)."
    text += f", kappa from {kappa.min():.2f} to {kappa.max():.2f}"
    low = fields.loc[fields["kappa"] < 0.8]
    if low.empty:
        return text + "."
    listed = ", ".join(f"{r.field} ({r.kappa:.2f})" for r in low.itertuples())
    return text + f"; below 0.8: {listed}."
