"""Statements a report page makes about its own tables, checked against the tables it publishes.

The prose of the notebooks and the captions of the catalog are written once, while the methods
behind the numbers change (the statistics layer is rewritten from time to time). Each
:class:`Claim` is a kind of statement a page may make - "the whole interval can lie above the
estimate", "the bias-corrected interval reaches from below the corrected value up to the plug-in", "the plug-in ECE is shown
without an interval" - with a check of what the tables of that page must then show. A page that
states a property its current tables contradict fails :func:`contradicted_claims`, so the prose
is corrected when the method changes instead of going on saying what is no longer true.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

Tables = Mapping[str, pd.DataFrame]


@dataclass(frozen=True)
class Claim:
    """A statement (``pattern``, on the page's text) and what the page's tables must show for it
    to be true (``problems``: empty when they agree)."""

    name: str
    pattern: re.Pattern
    problems: Callable[[Tables], list[str]]


def _interval_columns(frame: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(value, low, high) of every interval of a published table (``X`` with ``X_ci_low`` and
    ``X_ci_high``; a bare ``ci_low``/``ci_high`` is left out: its value column is not named)."""
    out = []
    for column in frame.columns:
        if column.endswith("_ci_low"):
            value = column[: -len("_ci_low")]
            if value in frame.columns and f"{value}_ci_high" in frame.columns:
                out.append((value, column, f"{value}_ci_high"))
    return out


def _numbers(frame: pd.DataFrame, *columns: str) -> list[pd.Series]:
    return [pd.to_numeric(frame[c], errors="coerce") for c in columns]


def _no_interval_above_its_estimate(tables: Tables) -> list[str]:
    for frame in tables.values():
        for value, low, high in _interval_columns(frame):
            v, lo, _ = _numbers(frame, value, low, high)
            if (lo > v).any():
                return []
    return ["no interval of the page's tables lies above its estimate"]


def _bias_corrected_intervals_not_bracketing(tables: Tables) -> list[str]:
    problems = []
    for name, frame in tables.items():
        for value, low, high in _interval_columns(frame):
            plug_in = value[: -len("_bc")]
            if not value.endswith("_bc") or plug_in not in frame.columns:
                continue
            v, lo, hi, raw = _numbers(frame, value, low, high, plug_in)
            bad = (lo > v + 1e-12) | (hi < raw - 1e-12)
            if bad.any():
                problems.append(
                    f"{name}.{value}: interval does not reach from below the corrected value up "
                    f"to the plug-in in {int(bad.sum())} rows"
                )
    return problems


def _plug_in_ece_has_an_interval(tables: Tables) -> list[str]:
    problems = []
    for name, frame in tables.items():
        for column in frame.columns:
            plug_in = column[: -len("_bc")] if column.endswith("_bc") else None
            if plug_in in frame.columns and f"{plug_in}_ci_low" in frame.columns:
                problems.append(f"{name}.{plug_in}: the plug-in value has an interval")
    return problems


#: The statements checked, with what the tables must show for each.
CLAIMS: tuple[Claim, ...] = (
    Claim(
        "interval above its estimate",
        re.compile(r"interval[^.]{0,80}\b(?:can |may |does )?lies? (?:\w+ )?above (?:its|the) estimate"),
        _no_interval_above_its_estimate,
    ),
    Claim(
        "bias-corrected interval reaches up to the plug-in",
        re.compile(r"bias-corrected[^.]{0,200}\bup to the plug-in", re.I),
        _bias_corrected_intervals_not_bracketing,
    ),
    Claim(
        "plug-in ECE without an interval",
        re.compile(r"plug-in[^;]{0,160}?\b(?:without|no) (?:an )?interval", re.I),
        _plug_in_ece_has_an_interval,
    ),
)  # fmt: skip


def page_text(html: str) -> str:
    """The words of a report page: markup, styles and scripts removed, whitespace collapsed."""
    import html as html_lib

    text = re.sub(r"<(style|script)\b.*?</\1>", " ", html, flags=re.S | re.I)
    text = re.sub(r"<[^>]+>", " ", text)
    return " ".join(html_lib.unescape(text).split())


def page_tables(tables_dir: Path, names: list[str]) -> dict[str, pd.DataFrame]:
    """The published CSV tables ``names`` that exist under ``tables_dir``."""
    return {
        name: pd.read_csv(tables_dir / f"{name}.csv")
        for name in names
        if (tables_dir / f"{name}.csv").is_file()
    }


def contradicted_claims(text: str, tables: Tables) -> list[str]:
    """The statements of ``text`` that ``tables`` contradict, each with what the tables show."""
    out = []
    for claim in CLAIMS:
        stated = claim.pattern.search(text)
        if stated is None:
            continue
        for problem in claim.problems(tables):
            out.append(f"says {stated.group(0)!r} ({claim.name}), but {problem}")
    return out
