"""AI-Scientist-v2 (SakanaAI/AI-Scientist-v2, BFTS) ``logs/0-run/`` → :class:`~.model.ImportedRun`.

SOURCE is ``<idea_dir>/logs/0-run/``. Every sub-stage has a directory
``stage_<main>_<main name>_<sub>_<sub name>/`` holding ``journal.json`` (AIDE's serialisation with
more node fields: ``plot_code``, ``is_buggy_plots``, ``is_seed_node``, ``is_seed_agg_node``,
``exp_results_dir``...), ``best_node_id.txt`` (chosen by an LLM over *all* nodes, buggy ones
included), ``config.yaml`` (OmegaConf dump with ``PosixPath`` tags) and ``checkpoint.pkl`` (never
loaded). Steps are 0-based *within a sub-stage*; the first node of a sub-stage is a copy of the
previous stage's best node with the same id, so nodes are de-duplicated by id (the first
occurrence is kept).

The metric is a float or ``{"metric_names": [{"metric_name", "lower_is_better", "data":
[{"dataset_name", "final_value", "best_value"}]}]}``; the agent compares the mean of all
``final_value`` in the direction of the first metric name. Selection:
:func:`~.selection.latest_stage_best_node` (``is_buggy`` only; seed re-runs are not ranked). The
final file is ``submission.csv`` in SOURCE (copy the worker's ``working/submission.csv`` there).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from automd_analysis.importers._common import (
    ImportOptions,
    assemble,
    check_node_id,
    copy_if_present,
    dig,
    final_default,
    finite_or_none,
    first_line,
    read_yaml_config,
    require_task,
    resolve_llm,
    resolve_tokens,
)
from automd_analysis.importers._source import SourceDir
from automd_analysis.importers.aide import node_candidate, parse_journal
from automd_analysis.importers.model import ImportedNode, ImportedRun, Metric, utc_from_epoch
from automd_analysis.importers.predictions import bind_nodes
from automd_analysis.importers.problems import SourceError, problem
from automd_analysis.importers.selection import Candidate, StageCandidates, latest_stage_best_node

__all__ = ["STAGE_DIR", "parse_metric", "read_aiscientist_v2"]

#: ``stage_<main>_<main name>_<sub>_<sub name>`` (AgentManager's sub-stage directories).
STAGE_DIR = re.compile(r"^stage_(\d+)_(.+?)_(\d+)_(.+)$")
STAGE_LOG_FILES = ("journal.json", "config.yaml", "best_node_id.txt", "tree_data.json")
FINAL_CANDIDATES = ("submission.csv", "working/submission.csv")


def parse_metric(metric: Any, problems: list, what: str, where: str) -> Metric:
    """An AI-Scientist-v2 node metric as :class:`~.model.Metric` (mean of ``final_value``).

    Parameters
    ----------
    metric : dict or None
        The node's ``metric`` object.
    problems : list
        Receives ``import.metric_not_finite``.
    what, where : str
        For messages.

    Returns
    -------
    Metric
        ``kind`` is ``"scalar"`` for a float value, else ``"names:<n1>,<n2>"``; ``maximize`` is
        ``not metric_names[0].lower_is_better`` (structured) or ``metric.maximize`` (float).

    See Also
    --------
    automd_analysis.importers.selection.rank_by_metric

    References
    ----------
    AI-Scientist-v2 ``ai_scientist/treesearch/utils/metric.py`` (``MetricValue.get_mean_value``,
    ``_should_maximize``).

    Examples
    --------
    >>> m = parse_metric({"value": {"metric_names": [{"metric_name": "val auc",
    ...     "lower_is_better": False, "data": [{"dataset_name": "d", "final_value": 0.8,
    ...     "best_value": 0.8}, {"dataset_name": "e", "final_value": 0.7, "best_value": 0.7}]}]},
    ...     "maximize": None}, [], "metric", "journal.json")
    >>> round(m.value, 6), m.maximize, m.kind
    (0.75, True, 'names:val auc')
    """
    if not isinstance(metric, dict):
        return Metric()
    value = metric.get("value")
    if isinstance(value, dict):
        names = value.get("metric_names")
        if not isinstance(names, list) or not names or not all(isinstance(n, dict) for n in names):
            return Metric()
        finals = []
        for n in names:
            for d in n.get("data") or []:
                if isinstance(d, dict):
                    finals.append(d.get("final_value"))
        nums = [finite_or_none(v, problems, what, where) for v in finals]
        nums = [v for v in nums if v is not None]
        lib = names[0].get("lower_is_better")
        kind = "names:" + ",".join(str(n.get("metric_name")) for n in names)
        return Metric(
            sum(nums) / len(nums) if nums and len(nums) == len(finals) else None,
            (not lib) if isinstance(lib, bool) else None,
            kind,
        )
    maximize = metric.get("maximize")
    return Metric(
        finite_or_none(value, problems, what, where),
        maximize if isinstance(maximize, bool) else None,
        "scalar",
    )


def _stages(source: SourceDir, problems: list) -> list[tuple[str, tuple[int, int]]]:
    out = []
    for name, kind in source.listdir(""):
        m = STAGE_DIR.match(name)
        if not m:
            continue
        if kind == "link":
            raise SourceError(
                f"stage directory {name!r} is a symlink",
                path=name,
                code="import.unsafe_path",
                fix="replace symlinks in SOURCE by copies",
            )
        if kind != "dir":
            continue
        check_node_id(name, "stage directory", name)
        order = (int(m.group(1)), int(m.group(3)))
        if not source.exists(f"{name}/journal.json"):
            problems.append(
                problem(
                    "import.stage_journal_missing",
                    f"sub-stage {name} has no journal.json; its nodes are unknown and it is skipped",
                    path=name,
                    fix="nothing to do: selection continues with the other sub-stages",
                )
            )
            continue
        out.append((name, order))
    return sorted(out, key=lambda s: (s[1], s[0]))


def read_aiscientist_v2(source: SourceDir, opts: ImportOptions) -> list[ImportedRun]:
    """Import an AI-Scientist-v2 ``logs/0-run/`` directory (one run).

    Parameters
    ----------
    source : SourceDir
    opts : ImportOptions
        ``--predictions`` must use ``{node_id}`` (steps restart in every sub-stage).

    Returns
    -------
    list of ImportedRun
        One tree run; nodes de-duplicated by id and ordered by ``ctime``; ``stage`` is the
        sub-stage directory; seed-aggregation nodes are kept out of ``steps``.

    Raises
    ------
    SourceError
        ``import.journal_missing`` (no sub-stage has a journal), ``import.malformed``,
        ``import.bad_node_id``, ``import.unsafe_path``, ``import.llm_unknown``...

    See Also
    --------
    automd_analysis.importers.selection.latest_stage_best_node

    References
    ----------
    AI-Scientist-v2 (SakanaAI, Apache-2.0): ``ai_scientist/treesearch/journal.py``,
    ``agent_manager.py``; Auto-MD-bench App. C.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> st = d / "stage_1_initial_implementation_1_preliminary"
    >>> st.mkdir()
    >>> node = {"code": "x", "plan": "p", "step": 0, "id": "n1", "ctime": 1.7e9,
    ...         "exec_time": 1.0, "is_buggy": False, "metric": {"value": 0.5, "maximize": True}}
    >>> _ = (st / "journal.json").write_text(json.dumps({"nodes": [node], "node2parent": {},
    ...                                                   "__version": "2"}))
    >>> (run,) = read_aiscientist_v2(SourceDir(d), ImportOptions(agent="ais", task="t", llm="m"))
    >>> [n.stage for n in run.nodes]
    ['stage_1_initial_implementation_1_preliminary']
    """
    task = require_task(opts)
    problems: list = []
    stages = _stages(source, problems)
    if not stages:
        raise SourceError(
            "no sub-stage directory with a journal.json",
            path=".",
            code="import.journal_missing",
            fix="SOURCE must be logs/0-run/ with its stage_* directories",
        )
    journals = _read_stage_journals(source, stages, problems)
    if not journals.raw_by_id:
        raise SourceError(
            "the sub-stage journals hold no nodes",
            path=".",
            code="import.empty_run",
            fix="the agent produced no node; there is nothing to import",
        )
    ordered = _in_creation_order(journals, stages)
    nodes = [_imported_node(n, i, journals, problems) for i, n in enumerate(ordered, start=1)]
    binding = bind_nodes(
        source, opts.predictions, [(n.node_id, n.log_step) for n in nodes], step_allowed=False
    )
    nodes = [
        replace(n, prediction=binding.files[n.node_id]) if n.node_id in binding.files else n
        for n in nodes
    ]
    stage_cands = _stage_candidates(stages, journals, {n.node_id: n for n in nodes}, problems)
    selection = latest_stage_best_node(stage_cands)
    final_rel = (
        final_default(source, binding, FINAL_CANDIDATES)
        if selection.use_final_file
        else binding.final
    )
    started = min(utc_from_epoch(float(n["ctime"])) for n in ordered)
    ended = max(n.created_at for n in nodes)
    llm = resolve_llm(opts.llm, [x for x in journals.llm_names if x], problems, stages[-1][0])
    tokens = resolve_tokens(opts.tokens, None, problems, "the AI-Scientist-v2 tree search")
    return [
        assemble(
            fmt="aiscientist-v2",
            source=source,
            opts=opts,
            task=task,
            rep=opts.rep,
            llm=llm,
            search="tree",
            nodes=nodes,
            selection=selection,
            binding=binding,
            final_rel=final_rel,
            started_at=started,
            ended_at=ended,
            tokens=tokens,
            raw_logs=journals.raw_logs,
            problems=problems,
            final_created_at=ended,
        )
    ]


@dataclass
class _StageJournals:
    """What the sub-stage directories hold, gathered in stage order."""

    raw_by_id: dict[str, dict] = field(default_factory=dict)  # first occurrence of each node id
    first_stage: dict[str, str] = field(default_factory=dict)  # node id -> its first sub-stage
    parent_of: dict[str, str] = field(default_factory=dict)
    stage_nodes: dict[str, list[str]] = field(default_factory=dict)  # sub-stage -> node ids
    best_ids: dict[str, str | None] = field(default_factory=dict)  # best_node_id.txt per stage
    raw_logs: dict[str, str] = field(default_factory=dict)
    llm_names: list = field(default_factory=list)


def _read_stage_journals(
    source: SourceDir, stages: list[tuple[str, tuple[int, int]]], problems: list
) -> _StageJournals:
    """Read every sub-stage's journal, best node id, config and raw log files (nodes copied
    into a later sub-stage keep their first occurrence)."""
    out = _StageJournals()
    for name, _order in stages:
        where = f"{name}/journal.json"
        raw, n2p = parse_journal(source.read_json(where, what="AI-Scientist journal"), where)
        out.stage_nodes[name] = [n["id"] for n in raw]
        for n in raw:
            if n["id"] not in out.raw_by_id:
                out.raw_by_id[n["id"]] = n
                out.first_stage[n["id"]] = name
        for child, parent in n2p.items():
            out.parent_of.setdefault(child, parent)
        out.best_ids[name] = _best_node_id(source, name, problems)
        config = read_yaml_config(source, f"{name}/config.yaml", problems)
        out.llm_names.append(dig(config, "agent", "code", "model"))
        out.raw_logs.update(_stage_raw_logs(source, name))
    for fname, kind in source.listdir(""):
        if kind == "file" and fname.endswith("_summary.json"):
            out.raw_logs[fname] = fname
    return out


def _stage_raw_logs(source: SourceDir, name: str) -> dict[str, str]:
    """The log files of one sub-stage to copy into the archive (archive path -> source path)."""
    logs = copy_if_present(source, [f"{name}/{f}" for f in STAGE_LOG_FILES])
    for fname, kind in source.listdir(name):
        if kind == "file" and fname.startswith("best_solution_") and fname.endswith(".py"):
            logs[f"{name}/{fname}"] = f"{name}/{fname}"
    if source.is_dir(f"{name}/notes"):
        for fname, kind in source.listdir(f"{name}/notes"):
            if kind == "file" and fname.endswith(".json"):
                logs[f"{name}/notes/{fname}"] = f"{name}/notes/{fname}"
    return logs


def _in_creation_order(
    journals: _StageJournals, stages: list[tuple[str, tuple[int, int]]]
) -> list[dict]:
    """The distinct raw nodes by ``ctime``, then sub-stage, step and id."""
    stage_order = {name: i for i, (name, _o) in enumerate(stages)}
    return sorted(
        journals.raw_by_id.values(),
        key=lambda n: (
            float(n["ctime"]),
            stage_order[journals.first_stage[n["id"]]],
            n["step"],
            n["id"],
        ),
    )


def _imported_node(n: dict, ordinal: int, journals: _StageJournals, problems: list) -> ImportedNode:
    """One raw journal node as :class:`~.model.ImportedNode` (an unknown parent is dropped and
    recorded)."""
    nid = n["id"]
    where = f"{journals.first_stage[nid]}/journal.json"
    parent = journals.parent_of.get(nid)
    if parent is not None and parent not in journals.raw_by_id:
        problems.append(
            problem(
                "import.parent_unknown",
                f"node {nid} names parent {parent}, which is in no sub-stage journal",
                path=where,
            )
        )
        parent = None
    code = [("experiment_code.py", n.get("code") or "")]
    if isinstance(n.get("plot_code"), str) and n["plot_code"]:
        code.append(("plotting_code.py", n["plot_code"]))
    return ImportedNode(
        node_id=nid,
        ordinal=ordinal,
        log_step=n["step"],
        parent=parent,
        stage=journals.first_stage[nid],
        buggy=n.get("is_buggy") is True,
        metric=parse_metric(n.get("metric"), problems, f"metric of node {nid}", where),
        created_at=utc_from_epoch(float(n["ctime"]) + float(n.get("exec_time") or 0)),
        code=tuple(code),
        description=first_line(n.get("plan")),
        is_step=n.get("is_seed_agg_node") is not True,
    )


def _stage_candidates(
    stages: list[tuple[str, tuple[int, int]]],
    journals: _StageJournals,
    by_id: dict[str, ImportedNode],
    problems: list,
) -> list[StageCandidates]:
    """Each sub-stage's nodes as selection candidates with its saved best node (a saved best
    node missing from the stage or marked buggy is recorded)."""

    def cand(nid: str) -> Candidate:
        raw = journals.raw_by_id[nid]
        seed = raw.get("is_seed_node") is True or raw.get("is_seed_agg_node") is True
        return node_candidate(by_id[nid], rankable=not seed)

    out = []
    for name, order in stages:
        best = journals.best_ids[name]
        if best is not None and best not in journals.stage_nodes[name]:
            problems.append(
                problem(
                    "import.best_node_missing",
                    f"{name}/best_node_id.txt names {best}, which is not in the stage's journal",
                    path=f"{name}/best_node_id.txt",
                )
            )
        elif best is not None and by_id[best].buggy:
            problems.append(
                problem(
                    "import.best_node_buggy",
                    f"{name}: the saved best node {best} is marked buggy; the metric rule decides",
                    path=f"{name}/best_node_id.txt",
                )
            )
        out.append(
            StageCandidates(name, order, best, tuple(cand(i) for i in journals.stage_nodes[name]))
        )
    return out


def _best_node_id(source: SourceDir, stage: str, problems: list) -> str | None:
    rel = f"{stage}/best_node_id.txt"
    if not source.exists(rel):
        problems.append(
            problem(
                "import.best_node_missing",
                f"{stage} has no best_node_id.txt; the metric rule decides",
                path=rel,
            )
        )
        return None
    text = source.read_text(rel, source.limits.text_bytes, what="best_node_id.txt").strip()
    return check_node_id(text, "best node id", rel)
