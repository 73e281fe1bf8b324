"""Coverage of the 95 % percentile bootstrap intervals for C^td, AUROC and ECE.

Run: ``python bench/bench_bootstrap_coverage.py [--sets 1000] [--boot 1000] [--quick]``. Prints a
Markdown table (copied into docs/statistics.md, section "Coverage").

For each metric a known generating model produces ``--sets`` independent test sets; on each, the
metric's bootstrap replicates (each metric called with ``weights=bootstrap_weights(...)``, ``--boot`` resamples,
seed = the set's number) give a 95 % percentile interval, and we count how often it contains the
*true* value: the metric on one very large sample from the same model (C^td, ECE), or its closed
form (AUROC: Φ(μ/√2) for the binormal model, also checked against a large sample). The Monte Carlo
standard error of a coverage near 95 % over S sets is sqrt(0.95 * 0.05 / S) (0.69 points at
S = 1,000).

Models (fixed here before any run, not tuned to the result):

- **C^td**: n = 1,000 patients, risk r ~ N(0, 1), event time ~ Exponential(mean 60 exp(-0.7 r)),
  censoring ~ Uniform(0, 150) (about 50 % events), predictions = the true survival curves
  exp(-t exp(0.7 r) / 60) on the App. A.1 grid of a 10,000-patient training sample (101 points).
  True value: C^td on 400,000 patients.
- **AUROC**: n = 2,000, prevalence 0.3, score ~ N(0, 1) for negatives and N(1, 1) for positives:
  AUROC = Φ(1/√2) = 0.7602.
- **ECE**: n = 2,000, predictions p ~ Beta(2, 5), outcome ~ Bernoulli(p^0.7) (predictions too low;
  population ECE about 0.09). True value: ECE on 20,000,000 draws. Also n = 10,000.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.special import ndtr

from automd_analysis.metrics import (
    auroc,
    bootstrap_weights,
    concordance_td,
    ece,
    percentile_interval,
    survival_time_grid,
)


def survival_sample(n: int, rng: np.random.Generator, grid: np.ndarray | None = None):
    risk = rng.normal(size=n)
    t_event = rng.exponential(60.0 * np.exp(-0.7 * risk))
    t_censor = rng.uniform(0.0, 150.0, n)
    durations = np.minimum(t_event, t_censor)
    events = (t_event <= t_censor).astype(np.int8)
    if grid is None:
        grid = survival_time_grid(durations, events)
    surv = np.exp(-np.outer(np.exp(0.7 * risk), grid) / 60.0)
    return durations, events, surv, grid


def binormal_sample(n: int, rng: np.random.Generator, mu: float = 1.0, prevalence: float = 0.3):
    y = (rng.random(n) < prevalence).astype(np.int8)
    return y, rng.normal(mu * y, 1.0)


def calibration_sample(n: int, rng: np.random.Generator):
    p = rng.beta(2.0, 5.0, n)
    y = (rng.random(n) < p**0.7).astype(np.int8)
    return y, p


def coverage(name, true_value, sample, replicates, sets, n_boot):
    hits, widths, t0 = 0, [], time.perf_counter()
    for k in range(sets):
        rng = np.random.default_rng([7, k])
        data = sample(rng)
        low, high = percentile_interval(replicates(data, n_boot, k), alpha=0.05)
        hits += low <= true_value <= high
        widths.append(high - low)
    cov = hits / sets
    se = math.sqrt(0.95 * 0.05 / sets)
    return (
        f"| {name} | {true_value:.4f} | {sets} | {n_boot} | {100 * cov:.1f} % | "
        f"{100 * se:.2f} | {float(np.mean(widths)):.4f} | {time.perf_counter() - t0:.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=1000)
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="50 sets, 200 resamples, small truth")
    args = parser.parse_args()
    sets, n_boot = (50, 200) if args.quick else (args.sets, args.boot)
    big = 20 if args.quick else 1

    rows = []
    # C^td
    _, _, _, grid = survival_sample(10_000, np.random.default_rng(1))
    truth = concordance_td(*survival_sample(400_000 // big, np.random.default_rng(2), grid))
    rows.append(
        coverage(
            "C^td adj. Antolini, n = 1,000, G = 101",
            truth,
            lambda rng: survival_sample(1_000, rng, grid),
            lambda d, b, k: concordance_td(*d, weights=bootstrap_weights(len(d[0]), b, seed=k)),
            sets,
            n_boot,
        )
    )
    # AUROC
    truth = float(ndtr(1.0 / math.sqrt(2.0)))
    large = auroc(*binormal_sample(2_000_000 // big, np.random.default_rng(3)))
    rows.append(
        coverage(
            f"AUROC, n = 2,000 (large sample: {large:.4f})",
            truth,
            lambda rng: binormal_sample(2_000, rng),
            lambda d, b, k: auroc(*d, weights=bootstrap_weights(len(d[0]), b, seed=k)),
            sets,
            n_boot,
        )
    )
    # ECE
    truth = ece(*calibration_sample(20_000_000 // big, np.random.default_rng(4)))
    for n in (2_000, 10_000):
        rows.append(
            coverage(
                f"ECE (10 bins), n = {n:,}",
                truth,
                lambda rng, n=n: calibration_sample(n, rng),
                lambda d, b, k: ece(*d, weights=bootstrap_weights(len(d[0]), b, seed=k)),
                sets,
                n_boot,
            )
        )
    print("| metric and test-set size | true value | sets | resamples | coverage | MC SE (points) "
          "| mean width | seconds |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
