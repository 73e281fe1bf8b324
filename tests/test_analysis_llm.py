"""Paper Table 7 / Table 22 (LLM comparison, App. J) and Table 11 (tokens) on hand-built stores."""

from __future__ import annotations

import math
import statistics

import pytest
import storebuilder as sb

from automd_analysis.analysis import catalog, llm
from automd_analysis.errors import ScoreStoreError


def _runs():
    runs = []
    # default LLM: the main experiment's runs of agent "codex"
    for rep, (a, b) in enumerate([(0.6, 0.4), (0.5, 0.3), (0.7, 0.5)]):
        runs.append(sb.run("codex", "clf_a", rep, score=a, ece=0.1, tokens=1e6 * (rep + 1)))
        runs.append(sb.run("codex", "surv_a", rep, score=b, ece=0.3, tokens=3e6))
    runs.append(sb.run("aide", "clf_a", 0, score=0.1, tokens=2e6))  # other agent: not in Table 7
    runs += [sb.run("baseline", "clf_a", k, score=0.5) for k in range(5)]
    # another LLM in the llm experiment: one invalid run, ECE per task 0.05 / (0.01, 0.03)
    for rep in range(3):
        runs.append(
            sb.run(
                "codex",
                "clf_a",
                rep,
                experiment="llm",
                llm="other",
                score=0.6,
                ece=0.05,
                tokens=5e5,
            )
        )
        runs.append(
            sb.run(
                "codex",
                "surv_a",
                rep,
                experiment="llm",
                llm="other",
                score=0.4,
                valid=rep != 2,
                ece=(0.01, 0.03, 0.5)[rep],
                tokens=None if rep else 1e6,
            )
        )
    return runs


def test_table22_per_llm():
    table = llm.table22(sb.build_store(_runs()))
    assert list(table["llm"]) == ["llm-default", "other"]
    assert list(table["is_default"]) == [True, False]
    default, other = table.iloc[0], table.iloc[1]
    per_rep = [(0.6 + 0.4) / 2, (0.5 + 0.3) / 2, (0.7 + 0.5) / 2]
    assert default["penalized_mean"] == pytest.approx(statistics.mean(per_rep))
    assert default["penalized_sd"] == pytest.approx(statistics.stdev(per_rep))
    assert default["ece_mean"] == pytest.approx(0.2)
    tokens = [(1 + 3) / 2, (2 + 3) / 2, (3 + 3) / 2]
    assert default["tokens_m_mean"] == pytest.approx(statistics.mean(tokens))
    assert default["tokens_m_sd"] == pytest.approx(statistics.stdev(tokens))
    assert other["penalized_mean"] == pytest.approx(statistics.mean([0.5, 0.5, 0.3]))
    assert other["valid_rate_mean"] == pytest.approx(statistics.mean([1, 1, 0.5]))
    assert other["ece_mean"] == pytest.approx((0.05 + 0.02) / 2)  # the invalid run's ECE ignored
    # runs without a token count are skipped: rep0 (0.5 + 1)/2, rep1 and rep2 0.5
    assert other["tokens_m_mean"] == pytest.approx(statistics.mean([0.75, 0.5, 0.5]))
    # ... and the table says how many runs the token means cover
    assert (default["n_runs"], default["n_with_tokens"]) == (6, 6)
    assert (other["n_runs"], other["n_with_tokens"]) == (6, 4)


def test_table7_contract_columns():
    table = llm.table7(sb.build_store(_runs()))
    assert table.columns.tolist() == catalog.table("table7_llm").named
    assert table.loc[1, "valid_rate"] == pytest.approx(5 / 6)


def test_llm_in_both_experiments_uses_the_llm_experiment():
    runs = _runs() + [sb.run("codex", "seq_a", 0, llm="other", score=0.0)]
    table = llm.table22(sb.build_store(runs)).set_index("llm")
    assert table.loc["other", "n_runs"] == 6


def test_agent_choice():
    runs = _runs() + [sb.run("aide", "clf_a", 0, experiment="llm", llm="x")]
    with pytest.raises(ScoreStoreError) as info:
        llm.table7(sb.build_store(runs))
    assert info.value.code == "store.ambiguous_agent"
    assert list(llm.table7(sb.build_store(runs), agent="aide")["llm"]) == ["llm-default", "x"]
    with pytest.raises(
        ScoreStoreError, match="has no runs with agent 'nobody'; its agents: aide, codex"
    ):
        llm.table7(sb.build_store(runs), agent="nobody")
    baseline_only = [sb.run("codex", "clf_a", 0)] + [
        sb.run("baseline", "clf_a", 0, experiment="llm", llm="x", reference=True)
    ]
    with pytest.raises(ScoreStoreError, match="the llm experiment 'llm' has no agent runs"):
        llm.table7(sb.build_store(baseline_only))
    with pytest.raises(ScoreStoreError) as info:
        llm.table7(sb.build_store([sb.run("codex", "clf_a", 0)]))
    assert info.value.code == "store.no_experiment"


def test_table11_tokens_by_agent():
    table = llm.table11(sb.build_store(_runs())).set_index("agent")
    assert list(table.index) == ["aide", "codex"]
    assert table.loc["codex", "tokens_m_mean"] == pytest.approx(statistics.mean([2, 2.5, 3]))
    assert table.loc["codex", "tokens_m_sd"] == pytest.approx(statistics.stdev([2, 2.5, 3]))
    assert table.loc["aide", "tokens_m_mean"] == pytest.approx(2.0)
    assert math.isnan(table.loc["aide", "tokens_m_sd"])


def test_the_default_llm_has_the_agents_tokens_of_table11():
    runs = _runs()
    runs.append(sb.run("codex", "seq_a", 1, tokens=None))  # a run without a count is skipped
    store = sb.build_store(runs)
    table11 = llm.table11(store).set_index("agent").loc["codex"]
    default = llm.table22(store).set_index("llm").loc["llm-default"]
    columns = ["tokens_m_mean", "tokens_m_sd", "n_with_tokens"]
    assert default[columns].tolist() == table11[columns].tolist()
    assert (table11["n_runs"], table11["n_with_tokens"]) == (7, 6)
