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
[{"dataset_name", "final_value", "best_value"}]}]}``. A node's reported score is its *primary*
metric, the first it names, in that metric's own direction (the mean of its ``final_value`` over
datasets): the agent's own comparison averages every metric, whatever their directions, which
mixes a balanced error rate with losses. Selection: :func:`~.selection.latest_stage_best_node`
(``is_buggy`` only; seed re-runs are not ranked). The final file is ``submission.csv`` in SOURCE
(copy the worker's ``working/submission.csv`` there); its code is the node the rule picks when
files are ignored. Missing or unreadable sub-stage journals, and runs that stopped inside a
stage, make the run incomplete (:mod:`.aiscientist_stages`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from automd_analysis.importers._common import (
    ImportOptions,
    assemble,
    clean_text,
    config_llm_place,
    final_file,
    finite_or_none,
    first_line,
    require_task,
    resolve_llm,
    resolve_tokens,
)
from automd_analysis.importers._source import SourceDir
from automd_analysis.importers.aide import node_candidate, node_times
from automd_analysis.importers.aiscientist_stages import (
    STAGE_DIR,
    StageJournals,
    check_finished,
    find_stages,
    read_stage_journals,
)
from automd_analysis.importers.model import ImportedNode, ImportedRun, Metric
from automd_analysis.importers.predictions import bind_nodes
from automd_analysis.importers.problems import SourceError, problem
from automd_analysis.importers.selection import Candidate, StageCandidates, latest_stage_best_node

__all__ = ["STAGE_DIR", "parse_metric", "read_aiscientist_v2"]

FINAL_CANDIDATES = ("submission.csv", "working/submission.csv")


def parse_metric(metric: Any, problems: list, what: str, where: str) -> Metric:
    """An AI-Scientist-v2 node metric as :class:`~.model.Metric`: its primary (first) metric.

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
        For a structured metric: the mean of the first metric name's ``final_value`` over its
        datasets, ``maximize = not metric_names[0].lower_is_better`` and ``kind =
        "names:<first name>"`` (nodes whose primary metrics differ are incomparable). For a float
        value: that value, ``metric.maximize`` and ``kind = "scalar"``.

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
    ...     "best_value": 0.8}, {"dataset_name": "e", "final_value": 0.7, "best_value": 0.7}]},
    ...     {"metric_name": "val loss", "lower_is_better": True, "data": [
    ...     {"dataset_name": "d", "final_value": 0.4, "best_value": 0.4}]}]},
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
        primary = names[0]
        data = primary.get("data")
        finals = [d.get("final_value") for d in data if isinstance(d, dict)] if isinstance(
            data, list) else []  # fmt: skip
        nums = [finite_or_none(v, problems, what, where) for v in finals]
        nums = [v for v in nums if v is not None]
        lib = primary.get("lower_is_better")
        kind = "names:" + clean_text(str(primary.get("metric_name")), problems, "metric name",
                                     where)  # fmt: skip
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
    stages = find_stages(source, problems)
    if not stages:
        raise SourceError(
            "looked for sub-stage directories stage_<n>_<name>_<m>_<name>/ with a journal.json "
            "in SOURCE and found none",
            path=source.root,
            code="import.journal_missing",
            fix="SOURCE must be logs/0-run/ with its stage_* directories",
        )
    journals = read_stage_journals(source, stages, problems)
    stages = journals.stages
    if not journals.raw_by_id:
        raise SourceError(
            f"the {len(stages)} readable sub-stage journal(s) hold no nodes",
            path=source.root,
            code="import.empty_run",
            fix="the agent produced no node; there is nothing to import",
        )
    check_finished(journals, problems)
    nodes = _nodes(_in_creation_order(journals, stages), journals, problems)
    binding = bind_nodes(
        source, opts.predictions, [(n.node_id, n.log_step) for n in nodes], step_allowed=False
    )
    nodes = binding.attach(nodes)
    by_id = {n.node_id: n for n in nodes}
    stage_cands = _stage_candidates(stages, journals, by_id, problems)
    selection = latest_stage_best_node(stage_cands)
    started = min(node_times(n, "journal.json", [])[0] for n in journals.raw_by_id.values())
    ended = max(n.created_at for n in nodes)
    final_code, final_note = _final_code(stage_cands, by_id)
    where, looked_in = config_llm_place(source, journals.configs)
    llm = resolve_llm(opts.llm, [x for x in journals.llm_names if x], problems, where,
                      looked_in=looked_in)  # fmt: skip
    tokens = resolve_tokens(opts.tokens, None, problems, "the AI-Scientist-v2 tree search")
    run = assemble(
        fmt="aiscientist-v2",
        source=source,
        opts=opts,
        task=task,
        llm=llm,
        search="tree",
        nodes=nodes,
        selection=selection,
        binding=binding,
        final_rel=final_file(source, binding, selection, FINAL_CANDIDATES),
        times=(started, ended),
        tokens=tokens,
        raw_logs=journals.raw_logs,
        problems=problems,
        final_code=final_code,
        final_code_note=final_note,
    )
    run.log_folders.update(journals.log_folders)
    return [run]


def _final_code(stage_cands: list[StageCandidates], by_id: dict[str, ImportedNode]):
    """The code bound to the final file: the node the selection rule picks when every node is
    taken to have a file (the latest sub-stage's saved or metric-best node)."""
    every = [
        replace(st, candidates=tuple(replace(c, has_file=True) for c in st.candidates))
        for st in stage_cands
    ]
    picked = latest_stage_best_node(every).node_id
    if picked is None:
        return (), "no sub-stage has a non-buggy node to take the code from"
    return by_id[picked].code, (
        f"the code of node {picked}, which the latest_stage_best_node rule picks when "
        "prediction files are not considered"
    )


def _in_creation_order(
    journals: StageJournals, stages: list[tuple[str, tuple[int, int]]]
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


def _nodes(ordered: list[dict], journals: StageJournals, problems: list) -> list[ImportedNode]:
    """The nodes in creation order; a node that is not a development step (seed aggregation)
    takes the step number of the last step before it, so every version's step is in ``steps``."""
    out, ordinal = [], 0
    for n in ordered:
        is_step = n.get("is_seed_agg_node") is not True
        ordinal += is_step
        out.append(_imported_node(n, max(ordinal, 1), is_step, journals, problems))
    return out


def _imported_node(n: dict, ordinal: int, is_step: bool, journals: StageJournals,
                   problems: list) -> ImportedNode:  # fmt: skip
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
    code = [("experiment_code.py", clean_text(n.get("code"), problems, "node code", where))]
    if isinstance(n.get("plot_code"), str) and n["plot_code"]:
        code.append(("plotting_code.py", clean_text(n["plot_code"], problems, "node plot code",
                                                    where)))  # fmt: skip
    return ImportedNode(
        node_id=nid,
        ordinal=ordinal,
        log_step=n["step"],
        parent=parent,
        stage=journals.labels[journals.first_stage[nid]],
        buggy=n.get("is_buggy") is True,
        metric=parse_metric(n.get("metric"), problems, f"metric of node {nid}", where),
        created_at=node_times(n, where, problems)[1],
        code=tuple(code),
        description=first_line(clean_text(n.get("plan"), problems, "node plan", where)),
        is_step=is_step,
    )


def _stage_candidates(
    stages: list[tuple[str, tuple[int, int]]],
    journals: StageJournals,
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
                    f"{journals.labels[name]}/best_node_id.txt names {best}, which is not in the "
                    "stage's journal",
                    path=f"{name}/best_node_id.txt",
                )
            )
        elif best is not None and by_id[best].buggy:
            problems.append(
                problem(
                    "import.best_node_buggy",
                    f"{journals.labels[name]}: the saved best node {best} is marked buggy; the "
                    "metric rule decides",
                    path=f"{name}/best_node_id.txt",
                )
            )
        out.append(
            StageCandidates(journals.labels[name], order, best,
                            tuple(cand(i) for i in journals.stage_nodes[name]))
        )  # fmt: skip
    return out
