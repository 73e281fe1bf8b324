"""Load the score store and the helpers every analysis shares.

The analyses read **only** the Parquet tables that ``automd score`` writes (``docs/score_store.md``).
:func:`load_store` reads them into a frozen :class:`ScoreStore`, checks that every table and every
column the analyses rely on is present (a missing one is a
:class:`~automd_analysis.errors.ScoreStoreError` naming the file and the fix), coerces the flag and
key columns to clean dtypes and checks the cross-table invariants the aggregation rules depend on
(one selected row per run), then puts every table in a canonical row order so that results do not
depend on the order in which rows were written. :meth:`ScoreStore.from_frames` does the same for
in-memory frames (tests, notebooks that build a store by hand).

Shared helpers:

- :func:`selected_runs` - one row per run of an experiment: the selected submission's validity, scores
  and ECE plus the penalised score (paper App. E: invalid => 0).
- :func:`mean_sd` - mean and *sample* standard deviation (``ddof=1``), the paper's "mean +- SD".
- :func:`task_classes` - task -> task class (``survival`` / ``classification`` / ``sequential``).
- :func:`annotation_table` - codebook answers as one row per run (``docs/archive.md``).
- :func:`agent_order` - a stable display order (agents alphabetically, the baseline last).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from automd_analysis.analysis.aggregate import penalized
from automd_analysis.errors import ScoreStoreError
from automd_analysis.precision import sample_sd
from automd_analysis.schema import RUN_KEY, STORE_SCHEMA_VERSION

__all__ = [
    "BASELINE_AGENT",
    "DEFAULT_EXPERIMENTS",
    "REPLICATE_COLUMNS",
    "REQUIRED_COLUMNS",
    "RUN_KEY",
    "SCORE_FIX",
    "STORE_SCHEMA_VERSION",
    "TASK_CLASSES",
    "ScoreStore",
    "agent_order",
    "annotation_table",
    "load_store",
    "mean_sd",
    "selected_runs",
    "skipped_runs",
    "task_classes",
]


#: Name of the simple-baseline agent (its runs carry ``reference == True``).
BASELINE_AGENT = "baseline"

#: Task classes in the order the paper's tables use (Table 3 columns).
TASK_CLASSES: tuple[str, ...] = ("survival", "classification", "sequential")

#: Default experiment id of each role (``archive.yaml`` ``roles``; ``docs/archive.md``).
DEFAULT_EXPERIMENTS: Mapping[str, str] = {"main": "main", "objectives": "objectives", "llm": "llm"}


#: What the user should do when the store is missing or malformed.
SCORE_FIX = "run `automd score ARCHIVE --out DIR` to (re)build the score store, then load DIR"

#: Columns each table must have, beyond :data:`RUN_KEY` (a subset of ``docs/score_store.md``: the
#: columns the analyses read). ``steps`` is optional: it is loaded and checked only when present.
REQUIRED_COLUMNS: Mapping[str, tuple[str, ...]] = {
    "scores": (
        "version",
        "is_selected",
        "task_kind",
        "validation",
        "shift",
        "internal_counterpart",
        "valid",
        "reason_code",
        "raw",
        "score",
        "auroc",
        "ece",
        "brier",
    ),
    "runs": ("objective", "tokens_total"),
    "subgroups": ("attribute", "group", "n", "score_raw", "eligible"),
    "calibration_bins": (
        "kind",
        "quantile",
        "time",
        "bin",
        "lo",
        "hi",
        "n",
        "mean_pred",
        "observed",
        "kept",
        "weight",
    ),
    "reasons": ("version", "code", "message"),
    "annotations": ("field", "value"),
    "pairs": ("earlier", "later", "change", "affects_predictions"),
    "steps": ("step", "ok"),
    "calibration_measures": ("task_kind", "ece_10", "cal_intercept", "cal_slope", "ici"),
    "calibration_curves": ("kind", "horizon", "x", "observed", "lo", "hi"),
    "annotation_comparison": (
        "field",
        "reference_value",
        "generated_value",
        "reference_annotator",
        "generated_annotator",
    ),
}

_OPTIONAL_TABLES = frozenset(
    {"steps", "calibration_measures", "calibration_curves", "annotation_comparison"}
)
#: Columns of ``replicates.parquet`` (keyed by ``run_id`` alone; optional).
REPLICATE_COLUMNS: tuple[str, ...] = ("run_id", "replicate", "score", "ece")
#: Every table is put in this canonical row order on load, so that sums (and therefore every
#: derived float) do not depend on the order in which the scorer wrote the rows.
_SORT_KEYS: Mapping[str, tuple[str, ...]] = {
    "scores": ("run_id", "version"),
    "runs": ("run_id",),
    "subgroups": ("run_id", "attribute", "group"),
    "calibration_bins": ("run_id", "kind", "quantile", "bin"),
    "reasons": ("run_id", "version", "code"),
    "annotations": ("run_id", "field", "value"),
    "pairs": ("run_id", "earlier", "later", "change"),
    "steps": ("run_id", "step"),
    "calibration_measures": ("run_id",),
    "calibration_curves": ("run_id", "kind", "x"),
    "annotation_comparison": ("run_id", "field"),
}
_BOOL_COLUMNS = ("reference", "is_selected", "valid", "eligible", "kept", "ok")
_FLOAT_COLUMNS = (
    "raw",
    "score",
    "auroc",
    "ece",
    "brier",
    "tokens_total",
    "score_raw",
    "quantile",
    "time",
    "lo",
    "hi",
    "mean_pred",
    "observed",
    "weight",
)


@dataclass(frozen=True)
class ScoreStore:
    """The score store's tables, checked and with clean dtypes.

    Build it with :func:`load_store` (from a directory) or :meth:`from_frames` (from DataFrames);
    the constructor itself does no checking.

    Attributes
    ----------
    scores, runs, subgroups, calibration_bins, reasons, annotations, pairs : DataFrame
        The tables of ``docs/score_store.md``.
    steps : DataFrame or None
        ``steps.parquet`` when present (FML-bench process metrics), else ``None``.
    calibration_measures, calibration_curves : DataFrame or None
        Calibration beyond ECE per selected valid submission (docs/calibration.md), when the
        store has them.
    replicates : DataFrame or None
        Bootstrap replicates ``run_id, replicate, score, ece`` of every selected valid
        submission (``None`` when scored with ``--bootstrap 0``).
    annotation_comparison : DataFrame or None
        Per run and codebook field, the archive's own answer next to the ``automd annotate``
        answer, for runs that have both (scored with ``--annotations``); else ``None``.
    problems : DataFrame or None
        ``problems.parquet`` when present: what the scorer could not read or score (runs listed
        there are absent from the other tables; see :func:`skipped_runs`), else ``None``.
    meta : dict
        ``store.json`` (empty when the file is absent).
    path : Path or None
        The directory the store was read from.
    """

    scores: pd.DataFrame
    runs: pd.DataFrame
    subgroups: pd.DataFrame
    calibration_bins: pd.DataFrame
    reasons: pd.DataFrame
    annotations: pd.DataFrame
    pairs: pd.DataFrame
    steps: pd.DataFrame | None = None
    problems: pd.DataFrame | None = None
    calibration_measures: pd.DataFrame | None = None
    calibration_curves: pd.DataFrame | None = None
    replicates: pd.DataFrame | None = None
    annotation_comparison: pd.DataFrame | None = None
    meta: dict = field(default_factory=dict)
    path: Path | None = None

    @classmethod
    def from_frames(
        cls,
        *,
        scores: pd.DataFrame,
        runs: pd.DataFrame,
        subgroups: pd.DataFrame | None = None,
        calibration_bins: pd.DataFrame | None = None,
        reasons: pd.DataFrame | None = None,
        annotations: pd.DataFrame | None = None,
        pairs: pd.DataFrame | None = None,
        steps: pd.DataFrame | None = None,
        problems: pd.DataFrame | None = None,
        calibration_measures: pd.DataFrame | None = None,
        calibration_curves: pd.DataFrame | None = None,
        replicates: pd.DataFrame | None = None,
        annotation_comparison: pd.DataFrame | None = None,
        meta: Mapping | None = None,
        path: str | Path | None = None,
    ) -> ScoreStore:
        """Check in-memory tables exactly as :func:`load_store` checks the files.

        Tables given as ``None`` (other than ``scores`` and ``runs``) become empty tables with the
        required columns, for stores without subgroups, annotations, etc.

        Raises
        ------
        ScoreStoreError
            A required column is missing, a flag/key column has values of the wrong type, or the
            tables are inconsistent (see :func:`load_store`).
        """
        frames = {
            "scores": scores,
            "runs": runs,
            "subgroups": subgroups,
            "calibration_bins": calibration_bins,
            "reasons": reasons,
            "annotations": annotations,
            "pairs": pairs,
            "steps": steps,
            "calibration_measures": calibration_measures,
            "calibration_curves": calibration_curves,
            "annotation_comparison": annotation_comparison,
        }
        base = Path(path) if path is not None else None
        checked: dict[str, pd.DataFrame | None] = {}
        for name, frame in frames.items():
            where = (base / f"{name}.parquet") if base is not None else f"{name}.parquet"
            if frame is None:
                checked[name] = None if name in _OPTIONAL_TABLES else _empty_table(name)
            else:
                checked[name] = _check_table(name, frame, where)
        where = (base / "problems.parquet") if base is not None else "problems.parquet"
        checked["problems"] = None if problems is None else _check_problems(problems, where)
        where = (base / "replicates.parquet") if base is not None else "replicates.parquet"
        checked["replicates"] = None if replicates is None else _check_replicates(replicates, where)
        store = cls(**checked, meta=dict(meta or {}), path=base)
        _check_consistency(store)
        return store

    @property
    def experiments(self) -> list[str]:
        """Experiment ids present in ``scores.parquet``, sorted."""
        return sorted(self.scores["experiment"].unique().tolist())


def load_store(directory: str | Path) -> ScoreStore:
    """Read a score store directory written by ``automd score``.

    Reads ``scores``, ``runs``, ``subgroups``, ``calibration_bins``, ``reasons``, ``annotations`` and
    ``pairs`` (``.parquet``; all required), ``steps.parquet`` and ``problems.parquet`` (optional)
    and ``store.json``
    (optional; when present its ``schema_version`` must be 1).

    Checks: every required column of :data:`REQUIRED_COLUMNS` plus the run key :data:`RUN_KEY`;
    boolean flags (``reference``, ``is_selected``, ``valid``, ``eligible``, ``kept``) hold booleans
    only; ``rep`` is an integer; no run key is null; ``scores`` has at most one row per
    ``(run_id, version)``; every run in ``runs.parquet`` has exactly one selected row
    (``is_selected``) in ``scores.parquet`` and vice versa.

    Parameters
    ----------
    directory : str or Path
        The ``--out`` directory of ``automd score``.

    Returns
    -------
    ScoreStore

    Raises
    ------
    ScoreStoreError
        The directory or a table is missing or unreadable, a column is missing or malformed, or the
        tables disagree. The error names the file and suggests re-running ``automd score``.
    """
    root = Path(directory)
    if not root.is_dir():
        raise ScoreStoreError(
            "score store directory not found",
            path=root,
            fix=SCORE_FIX,
            code="store.missing",
        )
    base = _generation(root)
    meta = _read_meta(base / "store.json")
    frames: dict[str, pd.DataFrame | None] = {}
    for name in REQUIRED_COLUMNS:
        file = base / f"{name}.parquet"
        if not file.is_file():
            if name in _OPTIONAL_TABLES:
                frames[name] = None
                continue
            raise ScoreStoreError(
                f"score-store table {file.name} is missing",
                path=file,
                fix=SCORE_FIX,
                code="store.missing_table",
            )
        frames[name] = _read_table(file)
    problems = replicates = None
    if (base / "problems.parquet").is_file():
        problems = _read_table(base / "problems.parquet")
    if (base / "replicates.parquet").is_file():
        replicates = _read_table(base / "replicates.parquet")
    return ScoreStore.from_frames(
        **frames, problems=problems, replicates=replicates, meta=meta, path=root
    )


def _generation(root: Path) -> Path:
    """The directory of the published generation (``current`` resolved once, so every table comes
    from the same generation even if a publish switches it meanwhile); ``root`` itself for a store
    written without generations (e.g. by hand)."""
    link = root / "current"
    return link.resolve() if link.is_symlink() else root


def _read_table(file: Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(file)
    except Exception as exc:  # pyarrow raises several unrelated types for corrupt files
        raise ScoreStoreError(
            f"cannot read score-store table {file.name}: {type(exc).__name__}: {exc}",
            path=file,
            fix=SCORE_FIX,
            code="store.unreadable",
        ) from exc


_PROBLEM_COLUMNS = ("run_id", "experiment", "agent", "task", "rep", "effect", "code", "message")


def _check_problems(frame: pd.DataFrame, where) -> pd.DataFrame:
    missing = [c for c in _PROBLEM_COLUMNS if c not in frame.columns]
    if missing:
        raise ScoreStoreError(
            f"score-store table problems.parquet lacks column(s) {', '.join(missing)}",
            path=where,
            location="columns",
            fix=SCORE_FIX,
            code="store.missing_column",
            details={"missing": missing},
        )
    out = frame.reset_index(drop=True).copy()
    keys = [c for c in _PROBLEM_COLUMNS if c != "rep"]
    text = out[keys].astype(object).where(out[keys].notna(), "")
    order = text.astype(str).sort_values(keys, kind="mergesort").index
    return out.loc[order].reset_index(drop=True)


def _read_meta(file: Path) -> dict:
    if not file.is_file():
        return {}
    try:
        meta = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ScoreStoreError(
            f"cannot read store.json: {exc}", path=file, fix=SCORE_FIX, code="store.unreadable"
        ) from exc
    if not isinstance(meta, dict):
        raise ScoreStoreError(
            "store.json must hold a JSON object", path=file, fix=SCORE_FIX, code="store.malformed"
        )
    version = meta.get("schema_version", STORE_SCHEMA_VERSION)
    if version != STORE_SCHEMA_VERSION:
        raise ScoreStoreError(
            f"score store has schema_version {version!r}; this version of automd-analysis reads "
            f"schema_version {STORE_SCHEMA_VERSION}",
            path=file,
            location="schema_version",
            fix=SCORE_FIX + " with this version of automd-analysis",
            code="store.schema_version",
        )
    return meta


def _check_replicates(frame: pd.DataFrame, where) -> pd.DataFrame:
    """``replicates.parquet``: the columns, integer replicate numbers, float values, sorted."""
    missing = [c for c in REPLICATE_COLUMNS if c not in frame.columns]
    if missing:
        raise ScoreStoreError(
            f"score-store table replicates.parquet lacks column(s) {', '.join(missing)}",
            path=where,
            location="columns",
            fix=SCORE_FIX,
            code="store.missing_column",
        )
    out = frame[list(REPLICATE_COLUMNS)].reset_index(drop=True).copy()
    out["run_id"] = out["run_id"].astype(str)
    out["replicate"] = _as_int(out["replicate"], "replicates", "replicate", where)
    for column in ("score", "ece"):
        out[column] = _as_float(out[column], "replicates", column, where)
    out = out.sort_values(["run_id", "replicate"], kind="mergesort")
    return out.reset_index(drop=True)


def _empty_table(name: str) -> pd.DataFrame:
    columns = list(RUN_KEY) + list(REQUIRED_COLUMNS[name])
    frame = pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    return _coerce(frame, name, f"{name}.parquet")


def _check_table(name: str, frame: pd.DataFrame, where: str | Path) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise ScoreStoreError(
            f"{name} must be a pandas DataFrame, got {type(frame).__name__}",
            path=where,
            fix=SCORE_FIX,
            code="store.malformed",
        )
    wanted = list(RUN_KEY) + list(REQUIRED_COLUMNS[name])
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise ScoreStoreError(
            f"score-store table {name}.parquet lacks column(s) {', '.join(missing)}",
            path=where,
            location="columns",
            fix=SCORE_FIX + " (the store was written by an incompatible scorer)",
            code="store.missing_column",
            details={"missing": missing},
        )
    checked = _coerce(frame.reset_index(drop=True).copy(), name, where)
    order = [c for c in _SORT_KEYS[name] if c in checked.columns]
    checked = checked.sort_values(order, kind="mergesort", na_position="last")
    return checked.reset_index(drop=True)


def _coerce(frame: pd.DataFrame, name: str, where: str | Path) -> pd.DataFrame:
    for column in ("run_id", "experiment", "agent", "task"):
        nulls = frame[column].isna()
        if nulls.any():
            row = int(np.flatnonzero(nulls.to_numpy())[0])
            raise ScoreStoreError(
                f"{name}.parquet has a null {column}",
                path=where,
                location=f"row {row}, column {column}",
                fix=SCORE_FIX,
                code="store.malformed",
            )
        frame[column] = frame[column].astype(str)
    frame["llm"] = frame["llm"].astype(object).where(frame["llm"].notna(), None)
    frame["rep"] = _as_int(frame["rep"], name, "rep", where)
    for column in _BOOL_COLUMNS:
        if column in frame.columns:
            frame[column] = _as_bool(frame[column], name, column, where)
    for column in _FLOAT_COLUMNS:
        if column in frame.columns:
            frame[column] = _as_float(frame[column], name, column, where)
    if name == "scores":
        for column in ("score", "ece"):
            values = frame[column].to_numpy()
            outside = ~np.isnan(values) & ((values < 0.0) | (values > 1.0))
            if outside.any():
                row = int(np.flatnonzero(outside)[0])
                raise _bad_value(name, column, where, row, values[row], "values in [0, 1] or NaN")
    return frame


def _bad_value(name: str, column: str, where, row: int, value, expected: str) -> ScoreStoreError:
    return ScoreStoreError(
        f"{name}.parquet column {column} must hold {expected}, found {value!r}",
        path=where,
        location=f"row {row}, column {column}",
        fix=SCORE_FIX,
        code="store.malformed",
    )


def _as_bool(series: pd.Series, name: str, column: str, where) -> pd.Series:
    values = series.to_numpy(dtype=object)
    for row, value in enumerate(values):
        if not isinstance(value, bool | np.bool_):
            raise _bad_value(name, column, where, row, value, "booleans (no nulls)")
    return pd.Series(values.astype(bool), index=series.index, name=column)


def _as_int(series: pd.Series, name: str, column: str, where) -> pd.Series:
    values = series.to_numpy(dtype=object)
    out = np.empty(len(values), dtype=np.int64)
    for row, value in enumerate(values):
        ok = isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)
        if not ok and isinstance(value, float | np.floating) and float(value).is_integer():
            ok = True
        if not ok:
            raise _bad_value(name, column, where, row, value, "integers (no nulls)")
        out[row] = int(value)
    return pd.Series(out, index=series.index, name=column)


def _as_float(series: pd.Series, name: str, column: str, where) -> pd.Series:
    try:
        return pd.to_numeric(series, errors="raise").astype(float)
    except (TypeError, ValueError):
        converted = pd.to_numeric(series, errors="coerce")
        bad = converted.isna() & series.notna()
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise _bad_value(name, column, where, row, series.iloc[row], "numbers") from None


def _check_consistency(store: ScoreStore) -> None:
    scores = store.scores
    where_scores = (store.path / "scores.parquet") if store.path else "scores.parquet"
    dup = scores.duplicated(["run_id", "version"], keep=False)
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise ScoreStoreError(
            f"scores.parquet has duplicate rows for run {scores['run_id'].iloc[row]!r}, "
            f"version {scores['version'].iloc[row]!r}",
            path=where_scores,
            location=f"row {row}",
            fix=SCORE_FIX,
            code="store.duplicate_rows",
        )
    selected = set(scores.loc[scores["is_selected"], "run_id"])
    listed = set(store.runs["run_id"])
    if store.runs["run_id"].duplicated().any():
        run_id = store.runs.loc[store.runs["run_id"].duplicated(), "run_id"].iloc[0]
        raise ScoreStoreError(
            f"runs.parquet lists run {run_id!r} more than once",
            path=(store.path / "runs.parquet") if store.path else "runs.parquet",
            fix=SCORE_FIX,
            code="store.duplicate_rows",
        )
    for label, only, file in (
        ("runs.parquet", sorted(listed - selected), where_scores),
        ("scores.parquet (selected rows)", sorted(selected - listed), "runs.parquet"),
    ):
        if only:
            shown = ", ".join(only[:3]) + (" ..." if len(only) > 3 else "")
            raise ScoreStoreError(
                f"{len(only)} run(s) appear in {label} but not in {Path(str(file)).name}: {shown}; "
                "the store is stale or incomplete",
                path=file if store.path is None else store.path / Path(str(file)).name,
                fix=SCORE_FIX,
                code="store.inconsistent",
                details={"runs": only},
            )


# --------------------------------------------------------------------------------------------------
# shared helpers


def mean_sd(values: Iterable[float]) -> tuple[float, float]:
    """Mean and sample standard deviation of the finite values.

    ``mean = sum(x) / n`` and ``sd = sqrt(sum((x - mean)^2) / (n - 1))`` (``ddof=1``), the
    "mean +- SD" of every table in the paper.

    Parameters
    ----------
    values : iterable of float
        NaN values are dropped first (a task with no valid run contributes nothing).

    Returns
    -------
    (mean, sd) : tuple of float
        ``(nan, nan)`` when no finite value remains; ``sd`` is ``nan`` for a single value.
    """
    arr = np.asarray(list(values), dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return math.nan, math.nan
    return float(arr.mean()), sample_sd(arr)


def agent_order(agents: Iterable[str], baseline: str = BASELINE_AGENT) -> list[str]:
    """Stable display order: agents sorted alphabetically (case-insensitive), the baseline last."""
    unique = sorted(set(agents), key=lambda a: (a == baseline, a.lower(), a))
    return unique


def task_classes(store: ScoreStore) -> pd.Series:
    """Task -> task class (``task_kind`` of ``scores.parquet``), sorted by task.

    Raises
    ------
    ScoreStoreError
        A task has more than one ``task_kind`` (the store mixes manifests).
    """
    kinds = store.scores[["task", "task_kind"]].drop_duplicates()
    clash = kinds["task"].duplicated(keep=False)
    if clash.any():
        task = kinds.loc[clash, "task"].iloc[0]
        raise ScoreStoreError(
            f"task {task!r} has several task_kind values in scores.parquet",
            path=store.path / "scores.parquet" if store.path else "scores.parquet",
            fix=SCORE_FIX,
            code="store.inconsistent",
        )
    return kinds.set_index("task")["task_kind"].sort_index()


def _require_experiment(store: ScoreStore, experiment: str, role: str) -> None:
    if experiment not in set(store.scores["experiment"]):
        available = ", ".join(store.experiments) or "none"
        raise ScoreStoreError(
            f"the score store has no runs of experiment {experiment!r} (role {role!r}); "
            f"experiments present: {available}",
            path=store.path / "scores.parquet" if store.path else "scores.parquet",
            fix=f"pass the experiment id of the {role} experiment (e.g. `{role}_experiment=...`), "
            "or score an archive that contains it",
            code="store.no_experiment",
        )


_RUN_COLUMNS = (
    "task_kind",
    "validation",
    "shift",
    "internal_counterpart",
    "valid",
    "reason_code",
    "raw",
    "score",
    "auroc",
    "ece",
    "brier",
)


def selected_runs(
    store: ScoreStore,
    experiment: str | Sequence[str] = DEFAULT_EXPERIMENTS["main"],
    *,
    role: str = "main",
    include_reference: bool = True,
) -> pd.DataFrame:
    """One row per run of ``experiment``: its selected submission's scores.

    Columns: the run key, ``task_kind``, ``validation``, ``shift``, ``internal_counterpart``,
    ``valid``, ``reason_code``, ``raw``, ``score`` (normalised, NaN when invalid), ``auroc``, ``ece``,
    ``brier``, ``penalized`` (= ``score`` for a valid run, 0 for an invalid one - paper App. E; a
    valid run with an undefined score also counts 0), and from ``runs.parquet`` ``objective`` and
    ``tokens_total``. Rows are sorted by ``run_id``.

    Parameters
    ----------
    store : ScoreStore
    experiment : str or sequence of str
        Experiment id(s) (default: the main experiment).
    role : str
        Only used in the error message when the experiment is absent.
    include_reference : bool
        Keep the simple-baseline runs (``reference == True``).

    Raises
    ------
    ScoreStoreError
        The experiment is not in the store.
    """
    experiments = [experiment] if isinstance(experiment, str) else list(experiment)
    for exp in experiments:
        _require_experiment(store, exp, role)
    scores = store.scores
    mask = scores["is_selected"] & scores["experiment"].isin(experiments)
    if not include_reference:
        mask &= ~scores["reference"]
    rows = scores.loc[mask, list(RUN_KEY) + list(_RUN_COLUMNS)]
    runs = store.runs[["run_id", "objective", "tokens_total"]]
    out = rows.merge(runs, on="run_id", how="left", validate="one_to_one")
    score = out["score"].where(out["valid"])
    out["score"] = score
    out["penalized"] = penalized(score.to_numpy(dtype=float), out["valid"].to_numpy(dtype=bool))
    return out.sort_values("run_id", kind="mergesort").reset_index(drop=True)


def annotation_table(store: ScoreStore, run_ids: Iterable[str] | None = None) -> pd.DataFrame:
    """Codebook answers as one row per run (index ``run_id``), one column per field.

    Scalar fields hold their value (``"yes"``, ``"class_weight"``, ...); list fields
    (``model_families``, ``ensembling``, ``validation_design``) hold the ``|``-joined sorted values.
    A run without an answer for a field has ``None`` there; a run without any annotation is
    absent unless listed in ``run_ids`` (then it has ``None`` everywhere).
    """
    ann = store.annotations
    if ann.empty:
        wide = pd.DataFrame(index=pd.Index([], name="run_id", dtype=object))
    else:
        values = ann.dropna(subset=["value"]).astype({"value": str})
        grouped = values.groupby(["run_id", "field"], sort=True)["value"].agg(
            lambda s: "|".join(sorted(s))
        )
        wide = grouped.unstack("field")
        wide = wide.astype(object).where(wide.notna(), None)
        wide.columns.name = None
    if run_ids is not None:
        wide = wide.reindex(pd.Index(sorted(set(run_ids)), name="run_id"))
        wide = wide.astype(object).where(wide.notna(), None)
    return wide.sort_index()


def skipped_runs(store: ScoreStore, experiment: str | None = None) -> pd.DataFrame:
    """Runs the scorer left out (``problems.parquet`` rows with ``effect == "run skipped"``).

    These runs are absent from every other table, so no analysis counts them (not even as
    invalid); list them next to the tables so that the gap is visible.

    Returns
    -------
    DataFrame
        ``run_id``, ``experiment``, ``agent``, ``task``, ``rep``, ``code``, ``message``; empty when
        the store has no ``problems.parquet`` or nothing was skipped.
    """
    columns = ["run_id", "experiment", "agent", "task", "rep", "code", "message"]
    problems = store.problems
    if problems is None or problems.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    rows = problems.loc[problems["effect"] == "run skipped"]
    if experiment is not None:
        rows = rows.loc[rows["experiment"] == experiment]
    return rows[columns].reset_index(drop=True)
