"""The two-stage bootstrap behind every aggregate interval: repetitions, then test patients.

An aggregate of the paper's tables (a mean over repetitions of means over tasks, a mean over tasks
of means over valid runs, a ratio of external to internal scores) is uncertain for two reasons:
another set of agent runs would give other scores (run-to-run randomness), and another test set
would score the same submissions differently (test-set sampling). Iteration b of the two-stage
bootstrap draws both:

1. **Repetitions within task.** For every *cell* (an agent's runs on one task; for Table 5 an
   agent's external/internal run pairs), the cell's K runs are replaced by K runs drawn with
   replacement from them. The drawn runs fill the original slots (slot k gets draw k), so the
   aggregate is computed by exactly the same formula as the point estimate, including the
   repetition structure of the penalised score and the rule that an invalid run scores 0.
2. **Test patients within each drawn run.** Each drawn run contributes its score (or ECE) on test
   resample b, read from the per-run replicates of the score store
   (:mod:`automd_analysis.scoring.replicates`). Replicate b of every run on a task was computed on
   the *same* resampled patients, and iteration b uses replicate b for every run, so all agents on a
   task see the same patients in an iteration: comparisons between agents are paired.

The draws and the observed data form one run x replicate matrix (:class:`RunMatrix`): column 0
holds every run's own score, column b (1 <= b <= B) iteration b, which reads replicate
(b - 1) mod R of R stored replicates (B = R by default). The rules of
:mod:`automd_analysis.analysis.aggregate` turn its rows into a table's aggregates for every column
at once, so the point estimate (column 0) and its percentile interval (columns 1..B) come from the
same computation. A store without replicates gives a matrix with column 0 only: the same point
values and empty intervals.

This module holds the machinery: checking the replicates table, aligning it with the runs
(:func:`replicate_matrix`), the stage-1 draws (:func:`draw_runs`) and the matrix
(:func:`run_matrix`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from automd_analysis.errors import ScoreStoreError

__all__ = [
    "REPLICATES_FIX",
    "ReplicateMatrix",
    "RunMatrix",
    "draw_runs",
    "has_replicates",
    "n_replicates",
    "replicate_matrix",
    "run_matrix",
    "slot_draws",
]

#: What to do when replicates are missing or malformed.
REPLICATES_FIX = (
    "score the archive with bootstrap replicates (`automd score ARCHIVE --bootstrap 1000`) and "
    "pass its replicates table"
)
_COLUMNS = ("run_id", "replicate", "score", "ece")


class ReplicateMatrix:
    """Per-run replicates aligned with a runs frame.

    Attributes
    ----------
    score, ece : numpy.ndarray of shape (n_runs, R)
        Replicate r of each run (``nan`` for invalid runs and undefined replicates).
    n_replicates : int
        R.
    """

    def __init__(self, score: np.ndarray, ece: np.ndarray):
        self.score = score
        self.ece = ece
        self.n_replicates = score.shape[1]


def _bad(message: str, *, location: str | None = None, code: str = "store.replicates_malformed"):
    return ScoreStoreError(
        message, path="replicates", location=location, fix=REPLICATES_FIX, code=code
    )


def _check_replicates(replicates: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(replicates, pd.DataFrame):
        raise _bad(f"replicates must be a pandas DataFrame, got {type(replicates).__name__}")
    missing = [c for c in _COLUMNS if c not in replicates.columns]
    if missing:
        raise _bad(f"the replicates table lacks column(s) {', '.join(missing)}", location="columns")
    frame = replicates[list(_COLUMNS)].reset_index(drop=True)
    if frame["run_id"].isna().any():
        row = int(np.flatnonzero(frame["run_id"].isna().to_numpy())[0])
        raise _bad("the replicates table has a null run_id", location=f"row {row}")
    rep = pd.to_numeric(frame["replicate"], errors="coerce")
    bad_rep = rep.isna() | (rep < 0) | (rep != np.floor(rep))
    if bad_rep.any():
        row = int(np.flatnonzero(bad_rep.to_numpy())[0])
        raise _bad(
            f"replicate must be a non-negative integer, found {frame['replicate'].iloc[row]!r}",
            location=f"row {row}, column replicate",
        )
    out = pd.DataFrame({"run_id": frame["run_id"].astype(str), "replicate": rep.astype(np.int64)})
    for column in ("score", "ece"):
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=np.float64)
        bad = (frame[column].notna().to_numpy() & np.isnan(values)) | (
            ~np.isnan(values) & ((values < 0.0) | (values > 1.0))
        )
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise _bad(
                f"{column} must be a number in [0, 1] or NaN, found {frame[column].iloc[row]!r}",
                location=f"row {row}, column {column}",
            )
        out[column] = values
    dup = out.duplicated(["run_id", "replicate"])
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise _bad(
            f"run {out['run_id'].iloc[row]!r} has replicate {out['replicate'].iloc[row]} twice",
            location=f"row {row}",
        )
    return out


def replicate_matrix(runs: pd.DataFrame, replicates: pd.DataFrame) -> ReplicateMatrix:
    """Align the tidy replicates with ``runs`` (rows of ``selected_runs``): ``score[i, r]`` is run
    i's score on test resample r (NaN for an invalid run).

    Every valid run of ``runs`` needs replicates 0..R-1, with one R for all runs (runs on a task
    must share their resamples, and a common R keeps iteration b on the same replicate index
    everywhere). Invalid runs need none (their replicates are ignored: they score 0 / are skipped).

    Raises
    ------
    ScoreStoreError
        ``store.replicates_malformed`` (bad columns or values, duplicates, runs with different
        numbers of replicates) or ``store.no_replicates`` (a valid run without replicates); the
        message names the run and the fix.

    Examples
    --------
    >>> runs = pd.DataFrame({"run_id": ["r1", "r2"], "valid": [True, False]})
    >>> reps = pd.DataFrame({"run_id": ["r1", "r1"], "replicate": [0, 1], "score": [0.5, 0.6],
    ...                      "ece": [0.1, 0.2]})
    >>> replicate_matrix(runs, reps).score.tolist()
    [[0.5, 0.6], [nan, nan]]

    See Also
    --------
    automd_analysis.scoring.replicates.replicates_frame : where the tidy rows come from.
    """
    table = _check_replicates(replicates)
    valid_ids = runs.loc[runs["valid"].astype(bool), "run_id"].astype(str)
    table = table.loc[table["run_id"].isin(set(runs["run_id"].astype(str)))]
    counts = table.groupby("run_id")["replicate"].agg(["size", "max"])
    missing = sorted(set(valid_ids) - set(counts.index))
    if missing:
        shown = ", ".join(missing[:3]) + (" ..." if len(missing) > 3 else "")
        raise ScoreStoreError(
            f"{len(missing)} valid run(s) have no bootstrap replicates: {shown}",
            path="replicates",
            fix=REPLICATES_FIX,
            code="store.no_replicates",
            details={"runs": missing},
        )
    if counts.empty:
        return ReplicateMatrix(np.full((len(runs), 1), np.nan), np.full((len(runs), 1), np.nan))
    incomplete = counts.index[counts["size"] != counts["max"] + 1]
    if len(incomplete):
        raise _bad(
            f"run {incomplete[0]!r} does not have replicates 0..{int(counts.loc[incomplete[0], 'max'])}",
            location=f"run_id {incomplete[0]}",
        )
    sizes = sorted(set(counts["size"].astype(int)))
    if len(sizes) > 1:
        raise _bad(
            f"runs have different numbers of bootstrap replicates ({', '.join(map(str, sizes))}); "
            "re-score every run with the same --bootstrap N"
        )
    n_rep = sizes[0]
    row_of = {run_id: i for i, run_id in enumerate(runs["run_id"].astype(str))}
    score = np.full((len(runs), n_rep), np.nan)
    ece = np.full((len(runs), n_rep), np.nan)
    rows = table["run_id"].map(row_of).to_numpy()
    reps = table["replicate"].to_numpy()
    score[rows, reps] = table["score"].to_numpy()
    ece[rows, reps] = table["ece"].to_numpy()
    invalid = ~runs["valid"].astype(bool).to_numpy()
    score[invalid] = np.nan
    ece[invalid] = np.nan
    return ReplicateMatrix(score, ece)


def _rng(seed: int, tag: str) -> np.random.Generator:
    words = np.frombuffer(hashlib.sha256(tag.encode("utf-8")).digest()[:8], dtype="<u4")
    return np.random.default_rng(np.random.SeedSequence([int(seed), *map(int, words)]))


def draw_runs(
    runs: pd.DataFrame, cells: Sequence[str], n_boot: int, seed: int, tag: str
) -> np.ndarray:
    """Stage 1: for every cell (rows with equal ``cells`` values), draw its runs with replacement.

    Returns ``D`` of shape ``(n_boot, len(runs))``: ``D[b, i]`` is the row whose run fills slot i in
    iteration b (always a row of the same cell). Cells are visited in sorted key order with one
    generator seeded by ``(seed, tag)``, so the draws are reproducible.

    Examples
    --------
    >>> runs = pd.DataFrame({"agent": ["a", "a", "b"], "task": ["t", "t", "t"]})
    >>> d = draw_runs(runs, ("agent", "task"), n_boot=4, seed=0, tag="demo")
    >>> d.shape, set(d[:, 2].tolist())  # b's only run always fills b's slot
    ((4, 3), {2})

    See Also
    --------
    run_matrix : the draws with their replicates.

    References
    ----------
    Davison, A. C., Hinkley, D. V. (1997). Bootstrap Methods and their Application, sec. 3.8.
    Cambridge University Press.
    """
    draws = np.empty((n_boot, len(runs)), dtype=np.int64)
    rng = _rng(seed, tag)
    if len(runs) == 0:
        return draws
    keys = runs[list(cells)].astype(str).agg("\x1f".join, axis=1)
    for _, rows in sorted(keys.groupby(keys).groups.items()):
        members = np.asarray(rows, dtype=np.int64)
        pick = rng.integers(0, len(members), size=(n_boot, len(members)))
        draws[:, members] = members[pick]
    return draws


def has_replicates(store) -> bool:
    """Whether the store holds bootstrap replicates (``replicates.parquet`` with rows).

    See Also
    --------
    n_replicates : how many per run.

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap. Chapman & Hall.

    Examples
    --------
    >>> from automd_analysis.analysis import _doc_example
    >>> has_replicates(_doc_example.example_store()[0])
    False
    >>> has_replicates(_doc_example.example_store_with_replicates())
    True
    """
    return store.replicates is not None and len(store.replicates) > 0


def n_replicates(store) -> int:
    """Replicates per run in the store (0 without replicates): the number of iterations B.

    See Also
    --------
    has_replicates

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap. Chapman & Hall.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import example_store_with_replicates
    >>> n_replicates(example_store_with_replicates())
    40
    """
    if not has_replicates(store):
        return 0
    return int(store.replicates["replicate"].max()) + 1


class RunMatrix:
    """The runs of one table and their values under the two-stage bootstrap: run x replicate.

    Row i is slot i, a run of ``runs``. Column 0 is the observed data: slot i holds run i and its
    own score. Column b (1 <= b <= B) is iteration b of the two-stage bootstrap: slot i holds the
    run ``draws[i, b]`` drawn from slot i's cell (stage 1, :func:`draw_runs`) with that run's
    score on test resample b - 1 (stage 2; replicate (b - 1) mod R of the score store). Any
    aggregate of :mod:`automd_analysis.analysis.aggregate` applied to the rows then gives the
    point estimate in column 0 and its bootstrap distribution in columns 1..B.

    Attributes
    ----------
    runs : DataFrame
        The runs (index 0..n-1).
    draws : numpy.ndarray of int, shape (n, 1 + B)
        Run filling each slot in each column (``draws[:, 0] = 0..n-1``).
    score, ece : numpy.ndarray, shape (n, 1 + B)
        Value of the drawn run on the column's test set; NaN for an invalid run.
    valid : numpy.ndarray of bool, shape (n, 1 + B)
        Validity of the drawn run.
    """

    def __init__(self, runs: pd.DataFrame, draws: np.ndarray, observed, stored):
        self.runs = runs
        self.draws = draws
        self._observed = observed  # measure -> (n,)
        self._stored = stored  # measure -> (n, R), or None without replicates
        self.valid = runs["valid"].to_numpy(bool)[draws]
        self.score = self.read("score", draws)
        self.ece = self.read("ece", draws)

    @property
    def n_boot(self) -> int:
        """B, the number of bootstrap columns (0 for a store without replicates)."""
        return self.draws.shape[1] - 1

    def read(self, measure: str, rows: np.ndarray) -> np.ndarray:
        """``measure`` (``score``/``ece``) of run ``rows[i, b]`` on the test set of column b."""
        out = np.empty(rows.shape, dtype=np.float64)
        out[:, 0] = self._observed[measure][rows[:, 0]]
        if rows.shape[1] > 1:
            stored = self._stored[measure]
            columns = np.arange(rows.shape[1] - 1) % stored.shape[1]
            out[:, 1:] = stored[rows[:, 1:], columns[None, :]]
        return out

    def take(self, column: str) -> np.ndarray:
        """A run attribute (e.g. ``tokens_total``) of the drawn runs, shape (n, 1 + B)."""
        return self.runs[column].to_numpy(dtype=np.float64)[self.draws]


def run_matrix(
    runs: pd.DataFrame,
    replicates: pd.DataFrame | None,
    cells: Sequence[str],
    *,
    n_boot: int | None = None,
    seed: int = 0,
    tag: str,
) -> RunMatrix:
    """The :class:`RunMatrix` of ``runs``: observed column, then B two-stage bootstrap columns.

    Stage 1 redraws the runs of every cell (rows with equal ``cells`` values, e.g. an agent's runs
    on one task) with replacement, seeded by ``(seed, tag)``; stage 2 reads each drawn run's
    replicate of the column's test resample. Without replicates (``None`` or empty: a store scored
    with ``--bootstrap 0``) the matrix has column 0 only, so every aggregate still has its point
    value and an empty interval.

    .. math:: V_{i,0} = s_i, \\qquad V_{i,b} = s^{(b-1 \\bmod R)}_{D_{b,i}} \\quad (b \\ge 1)

    Parameters
    ----------
    runs : DataFrame
        Rows of ``selected_runs`` (``run_id``, ``valid``, ``score``, ``ece`` and the ``cells``).
    replicates : DataFrame or None
        ``run_id, replicate, score, ece`` for every valid run (``store.replicates``).
    cells : sequence of str
        Columns whose equal values form a cell of stage 1.
    n_boot : int, optional
        B (default: the R replicates per run).
    seed : int, default 0
    tag : str
        Names the table, so that each table has its own reproducible draws.

    Returns
    -------
    RunMatrix

    Raises
    ------
    ScoreStoreError
        A valid run has no replicates, or the replicates table is malformed.
    ValueError
        ``n_boot`` is not a positive integer.

    See Also
    --------
    automd_analysis.analysis.aggregate : the rules applied to its rows.

    References
    ----------
    .. [1] Davison AC, Hinkley DV (1997). Bootstrap Methods and their Application, sec. 3.8.

    Examples
    --------
    >>> runs = pd.DataFrame({"run_id": ["r1", "r2"], "agent": "a", "task": "t",
    ...     "valid": [True, False], "score": [0.5, float("nan")], "ece": [0.1, float("nan")]})
    >>> reps = pd.DataFrame({"run_id": ["r1", "r1"], "replicate": [0, 1], "score": [0.4, 0.6],
    ...     "ece": [0.1, 0.2]})
    >>> m = run_matrix(runs, reps, ["agent", "task"], tag="demo")
    >>> m.n_boot, m.score[:, 0].tolist()
    (2, [0.5, nan])
    >>> run_matrix(runs, None, ["agent", "task"], tag="demo").score.shape
    (2, 1)
    """
    runs = runs.reset_index(drop=True)
    valid = runs["valid"].to_numpy(bool)
    observed = {
        m: np.where(valid, runs[m].to_numpy(dtype=np.float64), np.nan) for m in ("score", "ece")
    }
    identity = np.arange(len(runs), dtype=np.int64)[:, None]
    if replicates is None or len(replicates) == 0:
        return RunMatrix(runs, identity, observed, None)
    stored = replicate_matrix(runs, replicates)
    n_boot = _n_boot(n_boot, stored.n_replicates)
    drawn = draw_runs(runs, cells, n_boot, seed, tag).T
    draws = np.hstack([identity, drawn])
    return RunMatrix(runs, draws, observed, {"score": stored.score, "ece": stored.ece})


def _n_boot(n_boot: int | None, n_replicates: int) -> int:
    if n_boot is None:
        return n_replicates
    if isinstance(n_boot, bool) or int(n_boot) != n_boot or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}.")
    return int(n_boot)


def slot_draws(
    runs: pd.DataFrame, cells: Sequence[str], n_boot: int, seed: int, tag: str
) -> np.ndarray:
    """Stage 1 alone, as the rows of a run x replicate matrix: shape ``(len(runs), 1 + n_boot)``,
    column 0 the observed runs (``0..n-1``), column b the rows of :func:`draw_runs` iteration b.

    For claims whose values are properties of the runs (process metrics) or whose test-set
    replicates are not stored (AUROC and Brier of the objectives experiment): index a per-run
    array with it and apply the rules of :mod:`automd_analysis.analysis.aggregate`.

    Examples
    --------
    >>> runs = pd.DataFrame({"agent": ["a", "a", "b"], "task": "t"})
    >>> d = slot_draws(runs, ("agent", "task"), n_boot=3, seed=0, tag="demo")
    >>> d.shape, d[:, 0].tolist(), set(d[2].tolist())
    ((3, 4), [0, 1, 2], {2})
    """
    identity = np.arange(len(runs), dtype=np.int64)[:, None]
    return np.hstack([identity, draw_runs(runs, cells, int(n_boot), seed, tag).T])
