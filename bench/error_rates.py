"""Coverage and error rates of the report's statistics, measured by simulation through the public API.

Run ``python bench/error_rates.py --grid quick`` (minutes) or ``--grid full`` (hours, on demand);
``--point NAME`` runs one grid point. Prints a Markdown table (docs/statistics.md, "Error rates,
measured") and with ``--out FILE`` writes it as CSV.

What a study is. A grid point fixes the numbers of agents, tasks, repetitions and test units,
the invalid rate(s), the run-to-run heterogeneity, the task kinds (binary, survival, sequential)
and whether the agents differ. A *study* draws, for every task, one test set from the task's
model, and for every agent, task and repetition one run: the run's predictions for that test set
(its quality and calibration vary from run to run) and its validity (invalid with the agent's
rate). Each valid run is scored exactly as ``automd score`` scores a submission
(:func:`automd_analysis.scoring.replicates.run_replicates`: the normalised primary score, the ECE
and their replicates on the task's shared test resamples), the runs are put into a score store
(:meth:`ScoreStore.from_frames`), and the report's functions produce what the report publishes:
:func:`~automd_analysis.analysis.primary.agent_summary` (Table 2: penalised and non-penalised
means, their intervals, the mean-rank intervals and the best marks),
:func:`~automd_analysis.analysis.calibration_practices.ece_by_task_class` (Table 3: the
bias-corrected aggregate ECE and its interval) and
:func:`~automd_analysis.analysis.uncertainty.pairwise_comparisons` (intervals of the differences,
p-values, Holm).

The truth. A run's *population* value is its metric on the task's whole population (no test-set
noise): binary tasks in closed form (AUROC of the binormal model) and by numerical integration
(the binned ECE); survival and sequential tasks on one very large sample of the task's population
(50,000 patients; 20,000 patients of about 28 hours for sequential tasks). An agent's true value
on a task is the expectation of the run's population value over the run-to-run distribution
(Gauss-Hermite quadrature over the run's latent quality and calibration draws), and the paper's
aggregates of those are the targets: penalised mean (1/T) Σ_t (1 - π) E[s_t], non-penalised
mean (1/T) Σ_t E[s_t], aggregate ECE (1/T) Σ_t E[ECE_t], pairwise differences of those, and the
mean rank of the true per-task penalised values.

Counted per grid point over S studies (Monte Carlo SE sqrt(p (1 - p) / m) over the m intervals or
tests; intervals of one study are not independent, so the SE is a lower bound): coverage of each
interval, width, type-I error of the pairwise test (under a null point: every pair), family-wise
error rate of the Holm-adjusted tests, power (under an alternative point: pairs whose true
difference is non-zero), the rate of a single "best" mark under the null, coverage of the
mean-rank interval.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import itertools
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special, stats

from automd_analysis import metrics
from automd_analysis.analysis import calibration_practices, primary, uncertainty
from automd_analysis.analysis.store import ScoreStore
from automd_analysis.scoring.replicates import replicates_frame, run_replicates
from automd_analysis.submissions import AlignedPredictions
from automd_analysis.tasks import TaskLabels

#: Run-to-run variation of the latent quality (log-scale SD of the noise level).
HETEROGENEITY = {"low": 0.25, "high": 0.6}
#: Spread of a run's calibration (log slope and offset SD).
CALIBRATION_SPREAD = 0.15
#: Quadrature nodes per latent dimension (quality, slope, offset).
NODES = (5, 3, 3)


@dataclasses.dataclass(frozen=True)
class Point:
    """One grid point."""

    name: str
    agents: int = 4
    tasks: int = 5
    reps: int = 3
    n: int = 1000
    invalid: tuple[float, ...] = (0.1,)
    heterogeneity: str = "low"
    kinds: tuple[str, ...] = ("binary",)
    alternative: bool = False

    def invalid_rate(self, agent: int) -> float:
        return self.invalid[agent % len(self.invalid)]

    def kind(self, task: int) -> str:
        return self.kinds[task % len(self.kinds)]


# ---------------------------------------------------------------------------------------- models


@dataclasses.dataclass(frozen=True)
class Task:
    """One task's population model and the agents' run distributions on it."""

    kind: str
    index: int
    delta: float  # separation of the latent risk
    prevalence: float  # binary and sequential: outcome rate; survival: unused
    noise: np.ndarray  # per agent: median run noise level sigma
    slope: np.ndarray  # per agent: median log calibration slope
    offset: np.ndarray  # per agent: median calibration offset (logit / log-hazard)


def make_tasks(point: Point, seed: int) -> list[Task]:
    rng = np.random.default_rng([seed, 17])
    agent_skill = (
        np.linspace(-0.35, 0.35, point.agents) if point.alternative else np.zeros(point.agents)
    )
    agent_calibration = (
        np.linspace(-0.3, 0.3, point.agents) if point.alternative else np.zeros(point.agents)
    )
    tasks = []
    for t in range(point.tasks):
        base = rng.uniform(0.5, 1.2)
        tasks.append(
            Task(
                kind=point.kind(t),
                index=t,
                delta=rng.uniform(1.0, 2.0),
                prevalence=rng.uniform(0.15, 0.4),
                noise=base * np.exp(agent_skill),
                slope=rng.uniform(-0.2, 0.2) + agent_calibration,
                offset=np.full(point.agents, rng.uniform(-0.3, 0.3)),
            )
        )
    return tasks


def _quadrature():
    """Gauss-Hermite nodes (standard normal) and weights for the three latent draws of a run."""
    grids = [np.polynomial.hermite_e.hermegauss(k) for k in NODES]
    nodes = np.array(list(itertools.product(*[g[0] for g in grids])))
    weights = np.prod(list(itertools.product(*[g[1] for g in grids])), axis=1)
    return nodes, weights / weights.sum()


def run_parameters(task: Task, agent: int, xi: np.ndarray, het: float):
    """(noise sigma, calibration slope, offset) of a run with latent draws ``xi`` (3,)."""
    sigma = task.noise[agent] * math.exp(het * xi[0])
    slope = math.exp(task.slope[agent] + CALIBRATION_SPREAD * xi[1])
    offset = task.offset[agent] + CALIBRATION_SPREAD * xi[2]
    return sigma, slope, offset


# --- binary: z | y ~ N(delta y, 1); a run sees x = z + sigma e and predicts a recalibrated
# version of P(y | x)


def _binary_logit(task: Task, sigma: float, x):
    var = 1.0 + sigma**2
    beta = task.delta / var
    alpha = special.logit(task.prevalence) - task.delta**2 / (2 * var)
    return alpha + beta * x


def binary_probability(task, sigma, slope, offset, x):
    return special.expit(slope * _binary_logit(task, sigma, x) + offset)


def binary_population(task: Task, sigma: float, slope: float, offset: float) -> tuple[float, float]:
    """(normalised AUROC, 10-bin ECE) of a run on the task's population, by integration."""
    var = 1.0 + sigma**2
    auroc = stats.norm.cdf(task.delta / math.sqrt(2 * var))
    x = np.linspace(-9 * math.sqrt(var), task.delta + 9 * math.sqrt(var), 20001)
    dx = x[1] - x[0]
    f1 = task.prevalence * stats.norm.pdf(x, task.delta, math.sqrt(var))
    f0 = (1 - task.prevalence) * stats.norm.pdf(x, 0.0, math.sqrt(var))
    p = binary_probability(task, sigma, slope, offset, x)
    bins = np.minimum((p * 10).astype(int), 9)
    mass = np.bincount(bins, (f0 + f1) * dx, 10)
    pred = np.bincount(bins, p * (f0 + f1) * dx, 10)
    pos = np.bincount(bins, f1 * dx, 10)
    ece = float(np.abs(pred - pos).sum() / mass.sum())
    return (auroc - 0.5) / 0.5, ece


