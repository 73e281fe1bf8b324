"""Run the analysis notebooks headlessly with papermill, in parallel, and report failures precisely.

A *notebook directory* holds the report notebooks; every ``*.ipynb`` in it whose name does not
start with ``.`` or ``_`` is part of the report, in file-name order (``01_...``, ``02_...``), so
adding a notebook to the report is adding a file. Each notebook must declare a kernelspec and a
code cell tagged ``parameters`` (papermill injects the run's parameters right after it).

:func:`execute_notebooks` never raises for a failing *notebook*: it returns one
:class:`NotebookResult` per notebook, each failure described by a :class:`NotebookFailure` that names
the notebook, the failing cell (its index in the *source* notebook, counting from 0, and the first
line of its source) and the error. :func:`raise_for_failures` turns failures into a single
:class:`NotebookExecutionError` (an :class:`~automd_analysis.errors.AutomdError`, so the CLI prints
it without a traceback). Executed notebooks, including partially executed failing ones, are always
written, so nothing already computed is lost.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from automd_analysis.errors import AutomdError

if TYPE_CHECKING:  # nbformat (via jsonschema) takes about a second to import: only when used
    import nbformat

__all__ = [
    "INJECTED_TAG",
    "PARAMETERS_TAG",
    "NotebookExecutionError",
    "NotebookFailure",
    "NotebookJob",
    "NotebookResult",
    "check_notebook",
    "declared_parameters",
    "discover_notebooks",
    "execute_jobs",
    "execute_notebook",
    "execute_notebooks",
    "missing_requirements",
    "notebook_parameters",
    "raise_for_failures",
    "skip_iri_format_checks",
    "without_unmet_cells",
]

#: Cell tag marking the notebook's own parameter defaults (papermill convention).
PARAMETERS_TAG = "parameters"
#: Cell tag papermill gives the cell it injects after the ``parameters`` cell.
INJECTED_TAG = "injected-parameters"
#: Cell tag of the markdown cells papermill inserts to point at a failing cell.
_PAPERMILL_ERROR_TAG = "papermill-error-cell-tag"

#: Longest error message quoted per failure in :func:`raise_for_failures` (the executed copy
#: holds the whole message and the traceback).
_MAX_ERROR_CHARS = 300

#: Default per-cell timeout, seconds. Generous: the demo archive's heaviest cell takes seconds.
DEFAULT_CELL_TIMEOUT = 900


class NotebookExecutionError(AutomdError):
    """One or more report notebooks failed to execute (or are not valid report notebooks)."""


@dataclass(frozen=True)
class NotebookFailure:
    """Where and how a notebook failed.

    Attributes
    ----------
    notebook : str
        File name of the source notebook (``02_calibration_and_practices.ipynb``).
    cell_index : int or None
        0-based index of the failing cell in the *source* notebook (the injected-parameters cell and
        papermill's error markers are not counted); ``None`` when the failure is not tied to a cell
        (kernel did not start, notebook unreadable).
    cell_first_line : str
        First non-empty line of the failing cell's source (empty when ``cell_index`` is ``None``).
    ename, evalue : str
        Exception class name and message (``"KeyError"``, ``"'ece'"``).
    """

    notebook: str
    cell_index: int | None
    cell_first_line: str
    ename: str
    evalue: str

    def describe(self) -> str:
        """One line: ``NB: cell 3 (`first line`): KeyError: 'x'``."""
        return f"{self.where()}: {self.error()}"

    def where(self) -> str:
        """``NB: cell 3 (`first line`)``."""
        cell = (
            f"cell {self.cell_index} (`{self.cell_first_line}`)"
            if self.cell_index is not None
            else "before any cell ran"
        )
        return f"{self.notebook}: {cell}"

    def error(self, limit: int | None = None) -> str:
        """``KeyError: 'x'``, the message cut at ``limit`` characters when given."""
        value = self.evalue
        if limit is not None and len(value) > limit:
            value = value[: limit - 1] + "…"
        return f"{self.ename}: {value}" if value else self.ename


@dataclass(frozen=True)
class NotebookResult:
    """Outcome of executing one notebook.

    Attributes
    ----------
    source : Path
        The source notebook.
    output : Path
        The executed copy (written even when execution failed, if execution got as far as a cell).
    failure : NotebookFailure or None
        ``None`` when every cell ran without error.
    seconds : float
        Wall-clock execution time (informational only).
    skipped : str or None
        Why the notebook was not executed (see :func:`missing_requirements`); ``None`` if it ran.
    title : str or None
        The title of its HTML page, when one was rendered (or is kept from an earlier run).
    reused : bool
        Not executed because its inputs did not change: its published outputs were kept.
    """

    source: Path
    output: Path
    failure: NotebookFailure | None
    seconds: float
    skipped: str | None = None
    title: str | None = None
    reused: bool = False

    @property
    def ok(self) -> bool:
        """Executed, and every cell ran without error."""
        return self.failure is None and self.skipped is None

    @property
    def name(self) -> str:
        """The notebook's file stem (``01_primary_scores``)."""
        return self.source.stem


def _no_notebooks(directory: Path, message: str, fix: str) -> NotebookExecutionError:
    """``report.no_notebooks`` for the notebook directory."""
    return NotebookExecutionError(message, path=directory, code="report.no_notebooks", fix=fix)


def discover_notebooks(directory: str | Path) -> list[Path]:
    """The report notebooks of ``directory``, in file-name order.

    Every ``*.ipynb`` file directly in ``directory`` counts, except names starting with ``.`` or
    ``_`` (scratch copies) and JupyterLab checkpoints.

    Raises
    ------
    NotebookExecutionError
        ``report.no_notebooks`` if the directory does not exist or holds no notebook.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise _no_notebooks(
            directory,
            "notebook directory not found",
            "pass the directory that holds the report notebooks (default: <repo>/notebooks)",
        )
    found = sorted(
        p for p in directory.glob("*.ipynb") if p.is_file() and not p.name.startswith((".", "_"))
    )
    if not found:
        raise _no_notebooks(
            directory,
            "no notebooks (*.ipynb) in the notebook directory",
            "add the report notebooks or point at the right directory",
        )
    return found


def check_notebook(path: str | Path) -> nbformat.NotebookNode:
    """Read a report notebook and check the two things papermill needs.

    A report notebook is valid nbformat, declares a kernelspec (``metadata.kernelspec.name``) and
    has exactly one code cell tagged ``parameters``.

    Returns
    -------
    NotebookNode
        The parsed notebook.

    Raises
    ------
    NotebookExecutionError
        ``report.notebook_invalid`` naming the file and what is missing.
    """
    path = Path(path)
    try:
        import nbformat

        nb = nbformat.read(path, as_version=4)
    except Exception as exc:  # nbformat raises several unrelated types for bad JSON/schema
        raise NotebookExecutionError(
            f"notebook is not readable: {type(exc).__name__}: {exc}",
            path=path,
            code="report.notebook_invalid",
            fix="open it in JupyterLab and save it again",
        ) from None
    if not nb.metadata.get("kernelspec", {}).get("name"):
        raise NotebookExecutionError(
            "notebook has no kernelspec (papermill needs one)",
            path=path,
            location="metadata.kernelspec",
            code="report.notebook_invalid",
            fix='set metadata.kernelspec to {"name": "python3", "display_name": "Python 3", '
            '"language": "python"} (JupyterLab: Kernel > Change Kernel, then save)',
        )
    tagged = [
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and PARAMETERS_TAG in cell.get("metadata", {}).get("tags", [])
    ]
    if len(tagged) != 1:
        raise NotebookExecutionError(
            f"notebook must have exactly one code cell tagged {PARAMETERS_TAG!r} "
            f"(found {len(tagged)})",
            path=path,
            location="cells",
            code="report.notebook_invalid",
            fix="tag the first code cell (the parameter defaults) 'parameters' "
            "(JupyterLab: Property Inspector > Cell Tags)",
        )
    return nb


def declared_parameters(nb: nbformat.NotebookNode) -> frozenset[str] | None:
    """Names the notebook's ``parameters`` cell assigns at top level (its parameter defaults).

    The cell is parsed with :mod:`ast` (never executed); IPython magics and shell lines (``%``,
    ``!``) are ignored. Plain, annotated and tuple assignments count. Returns ``None`` when the
    notebook has no ``parameters`` cell or the cell is not valid Python, so callers can fall back
    to injecting every parameter.
    """
    import ast

    cells = [
        cell
        for cell in nb.cells
        if cell.cell_type == "code" and PARAMETERS_TAG in cell.get("metadata", {}).get("tags", [])
    ]
    if len(cells) != 1:
        return None
    source = "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line
        for line in _joined_source(cells[0].source).splitlines()
    )
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    names: set[str] = set()

    def collect(target: ast.expr) -> None:
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                collect(element)

    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                collect(target)
        elif isinstance(node, ast.AnnAssign):
            collect(node.target)
    return frozenset(names)


def notebook_parameters(
    nb: nbformat.NotebookNode, parameters: Mapping[str, object] | None
) -> dict[str, object]:
    """The subset of ``parameters`` a notebook declares (what papermill should inject into it).

    A report run hands every notebook the same set of parameters (``automd regenerate``: the
    archive paths and experiment roles, plus notebook-specific ones such as notebook 07's
    embedding backend). Injecting a name that the notebook does not declare would only clutter its
    injected cell, so those are dropped. When the ``parameters`` cell cannot be parsed
    (:func:`declared_parameters` gives ``None``), every parameter is passed on.
    """
    params = dict(parameters or {})
    declared = declared_parameters(nb)
    if declared is None:
        return params
    return {name: value for name, value in params.items() if name in declared}


def _joined_source(source: str | list[str]) -> str:
    return source if isinstance(source, str) else "".join(source)


def missing_requirements(nb: nbformat.NotebookNode, available: Mapping[str, bool]) -> list[str]:
    """Requirements a notebook (or a cell, :func:`without_unmet_cells`) declares that are not met.

    A notebook may declare, in ``metadata.automd.requires``, the experiment roles whose scored
    runs it needs (``["objectives"]``): a report on an archive without scored runs of that
    experiment skips the notebook instead of failing it.

    Parameters
    ----------
    nb : NotebookNode
        A notebook or one of its cells.
    available : mapping requirement -> bool
        Whether each requirement is met; a requirement not in the mapping counts as unmet.

    Returns
    -------
    list of str
        The unmet requirements, in declaration order.
    """
    declared = nb.metadata.get("automd", {}).get("requires", [])
    return [str(r) for r in declared if not available.get(str(r), False)]


def without_unmet_cells(
    nb: nbformat.NotebookNode, available: Mapping[str, bool], note: str
) -> tuple[nbformat.NotebookNode, list[str]]:
    """A copy of ``nb`` without the cells whose requirements are not met.

    A cell may declare, in ``metadata.automd.requires``, what it needs, in the words of
    :func:`missing_requirements` (``["main"]``: scored runs of the main experiment): the report
    leaves those cells out, and the markdown ``note`` takes the place of the first one left out,
    so that a page over runs without scores shows what can be computed instead of failing.

    Returns
    -------
    (NotebookNode, list of str)
        The notebook (``nb`` itself when every cell's requirements are met) and the unmet
        requirements, in order of first appearance.
    """
    import copy

    from nbformat.v4 import new_markdown_cell

    unmet: list[str] = []
    kept = []
    for cell in nb.cells:
        missing = missing_requirements(cell, available)
        if not missing:
            kept.append(cell)
            continue
        if not unmet:
            kept.append(new_markdown_cell(note))
        unmet.extend(r for r in missing if r not in unmet)
    if not unmet:
        return nb, []
    out = copy.deepcopy(nb)
    out.cells = [copy.deepcopy(c) for c in kept]
    return out, unmet


def _first_line(source: str) -> str:
    for line in source.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _source_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """Cells of an executed notebook that come from the source notebook, in order."""
    return [
        cell
        for cell in nb.cells
        if not {INJECTED_TAG, _PAPERMILL_ERROR_TAG} & set(cell.get("metadata", {}).get("tags", []))
    ]


def _locate_failure(notebook: str, executed: Path, exc: BaseException) -> NotebookFailure:
    """Find the failing cell in the executed copy; fall back to the exception alone."""
    ename = getattr(exc, "ename", None) or type(exc).__name__
    evalue = getattr(exc, "evalue", None)
    if evalue is None:
        evalue = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    try:
        import nbformat

        nb = nbformat.read(executed, as_version=4)
    except Exception:  # nothing was written: the kernel never started
        return NotebookFailure(notebook, None, "", ename, evalue)
    for index, cell in enumerate(_source_cells(nb)):
        if cell.cell_type != "code":
            continue
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        marked = cell.get("metadata", {}).get("papermill", {}).get("exception") is True
        if errors or marked:
            if errors:
                ename, evalue = errors[0].get("ename", ename), errors[0].get("evalue", evalue)
            return NotebookFailure(notebook, index, _first_line(cell.source), ename, evalue)
    return NotebookFailure(notebook, None, "", ename, evalue)


#: jupyter_client's message when a kernel exits before answering its first request - e.g. when
#: another process bound one of the TCP ports chosen for it between choosing and binding
#: (``zmq.error.ZMQError: Address already in use`` in the kernel's log), which happens when
#: several kernels start at once. No cell has run then, so the notebook is started again.
_KERNEL_DID_NOT_START = "Kernel died before replying to kernel_info"
_KERNEL_START_ATTEMPTS = 3


def execute_notebook(
    source: str | Path,
    output: str | Path,
    parameters: Mapping[str, object] | None = None,
    *,
    timeout: float | None = DEFAULT_CELL_TIMEOUT,
    kernel_name: str | None = None,
    cwd: str | Path | None = None,
) -> NotebookResult:
    """Execute one notebook with papermill and describe the outcome (never raises for cell errors).

    Parameters
    ----------
    source : path
        Source notebook (checked with :func:`check_notebook` first).
    output : path
        Where the executed copy is written (parent directories are created).
    parameters : mapping, optional
        Values papermill injects after the ``parameters`` cell (JSON-compatible values). Only the
        names the notebook's ``parameters`` cell declares are injected
        (:func:`notebook_parameters`); the others are ignored.
    timeout : float or None
        Per-cell timeout in seconds (``None``: no limit).
    kernel_name : str, optional
        Kernel to use; default: the notebook's kernelspec.
    cwd : path, optional
        Working directory of the kernel; default: the source notebook's directory (as in JupyterLab).

    Returns
    -------
    NotebookResult
    """
    import papermill  # imported lazily: it is slow to import and only needed here

    source, output = Path(source), Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    output.unlink(missing_ok=True)  # never leave a stale copy that looks like this run's result
    try:
        nb = check_notebook(source)
    except NotebookExecutionError as exc:
        failure = NotebookFailure(source.name, None, "", "NotebookExecutionError", str(exc))
        return NotebookResult(source, output, failure, time.perf_counter() - start)
    for attempt in range(1, _KERNEL_START_ATTEMPTS + 1):
        try:
            papermill.execute_notebook(
                str(source),
                str(output),
                parameters=notebook_parameters(nb, parameters),
                kernel_name=kernel_name,
                progress_bar=False,
                log_output=False,
                cwd=str(cwd if cwd is not None else source.parent),
                execution_timeout=timeout,
            )
        except (
            Exception
        ) as exc:  # papermill / nbclient raise many types; all mean "this notebook failed"
            if _KERNEL_DID_NOT_START in str(exc) and attempt < _KERNEL_START_ATTEMPTS:
                continue  # no cell ran: the kernel lost its port to another process; start anew
            failure = _locate_failure(source.name, output, exc)
            return NotebookResult(source, output, failure, time.perf_counter() - start)
        return NotebookResult(source, output, None, time.perf_counter() - start)
    raise AssertionError("unreachable")  # pragma: no cover


def skip_iri_format_checks() -> None:
    """Keep jsonschema (imported by nbformat) from importing ``rfc3987_syntax``: when installed it
    compiles a Lark grammar on import, seconds per process, for the ``iri`` formats that no
    notebook schema uses. Effective only before nbformat is first imported."""
    sys.modules.setdefault("rfc3987_syntax", None)


def _execute_job(args: tuple) -> NotebookResult:
    """Run one notebook in a worker process, with the process's (and so the kernel's) stderr
    going to ``<output>.log`` instead of the terminal: kernels print start-up and shutdown
    chatter there that is not about the notebook. With a ``render`` function, a notebook that ran
    without error is also rendered to its HTML page (in the worker, so pages render in
    parallel)."""
    source, output, parameters, timeout, kernel_name, render, page = args
    skip_iri_format_checks()
    log = Path(output).with_suffix(".log")
    log.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.dup2(fd, 2)
    finally:
        os.close(fd)
    result = execute_notebook(source, output, parameters, timeout=timeout, kernel_name=kernel_name)
    if render is None or not result.ok:
        return result
    return replace(result, title=render(result.output, page))


@dataclass(frozen=True)
class NotebookJob:
    """One notebook to execute: its source, where the executed copy goes, its parameters, and
    where its HTML page goes (``None``: not rendered)."""

    source: Path
    output: Path
    parameters: Mapping[str, object]
    page: Path | None = None


def execute_jobs(
    jobs: Sequence[NotebookJob],
    *,
    workers: int = 1,
    timeout: float | None = DEFAULT_CELL_TIMEOUT,
    kernel_name: str | None = None,
    render: Callable[[Path, Path], str] | None = None,
    progress: bool = False,
    log: Callable[[str], None] | None = None,
) -> list[NotebookResult]:
    """Execute notebooks, ``workers`` at a time, each in a worker process with its own kernel;
    the results come back in the order of ``jobs``.

    ``render(executed, page)`` (a module-level function: it is sent to the workers), when given,
    renders each notebook that ran without error to its ``page`` and returns the page title.
    ``log`` receives one line per finished notebook (name, outcome, seconds).
    """
    if workers < 1:
        raise NotebookExecutionError(
            f"--jobs must be at least 1, got {workers}",
            code="report.bad_option",
            fix="use --jobs 1",
        )
    job_args = [
        (j.source, j.output, dict(j.parameters), timeout, kernel_name, render, j.page) for j in jobs
    ]
    if not job_args:
        return []

    from tqdm.auto import tqdm

    bar = tqdm(total=len(job_args), desc="notebooks", unit="nb", disable=not progress)
    results: list[NotebookResult] = []
    try:
        # spawn: a fresh interpreter per worker (no forked threads / zmq state from the parent)
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(workers, len(job_args)), mp_context=ctx) as pool:
            for result in pool.map(_execute_job, job_args):
                results.append(result)
                bar.update()
                if log is not None:
                    outcome = "ok" if result.ok else "FAILED"
                    log(f"  notebook {result.name}: {outcome} ({result.seconds:.0f} s)")
    finally:
        bar.close()
    return results


def execute_notebooks(
    notebooks: str | Path | Sequence[str | Path],
    output_dir: str | Path,
    parameters: Mapping[str, object] | None = None,
    *,
    jobs: int = 1,
    timeout: float | None = DEFAULT_CELL_TIMEOUT,
    kernel_name: str | None = None,
    progress: bool = False,
    log: Callable[[str], None] | None = None,
) -> list[NotebookResult]:
    """Execute every report notebook, ``jobs`` at a time, and return the results in notebook order.

    Parameters
    ----------
    notebooks : path or sequence of paths
        A notebook directory (see :func:`discover_notebooks`) or an explicit list of notebooks.
    output_dir : path
        Executed copies are written to ``output_dir/<name>.ipynb``.
    parameters : mapping, optional
        The same parameters are offered to every notebook; each gets the names its
        ``parameters`` cell declares (:func:`notebook_parameters`).
    jobs : int
        Notebooks executed concurrently, each in a worker process with its own kernel. A worker's
        stderr (kernel start-up/shutdown messages) goes to ``output_dir/<name>.log``.
    timeout, kernel_name
        See :func:`execute_notebook`.
    progress : bool
        Show a tqdm progress bar over notebooks.
    log : callable, optional
        Receives one line per finished notebook (name, outcome, seconds).

    Returns
    -------
    list of NotebookResult
        One per notebook, in file-name order, whatever order they finished in.

    Raises
    ------
    NotebookExecutionError
        Only for a bad notebook *directory* (missing/empty) or ``jobs < 1``; failing notebooks are
        reported in the results.
    """
    if isinstance(notebooks, (str, os.PathLike)):
        paths = discover_notebooks(notebooks)
    else:
        paths = [Path(p) for p in notebooks]
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    params = dict(parameters or {})
    return execute_jobs(
        [NotebookJob(p, output_dir / p.name, params) for p in paths],
        workers=jobs,
        timeout=timeout,
        kernel_name=kernel_name,
        progress=progress,
        log=log,
    )


def raise_for_failures(results: Sequence[NotebookResult]) -> None:
    """Raise one :class:`NotebookExecutionError` describing every failed notebook, if any.

    The error's ``path`` is the first failing source notebook, its ``location`` the failing cell,
    its message lists every failure (notebook, cell index + first line, error; an error shared by
    several notebooks once, each cut at :data:`_MAX_ERROR_CHARS`), and its ``fix``
    points at the executed copies that hold the full tracebacks. ``details["failures"]`` holds the
    failures as plain data.
    """
    failed = [r for r in results if r.failure is not None]
    if not failed:
        return
    first = failed[0]
    by_error: dict[tuple[str, str], list[NotebookFailure]] = {}
    for r in failed:  # the same error in several notebooks is said once
        by_error.setdefault((r.failure.ename, r.failure.evalue), []).append(r.failure)
    lines = "; ".join(
        ", ".join(f.where() for f in same) + f": {same[0].error(_MAX_ERROR_CHARS)}"
        for same in by_error.values()
    )
    raise NotebookExecutionError(
        f"{len(failed)} of {len(results)} notebook(s) failed: {lines}",
        path=first.source,
        location=None if first.failure.cell_index is None else f"cell {first.failure.cell_index}",
        code="report.notebook_failed",
        fix="the executed copies with full tracebacks are "
        + ", ".join(str(r.output) for r in failed)
        + "; fix the cell (or the analysis it calls) and re-run",
        details={
            "failures": [
                {
                    "notebook": r.failure.notebook,
                    "cell_index": r.failure.cell_index,
                    "cell_first_line": r.failure.cell_first_line,
                    "ename": r.failure.ename,
                    "evalue": r.failure.evalue,
                    "executed_copy": str(r.output),
                }
                for r in failed
            ]
        },
    )
