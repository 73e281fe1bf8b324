"""Splits of the rows written by hand, and random numbers that are data rather than a split.

:class:`HandSplits` is mixed into the interpreter (:mod:`.interpreter`). It recognises

- index slices: ``a[:k]`` and ``a[k:]`` of one sequence with the same bound, where ``k`` is a
  literal (at least :data:`MIN_LITERAL_CUT` rows), a share of a length (``int(0.8 * n)``,
  ``n // 5``), a length minus a literal (``len(df) - 365``) or a point found in time
  (``searchsorted``, a count of rows before a date);
- boolean masks by time: ``df[df.date < cutoff]`` and ``df[df.date >= cutoff]`` (two different
  sides of one time-like column, or a mask and its inverse ``~mask``);
- ``np.split`` / ``np.array_split``: indices (a holdout) or three or more sections (folds);
- k-fold loops written by hand: a window ``idx[i * size:(i + 1) * size]`` or ``idx[i::k]`` taken in
  a loop, sections of ``np.array_split`` and fold ids drawn at random (``rng.integers(0, 5, n)``);
- rows drawn at random: random numbers (``rng.random(n)``, ``rng.choice(n, m)``) are *generated
  values* (label ``randval``) until they select rows - as an index or a mask (``X[mask]``,
  ``df.loc[idx]``, ``Subset(ds, idx)``) - and only then a split (label ``rand``). Synthetic
  features drawn with ``np.random.*`` are data, not a split.

A hand-made split counts as ``validation_design`` only when the rows it selects reach a model's
fit; the evidence cites the lines that take the split (the slices, the masks, the ``np.split``
call). Slices of a permutation or with a share-of-length bound keep their earlier rule (both
halves seen: a holdout, without the fit condition).
"""

from __future__ import annotations

import ast
import re

from automd_analysis.annotate.library import DURATION_COLUMN
from automd_analysis.annotate.values import NO, Value

__all__ = [
    "FOLD_COLUMN",
    "MIN_LITERAL_CUT",
    "ROW_SELECTORS",
    "TIME_COLUMN",
    "HandSplits",
    "selected_rows",
    "is_cut",
    "offset_cut",
    "random_fold_ids",
    "shape",
    "short_repr",
    "time_column",
]

#: The smallest literal bound ``k`` of ``a[:k]`` / ``a[k:]`` read as a split (``code[:3]`` and
#: ``code[3:]`` cut strings, not rows).
MIN_LITERAL_CUT = 10
#: Column or variable names of a calendar time (not a survival duration: ``time``, ``days``...).
TIME_COLUMN = re.compile(
    r"(^|_)(date|dates|datetime|datetimes|timestamp|timestamps|year|calendar|period|quarter|"
    r"enrol|enroll|enrolment|enrollment|admit|admission|admitted)($|_)"
    r"|(^|_)(admit|admission|chart|visit|discharge|start|index|in|out)_?time($|_)|_(dt|ts)$",
    re.IGNORECASE,
)
#: Column names of precomputed fold ids.
FOLD_COLUMN = re.compile(r"^(k?folds?|fold_(id|idx|no|num)|cv_fold|kfold_id)$", re.IGNORECASE)
#: Calls that select rows by an index (besides subscripts).
ROW_SELECTORS = frozenset({"take", "Subset", "select", "index_select", "SubsetRandomSampler"})
_ORDER = {ast.Lt: "before", ast.LtE: "before", ast.Gt: "after", ast.GtE: "after"}
_HOLDOUT = ("single_holdout",)
_KFOLD = ("kfold_cv",)


def _int(c) -> bool:
    return isinstance(c, int) and not isinstance(c, bool)


