"""Scripted agent policies: how each simulated agent searches, keeps and selects.

Four policies, after the agents of paper §4.1 and App. C (Table 10 selection rules):

- ``autoresearch`` - linear, greedy keep-if-better hill-climber following the autoresearch
  protocol: a deliberately simple working baseline, then ONE change per step, KEEP only if the
  validation objective beats the best so far, otherwise REVERT; stops after a run of
  unsuccessful steps (so it usually ends well before the budget); the final ``submission.csv``
  is re-run from the best-validated version (most of the time). Selection: the final file.
- ``codex`` - linear coding agent with few, larger steps (one to three changes at once), keeping
  a step unless validation clearly drops; stops after a handful of steps. Selection: final file.
- ``aide`` - greedy tree search: three drafts, then repeatedly debug a crashed node or improve
  the best node by one change, until the budget is spent. Selection: best reported validation
  among non-faulty nodes with a prediction file.
- ``aiscientist`` - staged best-first tree search with four workers and four stages
  (initial implementation, tuning, research, ablation; time split 20:12:12:18, re-divided at each
  stage start). It does not run the format checker, so some of its submission writers are
  broken. Selection: latest stage first, that stage's best non-faulty node with its own file.

Every step really renders, executes and validates a script (:class:`AgentRun.run_step`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from automd_demo.harness import menus
from automd_demo.harness.clock import BUDGET_MINUTES, SimClock, step_minutes
from automd_demo.harness.configs import change_categories, config_hash
from automd_demo.harness.render import Script
from automd_demo.harness.script_runner import ExecResult
from automd_demo.harness.taskdata import TaskProfile
from automd_demo.harness.tokens import step_tokens

SEARCH = {"autoresearch": "linear", "codex": "linear", "aide": "tree", "aiscientist": "tree"}
SELECTION_RULE = {
    "autoresearch": "final_file",
    "codex": "final_file",
    "aide": "best_reported_val_non_faulty",
    "aiscientist": "latest_stage_best_node",
}
AGENTS = tuple(SEARCH)
STAGES = ("1-initial", "2-tuning", "3-research", "4-ablation")
STAGE_QUOTAS = (20, 12, 12, 18)
HEADER_LINES = 6


@dataclass
class Step:
    """One development step (a script run); ``ok`` steps wrote a prediction file (a version)."""

    step: int
    version: str
    ok: bool
    config: dict
    script: Script
    result: ExecResult
    description: str
    items: list[str]
    parent: str | None
    started_at: datetime
    created_at: datetime
    objective: float | None
    reported: float | None
    faulty: bool
    stage: str | None
    prompt_tokens: int
    completion_tokens: int
    decision: str = ""
    debug_depth: int = 0
    debugged: bool = False


@dataclass
class RunOutcome:
    steps: list[Step]
    selected: str | None
    ended_at: datetime
    notes: str = ""


@dataclass(frozen=True)
class Sizes:
    """Search effort of a build size.

    ``*_stretch`` multiply the simulated minutes of a tree agent's node (fewer nodes fit in the
    720-minute budget); ``*_max_nodes`` cap the nodes of a run; linear agents stop on their own
    (``patience`` unsuccessful steps in a row) or at ``linear_max_steps``; ``codex_steps`` is the
    range (inclusive) of Codex's improvement steps after its first model.
    """

    reps: int = 3
    aide_stretch: float = 4.0
    ais_stretch: float = 4.5
    ais_workers: int = 2
    aide_max_nodes: int = 10
    ais_max_nodes: int = 12
    linear_max_steps: int = 8
    patience: tuple[int, int] = (2, 4)
    hourly_factor: float = 0.5
    hourly_min_cap: int = 5
    codex_steps: tuple[int, int] = (2, 5)

    def cap(self, value: int, kind: str) -> int:
        """Step caps are scaled down on hourly (sequential) tasks, whose fits are the slowest:
        ``max(hourly_min_cap, round(value * hourly_factor))``."""
        if kind != "sequential":
            return value
        return max(self.hourly_min_cap, round(value * self.hourly_factor))


@dataclass
class AgentRun:
    """State of one run: the task, the simulated LLM menu, the clock and the recorded steps.

    ``execute(config, header, version) -> (Script, ExecResult)`` runs a script (memoised).
    """

    agent: str
    llm: str
    task: str
    profile: TaskProfile
    objective: str | None
    rng: np.random.Generator
    clock: SimClock
    execute: object
    sizes: Sizes
    steps: list[Step] = field(default_factory=list)
    memory_chars: int = 0
    tried: set[str] = field(default_factory=set)

    # ----------------------------------------------------------------------------------------
    def objective_of(self, validation: dict) -> tuple[float | None, float | None]:
        """(value to maximise, reported score on its own scale) from a script's printout."""
        if not validation:
            return None, None
        if self.objective == "brier":
            return -validation["brier"], validation["brier"]
        if self.objective == "auroc+ece":
            return validation["auroc"] - validation["ece"], validation["auroc"]
        key = {
            "auroc": "auroc",
            "min_se_ppv": "min_se_ppv",
            "ctd_adj_antolini": "c_index",
            "utility_2019": "utility",
        }[self.profile.metric]
        value = validation.get(key)
        if value is None or not math.isfinite(value):
            return None, None
        return value, value

    def weights(self, stage: str | None = None) -> dict[str, float]:
        return menus.weights_for(self.llm, self.agent, self.objective, stage)

    def propose_new(
        self, config: dict, weights: dict[str, float], n_changes: int = 1, attempts: int = 8
    ):
        """A proposal whose config has not been tried in this run (the agent remembers its
        journal / tree); None when nothing new comes up in ``attempts`` draws."""
        for _ in range(attempts):
            prop = menus.propose(config, self.profile, self.rng, weights, n_changes=n_changes)
            if prop is None:
                return None
            if config_hash(prop[0]) not in self.tried:
                return prop
        return None

    def header(self, step: int, version: str, text: str, stage: str | None) -> list[str]:
        lines = [
            f"Training script {version} (development step {step}) of a scripted demo agent.",
            "",
            f"Written by the automd demo harness: agent {self.agent}, simulated LLM {self.llm},",
            f"task {self.task}{', stage ' + stage if stage else ''}.",
            f"Change: {text}",
            "Run: python train.py <task_dir> [submission.csv] [test_features.csv]",
        ]
        return lines[:HEADER_LINES]

    def run_step(
        self,
        config: dict,
        text: str,
        items: list[str],
        *,
        parent: str | None,
        stage: str | None = None,
        start: datetime | None = None,
        stretch: float = 1.0,
    ) -> Step:
        number = len(self.steps) + 1
        version = f"v{number:04d}"
        script, result = self.execute(config, self.header(number, version, text, stage), version)
        started = start or self.clock.now
        minutes = step_minutes(
            self.agent, config, self.profile, self.rng, stretch=stretch, failed=not result.ok
        )
        prev = self.steps[-1].script.text if self.steps else ""
        changed = len(set(script.text.splitlines()) ^ set(prev.splitlines()))
        prompt, completion = step_tokens(
            self.agent,
            self.llm,
            script_chars=len(script.text),
            memory_chars=self.memory_chars,
            changed_lines=changed,
            rng=self.rng,
        )
        created = started + timedelta(seconds=round(minutes * 60))
        if start is None:
            self.clock.now = created
        objective, reported = self.objective_of(result.validation)
        ok = result.ok and objective is not None
        step = Step(
            step=number,
            version=version,
            ok=ok,
            config=config,
            script=script,
            result=result,
            description=text,
            items=items,
            parent=parent,
            started_at=started,
            created_at=created,
            objective=objective,
            reported=reported,
            faulty=not ok,
            stage=stage,
            prompt_tokens=prompt,
            completion_tokens=completion,
        )
        self.steps.append(step)
        self.tried.add(config_hash(config))
        self.memory_chars += 160
        return step

    def by_version(self, version: str | None) -> Step | None:
        for s in self.steps:
            if s.version == version:
                return s
        return None

    def debug_node(self, nodes: list[Step], p: float, **step_args) -> tuple[bool, Step | None]:
        """Tree agents' debugging move: with probability ``p``, debug the latest crashed node of
        ``nodes`` not yet debugged (at most 3 debug generations deep).

        Returns ``(attempted, node)``: ``attempted`` is False when no node was picked (no random
        draw is made without a candidate); ``node`` is None when the menu has no fix for the
        error. The fix runs as a child of the nearest ancestor that saved a file.
        """
        buggy = [n for n in nodes if not n.ok and not n.debugged and n.debug_depth < 3]
        if not (buggy and self.rng.random() < p):
            return False, None
        target = buggy[-1]
        target.debugged = True
        fix = menus.debug(target.config, self.profile, target.result.error)
        if fix is None:
            return True, None
        node = self.run_step(
            fix[0], fix[1], ["debug"], parent=self.saved_ancestor(target), **step_args
        )
        node.debug_depth = target.debug_depth + 1
        node.decision = f"debug of {target.version}"
        return True, node

    def saved_ancestor(self, step: Step | None) -> str | None:
        """Nearest ancestor (starting at ``step`` itself) that wrote a prediction file."""
        while step is not None:
            if step.ok:
                return step.version
            step = self.by_version(step.parent)
        return None