def binary_test_set(task: Task, n: int, rng):
    y = (rng.random(n) < task.prevalence).astype(np.int8)
    return {"y": y, "z": task.delta * y + rng.standard_normal(n)}


def binary_run(task, data, sigma, slope, offset, rng):
    x = data["z"] + sigma * rng.standard_normal(data["z"].size)
    return binary_probability(task, sigma, slope, offset, x)


# --- survival: T ~ Exp(lambda0 exp(b z)), z ~ N(0, 1), uniform censoring; a run predicts
# exponential curves from its noisy risk score

_LAMBDA0, _CENSOR = 0.1, 25.0
_GRID = np.linspace(1.0, 20.0, 20)


def survival_test_set(task: Task, n: int, rng):
    z = rng.standard_normal(n)
    event_time = rng.exponential(1.0 / (_LAMBDA0 * np.exp(task.delta * 0.6 * z)))
    censor = rng.uniform(0, _CENSOR, n)
    return {
        "z": z,
        "time": np.minimum(event_time, censor),
        "event": (event_time <= censor).astype(np.int8),
    }


def survival_run(task, data, sigma, slope, offset, rng):
    b = task.delta * 0.6
    x = data["z"] + sigma * rng.standard_normal(data["z"].size)
    shrink = b / (1 + sigma**2)  # the regression of z on x, times the hazard coefficient
    log_hazard = (
        math.log(_LAMBDA0) + slope * shrink * x + offset + 0.5 * b**2 * sigma**2 / (1 + sigma**2)
    )
    return np.exp(-np.exp(log_hazard)[:, None] * _GRID[None, :])


