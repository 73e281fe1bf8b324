"""Runs of a one-factor experiment: the *llm* experiment varies the LLM of one agent (Tables 7 and
22), the *objectives* experiment the stated objective on one task (Tables 4, 15 and 16). Either
holds one value fixed, and the main experiment's runs with that value are its default arm."""

from __future__ import annotations

import pandas as pd

from automd_analysis.analysis.store import ScoreStore, selected_runs
from automd_analysis.errors import ScoreStoreError


def fixed_value(
    store: ScoreStore, experiment: str, *, role: str, fixed: str, chosen: str | None
) -> str:
    """The value of column ``fixed`` the experiment holds: ``chosen``, else the only one among its
    agent runs (a :class:`~automd_analysis.errors.ScoreStoreError` naming the values otherwise)."""
    runs = selected_runs(store, experiment, role=role, include_reference=False)
    return _held(runs, experiment, role, fixed, chosen)


def one_factor_runs(
    store: ScoreStore,
    experiment: str,
    *,
    role: str,
    fixed: str,
    chosen: str | None,
    main_experiment: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(main, other)``: the agent runs with the :func:`fixed_value` in the main experiment and in
    ``experiment`` (:func:`~automd_analysis.analysis.store.selected_runs` rows)."""
    other = selected_runs(store, experiment, role=role, include_reference=False)
    value = _held(other, experiment, role, fixed, chosen)
    main = selected_runs(store, main_experiment, include_reference=False)
    return main.loc[main[fixed] == value], other.loc[other[fixed] == value]


def _held(runs: pd.DataFrame, experiment: str, role: str, fixed: str, chosen: str | None) -> str:
    values = sorted(set(runs[fixed]))
    listed = ", ".join(values)
    where = f"the {role} experiment {experiment!r}"
    if chosen is not None:
        if chosen not in values:
            raise ScoreStoreError(
                f"{where} has no runs with {fixed} {chosen!r}; its {fixed}s: {listed or 'none'}",
                fix=f"pass one of these {fixed}s",
                code=f"store.no_{fixed}",
            )
        return chosen
    if len(values) != 1:
        several = f"holds several {fixed}s ({listed})" if values else "has no agent runs"
        raise ScoreStoreError(
            f"{where} {several}",
            fix=f"pass {fixed}=... to choose one",
            code=f"store.ambiguous_{fixed}",
        )
    return values[0]
