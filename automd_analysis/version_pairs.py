"""Version pairs of an archived run (paper App. H): which earlier version each version is compared with.

The pairing rule depends only on a run's versions (creation time, step, parent links, node ids,
validity) and its recorded search tree (``run.json`` ``steps[].node/parent``, ``docs/archive.md``),
so it is a shared module below both the archive and the analyses: ``automd annotate`` forms the
pairs whose code changes it annotates, the process analyses pair versions to measure code changes,
and the development analyses pair the scored versions of the score store - all with
:func:`form_version_pairs` (the analyses read the versions from the store, never the archive).

Chronological order is ``(elapsed_min, step, version)`` (:func:`chronological`); versions without
a creation time cannot be placed on the time axis and are not paired.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from automd_analysis.errors import ScoreStoreError

__all__ = ["as_bool", "chronological", "form_version_pairs", "require_columns"]

_FIX = "rebuild the score store with `automd score ARCHIVE --out DIR`"


def require_columns(frame: pd.DataFrame, columns: Iterable[str], table: str) -> None:
    """Raise :class:`ScoreStoreError` naming ``table`` and the missing columns, if any."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{table} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ScoreStoreError(
            f"{table} lacks column(s) {missing}",
            path=table,
            location="columns",
            code="store.columns",
            fix=_FIX,
        )


def as_bool(series: pd.Series) -> pd.Series:
    """Nullable booleans as plain bools (missing = False)."""
    return series.astype("boolean").fillna(False).astype(bool)


def chronological(versions: pd.DataFrame) -> pd.DataFrame:
    """Versions sorted by (elapsed_min, step, version); missing times and steps sort last."""
    key = pd.DataFrame(
        {
            "t": pd.to_numeric(versions["elapsed_min"], errors="coerce").to_numpy(dtype=float),
            "s": pd.to_numeric(versions["step"], errors="coerce").to_numpy(dtype=float)
            if "step" in versions
            else np.zeros(len(versions)),
            "v": versions["version"].astype(str).to_numpy(),
        },
        index=versions.index,
    )
    order = key.sort_values(["t", "s", "v"], na_position="last", kind="mergesort").index
    return versions.loc[order]


def _text(value) -> bool:
    """A non-empty string (not None / NaN / pd.NA)."""
    return isinstance(value, str) and bool(value)


def form_version_pairs(
    versions: pd.DataFrame,
    search: str,
    *,
    valid_only: bool = True,
    steps: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Pair each version with the version it is compared against (paper App. H).

    - **tree** agents: a version pairs with the *latest earlier* (eligible) version saved by the
      *nearest ancestor node that saved one*: walk parent links from the version's node; at each
      ancestor look for eligible versions of that node created earlier; the first ancestor that has
      one supplies the latest of them. Ancestors that saved only ineligible (invalid) files are
      skipped; nodes that saved no file are walked through when ``steps`` records their parent
      (``run.json`` ``steps[].node/parent``, docs/archive.md), otherwise an unknown parent ends
      the walk; cyclic links end the walk.
    - **linear** agents: consecutive eligible versions in time; the earlier one need not be the
      basis of the later one.
    - any other ``search`` (``"none"``: baselines): no pairs.

    Parameters
    ----------
    versions : DataFrame
        One run's versions: ``version``, ``elapsed_min``, ``step``, ``parent``, ``valid`` and
        optionally ``node`` (default: the version id). ``parent`` may name a node or a version.
    search : {"tree", "linear", "none"}
    valid_only : bool
        Only valid versions are eligible (the paper's rule). ``False`` pairs every version with its
        predecessor whatever its validity (used for code-change distances).
    steps : DataFrame, optional
        The run's steps with ``node`` and ``parent`` (and ``version``) columns: the search tree
        including nodes that saved no prediction file. Version links take precedence; steps fill
        in the nodes of versions without a ``node`` and the parents of nodes the versions do not
        describe. Ignored when it lacks those columns.

    Returns
    -------
    DataFrame
        ``earlier, later`` (version ids), in chronological order of ``later``. Versions without a
        creation time are not paired.
    """
    require_columns(versions, ("version", "elapsed_min", "parent", "valid"), "versions")
    columns = ["earlier", "later"]
    if search not in ("tree", "linear"):
        return pd.DataFrame(columns=columns)
    v = versions[pd.to_numeric(versions["elapsed_min"], errors="coerce").notna()]
    v = chronological(v if "step" in v else v.assign(step=np.nan))
    ids = v["version"].astype(str).tolist()
    eligible = as_bool(v["valid"]).tolist() if valid_only else [True] * len(ids)
    if search == "linear":
        chosen = [i for i, e in zip(ids, eligible, strict=True) if e]
        return pd.DataFrame({"earlier": chosen[:-1], "later": chosen[1:]}, columns=columns)

    step_node: dict[str, str] = {}
    step_parent: list[tuple[str, str]] = []
    if steps is not None and {"node", "parent"} <= set(steps.columns):
        for version, node, parent in zip(
            steps["version"] if "version" in steps else [None] * len(steps),
            steps["node"],
            steps["parent"],
            strict=True,
        ):
            if _text(node):
                if _text(version):
                    step_node.setdefault(str(version), str(node))
                if _text(parent):
                    step_parent.append((str(node), str(parent)))
    explicit = v["node"].tolist() if "node" in v else [None] * len(ids)
    nodes = [
        str(n) if _text(n) else step_node.get(vid, vid)
        for vid, n in zip(ids, explicit, strict=True)
    ]
    node_of = dict(zip(ids, nodes, strict=True))
    parent_of_node: dict[str, str] = {}
    for node, parent in zip(nodes, v["parent"].tolist(), strict=True):
        if node not in parent_of_node and _text(parent):
            parent_of_node[node] = node_of.get(str(parent), str(parent))
    for node, parent in step_parent:
        parent_of_node.setdefault(node, node_of.get(parent, parent))
    # eligible versions of each node with their chronological position
    by_node: dict[str, list[int]] = {}
    for pos, (node, e) in enumerate(zip(nodes, eligible, strict=True)):
        if e:
            by_node.setdefault(node, []).append(pos)
    earlier, later = [], []
    for pos, (vid, node, e) in enumerate(zip(ids, nodes, eligible, strict=True)):
        if not e:
            continue
        seen = {node}
        ancestor = parent_of_node.get(node)
        while ancestor is not None and ancestor not in seen:
            seen.add(ancestor)
            before = [p for p in by_node.get(ancestor, []) if p < pos]
            if before:
                earlier.append(ids[before[-1]])
                later.append(vid)
                break
            ancestor = parent_of_node.get(ancestor)
    return pd.DataFrame({"earlier": earlier, "later": later}, columns=columns)
