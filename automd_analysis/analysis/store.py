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
- :func:`~automd_analysis.stats.rules.mean_sd` (re-exported here) - mean and *sample* standard
  deviation (``ddof=1``), the paper's "mean +- SD".
- :func:`task_classes` - task -> task class (``survival`` / ``classification`` / ``sequential``).
- :func:`annotation_table` - codebook answers as one row per run (``docs/archive.md``).
- :func:`agent_order` - a stable display order (agents alphabetically, the baseline last).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from automd_analysis.errors import ScoreStoreError
from automd_analysis.schema import (
    CODE_SKIPPED,
    NOT_NULL,
    NOT_SCORABLE,
    REQUIRED_COLUMNS,
    RUN_KEY,
    RUN_STATUSES,
    SCHEMAS,
    SORT_KEYS,
    STORE_SCHEMA_VERSION,
    key_columns,
)
from automd_analysis.stats.rules import mean_sd, penalized, per_task_summary

__all__ = [
    "BASELINE_AGENT",
    "DEFAULT_EXPERIMENTS",
    "NOT_SCORABLE",
    "RUN_KEY",
    "SCORE_FIX",
    "STORE_SCHEMA_VERSION",
    "TASK_CLASSES",
    "ScoreStore",
    "agent_order",
    "agent_positions",
    "annotation_table",
    "code_problems",
    "load_store",
    "mean_sd",
    "not_scorable_runs",
    "scored_experiments",
    "selected_runs",
    "skipped_runs",
    "task_access",
    "task_agent_summary",
    "task_classes",
    "task_units",
]


#: Name of the simple-baseline agent (its runs carry ``reference == True``).
BASELINE_AGENT = "baseline"

#: Task classes in the order the paper's tables use (Table 3 columns).
TASK_CLASSES: tuple[str, ...] = ("survival", "classification", "sequential")

#: Default experiment id of each role (``archive.yaml`` ``roles``; ``docs/archive.md``).
DEFAULT_EXPERIMENTS: Mapping[str, str] = {"main": "main", "objectives": "objectives", "llm": "llm"}


#: What the user should do when the store is missing or malformed.
SCORE_FIX = "run `automd score ARCHIVE --out DIR` to (re)build the score store, then load DIR"

#: Tables a store needs; the others are loaded (and checked) when present, else ``None``.
_REQUIRED_TABLES = ("scores", "runs", "subgroups", "calibration_bins", "reasons", "annotations",
                    "pairs")  # fmt: skip
_OPTIONAL_TABLES = ("steps", "calibration_measures", "calibration_curves", "annotation_comparison",
                    "replicates", "subgroup_replicates", "problems", "code", "code_files",
                    "tasks", "extra_metrics")  # fmt: skip
#: Read only when asked for (:meth:`ScoreStore.code_texts`): the archived code can be large.
_CODE_TEXTS = "code_texts"


