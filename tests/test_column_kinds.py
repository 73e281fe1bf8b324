"""How each declared column reads (``Column(..., kind=...)``, ``sd_of=...``): every number column
of a declared table states it, a page without a display spec shows it so, and a display spec
shows each column as its declared kind."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from automd_analysis.analysis import catalog
from automd_analysis.analysis.catalog.declaration import (
    KINDS,
    Column,
    PerAgent,
    Stat,
    Table,
    TableDeclarationError,
)
from automd_analysis.report.presentation import default_display
from automd_analysis.report.tables import rendered

#: One value of each kind and how a page shows it (no interval, no SD).
PROBES = {
    "text": ("abc", "abc"),
    "flag": (True, "yes"),
    "count": (2.5, "2.5"),
    "number": (0.5, "0.500"),
    "share": (0.5, "50%"),
    "fraction": (0.005, "0.50%"),
    "percent": (12.0, "12%"),
    "p": (0.0004, "< 0.001"),
}
#: Spec columns whose display does not (yet) show their declared kind: kept as published, so the
#: pages stay byte-identical; each is a decision for the table's owner.
KNOWN_SPEC_MISMATCHES = {
    ("process_win_rate", "win_rate"): "a share shown as 0.xxx, not as a percent",
}


def _agents(declared: Table) -> list[str]:
    """Probe agent columns of a table with one column per agent."""
    out = []
    for entry in declared.columns:
        if isinstance(entry, PerAgent):
            out += ["aide", *(f"aide{suffix}" for suffix in entry.suffixes())]
    return out


def _probe(declared: Table) -> pd.DataFrame:
    """One row of ``declared``: each column a value of its kind, SDs and interval bounds missing."""
    empty = declared.frame()
    columns = [*empty.columns, *_agents(declared)]
    frame = pd.DataFrame({c: [None] for c in columns})
    kinds = declared.kinds_in(frame)
    sds = set(declared.sds_in(frame).values())
    bounds = {b for pair in declared.intervals_in(frame).values() for b in pair}
    dtypes = dict(zip(empty.columns, empty.dtypes, strict=True))
    row = {}
    for column in columns:
        value = PROBES[kinds[column]][0]
        if column in sds or column in bounds:
            value = math.nan
        elif str(dtypes.get(column)) == "int64":
            value = 2
        elif kinds[column] == "flag":
            value = True
        row[column] = value
    return pd.DataFrame([row], columns=columns)


@pytest.mark.parametrize("name", list(catalog.TABLES))
def test_every_number_column_of_a_declared_table_states_how_it_reads(name):
    declared = catalog.TABLES[name]
    frame = pd.DataFrame(columns=[*declared.named, *_agents(declared)])
    kinds = declared.kinds_in(frame)
    assert set(kinds) == set(frame.columns)
    missing = sorted(c for c, kind in kinds.items() if kind is None)
    assert not missing, f"{name}: no kind declared for {missing}"
    assert set(kinds.values()) <= set(KINDS)


@pytest.mark.parametrize("name", [n for n, t in catalog.TABLES.items() if t.spec is None])
def test_a_declared_table_without_a_spec_reads_as_declared(name):
    declared = catalog.TABLES[name]
    frame = _probe(declared)
    kinds = declared.kinds_in(frame)
    text, _ = default_display(frame, intervals=declared.intervals_in(frame), declared=declared)
    sds = set(declared.sds_in(frame).values())
    bounds = {b for pair in declared.intervals_in(frame).values() for b in pair}
    shown = [c for c in frame.columns if c not in sds and c not in bounds]
    expected = []
    for column in shown:
        if kinds[column] in ("text", "flag") or frame.at[0, column] != 2:
            expected.append(PROBES[kinds[column]][1])
        else:
            expected.append("2%" if kinds[column] == "percent" else "2")
    assert text.iloc[0].tolist() == expected, name


def _stat_kinds(stat: Stat) -> set[str]:
    """The kinds a display spec's column can show faithfully."""
    if stat.p_value:
        return {"p"}
    if stat.integer:
        return {"count"}
    if stat.percent:
        return {"share", "fraction"}
    return {"number", "percent"}  # a percentage already 0-100 is a plain number (header: "(%)")


