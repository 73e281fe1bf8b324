"""AIDE (WecoAI/aideml v0.2.2) log directory → :class:`~.model.ImportedRun`.

SOURCE is the run's log directory ``logs/<n>-<name>/``. ``journal.json`` (written by AIDE's
``serialize.dump_json``) is ``{"nodes": [...], "node2parent": {child: parent}, "__version":
"2"}``; every node has ``code, plan, step`` (0-based), ``id, ctime`` (epoch seconds),
``parent: null, children: [], _term_out, exec_time, exc_type, exc_info, exc_stack, analysis,
metric {value, maximize}, is_buggy``. Stages are derived as AIDE does: ``draft`` (no parent),
``debug`` (buggy parent), ``improve``. AIDE logs no tokens and no prediction file per node.

Selection: :func:`~.selection.best_reported_val_non_faulty`. The final file is the first of
``submission.csv``, ``working/submission.csv``, ``best_submission/submission.csv`` in SOURCE (stock
AIDE writes ``workspaces/<run>/working/submission.csv`` outside the log directory: copy it in).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from automd_analysis.archive.safe import MAX_INT
from automd_analysis.importers._common import (
    ImportOptions,
    assemble,
    bounded_seconds,
    check_node_id,
    clean_text,
    config_llm_place,
    copy_if_present,
    dig,
    epoch_time,
    final_file,
    finite_or_none,
    first_line,
    malformed,
    out_of_range,
    read_yaml_config,
    require_task,
    resolve_llm,
    resolve_tokens,
    too_many_nodes,
)
from automd_analysis.importers._source import Limits, SourceDir
from automd_analysis.importers.model import LATEST, ImportedNode, ImportedRun, Metric
from automd_analysis.importers.predictions import Binding, bind_nodes
from automd_analysis.importers.problems import SourceError, problem
from automd_analysis.importers.selection import (
    Candidate,
    best_reported_val_non_faulty,
    rank_by_metric,
)

__all__ = ["AIDE_LOG_FILES", "parse_journal", "read_aide"]

#: Files of an AIDE log directory copied unparsed under ``logs/`` (those present).
AIDE_LOG_FILES = (
    "journal.json",
    "filtered_journal.json",
    "config.yaml",
    "best_solution.py",
    "aide.log",
    "aide.verbose.log",
    "full_log.txt",
    "tree_plot.html",
    "report.md",
)
FINAL_CANDIDATES = ("submission.csv", "working/submission.csv", "best_submission/submission.csv")


def parse_journal(data: Any, where: str, limits: Limits | None = None
                  ) -> tuple[list[dict], dict[str, str]]:  # fmt: skip
    """Check the shape of an AIDE-style ``journal.json`` and return ``(nodes, node2parent)``.

    Parameters
    ----------
    data : object
        The parsed JSON.
    where : str
        SOURCE-relative file name, for messages.
    limits : Limits, optional
        ``max_nodes`` is checked before any node is looked at.

    Returns
    -------
    nodes : list of dict
        The node objects, in file order (ids checked as archive names, unique; ``ctime`` a
        time between 1970 and 2200, ``step`` an integer below 2**53).
    node2parent : dict
        Child id → parent id.

    Raises
    ------
    SourceError
        ``import.malformed`` (shape, ``__version`` other than ``"2"``, duplicate ids),
        ``import.bad_node_id`` (an id that could leave the archive directory or is reserved),
        ``import.out_of_range`` (``ctime``, ``step``) or ``import.too_large`` (node count).

    See Also
    --------
    read_aide

    References
    ----------
    AIDE v0.2.2 ``aide/utils/serialize.py`` (``dumps_json``) and ``aide/journal.py`` (``Node``).

    Examples
    --------
    >>> nodes, n2p = parse_journal({"nodes": [{"id": "a", "step": 0, "ctime": 1.0}],
    ...                             "node2parent": {}, "__version": "2"}, "journal.json")
    >>> [n["id"] for n in nodes], n2p
    (['a'], {})
    """
    if not isinstance(data, dict):
        raise malformed("a journal must be a JSON object", where)
    version = data.get("__version")
    if version is not None and version != "2":
        raise malformed(f"journal __version {version!r} is not supported (expected '2')", where)
    nodes = data.get("nodes")
    if not isinstance(nodes, list):
        raise malformed("journal has no 'nodes' list", where, "nodes")
    cap = (limits or Limits()).max_nodes
    if len(nodes) > cap:
        raise too_many_nodes(len(nodes), cap, where)
    n2p = data.get("node2parent", {})
    if not isinstance(n2p, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in n2p.items()
    ):
        raise malformed("node2parent must map node ids to node ids", where, "node2parent")
    seen: set[str] = set()
    for i, node in enumerate(nodes):
        loc = f"nodes[{i}]"
        if not isinstance(node, dict):
            raise malformed("a node must be a JSON object", where, loc)
        nid = check_node_id(node.get("id"), "node id", where)
        if nid in seen:
            raise malformed(f"node id {nid!r} appears twice", where, loc)
        seen.add(nid)
        step = node.get("step")
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise malformed("node step must be an integer >= 0", where, f"{loc}.step")
        if step > MAX_INT:
            raise out_of_range(f"node step {step} is above 2**53 - 1", where, f"{loc}.step")
        epoch_time(node.get("ctime"), "node ctime", where, f"{loc}.ctime")
        exec_time = node.get("exec_time")
        if exec_time is not None and (isinstance(exec_time, bool)
                                      or not isinstance(exec_time, int | float)):  # fmt: skip
            raise malformed("exec_time must be a number or null", where, f"{loc}.exec_time")
        metric = node.get("metric")
        if metric is not None and not isinstance(metric, dict):
            raise malformed("metric must be an object or null", where, f"{loc}.metric")
        if node.get("is_buggy") not in (True, False, None):
            raise malformed("is_buggy must be true, false or null", where, f"{loc}.is_buggy")
        for key in ("code", "plan"):
            if node.get(key) is not None and not isinstance(node.get(key), str):
                raise malformed(f"{key} must be a string", where, f"{loc}.{key}")
    for child, parent in n2p.items():
        check_node_id(child, "node2parent child", where)
        check_node_id(parent, "node2parent parent", where)
    return nodes, n2p


def node_times(node: dict, where: str, problems: list) -> tuple[datetime, datetime]:
    """A checked node's ``ctime`` and the time its prediction file was written (``ctime +
    exec_time``; an ``exec_time`` that is not a duration or ends after 2200 is dropped and
    recorded)."""
    start = epoch_time(node["ctime"], "node ctime", where)
    what = f"exec_time of node {node['id']}"
    seconds = bounded_seconds(node.get("exec_time"), what, where, problems) or 0.0
    end = start + timedelta(seconds=seconds)
    if end >= LATEST:
        problems.append(
            problem("import.value_dropped", f"{what} ends after 2200; dropped", path=where)
        )
        end = start
    return start, end


def aide_nodes(
    raw: list[dict], n2p: dict[str, str], where: str, problems: list
) -> list[ImportedNode]:
    """:class:`ImportedNode` per AIDE node, ordered by ``step`` (ordinal = rank + 1)."""
    ids = {n["id"] for n in raw}
    buggy = {n["id"]: n.get("is_buggy") is True for n in raw}
    out = []
    for ordinal, node in enumerate(sorted(raw, key=lambda n: (n["step"], n["id"])), start=1):
        _start, created = node_times(node, where, problems)
        nid = node["id"]
        parent = n2p.get(nid)
        if parent is not None and parent not in ids:
            problems.append(
                problem(
                    "import.parent_unknown",
                    f"node {nid} names parent {parent}, which is not in the journal",
                    path=where,
                )
            )
            parent = None
        metric = node.get("metric") or {}
        maximize = metric.get("maximize")
        value = finite_or_none(metric.get("value"), problems, f"metric of node {nid}", where)
        stage = "draft" if parent is None else ("debug" if buggy[parent] else "improve")
        out.append(
            ImportedNode(
                node_id=nid,
                ordinal=ordinal,
                log_step=node["step"],
                parent=parent,
                stage=stage,
                buggy=buggy[nid],
                metric=Metric(value, maximize if isinstance(maximize, bool) else None),
                created_at=created,
                code=(("runfile.py", clean_text(node.get("code"), problems, "node code", where)),),
                description=first_line(clean_text(node.get("plan"), problems, "node plan", where)),
            )
        )
    return out


def node_candidate(node: ImportedNode, *, rankable: bool = True) -> Candidate:
    """An AIDE-journal node as the selection rules see it (AIDE and AI-Scientist-v2).

    Parameters
    ----------
    node : ImportedNode
        A node with its bound prediction file, if any.
    rankable : bool, default True
        ``False`` keeps the node out of metric comparisons (AI-Scientist-v2 seed nodes).

    Returns
    -------
    Candidate
        ``order`` = the node's ordinal; value, direction and kind of its metric; ``buggy``;
        ``has_file`` = a prediction file is bound.

    See Also
    --------
    automd_analysis.importers.selection.best_reported_val_non_faulty

    References
    ----------
    AIDE ``aide/journal.py`` (``Node.metric``, ``Node.is_buggy``).

    Examples
    --------
    >>> node = ImportedNode("n1", 1, metric=Metric(0.8, True), prediction="p/n1.csv")
    >>> c = node_candidate(node)
    >>> c.value, c.maximize, c.buggy, c.has_file, c.rankable
    (0.8, True, False, True, True)
    """
    metric = node.metric
    return Candidate(
        node.node_id,
        node.ordinal,
        metric.value,
        metric.maximize,
        metric.kind,
        node.buggy,
        node.prediction is not None,
        rankable=rankable,
    )


def read_aide_run(
    source: SourceDir,
    opts: ImportOptions,
    *,
    task: str,
    rep: int,
    log_dir: str = "",
    harness_binding: dict[str, str] | None = None,
    final_candidates: tuple[str, ...] = FINAL_CANDIDATES,
    extra_logs: dict[str, str] | None = None,
    problems: list | None = None,
    fmt: str = "aide",
) -> ImportedRun:
    """Read one AIDE run whose log files sit in ``log_dir`` of ``source`` (shared with MLE-bench).

    ``harness_binding`` (node id → file) adds files a harness bound itself (MLE-bench's
    ``code/node_id.txt`` + ``submission/submission.csv``); user bindings win on conflicts.
    """
    problems = list(problems or [])
    prefix = f"{log_dir}/" if log_dir else ""
    journal_rel = f"{prefix}journal.json"
    if not source.is_file(journal_rel, what="AIDE journal"):
        if source.exists(journal_rel, what="AIDE journal"):
            source.file_size(journal_rel, source.limits.log_bytes, what="AIDE journal")
        raise SourceError(
            f"looked for AIDE's journal {journal_rel} in SOURCE and found none",
            path=source.root,
            code="import.journal_missing",
            fix="SOURCE must be the AIDE log directory logs/<n>-<name>/ that holds journal.json",
        )
    raw, n2p = parse_journal(
        source.read_json(journal_rel, what="AIDE journal"), journal_rel, source.limits
    )
    if not raw:
        raise SourceError(
            "the journal has no nodes",
            path=journal_rel,
            code="import.empty_run",
            fix="the agent produced no node; there is nothing to import",
        )
    nodes = aide_nodes(raw, n2p, journal_rel, problems)
    config = read_yaml_config(source, f"{prefix}config.yaml", problems)
    where, looked_in = config_llm_place(source, [f"{prefix}config.yaml"])
    llm = resolve_llm(opts.llm, [dig(config, "agent", "code", "model")], problems, where,
                      looked_in=looked_in)  # fmt: skip
    binding = bind_nodes(source, opts.predictions, [(n.node_id, n.log_step) for n in nodes])
    if harness_binding:
        known = {n.node_id for n in nodes}
        for node_id in sorted(set(harness_binding) - known):
            problems.append(
                problem(
                    "import.prediction_unbound_key",
                    f"the harness binds a file to node {node_id}, which is not in the journal; "
                    "ignored",
                    path=journal_rel,
                )
            )
        merged = {k: v for k, v in harness_binding.items() if k in known}
        merged.update(binding.files)
        binding = Binding(merged, binding.final, binding.description, binding.problems)
        if binding.description == "none":
            binding.description = "harness record (MLE-bench code/node_id.txt)"
    nodes = binding.attach(nodes)
    selection = best_reported_val_non_faulty(node_candidate(n) for n in nodes)
    final_rel = final_file(source, binding, selection, final_candidates)
    times = [node_times(n, journal_rel, []) for n in raw]
    started = min(t[0] for t in times)
    ended = max(t[1] for t in times)
    final_code, final_note = aide_final_code(source, nodes, f"{prefix}best_solution.py", problems)
    raw_logs = copy_if_present(source, [f"{prefix}{f}" for f in AIDE_LOG_FILES])
    raw_logs = {k[len(prefix) :] if prefix else k: v for k, v in raw_logs.items()}
    raw_logs.update(extra_logs or {})
    return assemble(
        fmt=fmt,
        source=source,
        opts=opts,
        task=task,
        rep=rep,
        llm=llm,
        search="tree",
        nodes=nodes,
        selection=selection,
        binding=binding,
        final_rel=final_rel,
        times=(started, ended),
        tokens=resolve_tokens(opts.tokens, None, problems, "the AIDE journal"),
        raw_logs=raw_logs,
        problems=problems,
        final_code=final_code,
        final_code_note=final_note,
    )


def best_code_node(nodes: list[ImportedNode], rankable=lambda n: True) -> ImportedNode | None:
    """The node the agent's metric rule ranks first among its non-buggy nodes, with or without a
    prediction file (AIDE's ``get_best_node(only_good=True)``): whose code stands for the run's
    final file when no log names it."""
    best, _inc, _why = rank_by_metric(
        node_candidate(n, rankable=rankable(n)) for n in nodes if not n.buggy
    )
    return None if best is None else next(n for n in nodes if n.node_id == best.node_id)


def aide_final_code(
    source: SourceDir, nodes: list[ImportedNode], best_rel: str, problems: list
) -> tuple[tuple[tuple[str, str], ...], str]:
    """The code bound to an AIDE run's final file, and where it came from: AIDE's own
    ``best_solution.py`` when SOURCE holds it, else the code of the node the metric rule ranks
    first (:func:`best_code_node`)."""
    if source.is_file(best_rel, what="best solution"):
        text = clean_text(
            source.read_text(best_rel, source.limits.code_bytes, what="best solution"),
            problems, "best_solution.py", best_rel,
        )  # fmt: skip
        same = [n.node_id for n in nodes if n.code and n.code[0][1] == text]
        of = f" (the code of node {same[0]})" if same else ""
        return (("best_solution.py", text),), f"AIDE's own best solution {best_rel}{of}"
    node = best_code_node(nodes)
    if node is None:
        return (), "no best_solution.py in SOURCE and no non-buggy node reports a metric"
    return node.code, (
        f"the code of node {node.node_id}, which the metric rule ranks first among the "
        "non-buggy nodes (SOURCE holds no best_solution.py)"
    )


def read_aide(source: SourceDir, opts: ImportOptions) -> list[ImportedRun]:
    """Import an AIDE log directory (one run).

    Parameters
    ----------
    source : SourceDir
        ``logs/<n>-<name>/`` holding ``journal.json`` (and ``config.yaml``, copied logs).
    opts : ImportOptions

    Returns
    -------
    list of ImportedRun
        One run: a tree (``search="tree"``) whose nodes are the journal's nodes; versions are the
        nodes with a bound prediction file (buggy ones ``faulty``).

    Raises
    ------
    SourceError
        ``import.journal_missing``, ``import.malformed``, ``import.bad_node_id``,
        ``import.too_large``, ``import.unsafe_path``, ``import.llm_unknown``...

    See Also
    --------
    automd_analysis.importers.selection.best_reported_val_non_faulty

    References
    ----------
    AIDE v0.2.2 (WecoAI/aideml, MIT): ``aide/journal.py``, ``aide/utils/serialize.py``.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> node = {"code": "print(1)", "plan": "baseline", "step": 0, "id": "a1", "ctime": 1.7e9,
    ...         "parent": None, "children": [], "_term_out": [], "exec_time": 3.0,
    ...         "exc_type": None, "exc_info": None, "exc_stack": None, "analysis": "",
    ...         "metric": {"value": 0.8, "maximize": True}, "is_buggy": False}
    >>> _ = (d / "journal.json").write_text(json.dumps(
    ...     {"nodes": [node], "node2parent": {}, "__version": "2"}))
    >>> (run,) = read_aide(SourceDir(d), ImportOptions(agent="aide", task="t", llm="gpt"))
    >>> run.search, [n.node_id for n in run.nodes], run.selection.rule
    ('tree', ['a1'], 'final_file')
    """
    return [read_aide_run(source, opts, task=require_task(opts), rep=opts.rep)]
