"""Text taken from agent logs, made safe to write: lone surrogates become U+FFFD.

JSON may escape a lone UTF-16 surrogate (``"\\udcff"``); Python then holds a string that is not
valid Unicode and cannot be encoded as UTF-8, so writing it (a code file, ``journal.md``, a
message on the terminal) would fail. Every string an importer writes goes through
:func:`repair_text`; the importer records where it replaced something.
"""

from __future__ import annotations

import re

__all__ = ["REPLACEMENT", "has_surrogates", "repair_text"]

#: What a lone surrogate becomes (U+FFFD REPLACEMENT CHARACTER).
REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogates(text: str) -> bool:
    """True if ``text`` holds a lone surrogate (it cannot be encoded as UTF-8).

    >>> has_surrogates("ok"), has_surrogates("bad \\udcff")
    (False, True)
    """
    return _SURROGATE.search(text) is not None


def repair_text(text: str) -> tuple[str, int]:
    """``text`` with every lone surrogate replaced by U+FFFD, and the number replaced.

    Parameters
    ----------
    text : str

    Returns
    -------
    repaired : str
        Valid Unicode (encodable as UTF-8).
    replaced : int

    See Also
    --------
    has_surrogates

    References
    ----------
    RFC 8259, section 8.2 (unpaired surrogates in JSON strings); Unicode 15, section 3.9.

    Examples
    --------
    >>> repair_text("x = '\\udcff'")
    ("x = '\ufffd'", 1)
    """
    return _SURROGATE.subn(REPLACEMENT, text)
