"""The shared-docstring decorator: placeholders filled, indentation kept, typos caught."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import automd_analysis
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


def test_no_docstring_of_the_package_keeps_an_unfilled_placeholder():
    placeholder = re.compile(r"^[ ]*\{[a-z][a-z0-9_]*\}[ ]*$", re.M)
    left = []
    for info in pkgutil.walk_packages(automd_analysis.__path__, "automd_analysis."):
        if info.name.endswith("__main__"):
            continue  # importing it runs the command
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            ours = getattr(obj, "__module__", None) == info.name
            documented = (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__doc__
            if ours and documented and placeholder.search(obj.__doc__):
                left.append(f"{info.name}.{name}")
    assert not left, f"placeholders not filled (no @fill_doc): {left}"
