"""Paper figures from the analysis tables, drawn with seaborn/matplotlib and saved reproducibly.

Each ``figure*`` function takes the DataFrame an analysis function returns and gives back a
:class:`matplotlib.figure.Figure` (built without :mod:`matplotlib.pyplot`, so no global figure state
leaks between notebook cells; Jupyter displays it inline). :func:`save_figure` writes
``<out_dir>/figures/<name>.png`` and ``.svg``: Agg rendering, a fixed ``svg.hashsalt``, no
``Date`` metadata and atomic file replacement, so the same input gives identical files.

Deterministic drawing: seaborn's own jitter uses numpy's global random state and its bars default
to bootstrapped error bars, so point clouds are jittered here with a seeded generator and bars are
drawn with ``errorbar=None``. Archive-provided labels are drawn as plain text (``text.parse_math``
off), so names containing ``$`` cannot trigger mathtext.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

__all__ = [
    "SVG_HASHSALT",
    "export_paper_figures",
    "external_ratio_figure",
    "figure2a",
    "figure2b",
    "figure4",
    "reliability_figure",
    "save_figure",
    "subgroup_gap_figure",
]

#: Fixed salt for the ids matplotlib writes into SVG files (default: random per process).
SVG_HASHSALT = "automd-analysis"
_DPI = 150
_GROUP_TITLES = {
    "averaged_ranks": "Averaged ranks\nas probabilities",
    "imbalance_without_recalibration": "Imbalance handling\nwithout recalibration",
    "other": "Other runs",
    "unannotated": "Not annotated",
}
_GROUP_COLORS = {
    "averaged_ranks": "#d95f02",
    "imbalance_without_recalibration": "#7570b3",
    "other": "#1b9e77",
    "unannotated": "#999999",
}
_RC = {"text.parse_math": False, "svg.hashsalt": SVG_HASHSALT, "svg.fonttype": "path"}


@contextmanager
def _style() -> Iterator[None]:
    with matplotlib.rc_context(_RC), sns.axes_style("whitegrid"):
        yield


def _figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


def _jitter(n: int, seed: int, width: float = 0.25) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-width, width, size=n)


def _fmt(value: float) -> str:
    return "n/a" if not np.isfinite(value) else f"{value:.3f}"


def _empty(fig: Figure, message: str) -> Figure:
    ax = fig.subplots()
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()
    return fig


def figure2a(decomposition: pd.DataFrame) -> Figure:
    """Figure 2a: each practice group's share of runs and of the ECE difference from baselines.

    Parameters
    ----------
    decomposition : DataFrame
        :func:`automd_analysis.analysis.calibration.ece_decomposition` (``group``, ``n_runs``,
        ``share_of_runs``, ``share_of_difference``, ``mean_ece``).
    """
    with _style():
        fig = _figure(7.0, 3.8)
        if decomposition.empty:
            return _empty(fig, "no valid runs")
        long = decomposition.melt(
            id_vars=["group"],
            value_vars=["share_of_runs", "share_of_difference"],
            var_name="measure",
            value_name="share",
        )
        long["share"] = 100 * long["share"].astype(float)
        titles = {
            row["group"]: f"{_GROUP_TITLES.get(row['group'], str(row['group']))}\n"
            f"n={int(row['n_runs'])}, mean ECE {_fmt(row['mean_ece'])}"
            for _, row in decomposition.iterrows()
        }
        long["group"] = long["group"].map(titles)
        long["measure"] = long["measure"].map(
            {"share_of_runs": "Share of runs", "share_of_difference": "Share of ECE difference"}
        )
        ax = fig.subplots()
        sns.barplot(
            data=long,
            x="group",
            y="share",
            hue="measure",
            errorbar=None,
            palette=["#bbbbbb", "#d95f02"],
            ax=ax,
        )
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xlabel("")
        ax.set_ylabel("% of valid runs / of total ECE difference")
        ax.legend(title=None, loc="best")
    return fig


def figure2b(effect: pd.DataFrame, *, seed: int = 0) -> Figure:
    """Figure 2b: ECE of runs that handle class imbalance, with vs without recalibration.

    Circles are runs (jittered with ``seed``), diamonds the group means.

    Parameters
    ----------
    effect : DataFrame
        :func:`automd_analysis.analysis.calibration.recalibration_effect` (``recalibrated``,
        ``ece``).
    """
    with _style():
        fig = _figure(4.5, 3.8)
        if effect.empty:
            return _empty(fig, "no runs handle class imbalance")
        ax = fig.subplots()
        labels = ["Without recalibration", "With recalibration"]
        for position, flag in enumerate((False, True)):
            values = effect.loc[effect["recalibrated"] == flag, "ece"].to_numpy(float)
            x = position + _jitter(len(values), seed + position)
            ax.scatter(x, values, s=24, facecolors="none", edgecolors="#444444", linewidths=0.8)
            if len(values):
                ax.scatter([position], [values.mean()], marker="D", s=70, color="#d95f02", zorder=3)
        ax.set_xticks([0, 1], labels)
        ax.set_xlim(-0.6, 1.6)
        ax.set_ylabel("ECE")
    return fig


def reliability_figure(bins: pd.DataFrame, *, columns: int = 3) -> Figure:
    """Reliability diagrams: observed vs mean predicted per bin, one panel per agent.

    Grey bars along the bottom show each bin's count (scaled to a quarter of the panel; the largest
    count is printed in the corner); the dashed diagonal is perfect calibration. Survival groups are
    drawn per time quantile (their counts are near-equal by construction).

    Parameters
    ----------
    bins : DataFrame
        :func:`automd_analysis.analysis.calibration.reliability_bins` output.
    """
    with _style():
        if bins.empty:
            return _empty(_figure(4.0, 3.0), "no calibration bins")
        agents = list(dict.fromkeys(bins["agent"]))
        ncols = max(1, min(columns, len(agents)))
        nrows = -(-len(agents) // ncols)
        fig = _figure(3.4 * ncols, 3.2 * nrows)
        axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
        for ax, agent in zip(axes, agents, strict=False):
            mine = bins.loc[bins["agent"] == agent]
            ax.plot([0, 1], [0, 1], linestyle="--", color="#999999", linewidth=0.8)
            binary = mine.loc[mine["quantile"].isna()]
            if len(binary):
                counts = binary["n"].to_numpy(float)
                top = counts.max() if counts.max() > 0 else 1.0
                centres = (binary["lo"].to_numpy(float) + binary["hi"].to_numpy(float)) / 2
                widths = binary["hi"].to_numpy(float) - binary["lo"].to_numpy(float)
                ax.bar(centres, 0.25 * counts / top, width=0.9 * widths, color="#cccccc")
                ax.text(
                    0.98,
                    0.02,
                    f"max n = {int(top)}",
                    ha="right",
                    va="bottom",
                    fontsize=7,
                    transform=ax.transAxes,
                )
            for quantile, part in mine.groupby(mine["quantile"].fillna(-1.0), sort=True):
                part = part.loc[part["n"] > 0]
                label = (
                    "bins"
                    if quantile < 0
                    else f"t at q={quantile:g} (n/group {int(part['n'].median())})"
                )
                ax.plot(
                    part["mean_pred"],
                    part["observed"],
                    marker="o",
                    markersize=3.5,
                    linewidth=0.9,
                    label=label,
                )
            ax.set_title(str(agent))
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1)
            ax.set_xlabel("Mean predicted")
            ax.set_ylabel("Observed")
            if mine["quantile"].notna().any():
                ax.legend(fontsize=7, loc="upper left")
        for ax in axes[len(agents) :]:
            ax.set_axis_off()
    return fig


def figure4(points: pd.DataFrame, baseline: pd.DataFrame | None = None, *, seed: int = 0) -> Figure:
    """Figure 4: AUROC and ECE of valid runs under each evaluation objective.

    Points are runs coloured by calibration-practice group (jittered with ``seed``), bars the
    objective means, dashed lines the simple baseline.

    Parameters
    ----------
    points : DataFrame
        :func:`automd_analysis.analysis.objectives.figure4_data`.
    baseline : DataFrame, optional
        :func:`automd_analysis.analysis.objectives.objective_baseline`.
    """
    with _style():
        fig = _figure(8.0, 3.8)
        if points.empty:
            return _empty(fig, "no valid runs")
        axes = fig.subplots(1, 2)
        order = list(dict.fromkeys(points["objective"]))
        for ax, metric, title in zip(axes, ("auroc", "ece"), ("AUROC", "ECE"), strict=True):
            means = points.groupby("objective", sort=False)[metric].mean().reindex(order)
            ax.bar(range(len(order)), means.to_numpy(float), color="#dddddd", width=0.6)
            for g_index, group in enumerate(_GROUP_COLORS):
                mine = points.loc[points["group"] == group]
                if mine.empty:
                    continue
                x = mine["objective"].map({o: i for i, o in enumerate(order)}).to_numpy(float)
                x = x + _jitter(len(mine), seed + g_index, 0.2)
                ax.scatter(
                    x,
                    mine[metric],
                    s=22,
                    color=_GROUP_COLORS[group],
                    label=_GROUP_TITLES[group].replace("\n", " "),
                    zorder=3,
                )
            if baseline is not None and len(baseline) and np.isfinite(baseline[metric].iloc[0]):
                ax.axhline(
                    float(baseline[metric].iloc[0]),
                    linestyle="--",
                    color="black",
                    label="Simple baseline",
                )
            ax.set_xticks(range(len(order)), [str(o) for o in order])
            ax.set_xlabel("Objective")
            ax.set_ylabel(title)
        axes[1].legend(fontsize=7, loc="upper right")
    return fig


def external_ratio_figure(table5: pd.DataFrame) -> Figure:
    """Ratio of external to internal normalised score per task and agent (Table 5 ratios).

    Parameters
    ----------
    table5 : DataFrame
        :func:`automd_analysis.analysis.shift.table5` (``agent``, ``task``, ``ratio``).
    """
    with _style():
        fig = _figure(7.0, 3.8)
        data = table5.loc[np.isfinite(table5["ratio"].astype(float))].copy()
        if data.empty:
            return _empty(fig, "no external-validation pairs")
        data["ratio_pct"] = 100 * data["ratio"].astype(float)
        data["agent"] = data["agent"].astype(str)
        ax = fig.subplots()
        sns.barplot(data=data, x="task", y="ratio_pct", hue="agent", errorbar=None, ax=ax)
        ax.axhline(100, color="black", linestyle="--", linewidth=0.8)
        ax.set_xlabel("External task")
        ax.set_ylabel("External / internal score (%)")
        ax.legend(title=None, fontsize=7)
    return fig


def subgroup_gap_figure(table14: pd.DataFrame) -> Figure:
    """Mean gap between the highest- and lowest-scoring subgroup per task group and attribute.

    Parameters
    ----------
    table14 : DataFrame
        :func:`automd_analysis.analysis.subgroups.table14`.
    """
    with _style():
        fig = _figure(7.0, 3.8)
        data = table14.loc[np.isfinite(table14["gap_mean"].astype(float))].copy()
        if data.empty:
            return _empty(fig, "no subgroup gaps")
        data["where"] = data["task_group"].astype(str) + " / " + data["attribute"].astype(str)
        data["agent"] = data["agent"].astype(str)
        ax = fig.subplots()
        sns.barplot(data=data, x="where", y="gap_mean", hue="agent", errorbar=None, ax=ax)
        ax.set_xlabel("")
        ax.set_ylabel("Highest - lowest subgroup score")
        ax.tick_params(axis="x", labelrotation=30)
        ax.legend(title=None, fontsize=7)
    return fig


def _write_bytes_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_figure(fig: Figure, name: str, out_dir: str | Path) -> dict[str, Path]:
    """Write ``<out_dir>/figures/<name>.png`` and ``.svg`` reproducibly.

    PNG: Agg at 150 dpi. SVG: glyphs as paths, ids salted with :data:`SVG_HASHSALT`, no ``Date``
    metadata. Files are written to a temporary name and renamed, so an interrupted save never
    leaves a truncated figure.

    Returns
    -------
    dict with keys ``png`` and ``svg`` -> written paths.

    Raises
    ------
    ValueError
        ``name`` is not a plain file stem.
    """
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\-]*", name):
        raise ValueError(f"figure name {name!r} must be a plain file stem")
    target = Path(out_dir) / "figures"
    paths = {"png": target / f"{name}.png", "svg": target / f"{name}.svg"}
    with matplotlib.rc_context(_RC):
        for fmt, metadata in (("png", {"Software": None}), ("svg", {"Date": None})):
            buffer = io.BytesIO()
            fig.savefig(buffer, format=fmt, dpi=_DPI, metadata=metadata)
            _write_bytes_atomic(paths[fmt], buffer.getvalue())
    return paths


def export_paper_figures(
    store,
    out_dir: str | Path,
    *,
    main_experiment: str = "main",
    objectives_experiment: str = "objectives",
    task_groups=None,
    seed: int = 0,
) -> dict[str, dict[str, Path] | str]:
    """Draw and save every figure of notebooks 02-05 from a score store in one call.

    Figures: ``fig2a_ece_decomposition``, ``fig2b_recalibration``, ``reliability_<task>`` (one per
    task with calibration bins), ``fig4_objectives``, ``external_ratios``, ``subgroup_gaps``. A
    figure whose inputs are absent (no objectives experiment, no baseline for the ECE
    decomposition) is skipped; the returned mapping gives its reason instead of paths.
    """
    from automd_analysis.analysis import calibration, objectives, shift, subgroups
    from automd_analysis.errors import ScoreStoreError

    main = {"experiment": main_experiment}
    obj = {"main_experiment": main_experiment, "objectives_experiment": objectives_experiment}
    jobs = [
        ("fig2a_ece_decomposition", lambda: figure2a(calibration.ece_decomposition(store, **main))),
        (
            "fig2b_recalibration",
            lambda: figure2b(calibration.recalibration_effect(store, **main), seed=seed),
        ),
        (
            "fig4_objectives",
            lambda: figure4(
                objectives.figure4_data(store, **obj),
                objectives.objective_baseline(store, **obj),
                seed=seed,
            ),
        ),
        ("external_ratios", lambda: external_ratio_figure(shift.table5(store, **main))),
        (
            "subgroup_gaps",
            lambda: subgroup_gap_figure(subgroups.table14(store, **main, task_groups=task_groups)),
        ),
    ]
    tasks = sorted(set(store.calibration_bins["task"]))
    for task in tasks:
        jobs.append(
            (
                f"reliability_{task}",
                lambda task=task: reliability_figure(
                    calibration.reliability_bins(store, task, **main)
                ),
            )
        )
    results: dict[str, dict[str, Path] | str] = {}
    for name, draw in jobs:
        try:
            fig = draw()
        except ScoreStoreError as exc:
            if exc.code in {"store.no_experiment", "store.no_baseline"}:
                results[name] = f"skipped: {exc}"
                continue
            raise
        results[name] = save_figure(fig, name, out_dir)
    return results
