"""Statement forms that hold calls, and calls made on the code's behalf by a library.

:class:`StatementForms` is mixed into the interpreter (:mod:`.interpreter`), which walks
assignments, expressions, ``return``, ``if``/loops, ``with``, ``try`` and ``match`` itself. This
module adds the forms whose calls it used to skip:

- ``raise X(main())`` and ``raise ... from f()``: ``if __name__ == "__main__": raise
  SystemExit(main())`` runs ``main()``;
- ``assert check(x), message(y)`` and ``del table[key()]``;
- ``match`` guards (``case x if f(x):``) and ``except`` clauses' types;
- decorators: evaluated when the function or class is defined; a decorator of the version's own
  code is called with the function, and the function's name is bound to the function *and* what
  the decorator returns (a wrapper calls the original); a function registered with a library
  decorator named like an entry point (``@app.command()``, ``@click.command()``,
  ``@hydra.main(...)``) and never called by the code is run when the script ends, as the framework
  would;
- functions handed to a library call (``fire.Fire(main)``, ``typer.run(main)``,
  ``study.optimize(objective)``, ``Thread(target=run)``, ``scipy.optimize.minimize(loss, w0)``) are
  called by it: they are run there, with unknown arguments.

Lambdas and comprehensions are expressions (walked where they are called / evaluated); a lambda
never called is walked with the functions nobody calls (its findings do not count as reached).
"""

from __future__ import annotations

import ast

from automd_analysis.annotate.library import words as _words
from automd_analysis.annotate.values import Value

__all__ = ["ENTRY_DECORATORS", "StatementForms", "decorator_name"]

#: Last names of library decorators that register a function the framework calls.
ENTRY_DECORATORS = frozenset(
    _words("command main group callback entrypoint entry_point cli flow task script")
)
#: Library roots whose calls only wrap or describe a function (they never run it on their own).
_WRAPPING_ROOTS = frozenset(_words("functools typing abc dataclasses contextlib inspect"))
_CODE_TAGS = ("func", "bmethod")


def decorator_name(node: ast.expr) -> str | None:
    """The last name of a decorator expression: ``app.command()`` -> ``command``.

    Examples
    --------
    >>> decorator_name(ast.parse("hydra.main(config_path='.')", mode="eval").body)
    'main'
    """
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _callables(v: Value) -> frozenset:
    return frozenset(lab for lab in v.labels if lab[0] in _CODE_TAGS)


class StatementForms:
    """Statement forms and call-backs, mixed into the interpreter (which provides ``expr``,
    ``call_value``, ``called``, ``funcs`` and ``_call_function``)."""

    def statement_form_handlers(self) -> dict:
        return {ast.Raise: self._s_raise, ast.Assert: self._s_assert, ast.Delete: self._s_delete}

    def start_statement_forms(self) -> None:
        """Reset the per-pass state."""
        self.entry_points: list[tuple[int, ast.AST]] = []

    def _s_raise(self, node: ast.Raise, frame) -> None:
        for part in (node.exc, node.cause):
            if part is not None:
                self.expr(part, frame)

    def _s_assert(self, node: ast.Assert, frame) -> None:
        self.expr(node.test, frame)
        if node.msg is not None:
            self.expr(node.msg, frame)

    def _s_delete(self, node: ast.Delete, frame) -> None:
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                self.expr(target.value, frame)
                self.expr(target.slice, frame)
            elif isinstance(target, ast.Attribute):
                self.expr(target.value, frame)

    def guard(self, case: ast.match_case, frame) -> None:
        """A ``case`` guard (run before the case body)."""
        if case.guard is not None:
            self.expr(case.guard, frame)

    # decorators -----------------------------------------------------------------------------

    def decorate(self, node, fv: Value, frame) -> Value:
        """Apply the decorators of a function or class definition (innermost first) to its
        value; the value the name is bound to."""
        out = fv
        for dec in reversed(node.decorator_list):
            dv = self.expr(dec, frame)
            if _callables(dv) or dv.has("class"):
                wrapped = self.call_value(dec, frame, dv, [out], {})
                out = Value(out.labels | _callables(wrapped))
            elif decorator_name(dec) in ENTRY_DECORATORS:
                self.entry_points.extend((lab[1], node) for lab in fv.of("func"))
        return out

    def run_entry_points(self) -> None:
        """Run the functions registered with an entry-point decorator that the script never
        called (the framework calls them when the script runs)."""
        for fid, node in self.entry_points:
            if fid not in self.called:
                self._call_function(fid, [], {}, node, None)

    # call-backs -------------------------------------------------------------------------------

    def call_handed_functions(self, callee: Value, args, kwargs, node, frame) -> None:
        """Run the version's functions handed to a call of library or unknown code."""
        own = ("func", "bmethod", "class", "obj", "module", "builtin")
        if any(lab[0] in own for lab in callee.labels):
            return  # the version's own code (or a builtin): the interpreter follows the call
        roots = {lab[1].split(".")[0] for lab in callee.labels if lab[0] in ("lib", "ulib")}
        if roots & _WRAPPING_ROOTS:
            return
        for v in (*args, *kwargs.values(), *(x for a in args for x in a.items or ())):
            handed = _callables(v)
            if handed:
                self.call_value(node, frame, Value(handed), [], {})
