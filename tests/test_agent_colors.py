"""Agent colours stay distinct in every figure, whatever the agents' names and order."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from automd_analysis.report.figure_style import AGENT_PALETTE, BASELINE_COLOR, agent_colors

PAPER = ["aide", "aiscientist", "codex", "autoresearch"]


def test_a_name_without_a_fixed_colour_does_not_take_a_paper_agents_colour():
    # "ai_scientist" (the paper-scale bench's name) hashes to autoresearch's colour and comes
    # first in sorted order: it used to take it, and the two agents were drawn alike
    colors = agent_colors(["ai_scientist", "aide", "autoresearch", "codex", "baseline"])
    assert colors["autoresearch"] == agent_colors(["autoresearch"])["autoresearch"]
    assert len(set(colors.values())) == 5
    assert list(colors) == ["ai_scientist", "aide", "autoresearch", "codex", "baseline"]


names = st.text(alphabet="abcdefghij_", min_size=1, max_size=8)


@given(
    st.lists(names, max_size=len(AGENT_PALETTE) - len(PAPER)),
    st.lists(st.sampled_from([*PAPER, "baseline"]), max_size=5),
    st.randoms(),
)
def test_colours_are_distinct_while_the_palette_lasts(others, paper, rng):
    agents = others + paper
    rng.shuffle(agents)
    colors = agent_colors(agents)
    assert list(colors) == list(dict.fromkeys(agents))
    assert len(set(colors.values())) == len(colors)
    for agent, color in colors.items():  # fixed colours do not depend on the company
        if agent in PAPER or agent == "baseline":
            assert color == agent_colors([agent])[agent]
        else:
            assert color in AGENT_PALETTE and color != BASELINE_COLOR
