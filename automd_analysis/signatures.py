"""Parameters that twin public functions share, declared once.

Several public functions take exactly the same inputs (Tables 3 and 5 those of Table 2; the
objectives tables those of :func:`~automd_analysis.analysis.objectives.objective_runs`). Their
parameter *text* is shared with :func:`~automd_analysis.docstrings.fill_doc`; their *signature* is
shared with :func:`parameters_of`: the first function of the family is written out in full, and
each twin lists the same parameter names and says ``@parameters_of(first)``. Type checkers read the
twin's signature from the first one through :class:`typing.ParamSpec` (mypy and pyright check a
twin's calls against it, defaults included), and at run time the twin receives the first one's
defaults and annotations, so calls, :func:`inspect.signature`, ``help()`` and notebook tooltips
show the whole signature.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["parameters_of"]

P = ParamSpec("P")
R = TypeVar("R")


def parameters_of(template: Callable[P, R]) -> Callable[[Callable[..., R]], Callable[P, R]]:
    """Give the decorated function the parameters of ``template``: kinds, annotations, defaults.

    The decorated function lists the same parameter names, in the same order and of the same
    kinds, without annotations or defaults (those are written once, on ``template``); its return
    annotation and docstring stay its own.

    Parameters
    ----------
    template : callable
        The function whose signature is written out in full.

    Returns
    -------
    callable
        A decorator that sets the function's ``__defaults__``, ``__kwdefaults__`` and parameter
        annotations from ``template`` and returns the function itself (typed as having
        ``template``'s parameters).

    Raises
    ------
    TypeError
        At decoration: the names or kinds differ from ``template``'s, or the function gives a
        parameter its own annotation or default.

    Examples
    --------
    >>> def first(x: int, *, scale: float = 1.0) -> float:
    ...     return x * scale
    >>> @parameters_of(first)
    ... def second(x, *, scale) -> float:
    ...     return x / scale
    >>> print(inspect.signature(second))
    (x: 'int', *, scale: 'float' = 1.0) -> 'float'
    >>> second(3)
    3.0
    """
    theirs = inspect.signature(template).parameters.values()

    def give(function: Callable[..., R]) -> Callable[P, R]:
        mine = inspect.signature(function).parameters.values()
        if [(p.name, p.kind) for p in mine] != [(p.name, p.kind) for p in theirs]:
            raise TypeError(
                f"{function.__qualname__} does not list the parameters of "
                f"{template.__qualname__} {inspect.signature(template)}"
            )
        own = [p.name for p in mine if p.default is not p.empty or p.annotation is not p.empty]
        if own:
            raise TypeError(
                f"{function.__qualname__} declares its own annotation or default for {own}: "
                f"declare them once, on {template.__qualname__}"
            )
        function.__defaults__ = template.__defaults__
        function.__kwdefaults__ = dict(template.__kwdefaults__ or {}) or None
        returns = {k: v for k, v in function.__annotations__.items() if k == "return"}
        given = {k: v for k, v in template.__annotations__.items() if k != "return"}
        function.__annotations__ = given | returns
        return function  # type: ignore[return-value]

    return give
