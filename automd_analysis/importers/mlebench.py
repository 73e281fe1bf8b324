"""MLE-bench run group → one :class:`~.model.ImportedRun` per run (AIDE inside).

SOURCE is ``runs/<YYYY-MM-DDTHH-MM-SS-ZONE>_run-group_<agent>/`` with ``metadata.json``
(``{"run_group", "created_at", "runs": {run_id: {"success": bool}}}``) and one directory per run
``<competition id>_<uuid4>/`` holding ``run.log``, ``submission/submission.csv``, ``logs/``
(AIDE's ``journal.json``, ``config.yaml``...) and ``code/`` (``solution.py``, ``node_id.txt``: the
AIDE node whose file is in ``submission/``; MLE-bench's fork keeps only the best node's file).

Each run maps to a task by its competition id (the run id without the ``_<uuid>`` suffix) and to
a repetition by its position among the group's runs of that competition (``metadata.json`` order,
offset by ``--rep``). ``--task`` keeps only that competition's runs. ``--predictions`` patterns are
relative to each run directory. Selection: :func:`~.selection.best_reported_val_non_faulty`.
"""

from __future__ import annotations

from automd_analysis.importers._common import (
    ImportOptions,
    check_node_id,
    malformed,
    symlinked_dir,
)
from automd_analysis.importers._source import SourceDir
from automd_analysis.importers.aide import read_aide_run
from automd_analysis.importers.model import ImportedRun
from automd_analysis.importers.problems import SourceError, problem

__all__ = ["read_mlebench"]


def read_mlebench(source: SourceDir, opts: ImportOptions) -> list[ImportedRun]:
    """Import an MLE-bench run group (every run whose directory holds an AIDE journal).

    Parameters
    ----------
    source : SourceDir
        The run-group directory.
    opts : ImportOptions
        ``task`` (optional) keeps one competition; ``rep`` is the first repetition number;
        ``tokens`` needs a group with exactly one imported run.

    Returns
    -------
    list of ImportedRun
        One per run directory of the group that holds an AIDE journal.

    Raises
    ------
    SourceError
        ``import.journal_missing`` (no ``metadata.json``), ``import.malformed``,
        ``import.no_runs``, ``import.options_invalid`` (``--tokens`` with several runs)...

    See Also
    --------
    automd_analysis.importers.aide.read_aide

    References
    ----------
    openai/mle-bench (MIT): ``run_agent.py``, ``agents/run.py`` (``save_output``); the AIDE fork
    ``thesofakillers/aideml``.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "metadata.json").write_text(json.dumps({"run_group": "g", "runs": {}}))
    >>> try:
    ...     read_mlebench(SourceDir(d), ImportOptions(agent="aide"))
    ... except SourceError as exc:
    ...     print(exc.code)
    import.no_runs
    """
    if not source.exists("metadata.json"):
        raise SourceError(
            "looked for MLE-bench's metadata.json in SOURCE and found none",
            path=source.root,
            code="import.journal_missing",
            fix="SOURCE must be an MLE-bench run-group directory (runs/<ts>_run-group_<agent>/)",
        )
    meta = source.read_json("metadata.json", source.limits.text_bytes * 16, what="metadata.json")
    runs = meta.get("runs") if isinstance(meta, dict) else None
    if not isinstance(runs, dict):
        raise malformed("metadata.json must have a 'runs' object", "metadata.json", "runs")
    if len(runs) > source.limits.max_entries:
        raise SourceError(
            f"metadata.json lists {len(runs)} runs, above the listing cap of "
            f"{source.limits.max_entries}",
            path="metadata.json",
            code="import.too_large",
            fix="import the run group in parts (--task)",
        )
    group_problems: list = []
    per_comp: dict[str, int] = {}
    out: list[ImportedRun] = []
    entries = dict(source.listdir(""))
    for run_id, info in runs.items():
        check_node_id(run_id, "run id", "metadata.json")
        if "_" not in run_id:
            raise malformed(f"run id {run_id!r} is not <competition>_<uuid>", "metadata.json")
        comp = run_id.rsplit("_", 1)[0]
        if opts.task is not None and comp != opts.task:
            continue
        kind = entries.get(run_id)
        if kind == "link":
            raise symlinked_dir(run_id, "run directory")
        if kind != "dir":
            group_problems.append(
                problem("import.run_failed", f"run {run_id} has no directory; skipped", path=run_id)
            )
            continue
        rep = opts.rep + per_comp.get(comp, 0)
        per_comp[comp] = per_comp.get(comp, 0) + 1
        run_src = SourceDir(source.root / run_id, source.limits)
        problems = list(group_problems)
        if not (isinstance(info, dict) and info.get("success") is True):
            problems.append(
                problem("import.run_failed", f"metadata.json marks run {run_id} as not successful")
            )
        harness = {}
        if run_src.exists("code/node_id.txt") and run_src.exists("submission/submission.csv"):
            node = run_src.read_text("code/node_id.txt", run_src.limits.text_bytes).strip()
            harness[check_node_id(node, "node id", f"{run_id}/code/node_id.txt")] = (
                "submission/submission.csv"
            )
        extra = {f: f for f in ("run.log", "code/node_id.txt", "code/solution.py")
                 if run_src.exists(f)}  # fmt: skip
        out.append(
            read_aide_run(
                run_src,
                opts,
                task=comp,
                rep=rep,
                log_dir="logs",
                harness_binding=harness,
                final_candidates=("submission/submission.csv",),
                extra_logs=extra,
                problems=problems,
                fmt="mlebench",
            )
        )
    if not out:
        raise SourceError(
            "the run group holds no importable run"
            + (f" for competition {opts.task!r}" if opts.task else ""),
            path="metadata.json",
            code="import.no_runs",
            fix="check SOURCE and --task (the competition id of the runs)",
        )
    if opts.tokens is not None and len(out) > 1:
        raise SourceError(
            f"--tokens gives one count but the group holds {len(out)} runs",
            code="import.options_invalid",
            fix="import the runs one at a time with --task, or drop --tokens",
        )
    return out
