"""AI-Scientist-v2 sub-stage directories: which exist, what their journals hold, whether the run
finished.

``logs/0-run/stage_<main>_<main name>_<sub>_<sub name>/`` holds one sub-stage's ``journal.json``
(rewritten after every step), ``best_node_id.txt``, ``config.yaml`` and notes. A sub-stage whose
journal is missing or cannot be read (not JSON, a wrong shape, out of range, too large,
unreadable) is skipped and recorded, and the run is *incomplete* (``run.incomplete`` naming the
sub-stage). So is a run that stopped inside a stage: AgentManager runs the four main stages in
order and, when a main stage completes, adds seed re-runs of its best node and one
seed-aggregation node (``is_seed_agg_node``) to its last sub-stage; a run whose latest sub-stage
is not in main stage 4, or has no seed-aggregation node, did not finish.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from automd_analysis.importers._common import (
    check_node_id,
    copy_if_present,
    dig,
    read_yaml_config,
    symlinked_dir,
    too_many_nodes,
)
from automd_analysis.importers._source import SourceDir
from automd_analysis.importers.aide import parse_journal
from automd_analysis.importers.labels import display_label, safe_folder_names
from automd_analysis.importers.problems import SourceError, problem
from automd_analysis.importers.text import has_surrogates

__all__ = ["LAST_MAIN_STAGE", "STAGE_DIR", "StageJournals", "find_stages", "read_stage_journals"]

#: ``stage_<main>_<main name>_<sub>_<sub name>`` (AgentManager's sub-stage directories; the sub-stage
#: name is free text, any character).
STAGE_DIR = re.compile(r"^stage_(\d{1,6})_(.+?)_(\d{1,6})_(.+)\Z", re.DOTALL)
#: AgentManager's last main stage (``ablation_studies``).
LAST_MAIN_STAGE = 4
#: Folder levels below a sub-stage's first folder searched for its journal (a ``/`` in the name).
NESTED_LEVELS = 3
STAGE_LOG_FILES = ("journal.json", "config.yaml", "best_node_id.txt", "tree_data.json")
#: Reasons a stage journal is skipped rather than the run refused (hostile paths and ids stay
#: fatal).
UNREADABLE = frozenset(
    {"import.malformed", "import.unreadable", "import.not_a_file", "import.too_large",
     "import.out_of_range"}
)  # fmt: skip


def incomplete(problems: list, stage: str, why: str) -> None:
    """Record ``run.incomplete`` for ``stage`` (once per stage; ``details["stage"]`` is its
    label)."""
    label = display_label(stage)
    if not any(p.code == "run.incomplete" and p.details.get("stage") == label for p in problems):
        problems.append(
            problem(
                "run.incomplete",
                f"the run is incomplete: sub-stage {label} {why}",
                path=label,
                stage=label,
            )
        )


def find_stages(source: SourceDir, problems: list) -> list[tuple[str, tuple[int, int]]]:
    """The sub-stage directories with a journal, in (main, sub) order; one without a journal is
    recorded (``import.stage_journal_missing``, ``run.incomplete``) and left out.

    A sub-stage's name is free text (AI-Scientist-v2's LLM names sub-stages): it is read as it
    is, and a name with a ``/`` (which ``save_run`` turns into nested folders) is found below its
    first folder, up to :data:`NESTED_LEVELS` levels deep.
    """
    out = []
    for name, kind in source.listdir(""):
        m = STAGE_DIR.match(name)
        if not m:
            continue
        if kind == "link":
            raise symlinked_dir(name, "stage directory")
        if kind == "other" and has_surrogates(name):  # listed, but no path can name it
            problems.append(
                problem(
                    "import.stage_journal_invalid",
                    f"sub-stage folder {display_label(name)} has a name that is not valid "
                    "Unicode (not UTF-8); it cannot be read safely and is skipped",
                    fix="rename the folder (UTF-8) if its journal matters",
                )
            )
            incomplete(problems, name, "has a folder name that is not valid Unicode")
            continue
        if kind != "dir":
            continue
        order = (int(m.group(1)), int(m.group(3)))
        try:
            found = _stage_journal_dirs(source, name)
        except SourceError as exc:
            if exc.code != "import.unreadable":
                raise
            out.append((name, order))  # read_stage_journals records
            continue
        if not found:
            label = display_label(name)
            problems.append(
                problem(
                    "import.stage_journal_missing",
                    f"sub-stage {label} has no journal.json; its nodes are unknown and it is "
                    "skipped",
                    path=name,
                    fix="nothing to do: selection continues with the other sub-stages",
                )
            )
            incomplete(problems, name, "has no journal.json")
            continue
        out += [(rel, order) for rel in found]
    return sorted(out, key=lambda s: (s[1], s[0]))


def _stage_journal_dirs(source: SourceDir, name: str) -> list[str]:
    """``[name]`` when the folder holds ``journal.json``, else the folders below it (up to
    :data:`NESTED_LEVELS` levels, symlinks not followed) that do: a sub-stage name with ``/`` in
    it."""
    level, found = [name], []
    for depth in range(NESTED_LEVELS + 1):
        deeper = []
        for rel in level:
            if source.exists(f"{rel}/journal.json"):
                found.append(rel)
            elif depth < NESTED_LEVELS:
                deeper += [f"{rel}/{sub}" for sub, kind in source.listdir(rel) if kind == "dir"]
        if found or not deeper:
            return found
        level = deeper[: source.limits.max_entries]
    return found


@dataclass
class StageJournals:
    """What the readable sub-stage directories hold, gathered in stage order."""

    stages: list[tuple[str, tuple[int, int]]] = field(default_factory=list)  # readable ones
    raw_by_id: dict[str, dict] = field(default_factory=dict)  # first occurrence of each node id
    first_stage: dict[str, str] = field(default_factory=dict)  # node id -> its first sub-stage
    parent_of: dict[str, str] = field(default_factory=dict)
    stage_nodes: dict[str, list[str]] = field(default_factory=dict)  # sub-stage -> node ids
    best_ids: dict[str, str | None] = field(default_factory=dict)  # best_node_id.txt per stage
    raw_logs: dict[str, str] = field(default_factory=dict)
    llm_names: list = field(default_factory=list)
    configs: list[str] = field(default_factory=list)  # the config.yaml files looked in
    labels: dict[str, str] = field(default_factory=dict)  # sub-stage -> its printable label
    log_folders: dict[str, str] = field(default_factory=dict)  # renamed ones: sub-stage -> folder


def read_stage_journals(
    source: SourceDir, stages: list[tuple[str, tuple[int, int]]], problems: list
) -> StageJournals:
    """Read every sub-stage's journal, best node id, config and raw log files (nodes copied
    into a later sub-stage keep their first occurrence). A journal that cannot be read is
    recorded (``import.stage_journal_invalid``, ``run.incomplete``) and its sub-stage skipped;
    when none can be read, the first reason is raised."""
    out = StageJournals()
    failures: list[SourceError] = []
    total = 0
    log_dirs = safe_folder_names(name for name, _order in stages)
    for name, order in stages:
        where = f"{name}/journal.json"
        try:
            raw, n2p = parse_journal(
                source.read_json(where, what="AI-Scientist journal"), where, source.limits
            )
        except SourceError as exc:
            if exc.code not in UNREADABLE:
                raise
            failures.append(exc)
            problems.append(
                problem(
                    "import.stage_journal_invalid",
                    f"sub-stage {display_label(name)}: {exc.message} [{exc.code}]; it is skipped",
                    path=where,
                    location=exc.location,
                    fix="nothing to do unless you have an intact copy of the journal",
                )
            )
            why = (
                "has a journal that is cut short (it was being written when the run stopped or "
                "was copied)"
                if exc.details.get("cut_short")
                else f"has a journal that cannot be read ({exc.code})"
            )
            incomplete(problems, name, why)
            continue
        total += len(raw)
        if total > source.limits.max_nodes:
            raise too_many_nodes(total, source.limits.max_nodes, where)
        out.stages.append((name, order))
        out.labels[name] = display_label(name)
        if log_dirs[name] != name:
            out.log_folders[name] = log_dirs[name]
        out.stage_nodes[name] = [n["id"] for n in raw]
        for n in raw:
            if n["id"] not in out.raw_by_id:
                out.raw_by_id[n["id"]] = n
                out.first_stage[n["id"]] = name
        for child, parent in n2p.items():
            out.parent_of.setdefault(child, parent)
        out.best_ids[name] = _best_node_id(source, name, problems)
        config = read_yaml_config(source, f"{name}/config.yaml", problems)
        out.configs.append(f"{name}/config.yaml")
        out.llm_names.append(dig(config, "agent", "code", "model"))
        out.raw_logs.update(_stage_raw_logs(source, name, log_dirs[name]))
    if not out.stages and failures:
        raise failures[0]
    for fname, kind in source.listdir(""):
        if kind == "file" and fname.endswith("_summary.json"):
            out.raw_logs[fname] = fname
    return out


def check_finished(journals: StageJournals, problems: list) -> None:
    """Record ``run.incomplete`` when the latest readable sub-stage shows that the run stopped
    before AgentManager finished its last main stage. When a sub-stage at least as late was
    skipped (no journal, or one cut short), the run got that far: its own ``run.incomplete``
    says why, and nothing is claimed about where the run stopped."""
    if not journals.stages:
        return
    name, (main, sub) = journals.stages[-1]
    if any(order >= (main, sub) for order in _skipped_orders(problems)):
        return
    ids = journals.stage_nodes[name]
    has_agg = any(journals.raw_by_id[i].get("is_seed_agg_node") is True for i in ids)
    if main < LAST_MAIN_STAGE:
        incomplete(
            problems,
            name,
            f"is the latest one, in main stage {main} of {LAST_MAIN_STAGE}: the run stopped "
            "before its last main stage",
        )
    elif not has_agg:
        incomplete(
            problems,
            name,
            "has no seed-aggregation node (AI-Scientist-v2 adds one when a main stage "
            "completes): the run stopped inside it",
        )


def _skipped_orders(problems: list) -> list[tuple[int, int]]:
    """``(main, sub)`` of the sub-stages recorded as incomplete (skipped) so far."""
    out = []
    for p in problems:
        m = STAGE_DIR.match(str(p.details.get("stage", ""))) if p.code == "run.incomplete" else None
        if m:
            out.append((int(m.group(1)), int(m.group(3))))
    return out


def _stage_raw_logs(source: SourceDir, name: str, folder: str) -> dict[str, str]:
    """The log files of sub-stage ``name`` to copy into the archive (archive path below
    ``logs/`` -> SOURCE path); they go to ``folder``, the sub-stage's safe archive folder."""
    found = [f"{name}/{f}" for f in STAGE_LOG_FILES]
    for fname, kind in source.listdir(name):
        if kind == "file" and fname.startswith("best_solution_") and fname.endswith(".py"):
            found.append(f"{name}/{fname}")
    if source.is_dir(f"{name}/notes"):
        for fname, kind in source.listdir(f"{name}/notes"):
            if kind == "file" and fname.endswith(".json"):
                found.append(f"{name}/notes/{fname}")
    logs = copy_if_present(source, found)
    return {folder + dest[len(name) :]: rel for dest, rel in logs.items()}


def _best_node_id(source: SourceDir, stage: str, problems: list) -> str | None:
    rel = f"{stage}/best_node_id.txt"
    if not source.exists(rel):
        problems.append(
            problem(
                "import.best_node_missing",
                f"{display_label(stage)} has no best_node_id.txt; the metric rule decides",
                path=rel,
            )
        )
        return None
    text = source.read_text(rel, source.limits.text_bytes, what="best_node_id.txt").strip()
    return check_node_id(text, "best node id", rel)