@dataclass(frozen=True)
class ScoreStore:
    """The score store's tables, checked and with clean dtypes.

    Build it with :func:`load_store` (from a directory) or :meth:`from_frames` (from DataFrames);
    the constructor itself does no checking. Column names and types are those of
    :data:`automd_analysis.schema.SCHEMAS`.

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
    subgroup_replicates : DataFrame or None
        ``run_id, attribute, group, replicates``: the score of every eligible subgroup of a
        selected valid submission on each of the run's test resamples (a list, replicate b at
        position b); ``None`` for a store written without them.
    annotation_comparison : DataFrame or None
        Per run and codebook field, the archive's own answer next to the ``automd annotate``
        answer, for runs that have both (scored with ``--annotations``); else ``None``.
    extra_metrics : DataFrame or None
        The user metrics of every selected valid submission (``automd score --metric``), with
        their per-run intervals and bootstrap replicates; ``None`` when the store has no such
        table.
    problems : DataFrame or None
        ``problems.parquet`` when present: what the scorer could not read or score (runs listed
        there are absent from the other tables; see :func:`skipped_runs`), else ``None``.
    code : DataFrame or None
        Per archived version with code, the sha256 of its code text (the texts themselves:
        :meth:`code_texts`); ``None`` for a store written before the scorer published code.
    code_files : DataFrame or None
        Per code file of a version, where its text lies in the version's text (``file``,
        ``start``, ``length``; the files themselves: :meth:`code_files_texts`); ``None`` for a
        store written before the scorer published it.
    tasks : DataFrame or None
        One row per task: the manifest facts the analyses need (unit, access terms, ...).
    meta : dict
        ``store.json`` (empty when the file is absent).
    path : Path or None
        The directory the store was read from.
    generation : Path or None
        The generation directory the tables were read from (``current`` resolved once).
    texts : DataFrame or None
        ``code_texts.parquet`` when given to :meth:`from_frames` (else read on first use).
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
    subgroup_replicates: pd.DataFrame | None = None
    annotation_comparison: pd.DataFrame | None = None
    code: pd.DataFrame | None = None
    code_files: pd.DataFrame | None = None
    extra_metrics: pd.DataFrame | None = None
    tasks: pd.DataFrame | None = None
    meta: dict = field(default_factory=dict)
    path: Path | None = None
    generation: Path | None = None
    texts: pd.DataFrame | None = field(default=None, repr=False)

    @classmethod
    def from_frames(
        cls,
        *,
        scores: pd.DataFrame,
        runs: pd.DataFrame,
        meta: Mapping | None = None,
        path: str | Path | None = None,
        generation: str | Path | None = None,
        **tables: pd.DataFrame | None,
    ) -> ScoreStore:
        """Check in-memory tables exactly as :func:`load_store` checks the files.

        ``tables`` are the other tables by name (``subgroups=...``, ``code_texts=...``). Tables
        given as ``None`` (other than ``scores`` and ``runs``) become empty tables with the
        required columns, for stores without subgroups, annotations, etc.; optional tables
        (``steps``, ``replicates``, ``code``, ...) stay ``None``.

        Raises
        ------
        ScoreStoreError
            A required column is missing, a flag/key column has values of the wrong type, or the
            tables are inconsistent (see :func:`load_store`).
        """
        known = {*_REQUIRED_TABLES, *_OPTIONAL_TABLES, _CODE_TEXTS}
        unknown = sorted(set(tables) - known)
        if unknown:
            raise TypeError(f"unknown score-store table(s): {', '.join(unknown)}")
        frames = {"scores": scores, "runs": runs, **tables}
        base = Path(path) if path is not None else None
        checked: dict[str, pd.DataFrame | None] = {}
        for name in (*_REQUIRED_TABLES, *_OPTIONAL_TABLES, _CODE_TEXTS):
            frame = frames.get(name)
            where = (base / f"{name}.parquet") if base is not None else f"{name}.parquet"
            if frame is None:
                checked[name] = _empty_table(name) if name in _REQUIRED_TABLES else None
            else:
                checked[name] = _check_table(name, frame, where)
        texts = checked.pop(_CODE_TEXTS)
        checked["runs"] = _with_status(checked["runs"], checked["scores"], base)
        store = cls(
            **checked,
            meta=dict(meta or {}),
            path=base,
            generation=None if generation is None else Path(generation),
            texts=texts,
        )
        _check_consistency(store)
        return store

    @property
    def experiments(self) -> list[str]:
        """Experiment ids present in ``scores.parquet``, sorted."""
        return sorted(self.scores["experiment"].unique().tolist())

    def code_texts(self, run_ids: Iterable[str] | None = None) -> dict[str, dict[str, str]]:
        """``{run_id: {version: code text}}`` of the archived versions with code.

        The text of a version is its ``code_files`` read by the scorer through the archive's
        safe reader (bounded, never executed) in sorted path order and joined with ``\\n``
        (``docs/score_store.md``); files it could not read are left out and listed in
        ``problems.parquet`` (``effect == "code file skipped"``). The texts are read from
        ``code_texts.parquet`` of the store's generation on first use. Empty for a store
        without ``code.parquet``.

        Raises
        ------
        ScoreStoreError
            ``code_texts.parquet`` is missing, unreadable or lacks a text that ``code.parquet``
            names.
        """
        if self.code is None:
            return {}
        code = self.code
        if run_ids is not None:
            code = code.loc[code["run_id"].isin(set(run_ids))]
        texts = self.texts if self.texts is not None else self._read_texts()
        by_sha = dict(zip(texts["code_sha256"], texts["text"], strict=True))
        missing = sorted(set(code["code_sha256"]) - set(by_sha))
        if missing:
            raise ScoreStoreError(
                f"code_texts.parquet lacks {len(missing)} text(s) named in code.parquet",
                path=self._where(_CODE_TEXTS),
                fix=SCORE_FIX,
                code="store.inconsistent",
            )
        out: dict[str, dict[str, str]] = {}
        for run_id, version, sha in zip(
            code["run_id"], code["version"], code["code_sha256"], strict=True
        ):
            out.setdefault(run_id, {})[version] = by_sha[sha]
        return out

    def code_files_texts(
        self, run_ids: Iterable[str] | None = None
    ) -> dict[str, dict[str, dict[str, str]]]:
        """``{run_id: {version: {file: text}}}``: each archived code file on its own.

        A file's text is its slice of the version's text (:meth:`code_texts`) that
        ``code_files.parquet`` records. A store without that table (written by an older scorer)
        gives each version one entry, ``"code"``, holding the whole text.

        Raises
        ------
        ScoreStoreError
            As :meth:`code_texts`, or a recorded slice lies outside its version's text.
        """
        texts = self.code_texts(run_ids)
        if self.code_files is None:
            return {r: {v: {"code": t} for v, t in vs.items()} for r, vs in texts.items()}
        layout = self.code_files
        if run_ids is not None:
            layout = layout.loc[layout["run_id"].isin(set(run_ids))]
        out: dict[str, dict[str, dict[str, str]]] = {}
        for run_id, version, file, start, length in zip(
            layout["run_id"], layout["version"], layout["file"], layout["start"],
            layout["length"], strict=True,
        ):  # fmt: skip
            text = texts.get(run_id, {}).get(version)
            if text is None or start < 0 or length < 0 or start + length > len(text):
                raise ScoreStoreError(
                    f"code_files.parquet places {file!r} of {run_id} {version} outside its "
                    "version's code text",
                    path=self._where("code_files"),
                    fix=SCORE_FIX,
                    code="store.inconsistent",
                )
            out.setdefault(run_id, {}).setdefault(version, {})[file] = text[start : start + length]
        for run_id, versions in texts.items():  # versions the layout does not describe
            for version, text in versions.items():
                out.setdefault(run_id, {}).setdefault(version, {"code": text})
        return out

    def _where(self, name: str) -> Path | str:
        base = self.generation or self.path
        return base / f"{name}.parquet" if base is not None else f"{name}.parquet"

    def _read_texts(self) -> pd.DataFrame:
        file = self._where(_CODE_TEXTS)
        if not isinstance(file, Path) or not file.is_file():
            raise ScoreStoreError(
                "score-store table code_texts.parquet is missing",
                path=file,
                fix=SCORE_FIX,
                code="store.missing_table",
            )
        return _check_table(_CODE_TEXTS, _read_table(file), file)


def load_store(directory: str | Path) -> ScoreStore:
    """Read a score store directory written by ``automd score``.

    Reads ``scores``, ``runs``, ``subgroups``, ``calibration_bins``, ``reasons``, ``annotations`` and
    ``pairs`` (``.parquet``; all required), the optional tables when present (``steps``,
    ``problems``, ``replicates``, ``calibration_measures``, ``calibration_curves``,
    ``annotation_comparison``, ``code``, ``code_files``, ``tasks``; ``code_texts`` on first use, see
    :meth:`ScoreStore.code_texts`) and ``store.json`` (optional; when present its
    ``schema_version`` must be 1).

    Checks: every column of :data:`automd_analysis.schema.REQUIRED_COLUMNS` plus the table's key
    columns; columns that are never null (:data:`automd_analysis.schema.NOT_NULL`, the run key)
    hold values of their schema type only (booleans, integers, no nulls); ``scores`` has at most
    one row per ``(run_id, version)``; every run in ``runs.parquet`` has exactly one selected row
    (``is_selected``) in ``scores.parquet`` and vice versa. Rows are put in the canonical order of
    :data:`automd_analysis.schema.SORT_KEYS`.

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
    for name in (*_REQUIRED_TABLES, *_OPTIONAL_TABLES):
        file = base / f"{name}.parquet"
        if file.is_file():
            frames[name] = _read_table(file)
        elif name in _REQUIRED_TABLES:
            raise ScoreStoreError(
                f"score-store table {file.name} is missing",
                path=file,
                fix=SCORE_FIX,
                code="store.missing_table",
            )
    return ScoreStore.from_frames(**frames, meta=meta, path=root, generation=base)


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


