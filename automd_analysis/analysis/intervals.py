"""The paper's summary tables with their bootstrap intervals, and the agent comparisons, from a store.

One call per table for the report notebooks: the point estimates of the existing analysis
(:func:`~automd_analysis.analysis.primary.agent_summary`, ...) with the interval columns of
:mod:`automd_analysis.analysis.uncertainty` appended (:func:`~automd_analysis.analysis.
uncertainty.attach_intervals`: existing columns and rows unchanged), computed from the bootstrap
replicates the score store holds (``replicates.parquet``).

A store scored without replicates (``automd score --bootstrap 0``, or written before they
existed) still gives every table: the interval columns are present and empty, and the
comparison and power tables have their columns and no rows. :func:`has_replicates` tells the
two cases apart, so a notebook can say why there are no intervals instead of failing.
"""

from __future__ import annotations

import pandas as pd

from automd_analysis.analysis import calibration_practices, llm, primary, shift, uncertainty
from automd_analysis.analysis.store import DEFAULT_EXPERIMENTS, TASK_CLASSES, ScoreStore

__all__ = [
    "INTERVAL_NAMES",
    "agent_comparisons",
    "agent_summary_with_intervals",
    "ece_by_task_class_with_intervals",
    "external_ratios_with_intervals",
    "has_replicates",
    "llm_summary_with_intervals",
    "n_replicates",
    "repetitions_needed",
]

#: Per table: the quantities that get ``<name>_ci_low`` / ``<name>_ci_high`` columns.
INTERVAL_NAMES: dict[str, tuple[str, ...]] = {
    "table2_primary_scores": ("penalized", "nonpenalized"),
    "table3_ece": (*TASK_CLASSES, "all"),
    "table5_external": ("score", "ratio"),
    "table7_llm": ("penalized", "ece"),
}


def has_replicates(store: ScoreStore) -> bool:
    """Whether the store holds bootstrap replicates (``replicates.parquet`` with rows).

    See Also
    --------
    n_replicates : how many per run.

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap. Chapman & Hall.

    Examples
    --------
    >>> from automd_analysis.analysis import _doc_example
    >>> has_replicates(_doc_example.example_store()[0])
    False
    >>> has_replicates(_doc_example.example_store_with_replicates())
    True
    """
    return store.replicates is not None and len(store.replicates) > 0


def n_replicates(store: ScoreStore) -> int:
    """Replicates per run in the store (0 without replicates): the number of iterations B.

    See Also
    --------
    has_replicates

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap. Chapman & Hall.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import example_store_with_replicates
    >>> n_replicates(example_store_with_replicates())
    40
    """
    if not has_replicates(store):
        return 0
    return int(store.replicates["replicate"].max()) + 1


def _with_intervals(store: ScoreStore, table: pd.DataFrame, name: str, intervals, **options):
    """``table`` with the interval columns of table ``name``: those of
    ``intervals(store, store.replicates, **options)``, or NaN columns without replicates."""
    if not has_replicates(store):
        out = table.copy()
        for column in [f"{n}_ci_{s}" for n in INTERVAL_NAMES[name] for s in ("low", "high")]:
            out[column] = float("nan")
        return out
    return uncertainty.attach_intervals(table, intervals(store, store.replicates, **options))


