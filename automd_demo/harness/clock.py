"""Simulated, deterministic development clock of the scripted agents.

Nothing in the demo archive depends on how long the harness really takes: every timestamp comes
from this clock. A run starts at a fixed date (one day per repetition and experiment, staggered
by agent and task); each development step takes *simulated* minutes =
(thinking/editing minutes of the agent, drawn from a seeded log-normal) + (execution minutes from
a cost model of the config: fits x training rows x model size) x a size-dependent stretch. Tree
agents run until the 720-minute budget is spent; linear agents stop on their own.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import numpy as np

from automd_demo.harness.taskdata import TaskProfile

EPOCH = datetime(2026, 1, 5, 8, 0, 0, tzinfo=UTC)
BUDGET_MINUTES = 720.0

#: Median thinking/editing minutes per step (before the log-normal jitter).
THINK_MINUTES = {"autoresearch": 30.0, "codex": 34.0, "aide": 9.0, "aiscientist": 16.0}


def iso(moment: datetime) -> str:
    """ISO 8601 UTC with a ``Z`` suffix, whole seconds."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def stable_int(*parts: object) -> int:
    """A deterministic 63-bit integer from ``parts`` (for seeds and offsets)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def run_start(experiment: str, agent: str, task: str, rep: int) -> datetime:
    """When a run starts: day ``rep`` of its experiment's week, staggered within the day."""
    week = {"main": 0, "objectives": 1, "llm": 2}.get(experiment, 3)
    minutes = stable_int("start", experiment, agent, task, rep) % 600
    return EPOCH + timedelta(days=7 * week + rep, minutes=int(minutes))


def execution_units(cfg: dict, profile: TaskProfile) -> float:
    """Relative cost of running a config: fits x training rows (thousands) x model size."""
    v = cfg["validation"]
    splits = v["k"] if v["design"] == "kfold" else 1
    rows = profile.n_train / 1000.0
    total = 0.0
    for m in cfg["members"]:
        p = m["params"]
        fam = m["family"]
        seeds = cfg["seeds"] if fam in ("gbdt", "random_forest", "discrete_gbdt") else 1
        if fam == "gbdt":
            size = p["max_iter"] / 100.0
        elif fam == "discrete_gbdt":
            size = cfg["intervals"] / 3.0 * p["max_iter"] / 100.0
        elif fam == "random_forest":
            size = 1.5
        else:
            size = 0.4
        total += seeds * splits * rows * size
    return total


class SimClock:
    """A clock that only moves when told to."""

    def __init__(self, start: datetime):
        self.start = start
        self.now = start

    def advance(self, minutes: float) -> datetime:
        self.now = self.now + timedelta(seconds=round(minutes * 60))
        return self.now

    @property
    def elapsed(self) -> float:
        """Minutes since the start."""
        return (self.now - self.start).total_seconds() / 60.0


def step_minutes(
    agent: str,
    cfg: dict,
    profile: TaskProfile,
    rng: np.random.Generator,
    *,
    stretch: float = 1.0,
    failed: bool = False,
) -> float:
    """Simulated minutes of one development step (thinking + execution)."""
    think = THINK_MINUTES[agent] * float(np.exp(rng.normal(0.0, 0.35)))
    run = 0.45 * execution_units(cfg, profile)
    if failed:
        run *= 0.3  # the script died part-way
    return (think + run) * stretch
