"""The shared-docstring decorator: placeholders filled, indentation kept, typos caught."""

from __future__ import annotations

import pytest

from automd_analysis.docstrings import fill_doc
from automd_analysis.metrics import ece, survival_ece
from automd_analysis.metrics._docstrings import BINARY_INPUTS, SURVIVAL_INPUTS


def test_a_placeholder_line_becomes_the_fragment_indented_like_it():
    @fill_doc(pair="a : int\n    First.\n\nb : int")
    def f():
        """Doc.

        Parameters
        ----------
        {pair}
        c : dict, default {"k": 1}
        """

    assert f.__doc__ == (
        "Doc.\n\n        Parameters\n        ----------\n        a : int\n            First.\n"
        '\n        b : int\n        c : dict, default {"k": 1}\n        '
    )


def test_an_unknown_placeholder_or_an_unused_fragment_is_an_error():
    def f():
        """{missing}"""

    with pytest.raises(ValueError, match=r"names no fragment \{missing\}"):
        fill_doc()(f)

    def g():
        """No placeholder."""

    with pytest.raises(ValueError, match="no placeholder for extra"):
        fill_doc(extra="text")(g)


def test_an_object_without_docstring_is_returned_unchanged():
    def f():
        pass

    assert fill_doc(x="text")(f) is f
    assert f.__doc__ is None


@pytest.mark.parametrize(
    "function,fragment", [(ece, BINARY_INPUTS), (survival_ece, SURVIVAL_INPUTS)]
)
def test_the_metrics_docstrings_carry_their_shared_parameters(function, fragment):
    first = fragment.strip().splitlines()[0]
    assert f"    {first}\n" in function.__doc__
    assert "{" + "binary_inputs}" not in function.__doc__