def _better(a: Step, b: Step | None) -> bool:
    return b is None or (a.objective is not None and a.objective > b.objective)


def _fmt(step: Step, best: Step | None = None) -> str:
    if not step.ok:
        return f"FAILED ({(step.result.error or 'no validation score').splitlines()[0]})"
    v = ", ".join(f"{k} {val:.4f}" for k, val in sorted(step.result.validation.items()))
    if best is not None and best is not step and best.objective is not None:
        return f"{v} (best so far: objective {best.objective:.4f})"
    return v


# --------------------------------------------------------------------------------------------
# linear agents
# --------------------------------------------------------------------------------------------


def _first_working(run: AgentRun, cfg: dict, text: str, parent=None) -> Step:
    """Run a draft; if it crashes, try the obvious fix (up to three times)."""
    step = run.run_step(cfg, text, ["draft"], parent=parent)
    step.decision = "DRAFT"
    tries = 0
    while not step.ok and tries < 3:
        fix = menus.debug(step.config, run.profile, step.result.error)
        if fix is None:
            fix = menus.draft(run.profile.kind, "boosting", run.profile)
        step = run.run_step(fix[0], fix[1], ["debug"], parent=parent)
        step.decision = "DEBUG"
        tries += 1
    return step


def autoresearch(run: AgentRun) -> RunOutcome:
    rng = run.rng
    cfg, text, _ = menus.draw_draft("autoresearch", run.profile, rng)
    best = _first_working(run, cfg, text)
    best.decision = "KEEP (working baseline)" if best.ok else "FAILED"
    patience = int(rng.integers(run.sizes.patience[0], run.sizes.patience[1] + 1))
    streak = 0
    while (
        best.ok
        and run.clock.elapsed < BUDGET_MINUTES
        and len(run.steps) < run.sizes.cap(run.sizes.linear_max_steps, run.profile.kind)
        and streak < patience
    ):
        prop = run.propose_new(best.config, run.weights())
        if prop is None:
            break
        cfg, items, texts = prop
        step = run.run_step(cfg, "; ".join(texts), items, parent=None)
        if not step.ok:
            step.decision = "CRASH -> REVERT"
            fix = menus.debug(step.config, run.profile, step.result.error)
            if fix is not None and len(run.steps) < run.sizes.cap(
                run.sizes.linear_max_steps, run.profile.kind
            ):
                step = run.run_step(fix[0], fix[1], items + ["debug"], parent=None)
        if step.ok and _better(step, best):
            step.decision = "KEEP"
            best, streak = step, 0
        elif step.ok:
            step.decision = "REVERT"
            streak += 1
        else:
            step.decision = "CRASH -> REVERT"
            streak += 1
    last = [s for s in run.steps if s.ok]
    notes = ""
    if last and last[-1] is not best and best.ok and rng.random() < 0.85:
        final = run.run_step(
            best.config, f"re-run the best-validated version ({best.version}) for submission.csv",
            ["rerun"], parent=None,
        )  # fmt: skip
        final.decision = "FINAL (re-run of best)"
    elif last and last[-1] is not best:
        notes = "submission.csv was left from the last (reverted) experiment"
    written = [s for s in run.steps if s.ok]
    return RunOutcome(
        steps=run.steps,
        selected=written[-1].version if written else None,
        ended_at=run.clock.now,
        notes=notes,
    )