# --- sequential: patients of 8-48 hours, 20 % septic with an onset; hourly latent risk rises in
# the 6 hours before onset; a run predicts a probability and labels it at its threshold


def sequential_test_set(task: Task, n: int, rng):
    stays = rng.integers(8, 49, n)
    septic = rng.random(n) < 0.2 * task.prevalence / 0.275
    onset = np.where(septic, [rng.integers(6, s + 1) if s >= 6 else s for s in stays], 10_000)
    pid = np.repeat(np.arange(n), stays)
    hour = np.concatenate([np.arange(s) for s in stays])
    label = (hour >= onset[pid] - 6).astype(np.int8)
    frailty = rng.standard_normal(n) * 0.5
    z = frailty[pid] + task.delta * label + 0.7 * rng.standard_normal(pid.size)
    return {"pid": pid, "hour": hour, "y": label, "z": z}


def sequential_run(task, data, sigma, slope, offset, rng):
    sub = dataclasses.replace(task, prevalence=0.12)  # about the share of label-1 patient-hours
    x = data["z"] + sigma * rng.standard_normal(data["z"].size)
    return binary_probability(sub, math.hypot(sigma, 0.86), slope, offset, x)


# ------------------------------------------------------------------------------------ scoring


def _inputs(task: Task, data: dict, prediction):
    """(kind, metric, null score, TaskLabels, AlignedPredictions) as the scorer builds them."""
    if task.kind == "binary":
        ids = pd.DataFrame({"id": np.arange(data["y"].size).astype(str)})
        return (
            "classification",
            "auroc",
            0.5,
            TaskLabels(ids=ids, label=data["y"]),
            AlignedPredictions(probability=prediction),
        )
    if task.kind == "survival":
        ids = pd.DataFrame({"id": np.arange(data["time"].size).astype(str)})
        return (
            "survival",
            "ctd_adj_antolini",
            0.5,
            TaskLabels(ids=ids, duration=data["time"], event=data["event"], time_grid=_GRID),
            AlignedPredictions(surv=prediction, time_grid=_GRID),
        )
    ids = pd.DataFrame({"patient": data["pid"].astype(str), "hour": data["hour"]})
    return (
        "sequential",
        "utility_2019",
        0.0,
        TaskLabels(ids=ids, label=data["y"]),
        AlignedPredictions(probability=prediction, label=(prediction > 0.3).astype(np.int8)),
    )


