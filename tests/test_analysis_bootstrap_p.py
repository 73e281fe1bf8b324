"""The p-value inverts the published interval: "the interval excludes 0" exactly when
"p < alpha", for any estimate and draws (ties, zeros, one-sided), a p-value is never 0, and a
pairwise row's p-value and interval always agree."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis.stats.intervals import estimate, p_value

_VALUES = st.one_of(
    st.floats(-1.0, 1.0, allow_nan=False),
    st.sampled_from([0.0, -0.0, 0.1, -0.1, 1e-300, -1e-300]),  # ties and zeros
)
_DRAWS = st.tuples(_VALUES, st.lists(_VALUES, min_size=2, max_size=60)).map(
    lambda v: np.array([v[0], *v[1]])
)
_ALPHA = st.floats(0.001, 0.999)


def _excludes(distribution, alpha):
    low, high = estimate(distribution, alpha)[1:]
    return bool(low > 0 or high < 0)


@settings(max_examples=300)
@given(_DRAWS, _ALPHA)
def test_p_below_alpha_exactly_when_the_interval_excludes_zero(distribution, alpha):
    p = p_value(distribution, alpha)
    assert 0.0 < p <= 1.0
    assert (p < alpha) == _excludes(distribution, alpha)


@settings(max_examples=200)
@given(_DRAWS, st.lists(_ALPHA, min_size=1, max_size=5))
def test_one_p_value_inverts_the_interval_at_every_level(distribution, levels):
    # p is computed for alpha = 0.05; at any other level above the floor 1 / (B + 1) it still says
    # whether that level's interval excludes 0 (up to rounding of the crossing point)
    p = p_value(distribution)
    floor = 1.0 / distribution.size
    for alpha in levels:
        if abs(alpha - p) > 1e-9 and alpha > floor + 1e-9:
            assert (p < alpha) == _excludes(distribution, alpha)


def test_by_hand():
    # draws -9..90: 0 sits at sorted position 9 of 100, quantile 9/99 -> p = 18/99
    assert p_value(np.array([5.0, *range(-9, 91)])) == pytest.approx(18 / 99)
    assert p_value(np.array([-5.0, *range(-90, 10)])) == pytest.approx(18 / 99)
    # every draw > 0: never 0, but 1 / (B + 1)
    assert p_value(np.array([1.0, 1.0, 2.0, 3.0]), alpha=0.5) == pytest.approx(1 / 4)
    assert p_value(np.array([1.0, *np.linspace(0.5, 1.5, 999)])) == pytest.approx(1 / 1000)
    assert p_value(np.array([0.0, 0.0, 0.0])) == 1.0  # estimate 0: the interval holds 0
    assert p_value(np.array([0.0, 1.0, 2.0])) == 1.0  # estimate 0, draws above: hull holds 0
    # an estimate on the other side of 0 from every draw: the interval [estimate, ...] holds 0
    assert p_value(np.array([-0.1, 1.0, 2.0, 3.0])) == 1.0
    # interpolation: draws -1, 3 -> q(u) = -1 + 4u crosses 0 at u = 1/4 -> p = 1/2
    assert p_value(np.array([1.0, -1.0, 3.0])) == pytest.approx(0.5)
    assert math.isnan(p_value(np.array([0.0, 1.0])))
    assert math.isnan(p_value(np.array([0.0, math.nan, 1.0])))
