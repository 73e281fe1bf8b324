"""Which resampling scheme: the fast model that chose the resampler of docs/statistics.md section 3.

Run ``python bench/error_rates_methods.py [--studies 300]`` (a few minutes). Prints, per setting and
scheme, the coverage of the penalised and non-penalised mean intervals and of the pairwise
difference's interval (Markdown; docs/statistics.md section 11, "How the scheme was chosen").

The model is a stand-in for whole studies, fast enough to compare schemes: 4 agents x T tasks x K
repetitions; a run's value is its cell's true mean (task level uniform on [0.3, 0.8]) plus run-to-run
noise (SD 0.08, log-normal heterogeneity across cells with ``het``), a test-set effect shared by
all runs of a task (SD 0.02) and the run's own test noise (SD 0.01); R replicates add a shared
resample effect and the run's own resample noise of the same sizes; each run is invalid with
its agent's rate. The estimands are those of ``bench/error_rates.py`` (penalised mean
(1/T) Σ_t (1 - π) μ_t, non-penalised (1/T) Σ_t μ_t and their pairwise differences). The schemes
differ only in how validity and runs are redrawn:

- ``two-stage``: the earlier bootstrap - each cell's K runs redrawn with replacement, each drawn
  run read on resample b;
- ``plug-in validity``: validity redrawn per slot with the agent's observed invalid rate (pooled
  over tasks), residuals widened as in the report;
- ``Jeffreys per slot``: the rate drawn from its Jeffreys posterior, then validity per slot
  (counts the binomial variance twice);
- ``report``: :func:`automd_analysis.stats.resample.resample`, the scheme the report uses.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from automd_analysis.stats.intervals import estimate
from automd_analysis.stats.resample import resample
from automd_analysis.stats.rules import (
    nanmean,
    over_repetitions,
    penalized,
    per_cell,
    per_repetition,
    row_groups,
    valid_only,
)


def study(rng, agents=4, tasks=5, reps=3, invalid=(0.1,), het=0.0, r=400):
    level = rng.uniform(0.3, 0.8, tasks)
    rate = np.resize(np.asarray(invalid, float), agents)
    sd = 0.08 * np.exp(het * rng.standard_normal((agents, tasks)))
    value = level[None, :, None] + sd[:, :, None] * rng.standard_normal((agents, tasks, reps))
    valid = rng.random((agents, tasks, reps)) >= rate[:, None, None]
    observed = value + 0.02 * rng.standard_normal(tasks)[None, :, None]
    observed += 0.01 * rng.standard_normal(observed.shape)
    shared = 0.02 * rng.standard_normal((tasks, r))
    replicates = observed[..., None] + shared[None, :, None, :]
    replicates += 0.01 * rng.standard_normal(replicates.shape)
    truth = ((1 - rate)[:, None] * level[None, :]).mean(axis=1), np.full(agents, level.mean())
    return observed, replicates, valid, truth


def _units(valid):
    a, t, k = valid.shape
    rows = [(f"a{i}", f"t{j}", q, bool(valid[i, j, q])) for i in range(a) for j in range(t)
            for q in range(k)]  # fmt: skip
    return pd.DataFrame(rows, columns=["agent", "task", "rep", "valid"])


def draws_report(observed, replicates, valid, rng):
    units = _units(valid)
    d = resample(units, ("agent", "task"), n_boot=replicates.shape[-1],
                 seed=int(rng.integers(2**31)), tag="methods")  # fmt: skip
    values = d.values(observed.reshape(-1), replicates.reshape(-1, replicates.shape[-1]))
    return units, d.valid, values


def draws_two_stage(observed, replicates, valid, rng):
    a, t, k, r = replicates.shape
    pick = rng.integers(0, k, (a, t, k, r))
    v = np.take_along_axis(np.broadcast_to(valid[..., None], replicates.shape), pick, 2)
    x = np.take_along_axis(replicates, pick, 2)
    units = _units(valid)
    both = np.concatenate([observed.reshape(-1, 1), x.reshape(-1, r)], axis=1)
    ok = np.concatenate([valid.reshape(-1, 1), v.reshape(-1, r)], axis=1)
    return units, ok, both


def _slot_validity(valid, rng, r, jeffreys):
    a = valid.shape[0]
    n = valid[0].size
    out = np.empty(valid.shape + (r,), bool)
    for i in range(a):
        n_inv = int((~valid[i]).sum())
        rate = (rng.beta(n_inv + 0.5, n - n_inv + 0.5, r) if jeffreys
                else np.full(r, n_inv / n))  # fmt: skip
        out[i] = rng.random(valid[i].shape + (r,)) >= rate
    return out


def _draws_slots(observed, replicates, valid, rng, jeffreys):
    units, _, values = draws_report(observed, replicates, np.ones_like(valid), rng)
    slots = _slot_validity(valid, rng, replicates.shape[-1], jeffreys).reshape(len(units), -1)
    ok = np.concatenate([valid.reshape(-1, 1), slots], axis=1)
    values = values.copy()
    values[:, 0] = observed.reshape(-1)
    return units, ok, values


SCHEMES = {
    "two-stage": draws_two_stage,
    "plug-in validity": lambda *a: _draws_slots(*a, jeffreys=False),
    "Jeffreys per slot": lambda *a: _draws_slots(*a, jeffreys=True),
    "report": draws_report,
}


def coverage(scheme, studies: int, seed: int, **setting) -> dict:
    rng = np.random.default_rng(seed)
    hits = {"penalised": [], "non-penalised": [], "difference": []}
    for _ in range(studies):
        observed, replicates, valid, (t_pen, t_non) = study(rng, **setting)
        units, ok, values = SCHEMES[scheme](observed, replicates, valid, rng)
        reps = units["rep"].to_numpy()
        pen, non = penalized(values, ok), valid_only(values, ok)
        cells = row_groups(units, ["agent", "task"])
        dist = {}
        for i, agent in enumerate(sorted(set(units["agent"]), key=lambda s: int(s[1:]))):
            mine = np.flatnonzero(units["agent"].to_numpy() == agent)
            dist[i] = over_repetitions(per_repetition(reps, pen, mine))
            groups = [g for key, g in cells.items() if key[0] == agent]
            low, high = estimate(dist[i])[1:]
            hits["penalised"].append(low <= t_pen[i] <= high)
            low, high = estimate(nanmean(per_cell(non, groups), axis=0))[1:]
            hits["non-penalised"].append(low <= t_non[i] <= high)
        for i in dist:
            for j in dist:
                if i < j:
                    low, high = estimate(dist[i] - dist[j])[1:]
                    hits["difference"].append(low <= t_pen[i] - t_pen[j] <= high)
    return {k: float(np.mean(v)) for k, v in hits.items()}


SETTINGS = {
    "invalid 0": {"invalid": (0.0,)},
    "invalid 0.1": {"invalid": (0.1,)},
    "invalid 0.25": {"invalid": (0.25,)},
    "agent-specific": {"invalid": (0.0, 0.1, 0.25, 0.1)},
    "15 tasks": {"invalid": (0.1,), "tasks": 15},
    "heterogeneous runs": {"invalid": (0.1,), "het": 0.7},
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print("| setting | scheme | penalised mean | non-penalised mean | difference |")
    print("|---|---|---|---|---|")
    for name, setting in SETTINGS.items():
        for scheme in SCHEMES:
            c = coverage(scheme, args.studies, args.seed, **setting)
            print(f"| {name} | {scheme} | {100 * c['penalised']:.1f} % | "
                  f"{100 * c['non-penalised']:.1f} % | {100 * c['difference']:.1f} % |",
                  flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
