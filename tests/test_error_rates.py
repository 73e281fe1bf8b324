"""The report's intervals and tests keep their error rates where runs can be invalid: one grid point
of the simulation harness (``bench/error_rates.py``; the full grid and its table are in
docs/statistics.md, "Error rates, measured").

4 agents x 5 binary tasks x 3 repetitions, 300 test patients, every run invalid with probability
0.1 (the setting where the earlier two-stage bootstrap covered 78 %), 100 studies scored through
the public API. Coverage of the means must lie in [90 %, 99 %] (the bias-corrected ECE's at least
90 %: it is conservative by construction), and the pairwise test's type-I error stay at or below
8 % (5 % nominal plus about two Monte Carlo standard errors).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import error_rates


@pytest.mark.slow
def test_one_grid_point_with_invalid_runs_keeps_coverage_and_type_one_error():
    point = error_rates.Point("ci", agents=4, tasks=5, reps=3, n=300, invalid=(0.1,))
    rows = error_rates.run_point(point, studies=100, seed=3, n_boot=200, jobs=1)
    rate = {(r["quantity"], r["measure"]): r["rate"] for r in rows}
    for quantity in ("penalized mean", "non-penalised mean"):
        assert 0.90 <= rate[(quantity, "coverage")] <= 0.99, (quantity, rate)
    # conservative by construction (99.5-100 % on the grid, not <= 99 %): the interval must hold
    # every bias the stored replicates cannot rule out (docs/statistics.md sections 9 and 11)
    assert rate[("bias-corrected ECE", "coverage")] >= 0.90, rate
    for quantity in ("score difference", "ECE difference"):
        assert 0.90 <= rate[(quantity, "coverage")] <= 0.995, (quantity, rate)
        assert rate[(quantity, "type-I error")] <= 0.08, (quantity, rate)
    assert rate[("score difference", "family-wise error (Holm)")] <= 0.08
    assert rate[("best mark", "single best under the null")] <= 0.08