def _checked_columns(name: str) -> list[str]:
    """The key and required columns of a table, in schema order."""
    wanted = {*key_columns(name), *REQUIRED_COLUMNS[name]}
    return [c for c in SCHEMAS[name].names if c in wanted]


def _empty_table(name: str) -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series(dtype=object) for c in _checked_columns(name)})
    return _coerce(frame, name, f"{name}.parquet")


def _check_table(name: str, frame: pd.DataFrame, where: str | Path) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise ScoreStoreError(
            f"{name} must be a pandas DataFrame, got {type(frame).__name__}",
            path=where,
            fix=SCORE_FIX,
            code="store.malformed",
        )
    missing = [c for c in _checked_columns(name) if c not in frame.columns]
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
    if name == "problems":  # archive-level problems have no run: sort as text
        keys = [c for c in REQUIRED_COLUMNS[name] if c != "rep"]
        text = checked[keys].astype(object).where(checked[keys].notna(), "")
        return checked.loc[text.astype(str).sort_values(keys, kind="mergesort").index].reset_index(
            drop=True
        )
    order = [c for c in SORT_KEYS[name] if c in checked.columns]
    checked = checked.sort_values(order, kind="mergesort", na_position="last")
    return checked.reset_index(drop=True)


def _coerce(frame: pd.DataFrame, name: str, where: str | Path) -> pd.DataFrame:
    """The key and required columns with their schema type: never-null ones (the run key, except
    ``llm``, and :data:`~automd_analysis.schema.NOT_NULL`) exactly, nullable numbers as float."""
    if name == "problems":  # kept as written: an archive-level problem has no run
        return frame
    schema = SCHEMAS[name]
    keys = key_columns(name)
    strict = {*keys, *NOT_NULL.get(name, ())} - {"llm"}
    for column in _checked_columns(name):
        dtype = schema.field(column).type
        if column == "llm":
            frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
        elif pa.types.is_string(dtype) and column in strict:
            _refuse_nulls(frame, column, name, where)
            frame[column] = frame[column].astype(str)
        elif pa.types.is_boolean(dtype) and column in strict:
            frame[column] = _as_bool(frame[column], name, column, where)
        elif pa.types.is_integer(dtype) and column in strict:
            frame[column] = _as_int(frame[column], name, column, where)
        elif pa.types.is_integer(dtype) or pa.types.is_floating(dtype):
            frame[column] = _as_float(frame[column], name, column, where)
    if name == "scores":
        for column in ("score", "ece"):
            values = frame[column].to_numpy()
            outside = ~np.isnan(values) & ((values < 0.0) | (values > 1.0))
            if outside.any():
                row = int(np.flatnonzero(outside)[0])
                raise _bad_value(name, column, where, row, values[row], "values in [0, 1] or NaN")
    return frame


