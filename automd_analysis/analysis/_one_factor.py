"""Runs of a one-factor experiment: the *llm* experiment varies the LLM of one agent (Tables 7 and
22), the *objectives* experiment the stated objective on one task (Tables 4, 15 and 16). Either
holds one value fixed, and the main experiment's runs with that value are its default arm."""

from __future__ import annotations

import pandas as pd

from automd_analysis.analysis.store import ScoreStore, chosen_or_only, selected_runs


def fixed_value(
    store: ScoreStore, experiment: str, *, role: str, fixed: str, chosen: str | None
) -> str:
    """The value of column ``fixed`` the experiment holds: ``chosen``, else the only one among its
    agent runs (a :class:`~automd_analysis.errors.ScoreStoreError` naming the values otherwise)."""
    runs = selected_runs(store, experiment, role=role, include_reference=False)
    values = sorted(set(runs[fixed]))
    listed = ", ".join(values)
    return chosen_or_only(
        values,
        chosen,
        fixed,
        f"the {role} experiment {experiment!r} has no runs with {fixed} {chosen!r}; its "
        f"{fixed}s: {listed or 'none'}",
        f"the {role} experiment {experiment!r} holds several {fixed}s ({listed})"
        if values
        else f"the {role} experiment {experiment!r} has no agent runs",
    )


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
    value = fixed_value(store, experiment, role=role, fixed=fixed, chosen=chosen)
    other = selected_runs(store, experiment, role=role, include_reference=False)
    main = selected_runs(store, main_experiment, include_reference=False)
    return main.loc[main[fixed] == value], other.loc[other[fixed] == value]