def codex(run: AgentRun) -> RunOutcome:
    rng = run.rng
    cfg, text, _ = menus.draw_draft("codex", run.profile, rng)
    current = _first_working(run, cfg, text)
    current.decision = "KEEP" if current.ok else "FAILED"
    n_steps = int(rng.integers(run.sizes.codex_steps[0], run.sizes.codex_steps[1] + 1))
    for _ in range(n_steps):
        if not current.ok or run.clock.elapsed >= BUDGET_MINUTES:
            break
        if len(run.steps) >= run.sizes.cap(run.sizes.linear_max_steps, run.profile.kind):
            break
        prop = run.propose_new(current.config, run.weights(), n_changes=int(rng.integers(1, 4)))
        if prop is None:
            break
        cfg, items, texts = prop
        step = run.run_step(cfg, "; ".join(texts), items, parent=None)
        if not step.ok:
            fix = menus.debug(step.config, run.profile, step.result.error)
            step.decision = "CRASH"
            if fix is None:
                continue
            step = run.run_step(fix[0], fix[1], items + ["debug"], parent=None)
        if step.ok and step.objective >= current.objective - 0.002:
            step.decision = "KEEP"
            current = step
        elif step.ok:
            step.decision = "REVERT"
    written = [s for s in run.steps if s.ok]
    if written and written[-1] is not current and current.ok and rng.random() < 0.75:
        final = run.run_step(
            current.config, f"restore {current.version} and regenerate submission.csv",
            ["rerun"], parent=None,
        )  # fmt: skip
        final.decision = "FINAL"
        written.append(final)
    return RunOutcome(
        steps=run.steps, selected=written[-1].version if written else None, ended_at=run.clock.now
    )


