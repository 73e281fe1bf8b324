"""Does the calibration conclusion depend on the measure? Every table of that question, from a store.

:func:`compare_calibration_measures` reads the per-run calibration measures and smoothed curves of
the score store (``calibration_measures.parquet``, ``calibration_curves.parquet``) and the runs
of one experiment, and returns the tables of
:mod:`automd_analysis.analysis.calibration_measures` that notebook 02 shows: the agents under each
measure, the rank correlations between measures, the agent pairs whose order reverses against the
paper's 10-bin ECE, each measure's agreement with it, the slope/intercept table, the pooled
smoothed curves and the decision curves.

A store without these tables (written before they existed) or an experiment with fewer than two
ranked agents still gives every table, with its columns and no rows (or no ranks), so the notebook
runs and says there is nothing to compare instead of failing.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from automd_analysis.analysis import calibration_measures as cm
from automd_analysis.analysis.catalog.calibration_and_practices import (
    CURVES,
    RANK_FLIPS,
    RANKING_AGREEMENT,
)
from automd_analysis.analysis.store import DEFAULT_EXPERIMENTS, ScoreStore, selected_runs
from automd_analysis.docstrings import VAN_CALSTER_2019, fill_doc
from automd_analysis.schema import CALIBRATION_MEASURE_COLUMNS

__all__ = ["REFERENCE_MEASURE", "MeasureComparison", "compare_calibration_measures"]

#: The paper's measure, against which the others are compared.
REFERENCE_MEASURE = "ece_10"
_CURVE_COLUMNS = ("run_id", "kind", "horizon", "x", "observed", "se", "lo", "hi")


@dataclass(frozen=True)
class MeasureComparison:
    """The calibration-measure tables of one experiment.

    Attributes
    ----------
    by_measure : DataFrame
        :func:`~automd_analysis.analysis.calibration_measures.agent_measure_table`.
    correlations : DataFrame
        :func:`~automd_analysis.analysis.calibration_measures.measure_correlations` at
        ``level="agent"`` then ``level="task"``.
    flips : DataFrame
        :func:`~automd_analysis.analysis.calibration_measures.rank_flips` against
        :data:`REFERENCE_MEASURE`.
    agreement : DataFrame
        :func:`~automd_analysis.analysis.calibration_measures.ranking_agreement` (no rows when no
        agent is ranked under the reference measure).
    slope_intercept : DataFrame
        :func:`~automd_analysis.analysis.calibration_measures.slope_intercept_table`.
    curves : DataFrame
        :func:`~automd_analysis.analysis.calibration_measures.smoothed_curves`.
    decision_curves : DataFrame
        :func:`~automd_analysis.analysis.calibration_measures.decision_curves`
        (classification tasks).
    available : bool
        Whether the store holds per-run calibration measures.
    """

    by_measure: pd.DataFrame
    correlations: pd.DataFrame
    flips: pd.DataFrame
    agreement: pd.DataFrame
    slope_intercept: pd.DataFrame
    curves: pd.DataFrame
    decision_curves: pd.DataFrame
    available: bool


def _empty(columns) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


@fill_doc(van_calster_2019=VAN_CALSTER_2019)
def compare_calibration_measures(
    store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]
) -> MeasureComparison:
    """Every calibration-measure table of ``experiment`` (see :class:`MeasureComparison`).

    Each measure m is aggregated as the paper aggregates ECE: for agent a,

    .. math:: v(a, m) = \\frac{1}{|T_m|} \\sum_{t \\in T_m} \\frac{1}{|R_{a,t}|}
              \\sum_{r \\in R_{a,t}} c_m(r)

    over the tasks T_m where m is defined and the valid runs R_{a,t} with a finite criterion
    c_m (the value, |slope - 1| or |intercept|); agents are ranked by v (1 = best, the simple
    baseline unranked); rank flips and agreement compare each measure's ranking with the 10-bin
    ECE's.

    Parameters
    ----------
    store : ScoreStore
    experiment : str

    Returns
    -------
    MeasureComparison

    Raises
    ------
    ScoreStoreError
        ``experiment`` is not in the store, or the measures table is malformed (two rows for
        one run, a missing column).

    See Also
    --------
    automd_analysis.analysis.calibration_measures : the table functions.

    References
    ----------
    {van_calster_2019}
    .. [2] Austin PC, Steyerberg EW (2019). The Integrated Calibration Index (ICI) and related
       metrics for quantifying the calibration of logistic regression models. Statistics in
       Medicine 38:4051-4065.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import example_store
    >>> store, _ = example_store()  # no calibration measures stored: empty tables
    >>> result = compare_calibration_measures(store)
    >>> result.available, len(result.agreement), result.by_measure.columns.tolist()[:2]
    (False, 0, ['measure', 'agent'])
    """
    runs = selected_runs(store, experiment)
    measures = store.calibration_measures
    available = measures is not None and len(measures) > 0
    if not available:
        measures = _empty(("run_id", *CALIBRATION_MEASURE_COLUMNS))
    else:
        measures = measures.loc[measures["run_id"].isin(set(runs["run_id"]))]
    by_measure = cm.agent_measure_table(measures, runs)
    correlations = pd.concat(
        [
            cm.measure_correlations(measures, runs, level="agent"),
            cm.measure_correlations(measures, runs, level="task"),
        ],
        ignore_index=True,
    )
    ranked = set(by_measure.loc[by_measure["rank"].notna(), "measure"])
    if REFERENCE_MEASURE in ranked:
        draws = cm.agent_value_draws(measures, runs)
        flips = cm.rank_flips(by_measure, reference_measure=REFERENCE_MEASURE, draws=draws)
        agreement = cm.ranking_agreement(by_measure, REFERENCE_MEASURE, draws=draws)
    else:
        flips = RANK_FLIPS.frame()
        agreement = RANKING_AGREEMENT.frame()
    curve_rows = store.calibration_curves
    if curve_rows is None or curve_rows.empty:
        curves = CURVES.frame()
    else:
        curves = cm.smoothed_curves(curve_rows[list(_CURVE_COLUMNS)], runs)
    return MeasureComparison(
        by_measure=by_measure,
        correlations=correlations,
        flips=flips,
        agreement=agreement,
        slope_intercept=cm.slope_intercept_table(measures, runs),
        curves=curves,
        decision_curves=cm.decision_curves(measures, runs),
        available=available,
    )
