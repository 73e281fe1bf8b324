"""Label helpers of the static analyser: which labels follow which operations, and folding.

Shared by :mod:`.interpreter` (statements and expressions) and :mod:`.library_calls` (calls into
libraries, builtins and methods). Labels are tuples whose first item is a tag
(``docs/annotation.md``).
"""

from __future__ import annotations

import ast
import re

from automd_analysis.annotate import library as lib
from automd_analysis.annotate.call_rules import SAMPLE_WEIGHT_KEYWORDS
from automd_analysis.annotate.hand_splits import FOLD_COLUMN
from automd_analysis.annotate.library import words as _words
from automd_analysis.annotate.values import NO, Value, join

#: Labels that follow the rows selected by an index, a mask or a ``where`` condition.
INDEX_PASS = frozenset(
    _words(
        "rand randval randmask classcond split site sitemask demo forcedevent survext event dur "
        "resampled known foldid horizon durle durgt censind ones"
    )
)
#: Labels that survive a model's ``predict`` (provenance, not the shape of the numbers).
PERSIST = frozenset(_words("src blend foldavg foldlist cal"))
#: Tags of labels that describe a program object rather than data.
OBJECT_TAGS = frozenset(
    _words(
        "lib module func class obj bmethod builtin lambda rng ulib model sampler splitter rankobj "
        "file"
    )
)
_TEMPERATURE = re.compile(r"^(t|temp|temperature|tau|temperatures)$", re.IGNORECASE)


RANDOM_METHODS = frozenset(
    _words("choice random rand randn uniform integers randint sample binomial normal permutation")
)
WEIGHT_KW = SAMPLE_WEIGHT_KEYWORDS


def key_is(root: str, name: str, root2: str, name2: str) -> bool:
    return root == root2 and name == name2


def same_constant(a, b) -> bool:
    return type(a) is type(b) and a == b or (a is None and b is None)


def split_labels(v: Value) -> frozenset:
    return frozenset(
        lab for lab in v.labels if lab[0] in ("split", "rand", "resampled", "sitemask")
    )


def index_labels(v: Value) -> set:
    return {lab for lab in v.labels if lab[0] in INDEX_PASS}


def data_labels(v: Value) -> set:
    return {lab for lab in v.labels if lab[0] not in OBJECT_TAGS}


def all_labels(v: Value) -> set:
    """Labels of a value and of everything it contains (items, keyed entries)."""
    out = set(v.labels)
    stack = list(v.items or ()) + [x for _, x in (v.keys or ())]
    seen = 0
    while stack and seen < 512:
        x = stack.pop()
        seen += 1
        out |= x.labels
        stack.extend(x.items or ())
        stack.extend(val for _, val in (x.keys or ()))
    return out


def data_union(values) -> Value:
    labels: set = set()
    for v in values:
        labels |= v.labels
    labels = {lab for lab in labels if lab[0] not in OBJECT_TAGS or lab[0] in ("model", "file")}
    return Value(frozenset(labels))


def is_class_weighting(w: Value) -> bool:
    """Whether sample weights are derived from the classes (class frequencies, a 0/1 mapping)."""
    return any(lab[0] in ("classcond", "cw", "sw") for lab in all_labels(w))


def stacked(v: Value) -> bool:
    groups = {frozenset(lab for lab in it.labels if lab[0] == "src") for it in (v.items or ())} - {
        frozenset()
    }
    return len(groups) > 1


def n_sources(v: Value) -> int:
    """How many different models' predictions a value holds (per item when items are known)."""
    if v.items is not None:
        groups = {frozenset(lab for lab in it.labels if lab[0] == "src") for it in v.items}
        return len(groups - {frozenset()})
    return len({lab for lab in v.labels if lab[0] == "src"})


def holdout_only(v: Value) -> bool:
    designs = [lab[1] for lab in v.labels if lab[0] == "split"]
    return bool(designs) and all(d == ("single_holdout",) for d in designs)


