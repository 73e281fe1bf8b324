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

The aggregate of iteration b is then the percentile-interval input. With B iterations and R stored
replicates, iteration b reads replicate b mod R (B = R by default).

This module holds the machinery (checking the replicates table, the replicate matrices, the
stage-1 draws and the vectorised aggregations over iterations); the table functions are in
:mod:`automd_analysis.analysis.uncertainty`.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from automd_analysis.errors import ScoreStoreError

__all__ = [
    "REPLICATES_FIX",
    "ReplicateMatrix",
    "draw_runs",
    "mean_over_slots",
    "nanmean",
    "penalized_by_group",
    "replicate_matrix",
    "stage_two",
]

#: What to do when replicates are missing or malformed.
REPLICATES_FIX = (
    "score the archive with bootstrap replicates (`automd score ARCHIVE --bootstrap 1000`) and "
    "pass its replicates table"
)
_COLUMNS = ("run_id", "replicate", "score", "ece")


def nanmean(values: np.ndarray, axis: int) -> np.ndarray:
    """Mean of the finite values along ``axis``; NaN (no warning) where none is finite.

    .. math:: \\bar x = \\frac{\\sum_i x_i [x_i \\text{ finite}]}{\\sum_i [x_i \\text{ finite}]}

    Examples
    --------
    >>> nanmean(np.array([[1.0, np.nan], [np.nan, np.nan]]), axis=1).tolist()
    [1.0, nan]

    See Also
    --------
    numpy.nanmean : the same, with a warning for all-NaN slices.
    """
    arr = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(arr)
    count = finite.sum(axis=axis)
    total = np.where(finite, arr, 0.0).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)


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
    stage_two : reading the drawn runs' replicates.

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


def stage_two(matrix: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Stage 2: ``V[b, i] = matrix[draws[b, i], b mod R]`` (the drawn run's replicate b).

    Examples
    --------
    >>> matrix = np.array([[0.1, 0.2], [0.5, 0.6]])  # 2 runs x R = 2 replicates
    >>> stage_two(matrix, np.array([[1, 1], [0, 1], [0, 0]])).tolist()
    [[0.5, 0.5], [0.2, 0.6], [0.1, 0.1]]

    See Also
    --------
    draw_runs : stage 1.
    """
    n_boot = draws.shape[0]
    columns = np.arange(n_boot) % matrix.shape[1]
    return matrix[draws, columns[:, None]]


def mean_over_slots(values: np.ndarray, slots: Sequence[np.ndarray]) -> np.ndarray:
    """``out[:, j]`` = finite mean of ``values[:, slots[j]]`` (NaN when none is finite).

    Examples
    --------
    >>> mean_over_slots(np.array([[1.0, 3.0, np.nan]]), [np.array([0, 1]), np.array([2])]).tolist()
    [[2.0, nan]]

    See Also
    --------
    nanmean : the mean used.
    """
    out = np.full((values.shape[0], len(slots)), np.nan)
    for j, cols in enumerate(slots):
        if len(cols):
            out[:, j] = nanmean(values[:, cols], axis=1)
    return out


def penalized_by_group(
    runs: pd.DataFrame, group: str, values: np.ndarray, valid: np.ndarray
) -> dict[str, np.ndarray]:
    """Penalised score per group (agent or LLM) for every iteration.

    ``P = mean over repetitions k of (mean over the group's slots with rep k of s')``, s' = the
    value of a valid run with a finite value, else 0 (paper App. E): the rule of Table 2 and
    Table 7 applied to each row of ``values`` (shape ``(B, n_runs)``; ``valid`` the drawn runs'
    validity, same shape).

    Examples
    --------
    >>> runs = pd.DataFrame({"agent": ["a"] * 4, "rep": [0, 0, 1, 1]})
    >>> values = np.array([[0.6, 0.4, 0.8, np.nan]])
    >>> valid = np.array([[True, True, True, False]])
    >>> penalized_by_group(runs, "agent", values, valid)["a"].round(12).tolist()  # (0.5 + 0.4) / 2
    [0.45]

    See Also
    --------
    automd_analysis.analysis.primary.table2 : the point estimate it reproduces.
    """
    pen = np.where(valid & np.isfinite(values), values, 0.0)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name, mine in runs.groupby(group, sort=True):
            per_rep = [
                pen[:, np.asarray(idx)].mean(axis=1)
                for _, idx in sorted(mine.groupby("rep").groups.items())
            ]
            out[str(name)] = np.mean(np.column_stack(per_rep), axis=1)
    return out
