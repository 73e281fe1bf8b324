"""The one resampler: every interval, test, best mark and rank interval of the report draws here.

A table's value is an aggregate of per-run values under the paper's rules
(:mod:`automd_analysis.stats.rules`); its uncertainty has three sources, and draw b of
:func:`resample` redraws all three for every run *slot* of the table at once:

1. **Validity.** Whether a run is valid is a coin with the agent's invalid rate π. Three runs per
   task say little about π: an agent with no invalid run among its 15 runs may well have an
   invalid rate of 0.1 (probability 0.2), and redrawing its own runs can never produce an invalid
   one. So the rate is pooled over the agent's tasks and shrunk towards the table's pooled rate
   p̄ = (N_inv + ½) / (N + 1) by a prior worth one run per task: in draw b,
   π*_b ~ Beta(n_inv + c p̄, n_valid + c (1 - p̄)) with c the agent's number of tasks, and
   M_b = n π*_b (randomly rounded) of the agent's n slots, chosen uniformly, are invalid.
2. **Run-to-run variation.** A valid slot of cell c (an agent's runs on one task) takes the
   cell's mean plus a residual drawn from the cell's valid runs,
   m_c + k (x_r - m_c) with k = sqrt(n_c / (n_c - 1)) sqrt(f_b): the factor
   sqrt(n_c / (n_c - 1)) makes the resampled variance unbiased (a plain redraw of three runs has
   2/3 of their variance), and f_b = ν / χ²_ν, one per agent and draw, with ν the
   Satterthwaite degrees of freedom of the agent's cell variances, makes the draws of a mean
   spread like Student's t with ν degrees of freedom instead of the normal distribution (three runs
   per task estimate a variance with two degrees of freedom each). A cell whose runs are all
   invalid has no value of its own: a slot drawn valid there takes the mean of the agent's other
   cells plus a residual from all of the agent's valid runs.
3. **Test patients.** Every value is read on test resample b: m_c and the residuals are those of
   the runs' replicate b (:mod:`automd_analysis.scoring.replicates`). Replicate b of every run on a
   task was computed on the same resampled patients, so all agents of draw b see the same
   patients: comparisons between agents are paired.

Column 0 of every array is the observed data (slot i holds run i), columns 1..B the draws, so a
rule applied to the rows gives the estimate and its distribution in one call, and
:mod:`automd_analysis.stats.intervals` turns that into the published value, interval, p-value or
best mark. ``docs/statistics.md`` gives the simulation that chose this scheme and measures the
coverage and error rates it keeps; values that have no test-set replicates (process metrics,
AUROC and Brier of the objectives experiment) are redrawn with stages 1 and 2 only, holding the
test set fixed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import chi2

from automd_analysis.docstrings import fill_doc
from automd_analysis.errors import ScoreStoreError

__all__ = [
    "REPLICATES_FIX",
    "Draws",
    "ReplicateMatrix",
    "has_replicates",
    "n_replicates",
    "replicate_matrix",
    "resample",
    "rng_for",
    "run_draws",
]

#: What to do when replicates are missing or malformed.
REPLICATES_FIX = (
    "score the archive with bootstrap replicates (`automd score ARCHIVE --bootstrap 1000`) and "
    "pass its replicates table"
)
_COLUMNS = ("run_id", "replicate", "score", "ece")


#: The Raises entry of a table drawn from the runs' bootstrap replicates.
RAISES_NO_REPLICATES = """
ScoreStoreError
    A valid run has no replicates, or the replicates table is malformed.
"""


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


def rng_for(seed: int, tag: str) -> np.random.Generator:
    """The generator of one table's draws: seeded by ``(seed, sha256(tag))``."""
    words = np.frombuffer(hashlib.sha256(tag.encode("utf-8")).digest()[:8], dtype="<u4")
    return np.random.default_rng(np.random.SeedSequence([int(seed), *map(int, words)]))


