"""Change types between two versions of a run (paper App. H categories), from their code.

Each version is summarised by its codebook answers and :func:`~.practices.code_signature`; a pair
gets a change type when the summaries differ:

=========================  =====================================================================
``model_family``           the submitted model families differ
``ensembling``             the ensembling answer, the number of submitted models or the literal
                           blend weights differ, or a changed line loops over seeds, averages,
                           blends, votes or stacks
``hyperparameter_tuning``  the same library models, with different literal hyperparameters
``calibration``            the calibration answer or method differs
``imbalance_handling``     the class-imbalance answer differs
``validation``             the validation design differs
``preprocessing``          changed lines that impute, scale, encode or clip
``feature_engineering``    changed lines that build, transform, drop or select predictors
``other``                  any other changed code line (thresholds, seeds, output writing...)
=========================  =====================================================================

Changed lines come from a line diff of the two versions' files, ignoring comments, blank lines,
docstrings, imports and helper definitions present in only one of the versions (a new helper is
not a change until it is called, and the call line is); a changed line already explained by one
of the first six types is not counted again.
``affects_predictions`` is whether the two versions' prediction files differ byte for byte.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "VersionCode",
    "changed_lines",
    "layout_json",
    "layout_of",
    "pair_changes",
    "remember_layout",
]

_PREPROCESSING = re.compile(
    r"imput|fillna|Imputer|scal(e|er|ing)|Scaler|standardi[sz]|normali[sz]|encod|Encoder|"
    r"get_dummies|one_?hot|OneHot|ordinal|clip\(|astype\(|to_numeric|median\(\)",
    re.IGNORECASE,
)
_FEATURES = re.compile(
    r"(?<![A-Za-z_])(features?|feats?|columns?)\b|\.rolling\(|\.diff\(|\.shift\(|\blags?\b|"
    r"_lag\d|\bratios?\b|_ratio|\binteractions?\b|log1p|np\.log\(|log_?transform|skew|"
    r"\.drop\(|select|"
    r"indicator|_missing|\badd_|concat|\[\s*[\"'][^\"']+[\"']\s*\]\s*="
)
_ENSEMBLE_WORDS = re.compile(
    r"\bfor\s+\w*seed\w*\s+in\b|\bseeds\b|averag|blend|\bvot(e|ing)|stack", re.IGNORECASE
)
_MODEL_WORDS = re.compile(
    r"Classifier|Regressor|Fitter|\bfit_\w+\(|lgb|xgb|catboost|LogisticRegression|n_estimators|"
    r"learning_rate|max_depth|num_leaves|max_iter|max_features|penalizer|\bC=|params",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class VersionCode:
    """One version as the pair rules see it.

    Attributes
    ----------
    answers : mapping
        Codebook field -> value (tuples for multi-valued fields).
    signature : mapping
        :func:`~.practices.code_signature`.
    files : tuple of (str, str)
        ``(run-relative path, text)`` of the version's Python files.
    """

    answers: Mapping[str, object]
    signature: Mapping[str, object]
    files: tuple[tuple[str, str], ...]


Layout = tuple[frozenset[int], dict[str, range]]
_KNOWN: dict[str, Layout] = {}
_MAX_KNOWN = 512


def layout_of(tree: ast.Module) -> Layout:
    """Lines to ignore (docstrings and imports of the module, its top-level functions and
    classes) and the line span of each top-level definition of a parsed file.

    Examples
    --------
    >>> skip, spans = layout_of(ast.parse("'doc'\\nimport os\\ndef f():\\n    return 1\\n"))
    >>> sorted(skip), spans
    ([1, 2], {'f': range(3, 5)})
    """
    skip: set[int] = set()
    spans: dict[str, range] = {}

    def docstring(body: list[ast.stmt]) -> None:
        first = body[0] if body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            skip.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))

    docstring(tree.body)
    for node in tree.body:  # top level only: a walk over every node costs more than the parse
        if isinstance(node, ast.Import | ast.ImportFrom):
            skip.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            spans[node.name] = range(start, (node.end_lineno or node.lineno) + 1)
            docstring(node.body)
            for inner in node.body:
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    docstring(inner.body)
                elif isinstance(inner, ast.Import | ast.ImportFrom):
                    skip.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return frozenset(skip), spans


def layout_json(layout: Layout) -> dict:
    """JSON form of a layout (for the annotation cache).

    Examples
    --------
    >>> layout_json((frozenset({1, 2}), {"f": range(3, 5)}))
    {'skip': [1, 2], 'spans': {'f': [3, 5]}}
    """
    skip, spans = layout
    return {"skip": sorted(skip), "spans": {k: [r.start, r.stop] for k, r in spans.items()}}


def remember_layout(text: str, doc: dict | Layout) -> None:
    """Record the layout of ``text`` (e.g. from the cache) so that it is not parsed again.

    Examples
    --------
    >>> remember_layout("x = 1\\n", {"skip": [], "spans": {}})
    >>> _layout("x = 1\\n")
    (frozenset(), {})
    """
    if len(_KNOWN) >= _MAX_KNOWN:
        _KNOWN.clear()
    if isinstance(doc, dict):
        layout = (
            frozenset(int(x) for x in doc.get("skip", [])),
            {str(k): range(int(a), int(b)) for k, (a, b) in doc.get("spans", {}).items()},
        )
    else:
        layout = doc
    _KNOWN[text] = layout


def _layout(text: str) -> Layout:
    known = _KNOWN.get(text)
    if known is not None:
        return known
    try:
        layout = layout_of(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        layout = (frozenset(), {})
    remember_layout(text, layout)
    return layout


def _code_lines(
    files: Sequence[tuple[str, str]], drop_defs: set[str] | None = None
) -> list[tuple[str, int, str]]:
    """``(path, line, normalised text)`` of every code line: comments, blank lines,
    docstrings, imports and the top-level definitions named in ``drop_defs`` are left out."""
    out = []
    for path, text in files:
        name = _short(path)
        ignored, spans = _layout(text)
        skip = set(ignored)
        for d in drop_defs or ():
            if d in spans:
                skip.update(spans[d])
        for i, line in enumerate(text.splitlines(), start=1):
            stripped = line.split("#", 1)[0].strip()
            if stripped and i not in skip:
                out.append((name, i, stripped))
    return out


def _definitions(files: Sequence[tuple[str, str]]) -> set[str]:
    return {name for _, text in files for name in _layout(text)[1]}


def changed_lines(
    earlier: Sequence[tuple[str, str]], later: Sequence[tuple[str, str]]
) -> tuple[list[tuple[str, int, str]], list[tuple[str, int, str]]]:
    """Lines removed from ``earlier`` and added in ``later`` (line diff, whitespace-insensitive).

    Returns
    -------
    (removed, added)
        ``(path, line, text)`` with the path of the version the line belongs to.

    Examples
    --------
    >>> removed, added = changed_lines([("a.py", "x = 1\\ny = 2\\n")], [("a.py", "x = 1\\ny = 3\\n")])
    >>> [(p, n, t) for p, n, t in removed], [(p, n, t) for p, n, t in added]
    ([('a.py', 2, 'y = 2')], [('a.py', 2, 'y = 3')])
    """
    defs_a, defs_b = _definitions(earlier), _definitions(later)
    # a helper defined in only one version is not a change by itself; calling it is
    a = _code_lines(earlier, defs_a - defs_b)
    b = _code_lines(later, defs_b - defs_a)
    full_a = {_short(p): p for p, _ in earlier}
    full_b = {_short(p): p for p, _ in later}
    sm = difflib.SequenceMatcher(
        None, [(p, t) for p, _, t in a], [(p, t) for p, _, t in b], autojunk=False
    )
    removed, added = [], []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        removed += [(full_a.get(p, p), n, t) for p, n, t in a[i1:i2]]
        added += [(full_b.get(p, p), n, t) for p, n, t in b[j1:j2]]
    return removed, added


def _short(path: str) -> str:
    """A version's file without its ``code/<version>/`` prefix (same name across versions)."""
    return path.split("/", 2)[-1] if path.startswith("code/") and path.count("/") >= 2 else path