def _refuse_nulls(frame: pd.DataFrame, column: str, name: str, where) -> None:
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


def _bad_value(name: str, column: str, where, row: int, value, expected: str) -> ScoreStoreError:
    return ScoreStoreError(
        f"{name}.parquet column {column} must hold {expected}, found {value!r}",
        path=where,
        location=f"row {row}, column {column}",
        fix=SCORE_FIX,
        code="store.malformed",
    )


def _as_bool(series: pd.Series, name: str, column: str, where) -> pd.Series:
    if series.dtype == np.bool_:  # what the scorer writes: nothing to check value by value
        return pd.Series(series.to_numpy(), index=series.index, name=column)
    values = series.to_numpy(dtype=object)
    for row, value in enumerate(values):
        if not isinstance(value, bool | np.bool_):
            raise _bad_value(name, column, where, row, value, "booleans (no nulls)")
    return pd.Series(values.astype(bool), index=series.index, name=column)


def _as_int(series: pd.Series, name: str, column: str, where) -> pd.Series:
    if series.dtype.kind in "iu":  # what the scorer writes: nothing to check value by value
        return pd.Series(series.to_numpy(dtype=np.int64), index=series.index, name=column)
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


def _with_status(runs: pd.DataFrame, scores: pd.DataFrame, base: Path | None) -> pd.DataFrame:
    """``runs`` with a checked ``status`` column; a store without one (written by hand or by an
    older scorer) gets it from the selected rows (every such run is scored)."""
    where = (base / "runs.parquet") if base is not None else "runs.parquet"
    if "status" not in runs.columns:
        selected = scores.loc[scores["is_selected"]].drop_duplicates("run_id")
        valid = runs["run_id"].map(selected.set_index("run_id")["valid"])
        status = valid.map({True: "valid", False: "invalid"})
        return runs.assign(status=status.astype(object).where(status.notna(), None))
    bad = ~runs["status"].isin(RUN_STATUSES)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise _bad_value("runs", "status", where, row, runs["status"].iloc[row],
                         " / ".join(RUN_STATUSES))  # fmt: skip
    return runs


