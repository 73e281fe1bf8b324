"""Write one scripted run into an archive, in the layout of docs/archive.md.

::

    <run>/run.json                      metadata, selection, simulated tokens, steps
    <run>/submission.csv                the selected version's file (absent: no selection)
    <run>/versions/<v>/submission.csv   every prediction file the run wrote
    <run>/versions/<v>/meta.json
    <run>/code/<v>/train.py             the exact script of each step (failed steps too)
    <run>/code/<v>/config.json          the config it was rendered from (for re-runs)
    <run>/journal.md                    one line per step: change, numbers, decision
    <run>/logs/<v>.log                  what the script printed (and its traceback if it failed)
    <run>/logs/harness.json             harness-side ground truth not in the codebook
    <run>/annotations.json              codebook answers + version pairs (ground truth)

Everything is written to a temporary sibling directory and renamed into place, so a run
directory is either complete or absent. JSON is written with sorted keys and ``\\n`` endings.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from automd_analysis._atomic import make_temp_dir
from automd_demo.harness.agents import SEARCH, SELECTION_RULE, RunOutcome, Step
from automd_demo.harness.clock import BUDGET_MINUTES, iso
from automd_demo.harness.render import config_json


def dump_json(payload: dict) -> str:
    return json.dumps(payload, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def _write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8", newline="\n")
    else:
        path.write_bytes(data)


def _round(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


def journal(steps: list[Step], *, agent: str, llm: str, task: str, rep: int, search: str) -> str:
    """``journal.md``: one line per development step."""
    lines = [
        f"# Journal - {agent} on {task}, repetition {rep} (simulated LLM {llm})",
        "",
        "Each line: step [script], what changed, the validation numbers, the decision.",
        "",
    ]
    for s in steps:
        if s.ok:
            numbers = ", ".join(f"{k} {v:.4f}" for k, v in sorted(s.result.validation.items()))
        else:
            numbers = f"FAILED: {(s.result.error or 'no validation score').splitlines()[0]}"
        where = f"code/{s.version}/train.py"
        node = ""
        if search == "tree":
            node = f" (parent {s.parent or '-'}{', stage ' + s.stage if s.stage else ''})"
        decision = s.decision or ("ok" if s.ok else "failed")
        lines.append(f"- step {s.step} [{where}]{node}: {s.description} | {numbers} | {decision}")
    return "\n".join(lines) + "\n"


def write_run(
    run_dir: Path,
    *,
    experiment: str,
    agent: str,
    llm: str,
    task: str,
    rep: int,
    objective: str | None,
    outcome: RunOutcome,
    started_at,
    profile,
    annotations: dict,
    harness_facts: dict,
) -> None:
    """Write the run atomically (temp dir + rename); an existing ``run_dir`` is replaced."""
    run_dir = Path(run_dir)
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = make_temp_dir(run_dir.parent, prefix=f".{run_dir.name}.tmp-")
    try:
        _fill(
            tmp,
            experiment=experiment,
            agent=agent,
            llm=llm,
            task=task,
            rep=rep,
            objective=objective,
            outcome=outcome,
            started_at=started_at,
            annotations=annotations,
            harness_facts=harness_facts,
            profile=profile,
        )
        if run_dir.exists():
            shutil.rmtree(run_dir)
        os.replace(tmp, run_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _fill(root: Path, *, experiment, agent, llm, task, rep, objective, outcome, started_at,
          annotations, harness_facts, profile) -> None:  # fmt: skip
    search = SEARCH[agent]
    steps = outcome.steps
    for s in steps:
        _write(root / "code" / s.version / "train.py", s.script.text)
        _write(
            root / "code" / s.version / "config.json",
            config_json(s.config, profile, {"version": s.version, "agent": agent}),
        )
        _write(root / "logs" / f"{s.version}.log", s.result.log.replace("\r", ""))
        if not s.ok:
            continue
        vdir = root / "versions" / s.version
        _write(vdir / "submission.csv", s.result.csv)
        meta = {
            "version": s.version,
            "created_at": iso(s.created_at),
            "step": s.step,
            "parent": s.parent if search == "tree" else None,
            "reported_val_score": _round(s.reported),
            "faulty": bool(s.faulty),
            "code_files": [f"code/{s.version}/train.py", f"code/{s.version}/config.json"],
            "tokens": s.prompt_tokens + s.completion_tokens,
            "stage": s.stage,
        }
        _write(vdir / "meta.json", dump_json(meta))
    selected = next((s for s in steps if s.version == outcome.selected), None)
    if selected is not None:
        _write(root / "submission.csv", selected.result.csv)
    prompt = sum(s.prompt_tokens for s in steps)
    completion = sum(s.completion_tokens for s in steps)
    run = {
        "schema_version": 1,
        "experiment": experiment,
        "agent": agent,
        "task": task,
        "rep": rep,
        "llm": llm,
        "reference": False,
        "search": search,
        "objective": objective,
        "started_at": iso(started_at),
        "ended_at": iso(outcome.ended_at),
        "budget_minutes": BUDGET_MINUTES,
        "tokens": {
            "prompt": prompt,
            "completion": completion,
            "total": prompt + completion,
            "simulated": True,
        },
        "selection": {"rule": SELECTION_RULE[agent], "selected_version": outcome.selected},
        "reported_val_score": _round(selected.reported) if selected is not None else None,
        "steps": [
            {
                "step": s.step,
                "ok": bool(s.ok),
                "reported_val_score": _round(s.reported),
                "created_at": iso(s.created_at),
                "version": s.version if s.ok else None,
            }
            for s in steps
        ],
        "notes": outcome.notes
        or "Scripted demo agent (automd demo harness); no LLM was used; tokens are simulated.",
    }
    _write(root / "run.json", dump_json(run))
    _write(root / "journal.md", journal(steps, agent=agent, llm=llm, task=task, rep=rep,
                                        search=search))  # fmt: skip
    _write(root / "annotations.json", dump_json(annotations))
    _write(root / "logs" / "harness.json", dump_json(harness_facts))
