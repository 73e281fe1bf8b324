"""The page-prose check sees a statement its tables contradict, and the notebooks' prose states
none that the method in force contradicts (issue 29 item 4)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pandas as pd
import pytest
from prose_claims import CLAIMS, contradicted_claims, page_text

ROOT = Path(__file__).resolve().parent.parent

#: Table 3's layout under the method in force: plug-in ECE without an interval, the
#: bias-corrected value with an interval from below it up to (at least) the plug-in.
TABLE3 = pd.DataFrame(
    {"agent": ["a", "b"], "all": [0.09, 0.07], "all_bc": [0.085, 0.068],
     "all_bc_ci_low": [0.05, 0.033], "all_bc_ci_high": [0.12, 0.103]}
)  # fmt: skip
OLD_02 = (
    "One property of ECE shows here: the ECE of a resampled test set is on average larger than "
    "that of the original one, so on small test sets the whole interval can lie above the "
    "estimate."
)
OLD_06 = "so on small test sets an ECE interval can lie above its estimate."


@pytest.mark.parametrize("prose", [OLD_02, OLD_06], ids=["page 02", "page 06"])
def test_the_old_prose_is_contradicted_by_tables_whose_intervals_hold_their_estimates(prose):
    [problem] = contradicted_claims(prose, {"table3_ece": TABLE3})
    assert "no interval of the page's tables lies above its estimate" in problem


def test_the_old_prose_stands_where_an_interval_does_lie_above_its_estimate():
    plug_in = pd.DataFrame({"ece": [0.05], "ece_ci_low": [0.06], "ece_ci_high": [0.09]})
    assert contradicted_claims(OLD_02, {"t": plug_in}) == []


def test_caption_claims_are_checked_against_the_columns():
    caption = (
        "Plug-in: the paper's binned ECE (App. F), biased upwards, so shown without an interval. "
        "Bias-corrected: 2 x plug-in minus the bootstrap mean, with its 95% interval, which "
        "reaches from below the corrected value up to the plug-in."
    )
    assert contradicted_claims(caption, {"table3_ece": TABLE3}) == []
    short = TABLE3.assign(all_bc_ci_high=[0.088, 0.103])  # ends below the plug-in 0.09
    [problem] = contradicted_claims(caption, {"table3_ece": short})
    assert "table3_ece.all_bc: interval does not reach from below the corrected value" in problem
    assert "in 1 rows" in problem
    above = TABLE3.assign(all_bc_ci_low=[0.086, 0.033])  # starts above the corrected 0.085
    [problem] = contradicted_claims(caption, {"table3_ece": above})
    assert "in 1 rows" in problem
    with_plug_in_interval = TABLE3.assign(all_ci_low=0.0, all_ci_high=1.0)
    [problem] = contradicted_claims(caption, {"table3_ece": with_plug_in_interval})
    assert "table3_ece.all: the plug-in value has an interval" in problem


def test_page_text_is_the_words_of_the_page():
    html = "<style>p{}</style><p>An <em>interval</em>\n can&nbsp;lie</p><script>x</script>"
    assert page_text(html) == "An interval can lie"


@pytest.mark.parametrize("notebook", sorted((ROOT / "notebooks").glob("[0-9]*.ipynb")))
def test_no_notebook_states_that_an_interval_lies_above_its_estimate(notebook):
    """Under the method in force the ECE columns with intervals are bias-corrected, and their
    interval always holds the corrected value (analysis.aggregate.bias_corrected), so no page may
    say otherwise; the rendered pages are checked against their tables in test_regenerate."""
    text = " ".join(
        cell.source
        for cell in nbformat.read(notebook, as_version=4).cells
        if cell.cell_type == "markdown"
    )
    above = next(c for c in CLAIMS if c.name == "interval above its estimate")
    assert above.pattern.search(" ".join(text.split())) is None