def _check_status(store: ScoreStore, scored_unscorable: set[str]) -> None:
    """A ``not_scorable`` run has no ``scores`` rows; a scored run's status is its validity."""
    runs = store.runs.set_index("run_id")
    selected = store.scores.loc[store.scores["is_selected"]].set_index("run_id")
    scored = runs.index.intersection(selected.index)
    status = runs.loc[scored, "status"]
    expected = selected.loc[scored, "valid"].map({True: "valid", False: "invalid"})
    wrong = sorted(scored_unscorable | set(status.index[status != expected]))
    if wrong:
        shown = ", ".join(wrong[:3]) + (" ..." if len(wrong) > 3 else "")
        raise ScoreStoreError(
            f"runs.parquet status disagrees with the selected rows of scores.parquet for "
            f"{len(wrong)} run(s): {shown}",
            path=(store.path / "runs.parquet") if store.path else "runs.parquet",
            fix=SCORE_FIX,
            code="store.inconsistent",
            details={"runs": wrong},
        )


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
    if store.runs["run_id"].duplicated().any():
        run_id = store.runs.loc[store.runs["run_id"].duplicated(), "run_id"].iloc[0]
        raise ScoreStoreError(
            f"runs.parquet lists run {run_id!r} more than once",
            path=(store.path / "runs.parquet") if store.path else "runs.parquet",
            fix=SCORE_FIX,
            code="store.duplicate_rows",
        )
    selected = set(scores.loc[scores["is_selected"], "run_id"])
    unscorable = set(store.runs.loc[store.runs["status"] == NOT_SCORABLE, "run_id"])
    _check_status(store, selected & unscorable)
    listed = set(store.runs["run_id"]) - unscorable
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


def agent_order(agents: Iterable[str], baseline: str = BASELINE_AGENT) -> list[str]:
    """Stable display order: agents sorted alphabetically (case-insensitive), the baseline last."""
    unique = sorted(set(agents), key=lambda a: (a == baseline, a.lower(), a))
    return unique


def agent_positions(agents: Iterable[str], baseline: str = BASELINE_AGENT) -> dict[str, int]:
    """Agent -> its position in :func:`agent_order` (a sort key that puts the baseline last)."""
    return {a: i for i, a in enumerate(agent_order(agents, baseline))}


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


def task_units(store: ScoreStore) -> dict[str, str]:
    """Task -> manifest ``sizes.unit`` (``patients``, ``encounters``, ...) of the tasks in the
    store's ``tasks`` table; empty for a store without one."""
    if store.tasks is None:
        return {}
    return dict(zip(store.tasks["task"], store.tasks["unit"].astype(str), strict=True))


def task_access(store: ScoreStore) -> dict[str, str]:
    """Task -> manifest ``source.access`` (``public``, ``credentialed``, ``dua``, ``synthetic``)
    of the tasks in the store's ``tasks`` table; empty for a store without one."""
    if store.tasks is None:
        return {}
    return dict(zip(store.tasks["task"], store.tasks["access"].astype(str), strict=True))