# --------------------------------------------------------------------------------------------
# tree agents
# --------------------------------------------------------------------------------------------


def _best(nodes: list[Step]) -> Step | None:
    good = [n for n in nodes if n.ok and not n.faulty]
    if not good:
        return None
    return max(good, key=lambda n: (n.objective, -n.step))


def aide(run: AgentRun) -> RunOutcome:
    rng = run.rng
    stretch = run.sizes.aide_stretch
    used_styles: list[str] = []
    for _ in range(3):
        cfg, text, style = menus.draw_draft("aide", run.profile, rng, exclude=used_styles)
        used_styles.append(style)
        node = run.run_step(cfg, text, ["draft"], parent=None, stretch=stretch)
        node.decision = "draft"
    max_nodes = run.sizes.cap(run.sizes.aide_max_nodes, run.profile.kind)
    while run.clock.elapsed < BUDGET_MINUTES and len(run.steps) < max_nodes:
        attempted, _ = run.debug_node(run.steps, 0.5, stretch=stretch)
        if attempted:
            continue
        parent = _best(run.steps)
        if parent is None:
            cfg, text, style = menus.draw_draft("aide", run.profile, rng)
            node = run.run_step(cfg, text, ["draft"], parent=None, stretch=stretch)
            node.decision = "draft"
            continue
        prop = run.propose_new(parent.config, run.weights())
        if prop is None:
            break
        cfg, items, texts = prop
        node = run.run_step(cfg, "; ".join(texts), items, parent=parent.version, stretch=stretch)
        node.decision = f"improve {parent.version}"
    best = _best(run.steps)
    end = max(run.clock.now, run.clock.start + timedelta(minutes=BUDGET_MINUTES))
    return RunOutcome(steps=run.steps, selected=best.version if best else None, ended_at=end)


