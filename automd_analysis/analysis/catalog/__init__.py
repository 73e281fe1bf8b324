"""Every published table and figure, declared once (one module per report notebook).

Each module below declares the tables and figures of one report notebook
(:class:`~automd_analysis.analysis.catalog.declaration.Table`,
:class:`~automd_analysis.analysis.catalog.declaration.Figure`): typed columns, interval columns,
display, paper number and the line on the report index. The analysis functions build their frames
with :meth:`~automd_analysis.analysis.catalog.declaration.Table.frame`,
:meth:`automd_analysis.report.notebook.Report.table` checks every published frame against its
declaration and renders it from it, the report index lists them from it, and
``tests/test_catalog.py`` checks ``docs/tables.md`` and the notebooks against it. A name the catalog does not know (a
table of a notebook added later) is published with the default display and listed under "Other".
"""

from __future__ import annotations

from automd_analysis.analysis.catalog import (
    calibration_and_practices,
    evaluation_objectives,
    llm_comparison,
    methods_and_development,
    population_shift,
    primary_scores,
    subgroups,
)
from automd_analysis.analysis.catalog.declaration import Figure, Table

__all__ = ["ANALYSES", "FIGURES", "TABLES", "figure", "lookup", "table"]

_MODULES = (
    primary_scores,
    calibration_and_practices,
    evaluation_objectives,
    population_shift,
    subgroups,
    llm_comparison,
    methods_and_development,
)

#: Report notebooks in report order: stem -> short title.
ANALYSES: dict[str, str] = {module.NOTEBOOK: module.TITLE for module in _MODULES}

#: Tables by export name, in report order.
TABLES: dict[str, Table] = {t.name: t for module in _MODULES for t in module.TABLES}

#: Figures by export name (``<task>`` stands for any task id), in report order.
FIGURES: dict[str, Figure] = {f.name: f for module in _MODULES for f in module.FIGURES}


def table(name: str) -> Table | None:
    """The declaration of table ``name``, or ``None`` for a name the catalog does not know.

    Examples
    --------
    >>> table("table2_primary_scores").paper
    'Table 2'
    >>> table("my_table") is None
    True
    """
    return TABLES.get(name)


def figure(name: str) -> Figure | None:
    """The declaration of figure ``name`` (``reliability_demo_sepsis`` is ``reliability_<task>``).

    Examples
    --------
    >>> figure("reliability_demo_sepsis").notebook
    '02_calibration_and_practices'
    >>> figure("my_figure") is None
    True
    """
    if name in FIGURES:
        return FIGURES[name]
    return next((f for f in FIGURES.values() if f.matches(name)), None)


def lookup(name: str, kind: str = "table") -> Table | Figure | None:
    """The declaration of a published table (``kind="table"``) or figure (``"figure"``).

    Parameters
    ----------
    name : str
        Export name (file stem).
    kind : {"table", "figure"}

    Returns
    -------
    Table, Figure or None
        ``None`` for a name the catalog does not know.

    See Also
    --------
    automd_analysis.report.site.build_index : groups the index by these declarations.

    References
    ----------
    .. [1] Auto-MD-bench paper, Tables 2-22 and Figures 2-5; FML-bench, Table 4.

    Examples
    --------
    >>> lookup("table2_primary_scores").paper
    'Table 2'
    >>> lookup("reliability_demo_sepsis", "figure").notebook
    '02_calibration_and_practices'
    """
    if kind not in ("table", "figure"):
        raise ValueError(f"kind must be 'table' or 'figure', got {kind!r}")
    return table(name) if kind == "table" else figure(name)
