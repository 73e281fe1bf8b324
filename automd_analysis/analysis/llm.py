"""Effect of the LLM: paper Table 7 / Table 22 (section 4.6, App. J) and Table 11 (App. C).

One agent is run with several LLMs. The *llm* experiment stores only the non-default LLMs; the
default LLM's runs are the agent's runs in the *main* experiment (``docs/archive.md``).

Per LLM (rules as in Tables 2 and 3):

- penalised score: invalid = 0, averaged over tasks within each repetition, then mean and sample SD
  over repetitions;
- ECE: valid runs averaged within each task, then tasks weighted equally;
- valid rate: share of valid runs per repetition, mean (and SD) over repetitions;
- tokens per run (millions): the runs' ``tokens_total`` averaged within each repetition, then mean
  and SD over repetitions (runs without a token count are skipped).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from automd_analysis.analysis._docstrings import EXAMPLE_STORE, bootstrap_references
from automd_analysis.analysis._one_factor import one_factor_runs
from automd_analysis.analysis.catalog.llm_comparison import TABLE7, TABLE11, TABLE22
from automd_analysis.analysis.primary import group_summaries
from automd_analysis.analysis.store import (
    DEFAULT_EXPERIMENTS,
    ScoreStore,
    agent_order,
    selected_runs,
)
from automd_analysis.docstrings import fill_doc
from automd_analysis.signatures import parameters_of
from automd_analysis.stats.intervals import check_alpha, summarise
from automd_analysis.stats.resample import RunDraws, run_draws
from automd_analysis.stats.rules import mean_sd, per_repetition, valid_only

__all__ = [
    "llm_runs",
    "llm_summary",
    "llm_summary_detail",
    "table11",
    "table22",
    "table7",
    "token_usage",
]

_MILLION = 1e6


def llm_runs(
    store: ScoreStore,
    *,
    agent: str | None = None,
    main_experiment: str = DEFAULT_EXPERIMENTS["main"],
    llm_experiment: str = DEFAULT_EXPERIMENTS["llm"],
) -> pd.DataFrame:
    """The agent's runs with every LLM: the llm experiment plus its main-experiment runs.

    Main-experiment runs are used for the LLM(s) the llm experiment does not contain (the default
    LLM); if an LLM appears in both, the llm experiment's runs are used. Adds ``is_default``
    (``True`` for runs taken from the main experiment). Sorted by run_id.

    Parameters
    ----------
    agent : str, optional
        Default: the only agent of the llm experiment.
    """
    main, other = one_factor_runs(
        store,
        llm_experiment,
        role="llm",
        fixed="agent",
        chosen=agent,
        main_experiment=main_experiment,
    )
    main = main.loc[~main["llm"].isin(set(other["llm"]))]
    runs = pd.concat(
        [main.assign(is_default=True), other.assign(is_default=False)], ignore_index=True
    )
    runs["llm"] = runs["llm"].fillna("unknown").astype(str)
    return runs.sort_values("run_id", kind="mergesort").reset_index(drop=True)


def _llm_rows(matrix: RunDraws) -> list[dict]:
    """One row per LLM (default first, then alphabetically): the Table 22 columns, with the
    penalised score and ECE in every column of the run x replicate matrix (cells: LLM x task)."""
    runs = matrix.units
    reps = runs["rep"].to_numpy()
    tokens = runs["tokens_total"].to_numpy(dtype=float)[:, None]
    default = sorted(set(runs.loc[runs["is_default"], "llm"]))
    llms = default + sorted(set(runs["llm"]) - set(default))
    valid_values = {
        "nonpenalized_mean": valid_only(matrix.score[:, :1], matrix.valid[:, :1]),
        "ece_mean": valid_only(matrix.ece, matrix.valid),
    }
    out = []
    for llm, summary in group_summaries(matrix, "llm", llms, valid_values).items():
        mine = np.flatnonzero((runs["llm"] == llm).to_numpy())
        out.append(
            {
                "llm": llm,
                "is_default": llm in default,
                "n_runs": len(mine),
                **summary,
                "nonpenalized_mean": summary["nonpenalized_mean"][0],
                "valid_rate": summary["valid_rate_mean"],
                **_tokens_m(reps, tokens, mine),
            }
        )
    return out


def _tokens_m(reps: np.ndarray, tokens: np.ndarray, rows: np.ndarray) -> dict:
    """Tokens per run (millions) of the ``rows``: mean and SD over repetitions of each repetition's
    mean (runs without a count skipped), and how many runs have a count."""
    mean, sd = mean_sd(per_repetition(reps, tokens, rows)[:, 0] / _MILLION)
    n_tokens = int(np.isfinite(tokens[rows, 0]).sum())
    return {"tokens_m_mean": mean, "tokens_m_sd": sd, "n_with_tokens": n_tokens}


def _matrix(runs: pd.DataFrame, replicates, *, seed: int, n_boot) -> RunDraws:
    return run_draws(runs, replicates, ("llm", "task"), n_boot=n_boot, seed=seed, tag="table7")


@parameters_of(llm_runs)
def llm_summary_detail(store, *, agent, main_experiment, llm_experiment) -> pd.DataFrame:
    """Paper Table 22: the agent with each LLM.

    Columns: ``llm``, ``is_default``, ``n_runs``, ``penalized_mean``, ``penalized_sd``,
    ``nonpenalized_mean``, ``ece_mean``, ``valid_rate_mean``, ``valid_rate_sd``, ``tokens_m_mean``,
    ``tokens_m_sd`` (rules in the module docstring), ``n_with_tokens`` (runs whose token counts
    are recorded: AIDE and AI-Scientist-v2 log none, so imported runs may have no counts; the token
    means cover these runs only and are empty without any). The default LLM comes first, then the
    others alphabetically. Keyword arguments go to :func:`llm_runs`.
    """
    runs = llm_runs(
        store, agent=agent, main_experiment=main_experiment, llm_experiment=llm_experiment
    )
    rows = _llm_rows(_matrix(runs, None, seed=0, n_boot=None))
    point = [
        r | {"penalized_mean": r["penalized_mean"][0], "ece_mean": r["ece_mean"][0]} for r in rows
    ]
    return TABLE22.frame([{k: r[k] for k in TABLE22.named} for r in point])


@fill_doc(references=bootstrap_references("Table 7 and App. J"), example_store=EXAMPLE_STORE)
def llm_summary(
    store: ScoreStore,
    *,
    agent: str | None = None,
    main_experiment: str = DEFAULT_EXPERIMENTS["main"],
    llm_experiment: str = DEFAULT_EXPERIMENTS["llm"],
    alpha: float = 0.05,
    seed: int = 0,
    n_boot: int | None = None,
) -> pd.DataFrame:
    """Paper Table 7: the agent with each LLM, with two-stage bootstrap intervals.

    ``penalized_mean/sd``, ``ece_mean`` and ``tokens_m_mean`` as :func:`llm_summary_detail`;
    ``valid_rate`` is the mean over repetitions of the per-repetition share of valid runs.
    ``penalized_mean_ci_low/high`` is the 1 - ``alpha`` percentile interval over the B columns of
    the two-stage bootstrap (:func:`~automd_analysis.stats.resample.run_draws`, cells = (LLM,
    task)) of the penalised score (mean over repetitions of the mean over tasks, invalid = 0).
    ``ece_mean`` (valid runs averaged within task, then tasks equally) is the paper's plug-in
    binned ECE, biased upwards, so it has no interval; ``ece_mean_bc`` is its bootstrap
    bias-corrected value with its interval ``ece_mean_bc_ci_low/high``
    (:func:`~automd_analysis.stats.intervals.bias_corrected`). Empty intervals (and
    ``ece_mean_bc``) without replicates.

    Parameters
    ----------
    store : ScoreStore
    agent, main_experiment, llm_experiment
        As :func:`llm_runs`.
    alpha, seed, n_boot
        As :func:`~automd_analysis.analysis.primary.agent_summary`.

    Returns
    -------
    DataFrame
        ``llm, penalized_mean, penalized_sd, ece_mean, ece_mean_bc, valid_rate, tokens_m_mean``,
        then ``penalized_mean_ci_low, penalized_mean_ci_high, ece_mean_bc_ci_low,
        ece_mean_bc_ci_high``.

    Raises
    ------
    ScoreStoreError
        A valid run has no replicates, the replicates table is malformed, or the llm experiment
        holds no or several agents (``agent`` not given).

    See Also
    --------
    llm_summary_detail : the counts and SDs.
    automd_analysis.stats.rules : the aggregation rules.

    {references}

    {example_store}
    >>> llm_summary(example_store_with_replicates())[["llm", "ece_mean_bc_ci_low"]].shape
    (2, 2)
    """
    runs = llm_runs(
        store, agent=agent, main_experiment=main_experiment, llm_experiment=llm_experiment
    )
    alpha = check_alpha(alpha)
    rows = _llm_rows(_matrix(runs, store.replicates, seed=seed, n_boot=n_boot))
    rows = [r | {"ece_mean": float(r["ece_mean"][0]), "ece_mean_bc": r["ece_mean"]} for r in rows]
    bounds = {"penalized_mean": (0.0, 1.0)}
    rows = summarise(rows, TABLE7.intervals, alpha, bounds=bounds, **TABLE7.best_marks(rows))
    return TABLE7.frame([{k: r[k] for k in TABLE7.named} for r in rows])


def token_usage(store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]) -> pd.DataFrame:
    """Paper Table 11: tokens per run (millions) by agent, mean +- SD over repetitions.

    For each agent and repetition the ``tokens_total`` of its runs (tasks) are averaged (runs
    without a count skipped); the table reports the mean and sample SD over repetitions. The simple
    baseline uses no LLM and is left out.

    Returns
    -------
    DataFrame
        ``agent``, ``n_runs``, ``n_with_tokens``, ``tokens_m_mean``, ``tokens_m_sd``.
    """
    runs = selected_runs(store, experiment, include_reference=False)
    reps = runs["rep"].to_numpy()
    tokens = runs["tokens_total"].to_numpy(dtype=float)[:, None]
    rows = []
    for agent in agent_order(runs["agent"]):
        mine = np.flatnonzero((runs["agent"] == agent).to_numpy())
        rows.append({"agent": agent, "n_runs": len(mine), **_tokens_m(reps, tokens, mine)})
    return TABLE11.frame(rows)


# Paper names (the notebooks use the descriptive names above).
table7 = llm_summary
table22 = llm_summary_detail
table11 = token_usage
