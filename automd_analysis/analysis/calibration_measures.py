"""Does the calibration conclusion depend on the measure? Rankings, rank correlations, order flips,
the slope/intercept table, smoothed curves and decision curves across agents.

Pure functions on two DataFrames:

- ``measures``: one row per run (the selected submission) with ``run_id`` and the columns of
  :data:`automd_analysis.scoring.calibration_measures.CALIBRATION_MEASURE_COLUMNS` (only the columns a
  function reads are required);
- ``runs``: one row per run with ``run_id``, ``agent``, ``task``, ``task_kind``, ``valid`` and
  ``reference`` (e.g. :func:`automd_analysis.analysis.store.selected_runs`).

Aggregation (the paper's rule for Table 3): a measure is averaged over the *valid* runs of an agent on
a task (runs with a non-finite value are skipped), then tasks are weighted equally. Lower is better
for every ranking criterion. The simple baseline (``reference``) is shown but never ranked.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, spearmanr

from automd_analysis.analysis.catalog.calibration_and_practices import (
    BY_MEASURE,
    CORRELATIONS,
    CURVES,
    DECISION_CURVES,
    RANK_FLIPS,
    RANKING_AGREEMENT,
    SLOPE_INTERCEPT,
)
from automd_analysis.analysis.store import TASK_CLASSES, agent_order, agent_positions
from automd_analysis.docstrings import AUSTIN_STEYERBERG_2014, VICKERS_ELKIN_2006, fill_doc
from automd_analysis.errors import ScoreStoreError
from automd_analysis.precision import comparable
from automd_analysis.schema import NET_BENEFIT_THRESHOLDS, net_benefit_column
from automd_analysis.stats.intervals import estimate
from automd_analysis.stats.resample import resample
from automd_analysis.stats.rules import displayed, mean_sd, nanmean, per_cell, row_groups

__all__ = [
    "RANKING_MEASURES",
    "RankingMeasure",
    "agent_measure_table",
    "agent_value_draws",
    "decision_curves",
    "measure_correlations",
    "rank_flips",
    "ranking_agreement",
    "run_criteria",
    "slope_intercept_table",
    "smoothed_curves",
]


#: The App. F aggregation rule, cited by every table below that averages runs per task.
APP_F_TASK_MEAN = """
.. [1] Auto-MD-bench, App. F: valid runs averaged within task, tasks weighted equally.
"""

#: The Examples set-up of the curve tables: two valid runs of one agent on a binary task.
_TWO_RUNS_EXAMPLE = """
Examples
--------
>>> runs = pd.DataFrame({"run_id": ["r1", "r2"], "agent": "A", "task": "t",
...     "task_kind": "classification", "valid": True, "reference": False})
"""


@dataclass(frozen=True)
class RankingMeasure:
    """A calibration measure used to rank agents (lower criterion = better calibrated).

    Attributes
    ----------
    name : str
        Short name used in every output table.
    column : str
        Column of ``measures`` it is computed from.
    criterion : str
        ``"value"`` (the column itself), ``"abs_minus_one"`` (|x - 1|) or ``"abs"`` (|x|).
    kinds : tuple of str
        Task kinds on which it is defined.
    label : str
        Human-readable description.
    """

    name: str
    column: str
    criterion: str
    kinds: tuple[str, ...]
    label: str


_ALL = TASK_CLASSES
_BINARY = ("classification", "sequential")

#: The measures compared, in display order.
RANKING_MEASURES: tuple[RankingMeasure, ...] = (
    RankingMeasure("ece_10", "ece_10", "value", _ALL, "ECE, 10 equal-width bins (paper)"),
    RankingMeasure("ece_15", "ece_15", "value", _ALL, "ECE, 15 equal-width bins"),
    RankingMeasure(
        "ece_equal_mass", "ece_equal_mass_10", "value", _BINARY, "ECE, 10 equal-mass bins"
    ),
    RankingMeasure("ici", "ici", "value", _ALL, "integrated calibration index"),
    RankingMeasure("slope", "cal_slope", "abs_minus_one", _ALL, "|calibration slope - 1|"),
    RankingMeasure("intercept", "cal_intercept", "abs", _BINARY, "|calibration intercept|"),
    RankingMeasure(
        "d_calibration", "dcal_divergence", "value", ("survival",), "D-calibration X^2 / n"
    ),
)

_RUN_COLUMNS = ("run_id", "agent", "task", "task_kind", "valid", "reference")


def _require(frame: pd.DataFrame, columns: Iterable[str], name: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ScoreStoreError(
            f"{name} lacks column(s) {', '.join(missing)}",
            location="columns",
            fix="pass the per-run calibration measures (scoring.calibration_measures columns plus "
            "run_id) and the runs table of analysis.store.selected_runs",
            code="store.missing_column",
            details={"missing": missing},
        )


def _join(measures: pd.DataFrame, runs: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    _require(runs, _RUN_COLUMNS, "runs")
    _require(measures, ("run_id", *columns), "measures")
    if measures["run_id"].duplicated().any():
        run_id = measures.loc[measures["run_id"].duplicated(), "run_id"].iloc[0]
        raise ScoreStoreError(
            f"measures has more than one row for run {run_id!r}",
            location="run_id",
            fix="keep one row per run: the selected submission's measures",
            code="store.duplicate_rows",
        )
    base = runs[list(_RUN_COLUMNS)].drop_duplicates("run_id")
    joined = base.merge(measures[["run_id", *columns]], on="run_id", how="inner")
    return joined.sort_values("run_id", kind="mergesort").reset_index(drop=True)


def _criterion(values: pd.Series, criterion: str) -> pd.Series:
    v = pd.to_numeric(values, errors="coerce").astype(float)
    if criterion == "abs_minus_one":
        return (v - 1.0).abs()
    if criterion == "abs":
        return v.abs()
    return v


def _measure_list(names: Sequence[str] | None) -> list[RankingMeasure]:
    if names is None:
        return list(RANKING_MEASURES)
    known = {m.name: m for m in RANKING_MEASURES}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown measure(s) {unknown}; known: {sorted(known)}")
    return [known[n] for n in names]


@fill_doc(app_f_task_mean=APP_F_TASK_MEAN)
def run_criteria(
    measures: pd.DataFrame, runs: pd.DataFrame, names: Sequence[str] | None = None
) -> pd.DataFrame:
    """The ranking criterion of every measure for every valid run (long format).

    Returns
    -------
    DataFrame
        ``run_id, agent, task, task_kind, reference, measure, value``: one row per valid run and
        measure defined for the run's task kind, with a finite criterion (|slope - 1|, |intercept|,
        or the value itself), sorted by measure (display order) then run.

    See Also
    --------
    agent_measure_table : aggregates these per agent.

    References
    ----------
    {app_f_task_mean}

    Examples
    --------
    >>> runs = pd.DataFrame({"run_id": ["r1", "r2"], "agent": "A", "task": "t",
    ...     "task_kind": "classification", "valid": [True, False], "reference": False})
    >>> measures = pd.DataFrame({"run_id": ["r1", "r2"], "cal_slope": [0.8, 2.0]})
    >>> run_criteria(measures, runs, ["slope"])[["run_id", "measure", "value"]].round(4)
      run_id measure  value
    0     r1   slope    0.2
    """
    every = _all_criteria(measures, runs, names)
    return every.loc[np.isfinite(every["value"].to_numpy(dtype=float))].reset_index(drop=True)


def _all_criteria(measures, runs, names) -> pd.DataFrame:
    """:func:`run_criteria` including valid runs whose value is not finite (undefined measure)."""
    chosen = _measure_list(names)
    joined = _join(measures, runs, sorted({m.column for m in chosen}))
    valid = joined.loc[joined["valid"].astype(bool)]
    parts = []
    for m in chosen:
        rows = valid.loc[valid["task_kind"].isin(m.kinds)]
        value = _criterion(rows[m.column], m.criterion)
        parts.append(
            rows[["run_id", "agent", "task", "task_kind", "reference"]].assign(
                measure=m.name, value=value.to_numpy()
            )
        )
    columns = ["run_id", "agent", "task", "task_kind", "reference", "measure", "value"]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True)[columns]


def _per_task(criteria: pd.DataFrame) -> pd.DataFrame:
    """Mean criterion per (measure, task, agent) over valid runs."""
    grouped = criteria.groupby(["measure", "task", "agent"], sort=True)
    out = grouped.agg(
        value=("value", "mean"), reference=("reference", "first"), n=("value", "size")
    )
    return out.reset_index()


def _ranks(values: pd.Series) -> pd.Series:
    return displayed(values).rank(method="average", ascending=True)


@fill_doc(app_f_task_mean=APP_F_TASK_MEAN)
def agent_measure_table(
    measures: pd.DataFrame, runs: pd.DataFrame, names: Sequence[str] | None = None
) -> pd.DataFrame:
    """Each agent's calibration under each measure, and its rank among the agents.

    value(a, m) = mean over the tasks where m is defined and a has a valid run with a finite value of
    (mean of the criterion over a's valid runs on the task). ``rank`` is 1 for the best (lowest)
    value among the non-reference agents, ties averaged (values equal at the displayed 3 decimals);
    the simple
    baseline has a value but no rank. ``n_runs`` counts the agent's valid runs on the measure's task
    kinds and ``n_undefined`` those where the measure is undefined (``nan``: e.g. a probability of
    exactly 0 or 1 for the logit-scale slope/intercept) - they are left out of ``value``, so a large
    ``n_undefined`` means the ranking under that measure ignores part of the agent's runs.

    Parameters
    ----------
    measures, runs : DataFrame
        See the module docstring.
    names : sequence of str, optional
        Subset of :data:`RANKING_MEASURES` names (default: all).

    Returns
    -------
    DataFrame
        The columns of ``calibration_by_measure``, sorted by measure (display order), then agent
        (:func:`~automd_analysis.analysis.store.agent_order`).

    Raises
    ------
    ScoreStoreError
        A required column is missing, or ``measures`` has two rows for one run.

    See Also
    --------
    measure_correlations, rank_flips, ranking_agreement : compare the rankings.
    automd_analysis.analysis.calibration_practices.ece_by_task_class : the paper's ECE table (same aggregation).

    References
    ----------
    {app_f_task_mean}

    Examples
    --------
    >>> runs = pd.DataFrame({"run_id": ["a1", "a2", "b1"], "agent": ["A", "A", "B"],
    ...     "task": ["t", "u", "t"], "task_kind": "classification", "valid": True,
    ...     "reference": False})
    >>> measures = pd.DataFrame({"run_id": ["a1", "a2", "b1"], "ece_10": [0.1, 0.3, 0.15]})
    >>> agent_measure_table(measures, runs, ["ece_10"])[["agent", "value", "n_runs", "rank"]]
      agent  value  n_runs  rank
    0     A   0.20       2   2.0
    1     B   0.15       1   1.0
    """
    chosen = _measure_list(names)
    every = _all_criteria(measures, runs, [m.name for m in chosen])
    finite = np.isfinite(every["value"].to_numpy(dtype=float))
    per_task = _per_task(every.loc[finite])
    agents = agent_order(runs["agent"])
    reference = set(runs.loc[runs["reference"].astype(bool), "agent"])
    rows = []
    for m in chosen:
        mine = per_task.loc[per_task["measure"] == m.name]
        in_measure = (every["measure"] == m.name).to_numpy()
        table = []
        for agent in agents:
            values = mine.loc[mine["agent"] == agent, "value"]
            mean, _ = mean_sd(values)
            own = in_measure & (every["agent"] == agent).to_numpy()
            n_runs = int(own.sum())
            n_undefined = int((own & ~finite).sum())
            table.append((m.name, agent, mean, int(values.notna().sum()), n_runs, n_undefined))
        frame = pd.DataFrame(table, columns=BY_MEASURE.named[:-1])
        rankable = ~frame["agent"].isin(reference) & frame["value"].notna()
        frame["rank"] = np.nan
        frame.loc[rankable, "rank"] = _ranks(frame.loc[rankable, "value"])
        rows.append(frame)
    out = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
    out = out.reindex(columns=BY_MEASURE.named)
    ints = {"n_tasks": "int64", "n_runs": "int64", "n_undefined": "int64"}
    return out.astype({**ints, "rank": float, "value": float})


def _pair_stats(a: np.ndarray, b: np.ndarray) -> tuple[int, float, float, str]:
    """n, Spearman's rho, Kendall's tau-b and why they are undefined ("" when they are not)."""
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = comparable(a[keep]), comparable(b[keep])
    n = int(keep.sum())
    if n < 3:
        return n, math.nan, math.nan, f"{n} pair(s) where both are defined; 3 needed"
    if np.all(a == a[0]) or np.all(b == b[0]):
        return n, math.nan, math.nan, "a measure takes one value on every pair"
    return n, float(spearmanr(a, b).statistic), float(kendalltau(a, b).statistic), ""


def measure_correlations(
    measures: pd.DataFrame,
    runs: pd.DataFrame,
    names: Sequence[str] | None = None,
    *,
    level: str = "agent",
) -> pd.DataFrame:
    """Rank correlation (Spearman's rho, Kendall's tau-b) between every pair of measures.

    ``level="agent"``: over the non-reference agents' aggregated values (:func:`agent_measure_table`)
    - does the ranking of agents agree? ``level="task"``: over the (task, agent) cells (per-task
    means over valid runs, reference excluded) where both measures are defined - a larger sample.
    NaN, with the ``reason``, when a measure is undefined on every run, with fewer than three
    pairs or a constant column.

    Returns
    -------
    DataFrame
        The columns of ``calibration_measure_correlations``, one row per unordered pair of measures (display order).

    See Also
    --------
    agent_measure_table : the values correlated at ``level="agent"``.
    scipy.stats.spearmanr, scipy.stats.kendalltau : the statistics (tau-b).

    References
    ----------
    .. [1] Kendall MG (1945). The treatment of ties in ranking problems. Biometrika 33:239-251.

    Examples
    --------
    >>> runs = pd.DataFrame({"run_id": list("abc"), "agent": list("ABC"), "task": "t",
    ...     "task_kind": "classification", "valid": True, "reference": False})
    >>> measures = pd.DataFrame({"run_id": list("abc"), "ece_10": [0.1, 0.2, 0.3],
    ...     "ici": [0.05, 0.04, 0.2]})
    >>> measure_correlations(measures, runs, ["ece_10", "ici"])[["n", "spearman", "kendall"]]
       n  spearman   kendall
    0  3       0.5  0.333333
    """
    if level not in ("agent", "task"):
        raise ValueError(f"level must be 'agent' or 'task', got {level!r}")
    chosen = _measure_list(names)
    if level == "agent":
        table = agent_measure_table(measures, runs, [m.name for m in chosen])
        reference = set(runs.loc[runs["reference"].astype(bool), "agent"])
        table = table.loc[~table["agent"].isin(reference)]
        wide = table.pivot(index="agent", columns="measure", values="value")
    else:
        criteria = run_criteria(measures, runs, [m.name for m in chosen])
        per_task = _per_task(criteria.loc[~criteria["reference"].astype(bool)])
        wide = per_task.pivot_table(
            index=["task", "agent"], columns="measure", values="value", aggfunc="first"
        )
    rows = []
    for a, b in itertools.combinations([m.name for m in chosen], 2):
        undefined = [
            m for m in (a, b) if m not in wide or not np.isfinite(wide[m].to_numpy(float)).any()
        ]
        if undefined:  # no finite value of the measure on any run
            reason = f"{' and '.join(undefined)} undefined on every run"
            rows.append((level, a, b, 0, math.nan, math.nan, reason))
            continue
        stats = _pair_stats(wide[a].to_numpy(dtype=float), wide[b].to_numpy(dtype=float))
        rows.append((level, a, b, *stats))
    return CORRELATIONS.frame(pd.DataFrame(rows, columns=CORRELATIONS.named))


def agent_value_draws(
    measures: pd.DataFrame,
    runs: pd.DataFrame,
    names: Sequence[str] | None = None,
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[tuple[str, str], np.ndarray]:
    """Bootstrap draws of each agent's value under each measure, its valid runs redrawn.

    Column 0 is :func:`agent_measure_table`'s value; in draw b every (agent, task) cell of each
    measure is redrawn by the report's resampler (:func:`~automd_analysis.stats.resample.
    resample` over the runs with a finite value, validity held fixed), averaged within the task,
    and the task means averaged (tasks weighted equally). Tasks and test patients are held fixed:
    the stored calibration measures have no patient replicates, so the unit of inference is the
    run.

    Parameters
    ----------
    measures, runs, names
        As in :func:`agent_measure_table`.
    n_boot : int, default 1000
    seed : int, default 0

    Returns
    -------
    dict
        ``(measure, agent)`` -> array of shape (1 + n_boot,).

    See Also
    --------
    rank_flips : counts a flip only where both differences' intervals exclude 0.

    Examples
    --------
    >>> runs = pd.DataFrame({"run_id": ["a1", "a2"], "agent": "A", "task": "t",
    ...     "task_kind": "classification", "valid": True, "reference": False})
    >>> measures = pd.DataFrame({"run_id": ["a1", "a2"], "ece_10": [0.1, 0.3]})
    >>> d = agent_value_draws(measures, runs, ["ece_10"], n_boot=500)[("ece_10", "A")]
    >>> float(d[0]), bool(d[1:].min() < 0.2 < d[1:].max())
    (0.2, True)
    """
    every = _all_criteria(measures, runs, [m.name for m in _measure_list(names)])
    every = every.loc[np.isfinite(every["value"].to_numpy(dtype=float))]
    out: dict[tuple[str, str], np.ndarray] = {}
    for measure, units in every.groupby("measure", sort=True):
        units = units.reset_index(drop=True)
        draws = resample(
            units,
            ("agent", "task"),
            n_boot=n_boot,
            seed=seed,
            tag=f"measures:{measure}",
            model_validity=False,
        )
        values = draws.values(units["value"].to_numpy(dtype=float))
        for agent, mine in row_groups(units, ["agent"]).items():
            cells = row_groups(units.iloc[mine], ["task"])  # labels = positions of units
            per_task = per_cell(values, list(cells.values()))
            out[(str(measure), str(agent[0]))] = nanmean(per_task, axis=0)
    return out


def _separated(draws, measure: str, x: str, y: str, alpha: float) -> bool:
    """Whether the interval of value(x) - value(y) under ``measure`` excludes 0."""
    if draws is None:
        return True
    if (measure, x) not in draws or (measure, y) not in draws:
        return False
    low, high = estimate(draws[(measure, x)] - draws[(measure, y)], alpha)[1:]
    return bool(np.isfinite(low) and (low > 0 or high < 0))


def rank_flips(
    agent_table: pd.DataFrame,
    *,
    reference_measure: str | None = None,
    draws: dict[tuple[str, str], np.ndarray] | None = None,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Agent pairs whose order reverses between two measures.

    For measures a and b and agents 1 and 2 (non-reference, finite values under both), the pair
    flips when agent 1 is strictly better than agent 2 under one measure and strictly worse under the
    other, compared as displayed (:func:`~automd_analysis.stats.rules.displayed`: 12
    significant digits, then 3 decimals); a tie under either measure is not a flip. With
    ``draws`` (:func:`agent_value_draws`) the pair also needs, under each of the two measures, a
    1 - α percentile interval of the difference value(1) - value(2) that excludes 0: an order the
    runs cannot separate is not reversed.

    Parameters
    ----------
    agent_table : DataFrame
        From :func:`agent_measure_table`.
    reference_measure : str, optional
        Compare only this measure (e.g. ``"ece_10"``, the paper's) with each other one; default: every
        pair of measures.
    draws : dict, optional
        ``(measure, agent)`` -> bootstrap draws of the agent's value (:func:`agent_value_draws`).
    alpha : float, default 0.05

    Returns
    -------
    DataFrame
        The columns of ``calibration_rank_flips``; ``better_under_a`` / ``better_under_b`` name the better agent.

    See Also
    --------
    ranking_agreement : counts of flips per measure.

    References
    ----------
    .. [1] Van Calster B et al. (2019). Calibration: the Achilles heel of predictive analytics.
       BMC Medicine 17:230 (why one calibration number is not enough).

    Examples
    --------
    >>> table = pd.DataFrame({"measure": ["ece_10"] * 2 + ["ici"] * 2, "agent": ["A", "B"] * 2,
    ...     "value": [0.1, 0.2, 0.05, 0.03], "n_tasks": 1, "n_runs": 1, "n_undefined": 0,
    ...     "rank": [1.0, 2.0, 2.0, 1.0]})
    >>> rank_flips(table)[["measure_a", "measure_b", "better_under_a", "better_under_b"]]
      measure_a measure_b better_under_a better_under_b
    0    ece_10       ici              A              B
    """
    _require(agent_table, BY_MEASURE.named, "agent_table")
    ranked = agent_table.loc[agent_table["rank"].notna()]
    order = [m.name for m in RANKING_MEASURES if m.name in set(ranked["measure"])]
    order += sorted(set(ranked["measure"]) - set(order))
    values = {m: ranked.loc[ranked["measure"] == m].set_index("agent")["value"] for m in order}
    if reference_measure is not None:
        if reference_measure not in values:
            raise ValueError(f"measure {reference_measure!r} is not in the agent table")
        pairs = [(reference_measure, m) for m in order if m != reference_measure]
    else:
        pairs = list(itertools.combinations(order, 2))
    rows = []
    for a, b in pairs:
        agents = agent_order(set(values[a].index) & set(values[b].index))
        for x, y in itertools.combinations(agents, 2):
            ax, ay = displayed(values[a][x]), displayed(values[a][y])
            bx, by = displayed(values[b][x]), displayed(values[b][y])
            if np.sign(ax - ay) * np.sign(bx - by) < 0 and all(
                _separated(draws, m, x, y, alpha) for m in (a, b)
            ):
                rows.append(
                    (
                        a,
                        b,
                        x,
                        y,
                        float(values[a][x]),
                        float(values[a][y]),
                        float(values[b][x]),
                        float(values[b][y]),
                        x if ax < ay else y,
                        x if bx < by else y,
                    )
                )
    return RANK_FLIPS.frame(pd.DataFrame(rows, columns=RANK_FLIPS.named))


def ranking_agreement(
    agent_table: pd.DataFrame,
    reference_measure: str = "ece_10",
    *,
    draws: dict[tuple[str, str], np.ndarray] | None = None,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """How far each measure's ranking of the agents agrees with the reference measure's.

    Per measure: the rank correlation of its agent values with the reference's (agents with both),
    the number of agent pairs and of flipped pairs (:func:`rank_flips`, with ``draws`` and
    ``alpha``), its best agent and whether that is the reference's best agent. The reference's
    own row has correlation 1 and no flips.

    Returns
    -------
    DataFrame
        The columns of ``calibration_ranking_agreement``, one row per measure of ``agent_table``.

    See Also
    --------
    rank_flips, measure_correlations

    References
    ----------
    .. [1] Auto-MD-bench, section 4.3 and App. F (the 10-bin ECE used as the reference measure).

    Examples
    --------
    >>> table = pd.DataFrame({"measure": ["ece_10"] * 3 + ["ici"] * 3, "agent": list("ABC") * 2,
    ...     "value": [0.1, 0.2, 0.3, 0.05, 0.03, 0.3], "n_tasks": 1, "n_runs": 1, "n_undefined": 0,
    ...     "rank": [1.0, 2.0, 3.0, 2.0, 1.0, 3.0]})
    >>> ranking_agreement(table)[["measure", "n_flipped", "best_agent", "same_best"]]
      measure  n_flipped best_agent  same_best
    0  ece_10          0          A       True
    1     ici          1          B      False
    """
    _require(agent_table, BY_MEASURE.named, "agent_table")
    ranked = agent_table.loc[agent_table["rank"].notna()]
    if reference_measure not in set(ranked["measure"]):
        raise ValueError(f"measure {reference_measure!r} is not in the agent table")
    flips = rank_flips(agent_table, reference_measure=reference_measure, draws=draws, alpha=alpha)
    ref = ranked.loc[ranked["measure"] == reference_measure].set_index("agent")["value"]
    ref_best = _best(ref)
    order = [m.name for m in RANKING_MEASURES if m.name in set(ranked["measure"])]
    order += sorted(set(ranked["measure"]) - set(order))
    rows = []
    for m in order:
        mine = ranked.loc[ranked["measure"] == m].set_index("agent")["value"]
        common = sorted(set(mine.index) & set(ref.index))
        n, rho, tau, _ = _pair_stats(
            mine[common].to_numpy(dtype=float), ref[common].to_numpy(dtype=float)
        )
        n_flip = int((flips["measure_b"] == m).sum()) if m != reference_measure else 0
        best = _best(mine)
        rows.append(
            (m, n, rho, tau, n * (n - 1) // 2, n_flip, best, best is not None and best == ref_best)
        )
    out = pd.DataFrame(rows, columns=RANKING_AGREEMENT.named)
    return out.astype({"n_agents": "int64", "n_pairs": "int64", "n_flipped": "int64"})


def _best(values: pd.Series) -> str | None:
    """The agent with the lowest value; None if none or tied (at 3 decimals) for best."""
    v = displayed(values.dropna())
    if v.empty:
        return None
    best = v[v == v.min()]
    return str(best.index[0]) if len(best) == 1 else None


@fill_doc(app_f_task_mean=APP_F_TASK_MEAN)
def slope_intercept_table(measures: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Calibration slope and intercept per agent and task class (the two numbers read first).

    For each task, the slope (intercept) is averaged over the agent's valid runs with a finite value;
    ``*_mean`` is the mean of these per-task means over the class's tasks (tasks weighted equally) and
    ``*_sd`` their sample SD across tasks (``ddof=1``; empty for one task). Binary classes use the
    logistic recalibration slope and the calibration intercept (logit offset); the survival class uses
    the Cox slope at the median-event horizon and has no intercept. The baseline is averaged like
    an agent.

    Returns
    -------
    DataFrame
        The columns of ``calibration_slope_intercept``; one row per (agent, task class) with at
        least one valid run of that class with a finite slope (a class where the slope is
        undefined on every run, e.g. constant predictions, has no row), sorted by agent (baseline
        last) then class (paper order). ``n_tasks`` counts tasks with a finite slope, ``n_runs``
        valid runs with a finite slope.

    See Also
    --------
    automd_analysis.metrics.calibration_intercept_slope : the binary measures.
    automd_analysis.metrics.cox_calibration_slope : the survival slope.

    References
    ----------
    {app_f_task_mean}
    .. [2] Van Calster B et al. (2019). Calibration: the Achilles heel of predictive analytics.
       BMC Medicine 17:230.

    Examples
    --------
    >>> runs = pd.DataFrame({"run_id": ["r1", "r2", "r3"], "agent": "A", "task": ["t", "t", "u"],
    ...     "task_kind": "classification", "valid": True, "reference": False})
    >>> measures = pd.DataFrame({"run_id": ["r1", "r2", "r3"], "cal_slope": [0.8, 1.0, 0.5],
    ...     "cal_intercept": [0.1, -0.1, 0.3]})
    >>> table = slope_intercept_table(measures, runs)
    >>> table[["task_class", "slope_mean", "slope_sd", "intercept_mean", "n_tasks", "n_runs"]].round(4)
           task_class  slope_mean  slope_sd  intercept_mean  n_tasks  n_runs
    0  classification         0.7    0.2828            0.15        2       3
    """
    joined = _join(measures, runs, ["cal_slope", "cal_intercept"])
    valid = joined.loc[joined["valid"].astype(bool)].copy()
    for c in ("cal_slope", "cal_intercept"):
        valid[c] = pd.to_numeric(valid[c], errors="coerce").astype(float)
    rows = []
    for agent in agent_order(joined["agent"]):
        for kind in TASK_CLASSES:
            present = joined.loc[(joined["agent"] == agent) & (joined["task_kind"] == kind)]
            if present.empty:
                continue
            mine = valid.loc[(valid["agent"] == agent) & (valid["task_kind"] == kind)]
            slope_tasks = mine.groupby("task", sort=True)["cal_slope"].mean()
            if not slope_tasks.notna().any():
                continue  # no valid run of the class has a finite slope: nothing to report
            icpt_tasks = mine.groupby("task", sort=True)["cal_intercept"].mean()
            s_mean, s_sd = mean_sd(slope_tasks)
            i_mean, i_sd = mean_sd(icpt_tasks if kind != "survival" else [])
            rows.append(
                (
                    agent,
                    kind,
                    s_mean,
                    s_sd,
                    i_mean,
                    i_sd,
                    int(slope_tasks.notna().sum()),
                    int(np.isfinite(mine["cal_slope"].to_numpy()).sum()),
                )
            )
    return SLOPE_INTERCEPT.frame(pd.DataFrame(rows, columns=SLOPE_INTERCEPT.named))


@fill_doc(austin_steyerberg_2014=AUSTIN_STEYERBERG_2014, two_runs_example=_TWO_RUNS_EXAMPLE)
def smoothed_curves(curve_rows: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Smoothed calibration curves per task and agent: each valid run's curve, averaged over runs.

    ``curve_rows`` holds ``run_id`` plus the columns of
    :data:`automd_analysis.scoring.calibration_measures.CURVE_COLUMNS` (every run read at the same
    points). At each point x: ``observed_mean`` / ``observed_sd`` = mean and sample SD over the valid
    runs with a value at x (the spread between runs), ``lo_mean`` / ``hi_mean`` = the mean of the
    runs' pointwise interval bounds (a typical single run's interval), ``n_runs`` = runs with a value.
    Points where no run has a value are dropped. The reliability bins drawn on these curves are
    averaged over the runs the same way
    (:func:`~automd_analysis.analysis.calibration_practices.reliability_bins`).

    Returns
    -------
    DataFrame
        The columns of ``smoothed_calibration_curves``, sorted by task, agent (baseline last), kind, x.

    See Also
    --------
    automd_analysis.scoring.calibration_measures.calibration_curve_rows : the per-run curves.
    automd_analysis.metrics.smoothed_calibration_curve : the smoother and its interval.

    References
    ----------
    {austin_steyerberg_2014}

    {two_runs_example}
    >>> rows = pd.DataFrame({"run_id": ["r1", "r2"], "kind": "binary", "horizon": float("nan"),
    ...     "x": 0.2, "observed": [0.1, 0.3], "se": 0.05, "lo": [0.0, 0.2], "hi": [0.2, 0.4]})
    >>> smoothed_curves(rows, runs)[["x", "observed_mean", "lo_mean", "n_runs"]]
         x  observed_mean  lo_mean  n_runs
    0  0.2            0.2      0.1       2
    """
    _require(runs, _RUN_COLUMNS, "runs")
    _require(curve_rows, ("run_id", "kind", "x", "observed", "lo", "hi"), "curve_rows")
    valid = runs.loc[runs["valid"].astype(bool), ["run_id", "agent", "task"]]
    # the stored curves carry the run key too (agent, task, ...): take the run's from ``runs``
    points = curve_rows[["run_id", "kind", "x", "observed", "lo", "hi"]]
    data = points.merge(valid, on="run_id", how="inner")
    data = data.loc[np.isfinite(pd.to_numeric(data["observed"], errors="coerce").astype(float))]
    rows = []
    order = agent_positions(runs["agent"])
    for (task, agent, kind, x), group in data.groupby(["task", "agent", "kind", "x"], sort=True):
        mean, sd = mean_sd(group["observed"])
        rows.append(
            (
                task,
                agent,
                kind,
                float(x),
                mean,
                sd,
                mean_sd(group["lo"])[0],
                mean_sd(group["hi"])[0],
                int(len(group)),
            )
        )
    out = pd.DataFrame(rows, columns=CURVES.named)
    out["_order"] = out["agent"].map(order)
    out = out.sort_values(["task", "_order", "kind", "x"], kind="mergesort").drop(columns="_order")
    return out.reset_index(drop=True).astype({"n_runs": "int64"})


@fill_doc(vickers_elkin_2006=VICKERS_ELKIN_2006, two_runs_example=_TWO_RUNS_EXAMPLE)
def decision_curves(
    measures: pd.DataFrame,
    runs: pd.DataFrame,
    thresholds: Sequence[float] = NET_BENEFIT_THRESHOLDS,
    *,
    kinds: Sequence[str] = ("classification",),
) -> pd.DataFrame:
    """Decision-curve data per task and agent from the stored net benefits.

    ``net_benefit_mean`` / ``_sd`` = mean and sample SD of the net benefit over the agent's valid runs
    on the task at each threshold t; ``treat_all`` = pi - (1 - pi) t / (1 - t) with pi the task's event
    rate (the ``prevalence`` column, identical for every run of a task: mean over its valid runs);
    ``treat_none`` = 0.

    Parameters
    ----------
    measures, runs : DataFrame
    thresholds : sequence of float
        A subset of the stored thresholds
        (:data:`~automd_analysis.scoring.calibration_measures.NET_BENEFIT_THRESHOLDS`).
    kinds : sequence of str, default ("classification",)
        Task kinds to include (``"sequential"`` works too; its units are patient-hours).

    Returns
    -------
    DataFrame
        The columns of ``decision_curves``, sorted by task, agent (baseline last), threshold.

    See Also
    --------
    automd_analysis.metrics.net_benefit : the per-run decision curve.

    References
    ----------
    {vickers_elkin_2006}

    {two_runs_example}
    >>> measures = pd.DataFrame({"run_id": ["r1", "r2"], "prevalence": 0.2,
    ...     "net_benefit_p10": [0.12, 0.14]})
    >>> decision_curves(measures, runs, [0.1])[["threshold", "net_benefit_mean", "treat_all"]]
       threshold  net_benefit_mean  treat_all
    0        0.1              0.13   0.111111
    """
    stored = {round(t, 6) for t in NET_BENEFIT_THRESHOLDS}
    bad = [t for t in thresholds if round(float(t), 6) not in stored]
    if bad:
        raise ValueError(
            f"thresholds {bad} are not stored; use a subset of {list(NET_BENEFIT_THRESHOLDS)}"
        )
    columns = [net_benefit_column(t) for t in thresholds]
    joined = _join(measures, runs, ["prevalence", *columns])
    data = joined.loc[joined["valid"].astype(bool) & joined["task_kind"].isin(list(kinds))]
    order = agent_positions(runs["agent"])
    rows = []
    for task, task_rows in data.groupby("task", sort=True):
        prevalence = mean_sd(pd.to_numeric(task_rows["prevalence"], errors="coerce"))[0]
        for agent, group in task_rows.groupby("agent", sort=True):
            for t, column in zip(thresholds, columns, strict=True):
                values = pd.to_numeric(group[column], errors="coerce").astype(float)
                mean, sd = mean_sd(values)
                odds = float(t) / (1.0 - float(t))
                rows.append(
                    (
                        task,
                        agent,
                        float(t),
                        mean,
                        sd,
                        int(np.isfinite(values.to_numpy()).sum()),
                        prevalence - (1.0 - prevalence) * odds,
                        0.0,
                    )
                )
    out = pd.DataFrame(rows, columns=DECISION_CURVES.named)
    out["_order"] = out["agent"].map(order)
    out = out.sort_values(["task", "_order", "threshold"], kind="mergesort").drop(columns="_order")
    return out.reset_index(drop=True).astype({"n_runs": "int64"})
