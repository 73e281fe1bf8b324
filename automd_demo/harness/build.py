"""Build the scripted-agent demo archive (``automd demo archive``).

Plan (default size ``small``; see :data:`SIZES`):

- ``main`` - every agent x every demo task x 3 repetitions with the default simulated LLM, plus
  the simple baseline (agent ``baseline``, ``reference: true``) x 3 seeds per task;
- ``objectives`` - every agent x 3 repetitions on the AUROC task of the objectives study, once
  with the Brier objective (reps 0-2) and once with AUROC+ECE (reps 3-5; run.json ``objective``
  tells them apart) - the main experiment provides objective A (paper App. F.1);
- ``llm`` - Codex x every task x 3 repetitions with each non-default simulated LLM
  (``sim-llm-b``: reps 0-2, ``sim-llm-c``: reps 3-5; run.json ``llm`` tells them apart) - the
  main experiment provides the default LLM (paper App. J).

Runs are independent jobs on a process pool; each job's randomness comes from a seed derived
from (archive seed, experiment, agent, LLM, task, rep, objective), all timestamps from the
simulated clock, and fits are memoised by content, so the same command gives a byte-identical
archive whatever the number of workers. The archive is built in a temporary sibling directory and
renamed into place at the end; an existing archive is only replaced if it was built by this
command.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from automd_analysis._atomic import make_temp_dir
from automd_analysis._version import __version__
from automd_analysis.errors import ArchiveError
from automd_analysis.tasks import get_task
from automd_demo.harness import agents as agents_mod
from automd_demo.harness.agents import AGENTS, AgentRun, Sizes
from automd_demo.harness.annotate import annotations
from automd_demo.harness.clock import SimClock, run_start, stable_int
from automd_demo.harness.lab import Lab
from automd_demo.harness.menus import DEFAULT_LLM, LLMS
from automd_demo.harness.script_runner import Memo
from automd_demo.harness.taskdata import load_profile
from automd_demo.harness.writer import write_run

DEMO_TASKS = (
    "demo_support",
    "demo_rotterdam",
    "demo_flchain",
    "demo_flchain_later",
    "demo_support_death30",
    "demo_rhc_death30",
    "demo_sepsis",
    "demo_sepsis_newhosp",
    "demo_sepsis_local",
)
OBJECTIVE_TASK = "demo_support_death30"
OBJECTIVES = ("brier", "auroc+ece")
LLM_AGENT = "codex"
BUILT_BY = "automd demo archive"
DEFAULT_SEED = 42

#: Search effort per size: ``small`` (the default), ``medium``, ``large``; ``tiny`` is for smoke
#: tests (one repetition, a handful of steps).
SIZES: dict[str, Sizes] = {
    "tiny": Sizes(
        reps=1,
        aide_max_nodes=6,
        ais_max_nodes=8,
        linear_max_steps=5,
        patience=(1, 2),
        codex_steps=(2, 5),
    ),
    "small": Sizes(
        reps=3,
        aide_max_nodes=6,
        ais_max_nodes=6,
        linear_max_steps=5,
        patience=(1, 3),
        codex_steps=(1, 2),
        hourly_min_cap=3,
    ),
    "medium": Sizes(
        reps=3,
        aide_stretch=1.6,
        ais_stretch=2.4,
        ais_workers=4,
        aide_max_nodes=28,
        ais_max_nodes=44,
        linear_max_steps=14,
        patience=(3, 5),
        codex_steps=(2, 6),
    ),
    "large": Sizes(
        reps=5,
        aide_stretch=1.0,
        ais_stretch=1.5,
        ais_workers=4,
        aide_max_nodes=60,
        ais_max_nodes=90,
        linear_max_steps=20,
        patience=(3, 6),
        codex_steps=(3, 8),
    ),
}
BASELINE_REPS = 3


@dataclass(frozen=True)
class RunSpec:
    """One run to build."""

    experiment: str
    agent: str
    llm: str
    task: str
    rep: int
    objective: str | None = None

    @property
    def run_path(self) -> str:
        return f"{self.experiment}/{self.agent}/{self.task}/rep{self.rep}"


def plan(
    size: str = "small",
    *,
    tasks: tuple[str, ...] = DEMO_TASKS,
    agents: tuple[str, ...] = AGENTS,
    experiments: tuple[str, ...] = ("main", "objectives", "llm"),
    baseline: bool = True,
    reps: int | None = None,
) -> list[RunSpec]:
    """The runs of an archive (sorted by run path)."""
    n_reps = reps if reps is not None else SIZES[size].reps
    specs: list[RunSpec] = []
    if "main" in experiments:
        for agent in agents:
            for task in tasks:
                for rep in range(n_reps):
                    specs.append(RunSpec("main", agent, DEFAULT_LLM, task, rep))
        if baseline:
            for task in tasks:
                for rep in range(BASELINE_REPS):
                    specs.append(RunSpec("main", "baseline", "none", task, rep))
    if "objectives" in experiments and OBJECTIVE_TASK in tasks:
        for agent in agents:
            for k, objective in enumerate(OBJECTIVES):
                for rep in range(n_reps):
                    specs.append(
                        RunSpec("objectives", agent, DEFAULT_LLM, OBJECTIVE_TASK, k * n_reps + rep, objective)
                    )  # fmt: skip
    if "llm" in experiments and LLM_AGENT in agents:
        others = [llm for llm in LLMS if llm != DEFAULT_LLM]
        for k, llm in enumerate(others):
            for task in tasks:
                for rep in range(n_reps):
                    specs.append(RunSpec("llm", LLM_AGENT, llm, task, k * n_reps + rep))
    return sorted(specs, key=lambda s: s.run_path)


#: Measured mean CPU seconds per run of the demo archive of docs/decisions.md item 78 (small size,
#: bench/bench_demo_archive.py --json) by agent and task kind, used only to start the heaviest
#: jobs first.
_RUN_COST = {
    "baseline": {"classification": 1.05, "sequential": 4.47, "survival": 4.03},
    "aiscientist": {"classification": 0.96, "sequential": 1.56, "survival": 2.41},
    "codex": {"classification": 0.57, "sequential": 1.11, "survival": 1.10},
    "autoresearch": {"classification": 0.60, "sequential": 0.80, "survival": 1.10},
    "aide": {"classification": 0.30, "sequential": 0.15, "survival": 0.68},
}


def _cost(spec: RunSpec) -> float:
    """Rough relative cost, to start the longest jobs first."""
    kind = "sequential" if "sepsis" in spec.task else "survival"
    if spec.task.endswith("death30"):
        kind = "classification"
    return _RUN_COST.get(spec.agent, {}).get(kind, 2.0)


# --------------------------------------------------------------------------------------------
# one job
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobConfig:
    staging: str
    memo_dir: str | None
    data: str | None
    manifests: str | None
    size: str
    seed: int


def _worker_init() -> None:
    from threadpoolctl import threadpool_limits

    import automd_demo.harness.models  # noqa: F401  (load sklearn/lifelines first)
    from automd_demo.harness import binning_memo

    threadpool_limits(1)
    binning_memo.install()  # pure: the archive's bytes do not change


def realtime_violations(cfg: dict) -> list[str]:
    """Why a sequential config's prediction at hour t depends on rows after t (paper App. G).

    ``whole_stay_max``: a feature computed over each patient's whole stay; ``test_set_ranks``:
    member predictions rank-transformed over the whole test file, so every hour's value depends
    on all other rows (including later hours of the same patient).
    """
    out = []
    if cfg["features"]["whole_stay_max"]:
        out.append("whole_stay_max")
    if cfg["combine"] == "rank_mean":
        out.append("test_set_ranks")
    return out


def harness_facts(spec: RunSpec, outcome, profile) -> dict:
    """Harness-side ground truth that the codebook has no field for (``logs/harness.json``)."""
    selected = next((s for s in outcome.steps if s.version == outcome.selected), None)
    cfg = selected.config if selected is not None else None
    reasons = realtime_violations(cfg) if cfg is not None and profile.kind == "sequential" else []
    return {
        "schema": "automd-demo-harness/1",
        "objective": spec.objective,
        "selected_version": outcome.selected,
        "selected_output_bug": cfg["output_bug"] if cfg else None,
        "expected_valid": bool(cfg is not None and cfg["output_bug"] is None),
        "real_time_violation": bool(reasons),
        "real_time_violation_reasons": reasons,
        "versions_with_output_bugs": [
            s.version for s in outcome.steps if s.ok and s.config["output_bug"] is not None
        ],
        "failed_steps": [s.version for s in outcome.steps if not s.ok],
        "synthetic_agent": True,
    }


def run_job(spec: RunSpec, job: JobConfig) -> dict[str, Any]:
    """Build one run into the staging archive; return a small summary (with the CPU seconds it
    took - reported by the CLI/bench, never written into the archive)."""
    started = time.process_time()
    summary = _run_job(spec, job)
    summary["cpu_seconds"] = round(time.process_time() - started, 3)
    return summary


def _run_job(spec: RunSpec, job: JobConfig) -> dict[str, Any]:
    run_dir = Path(job.staging) / spec.run_path
    task = get_task(spec.task, job.data, job.manifests)
    if spec.agent == "baseline":
        from automd_demo.harness.baseline_runs import write_baseline_run

        info = write_baseline_run(task, spec.rep, run_dir, experiment=spec.experiment, demo=True)
        return {"run": spec.run_path, "agent": "baseline", **info}
    profile = load_profile(task)
    memo = Memo(job.memo_dir)
    lab = Lab(task, profile, memo)
    seed = stable_int(job.seed, spec.experiment, spec.agent, spec.llm, spec.task, spec.rep,
                      spec.objective)  # fmt: skip
    start = run_start(spec.experiment, spec.agent, spec.task, spec.rep)
    run = AgentRun(
        agent=spec.agent,
        llm=spec.llm,
        task=spec.task,
        profile=profile,
        objective=spec.objective,
        rng=np.random.default_rng(seed),
        clock=SimClock(start),
        execute=lab.execute,
        sizes=SIZES[job.size],
    )
    outcome = agents_mod.POLICIES[spec.agent](run)
    external_shift = profile.validation == "external" and profile.shift in ("cohort", "hospital")
    doc = annotations(
        outcome.steps,
        outcome.selected,
        agents_mod.SEARCH[spec.agent],
        kind=profile.kind,
        external_with_shift=external_shift,
        has_missing=profile.ehr,  # the codebook field applies to EHR tasks (paper.ehr)
    )
    facts = harness_facts(spec, outcome, profile)
    write_run(
        run_dir,
        experiment=spec.experiment,
        agent=spec.agent,
        llm=spec.llm,
        task=spec.task,
        rep=spec.rep,
        objective=spec.objective,
        outcome=outcome,
        started_at=start,
        profile=profile,
        annotations=doc,
        harness_facts=facts,
    )
    return {
        "run": spec.run_path,
        "agent": spec.agent,
        "steps": len(outcome.steps),
        "versions": sum(s.ok for s in outcome.steps),
        "expected_valid": facts["expected_valid"],
        "real_time_violation": facts["real_time_violation"],
        "memo_hits": memo.hits,
        "memo_misses": memo.misses,
    }


# --------------------------------------------------------------------------------------------
# the whole archive
# --------------------------------------------------------------------------------------------


def archive_yaml(name: str, size: str, seed: int, specs: list[RunSpec]) -> str:
    experiments = {
        "main": "Main experiment: every scripted agent x every demo task x repetitions, plus "
        f"the simple baseline x {BASELINE_REPS} seeds",
        "objectives": f"Evaluation-objective experiment on {OBJECTIVE_TASK}: Brier (reps "
        f"0-{SIZES[size].reps - 1}) and AUROC+ECE (the following reps); objective A = main",
        "llm": f"LLM comparison: {LLM_AGENT} with the non-default simulated LLMs (run.json llm); "
        "the default LLM's runs are the main experiment's",
    }
    present = sorted({s.experiment for s in specs})
    doc = {
        "schema_version": 1,
        "name": name,
        "description": "Demo archive: the agents aide, aiscientist, codex and autoresearch are "
        "scripted stand-ins that really fit models, not the real AIDE, AI-Scientist-v2, Codex "
        "or autoresearch; no LLM is involved (LLM names, tokens and timestamps are simulated; "
        "docs/demo_archive.md).",
        "experiments": {k: experiments[k] for k in present},
        "roles": {k: k for k in present if k in ("main", "objectives", "llm")},
        "provenance": {
            "built_by": BUILT_BY,
            "version": __version__,
            "seed": seed,
            "size": size,
            "runs": len(specs),
        },
    }
    return yaml.safe_dump(doc, sort_keys=True, allow_unicode=False, width=100)


def _check_replaceable(archive: Path) -> None:
    if not archive.exists():
        return
    meta = archive / "archive.yaml"
    try:
        doc = yaml.safe_load(meta.read_text())
        built_by = (doc or {}).get("provenance", {}).get("built_by")
    except (OSError, yaml.YAMLError, AttributeError):
        built_by = None
    if built_by != BUILT_BY:
        raise ArchiveError(
            "refusing to replace a directory that was not built by `automd demo archive`",
            path=archive,
            code="archive.exists",
            fix="choose another --archive directory or remove this one yourself",
        )


def job_groups(specs: list[RunSpec]) -> list[list[RunSpec]]:
    """Jobs for the worker pool: the repetitions of one (task, experiment, agent) run in one
    process, so its fit cache serves them all (the on-disk memo of whole scripts is shared by
    every process); heaviest jobs first, so the last jobs are short."""
    groups: dict[tuple[str, str, str], list[RunSpec]] = {}
    for spec in specs:
        groups.setdefault((spec.task, spec.experiment, spec.agent), []).append(spec)
    out = [sorted(g, key=lambda s: (-_cost(s), s.run_path)) for g in groups.values()]
    return sorted(out, key=lambda g: (-sum(map(_cost, g)), g[0].run_path))


def run_group(specs: list[RunSpec], job: JobConfig) -> list[dict[str, Any]]:
    return [run_job(spec, job) for spec in specs]


def build_archive(
    archive: str | Path,
    *,
    data: str | Path | None = None,
    manifests: str | Path | None = None,
    size: str = "small",
    jobs: int = 1,
    seed: int = DEFAULT_SEED,
    specs: list[RunSpec] | None = None,
    memo_dir: str | Path | None = None,
    progress: Callable[[dict], None] | None = None,
) -> dict[str, Any]:
    """Build the demo archive at ``archive`` (replacing a previous demo build atomically).

    Parameters
    ----------
    specs : list of RunSpec, optional
        A subset of :func:`plan` (tests build tiny archives this way).
    memo_dir : path, optional
        Keep the fit memo here (default: a temporary directory removed at the end).

    Returns
    -------
    dict
        ``runs`` (per-run summaries, sorted), ``archive`` (path), ``size``.
    """
    if size not in SIZES:
        raise ArchiveError(
            f"unknown size {size!r}", code="archive.size", fix=f"use one of {sorted(SIZES)}"
        )
    archive = Path(archive)
    _check_replaceable(archive)
    specs = sorted(specs if specs is not None else plan(size), key=lambda s: s.run_path)
    archive.parent.mkdir(parents=True, exist_ok=True)
    staging = make_temp_dir(archive.parent, prefix=f".{archive.name}.building-")
    own_memo = memo_dir is None
    memo = make_temp_dir(archive.parent, prefix=".harness-memo-") if own_memo else Path(memo_dir)
    job = JobConfig(
        staging=str(staging),
        memo_dir=str(memo),
        data=None if data is None else str(data),
        manifests=None if manifests is None else str(manifests),
        size=size,
        seed=seed,
    )
    results: list[dict] = []
    try:
        groups = job_groups(specs)
        if jobs <= 1:
            _worker_init()
            for group in groups:
                for summary in run_group(group, job):
                    results.append(summary)
                    if progress:
                        progress(summary)
        else:
            with ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init) as pool:
                futures = [pool.submit(run_group, group, job) for group in groups]
                for fut in as_completed(futures):
                    for summary in fut.result():
                        results.append(summary)
                        if progress:
                            progress(summary)
        (staging / "archive.yaml").write_text(archive_yaml(archive.name, size, seed, specs))
        if archive.exists():
            old = archive.with_name(f".{archive.name}.old-{os.getpid()}")
            os.replace(archive, old)
            os.replace(staging, archive)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(staging, archive)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
        if own_memo:
            with contextlib.suppress(OSError):
                shutil.rmtree(memo)
    results.sort(key=lambda r: r["run"])
    return {"archive": str(archive), "size": size, "runs": results}


def subset(specs: list[RunSpec], **filters) -> list[RunSpec]:
    """Filter specs by attribute values (each filter: a value or a collection of values)."""
    out = []
    for s in specs:
        d = asdict(s)
        if all(
            d[k] in (v if isinstance(v, list | tuple | set) else (v,)) for k, v in filters.items()
        ):
            out.append(s)
    return out


__all__ = [
    "BASELINE_REPS",
    "DEMO_TASKS",
    "SIZES",
    "RunSpec",
    "build_archive",
    "plan",
    "run_job",
    "subset",
]