def aiscientist(run: AgentRun) -> RunOutcome:
    """Parallel workers, four stages; nodes of a stage expand that stage's best node.

    Stage time is split 20:12:12:18, re-divided among the remaining stages at each stage start;
    a stage waits for its running nodes, and every stage gets at least one node per worker.
    """
    rng = run.rng
    stretch = run.sizes.ais_stretch
    start = run.clock.start
    workers = [start] * run.sizes.ais_workers
    stage_best: dict[str, Step] = {}
    stage_start = start
    styles: list[str] = []
    for s_idx, stage in enumerate(STAGES):
        quotas = STAGE_QUOTAS[s_idx:]
        left = BUDGET_MINUTES - (stage_start - start).total_seconds() / 60.0
        stage_end = stage_start + timedelta(minutes=max(left, 0.0) * quotas[0] / sum(quotas))
        workers = [stage_start] * len(workers)
        seed_node = stage_best.get(STAGES[s_idx - 1]) if s_idx else None
        stage_nodes: list[Step] = []
        max_nodes = run.sizes.cap(run.sizes.ais_max_nodes, run.profile.kind)
        while len(run.steps) < max_nodes * (s_idx + 1) / len(STAGES) + len(workers):
            w = int(np.argmin(workers))
            t = workers[w]
            if t >= stage_end and len(stage_nodes) >= len(workers):
                break
            done = [n for n in stage_nodes if n.created_at <= t]
            parent = _best(done) or seed_node
            attempted, node = run.debug_node(done, 0.4, stage=stage, start=t, stretch=stretch)
            if attempted:
                if node is None:  # the menu has no fix for that error
                    continue
            elif parent is None:
                cfg, text, style = menus.draw_draft("aiscientist", run.profile, rng, styles)
                styles.append(style)
                node = run.run_step(
                    cfg, text, ["draft"], parent=None, stage=stage, start=t, stretch=stretch
                )
                node.decision = "draft"
            else:
                weights = run.weights(stage)
                prop = run.propose_new(parent.config, weights)
                if prop is None:
                    workers[w] = max(t, stage_end)
                    if all(x >= stage_end for x in workers):
                        break
                    continue
                cfg, items, texts = prop
                if items == ["output_refactor"]:
                    more = dict(weights, output_refactor=0.0)
                    extra = run.propose_new(cfg, more)
                    if extra is not None:
                        cfg, items, texts = extra[0], items + extra[1], texts + extra[2]
                node = run.run_step(
                    cfg, "; ".join(texts), items, parent=parent.version, stage=stage, start=t,
                    stretch=stretch,
                )  # fmt: skip
                node.decision = f"expand {parent.version}"
            workers[w] = node.created_at
            stage_nodes.append(node)
        best = _best(stage_nodes)
        if best is not None:
            stage_best[stage] = best
        elif seed_node is not None:
            stage_best[stage] = seed_node
        stage_start = max([stage_end, *workers])
    end = max([n.created_at for n in run.steps] + [start + timedelta(minutes=BUDGET_MINUTES)])
    run.clock.now = end
    selected = None
    for stage in reversed(STAGES):
        own = [n for n in run.steps if n.stage == stage]
        best = _best(own)
        if best is not None:
            selected = best.version
            break
    return RunOutcome(steps=run.steps, selected=selected, ended_at=end)


POLICIES = {"autoresearch": autoresearch, "codex": codex, "aide": aide, "aiscientist": aiscientist}


def pairs(run_steps: list[Step], search: str) -> list[tuple[Step, Step]]:
    """Version pairs the analysis forms (paper App. H).

    Linear agents: consecutive valid versions in time. Tree agents: each valid version with the
    latest earlier valid version from its nearest ancestor node that saved one. "Valid" = wrote
    a well-formed prediction file (the harness knows which writers it broke).
    """
    valid = [s for s in run_steps if s.ok and s.config["output_bug"] is None]
    valid.sort(key=lambda s: (s.created_at, s.version))
    if search == "linear":
        return list(zip(valid[:-1], valid[1:], strict=False))
    by_version = {s.version: s for s in run_steps}
    valid_set = {s.version for s in valid}
    out = []
    for s in valid:
        node = by_version.get(s.parent) if s.parent else None
        while node is not None and node.version not in valid_set:
            node = by_version.get(node.parent) if node.parent else None
        if node is not None:
            out.append((node, s))
    out.sort(key=lambda p: (p[1].created_at, p[1].version))
    return out


def pair_changes(earlier: Step, later: Step) -> list[str]:
    return change_categories(earlier.config, later.config)