_TEST_SET = {
    "binary": binary_test_set,
    "survival": survival_test_set,
    "sequential": sequential_test_set,
}
_RUN = {"binary": binary_run, "survival": survival_run, "sequential": sequential_run}


def population_values(
    task: Task, agent: int, xi, het: float, population: dict
) -> tuple[float, float]:
    """(normalised score, ECE) of a run with latent draws ``xi`` on the task's population."""
    sigma, slope, offset = run_parameters(task, agent, xi, het)
    if task.kind == "binary":
        return binary_population(task, sigma, slope, offset)
    rng = np.random.default_rng(12345)  # the same noise for every node: smooth in the parameters
    prediction = _RUN[task.kind](task, population, sigma, slope, offset, rng)
    kind, metric, null, labels, predicted = _inputs(task, population, prediction)
    record = metrics.BUILTIN_METRICS[metric]
    from automd_analysis.scoring.metrics_for import metric_inputs

    inputs = metric_inputs(kind, labels, predicted)
    raw = float(record.evaluate(inputs))
    ece = float(metrics.ECE_METRICS[kind].evaluate(inputs))
    return float(metrics.normalized_score(raw, null)), ece


@functools.cache
def truth(point: Point, seed: int) -> dict:
    """Per (agent, task): E over runs of the population score and ECE (quadrature)."""
    tasks = make_tasks(point, seed)
    het = HETEROGENEITY[point.heterogeneity]
    nodes, weights = _quadrature()
    out = {}
    for task in tasks:
        population = None
        if task.kind != "binary":
            size = 50_000 if task.kind == "survival" else 20_000
            population = _TEST_SET[task.kind](
                task, size, np.random.default_rng([seed, 99, task.index])
            )
        done = {}
        for agent in range(point.agents):
            key = (task.noise[agent], task.slope[agent], task.offset[agent])
            if key not in done:
                values = np.array(
                    [population_values(task, agent, xi, het, population) for xi in nodes]
                )
                done[key] = (float(weights @ values[:, 0]), float(weights @ values[:, 1]))
            out[(agent, task.index)] = done[key]
    return out


def _key(agent: str, task: str, rep: int) -> dict:
    return {
        "run_id": f"main/{agent}/{task}/rep{rep}",
        "experiment": "main",
        "agent": agent,
        "llm": "llm",
        "task": task,
        "rep": rep,
        "reference": False,
    }


_KIND = {"binary": "classification", "survival": "survival", "sequential": "sequential"}


def simulate_store(point: Point, study: int, seed: int, n_boot: int) -> ScoreStore:
    """One study's score store, with replicates, scored as ``automd score`` would."""
    tasks = make_tasks(point, seed)
    het = HETEROGENEITY[point.heterogeneity]
    rng = np.random.default_rng([seed, study])
    scores, runs, replicates = [], [], []
    for task in tasks:
        name = f"task{task.index}"
        data = _TEST_SET[task.kind](task, point.n, rng)
        weights = None
        for agent in range(point.agents):
            for rep in range(point.reps):
                key = _key(f"agent{agent}", name, rep)
                valid = bool(rng.random() >= point.invalid_rate(agent))
                score = ece = math.nan
                if valid:
                    sigma, slope, offset = run_parameters(task, agent, rng.standard_normal(3), het)
                    prediction = _RUN[task.kind](task, data, sigma, slope, offset, rng)
                    kind, metric, null, labels, predicted = _inputs(task, data, prediction)
                    if weights is None:
                        from automd_analysis.scoring.metrics_for import metric_inputs
                        from automd_analysis.scoring.replicates import task_resample_weights

                        units = metric_inputs(kind, labels, predicted).n_units
                        weights = task_resample_weights(name, units, n_boot, study)
                    result = run_replicates(
                        kind, metric, null, labels, predicted, task_id=name, n_boot=n_boot,
                        seed=study, weights=weights,
                    )  # fmt: skip
                    from automd_analysis.scoring.metrics_for import metric_record

                    record = metric_record(kind, metric, null, labels, predicted)
                    score, ece = record["score"], record["ece"]
                    replicates.append(replicates_frame(key["run_id"], result))
                scores.append(
                    key | {"version": "selected", "is_selected": True, "task_kind": _KIND[task.kind],
                           "validation": "internal", "shift": "none", "internal_counterpart": None,
                           "valid": valid, "reason_code": None if valid else "file.missing",
                           "raw": score, "score": score, "auroc": math.nan, "ece": ece,
                           "brier": math.nan}
                )  # fmt: skip
                runs.append(key | {"objective": None, "tokens_total": math.nan})
    return ScoreStore.from_frames(
        scores=pd.DataFrame(scores),
        runs=pd.DataFrame(runs).astype({"rep": "int64"}),
        replicates=pd.concat(replicates, ignore_index=True) if replicates else None,
    )