def _spec_mismatches(declared: Table) -> dict[str, str]:
    frame = _probe(declared)
    spec = declared.display(frame)
    kinds, sds = declared.kinds_in(frame), declared.sds_in(frame)
    stats = [*spec.stats, *([spec.cell] if spec.cell else [])]
    out = {}
    for stat in stats:
        if kinds[stat.mean] not in _stat_kinds(stat):
            out[stat.mean] = f"declared {kinds[stat.mean]}, shown as {sorted(_stat_kinds(stat))}"
        if stat.sd != sds.get(stat.mean):
            out[stat.mean] = f"declared SD {sds.get(stat.mean)}, shown SD {stat.sd}"
        if stat.n_valid and kinds[stat.n_valid] != "count":
            out[stat.n_valid] = f"declared {kinds[stat.n_valid]}, shown as a count"
    if spec.extra and kinds[spec.extra] != "share":
        out[spec.extra] = f"declared {kinds[spec.extra]}, shown as a percent"
    return out


def test_display_specs_show_each_column_as_its_declared_kind():
    found = {}
    for name, declared in catalog.TABLES.items():
        if declared.spec is not None:
            found |= {(name, c): why for c, why in _spec_mismatches(declared).items()}
    assert set(found) == set(KNOWN_SPEC_MISMATCHES), found


def test_a_spec_that_disagrees_with_its_declaration_is_found():
    from automd_analysis.analysis.catalog.declaration import TableSpec

    spec = TableSpec("c", labels=("agent",), stats=(Stat("Share", "share_x"),))
    wrong = Table(
        "t", "nb", "T.", (*Column.texts("agent"), Column("share_x", kind="share")), spec=spec
    )
    assert _spec_mismatches(wrong) == {"share_x": "declared share, shown as ['number', 'percent']"}


def test_the_declaration_wins_over_the_column_name():
    declared = Table(
        "t",
        "nb",
        "T.",
        (
            *Column.texts("agent"),
            Column("share_x", kind="number"),
            Column("n_things", kind="number"),
            Column("p_holm", kind="share"),
            Column("gap_mean", kind="number"),
            Column("gap_sd", kind="number"),  # not declared as gap_mean's SD: its own column
        ),
    )
    frame = pd.DataFrame(
        {"agent": ["a"], "share_x": [0.5], "n_things": [3.0], "p_holm": [0.25], "gap_mean": [0.1],
         "gap_sd": [0.02]}
    )  # fmt: skip
    text, _ = default_display(frame, declared=declared)
    assert text.iloc[0].tolist() == ["a", "0.500", "3.000", "25%", "0.100", "0.020"]
    guessed, _ = default_display(frame)  # undeclared: read from the names
    assert guessed.iloc[0].tolist() == ["a", "50%", "3", "0.250", "0.100 ± 0.020"]


def test_a_declared_pair_needs_no_naming_convention():
    declared = Table(
        "t", "nb", "T.", (*Column.texts("agent"), Column("centre", kind="share"), Column("spread", sd_of="centre"))
    )  # fmt: skip
    frame = pd.DataFrame({"agent": ["a"], "centre": [0.5], "spread": [0.1]})
    assert declared.kinds_in(frame)["spread"] == "share"
    assert default_display(frame, declared=declared)[0].iloc[0].tolist() == ["a", "50 ± 10%"]


def test_a_declared_number_column_without_a_kind_is_refused():
    declared = Table(
        "t", "nb", "T.", (*Column.texts("agent"), *Column.counts("n_runs"), Column("x"))
    )
    frame = declared.frame([{"agent": "a", "n_runs": 2, "x": 0.5}])
    with pytest.raises(TableDeclarationError, match="no kind for x") as err:
        rendered(frame, None, None, {}, declared)
    assert err.value.code == "table.kind"


def test_declaration_helpers_and_their_checks():
    assert [c.name for c in Column.mean_sd("gap", interval=True)] == ["gap_mean", "gap_sd"]
    assert Column.mean_sd("gap")[1].sd_of == "gap_mean"
    with pytest.raises(ValueError, match="SD of 'gap_mean'"):
        Table("t", "nb", "T.", (Column("gap_sd", sd_of="gap_mean"),))
    with pytest.raises(ValueError, match="kind must be one of"):
        Column("agent", "str", kind="count")
    with pytest.raises(ValueError, match="kind must be one of"):
        Column("x", kind="percentage")