def selected_rows(base: Value, index: Value) -> set:
    """Labels an index or mask gives the rows of ``base`` it selects: random numbers that select
    rows become rows drawn at random, a mask by time one side of a split - unless the numbers or
    the mask came with the data itself (a column of it).

    Examples
    --------
    >>> mask = Value(frozenset({("randval", "norep", 3)}))
    >>> sorted(selected_rows(Value(), mask))
    [('rand', 'norep', 3)]
    >>> selected_rows(mask, mask)  # synthetic data filtered by its own values
    set()
    >>> sorted(selected_rows(Value(), Value(frozenset({("tmask", 5)}))))
    [('split', ('single_holdout',), 5)]
    """
    out = set()
    for lab in index.labels:
        if lab[0] == "randmask" or (lab[0] == "randval" and lab not in base.labels):
            out.add(("rand", *lab[1:]))
        elif lab[0] == "tmask" and lab not in base.labels:
            out.add(("split", _HOLDOUT, lab[1]))
    return out


def is_cut(k: Value) -> bool:
    """Whether a slice bound is a cut point of the rows (see the module docstring).

    Examples
    --------
    >>> is_cut(Value(const=800)), is_cut(Value(const=3)), is_cut(Value(frozenset({("frac",)})))
    (True, False, True)
    """
    if _int(k.const):
        return abs(k.const) >= MIN_LITERAL_CUT
    return any(k.has(tag) for tag in ("frac", "cut", "tmask"))


def offset_cut(op: ast.operator, left: Value, right: Value) -> set:
    """``n - 365`` / ``len(df) - n_valid`` (a literal offset from an unknown length): a cut.

    Examples
    --------
    >>> offset_cut(ast.Sub(), Value(), Value(const=365)), offset_cut(ast.Sub(), Value(), Value(const=1))
    ({('cut',)}, set())
    """
    if not isinstance(op, ast.Add | ast.Sub):
        return set()
    for a, b in ((left, right), (right, left)):
        if _int(a.const) and abs(a.const) >= MIN_LITERAL_CUT and b.const is NO:
            return {("cut",)}
    return set()


def random_fold_ids(name: str, args, kwargs) -> int | None:
    """``k`` when random integers in ``[0, k)`` with ``3 <= k <= 100`` are drawn (fold ids):
    ``rng.integers(0, 5, n)``, ``np.random.randint(5, size=n)``, ``rng.choice(5, n)``.

    Examples
    --------
    >>> random_fold_ids("integers", [Value(const=0), Value(const=5), Value()], {})
    5
    >>> random_fold_ids("randint", [Value(const=5)], {"size": Value()})
    5
    >>> random_fold_ids("integers", [Value(const=1), Value(const=5)], {}) is None
    True
    """
    if name in ("integers", "randint"):
        given = dict(zip(("low", "high"), args[:2], strict=False))
        given.update({k: kwargs[k] for k in ("low", "high") if k in kwargs})
        low, high = given.get("low"), given.get("high")
        if high is None:  # randint(k): low is the high bound
            low, high = Value(const=0), low
        if low is None or high is None or low.const != 0:
            return None
        k = high.const
    elif name == "choice" and args:
        k = args[0].const
    else:
        return None
    return k if _int(k) and 3 <= k <= 100 else None


def _named(name: str | None) -> bool:
    return bool(name) and bool(TIME_COLUMN.search(name)) and not DURATION_COLUMN.match(name)


def short_repr(value) -> str:
    """At most 40 characters of ``repr(value)``; never fails (an integer literal of thousands of
    digits has no decimal ``repr`` in Python >= 3.11).

    Examples
    --------
    >>> short_repr(2**20000), short_repr("date")
    ('<int of 20001 bits>', "'date'")
    """
    if isinstance(value, int) and value.bit_length() > 64:
        return f"<int of {value.bit_length()} bits>"
    return repr(value)[:40]


def shape(node: ast.AST, limit: int = 64) -> tuple | None:
    """A small expression's structure, for comparing two occurrences (``None`` if it is large)."""
    out: list = []
    todo = [node]
    while todo:
        n = todo.pop()
        if len(out) >= limit:
            return None
        const = short_repr(n.value) if isinstance(n, ast.Constant) else None
        out.append((type(n).__name__, getattr(n, "id", None), getattr(n, "attr", None), const))
        todo.extend(reversed(list(ast.iter_child_nodes(n))))
    return tuple(out)


