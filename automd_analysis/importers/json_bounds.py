"""How deep and how large a JSON text is, counted before it is parsed.

``json.loads`` builds every object of a document before anything can look at it, and recurses once
per nesting level: a 256 MiB journal of five million tiny nodes takes minutes and gigabytes, and
one nested 100 000 levels deep ends in a ``RecursionError``. :func:`json_shape` measures the text
first, in fixed-size chunks at C speed (``bytes.replace`` and numpy), so that a source over the
limits is refused in seconds and bounded memory:

- escaped backslashes (``\\\\``) and escaped quotes (``\\"``) are removed, so every remaining
  ``"`` delimits a string (a lone backslash at the end of a chunk is carried into the next one);
- a byte is *outside* strings when the number of quotes before it is even;
- the nesting depth is the running sum of ``{``/``[`` (+1) and ``}``/``]`` (-1) outside strings;
- the number of values is bounded by the number of ``{``, ``[``, ``,`` and ``:`` outside strings
  plus one (every key and value but the first follows one of them); per line too, for JSON Lines.

For valid JSON the counts are exact upper bounds; for invalid JSON they are whatever the bytes
give, and the parser reports the syntax error afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["JsonShape", "json_shape"]

_CHUNK = 1 << 22
# byte classes: 1 quote, 2 opening bracket, 3 closing bracket, 4 separator, 5 newline
_CLASS = np.zeros(256, dtype=np.uint8)
_CLASS[ord('"')] = 1
_CLASS[[ord("{"), ord("[")]] = 2
_CLASS[[ord("}"), ord("]")]] = 3
_CLASS[[ord(","), ord(":")]] = 4
_CLASS[ord("\n")] = 5
_TABLE = bytes(_CLASS.tolist())


@dataclass(frozen=True)
class JsonShape:
    """What :func:`json_shape` measured.

    Attributes
    ----------
    depth : int
        Deepest nesting of objects/arrays (0 for a scalar).
    values : int
        Upper bound on the number of keys and values of the whole text.
    line_values : int
        The same bound for the largest line (JSON Lines).
    lines : int
        Number of newline characters.
    stopped : bool
        The scan stopped early because ``max_depth`` or ``max_values`` was exceeded.
    """

    depth: int
    values: int
    line_values: int
    lines: int
    stopped: bool = False


def json_shape(data: bytes, *, max_depth: int | None = None, max_values: int | None = None,
               chunk: int = _CHUNK) -> JsonShape:  # fmt: skip
    """Nesting depth and value counts of a JSON (or JSON Lines) text, without parsing it.

    Parameters
    ----------
    data : bytes
        UTF-8 JSON text.
    max_depth, max_values : int, optional
        Stop as soon as the depth or the value count (whole text) exceeds these.
    chunk : int
        Bytes processed at a time (memory is a small multiple of it).

    Returns
    -------
    JsonShape

    See Also
    --------
    automd_analysis.importers._source.parse_json : refuses texts over the import limits.

    References
    ----------
    RFC 8259 (JSON): strings are the only place where brackets, commas, colons and backslashes
    are not structural.

    Examples
    --------
    >>> json_shape(b'{"a": [1, 2, {"b": "x,[y"}]}')
    JsonShape(depth=3, values=8, line_values=8, lines=0, stopped=False)
    >>> json_shape(b'"a\\\\\\"[" ')
    JsonShape(depth=0, values=1, line_values=1, lines=0, stopped=False)
    >>> json_shape(b"[" * 1000, max_depth=100).stopped
    True
    """
    carry = b""
    in_string = 0
    depth = max_depth_seen = 0
    values = 1
    line_run = 1  # values on the current line so far
    line_max = 0
    lines = 0
    for start in range(0, len(data), chunk):
        piece = carry + data[start : start + chunk]
        piece = piece.replace(b"\\\\", b"")
        if piece.endswith(b"\\"):
            carry, piece = b"\\", piece[:-1]
        else:
            carry = b""
        piece = piece.replace(b'\\"', b"")
        cls = np.frombuffer(piece.translate(_TABLE), dtype=np.uint8)
        kind = cls[np.flatnonzero(cls.view(np.bool_))]  # the bytes that matter, in order
        if not kind.size:
            continue
        quote = kind == 1
        quotes_before = np.cumsum(quote, dtype=np.int64) - quote
        outside = (((quotes_before + in_string) & 1) == 0) & ~quote
        in_string = int((int(quotes_before[-1]) + int(quote[-1]) + in_string) & 1)
        opens = outside & (kind == 2)
        step = opens.astype(np.int8) - (outside & (kind == 3)).astype(np.int8)
        level = depth + np.cumsum(step, dtype=np.int64)
        max_depth_seen = max(max_depth_seen, int(level.max()))
        depth = int(level[-1])
        counted = np.cumsum(opens | (outside & (kind == 4)), dtype=np.int64)
        values += int(counted[-1])
        newline = np.flatnonzero(kind == 5)
        if newline.size:
            lines += int(newline.size)
            at = counted[newline]
            per_line = np.diff(at, prepend=0)
            per_line[1:] += 1
            per_line[0] += line_run
            line_max = max(line_max, int(per_line.max()))
            line_run = 1 + int(counted[-1] - at[-1])
        else:
            line_run += int(counted[-1])
        over_depth = max_depth is not None and max_depth_seen > max_depth
        over_values = max_values is not None and values > max_values
        if over_depth or over_values:
            return JsonShape(max_depth_seen, values, max(line_max, line_run), lines, True)
    return JsonShape(max_depth_seen, values, max(line_max, line_run), lines)
