"""What one run's page shows, gathered from the score store alone.

:func:`collect_runs` splits every store table by run once and returns one :class:`RunInputs` per
run of ``runs.parquet`` (scored or not scorable here): its ``runs`` row, its ``scores`` rows (the
selected submission apart), steps, reasons, codebook answers and version pairs, problems, each
version's code files, its calibration curve and that of the simple baseline of its task, and its
masking-test result. Nothing is read from the archive and nothing is computed here: the pages
show the numbers the scorer stored. :meth:`RunInputs.digest` is the hash of all of it, so a page
is rebuilt only when something it shows changed.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from automd_analysis.analysis.store import BASELINE_AGENT, ScoreStore
from automd_analysis.report.run_links import run_page

__all__ = ["RunInputs", "collect_runs", "records"]


@dataclass(frozen=True)
class RunInputs:
    """One run's rows of the score store (plain ``dict`` records), as its page shows them.

    Attributes
    ----------
    run_id, page : str
        The run and its page (report-relative, :func:`~automd_analysis.report.run_links.run_page`).
    run : dict
        Its ``runs.parquet`` row.
    task : dict
        Its task's ``tasks.parquet`` row (empty for a store without one).
    selected : dict or None
        The ``scores`` row of the selected submission (``None``: not scorable here).
    versions : list of dict
        The ``scores`` rows of its versions (``scores.parquet`` order).
    steps, reasons, annotations, pairs, problems : list of dict
        Its rows of those tables.
    files : dict
        Version -> {file path: text} (:meth:`ScoreStore.code_files_texts`).
    curve : list of dict
        Its ``calibration_curves`` rows.
    baseline : tuple or None
        ``(run id, curve rows)`` of the simple baseline it is drawn against.
    masking : dict or None
        Its masking-test result.
    context : dict
        What every page shares (the provenance line, the small-cell threshold).
    """

    run_id: str
    page: str
    run: dict
    task: dict = field(default_factory=dict)
    selected: dict | None = None
    versions: list[dict] = field(default_factory=list)
    steps: list[dict] = field(default_factory=list)
    reasons: list[dict] = field(default_factory=list)
    annotations: list[dict] = field(default_factory=list)
    pairs: list[dict] = field(default_factory=list)
    problems: list[dict] = field(default_factory=list)
    files: dict[str, dict[str, str]] = field(default_factory=dict)
    curve: list[dict] = field(default_factory=list)
    baseline: tuple[str, list[dict]] | None = None
    masking: dict | None = None
    context: dict = field(default_factory=dict)

    @property
    def scored(self) -> bool:
        """Whether the run has scores (``status`` is not ``not_scorable``)."""
        return self.selected is not None

    def digest(self, builder: str = "") -> str:
        """sha256 of everything the page shows and of ``builder`` (the page code's own key)."""
        doc = {
            name: getattr(self, name)
            for name in self.__dataclass_fields__
            if name not in ("files", "page")
        }
        doc["files"] = {
            version: {name: _sha(text) for name, text in sorted(files.items())}
            for version, files in sorted(self.files.items())
        }
        text = json.dumps([builder, doc], sort_keys=True, default=str, allow_nan=True)
        return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def _plain(value):
    """A JSON-able Python value (NaN, NaT and ``pd.NA`` as ``None``)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item") and not isinstance(value, str):  # numpy scalars
        value = value.item()
        return None if isinstance(value, float) and math.isnan(value) else value
    return value


def records(frame: pd.DataFrame | None) -> list[dict]:
    """Rows of ``frame`` as ``dict`` records of plain values (NaN/NaT/NA as ``None``).

    Examples
    --------
    >>> records(pd.DataFrame({"a": [1.0, float("nan")], "b": ["x", None]}))
    [{'a': 1.0, 'b': 'x'}, {'a': None, 'b': None}]
    """
    if frame is None or frame.empty:
        return []
    return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _by_run(frame: pd.DataFrame | None) -> dict[str, list[dict]]:
    if frame is None or frame.empty or "run_id" not in frame.columns:
        return {}
    rows = frame.loc[frame["run_id"].notna()]
    return {str(run_id): records(group) for run_id, group in rows.groupby("run_id", sort=False)}


def _baselines(store: ScoreStore, curves: Mapping[str, list[dict]]) -> dict[tuple, str]:
    """(experiment, task) and task -> the simple-baseline run whose curve a page draws (the
    lowest repetition with a curve, of the same experiment when there is one)."""
    runs = store.runs
    reference = runs.loc[runs["reference"] | (runs["agent"] == BASELINE_AGENT)]
    chosen: dict[tuple, str] = {}
    for row in reference.sort_values(["rep", "run_id"]).itertuples(index=False):
        if row.run_id not in curves:
            continue
        chosen.setdefault((row.experiment, row.task), row.run_id)
        chosen.setdefault((None, row.task), row.run_id)
    return chosen


def collect_runs(
    store: ScoreStore,
    *,
    masking: pd.DataFrame | None = None,
    context: Mapping | None = None,
) -> list[RunInputs]:
    """One :class:`RunInputs` per row of ``runs.parquet``, sorted by run id.

    Parameters
    ----------
    store : ScoreStore
    masking : DataFrame, optional
        Masking-test results (``masking.results.read_masking_results``), one row per tested run.
    context : mapping, optional
        Shared by every page and part of every digest (provenance line, small-cell threshold).

    Returns
    -------
    list of RunInputs
    """
    runs = records(store.runs.sort_values("run_id", kind="mergesort"))
    scores = _by_run(store.scores)
    tables = {
        name: _by_run(getattr(store, name))
        for name in ("steps", "reasons", "annotations", "pairs", "problems", "calibration_curves")
    }
    masks = {row["run_id"]: row for row in records(masking)}
    tasks = {row["task"]: row for row in records(store.tasks)}
    curves = tables["calibration_curves"]
    baselines = _baselines(store, curves)
    files = store.code_files_texts() if store.code is not None else {}
    shared = dict(context or {})
    out = []
    for run in runs:
        run_id = run["run_id"]
        rows = scores.get(run_id, [])
        selected = next((r for r in rows if r["is_selected"]), None)
        base = baselines.get((run["experiment"], run["task"])) or baselines.get((None, run["task"]))
        out.append(
            RunInputs(
                run_id=run_id,
                page=run_page(run_id),
                run=run,
                task=tasks.get(run["task"], {}),
                selected=selected,
                versions=[r for r in rows if not r["is_selected"]],
                steps=tables["steps"].get(run_id, []),
                reasons=tables["reasons"].get(run_id, []),
                annotations=tables["annotations"].get(run_id, []),
                pairs=tables["pairs"].get(run_id, []),
                problems=tables["problems"].get(run_id, []),
                files=files.get(run_id, {}),
                curve=curves.get(run_id, []),
                baseline=None if base is None or base == run_id else (base, curves[base]),
                masking=masks.get(run_id),
                context=shared,
            )
        )
    return out