def pair_changes(earlier: VersionCode, later: VersionCode) -> tuple[list[str], list[str]]:
    """Change types from ``earlier`` to ``later`` and evidence (``file:line`` of changed lines).

    Parameters
    ----------
    earlier, later : VersionCode

    See Also
    --------
    changed_lines, automd_analysis.version_pairs.form_version_pairs

    References
    ----------
    Paper App. H (change categories); ``docs/annotation.md``.

    Returns
    -------
    (list of str, list of str)
        Sorted change types (a subset of :data:`~automd_analysis.codebook.PAIR_CHANGES`)
        and at most four citations, preferring lines of ``later``.

    Examples
    --------
    >>> a = VersionCode({"model_families": ("gbdt",)}, {"models": ["HistGradientBoostingClassifier"],
    ...     "params": ["HistGradientBoostingClassifier.max_iter=100"]}, (("t.py", "m = H(max_iter=100)\\n"),))
    >>> b = VersionCode({"model_families": ("gbdt",)}, {"models": ["HistGradientBoostingClassifier"],
    ...     "params": ["HistGradientBoostingClassifier.max_iter=300"]}, (("t.py", "m = H(max_iter=300)\\n"),))
    >>> pair_changes(a, b)
    (['hyperparameter_tuning'], ['t.py:1'])
    """
    changes: set[str] = set()
    ea, eb = earlier.answers, later.answers
    sa, sb = earlier.signature, later.signature
    if ea.get("model_families") != eb.get("model_families"):
        changes.add("model_family")
    if (
        ea.get("ensembling") != eb.get("ensembling")
        or len(sa.get("models", [])) != len(sb.get("models", []))
        or sa.get("blend_weights") != sb.get("blend_weights")
    ):
        changes.add("ensembling")
    if sorted(sa.get("models", [])) == sorted(sb.get("models", [])) and sa.get("params") != sb.get(
        "params"
    ):
        changes.add("hyperparameter_tuning")
    if ea.get("probability_calibration") != eb.get("probability_calibration") or sa.get(
        "calibration"
    ) != sb.get("calibration"):
        changes.add("calibration")
    if ea.get("class_imbalance_handling") != eb.get("class_imbalance_handling"):
        changes.add("imbalance_handling")
    if ea.get("validation_design") != eb.get("validation_design"):
        changes.add("validation")
    removed, added = changed_lines(earlier.files, later.files)
    for _, _, text in removed + added:
        if _MODEL_WORDS.search(text):
            continue  # a model line: model family, ensembling or hyperparameters (above)
        if _ENSEMBLE_WORDS.search(text):
            changes.add("ensembling")
            continue
        if _PREPROCESSING.search(text):
            changes.add("preprocessing")
        elif _FEATURES.search(text):
            changes.add("feature_engineering")
        elif not changes & {
            "model_family",
            "ensembling",
            "calibration",
            "imbalance_handling",
            "validation",
        }:
            changes.add("other")
    cites = [f"{p}:{n}" for p, n, _ in added] or [f"{p}:{n}" for p, n, _ in removed]
    return sorted(changes), cites[:4]
