"""Abstract values of the static analyser: what a Python expression may carry, never its data.

A :class:`Value` is a set of *labels* (tuples whose first item is a tag) plus, when statically
known, the elements of a sequence (``items``), the entries of a dict or data frame with literal
keys (``keys``) and a literal constant (``const``). Labels record provenance ("predictions of model
7", "a rank transform at line 40", "indicators of missing values") and travel with the data
through assignments, calls and arithmetic; nothing is ever executed.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["EMPTY", "MAX_VALUE_DEPTH", "NO", "NONE", "Value", "join", "tags"]

#: Levels of known items/keys a value keeps (``a = [a]`` a thousand times keeps the labels only),
#: so that comparing two values never recurses deeply.
MAX_VALUE_DEPTH = 32


class _NoConst:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NO"


#: Marker for "not a known constant".
NO = _NoConst()


class Value:
    """An abstract value: labels + optional known items, keys and constant (immutable)."""

    __slots__ = ("_d", "_h", "const", "items", "keys", "labels")

    def __init__(
        self,
        labels: frozenset = frozenset(),
        items: tuple[Value, ...] | None = None,
        keys: tuple[tuple[object, Value], ...] | None = None,
        const: object = NO,
    ):
        depth = 1 + max((x._d for x in (*(items or ()), *(v for _, v in keys or ()))), default=0)
        if depth > MAX_VALUE_DEPTH:
            items = keys = None
            depth = 1
        self._d = depth
        self.labels = labels
        self.items = items
        self.keys = keys
        self.const = const
        try:
            self._h = hash((labels, items, keys, const))
        except TypeError:  # an unhashable literal never becomes a constant
            self.const = NO
            self._h = hash((labels, items, keys))

    def __hash__(self) -> int:
        return self._h

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Value) or self._h != other._h:
            return False
        return (
            self.labels == other.labels
            and self.items == other.items
            and self.keys == other.keys
            and _same_const(self.const, other.const)
        )

    def __repr__(self) -> str:
        parts = [f"labels={sorted(map(str, self.labels))}"]
        if self.items is not None:
            parts.append(f"items={len(self.items)}")
        if self.keys is not None:
            parts.append(f"keys={[k for k, _ in self.keys]}")
        if self.const is not NO:
            parts.append(f"const={self.const!r}")
        return f"Value({', '.join(parts)})"

    def has(self, tag: str) -> bool:
        """True if some label has tag ``tag``."""
        return any(lab[0] == tag for lab in self.labels)

    def of(self, tag: str) -> list[tuple]:
        """The labels with tag ``tag``."""
        return [lab for lab in self.labels if lab[0] == tag]

    def key(self, name: object) -> Value | None:
        """The value stored under literal key ``name``, if known."""
        if self.keys is None:
            return None
        for k, v in self.keys:
            if k == name:
                return v
        return None

    def plain(self) -> Value:
        """Only the labels (no items, keys or constant)."""
        if self.items is None and self.keys is None and self.const is NO:
            return self
        return Value(self.labels)

    def with_labels(self, extra: Iterable[tuple]) -> Value:
        """A copy with more labels (items/keys kept, constant dropped)."""
        extra = frozenset(extra)
        if extra <= self.labels:
            return self
        return Value(self.labels | extra, self.items, self.keys)

    def element(self) -> Value:
        """What iterating over the value yields."""
        if self.items:
            return join(self.items).with_labels(self.labels)
        return Value(self.labels)


def _same_const(a: object, b: object) -> bool:
    return a is b or (type(a) is type(b) and a == b)


EMPTY = Value()
NONE = Value(const=None)


def tags(labels: Iterable[tuple]) -> set[str]:
    """The set of tags of some labels."""
    return {lab[0] for lab in labels}


def join(values: Iterable[Value]) -> Value:
    """Least upper bound: the union of labels; items, keys and constants kept only where they agree.

    Keys of two keyed values are merged key by key (a key missing on one side keeps the other
    side's value), so a frame built differently on two branches still knows its columns.

    Examples
    --------
    >>> a = Value(frozenset({("src", 1)}), const=3)
    >>> b = Value(frozenset({("rank", 7)}), const=3)
    >>> sorted(join([a, b]).labels), join([a, b]).const
    ([('rank', 7), ('src', 1)], 3)
    """
    values = [v for v in values if v is not None]
    if not values:
        return EMPTY
    first = values[0]
    if len(values) == 1:
        return first
    if all(v == first for v in values[1:]):
        return first
    labels = frozenset().union(*(v.labels for v in values))
    items = first.items
    if items is not None and any(v.items != items for v in values[1:]):
        items = None
    keys = None
    if all(v.keys is not None for v in values):
        merged: dict[object, list[Value]] = {}
        for v in values:
            for k, x in v.keys:
                merged.setdefault(k, []).append(x)
        keys = tuple((k, join(xs)) for k, xs in merged.items())
    const = first.const
    if any(not _same_const(v.const, const) for v in values[1:]):
        const = NO
    return Value(labels, items, keys, const)