# --------------------------------------------------------------------------------- counting


def study_outcomes(point: Point, study: int, seed: int, n_boot: int, true: dict) -> dict:
    """Everything counted for one study (``true``: :func:`truth` of the point)."""
    store = simulate_store(point, study, seed, n_boot)
    agents = [f"agent{a}" for a in range(point.agents)]
    target = {
        a: {
            "penalized": np.mean(
                [(1 - point.invalid_rate(i)) * true[(i, t)][0] for t in range(point.tasks)]
            ),
            "nonpenalized": np.mean([true[(i, t)][0] for t in range(point.tasks)]),
            "ece": np.mean([true[(i, t)][1] for t in range(point.tasks)]),
        }
        for i, a in enumerate(agents)
    }
    per_task = np.array([[(1 - point.invalid_rate(i)) * true[(i, t)][0] for i in range(point.agents)]
                         for t in range(point.tasks)])  # fmt: skip
    true_rank = np.mean([stats.rankdata(-np.round(row, 12)) for row in per_task], axis=0)
    table2 = primary.agent_summary(store).set_index("agent")
    table3 = calibration_practices.ece_by_task_class(store).set_index("agent")
    pairs = uncertainty.pairwise_comparisons(store)
    out = {"cover": [], "pairs": [], "unique_best": None}
    for i, a in enumerate(agents):
        row2, row3 = table2.loc[a], table3.loc[a]
        for quantity, col, frame in (
            ("penalized mean", "penalized_mean", row2),
            ("non-penalised mean", "nonpenalized_mean", row2),
            ("bias-corrected ECE", "all_bc", row3),
        ):
            t = target[a][
                "penalized"
                if col == "penalized_mean"
                else "nonpenalized"
                if col == "nonpenalized_mean"
                else "ece"
            ]
            low, high = frame[f"{col}_ci_low"], frame[f"{col}_ci_high"]
            out["cover"].append((quantity, bool(low <= t <= high), float(high - low)))
        low, high = row2["rank_penalized_mean_ci_low"], row2["rank_penalized_mean_ci_high"]
        out["cover"].append(
            (
                "mean rank (penalised)",
                bool(low - 1e-9 <= true_rank[i] <= high + 1e-9),
                float(high - low),
            )
        )
    for _, row in pairs.iterrows():
        ia, ib = agents.index(row["agent_a"]), agents.index(row["agent_b"])
        key = "penalized" if row["measure"] == "score" else "ece"
        diff = target[agents[ia]][key] - target[agents[ib]][key]
        null = abs(diff) < 1e-12
        out["pairs"].append(
            (row["measure"], null, bool(row["ci_low"] <= diff <= row["ci_high"]),
             bool(row["p_value"] < 0.05), bool(row["p_holm"] < 0.05))
        )  # fmt: skip
    out["unique_best"] = int(table2["penalized_mean_best"].sum()) == 1
    return out


