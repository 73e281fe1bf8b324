"""Property-based fuzzing of the annotator's inputs (issue 21): deep nesting of every construct,
huge expressions, surrogates and arbitrary text, odd file and module names, random bytes.

Whatever the input, the analyser returns codebook answers whose evidence cites existing lines of
the given files, and reasons (notes) instead of exceptions. CI runs the derandomised profile;
``make fuzz`` explores unseeded with more examples.
"""

from __future__ import annotations

import ast

from hypothesis import given
from hypothesis import strategies as st

from automd_analysis.annotate.code import annotate_sources, findings_by_file
from automd_analysis.annotate.parsing import MAX_NESTING, prune_deep
from automd_analysis.annotate.practices import TaskFacts
from automd_analysis.annotate.sources import decode_code
from automd_analysis.codebook import CODEBOOK

HEADER = (
    "import numpy as np\nimport pandas as pd\nimport torch\nfrom torch import nn\n"
    "from torch.utils.data import random_split\nfrom sklearn.linear_model import LogisticRegression\n"
)
#: Expression templates: each wraps the expression built so far.
WRAP = (
    "({}) + y",
    "f({})",
    "{}.attr",
    "{}[0]",
    "{}[1:k]",
    "{}[:, 0]",
    "[{}]",
    "({},)",
    "{{'k': {}}}",
    "-{}",
    "not {}",
    "({} if c else d)",
    "(lambda: {})",
    "{}(x=1)",
    "[v for v in {}]",
    "nn.BCEWithLogitsLoss(pos_weight={})",
    "random_split({}, [0.8, 0.2])",
    "np.mean({}, axis=0)",
    "LogisticRegression().fit({}, y).predict_proba(X)",
    "torch.sigmoid(model({}))",
)
#: Statement templates: each opens a block around what follows.
BLOCKS = (
    "if {}:",
    "for i in {}:",
    "while {}:",
    "with {} as w:",
    "def g(a={}):",
    "class C({}):",
    "try:\n{pad}    pass\n{pad}except {}:",
)
_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
_ODD = st.text(min_size=1, max_size=12)  # any code point, surrogates and NUL included
_TEXT = st.text(alphabet=st.characters(codec=None), max_size=40) | st.text(
    alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=4
)


@st.composite
def programs(draw) -> str:
    """A script with an expression nested up to 400 levels and blocks nested up to 110."""
    rnd = draw(st.randoms(use_true_random=False))
    leaf = draw(_NAME | st.integers().map(str) | _TEXT.map(repr))
    expr = leaf
    for _ in range(draw(st.integers(0, 400))):
        expr = rnd.choice(WRAP).format(expr)
    lines = [HEADER]
    depth = draw(st.integers(0, 110))
    for level in range(depth):
        pad = "    " * level
        lines.append(pad + rnd.choice(BLOCKS).format(f"n{level}", pad=pad))
    pad = "    " * depth
    lines.append(f"{pad}{draw(_NAME)} = {expr}")
    if draw(st.booleans()):
        lines.append(f"{pad}pd.DataFrame({{'p': {draw(_NAME)}}}).to_csv('submission.csv')")
    return "\n".join(lines) + "\n"


def _check(found: dict, trace, sources) -> None:
    n_lines = [t.count("\n") + (not t.endswith("\n")) for _, t in sources]
    for name, f in found.items():
        values = f.value if isinstance(f.value, tuple) else (f.value,)
        assert set(values) <= set(CODEBOOK[name].values), (name, f.value)
        for i, line in f.evidence:
            assert 0 <= i < len(sources) and 1 <= line <= n_lines[i]
    assert all(isinstance(n, str) for n in trace.notes)


@given(programs(), st.sampled_from(["classification", "survival", "sequential", None]))
def test_deeply_nested_and_huge_programs(code, kind):
    sources = [("train.py", code)]
    found, trace = annotate_sources(sources, TaskFacts(kind=kind))
    _check(found, trace, sources)


@given(st.lists(st.tuples(_NAME | _ODD, _TEXT | programs()), min_size=1, max_size=4))
def test_arbitrary_text_and_odd_file_names(files):
    paths = [
        f"{'/'.join(p for p in name.split('/') if p) or 'x'}_{i}.py"
        for i, (name, _) in enumerate(files)
    ]
    sources = [(p, text) for p, (_, text) in zip(paths, files, strict=True)]
    found, trace = annotate_sources(sources)
    _check(found, trace, sources)
    notes: list[str] = []
    report = findings_by_file(sources, None, notes)
    assert list(report) == paths


@given(st.lists(_NAME, min_size=1, max_size=6), st.lists(st.integers(0, 5), max_size=12))
def test_files_importing_each_other_in_any_pattern(names, edges):
    names = list(dict.fromkeys(names))
    texts = {n: [] for n in names}
    for a, b in zip(edges, edges[1:], strict=False):
        if a < len(names) and b < len(names):
            texts[names[a]].append(f"import {names[b]}\nfrom {names[b]} import *\n")
    sources = [(f"{n}.py", "".join(t) + "x = 1\n") for n, t in texts.items()]
    found, trace = annotate_sources(sources)
    _check(found, trace, sources)


@given(st.binary(max_size=400))
def test_any_bytes_decode_to_text_with_or_without_a_reason(data):
    text, why = decode_code(data)
    assert isinstance(text, str) and (why is None or isinstance(why, str))
    text.encode("utf-8")  # never a lone surrogate
    if why is None:
        assert "\ufffd" not in text or "\ufffd".encode() in data or b"\xef\xbf\xbd" in data


@given(st.lists(st.sampled_from(WRAP), min_size=1, max_size=300))
def test_pruned_trees_are_never_deeper_than_the_limit(wraps):
    expr = "x"
    for wrap in wraps:
        expr = wrap.format(expr)
    try:
        tree = ast.parse(f"y = {expr}\n")
    except (SyntaxError, RecursionError, MemoryError):
        return
    prune_deep(tree)
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.expr | ast.stmt):
            assert depth <= MAX_NESTING
        stack.extend((c, depth + 1) for c in ast.iter_child_nodes(node))
