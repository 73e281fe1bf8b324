"""The files a named report output is written to: a plain file stem under one folder of the
output directory."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

_STEM = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")

#: The Raises entry of a function that writes the files of a named output.
RAISES_NOT_A_STEM = """
ValueError
    ``name`` is not a plain file stem.
"""


def check_stem(name: str, what: str) -> None:
    """Raise ``ValueError`` unless ``name`` (of a ``what``: figure, table) is a plain file stem."""
    if not _STEM.fullmatch(name):
        raise ValueError(f"{what} name {name!r} must be a plain file stem")


def output_paths(
    out_dir: str | Path, folder: str, what: str, name: str, suffixes: Sequence[str]
) -> dict[str, Path]:
    """``{suffix: <out_dir>/<folder>/<name>.<suffix>}`` for the checked stem ``name``."""
    check_stem(name, what)
    target = Path(out_dir) / folder
    return {suffix: target / f"{name}.{suffix}" for suffix in suffixes}
