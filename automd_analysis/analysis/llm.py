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

import math

import pandas as pd

from automd_analysis.analysis.store import (
    DEFAULT_EXPERIMENTS,
    ScoreStore,
    agent_order,
    mean_sd,
    selected_runs,
)
from automd_analysis.errors import ScoreStoreError

__all__ = [
    "TABLE7_COLUMNS",
    "llm_runs",
    "llm_summary",
    "llm_summary_detail",
    "table11",
    "table22",
    "table7",
    "token_usage",
]

TABLE7_COLUMNS: tuple[str, ...] = (
    "llm",
    "penalized_mean",
    "penalized_sd",
    "ece_mean",
    "valid_rate",
    "tokens_m_mean",
)
_MILLION = 1e6


def _llm_agent(store: ScoreStore, llm_experiment: str, agent: str | None) -> str:
    runs = selected_runs(store, llm_experiment, role="llm", include_reference=False)
    agents = sorted(set(runs["agent"]))
    if agent is not None:
        if agent not in agents:
            raise ScoreStoreError(
                f"agent {agent!r} has no runs in the llm experiment {llm_experiment!r}; "
                f"agents there: {', '.join(agents) or 'none'}",
                fix="pass one of these agents",
                code="store.no_agent",
            )
        return agent
    if len(agents) != 1:
        raise ScoreStoreError(
            f"the llm experiment {llm_experiment!r} holds several agents ({', '.join(agents)})",
            fix="pass agent=... to choose one",
            code="store.ambiguous_agent",
        )
    return agents[0]


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
    agent = _llm_agent(store, llm_experiment, agent)
    other = selected_runs(store, llm_experiment, role="llm", include_reference=False)
    other = other.loc[other["agent"] == agent].assign(is_default=False)
    main = selected_runs(store, main_experiment, include_reference=False)
    main = main.loc[(main["agent"] == agent) & ~main["llm"].isin(set(other["llm"]))]
    runs = pd.concat([main.assign(is_default=True), other], ignore_index=True)
    runs["llm"] = runs["llm"].fillna("unknown").astype(str)
    return runs.sort_values("run_id", kind="mergesort").reset_index(drop=True)


def _per_rep_summary(runs: pd.DataFrame) -> dict:
    per_rep = runs.groupby("rep", sort=True).agg(
        penalized=("penalized", "mean"),
        valid_rate=("valid", "mean"),
        tokens=("tokens_total", "mean"),
    )
    pen_mean, pen_sd = mean_sd(per_rep["penalized"])
    rate_mean, rate_sd = mean_sd(per_rep["valid_rate"].astype(float))
    tok_mean, tok_sd = mean_sd(per_rep["tokens"] / _MILLION)
    per_task_score = runs.groupby("task", sort=True)["score"].mean()
    per_task_ece = runs.loc[runs["valid"]].groupby("task", sort=True)["ece"].mean()
    return {
        "n_runs": len(runs),
        "penalized_mean": pen_mean,
        "penalized_sd": pen_sd,
        "nonpenalized_mean": mean_sd(per_task_score)[0],
        "ece_mean": mean_sd(per_task_ece)[0],
        "valid_rate_mean": rate_mean,
        "valid_rate_sd": rate_sd,
        "tokens_m_mean": tok_mean,
        "tokens_m_sd": tok_sd,
        "n_with_tokens": int(runs["tokens_total"].notna().sum()),
    }


def llm_summary_detail(
    store: ScoreStore,
    *,
    agent: str | None = None,
    main_experiment: str = DEFAULT_EXPERIMENTS["main"],
    llm_experiment: str = DEFAULT_EXPERIMENTS["llm"],
) -> pd.DataFrame:
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
    default = sorted(set(runs.loc[runs["is_default"], "llm"]))
    others = sorted(set(runs["llm"]) - set(default))
    rows = []
    for llm in default + others:
        mine = runs.loc[runs["llm"] == llm]
        rows.append({"llm": llm, "is_default": llm in default, **_per_rep_summary(mine)})
    columns = [
        "llm",
        "is_default",
        "n_runs",
        "penalized_mean",
        "penalized_sd",
        "nonpenalized_mean",
        "ece_mean",
        "valid_rate_mean",
        "valid_rate_sd",
        "tokens_m_mean",
        "tokens_m_sd",
        "n_with_tokens",
    ]
    return pd.DataFrame(rows, columns=columns)


def llm_summary(
    store: ScoreStore,
    *,
    agent: str | None = None,
    main_experiment: str = DEFAULT_EXPERIMENTS["main"],
    llm_experiment: str = DEFAULT_EXPERIMENTS["llm"],
) -> pd.DataFrame:
    """Paper Table 7: :func:`llm_summary_detail` reduced to :data:`TABLE7_COLUMNS`.

    ``valid_rate`` is the mean over repetitions of the per-repetition share of valid runs.
    """
    wide = llm_summary_detail(
        store, agent=agent, main_experiment=main_experiment, llm_experiment=llm_experiment
    ).rename(columns={"valid_rate_mean": "valid_rate"})
    return wide[list(TABLE7_COLUMNS)]


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
    rows = []
    for agent in agent_order(runs["agent"]):
        mine = runs.loc[runs["agent"] == agent]
        per_rep = mine.groupby("rep", sort=True)["tokens_total"].mean() / _MILLION
        mean, sd = mean_sd(per_rep)
        n_tokens = int(mine["tokens_total"].notna().sum())
        rows.append((agent, len(mine), n_tokens, mean, sd if n_tokens else math.nan))
    out = pd.DataFrame(
        rows, columns=["agent", "n_runs", "n_with_tokens", "tokens_m_mean", "tokens_m_sd"]
    )
    return out.astype({"n_runs": "int64", "n_with_tokens": "int64"})


# Paper names (the notebooks use the descriptive names above).
table7 = llm_summary
table22 = llm_summary_detail
table11 = token_usage
