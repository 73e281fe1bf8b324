"""Notebook 06 - the same agent with different LLMs: paper Tables 7, 22 and 11."""

from __future__ import annotations

from automd_analysis.analysis.catalog.declaration import Column, Figure, Stat, Table, TableSpec

NOTEBOOK = "06_llm_comparison"
TITLE = "Same agent, different LLMs"

TABLE7 = Table(
    "table7_llm",
    NOTEBOOK,
    "One agent with several LLMs: score, ECE, validity, tokens.",
    (
        *Column.texts("llm"),
        *Column.mean_sd("penalized", interval=True),
        *Column.numbers("ece_mean"),
        Column("ece_mean_bc", interval=True, bias_corrected=True, kind="number"),
        Column("valid_rate", kind="share"),
        *Column.numbers("tokens_m_mean"),
    ),
    paper="Table 7",
    spec=TableSpec(
        caption="One agent with several LLMs: penalised score (mean ± SD over repetitions), "
        "ECE averaged across tasks (plug-in: the paper's binned ECE, biased upwards, no "
        "interval; bias-corrected: 2 x plug-in minus the bootstrap mean, with its 95% "
        "bootstrap interval from below it up to the plug-in), valid-run rate and tokens per run "
        "(millions).",
        labels=("llm",),
        stats=(
            Stat("Penalised score", "penalized_mean", "penalized_sd", direction="max"),
            Stat("ECE", "ece_mean"),
            Stat("ECE, bias-corrected", "ece_mean_bc", direction="min"),
            Stat("Valid runs", "valid_rate", percent=True, decimals=0),
            Stat("Tokens (M)", "tokens_m_mean"),
        ),
        exclude_from_best=(),
    ),
    computed_by="automd_analysis.analysis.llm.llm_summary",
)

TABLE22 = Table(
    "table22_llm",
    NOTEBOOK,
    "Table 7 with SDs and run counts.",
    (
        *Column.texts("llm"),
        Column("is_default", "bool"),
        *Column.counts("n_runs"),
        *Column.mean_sd("penalized"),
        *Column.numbers("nonpenalized_mean", "ece_mean"),
        *Column.mean_sd("valid_rate", "share"),
        *Column.mean_sd("tokens_m"),
        *Column.counts("n_with_tokens"),
    ),
    paper="Table 22",
    computed_by="automd_analysis.analysis.llm.llm_summary_detail",
)

TABLE11 = Table(
    "table11_tokens",
    NOTEBOOK,
    "Tokens per run by agent.",
    (
        *Column.texts("agent"),
        *Column.counts("n_runs", "n_with_tokens"),
        *Column.mean_sd("tokens_m"),
    ),
    paper="Table 11",
    spec=TableSpec(
        caption="Tokens per run (millions; mean ± SD over repetitions).",
        labels=("agent",),
        stats=(Stat("Tokens per run (M)", "tokens_m_mean", "tokens_m_sd"),),
    ),
    computed_by="automd_analysis.analysis.llm.token_usage",
)

TABLES = (TABLE7, TABLE22, TABLE11)

FIGURES = (
    Figure(
        "table7_forest",
        NOTEBOOK,
        "Score and ECE per LLM with 95% intervals.",
        paper="Table 7",
        caption="Penalised score and bias-corrected ECE per LLM with 95% two-stage bootstrap "
        "intervals (ECE: the interval of the bias-corrected value). The rows are one agent's "
        "LLMs, not agents, so all are drawn dark grey.",
        computed_by="automd_analysis.report.uncertainty_figures.table7_forest",
    ),
)