def agent_summary_with_intervals(
    store: ScoreStore,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """Paper Table 2 with ``penalized_ci_low/high`` and ``nonpenalized_ci_low/high``.

    The columns of :func:`~automd_analysis.analysis.primary.agent_summary`, then the two-stage
    bootstrap percentile intervals of :func:`~automd_analysis.analysis.uncertainty.
    table2_intervals` (level 1 - ``alpha``; B = the stored replicates per run): in iteration b
    the runs of each (agent, task) are redrawn and each drawn run scores its test resample b,

    .. math:: P_b = \\frac{1}{K} \\sum_k \\frac{1}{|T_k|} \\sum_{t \\in T_k} s'^{(b)}_{t,k}

    (invalid = 0), and the interval is the α/2 and 1 - α/2 quantiles of the P_b. Empty interval
    columns when the store has no replicates.

    Parameters
    ----------
    store : ScoreStore
    experiment : str
    alpha : float, default 0.05
    seed : int, default 0
        Seed of the repetition draws.

    Returns
    -------
    DataFrame
        Table 2's columns, then ``penalized_ci_low, penalized_ci_high, nonpenalized_ci_low,
        nonpenalized_ci_high``.

    See Also
    --------
    automd_analysis.analysis.primary.agent_summary : the point estimates.
    automd_analysis.analysis.uncertainty.table2_intervals : the intervals.

    References
    ----------
    .. [1] Davison AC, Hinkley DV (1997). Bootstrap Methods and their Application, sec. 3.8.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import example_store_with_replicates
    >>> store = example_store_with_replicates()
    >>> table = agent_summary_with_intervals(store)
    >>> table.columns[-4:].tolist()
    ['penalized_ci_low', 'penalized_ci_high', 'nonpenalized_ci_low', 'nonpenalized_ci_high']
    >>> row = table.set_index("agent").loc["a"]
    >>> bool(row.penalized_ci_low < row.penalized_mean < row.penalized_ci_high)
    True
    """
    table = primary.agent_summary(store, experiment=experiment)
    options = {"experiment": experiment, "alpha": alpha, "seed": seed}
    return _with_intervals(
        store, table, "table2_primary_scores", uncertainty.table2_intervals, **options
    )


def ece_by_task_class_with_intervals(
    store: ScoreStore,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """Paper Table 3 with ``<class>_ci_low/high`` and ``all_ci_low/high``.

    The columns of :func:`~automd_analysis.analysis.calibration_practices.ece_by_task_class`,
    then the two-stage percentile intervals of :func:`~automd_analysis.analysis.uncertainty.
    table3_intervals`: in iteration b, ECE(a, class) = mean over the class's tasks of the mean
    ECE (on test resample b) of a's valid redrawn runs on the task. Empty interval columns when
    the store has no replicates.

    Parameters
    ----------
    store, experiment, alpha, seed
        As :func:`agent_summary_with_intervals`.

    Returns
    -------
    DataFrame
        ``agent, survival, classification, sequential, all``, then ``survival_ci_low,
        survival_ci_high, ..., all_ci_low, all_ci_high``.

    See Also
    --------
    automd_analysis.analysis.calibration_practices.ece_by_task_class : the point estimates.
    automd_analysis.analysis.uncertainty.table3_intervals : the intervals.

    References
    ----------
    .. [1] Davison AC, Hinkley DV (1997). Bootstrap Methods and their Application, sec. 3.8.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import example_store
    >>> store, _ = example_store()  # no replicates: empty interval columns
    >>> table = ece_by_task_class_with_intervals(store)
    >>> table.columns[-2:].tolist(), bool(table["all_ci_low"].isna().all())
    (['all_ci_low', 'all_ci_high'], True)
    """
    table = calibration_practices.ece_by_task_class(store, experiment=experiment)
    options = {"experiment": experiment, "alpha": alpha, "seed": seed}
    return _with_intervals(store, table, "table3_ece", uncertainty.table3_intervals, **options)


def external_ratios_with_intervals(
    store: ScoreStore,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """Paper Table 5 with ``score_ci_low/high`` and ``ratio_ci_low/high``.

    The columns of :func:`~automd_analysis.analysis.shift.external_ratios`, then the two-stage
    percentile intervals of :func:`~automd_analysis.analysis.uncertainty.table5_intervals`: an
    agent's (external run, internal run of the same repetition) pairs are redrawn and both runs
    read their tasks' test resample b; ratio_b = mean over the usable drawn pairs of
    s_ext / s_int (baseline: mean external / mean internal). Empty interval columns when the
    store has no replicates.

    Parameters
    ----------
    store, experiment, alpha, seed
        As :func:`agent_summary_with_intervals`.

    Returns
    -------
    DataFrame
        ``agent, task, internal_task, score, ratio, score_ci_low, score_ci_high, ratio_ci_low,
        ratio_ci_high``.

    See Also
    --------
    automd_analysis.analysis.shift.external_ratios : the point estimates.
    automd_analysis.analysis.uncertainty.table5_intervals : the intervals.

    References
    ----------
    .. [1] Davison AC, Hinkley DV (1997). Bootstrap Methods and their Application, sec. 3.8.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import example_store_with_replicates
    >>> store = example_store_with_replicates()
    >>> table = external_ratios_with_intervals(store)
    >>> bool((table["ratio_ci_low"] <= table["ratio_ci_high"]).all())
    True
    """
    table = shift.external_ratios(store, experiment=experiment)
    options = {"experiment": experiment, "alpha": alpha, "seed": seed}
    return _with_intervals(store, table, "table5_external", uncertainty.table5_intervals, **options)


def llm_summary_with_intervals(
    store: ScoreStore,
    *,
    agent: str | None = None,
    main_experiment: str = DEFAULT_EXPERIMENTS["main"],
    llm_experiment: str = DEFAULT_EXPERIMENTS["llm"],
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """Paper Table 7 with ``penalized_ci_low/high`` and ``ece_ci_low/high``.

    The columns of :func:`~automd_analysis.analysis.llm.llm_summary`, then the two-stage
    percentile intervals of :func:`~automd_analysis.analysis.uncertainty.table7_intervals`
    (cells = (LLM, task); penalised score = mean over repetitions of the mean over tasks with
    invalid = 0; ECE = valid runs within task, then tasks equally). Empty interval columns when
    the store has no replicates.

    Parameters
    ----------
    store : ScoreStore
    agent, main_experiment, llm_experiment
        As :func:`~automd_analysis.analysis.llm.llm_summary`.
    alpha, seed
        As :func:`agent_summary_with_intervals`.

    Returns
    -------
    DataFrame
        Table 7's columns, then ``penalized_ci_low, penalized_ci_high, ece_ci_low,
        ece_ci_high``.

    See Also
    --------
    automd_analysis.analysis.llm.llm_summary : the point estimates.
    automd_analysis.analysis.uncertainty.table7_intervals : the intervals.

    References
    ----------
    .. [1] Davison AC, Hinkley DV (1997). Bootstrap Methods and their Application, sec. 3.8.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import example_store_with_replicates
    >>> store = example_store_with_replicates()
    >>> llm_summary_with_intervals(store)[["llm", "ece_ci_low"]].shape
    (2, 2)
    """
    roles = {"main_experiment": main_experiment, "llm_experiment": llm_experiment}
    table = llm.llm_summary(store, agent=agent, **roles)
    options = {"agent": agent, "alpha": alpha, "seed": seed, **roles}
    return _with_intervals(store, table, "table7_llm", uncertainty.table7_intervals, **options)


def agent_comparisons(
    store: ScoreStore,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """Every pair of agents compared on the primary score and on ECE (``pairwise_comparisons``).

    :func:`~automd_analysis.analysis.uncertainty.pairwise_comparisons` on the store's
    replicates: per pair and measure, the mean per-task difference d̄ = (1/T) Σ_t (A_t - B_t)
    with its paired two-stage interval, the two-sided sign-flip test across tasks and Holm's
    adjustment over the pairs. No rows when the store has no replicates.

    Parameters
    ----------
    store, experiment, alpha, seed
        As :func:`agent_summary_with_intervals`.

    Returns
    -------
    DataFrame
        Columns :data:`~automd_analysis.analysis.uncertainty.PAIRWISE_COLUMNS`.

    See Also
    --------
    automd_analysis.analysis.uncertainty.pairwise_comparisons : the computation.
    repetitions_needed : the power table.

    References
    ----------
    .. [1] Fisher RA (1935). The Design of Experiments. Oliver & Boyd.
    .. [2] Holm S (1979). A simple sequentially rejective multiple test procedure. Scandinavian
       Journal of Statistics 6(2), 65-70.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import example_store
    >>> store, _ = example_store()  # no replicates: the columns, no rows
    >>> agent_comparisons(store).columns.tolist()[:4]
    ['agent_a', 'agent_b', 'measure', 'diff_mean']
    >>> len(agent_comparisons(store))
    0
    """
    if not has_replicates(store):
        return _empty(uncertainty.PAIRWISE_COLUMNS, ("n_tasks", "tasks_a_better"))
    return uncertainty.pairwise_comparisons(
        store, store.replicates, experiment, alpha=alpha, seed=seed
    )


def repetitions_needed(
    store: ScoreStore,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """The power table: repetitions per agent and task that would make each difference significant.

    :func:`~automd_analysis.analysis.uncertainty.power_table` on the store's replicates:
    K_needed = ⌈z² S / (D² - z² V_test)⌉ (at least 2), with D the observed mean per-task
    difference, S the run-to-run variance of D with one run each and V_test its test-set
    variance; unreachable when D² <= z² V_test. No rows when the store has no replicates.

    Parameters
    ----------
    store, experiment, alpha
        As :func:`agent_summary_with_intervals`.

    Returns
    -------
    DataFrame
        Columns :data:`~automd_analysis.analysis.uncertainty.POWER_COLUMNS`.

    See Also
    --------
    automd_analysis.analysis.uncertainty.power_table : the computation.
    agent_comparisons : the observed differences and tests.

    References
    ----------
    .. [1] Cohen J (1988). Statistical Power Analysis for the Behavioral Sciences, 2nd ed.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import example_store_with_replicates
    >>> store = example_store_with_replicates()
    >>> power = repetitions_needed(store).set_index(["agent_a", "agent_b", "measure"])
    >>> int(power.loc[("a", "baseline", "score"), "reps_needed"])
    2
    """
    if not has_replicates(store):
        return _empty(uncertainty.POWER_COLUMNS, ("n_tasks", "reps_observed")).astype(
            {"reachable": bool}
        )
    return uncertainty.power_table(store, store.replicates, experiment, alpha=alpha)


def _empty(columns, integers) -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series(dtype=float) for c in columns})
    for c in ("agent_a", "agent_b", "measure"):
        frame[c] = frame[c].astype(object)
    return frame.astype({c: "int64" for c in integers})