def _codes(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """Group number of every row, groups in sorted key order."""
    if not len(frame):
        return np.zeros(0, dtype=np.int64)
    if not columns:
        return np.zeros(len(frame), dtype=np.int64)
    keys = frame[list(columns)].astype(str).agg("\x1f".join, axis=1)
    return pd.factorize(keys, sort=True)[0].astype(np.int64)


def _rounded(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``x`` rounded down or up at random, up with probability its fractional part."""
    floor = np.floor(x)
    return (floor + (rng.random(x.shape) < x - floor)).astype(np.int64)


class Draws:
    """Column 0 the observed runs, columns 1..B the draws of :func:`resample` (module docstring).

    Attributes
    ----------
    units : DataFrame
        The runs (index 0..n-1).
    n_boot : int
        B.
    valid : numpy.ndarray of bool, shape (n, 1 + B)
        Validity of every slot in every column (column 0: the run's own).
    source : numpy.ndarray of int, shape (n, 1 + B)
        The run whose residual (and attributes, :meth:`take`) fill a valid slot.
    imputed : numpy.ndarray of bool, shape (n, 1 + B)
        Valid slots of a cell without a valid run (the agent's other cells stand in).
    """

    def __init__(self, units, cell, group_of_cell, valid, source, imputed, uniforms):
        self.units = units
        self.n_boot = valid.shape[1] - 1
        self.valid = valid
        self.source = source
        self.imputed = imputed
        self._cell = cell
        self._group = group_of_cell
        self._uniforms = uniforms
        observed = units["valid"].to_numpy(bool) if "valid" in units else np.ones(len(units), bool)
        self._members = [np.flatnonzero((cell == c) & observed) for c in range(len(group_of_cell))]

    def take(self, column: str) -> np.ndarray:
        """A run attribute (e.g. a practice group) of the run filling each slot, (n, 1 + B)."""
        return self.units[column].to_numpy()[self.source]

    def values(
        self,
        observed,
        replicates: np.ndarray | None = None,
        bounds: tuple[float, float] | None = None,
    ) -> np.ndarray:
        """Every slot's value in every column: shape (n, 1 + B), NaN for an invalid slot.

        Parameters
        ----------
        observed : array-like of float, shape (n,)
            Each run's value (column 0).
        replicates : numpy.ndarray of shape (n, R), optional
            Each run's value on the task's test resamples; column b reads resample
            (b - 1) mod R. Without them the test set is held fixed.
        bounds : (float, float), optional
            The quantity's range: drawn values are cut to it.
        """
        x0 = np.asarray(observed, dtype=np.float64)
        out = np.full(self.valid.shape, np.nan)
        out[:, 0] = np.where(self.valid[:, 0], x0, np.nan)
        if self.n_boot == 0:
            return out
        if replicates is None:
            x = np.repeat(x0[:, None], self.n_boot, axis=1)
        else:
            columns = np.arange(self.n_boot) % replicates.shape[1]
            x = np.asarray(replicates, dtype=np.float64)[:, columns]
        n_cells = len(self._members)
        means = np.full((n_cells, self.n_boot), np.nan)
        for c, rows in enumerate(self._members):
            if rows.size:
                means[c] = _finite_mean(x[rows])
        stretch_cell, stretch_pool, group_mean = self._stretch(
            x0, means, x if replicates is not None else None
        )
        src = self.source[:, 1:]
        b = np.arange(self.n_boot)[None, :]
        residual = x[src, b] - means[self._cell[src], b]
        slot_cell = self._cell[:, None]
        slot_group = self._group[self._cell][:, None]
        imputed = self.imputed[:, 1:]
        centre = np.where(imputed, group_mean[slot_group, b], means[slot_cell, b])
        scale = np.where(imputed, stretch_pool[slot_group, b], stretch_cell[slot_cell, b])
        drawn = centre + scale * np.where(scale == 0, 0.0, residual)
        drawn = np.where(self.valid[:, 1:], drawn, np.nan)
        if bounds is not None:
            drawn = np.clip(drawn, *bounds)
        out[:, 1:] = drawn
        return out

    def _stretch(self, x0: np.ndarray, means: np.ndarray, x: np.ndarray | None):
        """Per cell and per group (pooled): k = sqrt(n / (n - df_lost)) sqrt(rho f_b); per group the
        mean of its cells' means (for imputed slots)."""
        n_groups = self._uniforms.shape[0]
        cell_k = np.zeros((len(self._members), self.n_boot))
        pool_k = np.zeros((n_groups, self.n_boot))
        group_mean = np.full((n_groups, self.n_boot), np.nan)
        for g in range(n_groups):
            cells = [c for c in np.flatnonzero(self._group == g) if self._members[c].size]
            members = [self._members[c] for c in cells]
            f = np.sqrt(_variance_draws(x0, members, self._uniforms[g]))
            f *= np.sqrt(_run_share(x0, members, means[cells], x))
            for c in cells:
                n_c = self._members[c].size
                cell_k[c] = np.sqrt(n_c / (n_c - 1)) * f if n_c > 1 else 0.0
            if cells:
                total = sum(self._members[c].size for c in cells)
                pool_k[g] = np.sqrt(total / (total - len(cells))) * f if total > len(cells) else 0.0
                group_mean[g] = _finite_mean(means[cells])
        return cell_k, pool_k, group_mean


def _run_share(x0, members, means, x) -> float:
    """rho: the share of the runs' spread within a cell that is run-to-run variation rather than
    each run's own test-set noise.

    A run's observed value carries its own test-set noise (the part not shared with the other runs
    of its task); the draws add that noise again through the cell's mean on test resample b. So the
    residuals are shrunk by rho = max(0, 1 - s_test^2 / s^2), pooled over the group's cells:
    s^2 the runs' sample variance, s_test^2 how much a run's residual moves across the test
    resamples (each run's variance over b of x_r(b) - m_c(b), times n / (n - 1)). 1 without
    replicates (the test set held fixed)."""
    if x is None:
        return 1.0
    spread = noise = 0.0
    for rows, mean in zip(members, means, strict=True):
        values = x0[rows]
        if rows.size < 2 or not np.isfinite(values).all():
            continue
        residual = x[rows] - mean[None, :]
        with np.errstate(invalid="ignore"):
            moved = np.nanvar(residual, axis=1)
        if not np.isfinite(moved).all():
            continue
        spread += (rows.size - 1) * float(np.var(values, ddof=1))
        noise += float(moved.sum())
    if spread <= 0:
        return 1.0
    return max(0.0, 1.0 - noise / spread)


def _finite_mean(values: np.ndarray) -> np.ndarray:
    """Column means of the finite values (NaN where none is)."""
    finite = np.isfinite(values)
    count = finite.sum(axis=0)
    total = np.where(finite, values, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _variance_draws(x0: np.ndarray, members: list[np.ndarray], uniforms: np.ndarray) -> np.ndarray:
    """f_b = ν / χ²_ν(u_b): ν the Satterthwaite degrees of freedom of the cells' variances of the
    mean (cells with two or more finite values); 1 where no cell has a variance."""
    parts, dfs = [], []
    for rows in members:
        values = x0[rows]
        values = values[np.isfinite(values)]
        if values.size > 1:
            parts.append(np.var(values, ddof=1) / values.size)
            dfs.append(values.size - 1)
    parts_arr = np.asarray(parts)
    if not parts or parts_arr.sum() <= 0:
        return np.ones(uniforms.size)
    nu = parts_arr.sum() ** 2 / np.sum(parts_arr**2 / np.asarray(dfs, dtype=np.float64))
    return nu / chi2.ppf(uniforms, nu)


def resample(
    units: pd.DataFrame,
    cells: Sequence[str],
    *,
    n_boot: int,
    seed: int = 0,
    tag: str,
    group: Sequence[str] | None = None,
    model_validity: bool = True,
) -> Draws:
    """The :class:`Draws` of a table's runs: column 0 observed, then B draws (module docstring).

    .. math:: V_{i,0} = x_i, \\qquad V_{i,b} = v_{i,b} \\bigl(m_{c(i)}^{(b)} + k_{c(i)}
              \\sqrt{f_{g,b}}\\, (x^{(b)}_{r_{i,b}} - m_{c(i)}^{(b)})\\bigr)

    Parameters
    ----------
    units : DataFrame
        One row per run; ``valid`` (bool) when validity matters, and the ``cells`` columns.
    cells : sequence of str
        Columns whose equal values form a cell (e.g. an agent's runs on one task).
    n_boot : int
        B (0: the observed column only).
    seed : int, default 0
    tag : str
        Names the table, so that each table has its own reproducible draws.
    group : sequence of str, optional
        Columns of the group whose cells share an invalid rate and a variance draw (default: the
        first cell column, e.g. the agent).
    model_validity : bool, default True
        Redraw validity (stage 1 of the module docstring); otherwise every slot keeps its run's
        observed validity (tables over valid runs whose count is fixed, or over run properties).

    Returns
    -------
    Draws

    Raises
    ------
    ValueError
        ``n_boot`` is not a non-negative integer.

    See Also
    --------
    run_draws : the same with the score store's replicates.

    References
    ----------
    .. [1] Davison AC, Hinkley DV (1997). Bootstrap Methods and their Application, sec. 3.8
       (hierarchical data) and 3.3 (adjusted residuals). Cambridge University Press.
    .. [2] Satterthwaite FE (1946). An approximate distribution of estimates of variance
       components. Biometrics Bulletin 2(6), 110-114.
    .. [3] Jeffreys H (1946). An invariant form for the prior probability in estimation problems.
       Proc. R. Soc. A 186, 453-461.

    Examples
    --------
    >>> units = pd.DataFrame({"agent": "a", "task": ["t", "t", "t", "u", "u", "u"],
    ...                       "valid": [True, True, False, True, True, True]})
    >>> d = resample(units, ("agent", "task"), n_boot=200, tag="demo")
    >>> d.valid.shape, d.valid[:, 0].tolist()
    ((6, 201), [True, True, False, True, True, True])
    >>> bool(d.valid[:, 1:].mean() < 1.0)  # slots of task u can be drawn invalid too
    True
    """
    if isinstance(n_boot, bool) or int(n_boot) != n_boot or n_boot < 0:
        raise ValueError(f"n_boot must be a non-negative integer, got {n_boot!r}.")
    n_boot = int(n_boot)
    units = units.reset_index(drop=True)
    n = len(units)
    observed = units["valid"].to_numpy(bool) if "valid" in units else np.ones(n, bool)
    cell = _codes(units, cells)
    n_cells = int(cell.max()) + 1 if n else 0
    group_cols = list(cells[:1]) if group is None else list(group)
    group_of_row = _codes(units, group_cols)
    group_of_cell = np.zeros(n_cells, dtype=np.int64)
    group_of_cell[cell] = group_of_row
    n_groups = int(group_of_row.max()) + 1 if n else 0
    valid = np.repeat(observed[:, None], n_boot + 1, axis=1)
    source = np.repeat(np.arange(n, dtype=np.int64)[:, None], n_boot + 1, axis=1)
    imputed = np.zeros((n, n_boot + 1), bool)
    rng = rng_for(seed, tag)
    uniforms = rng.random((n_groups, n_boot))
    if n_boot == 0 or n == 0:
        return Draws(units, cell, group_of_cell, valid, source, imputed, uniforms)
    if model_validity:
        prior = (np.count_nonzero(~observed) + 0.5) / (n + 1)
        for g in range(n_groups):
            slots = np.flatnonzero(group_of_row == g)
            n_inv = np.count_nonzero(~observed[slots])
            weight = np.unique(cell[slots]).size
            rate = rng.beta(
                n_inv + weight * prior, slots.size - n_inv + weight * (1 - prior), n_boot
            )
            n_invalid = np.minimum(_rounded(slots.size * rate, rng), slots.size)
            order = np.argsort(rng.random((n_boot, slots.size)), axis=1)
            rank = np.empty_like(order)
            np.put_along_axis(rank, order, np.arange(slots.size)[None, :], axis=1)
            valid[slots, 1:] = (rank >= n_invalid[:, None]).T
    for c in range(n_cells):
        slots = np.flatnonzero(cell == c)
        members = slots[observed[slots]]
        if members.size == 0:
            g = group_of_cell[c]
            members = np.flatnonzero((group_of_row == g) & observed)
            if members.size == 0:
                valid[slots, 1:] = False
                continue
            imputed[slots, 1:] = True
        pick = rng.integers(0, members.size, size=(slots.size, n_boot))
        source[slots, 1:] = members[pick]
    imputed &= valid
    return Draws(units, cell, group_of_cell, valid, source, imputed, uniforms)


class RunDraws(Draws):
    """:class:`Draws` of a store's selected runs with their score and ECE in every column."""

    def __init__(self, draws: Draws, stored: ReplicateMatrix | None):
        self.__dict__.update(draws.__dict__)
        self._stored = stored
        self._cache: dict[str, np.ndarray] = {}

    def stored(self, name: str) -> np.ndarray | None:
        """``score`` or ``ece`` of every run on each stored test resample, (n, R); None without
        replicates."""
        return None if self._stored is None else getattr(self._stored, name)

    def measure(self, name: str) -> np.ndarray:
        """``score`` or ``ece`` of every slot in every column (NaN for an invalid slot)."""
        if name not in self._cache:
            reps = self.stored(name)
            observed = self.units[name].to_numpy(dtype=np.float64)
            # not cut to [0, 1] here: a cut skews the draws' mean, which the bias correction reads;
            # the published intervals are cut to the range instead
            self._cache[name] = self.values(observed, reps)
        return self._cache[name]

    @property
    def score(self) -> np.ndarray:
        """The normalised score of every slot in every column."""
        return self.measure("score")

    @property
    def ece(self) -> np.ndarray:
        """The ECE of every slot in every column."""
        return self.measure("ece")


@fill_doc(raises_no_replicates=RAISES_NO_REPLICATES)
def run_draws(
    runs: pd.DataFrame,
    replicates: pd.DataFrame | None,
    cells: Sequence[str],
    *,
    n_boot: int | None = None,
    seed: int = 0,
    tag: str,
    group: Sequence[str] | None = None,
    model_validity: bool = True,
) -> RunDraws:
    """:func:`resample` of a store's selected runs, reading their score and ECE replicates.

    B defaults to the R replicates per run. Without replicates (``None`` or empty: a store scored
    with ``--bootstrap 0``) only column 0 exists, so every aggregate keeps its value and gets an
    empty interval.

    Parameters
    ----------
    runs : DataFrame
        Rows of ``selected_runs`` (``run_id``, ``valid``, ``score``, ``ece`` and the ``cells``).
    replicates : DataFrame or None
        ``run_id, replicate, score, ece`` for every valid run (``store.replicates``).
    cells, seed, tag, group, model_validity
        As :func:`resample`.
    n_boot : int, optional
        B (default: R).

    Returns
    -------
    RunDraws
        With ``score`` and ``ece`` arrays of shape (n, 1 + B).

    Raises
    ------
    {raises_no_replicates}
    ValueError
        ``n_boot`` is not a positive integer.

    See Also
    --------
    resample

    References
    ----------
    .. [1] Davison AC, Hinkley DV (1997). Bootstrap Methods and their Application, sec. 3.8.

    Examples
    --------
    >>> runs = pd.DataFrame({"run_id": ["r1", "r2"], "agent": "a", "task": "t",
    ...     "valid": [True, False], "score": [0.5, float("nan")], "ece": [0.1, float("nan")]})
    >>> reps = pd.DataFrame({"run_id": ["r1", "r1"], "replicate": [0, 1], "score": [0.4, 0.6],
    ...     "ece": [0.1, 0.2]})
    >>> m = run_draws(runs, reps, ["agent", "task"], tag="demo")
    >>> m.n_boot, m.score[:, 0].tolist()
    (2, [0.5, nan])
    >>> run_draws(runs, None, ["agent", "task"], tag="demo").score.shape
    (2, 1)
    """
    runs = runs.reset_index(drop=True)
    if replicates is None or len(replicates) == 0:
        draws = resample(runs, cells, n_boot=0, seed=seed, tag=tag, group=group)
        return RunDraws(draws, None)
    stored = replicate_matrix(runs, replicates)
    if n_boot is None:
        n_boot = stored.n_replicates
    elif isinstance(n_boot, bool) or int(n_boot) != n_boot or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}.")
    draws = resample(
        runs, cells, n_boot=int(n_boot), seed=seed, tag=tag, group=group,
        model_validity=model_validity,
    )  # fmt: skip
    return RunDraws(draws, stored)