def run_point(point: Point, studies: int, seed: int, n_boot: int, jobs: int) -> list[dict]:
    """Rows of the results table for one grid point."""
    start = time.perf_counter()
    work = functools.partial(
        study_outcomes, point, seed=seed, n_boot=n_boot, true=truth(point, seed)
    )
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(work, range(studies), chunksize=4))
    else:
        results = [work(s) for s in range(studies)]
    seconds = time.perf_counter() - start
    rows = []
    cover = pd.DataFrame(
        [c for r in results for c in r["cover"]], columns=["quantity", "hit", "width"]
    )
    for quantity, part in cover.groupby("quantity", sort=False):
        rows.append(_row(point, quantity, "coverage", part["hit"], studies, part["width"].mean()))
    pairs = pd.DataFrame([p for r in results for p in r["pairs"]],
                         columns=["measure", "null", "covers", "reject", "reject_holm"])  # fmt: skip
    for measure, part in pairs.groupby("measure", sort=False):
        label = "score difference" if measure == "score" else "ECE difference"
        rows.append(_row(point, label, "coverage", part["covers"], studies))
        nulls, alts = part.loc[part["null"]], part.loc[~part["null"]]
        if len(nulls):
            rows.append(_row(point, label, "type-I error", nulls["reject"], studies))
        if len(alts):
            rows.append(_row(point, label, "power", alts["reject"], studies))
    if not point.alternative and len(set(point.invalid)) == 1:  # every pair a null pair
        by_study = [any(p[4] for p in r["pairs"] if p[0] == "score" and p[1]) for r in results]
        rows.append(
            _row(
                point, "score difference", "family-wise error (Holm)", pd.Series(by_study), studies
            )
        )
        rows.append(_row(point, "best mark", "single best under the null",
                         pd.Series([r["unique_best"] for r in results]), studies))  # fmt: skip
    for row in rows:
        row["seconds"] = round(seconds)
    return rows


def _row(point: Point, quantity: str, measure: str, hits: pd.Series, studies: int, width=math.nan):
    rate = float(hits.mean())
    return {
        "point": point.name,
        "quantity": quantity,
        "measure": measure,
        "rate": rate,
        "mc_se": math.sqrt(max(rate * (1 - rate), 1e-12) / len(hits)),
        "n": int(len(hits)),
        "studies": studies,
        "mean_width": width,
    }


# ------------------------------------------------------------------------------------- grids

#: The reviewer's setting (4 agents x 5 binary tasks x 3 repetitions, invalid rate 0.1) and
#: neighbours; minutes on 2 cores.
QUICK = (
    Point("reviewer", n=1000),
    Point("no invalid runs", invalid=(0.0,), n=1000),
    Point("invalid 0.25", invalid=(0.25,), n=1000),
    Point("agent-specific invalid", invalid=(0.0, 0.1, 0.25, 0.1), n=1000),
    Point("mixed kinds", kinds=("binary", "survival", "sequential"), n=500),
    Point("alternative", alternative=True, n=1000),
)


def full_grid() -> tuple[Point, ...]:
    """Every level of every factor, one factor at a time around the reviewer's setting (4 agents,
    5 binary tasks, 3 repetitions, 1,000 patients, invalid 0.1, low heterogeneity, null), plus
    corners that combine the hard levels: 2-6 agents; 5 and 15 tasks; 3 and 5 repetitions;
    100-2,000 test units; invalid 0, 0.1, 0.25 and agent-specific; low and high heterogeneity;
    binary, survival and sequential tasks; null and alternative. Hours on 2 cores."""
    base = Point("reviewer", n=1000)
    variations = [
        ("agents", [2, 6]),
        ("tasks", [15]),
        ("reps", [5]),
        ("n", [100, 500, 2000]),
        ("invalid", [(0.0,), (0.25,), (0.0, 0.1, 0.25, 0.1)]),
        ("heterogeneity", ["high"]),
        ("kinds", [("survival",), ("sequential",)]),
        ("alternative", [True]),
    ]
    points = [base]
    for field, levels in variations:
        for level in levels:
            shown = "/".join(map(str, level)) if isinstance(level, tuple) else level
            points.append(dataclasses.replace(base, name=f"{field} {shown}", **{field: level}))
    points += [
        Point("corner: 2 agents, 15 survival tasks, 5 reps, n 2000", agents=2, tasks=15, reps=5,
              n=2000, kinds=("survival",)),
        Point("corner: 6 agents, n 100, invalid 0.25, high heterogeneity, sequential", agents=6,
              n=100, invalid=(0.25,), heterogeneity="high", kinds=("sequential",)),
        Point("corner: agent-specific invalid, 15 mixed tasks, alternative", tasks=15,
              invalid=(0.0, 0.1, 0.25, 0.1), kinds=("binary", "survival", "sequential"),
              alternative=True),
    ]  # fmt: skip
    return tuple(points)


