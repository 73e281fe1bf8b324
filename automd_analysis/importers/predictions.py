"""Explicit binding of prediction files to nodes/steps (``--predictions``).

Stock AIDE and AI-Scientist-v2 overwrite one ``submission.csv``; per-node prediction files exist
only when the harness saved them, so a file is bound to a node only when the user says how:

- a **pattern** relative to SOURCE with ``{node_id}`` and/or ``{step}`` placeholders, where
  ``{step}`` is the agent's own step number exactly as its log writes it and Python format specs
  work (``step_predictions/{step:04d}.csv``); the recommended convention for harness authors is
  ``node_predictions/{node_id}/submission.csv`` beside the journal;
- a **JSON map file** ``{"<node id or step>": "<path relative to SOURCE>", ...}``; the key
  ``"final"`` names the run's final submission file.

Nothing is ever guessed: without a binding the run keeps its single final file and records
``import.predictions_not_bound``.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from automd_analysis.docstrings import docs_reference, fill_doc
from automd_analysis.errors import AutomdError
from automd_analysis.importers._source import SourceDir, check_relative
from automd_analysis.importers.json_bounds import json_shape
from automd_analysis.importers.model import ImportedNode
from automd_analysis.importers.problems import SourceError, problem

__all__ = [
    "Binding",
    "PredictionSpec",
    "bind_nodes",
    "parse_predictions",
    "read_user_json",
    "scan_steps",
]

_FIELDS = ("node_id", "step")


def _invalid(msg: str, fix: str, path: str | Path | None = None) -> SourceError:
    return SourceError(msg, path=path, code="import.predictions_invalid", fix=fix)


@dataclass(frozen=True)
class PredictionSpec:
    """A parsed ``--predictions`` value.

    Attributes
    ----------
    kind : {"pattern", "map"}
    text : str
        The pattern, or the map file's name.
    fields : frozenset of str
        Placeholders the pattern uses.
    mapping : dict
        Map file entries (key → SOURCE-relative path); empty for a pattern.
    """

    kind: str
    text: str
    fields: frozenset[str] = frozenset()
    mapping: dict[str, str] = field(default_factory=dict)

    def format(self, *, node_id: str | None = None, step: int | None = None) -> str:
        """The pattern filled in for one node (``str.format`` semantics)."""
        return self.text.format(node_id=node_id, step=step)

    def describe(self) -> str:
        """One line for reports: ``pattern '<text>'`` or ``map file '<name>'``."""
        return f"pattern {self.text!r}" if self.kind == "pattern" else f"map file {self.text!r}"


def parse_pattern(text: str) -> PredictionSpec:
    """Validate a ``--predictions`` pattern.

    Parameters
    ----------
    text : str
        A path relative to SOURCE with ``{node_id}`` / ``{step}`` placeholders (format specs only
        on ``{step}``, e.g. ``{step:04d}``; ``{{``/``}}`` are literal braces).

    Returns
    -------
    PredictionSpec

    Raises
    ------
    SourceError
        ``import.predictions_invalid`` for another placeholder, a conversion (``!r``), a bad
        format spec, no placeholder at all, or a path that is absolute or contains ``..``.

    See Also
    --------
    parse_predictions

    References
    ----------
    Python ``str.format`` format-specification mini-language.

    Examples
    --------
    >>> spec = parse_pattern("node_predictions/{node_id}/submission.csv")
    >>> spec.format(node_id="ab12")
    'node_predictions/ab12/submission.csv'
    >>> parse_pattern("preds/{step:04d}.csv").format(step=7)
    'preds/0007.csv'
    """
    fields: set[str] = set()
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise _invalid(f"--predictions pattern {text!r} is malformed: {exc}",
                       "use {node_id} and {step} placeholders, '{{' for a literal brace") from None  # fmt: skip
    for _literal, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in _FIELDS:
            raise _invalid(
                f"--predictions pattern {text!r} uses placeholder {{{name}}}",
                "only {node_id} and {step} are available",
            )
        if conversion:
            raise _invalid(f"--predictions pattern {text!r} uses a conversion (!{conversion})",
                           "drop the conversion")  # fmt: skip
        if name == "node_id" and spec:
            raise _invalid(f"--predictions pattern {text!r} formats {{node_id}}",
                           "{node_id} takes no format spec")  # fmt: skip
        if name == "step":
            try:
                format(1, spec)
            except ValueError as exc:
                raise _invalid(f"--predictions pattern {text!r}: bad format spec {spec!r}: {exc}",
                               "use an integer format such as {step:04d}") from None  # fmt: skip
        fields.add(name)
    if not fields:
        raise _invalid(
            f"--predictions {text!r} has no {{node_id}} or {{step}} placeholder and is not a "
            "JSON map file",
            "pass a pattern such as node_predictions/{node_id}/submission.csv or a .json map",
        )
    sample = text.format(node_id="x", step=1)
    check_relative(sample, what="--predictions pattern")
    return PredictionSpec("pattern", text, frozenset(fields))


@fill_doc(references=docs_reference("importing.md", "Prediction files"))
def parse_predictions(value: str | None, *, max_bytes: int = 1 << 20) -> PredictionSpec | None:
    """Parse ``--predictions``: a pattern, or (a ``.json`` path without placeholders) a map file.

    The map file is read as given (it is the user's file, not part of SOURCE) but bounded and
    parsed as plain JSON: an object whose keys are node ids, step numbers or ``"final"`` and whose
    values are paths relative to SOURCE.

    Parameters
    ----------
    value : str or None
    max_bytes : int
        Cap on the map file.

    Returns
    -------
    PredictionSpec or None

    Raises
    ------
    SourceError
        ``import.predictions_invalid``; ``import.unsafe_path`` for a map value leaving SOURCE.

    See Also
    --------
    parse_pattern, bind_nodes

    {references}

    Examples
    --------
    >>> parse_predictions("node_predictions/{node_id}/submission.csv").kind
    'pattern'
    >>> parse_predictions(None) is None
    True
    """
    if value is None:
        return None
    if "{" not in value and value.endswith(".json"):
        return _read_map(Path(value), max_bytes)
    return parse_pattern(value)


def read_user_json(path: Path, max_bytes: int, bad) -> object:
    """A small JSON file the user names (``--predictions`` map, ``--tokens``): a regular file of
    at most ``max_bytes``, nested at most 100 levels; every failure is ``bad(message)``."""
    try:
        if not path.is_file():
            raise bad(f"{path.name} not found (or not a regular file)")
        if path.stat().st_size > max_bytes:
            raise bad(f"{path.name} is larger than {max_bytes} bytes")
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise bad(f"{path.name} cannot be read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise bad(f"{path.name} is larger than {max_bytes} bytes")
    if json_shape(data, max_depth=100).depth > 100:
        raise bad(f"{path.name} nests objects/arrays more than 100 levels deep")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise bad(f"{path.name} is not JSON: {exc}") from None


def _read_map(path: Path, max_bytes: int) -> PredictionSpec:
    fix = 'write {"<node id or step>": "<path relative to SOURCE>", ...} (docs/importing.md)'
    raw = read_user_json(
        path, max_bytes, lambda msg: _invalid(f"--predictions map file: {msg}", fix, path)
    )
    if not isinstance(raw, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in raw.items()
    ):
        raise _invalid("--predictions map file must be an object of strings", fix, path)
    for key, rel in raw.items():
        check_relative(rel, what=f"map entry {key!r}", where=str(path))
    return PredictionSpec("map", path.name, frozenset(), dict(sorted(raw.items())))


@dataclass
class Binding:
    """Prediction files bound to nodes.

    Attributes
    ----------
    files : dict
        node id → SOURCE-relative path of its prediction file.
    final : str or None
        The map's ``"final"`` entry, if any.
    description : str
        How files were bound (for ``journal.md`` and the report).
    problems : list of AutomdError
    """

    files: dict[str, str] = field(default_factory=dict)
    final: str | None = None
    description: str = "none"
    problems: list[AutomdError] = field(default_factory=list)

    def attach(self, nodes: list[ImportedNode]) -> list[ImportedNode]:
        """``nodes``, each with its bound prediction file (``prediction``) when it has one."""
        return [
            replace(n, prediction=self.files[n.node_id]) if n.node_id in self.files else n
            for n in nodes
        ]


def _usable(source: SourceDir, rel: str) -> bool:
    """True if ``rel`` is a regular file within the caps (symlinks/oversize raise)."""
    if not source.exists(rel, what="prediction file"):
        return False
    source.file_size(rel, source.limits.prediction_bytes, what="prediction file")
    return True


@fill_doc(references=docs_reference("importing.md", "Prediction files"))
def bind_nodes(
    source: SourceDir,
    spec: PredictionSpec | None,
    nodes: Iterable[tuple[str, int | None]],
    *,
    step_allowed: bool = True,
) -> Binding:
    """Bind prediction files to ``(node_id, log_step)`` nodes by a pattern or a map.

    Parameters
    ----------
    source : SourceDir
    spec : PredictionSpec or None
        ``None``: nothing is bound.
    nodes : iterable of (str, int or None)
        Node ids and the step numbers as the log writes them.
    step_allowed : bool
        ``False`` for formats whose step numbers are not unique within a run
        (AI-Scientist-v2 counts steps per sub-stage).

    Returns
    -------
    Binding
        A node whose pattern file does not exist simply has no file (buggy nodes rarely have
        one); a map entry naming no node, or a missing file, is a recorded problem.

    Raises
    ------
    SourceError
        ``import.predictions_invalid`` (``{step}`` where not allowed), ``import.unsafe_path``
        (symlinks), ``import.too_large``, ``import.not_a_file``.

    See Also
    --------
    parse_predictions, scan_steps

    {references}

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "p").mkdir(), (d / "p" / "a.csv").write_text("id,p\\n")
    >>> b = bind_nodes(SourceDir(d), parse_pattern("p/{node_id}.csv"), [("a", 0), ("b", 1)])
    >>> b.files
    {'a': 'p/a.csv'}
    """
    nodes = list(nodes)
    out = Binding()
    if spec is None:
        return out
    out.description = spec.describe()
    if spec.kind == "pattern":
        if "step" in spec.fields and not step_allowed:
            raise _invalid(
                f"--predictions pattern {spec.text!r} uses {{step}}, which this format numbers "
                "per sub-stage",
                "use {node_id} (e.g. node_predictions/{node_id}/submission.csv)",
            )
        for node_id, log_step in nodes:
            if "step" in spec.fields and log_step is None:
                continue
            rel = str(PurePosixPath(spec.format(node_id=node_id, step=log_step)))
            check_relative(rel, what="prediction file")
            if _usable(source, rel):
                out.files[node_id] = rel
        return out
    by_id = {n: n for n, _ in nodes}
    by_step = {str(s): n for n, s in nodes if s is not None and step_allowed}
    for key, rel in spec.mapping.items():
        if key == "final":
            target = "final"
        elif key in by_id:
            target = by_id[key]
        elif key in by_step:
            target = by_step[key]
        else:
            out.problems.append(
                problem(
                    "import.prediction_unbound_key",
                    f"map entry {key!r} names no node or step of the log; ignored",
                    path=spec.text,
                    fix="keys are node ids, step numbers as the log writes them, or 'final'",
                )
            )
            continue
        if not _usable(source, rel):
            out.problems.append(
                problem(
                    "import.prediction_missing",
                    f"map entry {key!r}: {rel!r} does not exist in SOURCE",
                    path=spec.text,
                    fix="fix the path (relative to SOURCE) or drop the entry",
                )
            )
            continue
        if target == "final":
            out.final = rel
        else:
            out.files[target] = rel
    return out


@fill_doc(references=docs_reference("importing.md", "Prediction files"))
def scan_steps(source: SourceDir, spec: PredictionSpec) -> list[tuple[int, str]]:
    """Files matching a ``{step}``-only pattern, for formats whose log has no step list (Codex).

    The directory part before the first placeholder is listed (symlinks are not followed);
    every file whose path the pattern reproduces exactly for some integer step is kept.

    Parameters
    ----------
    source : SourceDir
    spec : PredictionSpec
        A pattern using ``{step}`` only.

    Returns
    -------
    list of (int, str)
        ``(step, relative path)`` sorted by step.

    Raises
    ------
    SourceError
        ``import.predictions_invalid`` for a pattern with ``{node_id}`` or two files with the same
        step.

    See Also
    --------
    bind_nodes

    {references}

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "snap").mkdir(), (d / "snap" / "0002.csv").write_text("x"), (d / "snap" / "0010.csv").write_text("x")
    >>> scan_steps(SourceDir(d), parse_pattern("snap/{step:04d}.csv"))
    [(2, 'snap/0002.csv'), (10, 'snap/0010.csv')]
    """
    if spec.kind != "pattern" or spec.fields != {"step"}:
        raise _invalid(
            f"--predictions {spec.text!r}: this format has no node ids; use a pattern with "
            "{step} only or a map keyed by step numbers",
            "e.g. submission_history/{step:04d}/submission.csv",
        )
    regex_parts: list[str] = []
    for literal, name, _spec, _conv in string.Formatter().parse(spec.text):
        regex_parts.append(re.escape(literal))
        if name is not None:
            regex_parts.append(rf"(?P<s{len(regex_parts)}>[+-]?\d+)")
    regex = re.compile("".join(regex_parts) + r"\Z")
    prefix = spec.text.split("{", 1)[0]
    base = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
    if base and not source.is_dir(base, what="prediction directory"):
        return []
    files, others = source.walk_files(base, what="prediction directory")
    for rel, kind in others:
        if regex.match(rel):  # a snapshot the pattern names, but not a regular file
            if kind == "link":
                source.path(rel, what="prediction file")  # raises import.unsafe_path
            raise SourceError(
                f"prediction file {rel!r} is not a regular file (a FIFO, device or socket)",
                path=rel,
                code="import.not_a_file",
                fix="replace it by a regular file",
            )
    found: dict[int, str] = {}
    for rel in files:
        m = regex.match(rel)
        if not m:
            continue
        values = {int(v) for v in m.groupdict().values()}
        if len(values) != 1:
            continue
        step = values.pop()
        if spec.format(step=step) != rel:
            continue
        if step in found:
            raise _invalid(f"--predictions {spec.text!r} matches two files for step {step}",
                           "make the pattern's step numbers unique")  # fmt: skip
        source.file_size(rel, source.limits.prediction_bytes, what="prediction file")
        found[step] = rel
    return sorted(found.items())
