"""Development trajectories, submission selection and version pairs (Auto-MD-bench App. H).

Everything here reads the score store (:class:`~automd_analysis.analysis.store.ScoreStore`,
``docs/score_store.md``): ``scores`` (one row per archived version plus the run's ``"selected"``
row), ``runs``, ``steps`` and ``pairs`` (annotated version pairs).

- :func:`development_summary` / :func:`development_by_agent` - development pace and submission selection
  (paper Table 18): versions per run, time to the first valid version, run time, share of runs that
  ended before the budget, share whose selected submission has the highest test score among the
  run's versions, and reported validation minus test score (AUROC and C^td tasks only).
- :func:`run_curve` / :func:`development_curves` - mean normalised test score over development time
  (paper Figure 5).
- :func:`version_pairs`, :func:`sample_pairs` - the version pairs of paper App. H (the rule is
  :func:`automd_analysis.version_pairs.form_version_pairs`) and their seeded
  early/middle/late sampling; :func:`pair_change_shares` (paper Figure 3)
  and :func:`pair_change_effects` (paper Table 19) join the sampled pairs with their change annotations.

Conventions fixed here (also in ``docs/decisions.md``): the "selected is best" comparison uses the
raw primary metric (all four primary metrics are higher-is-better) and a tie counts as best;
chronological order is ``(elapsed_min, step, version)``; versions without a creation time cannot be
placed on the time axis and are left out of the curves and the pairs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from automd_analysis.analysis.store import NOT_SCORABLE, ScoreStore
from automd_analysis.codebook import PAIR_CHANGES
from automd_analysis.errors import ScoreStoreError
from automd_analysis.precision import comparable, sample_sd
from automd_analysis.schema import RUN_KEY
from automd_analysis.version_pairs import (
    as_bool,
    chronological,
    form_version_pairs,
    require_columns,
)

__all__ = [
    "CHANGE_TYPES",
    "RUN_KEY",
    "STAGES",
    "VAL_TEST_METRICS",
    "development_by_agent",
    "development_curves",
    "development_summary",
    "figure3_shares",
    "figure5_curves",
    "pair_change_effects",
    "pair_change_shares",
    "pair_coverage",
    "run_curve",
    "sample_pairs",
    "table18",
    "table19",
    "version_pairs",
]


#: Metrics whose reported validation score is comparable with the test score (Table 18 dagger).
VAL_TEST_METRICS: frozenset[str] = frozenset({"auroc", "ctd_adj_antolini"})

#: Stages of the version-pair sampling, in order.
STAGES: tuple[str, ...] = ("early", "middle", "late")

#: Pair change types (``docs/archive.md``), in display order.
CHANGE_TYPES: tuple[str, ...] = PAIR_CHANGES

_FIX = "rebuild the score store with `automd score ARCHIVE --out DIR`"


# --------------------------------------------------------------------------------------------------
# input checks shared by the analyses of this area
# --------------------------------------------------------------------------------------------------


def filter_runs(
    frame: pd.DataFrame, experiment: str | None, include_reference: bool
) -> pd.DataFrame:
    out = frame
    if experiment is not None:
        out = out[out["experiment"] == experiment]
    if not include_reference:
        out = out[~as_bool(out["reference"])]
    return out


def selected_rows(scores: pd.DataFrame) -> pd.DataFrame:
    selected = scores[as_bool(scores["is_selected"])]
    dup = selected["run_id"].duplicated()
    if dup.any():
        raise ScoreStoreError(
            f"run {selected.loc[dup, 'run_id'].iloc[0]!r} has more than one selected row",
            path="scores.parquet",
            code="store.duplicate_selected",
            fix=_FIX,
        )
    return selected.set_index("run_id")


def version_rows(scores: pd.DataFrame) -> pd.DataFrame:
    return scores[~as_bool(scores["is_selected"])]


def _mean_sd(values: pd.Series) -> tuple[float, float, int]:
    """Mean and sample SD (ddof=1; NaN with fewer than two values) of the non-missing values."""
    v = pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype=float)
    if v.size == 0:
        return float("nan"), float("nan"), 0
    return float(v.mean()), sample_sd(v), int(v.size)


# --------------------------------------------------------------------------------------------------
# Table 18
# --------------------------------------------------------------------------------------------------

_SCORE_COLS = ("version", "is_selected", "valid", "raw", "score", "elapsed_min", "metric")
_RUN_COLS = ("run_minutes", "ended_before_budget", "reported_val_score")


def development_summary(
    store: ScoreStore,
    *,
    experiment: str | None = "main",
    include_reference: bool = False,
) -> pd.DataFrame:
    """Per-run development pace and selection facts (the rows behind paper Table 18).

    For each run of ``experiment``:

    - ``n_versions`` - archived versions (rows of ``scores`` other than ``"selected"``).
    - ``time_to_first_valid_min`` - smallest ``elapsed_min`` of a valid version (NaN if none).
    - ``run_minutes``, ``ended_before_budget`` - from ``runs``.
    - ``selected_valid`` - the selected submission passed the checks.
    - ``selected_is_best`` - for a valid selected submission with at least one valid version:
      ``raw(selected) >= max(raw of the run's valid versions)``. The raw primary metric is used
      (every primary metric is higher-is-better) and **a tie counts as highest**, so a run whose
      selected file equals its best version counts. ``<NA>`` when the selected submission is
      invalid or the run has no valid version to compare with.
    - ``val_minus_test`` - ``reported_val_score - raw(selected)`` on the raw metric scale, only for
      valid selected submissions on AUROC and C^td tasks (:data:`VAL_TEST_METRICS`) with a finite
      reported score; NaN otherwise (paper Table 18 dagger).

    Parameters
    ----------
    store : ScoreStore
        Reads ``scores`` and ``runs``.
    experiment : str or None
        Experiment to use (``None``: all).
    include_reference : bool
        Keep the simple-baseline runs (default: drop them).

    Returns
    -------
    DataFrame
        One row per run (sorted by ``run_id``): run key + the columns above.
    """
    scores, runs = store.scores, store.runs
    require_columns(scores, (*RUN_KEY, *_SCORE_COLS), "scores.parquet")
    require_columns(runs, (*RUN_KEY, *_RUN_COLS), "runs.parquet")
    runs = filter_runs(runs, experiment, include_reference).sort_values("run_id")
    scores = scores[scores["run_id"].isin(runs["run_id"])]
    selected = selected_rows(scores)
    versions = version_rows(scores)
    valid_versions = versions[as_bool(versions["valid"])]
    n_versions = versions.groupby("run_id").size()
    first_valid = pd.to_numeric(valid_versions["elapsed_min"], errors="coerce").groupby(
        valid_versions["run_id"]
    )
    first_valid = first_valid.min()
    best_version_raw = (
        pd.to_numeric(valid_versions["raw"], errors="coerce")
        .groupby(valid_versions["run_id"])
        .max()
    )

    out = runs[list(RUN_KEY)].copy().set_index("run_id", drop=False)
    ids = out.index
    out["n_versions"] = n_versions.reindex(ids, fill_value=0).astype(int).to_numpy()
    out["time_to_first_valid_min"] = first_valid.reindex(ids).to_numpy(dtype=float)
    out["run_minutes"] = pd.to_numeric(runs.set_index("run_id")["run_minutes"], errors="coerce")
    out["ended_before_budget"] = runs.set_index("run_id")["ended_before_budget"].astype("boolean")
    sel = selected.reindex(ids)
    sel_valid = as_bool(sel["valid"]).to_numpy()
    sel_raw = pd.to_numeric(sel["raw"], errors="coerce").to_numpy(dtype=float)
    out["selected_valid"] = sel_valid
    best = best_version_raw.reindex(ids).to_numpy(dtype=float)
    both = sel_valid & np.isfinite(sel_raw) & np.isfinite(best)
    is_best = pd.array([pd.NA] * len(ids), dtype="boolean")
    is_best[both] = comparable(sel_raw[both]) >= comparable(best[both])
    out["selected_is_best"] = is_best
    reported = pd.to_numeric(runs.set_index("run_id")["reported_val_score"], errors="coerce")
    reported = reported.reindex(ids).to_numpy(dtype=float)
    metric = sel["metric"].astype("string").fillna("").to_numpy()  # no selected row: ""
    eligible = sel_valid & np.isin(metric, list(VAL_TEST_METRICS)) & np.isfinite(reported)
    out["val_minus_test"] = np.where(eligible, reported - sel_raw, np.nan)
    return out.reset_index(drop=True)


def development_by_agent(
    store: ScoreStore,
    *,
    experiment: str | None = "main",
    include_reference: bool = False,
) -> pd.DataFrame:
    """Development and submission-selection summary per agent (paper Table 18).

    Means over the agent's runs of :func:`development_summary` (pooled over tasks and reps):
    ``versions_per_run``; ``time_to_first_valid_min`` over runs with a valid version;
    ``run_time_min``; ``ended_before_budget_pct`` (% of runs); ``selected_is_best_pct`` (% of runs
    with a valid selected submission and a valid version; ties count as best);
    ``val_minus_test`` (raw-metric scale, AUROC/C^td tasks only). Each mean comes with the number
    of runs it averages (``n_*`` columns).

    Returns
    -------
    DataFrame
        One row per agent, sorted by agent.
    """
    per_run = development_summary(store, experiment=experiment, include_reference=include_reference)
    rows = []
    for agent, g in per_run.groupby("agent", sort=True):
        ttf, _, n_ttf = _mean_sd(g["time_to_first_valid_min"])
        best = g["selected_is_best"].dropna()
        vmt, _, n_vmt = _mean_sd(g["val_minus_test"])
        ended = g["ended_before_budget"].dropna()
        rows.append(
            {
                "agent": agent,
                "n_runs": len(g),
                "versions_per_run": float(g["n_versions"].mean()),
                "time_to_first_valid_min": ttf,
                "n_runs_with_valid_version": n_ttf,
                "run_time_min": _mean_sd(g["run_minutes"])[0],
                "ended_before_budget_pct": 100.0 * float(ended.astype(float).mean())
                if len(ended)
                else float("nan"),
                "selected_is_best_pct": 100.0 * float(best.astype(float).mean())
                if len(best)
                else float("nan"),
                "n_runs_selection": len(best),
                "val_minus_test": vmt,
                "n_runs_val_test": n_vmt,
            }
        )
    columns = [
        "agent",
        "n_runs",
        "versions_per_run",
        "time_to_first_valid_min",
        "n_runs_with_valid_version",
        "run_time_min",
        "ended_before_budget_pct",
        "selected_is_best_pct",
        "n_runs_selection",
        "val_minus_test",
        "n_runs_val_test",
    ]
    return pd.DataFrame(rows, columns=columns)


# --------------------------------------------------------------------------------------------------
# Figure 5
# --------------------------------------------------------------------------------------------------


def run_curve(elapsed_min, score, valid, grid) -> np.ndarray:
    """Normalised test score of a run's latest valid version at each grid time (paper Figure 5).

    ``curve(t) = score of the latest valid version with elapsed_min <= t``; ``0`` before the first
    valid version; after the run's last version the value is **carried forward** to the end of the
    grid (the run's final state persists). Versions with a missing time, an invalid file or a
    missing score are ignored. Among versions with the same time, the later one in the input order
    wins, so pass versions in chronological order (``elapsed_min``, ``step``, ``version``).

    Parameters
    ----------
    elapsed_min, score : array-like of float
        Minutes since the run start and normalised test score of each version.
    valid : array-like of bool
        Whether each version's file is valid.
    grid : array-like of float
        Times (minutes) at which to read the curve; any order.

    Returns
    -------
    ndarray of float64, shape (len(grid),)
    """
    t = np.asarray(elapsed_min, dtype=np.float64)
    s = np.asarray(score, dtype=np.float64)
    ok = np.asarray(valid, dtype=bool)
    grid = np.asarray(grid, dtype=np.float64)
    if not (t.shape == s.shape == ok.shape) or t.ndim != 1:
        raise ValueError("elapsed_min, score and valid must be 1-D arrays of the same length")
    keep = ok & np.isfinite(t) & np.isfinite(s)
    t, s = t[keep], s[keep]
    order = np.argsort(t, kind="stable")
    t, s = t[order], s[order]
    idx = np.searchsorted(t, grid, side="right") - 1  # last version with time <= grid point
    return np.where(idx >= 0, s[np.clip(idx, 0, None)] if s.size else 0.0, 0.0)


def development_curves(
    store: ScoreStore,
    *,
    grid: Sequence[float] | None = None,
    step_min: float = 5.0,
    experiment: str | None = "main",
    include_reference: bool = False,
) -> pd.DataFrame:
    """Mean normalised test score over development time per agent (paper Figure 5).

    Every run contributes its :func:`run_curve` (zero before its first valid version, carried
    forward after its last version) on a common grid; runs without any valid version contribute
    zeros, runs that are not scorable here (``runs.status``) nothing. The default grid is ``0, step_min, ..., B`` with ``B`` the largest ``budget_minutes`` of
    the included runs (or, when missing, the largest run time / version time).

    Returns
    -------
    DataFrame
        ``agent, time_min, mean_score, sd_score, n_runs`` (sample SD over runs), sorted by agent
        and time.
    """
    scores, runs = store.scores, store.runs
    require_columns(scores, (*RUN_KEY, "version", "is_selected", "valid", "score", "elapsed_min"),
                    "scores.parquet")  # fmt: skip
    require_columns(runs, RUN_KEY, "runs.parquet")
    runs = filter_runs(runs, experiment, include_reference).sort_values("run_id")
    if "status" in runs:  # a run not scorable here has no test score over time to average
        runs = runs[runs["status"] != NOT_SCORABLE]
    versions = chronological(version_rows(scores[scores["run_id"].isin(runs["run_id"])]))
    if grid is None:
        if step_min <= 0:
            raise ValueError("step_min must be positive")
        candidates = []
        for col in ("budget_minutes", "run_minutes"):
            if col in runs:
                candidates.append(pd.to_numeric(runs[col], errors="coerce").max())
        candidates.append(pd.to_numeric(versions["elapsed_min"], errors="coerce").max())
        finite = [c for c in candidates if pd.notna(c)]
        end = finite[0] if finite else 0.0
        grid = np.arange(0.0, end + step_min / 2, step_min)
    grid = np.asarray(grid, dtype=np.float64)
    by_run = dict(tuple(versions.groupby("run_id", sort=False)))
    rows = []
    for agent, agent_runs in runs.groupby("agent", sort=True):
        curves = []
        for run_id in agent_runs["run_id"]:
            v = by_run.get(run_id)
            if v is None:
                curves.append(np.zeros(grid.size))
                continue
            curves.append(
                run_curve(
                    pd.to_numeric(v["elapsed_min"], errors="coerce"),
                    pd.to_numeric(v["score"], errors="coerce"),
                    as_bool(v["valid"]),
                    grid,
                )
            )
        mat = np.vstack(curves)
        sd = comparable(mat).std(axis=0, ddof=1) if mat.shape[0] > 1 else np.full(grid.size, np.nan)
        rows.append(
            pd.DataFrame(
                {
                    "agent": agent,
                    "time_min": grid,
                    "mean_score": mat.mean(axis=0),
                    "sd_score": sd,
                    "n_runs": mat.shape[0],
                }
            )
        )
    columns = ["agent", "time_min", "mean_score", "sd_score", "n_runs"]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=columns)


# --------------------------------------------------------------------------------------------------
# Version pairs (App. H)
# --------------------------------------------------------------------------------------------------


def version_pairs(
    store: ScoreStore,
    *,
    experiment: str | None = "main",
    valid_runs_only: bool = True,
    include_reference: bool = False,
) -> pd.DataFrame:
    """All version pairs of every run (App. H rule), with the normalised test-score change.

    Only runs whose selected submission is valid are used (``valid_runs_only``; the paper compares
    valid versions from valid runs). The search type of each run comes from ``runs.search``;
    ``steps.parquet`` (when the store has it) supplies the tree links of nodes that saved no
    file when it has ``node``/``parent`` columns (see
    :func:`~automd_analysis.version_pairs.form_version_pairs`).

    Returns
    -------
    DataFrame
        Run key + ``search``, ``pair_index`` (0-based chronological), ``n_pairs``, ``earlier``,
        ``later``, ``earlier_score``, ``later_score``, ``score_change`` (later - earlier),
        ``later_elapsed_min``.
    """
    scores, runs, steps = store.scores, store.runs, store.steps
    require_columns(
        scores, (*RUN_KEY, "version", "is_selected", "valid", "score", "elapsed_min", "parent"),
        "scores.parquet",
    )  # fmt: skip
    require_columns(runs, (*RUN_KEY, "search"), "runs.parquet")
    runs = filter_runs(runs, experiment, include_reference).sort_values("run_id")
    scores = scores[scores["run_id"].isin(runs["run_id"])]
    if valid_runs_only:
        selected = selected_rows(scores)
        ok = as_bool(selected["valid"])
        runs = runs[runs["run_id"].map(ok).fillna(False).astype(bool)]
    versions = version_rows(scores)
    by_run = dict(tuple(versions.groupby("run_id", sort=False)))
    steps_by_run = {} if steps is None else dict(tuple(steps.groupby("run_id", sort=False)))
    frames = []
    for run in runs.itertuples(index=False):
        v = by_run.get(run.run_id)
        if v is None:
            continue
        pairs = form_version_pairs(v, str(run.search), steps=steps_by_run.get(run.run_id))
        if pairs.empty:
            continue
        lookup = v.set_index(v["version"].astype(str))
        score = pd.to_numeric(lookup["score"], errors="coerce")
        elapsed = pd.to_numeric(lookup["elapsed_min"], errors="coerce")
        frame = pairs.assign(
            pair_index=np.arange(len(pairs)),
            n_pairs=len(pairs),
            earlier_score=score.reindex(pairs["earlier"]).to_numpy(),
            later_score=score.reindex(pairs["later"]).to_numpy(),
            later_elapsed_min=elapsed.reindex(pairs["later"]).to_numpy(),
        )
        frame["score_change"] = frame["later_score"] - frame["earlier_score"]
        for col in (*RUN_KEY, "search"):
            frame[col] = getattr(run, col)
        frames.append(frame)
    columns = [*RUN_KEY, "search", "pair_index", "n_pairs", "earlier", "later", "earlier_score",
               "later_score", "score_change", "later_elapsed_min"]  # fmt: skip
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)[columns]


def _run_seed(seed: int, run_id: str) -> np.random.Generator:
    digest = hashlib.sha256(str(run_id).encode("utf-8")).digest()
    return np.random.default_rng([int(seed), int.from_bytes(digest[:8], "little")])


def sample_pairs(pairs: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Seeded early/middle/late sampling of each run's chronologically ordered pairs (App. H).

    A run with more than three pairs is split by pair count into three consecutive groups of
    approximately equal size (``numpy.array_split``: sizes differ by at most one, larger groups
    first - e.g. 4 pairs -> 2/1/1, 5 -> 2/2/1, 7 -> 3/2/2) and one pair is drawn uniformly from each
    group. A run with at most three pairs keeps all of them, labelled early, middle, late in order
    (so runs with fewer than three pairs contribute to fewer stages). Each run's draws use their own
    generator, ``numpy.random.default_rng([seed, h(run_id)])`` with ``h`` the first 8 bytes of the
    run id's sha256, so a run's sample does not depend on which other runs are present.

    Parameters
    ----------
    pairs : DataFrame
        Output of :func:`version_pairs` (needs ``run_id`` and ``pair_index``).
    seed : int

    Returns
    -------
    DataFrame
        The sampled rows of ``pairs`` plus ``stage`` and ``group_size``, sorted by run and stage.
    """
    require_columns(pairs, ("run_id", "pair_index"), "pairs")
    out = []
    for run_id, g in pairs.sort_values(["run_id", "pair_index"]).groupby("run_id", sort=True):
        n = len(g)
        if n <= 3:
            out.append(g.assign(stage=list(STAGES[:n]), group_size=1))
            continue
        rng = _run_seed(seed, run_id)
        picks, sizes = [], []
        for group in np.array_split(np.arange(n), 3):
            picks.append(int(group[rng.integers(len(group))]))
            sizes.append(len(group))
        out.append(g.iloc[picks].assign(stage=list(STAGES), group_size=sizes))
    if not out:
        return pairs.iloc[0:0].assign(stage=pd.Series(dtype=str), group_size=pd.Series(dtype=int))
    return pd.concat(out, ignore_index=True)


def _pair_changes(
    sampled: pd.DataFrame, annotations: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sampled pairs joined with their annotated changes that affect predictions."""
    require_columns(annotations, ("run_id", "earlier", "later", "change", "affects_predictions"),
                    "pairs.parquet")  # fmt: skip
    ann = annotations.assign(
        earlier=annotations["earlier"].astype(str), later=annotations["later"].astype(str)
    )
    key = ["run_id", "earlier", "later"]
    annotated = ann[key].drop_duplicates()
    s = sampled.assign(earlier=sampled["earlier"].astype(str), later=sampled["later"].astype(str))
    s = s.merge(annotated.assign(annotated=True), on=key, how="left")
    s["annotated"] = as_bool(s["annotated"])
    counted = ann[as_bool(ann["affects_predictions"]) & (ann["change"].astype(str) != "none")]
    changes = counted[[*key, "change"]].drop_duplicates()
    return s, changes


def pair_change_shares(store: ScoreStore, sampled: pd.DataFrame) -> pd.DataFrame:
    """Share of sampled pairs per change type, per agent and stage (paper Figure 3).

    ``share = #(annotated sampled pairs of agent x stage with the change) / #(annotated sampled
    pairs of agent x stage)``. Only changes recorded as affecting the submitted predictions count
    (``affects_predictions``); a pair counts once per change type. Sampled pairs without an
    annotation are left out of the denominator and reported in ``n_unannotated``.

    Parameters
    ----------
    store : ScoreStore
        Reads ``pairs`` (the annotated changes, one row per change).
    sampled : DataFrame
        Output of :func:`sample_pairs`.

    Returns
    -------
    DataFrame
        ``agent, stage, change, n_pairs, n_with_change, share, n_unannotated`` for every agent,
        stage present and change type (:data:`CHANGE_TYPES`, plus any other recorded type).
    """
    require_columns(sampled, ("run_id", "agent", "stage", "earlier", "later"), "sampled pairs")
    s, changes = _pair_changes(sampled, store.pairs)
    types = list(CHANGE_TYPES) + sorted(set(changes["change"]) - set(CHANGE_TYPES))
    key = ["run_id", "earlier", "later"]
    rows = []
    stage_rank = {st: i for i, st in enumerate(STAGES)}
    groups = sorted(s.groupby(["agent", "stage"]).groups, key=lambda k: (k[0], stage_rank[k[1]]))
    for agent, stage in groups:
        g = s[(s["agent"] == agent) & (s["stage"] == stage)]
        ann = g[g["annotated"]]
        with_change = ann[key].merge(changes, on=key)
        for change in types:
            n_with = int((with_change["change"] == change).sum())
            rows.append(
                {
                    "agent": agent,
                    "stage": stage,
                    "change": change,
                    "n_pairs": len(ann),
                    "n_with_change": n_with,
                    "share": n_with / len(ann) if len(ann) else float("nan"),
                    "n_unannotated": int((~g["annotated"]).sum()),
                }
            )
    columns = ["agent", "stage", "change", "n_pairs", "n_with_change", "share", "n_unannotated"]
    return pd.DataFrame(rows, columns=columns)


def pair_change_effects(store: ScoreStore, sampled: pd.DataFrame) -> pd.DataFrame:
    """Score change of sampled pairs containing each change type, pooled across agents (Table 19).

    For every change type (affecting predictions), over the annotated sampled pairs containing it:
    ``n``, ``mean`` and sample ``sd`` (ddof=1; NaN when n < 2) of ``later - earlier`` normalised
    test score, and ``share_positive`` = share of those pairs with a strictly positive change.

    Returns
    -------
    DataFrame
        ``change, n, mean, sd, share_positive`` for every type in :data:`CHANGE_TYPES` (n = 0 rows
        have NaN statistics) plus any other recorded type.
    """
    require_columns(sampled, ("run_id", "earlier", "later", "score_change"), "sampled pairs")
    s, changes = _pair_changes(sampled, store.pairs)
    key = ["run_id", "earlier", "later"]
    joined = s[s["annotated"]][[*key, "score_change"]].merge(changes, on=key)
    types = list(CHANGE_TYPES) + sorted(set(changes["change"]) - set(CHANGE_TYPES))
    rows = []
    for change in types:
        d = pd.to_numeric(joined.loc[joined["change"] == change, "score_change"], errors="coerce")
        mean, sd, n = _mean_sd(d)
        d = d.dropna()
        rows.append(
            {
                "change": change,
                "n": n,
                "mean": mean,
                "sd": sd,
                "share_positive": float((d > 0).mean()) if n else float("nan"),
            }
        )
    return pd.DataFrame(rows, columns=["change", "n", "mean", "sd", "share_positive"])


def pair_coverage(shares: pd.DataFrame) -> pd.DataFrame:
    """Sampled version pairs per agent and stage, and how many lack an annotation.

    Selected from :func:`pair_change_shares` (its ``n_pairs`` is the number of annotated sampled
    pairs, ``n_unannotated`` the rest).

    Returns
    -------
    DataFrame
        ``agent, stage, n_sampled, n_annotated, n_unannotated`` in the stage order early, middle,
        late.
    """
    columns = ["agent", "stage", "n_sampled", "n_annotated", "n_unannotated"]
    if shares.empty:
        return pd.DataFrame(columns=columns)
    first = shares.drop_duplicates(["agent", "stage"])[
        ["agent", "stage", "n_pairs", "n_unannotated"]
    ]
    rank = {st: i for i, st in enumerate(STAGES)}
    first = first.assign(_r=first["stage"].map(rank)).sort_values(["agent", "_r"], kind="mergesort")
    return pd.DataFrame(
        {
            "agent": first["agent"].to_numpy(),
            "stage": first["stage"].to_numpy(),
            "n_sampled": (first["n_pairs"] + first["n_unannotated"]).astype(int).to_numpy(),
            "n_annotated": first["n_pairs"].astype(int).to_numpy(),
            "n_unannotated": first["n_unannotated"].astype(int).to_numpy(),
        },
        columns=columns,
    )


# Paper names (the notebooks use the descriptive names above).
table18 = development_by_agent
table19 = pair_change_effects
figure3_shares = pair_change_shares
figure5_curves = development_curves
