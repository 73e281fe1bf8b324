"""Annotate a set of Python files (one version of a run, or loose scripts) - no I/O here.

:func:`annotate_sources` is the whole static pipeline: module names from the file paths, the
abstract interpretation (:mod:`.interpreter`), the codebook rules (:mod:`.practices`) and task
eligibility.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from automd_analysis.annotate.interpreter import SourceFile, Trace, analyse_program, module_names
from automd_analysis.annotate.practices import (
    Finding,
    TaskFacts,
    apply_eligibility,
    code_findings,
)

__all__ = ["analyse_sources", "annotate_sources", "common_root", "findings_by_file"]


def common_root(paths: Sequence[str]) -> str:
    """The deepest directory containing every ``/``-separated path (``""`` if none).

    Examples
    --------
    >>> common_root(["code/v1/train.py", "code/v1/src/models.py"])
    'code/v1'
    >>> common_root(["train.py"])
    ''
    """
    dirs = [posixpath.dirname(p) for p in paths]
    if not dirs:
        return ""
    root = posixpath.commonpath(dirs) if all(dirs) else ""
    return root


def analyse_sources(
    sources: Sequence[tuple[str, str]],
    entries: Sequence[str] | None = None,
    task_kind: str | None = None,
    parsed=None,
) -> Trace:
    """Run the static analysis over ``(path, text)`` pairs.

    Parameters
    ----------
    sources : sequence of (str, str)
        ``/``-separated paths (as evidence will cite them) and source texts. Module names for
        imports between the files are the paths relative to their common directory.
    entries : sequence of str, optional
        Paths run as scripts; default all of them.
    task_kind : str, optional
        Task kind, for code that branches on it (:func:`~.interpreter.analyse_program`).
    parsed : list of ast.Module or None, optional
        Already parsed trees, in the order of ``sources``.

    Returns
    -------
    Trace

    See Also
    --------
    annotate_sources : the codebook answers.

    Examples
    --------
    >>> trace = analyse_sources([("code/v1/main.py", "from helpers import f\\nf()\\n"),
    ...                          ("code/v1/helpers.py", "def f():\\n    return 1\\n")])
    >>> trace.files, trace.notes
    (['code/v1/main.py', 'code/v1/helpers.py'], [])
    """
    paths = [p for p, _ in sources]
    root = common_root(paths)
    rel = [posixpath.relpath(p, root) if root else p for p in paths]
    files = [
        SourceFile(path, module, text)
        for (path, text), module in zip(sources, module_names(rel), strict=True)
    ]
    index = {p: i for i, p in enumerate(paths)}
    chosen = None if entries is None else [index[e] for e in entries if e in index]
    return analyse_program(files, chosen, parsed=parsed, task_kind=task_kind)


def annotate_sources(
    sources: Sequence[tuple[str, str]],
    task: TaskFacts | None = None,
    entries: Sequence[str] | None = None,
) -> tuple[dict[str, Finding], Trace]:
    """Codebook answers for the code in ``sources`` (static analysis, never executed).

    The answers follow the rules of ``docs/annotation.md``; fields that do not apply to the task
    (``task``) are ``"na"``. Evidence is ``(file number, line)`` into ``sources``.

    Parameters
    ----------
    sources : sequence of (str, str)
        ``(path, text)`` of each Python file.
    task : TaskFacts, optional
        Task kind and eligibility facts; unknown facts leave the code answer.
    entries : sequence of str, optional
        Paths run as scripts (default: all).

    Returns
    -------
    (dict, Trace)
        Field -> :class:`~.practices.Finding`, and the trace (its ``files`` and ``notes``).

    See Also
    --------
    automd_analysis.annotate.runs.annotate_archive : every run of an archive.

    References
    ----------
    Codebook: ``docs/archive.md``; rules: ``docs/annotation.md``; paper App. I.

    Examples
    --------
    >>> code = '''
    ... import pandas as pd
    ... from scipy.stats import rankdata
    ... from sklearn.ensemble import RandomForestClassifier as RF
    ... from sklearn.linear_model import LogisticRegression
    ... tr, te = pd.read_csv("train.csv"), pd.read_csv("test.csv")
    ... a = RF().fit(tr[["x"]], tr["y"]).predict_proba(te[["x"]])[:, 1]
    ... b = LogisticRegression().fit(tr[["x"]], tr["y"]).predict_proba(te[["x"]])[:, 1]
    ... p = (rankdata(a) + rankdata(b)) / (2 * len(a))
    ... pd.DataFrame({"p": p}).to_csv("submission.csv")
    ... '''
    >>> found, _ = annotate_sources([("train.py", code)], TaskFacts(kind="classification"))
    >>> found["averaged_ranks_as_probabilities"].value, found["ensembling"].value
    ('yes', ('model_blend',))
    >>> found["censoring_handling"].value
    'na'
    """
    trace = analyse_sources(sources, entries, task.kind if task is not None else None)
    found = code_findings(trace)
    return apply_eligibility(found, task or TaskFacts()), trace


def findings_by_file(
    sources: Sequence[tuple[str, str]],
    task: TaskFacts | None = None,
    notes: list[str] | None = None,
) -> dict[str, list[dict]]:
    """Per file, the codebook answers when that file is run as the script.

    Every file is analysed as the entry point, with the other files available to its imports.
    Each answer is ``{field, value, line, evidence}``: ``line`` is the first line the answer cites
    in that file (``None`` if it cites none there) and ``evidence`` every ``file:line`` citation.
    What could not be read (a file not parsed, code nested too deeply...) is appended to
    ``notes``, once each.

    Examples
    --------
    >>> code = "from sklearn.svm import SVC\\nm = SVC(class_weight='balanced')\\n"
    >>> out = findings_by_file([("a.py", code)])
    >>> [a for a in out["a.py"] if a["field"] == "class_imbalance_handling"]
    [{'field': 'class_imbalance_handling', 'value': 'class_weight', 'line': 2, 'evidence': ['a.py:2']}]
    """
    out: dict[str, list[dict]] = {}
    for path, _ in sources:
        found, trace = annotate_sources(sources, task, entries=[path])
        if notes is not None:
            notes.extend(n for n in trace.notes if n not in notes)
        answers = []
        for name in sorted(found):
            f = found[name]
            cites = [(trace.files[i], line) for i, line in f.evidence]
            here = [line for p, line in cites if p == path]
            answers.append(
                {
                    "field": name,
                    "value": list(f.value) if isinstance(f.value, tuple) else f.value,
                    "line": here[0] if here else None,
                    "evidence": [f"{p}:{line}" for p, line in cites],
                }
            )
        out[path] = answers
    return out