def time_column(node: ast.expr) -> bool:
    """A plain access of a time-like column: ``df.date``, ``df["admit_date"].dt.year``,
    ``pd.to_datetime(df["date"])``, ``dates`` (no other call on the way).

    Examples
    --------
    >>> [time_column(ast.parse(t, mode="eval").body) for t in ("df.date", "df.time", "df.date.max()")]
    [True, False, False]
    """
    found = False
    for _ in range(16):
        if isinstance(node, ast.Name):
            return found or _named(node.id)
        if isinstance(node, ast.Attribute):
            found = found or _named(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                found = found or _named(key.value)
            node = node.value
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called != "to_datetime" or not node.args:
                return False
            node = node.args[0]
        else:
            return False
    return False


def _side(op: ast.cmpop, col_left: bool, const) -> tuple | None:
    kind = type(op)
    if kind in _ORDER:
        side = _ORDER[kind]
        if not col_left:
            side = "after" if side == "before" else "before"
        return (side,)
    shown = short_repr(const) if const is not NO else None
    if kind in (ast.Eq, ast.In):
        return ("in", shown)
    if kind in (ast.NotEq, ast.NotIn):
        return ("out", shown)
    return None


def _flip(side: tuple) -> tuple:
    flipped = {"before": "after", "after": "before", "in": "out", "out": "in"}[side[0]]
    return (flipped, *side[1:])


class HandSplits:
    """Hand-made splits, mixed into the interpreter (which provides ``eid``, ``event``,
    ``trace`` and ``reached``)."""

    def start_hand_splits(self) -> None:
        """Reset the per-pass state (every pass re-walks the program)."""
        #: (module, base shape, bound shape) -> {"head"|"tail": eid} of half slices
        self.half_slices: dict[tuple, dict[str, int]] = {}
        #: (module, column shape) -> sides of time masks seen
        self.time_sides: dict[tuple, set] = {}
        self.time_masks: dict[int, tuple] = {}  # eid -> (key, side)
        #: eid -> (designs, group): a candidate that counts when its rows reach a fit
        self.split_candidates: dict[int, tuple] = {}
        self.fitted_splits: dict[int, bool] = {}
        self.fold_windows: set[tuple] = set()

    # slices ---------------------------------------------------------------------------------

    def slice_split(self, node: ast.Subscript, base: Value, bounds, frame) -> Value:
        """``a[lower:upper:step]`` with the bounds' values: the rows it takes, with a split label
        when it is one side of a hand-made split."""
        lower, upper, step = bounds
        sl = node.slice
        base_shape = shape(node.value)
        if base_shape is None:
            return base
        where = (frame.module.index, base_shape)
        in_loop = frame.multiplicity() > 1
        if sl.step is not None:
            if in_loop and sl.upper is None and _int(step.const) and 2 <= step.const <= 100:
                return self._candidate(base, _KFOLD, None, frame, node)  # idx[i::k]
            return base
        if sl.lower is not None and sl.upper is not None:
            if in_loop and all(b.has("frac") for b in (lower, upper)):
                self.fold_windows.add(where)  # idx[i * size:(i + 1) * size]
                return self._candidate(base, _KFOLD, None, frame, node)
            return base
        if sl.lower is None and sl.upper is None:
            return base
        bound_node, k = (sl.upper, upper) if sl.lower is None else (sl.lower, lower)
        if in_loop and k.has("frac") and where in self.fold_windows:
            return self._candidate(base, _KFOLD, None, frame, node)  # the window's complement
        bound_shape = shape(bound_node)
        if bound_shape is None:
            return base
        key = (*where, bound_shape)
        side = "head" if sl.lower is None else "tail"
        if base.has("perm") or k.has("frac"):
            return self._shuffled_halves(key, side, base, frame, node)
        if is_cut(k):
            self.half_slices.setdefault(key, {})[side] = self.eid(frame, node)
            return self._candidate(base, _HOLDOUT, ("slice", key), frame, node)
        return base

    def _shuffled_halves(self, key, side: str, base: Value, frame, node) -> Value:
        """Both halves of a permutation, or of a share of a length: a holdout once both are
        seen (the rule that predates the fit condition)."""
        e = self.eid(frame, node)
        sides = self.half_slices.setdefault(key, {})
        sides[side] = e
        if len(sides) < 2:
            return base
        for s in sides.values():
            self.event("validation", "single_holdout", s)
        return base.with_labels({("split", _HOLDOUT, e)})

    def _candidate(self, value: Value, designs, group, frame, node) -> Value:
        e = self.eid(frame, node)
        self.split_candidates[e] = (designs, group)
        return value.with_labels({("split", designs, e)})

    # masks by time ---------------------------------------------------------------------------

    def time_mask(self, node: ast.Compare, values, frame) -> set:
        """Labels of ``col < cutoff`` (``>``, ``==``, ``!=``, ``in``) on a time-like column: a
        mask by time, a split only where it selects rows (not stored as a feature)."""
        if len(node.ops) != 1:
            return set()
        left, right = node.left, node.comparators[0]
        if time_column(left) == time_column(right):
            return set()  # no time column, or two of them (a feature, not a split)
        col_left = time_column(left)
        column = left if col_left else right
        other = values[1] if col_left else values[0]
        side = _side(node.ops[0], col_left, other.const)
        column_shape = shape(column)
        if side is None or column_shape is None:
            return set()
        key = (frame.module.index, column_shape)
        self.time_sides.setdefault(key, set()).add(side)
        e = self.eid(frame, node)
        self.time_masks[e] = (key, side)
        self.split_candidates[e] = (_HOLDOUT, ("time", key))
        return {("tmask", e)}  # one side of a split once it selects rows (selected_rows)

    def invert_time_mask(self, value: Value) -> None:
        """``~mask`` of a mask by time: the other side of the same column."""
        for lab in value.of("tmask"):
            found = self.time_masks.get(lab[1])
            if found is not None:
                key, side = found
                self.time_sides.setdefault(key, set()).add(_flip(side))

    # np.split ---------------------------------------------------------------------------------

    def split_sections(self, args, kwargs, frame, node) -> Value | None:
        """``np.split(a, [i, j])`` (a holdout) or ``np.array_split(a, k)`` (``k >= 3``: folds)."""
        data = args[0] if args else kwargs.get("ary")
        sections = args[1] if len(args) > 1 else kwargs.get("indices_or_sections")
        if data is None or sections is None:
            return None
        if sections.items is not None and 1 <= len(sections.items) <= 2:
            designs = _HOLDOUT
        elif _int(sections.const) and sections.const >= 2:
            designs = _HOLDOUT if sections.const == 2 else _KFOLD
        else:
            return None
        return self._candidate(Value(data.labels), designs, None, frame, node)

    # confirmation -------------------------------------------------------------------------------

    def note_fitted_splits(self, labels) -> None:
        """A model is fitted on rows carrying these labels (called by the fit rule)."""
        for lab in labels:
            if lab[0] == "split" and lab[2] in self.split_candidates:
                e = lab[2]
                self.fitted_splits[e] = self.fitted_splits.get(e, False) or self.reached

    def _group_members(self, group) -> list[int] | None:
        """The eids of a complete group of split sides (``None`` while one side is missing)."""
        kind, key = group
        if kind == "slice":
            sides = self.half_slices.get(key, {})
            return list(sides.values()) if len(sides) == 2 else None
        if len(self.time_sides.get(key, ())) < 2:
            return None
        return [e for e, (k, _) in self.time_masks.items() if k == key]

    def finish_hand_splits(self) -> None:
        """Record the validation designs of the candidates whose rows reached a fit."""
        done: set = set()
        for e, (designs, group) in self.split_candidates.items():
            if group is not None and group in done:
                continue
            members = [e] if group is None else self._group_members(group)
            if members is None:
                continue
            if group is not None:
                done.add(group)
            fitted = [self.fitted_splits[m] for m in members if m in self.fitted_splits]
            if not fitted:
                continue
            reached = any(fitted)
            for m in members:
                for d in designs:
                    key = ("validation", d, m)
                    self.trace.events[key] = self.trace.events.get(key, False) or reached