def code_problems(store: ScoreStore, run_ids: Iterable[str] | None = None) -> pd.DataFrame:
    """Code files the scorer could not read (``problems.parquet`` rows with ``effect == "code file
    skipped"``): ``run_id, version, file, code, message``; ``file`` is relative to the archive."""
    columns = ["run_id", "version", "file", "code", "message"]
    problems = store.problems
    if problems is None or problems.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    rows = problems.loc[problems["effect"] == CODE_SKIPPED]
    if run_ids is not None:
        rows = rows.loc[rows["run_id"].isin(set(run_ids))]
    return rows.rename(columns={"path": "file"}).reindex(columns=columns).reset_index(drop=True)


def not_scorable_runs(store: ScoreStore, experiment: str | None = None) -> pd.DataFrame:
    """Runs the store holds without scores (``runs.status == "not_scorable"``): the archive has no
    prediction file for their task's test set. They are in ``runs``, ``steps``, ``annotations``
    and ``code`` but in no score table, and never counted invalid.

    Returns
    -------
    DataFrame
        Their ``runs.parquet`` rows (of ``experiment`` when given), sorted by ``run_id``.
    """
    runs = store.runs
    rows = runs.loc[runs["status"] == NOT_SCORABLE]
    if experiment is not None:
        rows = rows.loc[rows["experiment"] == experiment]
    return rows.reset_index(drop=True)


def scored_experiments(store: ScoreStore) -> dict[str, bool]:
    """Experiment -> whether it has a scored run, for every experiment of ``runs.parquet``."""
    scored = set(store.scores["experiment"])
    return {str(e): e in scored for e in sorted(set(store.runs["experiment"]) | scored)}


def _require_experiment(store: ScoreStore, experiment: str, role: str) -> None:
    if experiment not in set(store.scores["experiment"]):
        unscorable = not_scorable_runs(store, experiment)
        if len(unscorable):
            raise ScoreStoreError(
                f"no run of experiment {experiment!r} (role {role!r}) has predictions for its "
                f"task's test set: its {len(unscorable)} run(s) are not scorable here",
                path=store.path / "runs.parquet" if store.path else "runs.parquet",
                fix="import the runs with their prediction files to score them "
                "(docs/importing.md); their steps, times and tokens are reported without scores",
                code="store.no_scored_runs",
            )
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
    """One row per scored run of ``experiment``: its selected submission's scores.

    Runs that are not scorable here (``runs.status``, :func:`not_scorable_runs`: no prediction
    file for the task's test set archived) have no selected submission and are left out: they
    are neither valid nor invalid and never penalised.

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
        The experiment has no scored run in the store (``store.no_scored_runs`` when it has runs
        that are not scorable, ``store.no_experiment`` when it has none).
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


def task_agent_summary(
    store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"], column: str = "score"
) -> pd.DataFrame:
    """Mean, sample SD and count of ``column`` over the valid selected runs of every (task, agent).

    :func:`~automd_analysis.stats.rules.per_task_summary` of :func:`selected_runs`, the agents in
    report order (:func:`agent_positions`: baseline last); the rows of paper Tables 12
    (``"score"``) and 13 (``"ece"``).

    Parameters
    ----------
    store : ScoreStore
    experiment : str
    column : str
        A column of :func:`selected_runs`.

    Returns
    -------
    DataFrame
        ``task, agent, mean, sd, n_valid``, sorted by task then agent.

    Raises
    ------
    ScoreStoreError
        As :func:`selected_runs`.

    References
    ----------
    .. [1] Auto-MD-bench, Tables 12 and 13.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import example_store
    >>> summary = task_agent_summary(example_store()[0], "main", "ece")
    >>> summary[summary["task"] == "surv"][["agent", "n_valid"]].to_records(index=False).tolist()
    [('a', 3), ('b', 2), ('baseline', 2)]
    """
    runs = selected_runs(store, experiment)
    return per_task_summary(runs, column, agent_positions(runs["agent"]))


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


def run_answers(store: ScoreStore, run_ids: pd.Series, fields: Iterable[str] = ()) -> pd.DataFrame:
    """Each run's codebook answers, one row per entry of ``run_ids`` (same index): a column per
    field of :func:`annotation_table` and per name in ``fields``, ``None`` where unanswered."""
    rows = annotation_table(store).reindex(run_ids.to_numpy())
    rows.index = run_ids.index
    for name in fields:
        if name not in rows.columns:
            rows[name] = None
    return rows.astype(object).where(rows.notna(), None)


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