def markdown(rows: list[dict]) -> str:
    lines = [
        "| grid point | quantity | measure | rate | MC SE | n | studies | mean width |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        width = "" if math.isnan(r["mean_width"]) else f"{r['mean_width']:.3f}"
        lines.append(
            f"| {r['point']} | {r['quantity']} | {r['measure']} | {100 * r['rate']:.1f} % | "
            f"{100 * r['mc_se']:.1f} | {r['n']} | {r['studies']} | {width} |"
        )
    return "\n".join(lines)


#: Columns of the one-row-per-point summary: (heading, quantity, measure).
SUMMARY = (
    ("penalised mean", "penalized mean", "coverage"),
    ("non-penalised mean", "non-penalised mean", "coverage"),
    ("bias-corr. ECE", "bias-corrected ECE", "coverage"),
    ("score diff.", "score difference", "coverage"),
    ("score test type-I", "score difference", "type-I error"),
    ("score test power", "score difference", "power"),
    ("ECE diff.", "ECE difference", "coverage"),
    ("ECE test type-I", "ECE difference", "type-I error"),
    ("ECE test power", "ECE difference", "power"),
    ("family-wise (Holm)", "score difference", "family-wise error (Holm)"),
    ("single best (null)", "best mark", "single best under the null"),
    ("mean rank", "mean rank (penalised)", "coverage"),
)


def summary_markdown(rows: list[dict]) -> str:
    """One row per grid point: rate (MC SE) of each quantity and measure; blank where not measured."""
    found = {(r["point"], r["quantity"], r["measure"]): r for r in rows}
    points = list(dict.fromkeys(r["point"] for r in rows))
    lines = [
        "| grid point | " + " | ".join(h for h, _, _ in SUMMARY) + " |",
        "|---" * (len(SUMMARY) + 1) + "|",
    ]
    for point in points:
        cells = []
        for _, quantity, measure in SUMMARY:
            r = found.get((point, quantity, measure))
            cells.append("" if r is None else f"{100 * r['rate']:.1f} ({100 * r['mc_se']:.1f})")
        lines.append(f"| {point} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", choices=("quick", "full"), default="quick")
    parser.add_argument("--point", help="run only the grid point with this name")
    parser.add_argument("--studies", type=int, default=200)
    parser.add_argument("--boot", type=int, default=400, help="test resamples per run (R = B)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--summarise", type=Path, metavar="CSV",
        help="print the one-row-per-point table of an earlier --out CSV and exit",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.summarise:
        print(summary_markdown(pd.read_csv(args.summarise).to_dict("records")))
        return 0
    grid = QUICK if args.grid == "quick" else full_grid()
    if args.point:
        named = {p.name: p for p in (*full_grid(), *QUICK)}
        grid = tuple(p for name, p in named.items() if name == args.point)
        if not grid:
            parser.error(f"no grid point named {args.point!r}")
    rows = []
    for point in grid:
        found = run_point(point, args.studies, args.seed, args.boot, args.jobs)
        rows += found
        print(markdown(found), flush=True, file=sys.stderr)
        if args.out:
            pd.DataFrame(rows).to_csv(args.out, index=False)
    print(markdown(rows))
    print("\n" + summary_markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
