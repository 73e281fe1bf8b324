"""Shared docstring text: one decorator that puts a shared fragment where a docstring names it.

Twin functions document the same inputs, returns or sources the same way. Rather than copy the
text, a docstring holds a line ``{name}`` (alone, indented as the text should be) and the function
is decorated with ``@fill_doc(name=TEXT)``: the line becomes ``TEXT``, every line of it indented
like the placeholder. The filled docstring is the function's ``__doc__``, so help(), Sphinx
(numpydoc) and the doctests all read the full text.

The decorator lives in the metrics layer, the lowest one (a metric module imports nothing else of
the package); every other layer imports it from :mod:`automd_analysis.docstrings`. The fragments
the metric modules share are defined here.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import TypeVar

__all__ = [
    "BINARY_INPUTS",
    "FOLLOW_UP_TIMES",
    "PATIENT_WEIGHTS",
    "SURVIVAL_INPUTS",
    "fill_doc",
]

T = TypeVar("T")

_PLACEHOLDER = re.compile(r"^(?P<indent>[ ]*)\{(?P<name>[a-z][a-z0-9_]*)\}[ ]*$", re.M)


def fill_doc(**fragments: str) -> Callable[[T], T]:
    """Fill the ``{name}`` lines of the decorated object's docstring with shared text.

    Each line that holds only ``{name}`` (after its indentation) is replaced by
    ``fragments[name]``, cleaned with :func:`inspect.cleandoc` and every line indented like the
    placeholder; blank lines stay blank. Other braces (a dict in an example, a set in a type)
    are left alone.

    Parameters
    ----------
    **fragments : str
        The text of each placeholder name.

    Returns
    -------
    callable
        A decorator that rewrites ``obj.__doc__`` in place and returns ``obj``. Without a
        docstring (``python -OO``) it returns ``obj`` unchanged.

    Raises
    ------
    ValueError
        A placeholder names no fragment, or a fragment fills no placeholder (a typo either way).

    Examples
    --------
    >>> @fill_doc(xy="x : float\\n    First.\\ny : float\\n    Second.")
    ... def add(x, y):
    ...     '''Sum.
    ...
    ...     Parameters
    ...     ----------
    ...     {xy}
    ...     '''
    >>> print(add.__doc__.strip())
    Sum.
    <BLANKLINE>
        Parameters
        ----------
        x : float
            First.
        y : float
            Second.
    """

    def fill(obj: T) -> T:
        doc = obj.__doc__
        if doc is None:
            return obj
        used: set[str] = set()

        def replace(match: re.Match[str]) -> str:
            name, indent = match["name"], match["indent"]
            if name not in fragments:
                raise ValueError(f"{obj.__qualname__}: docstring names no fragment {{{name}}}")
            used.add(name)
            lines = inspect.cleandoc(fragments[name]).splitlines()
            return "\n".join(indent + line if line.strip() else "" for line in lines)

        obj.__doc__ = _PLACEHOLDER.sub(replace, doc)
        unused = sorted(set(fragments) - used)
        if unused:
            raise ValueError(f"{obj.__qualname__}: no placeholder for {', '.join(unused)}")
        return obj

    return fill


BINARY_INPUTS = """
    y_true : array-like of shape (n,)
        Binary outcomes (0/1 or bool).
    y_prob : array-like of shape (n,)
        Predicted probabilities in [0, 1], scored as submitted.
"""

SURVIVAL_INPUTS = """
    durations : array-like of shape (n,)
        Test follow-up times (finite, >= 0).
    events : array-like of shape (n,)
        1 = event, 0 = censored (bool allowed).
    surv : array-like of shape (n, G)
        Predicted survival curves on ``time_grid``, finite, in [0, 1].
    time_grid : array-like of shape (G,)
        Strictly increasing grid times.
"""

FOLLOW_UP_TIMES = """
durations : array-like of shape (n,)
    Follow-up times (finite, >= 0).
"""

PATIENT_WEIGHTS = """
weights : array-like of int, shape (n,), optional
    Multiplicity of each patient.
"""
