"""Coverage of the bias-corrected binned ECE and its interval for the population binned ECE.

Run: ``python bench/bench_ece_bias_correction.py [--sets 1000] [--boot 1000] [--quick]``. Prints a
Markdown table (copied into docs/statistics.md, section "Bias-corrected ECE").

Model (the one of ``bench_bootstrap_coverage.py``, fixed there before any run): predictions
p ~ Beta(2, 5), outcome Y ~ Bernoulli(c(p)) with the calibration curve c(p) = p^0.7 (predictions
too low), and the nearly calibrated c(p) = p^0.9 (ECE of the size of the demo's survival ECE);
``--limits`` adds c(p) = p^0.97 and the perfectly calibrated c(p) = p (ECE_pop = 0, on the
boundary of the parameter space), which show where the method's coverage ends. The estimand is the *population binned ECE* with the estimator's 10 equal-width bins
B_k = [k/10, (k+1)/10) (the last closed):

    ECE_pop = Σ_k P(p ∈ B_k) · | E[p | p ∈ B_k] − E[c(p) | p ∈ B_k] |,

computed by numerical integration against the Beta(2, 5) density (no sampling). For each of
``--sets`` test sets of n patients (n = 500 and 5,000) the 10-bin ECE is computed with
``automd_analysis.metrics.ece`` and its ``--boot`` bootstrap replicates (patients resampled, one
weight matrix, seed = the set's number) give

- the plug-in θ̂ with its percentile interval [q(α/2), q(1 − α/2)] (what Table 3 showed),
- the bias-corrected θ_bc = 2θ̂ − mean(θ*) with the basic bootstrap interval
  [2θ̂ − q(1 − α/2), 2θ̂ − q(α/2)] (what the report showed before),
- θ_bc with the symmetric interval θ_bc ± (h + |b̂|/2), h = max(q(1 − α/2) − mean(θ*),
  mean(θ*) − q(α/2)), b̂ = mean(θ*) − θ̂ (what the report showed in round 3),
- θ_bc with the interval that brackets the bias, [min(θ̂, θ̂ − κ b̂) − h, max(θ̂, θ_bc) + h],
  κ = 1/(√2 − 1) (``stats.intervals.bias_corrected``, what the report shows now),

and we count how often each interval contains ECE_pop. Monte Carlo SE of a coverage near 95 % over
S sets: sqrt(0.95 · 0.05 / S) (0.69 points at S = 1,000).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import integrate, stats

from automd_analysis.metrics import bootstrap_weights, ece
from automd_analysis.stats.intervals import bias_corrected, percentile_interval

A, B, BINS = 2.0, 5.0, 10
#: Calibration curves c(p) = p^power: 0.7 (the coverage bench's model, ECE_pop 0.116) and 0.9
#: (nearly calibrated, ECE_pop 0.033, the size of the demo's survival ECE, where the bias matters).
POWERS = (0.7, 0.9)
#: ``--limits``: almost (0.97) and perfectly (1.0) calibrated predictions.
LIMIT_POWERS = (0.97, 1.0)

PLUG_IN = "plug-in, percentile interval"
BASIC = "bias-corrected, basic interval"
SYMMETRIC = "bias-corrected, symmetric interval (round 3)"
REPORTED = "bias-corrected, bias-bracketing interval (reported)"


def population_binned_ece(power: float) -> float:
    density = stats.beta(A, B).pdf
    total = 0.0
    for k in range(BINS):
        lo, hi = k / BINS, (k + 1) / BINS
        mass = integrate.quad(density, lo, hi)[0]
        mean_p = integrate.quad(lambda p: p * density(p), lo, hi)[0]
        mean_c = integrate.quad(lambda p: p**power * density(p), lo, hi)[0]
        total += abs(mean_p - mean_c)  # = mass * |E[p|B_k] - E[c(p)|B_k]|
        assert mass > 0
    return total


def sample(n: int, power: float, rng: np.random.Generator):
    p = rng.beta(A, B, n)
    y = (rng.random(n) < p**power).astype(np.int8)
    return y, p


def _symmetric(dist: np.ndarray) -> tuple[float, float]:
    """Round 3's interval: symmetric about the corrected value, half-width h + |b̂| / 2."""
    draws = dist[1:]
    mean = float(draws.mean())
    low, high = np.quantile(draws, [0.025, 0.975])
    half = max(high - mean, mean - low) + abs(mean - dist[0]) / 2
    corrected = 2 * dist[0] - mean
    return corrected - half, corrected + half


def run(n: int, power: float, sets: int, n_boot: int) -> list[str]:
    truth = population_binned_ece(power)
    hits = {PLUG_IN: 0, BASIC: 0, SYMMETRIC: 0, REPORTED: 0}
    widths = {k: [] for k in hits}
    bias, t0 = [], time.perf_counter()
    for k in range(sets):
        y, p = sample(n, power, np.random.default_rng([11, n, k]))
        dist = np.concatenate(
            [[ece(y, p, BINS)], ece(y, p, BINS, weights=bootstrap_weights(n, n_boot, seed=k))]
        )
        low, high = percentile_interval(dist)
        intervals = {
            PLUG_IN: (low, high),
            BASIC: (2 * dist[0] - high, 2 * dist[0] - low),
            SYMMETRIC: _symmetric(dist),
            REPORTED: bias_corrected(dist)[1:],
        }
        bias.append(dist[0] - truth)
        for name, (low, high) in intervals.items():
            hits[name] += low <= truth <= high
            widths[name].append(high - low)
    se = 100 * math.sqrt(0.95 * 0.05 / sets)
    seconds = time.perf_counter() - t0
    return [
        f"| p^{power} | {n:,} | {name} | {truth:.4f} | {float(np.mean(bias)):+.4f} | {sets} | {n_boot} | "
        f"{100 * hits[name] / sets:.1f} % | {se:.2f} | {float(np.mean(widths[name])):.4f} | "
        f"{seconds:.0f} |"
        for name in hits
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=1000)
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="100 sets, 200 resamples")
    parser.add_argument("--limits", action="store_true", help="also c(p) = p^0.97 and c(p) = p")
    parser.add_argument(
        "--only-limits", action="store_true", help="only c(p) = p^0.97 and c(p) = p"
    )  # fmt: skip
    args = parser.parse_args()
    sets, n_boot = (100, 200) if args.quick else (args.sets, args.boot)
    print("| curve | n | estimate and interval | ECE_pop | mean plug-in bias | sets | resamples | coverage "
          "| MC SE (points) | mean width | seconds |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    powers = POWERS + (LIMIT_POWERS if args.limits else ())
    for power in LIMIT_POWERS if args.only_limits else powers:
        for n in (100, 500, 5_000):
            print("\n".join(run(n, power, sets, n_boot)), flush=True)


if __name__ == "__main__":
    main()