def column_labels(name: str, interp, frame, node) -> frozenset:
    out = set()
    if lib.EVENT_COLUMN.match(name):
        out.add(("event",))
    if lib.DURATION_COLUMN.match(name):
        out.add(("dur",))
    if lib.SITE_COLUMN.search(name):
        out.add(("site", interp.eid(frame, node)))
    if lib.DEMOGRAPHIC_COLUMN.match(name):
        out.add(("demo", interp.eid(frame, node)))
    if FOLD_COLUMN.match(name):
        out.add(("foldid", None))  # precomputed fold ids
    return frozenset(out)


def one_minus(node: ast.expr, interp, frame) -> bool:
    """``1 - x`` (or ``1.0 - x``) in the source."""
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub)
        and isinstance(node.left, ast.Constant)
        and node.left.value == 1
    )


def temperature_name(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return bool(_TEMPERATURE.match(node.id))
    if isinstance(node, ast.Attribute):
        return bool(_TEMPERATURE.match(node.attr))
    return False


_TASK_KINDS = frozenset({"survival", "classification", "sequential"})
_KIND_NAME = re.compile(r"(^|_)(kind|task_type|problem_type|task_kind)$", re.IGNORECASE)


def _kind_expression(node: ast.expr) -> bool:
    """A name or attribute chain that ends like ``kind`` (``kind``, ``m.kind.value``...)."""
    while isinstance(node, ast.Attribute):
        if _KIND_NAME.search(node.attr):
            return True
        node = node.value
    return isinstance(node, ast.Name) and bool(_KIND_NAME.search(node.id))


def fold_kind(node: ast.Compare, values, task_kind: str) -> object:
    """``kind == "survival"`` with a known task kind."""
    if len(node.ops) != 1 or not isinstance(node.ops[0], ast.Eq | ast.NotEq):
        return NO
    left, right = values
    for expr, const in ((node.left, right.const), (node.comparators[0], left.const)):
        if const in _TASK_KINDS and _kind_expression(expr):
            equal = const == task_kind
            return equal if isinstance(node.ops[0], ast.Eq) else not equal
    return NO


def fold_compare(ops, values) -> object:
    consts = [v.const for v in values]
    if any(c is NO for c in consts):
        return NO
    if not all(isinstance(c, str | int | float | bool | type(None)) for c in consts):
        return NO
    try:
        for op, a, b in zip(ops, consts, consts[1:], strict=False):
            if isinstance(op, ast.Eq):
                ok = a == b
            elif isinstance(op, ast.NotEq):
                ok = a != b
            elif isinstance(op, ast.Is):
                ok = a is b
            elif isinstance(op, ast.IsNot):
                ok = a is not b
            elif isinstance(op, ast.Lt):
                ok = a < b
            elif isinstance(op, ast.LtE):
                ok = a <= b
            elif isinstance(op, ast.Gt):
                ok = a > b
            elif isinstance(op, ast.GtE):
                ok = a >= b
            else:
                return NO
            if not ok:
                return False
        return True
    except TypeError:
        return NO


def fold_binop(op, a, b) -> object:
    if a is NO or b is NO:
        return NO
    try:
        if isinstance(a, bool) or isinstance(b, bool):
            return NO
        if isinstance(a, int | float) and isinstance(b, int | float):
            if abs(a) > 1e12 or abs(b) > 1e12:
                return NO
            if isinstance(op, ast.Add):
                return a + b
            if isinstance(op, ast.Sub):
                return a - b
            if isinstance(op, ast.Mult):
                return a * b
            if isinstance(op, ast.Div):
                return a / b
            if isinstance(op, ast.FloorDiv):
                return a // b
            if isinstance(op, ast.Mod):
                return a % b
            return NO
        if (
            isinstance(a, str)
            and isinstance(b, str)
            and isinstance(op, ast.Add)
            and len(a) + len(b) <= 200
        ):
            return a + b
        return NO
    except (ArithmeticError, ValueError):
        return NO


def merge_envs(envs: list[dict]) -> dict:
    if len(envs) == 1:
        return envs[0]
    names: set[str] = set()
    for e in envs:
        names.update(e)
    out = {}
    for name in names:
        vals = [e[name] for e in envs if name in e]
        out[name] = join(vals)
    return out
