"""Abstract interpretation of a version's Python files (parsed with :mod:`ast`, never executed).

The interpreter walks the module-level code of every entry file in statement order, follows calls
into the functions, methods and local modules of the version (context-sensitively: a function is
analysed once per call site and argument abstraction), and propagates :class:`~.values.Value`
labels through assignments, arithmetic, library calls and method calls. Library calls are resolved
through the imports and simple aliases of each file (``import x as y``, ``from a import b as c``,
attribute chains, ``name = library.Class``) to a key ``(root, name)`` looked up in
:mod:`.library`. What it records - model constructions and fits, predictions, calibrators,
resampling, splits, rank transforms, averaging, missing-value indicators, survival-target edits,
subgroup metrics, and the files written - is a :class:`Trace`, from which :mod:`.practices` derives
the codebook answers.

Approximations (documented in ``docs/annotation.md``): branches whose condition is not a literal
after constant propagation are both taken and their environments joined; loop bodies are
iterated until their environment stops changing (at most three times); attributes of objects are
flow-insensitive; the whole program is re-analysed while a model role or object attribute read
earlier in a pass changes later in it (at most four passes).

Labels (``Value.labels``) are tuples whose first item is a tag; ``docs/annotation.md`` lists
them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from automd_analysis.annotate import call_rules as cr
from automd_analysis.annotate import labels as lb
from automd_analysis.annotate import library as lib
from automd_analysis.annotate.hand_splits import HandSplits, offset_cut, selected_rows
from automd_analysis.annotate.library import words as _words
from automd_analysis.annotate.library_calls import LibraryCalls
from automd_analysis.annotate.parsing import MAX_NESTING, parse_code, prune_deep
from automd_analysis.annotate.rule_calls import RuleCalls
from automd_analysis.annotate.statement_forms import StatementForms
from automd_analysis.annotate.trace import ModelSite, SourceFile, Trace
from automd_analysis.annotate.values import EMPTY, NO, NONE, Value, join

__all__ = ["ModelSite", "SourceFile", "Trace", "analyse_program", "module_names"]

_FILE_EXT = re.compile(r"\.(csv|parquet|tsv|txt|npy|npz|feather|json|pkl)$", re.IGNORECASE)
_MAX_PASSES = 4
_MAX_DEPTH = 24
_MAX_STEPS = 400_000
#: Nested expression, block, call and import levels walked at once (each is 2-3 Python frames):
#: deeper code reads as unknown, far below the interpreter's recursion limit.
_MAX_NEST = 250
_LOOP_ITERATIONS = 3
_MAX_INT_BITS = 64
_BUILTINS = frozenset(
    _words(
        "len range list tuple sorted reversed set frozenset zip enumerate sum max min abs round float "
        "int str bool print isinstance issubclass hasattr callable open dict map filter getattr "
        "setattr super iter next type any all repr format vars id hash divmod pow"
    )
)


class _Budget(Exception):
    """The analysis exceeded its step budget (pathological or huge input)."""


@dataclass
class _Func:
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    module: _Module
    closure: _Frame | None
    defaults: list[Value]
    kw_defaults: dict[str, Value]
    cls: int | None = None


@dataclass
class _Class:
    name: str
    module: _Module
    bases: list[Value]
    methods: dict[str, int] = field(default_factory=dict)
    attrs: dict[str, Value] = field(default_factory=dict)
    neural: bool = False
    fields: list[str] = field(default_factory=list)
    span: tuple[int, int, int] = (-1, 0, 0)  # module, first and last line of the class body


class _Module:
    def __init__(self, index: int, name: str, tree: ast.Module | None):
        self.index = index
        self.name = name
        self.tree = tree
        self.env: dict[str, Value] = {}
        self.star_libs: list[str] = []
        self.state = "new"  # new | running | done


class _Frame:
    __slots__ = ("bound_at", "ctx", "env", "global_names", "loops", "module", "parent", "returns")

    def __init__(self, module: _Module, parent: _Frame | None, env: dict, ctx: tuple):
        self.module = module
        self.parent = parent
        self.env = env
        self.ctx = ctx
        self.loops: list[int] = []
        self.returns: list[Value] = []
        self.global_names: set[str] = set()
        self.bound_at: dict[str, int] = {}

    def multiplicity(self, name: str | None = None) -> int:
        """Trips of the loops around the current statement; with ``name``, only of the loops
        entered since ``name`` was last assigned (``total = 0`` inside the epoch loop, then
        ``total += ...`` in the batch loop: the batch loop only)."""
        out = 1
        start = self.bound_at.get(name, 0) if name is not None and name in self.env else 0
        for n in self.loops[start:]:
            out *= n
        return out


def module_names(paths: Sequence[str]) -> list[str]:
    """Dotted module names of files given by ``/``-separated paths relative to a common root.

    ``src/models.py`` -> ``src.models``, ``pkg/__init__.py`` -> ``pkg``.

    Examples
    --------
    >>> module_names(["train.py", "src/models.py", "pkg/__init__.py"])
    ['train', 'src.models', 'pkg']
    """
    out = []
    for p in paths:
        parts = [x for x in p.split("/") if x]
        if parts and parts[-1].endswith(".py"):
            parts[-1] = parts[-1][:-3]
        if parts and parts[-1] == "__init__":
            parts = parts[:-1]
        out.append(".".join(parts) or "__init__")
    return out


def _fraction(c) -> bool:
    return isinstance(c, float) and 0 < c < 1


def _column_of(target: ast.expr) -> int | None:
    """The literal column of ``a[rows, k]`` / ``a[:, k]``, else ``None``."""
    if not isinstance(target, ast.Subscript) or not isinstance(target.slice, ast.Tuple):
        return None
    last = target.slice.elts[-1] if target.slice.elts else None
    if isinstance(last, ast.Constant) and type(last.value) is int:
        return last.value
    return None


def _accumulator(target: ast.expr) -> str | None:
    """The variable an augmented assignment accumulates into: ``total``, or a whole column
    ``total[:, 0]`` (not rows ``oof[va_idx]``, which each fold writes once)."""
    if _column_of(target) is not None:
        rows = target.slice.elts[0]
        if not (isinstance(rows, ast.Slice) and rows.lower is None and rows.upper is None):
            return None
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


def analyse_program(
    files: Sequence[SourceFile],
    entries: Sequence[int] | None = None,
    *,
    parsed=None,
    task_kind: str | None = None,
) -> Trace:
    """Analyse the files of one version and return the :class:`Trace`.

    Parameters
    ----------
    files : sequence of SourceFile
    entries : sequence of int, optional
        Indices of the files run as scripts (``__name__ == "__main__"``); default all files.
    parsed : list of ast.Module or None, optional
        Already parsed trees (same order as ``files``); ``None`` items are parsed here. Trees
        deeper than :data:`~.parsing.MAX_NESTING` levels are cut there, in place.
    task_kind : str, optional
        The task kind; code that branches on a variable named like ``kind`` compared with
        ``"survival"``, ``"classification"`` or ``"sequential"`` then takes only that branch.

    Returns
    -------
    Trace

    See Also
    --------
    automd_analysis.annotate.practices.code_findings : codebook answers from the trace.

    References
    ----------
    The rules and labels are listed in ``docs/annotation.md``.

    Examples
    --------
    >>> code = "import lightgbm as lgb\\nm = lgb.LGBMClassifier(is_unbalance=True)\\n"
    >>> trace = analyse_program([SourceFile("train.py", "train", code)])
    >>> [(m.key, m.families, m.line, sorted(m.imbalance)) for m in trace.models.values()]
    [(('lightgbm', 'LGBMClassifier'), ('gbdt',), 2, ['class_weight'])]
    """
    interp = _Interpreter(files, parsed)
    interp.task_kind = task_kind
    return interp.run(range(len(files)) if entries is None else entries)


class _Interpreter(LibraryCalls, RuleCalls, HandSplits, StatementForms):
    def __init__(self, files: Sequence[SourceFile], parsed=None):
        self.trace = Trace(files=[f.path for f in files])
        self.modules: list[_Module] = []
        for i, f in enumerate(files):
            tree = parsed[i] if parsed is not None and i < len(parsed) else None
            if tree is None:
                tree, why = parse_code(f.text)
                if why is not None:
                    self.trace.notes.append(f"{f.path}: {why}")
            if tree is not None:
                cut = prune_deep(tree)
                if cut:
                    self.trace.notes.append(
                        f"{f.path}: code nested more than {MAX_NESTING} levels deep in {cut} "
                        "place(s) was read as unknown"
                    )
            self.modules.append(_Module(i, f.module, tree))
        self.by_name: dict[str, int] = {}
        ambiguous: set[str] = set()
        for m in self.modules:
            parts = m.name.split(".")
            for k in range(len(parts)):
                suffix = ".".join(parts[k:])
                if suffix in self.by_name and self.by_name[suffix] != m.index:
                    ambiguous.add(suffix)
                self.by_name.setdefault(suffix, m.index)
        for name in ambiguous:
            exact = [m.index for m in self.modules if m.name == name]
            if exact:
                self.by_name[name] = exact[0]
            else:
                del self.by_name[name]
        # persistent across passes
        self.model_ids: dict[tuple, int] = {}
        self.func_ids: dict[int, int] = {}
        self.funcs: list[_Func] = []
        self.class_ids: dict[int, int] = {}
        self.classes: list[_Class] = []
        self.lambdas: dict[int, int] = {}
        self.heap: dict[tuple[int, str], Value] = {}
        self.eids: dict[tuple[int, int], int] = {}
        self.trainers: dict = {}
        self.task_kind: str | None = None
        self.handlers = self._expression_handlers()
        self.stmt_handlers = self._statement_handlers()

    # ------------------------------------------------------------------ driver

    def run(self, entries) -> Trace:
        entries = list(entries)
        for _ in range(_MAX_PASSES):
            self._start_pass()
            try:
                for i in entries:
                    if self.modules[i].tree is not None:
                        self._run_module(i, as_main=True)
                self._run_unreached()
                self.finish_hand_splits()
            except _Budget:
                self.trace.notes.append("analysis stopped: step budget exceeded")
                break
            except RecursionError:  # a last resort: the nesting limits should prevent it
                self.trace.notes.append("analysis stopped: code nested too deeply")
                break
            if not self.stale:
                break
        return self.trace

    def _start_pass(self) -> None:
        self.trace.events = {}
        self.trace.sinks = []
        for m in self.trace.models.values():
            m.reached = False
        for m in self.modules:
            m.env = {}
            m.state = "new"
            m.star_libs = []
        self.memo: dict[tuple, Value] = {}
        self.active: set[tuple] = set()
        self.called: set[int] = set()
        self.role_reads: set[int] = set()
        self.heap_reads: set[tuple[int, str]] = set()
        self.stale = False
        self.too_deep = False
        self.reached = True
        self.depth = 0
        self.steps = 0
        self.nest = 0
        self.call_inputs: dict[int, set] = {}
        self.start_hand_splits()
        self.start_statement_forms()

    def _run_module(self, index: int, as_main: bool) -> _Module:
        mod = self.modules[index]
        if mod.tree is None or mod.state == "running":
            return mod
        if mod.state == "done" and not as_main:
            return mod
        mod.state = "running"
        mod.env["__name__"] = Value(const="__main__" if as_main else mod.name)
        frame = _Frame(mod, None, mod.env, ())
        if self._enter(frame, mod.tree):
            try:
                self._block(mod.tree.body, frame)
                if as_main:
                    self.run_entry_points()
            finally:
                self.nest -= 1
        mod.state = "done"
        return mod

    def _run_unreached(self) -> None:
        self.reached = False
        seen = -1
        while seen != len(self.funcs):
            seen = len(self.funcs)
            for fid in range(seen):
                if fid in self.called:
                    continue
                f = self.funcs[fid]
                args = []
                if f.cls is not None:
                    args = [Value(frozenset({("obj", f.cls)}))]
                self._call_function(fid, args, {}, f.node, None)
        self.reached = True

    # ------------------------------------------------------------------ helpers

    def _tick(self) -> None:
        self.steps += 1
        if self.steps > _MAX_STEPS:
            raise _Budget

    def _enter(self, frame: _Frame | None, node) -> bool:
        """One nesting level deeper; ``False`` (and a note, once) past :data:`_MAX_NEST`."""
        if self.nest >= _MAX_NEST:
            if not self.too_deep:
                self.too_deep = True
                where = self.trace.files[frame.module.index] if frame is not None else "?"
                self.trace.notes.append(
                    f"{where}:{getattr(node, 'lineno', 1)}: calls, blocks and expressions "
                    f"nested more than {_MAX_NEST} levels deep were read as unknown"
                )
            return False
        self.nest += 1
        return True

    def eid(self, frame: _Frame | None, node: ast.AST) -> int:
        mod = frame.module.index if frame is not None else 0
        key = (mod, getattr(node, "lineno", 1))
        e = self.eids.get(key)
        if e is None:
            e = len(self.trace.evidence)
            self.eids[key] = e
            self.trace.evidence.append(key)
        return e

    def event(self, kind: str, detail, eid: int) -> None:
        key = (kind, detail, eid)
        self.trace.events[key] = self.trace.events.get(key, False) or self.reached

    def mark(self, kind: str, frame: _Frame | None, node: ast.AST, *extra) -> tuple:
        """A construct label (blend, foldavg, rank, cal), also recorded as an event."""
        e = self.eid(frame, node)
        self.event(kind, None, e)
        return (kind, e, *extra)

    def model(self, key, families, frame: _Frame, node: ast.AST) -> int:
        site = (frame.module.index, node.lineno, node.col_offset, frame.ctx)
        mid = self.model_ids.get(site)
        if mid is None:
            mid = len(self.model_ids)
            self.model_ids[site] = mid
            self.trace.models[mid] = ModelSite(
                mid, key, tuple(families), frame.module.index, node.lineno
            )
        m = self.trace.models[mid]
        m.reached = m.reached or self.reached
        return mid

    def set_role(self, mid: int, role: str) -> None:
        m = self.trace.models[mid]
        if role not in m.roles:
            m.roles.add(role)
            if mid in self.role_reads:
                self.stale = True

    def roles(self, mid: int) -> set[str]:
        self.role_reads.add(mid)
        return self.trace.models[mid].roles

    def lookup(self, name: str, frame: _Frame) -> Value:
        f = frame
        while f is not None:
            v = f.env.get(name)
            if v is not None:
                return v
            f = f.parent
        v = frame.module.env.get(name)
        if v is not None:
            return v
        if name in _BUILTINS:
            return Value(frozenset({("builtin", name)}))
        if name == "__name__":
            return Value(const=frame.module.name)
        for star in frame.module.star_libs:
            return Value(frozenset({("lib", f"{star}.{name}")}))
        return EMPTY

    def assign_name(self, name: str, value: Value, frame: _Frame) -> None:
        if name in frame.global_names:
            frame.module.env[name] = join([frame.module.env.get(name, EMPTY), value])
        else:
            frame.env[name] = value

    # ------------------------------------------------------------------ statements

    def _statement_handlers(self):
        return {
            ast.Assign: self._s_assign,
            ast.AnnAssign: self._s_annassign,
            ast.AugAssign: self._s_augassign,
            ast.Expr: lambda n, f: self.expr(n.value, f),
            ast.Return: self._s_return,
            ast.If: self._s_if,
            ast.For: self._s_for,
            ast.AsyncFor: self._s_for,
            ast.While: self._s_while,
            ast.With: self._s_with,
            ast.AsyncWith: self._s_with,
            ast.Try: self._s_try,
            ast.TryStar: self._s_try,
            ast.FunctionDef: self._s_def,
            ast.AsyncFunctionDef: self._s_def,
            ast.ClassDef: self._s_class,
            ast.Import: self._s_import,
            ast.ImportFrom: self._s_importfrom,
            ast.Global: self._s_global,
            ast.Nonlocal: self._s_global,
            ast.Match: self._s_match,
            **self.statement_form_handlers(),
        }

    def _block(self, stmts: list[ast.stmt], frame: _Frame) -> None:
        if not stmts or not self._enter(frame, stmts[0]):
            return
        handlers = self.stmt_handlers
        try:
            for s in stmts:
                self._tick()
                h = handlers.get(type(s))
                if h is not None:
                    h(s, frame)
        finally:
            self.nest -= 1

    def _s_assign(self, node: ast.Assign, frame: _Frame) -> None:
        value = self.expr(node.value, frame)
        for target in node.targets:
            self.bind(target, value, frame, node)

    def _s_annassign(self, node: ast.AnnAssign, frame: _Frame) -> None:
        if node.value is not None:
            self.bind(node.target, self.expr(node.value, frame), frame, node)

    def _s_augassign(self, node: ast.AugAssign, frame: _Frame) -> None:
        current = self.expr(node.target, frame)
        rhs = self.expr(node.value, frame)
        column = _column_of(node.target)
        # a column of an array accumulates on its own, not with the array's other columns
        left = EMPTY if column is not None else current
        new = self.binop(node.op, left, rhs, node, frame, node.target, node.value)
        name = _accumulator(node.target)
        if (
            isinstance(node.op, ast.Add)
            and name is not None
            and rhs.has("src")
            and frame.multiplicity(name) > 1
        ):
            new = new.with_labels({self.mark("foldavg", frame, node)})
        if isinstance(node.target, ast.Name):
            self.assign_name(node.target.id, join([current, new]).plain(), frame)
        else:
            self.bind(node.target, new, frame, node)

    def _s_return(self, node: ast.Return, frame: _Frame) -> None:
        frame.returns.append(self.expr(node.value, frame) if node.value is not None else NONE)

    def _branch(self, frame: _Frame, bodies: list[list[ast.stmt]]) -> None:
        base = frame.env
        outs = []
        for body in bodies:
            frame.env = dict(base)
            self._block(body, frame)
            outs.append(frame.env)
        frame.env = lb.merge_envs(outs)

    def _truth(self, v: Value) -> bool | None:
        if v.const is NO:
            return None
        try:
            return bool(v.const)
        except Exception:
            return None

    def _s_if(self, node: ast.If, frame: _Frame) -> None:
        test = self._truth(self.expr(node.test, frame))
        if test is True:
            self._block(node.body, frame)
        elif test is False:
            self._block(node.orelse, frame)
        else:
            self._branch(frame, [node.body, node.orelse])

    def _loop(self, frame: _Frame, body, bind) -> None:
        before = frame.env
        frame.env = dict(before)
        envs = [before]
        previous = None
        for _ in range(_LOOP_ITERATIONS):
            bind()
            self._block(body, frame)
            snapshot = {k: v.labels for k, v in frame.env.items()}
            if snapshot == previous:
                break
            previous = snapshot
            envs.append(dict(frame.env))
        frame.env = lb.merge_envs([*envs, frame.env])

    def _s_for(self, node: ast.For, frame: _Frame) -> None:
        it = self.expr(node.iter, frame)
        element = it.element()
        n = len(it.items) if it.items is not None else 2
        if it.items is None and (it.has("batches") or (it.has("split") and lb.holdout_only(it))):
            n = 1  # mini-batches of one data set, or the one split of a holdout: not folds
        frame.loops.append(n)
        try:
            if n > 0:
                self._loop(frame, node.body, lambda: self.bind(node.target, element, frame, node))
        finally:
            frame.loops.pop()
        self._block(node.orelse, frame)

    def _s_while(self, node: ast.While, frame: _Frame) -> None:
        if self._truth(self.expr(node.test, frame)) is False:
            self._block(node.orelse, frame)
            return
        frame.loops.append(2)
        try:
            self._loop(frame, node.body, lambda: self.expr(node.test, frame))
        finally:
            frame.loops.pop()
        self._block(node.orelse, frame)

    def _s_with(self, node: ast.With, frame: _Frame) -> None:
        for item in node.items:
            v = self.expr(item.context_expr, frame)
            if item.optional_vars is not None:
                self.bind(item.optional_vars, v, frame, node)
        self._block(node.body, frame)

    def _s_try(self, node: ast.Try, frame: _Frame) -> None:
        self._block(node.body, frame)
        if node.handlers:
            bodies = [node.orelse]
            for h in node.handlers:
                if h.type is not None:
                    self.expr(h.type, frame)
                if h.name:
                    frame.env[h.name] = EMPTY
                bodies.append(h.body)
            self._branch(frame, bodies)
        else:
            self._block(node.orelse, frame)
        self._block(node.finalbody, frame)

    def _s_match(self, node: ast.Match, frame: _Frame) -> None:
        self.expr(node.subject, frame)
        for case in node.cases:
            self.guard(case, frame)
        self._branch(frame, [c.body for c in node.cases] + [[]])

    def _s_global(self, node, frame: _Frame) -> None:
        if frame.parent is not None or frame.env is not frame.module.env:
            frame.global_names.update(node.names)

    def _s_def(self, node, frame: _Frame) -> None:
        fid = self.define_function(node, frame)
        fv = self.decorate(node, Value(frozenset({("func", fid)})), frame)
        self.assign_name(node.name, fv, frame)

    def define_function(self, node, frame: _Frame, cls: int | None = None) -> int:
        args = node.args
        defaults = [self.expr(d, frame) for d in args.defaults]
        kw_defaults = {
            a.arg: self.expr(d, frame)
            for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
            if d is not None
        }
        fid = self.func_ids.get(id(node))
        closure = frame if frame.parent is not None or frame.env is not frame.module.env else None
        if isinstance(closure, _Frame) and closure.env is closure.module.env:
            closure = None
        f = _Func(node, frame.module, closure, defaults, kw_defaults, cls)
        if fid is None:
            fid = len(self.funcs)
            self.func_ids[id(node)] = fid
            self.funcs.append(f)
        else:
            self.funcs[fid] = f
        return fid

    def _s_class(self, node: ast.ClassDef, frame: _Frame) -> None:
        bases = [self.expr(b, frame) for b in node.bases]
        for k in node.keywords:
            self.expr(k.value, frame)
        cid = self.class_ids.get(id(node))
        if cid is None:
            cid = len(self.classes)
            self.class_ids[id(node)] = cid
            self.classes.append(_Class(node.name, frame.module, bases))
        cls = self.classes[cid]
        cls.bases = bases
        cls.span = (
            frame.module.index,
            node.lineno,
            getattr(node, "end_lineno", None) or node.lineno,
        )
        cls.neural = any(
            lib.symbol_key(q) in lib.NEURAL_BASES for b in bases for _, q in b.of("lib")
        ) or any(self.classes[c].neural for b in bases for _, c in b.of("class"))
        body_frame = _Frame(frame.module, frame.parent, {}, frame.ctx)
        cls.fields = [
            s.target.id
            for s in node.body
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
        ]
        for stmt in node.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                for dec in stmt.decorator_list:
                    self.expr(dec, body_frame)
                cls.methods[stmt.name] = self.define_function(stmt, frame, cid)
            else:
                self._block([stmt], body_frame)
        for name, v in body_frame.env.items():
            cls.attrs[name] = v
        self.assign_name(
            node.name, self.decorate(node, Value(frozenset({("class", cid)})), frame), frame
        )

    def lineage(self, cid: int):
        """Class ``cid`` and its local base classes, depth-first (iterative: a chain of
        thousands of subclasses is no recursion)."""
        todo, seen = [cid], set()
        while todo:
            c = todo.pop()
            if c in seen:
                continue
            seen.add(c)
            yield self.classes[c]
            todo.extend(
                reversed([b for base in self.classes[c].bases for _, b in base.of("class")])
            )

    def method_of(self, cid: int, name: str) -> int | None:
        """The method ``name`` of class ``cid`` or of its first base that has it."""
        return next((cls.methods[name] for cls in self.lineage(cid) if name in cls.methods), None)

    # imports ---------------------------------------------------------------

    def _local_module(self, dotted: str) -> int | None:
        return self.by_name.get(dotted)

    def _module_value(self, dotted: str) -> Value:
        idx = self._local_module(dotted)
        if idx is not None:
            self._run_module(idx, as_main=False)
            return Value(frozenset({("module", idx)}))
        return Value(frozenset({("lib", dotted)}))

    def _s_import(self, node: ast.Import, frame: _Frame) -> None:
        for alias in node.names:
            if alias.asname:
                self.assign_name(alias.asname, self._module_value(alias.name), frame)
            else:
                top = alias.name.split(".")[0]
                if self._local_module(alias.name) is not None:
                    self._module_value(alias.name)
                self.assign_name(top, self._module_value(top), frame)

    def _s_importfrom(self, node: ast.ImportFrom, frame: _Frame) -> None:
        module = node.module or ""
        if node.level:
            package = frame.module.name.split(".")
            package = package[: max(0, len(package) - node.level)]
            module = ".".join([*package, module] if module else package)
        idx = self._local_module(module) if module else None
        for alias in node.names:
            bound = alias.asname or alias.name
            if alias.name == "*":
                if idx is not None:
                    env = self._run_module(idx, as_main=False).env
                    for k, v in env.items():
                        if not k.startswith("_"):
                            self.assign_name(k, v, frame)
                else:
                    frame.module.star_libs.append(module)
                continue
            if idx is not None:
                env = self._run_module(idx, as_main=False).env
                v = env.get(alias.name)
                if v is None:
                    v = self._module_value(f"{module}.{alias.name}")
                self.assign_name(bound, v, frame)
            elif module and self._local_module(f"{module}.{alias.name}") is not None:
                self.assign_name(bound, self._module_value(f"{module}.{alias.name}"), frame)
            elif not module and self._local_module(alias.name) is not None:
                self.assign_name(bound, self._module_value(alias.name), frame)
            else:
                name = f"{module}.{alias.name}" if module else alias.name
                self.assign_name(bound, Value(frozenset({("lib", name)})), frame)

    # binding -----------------------------------------------------------------

    def bind(self, target: ast.expr, value: Value, frame: _Frame, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            value = self._named_target(target.id, value, frame, node)
            self.assign_name(target.id, value, frame)
            frame.bound_at[target.id] = len(frame.loops)
        elif isinstance(target, ast.Tuple | ast.List):
            elts = target.elts
            starred = any(isinstance(e, ast.Starred) for e in elts)
            if value.items is not None and not starred and len(value.items) == len(elts):
                for t, v in zip(elts, value.items, strict=True):
                    self.bind(t, v.with_labels(value.labels & lb.split_labels(value)), frame, node)
            else:
                part = Value(value.labels)
                for t in elts:
                    self.bind(t.value if isinstance(t, ast.Starred) else t, part, frame, node)
        elif isinstance(target, ast.Subscript):
            idx = self.expr(target.slice, frame)
            key = idx.const
            if isinstance(key, str):
                value = self._named_target(key, value, frame, node)
            extra = value.labels | lb.index_labels(idx)
            if _column_of(target) is not None and value.has("src"):
                # predictions of another model written into a column: a matrix of predictions
                held = {lab for lab in self.expr(target.value, frame).labels if lab[0] == "src"}
                if held and not set(value.of("src")) <= held:
                    extra = extra | {("cols",)}
            self._update_container(target.value, extra, frame, key=key, item=value)
        elif isinstance(target, ast.Attribute):
            base = self.expr(target.value, frame)
            stored = False
            for _, cid in base.of("obj"):
                self._heap_write(cid, target.attr, value)
                stored = True
            if not stored:
                self._update_container(target.value, value.labels, frame)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, value, frame, node)

    def _named_target(self, name: str, value: Value, frame: _Frame, node: ast.AST) -> Value:
        """Survival heuristics on the name a value is stored under (an event column of ones)."""
        if lib.EVENT_COLUMN.match(name) and (
            value.has("ones") or (value.const == 1 and not isinstance(value.const, bool))
        ):
            return value.with_labels({("forcedevent", self.eid(frame, node)), ("event",)})
        return value

    def _heap_write(self, cid: int, attr: str, value: Value) -> None:
        key = (cid, attr)
        old = self.heap.get(key)
        new = value if old is None else join([old, value])
        if old is None or new != old:
            self.heap[key] = new
            if key in self.heap_reads:
                self.stale = True

    def _update_container(
        self, target: ast.expr, labels: frozenset, frame: _Frame, key=NO, item: Value | None = None
    ) -> None:
        """Weak update of the object an item or attribute of which is assigned."""
        if isinstance(target, ast.Name):
            old = self.lookup(target.id, frame)
            keys = old.keys
            if isinstance(key, str | int) and not isinstance(key, bool) and item is not None:
                entries = dict(keys or ())
                entries[key] = item
                keys = tuple(entries.items())
            new = Value(old.labels | labels, old.items, keys)
            self.assign_name(target.id, new, frame)
        elif isinstance(target, ast.Attribute):
            base = self.expr(target.value, frame)
            done = False
            for _, cid in base.of("obj"):
                old = self._heap_read(cid, target.attr)
                self._heap_write(cid, target.attr, old.with_labels(labels))
                done = True
            if not done:
                self._update_container(target.value, labels, frame)
        elif isinstance(target, ast.Subscript):
            self._update_container(target.value, labels, frame)

    def _heap_read(self, cid: int, attr: str) -> Value:
        self.heap_reads.add((cid, attr))
        return self.heap.get((cid, attr), EMPTY)

    # ------------------------------------------------------------------ expressions

    def _expression_handlers(self):
        return {
            ast.Constant: self._e_constant,
            ast.Name: lambda n, f: self.lookup(n.id, f),
            ast.Attribute: self._e_attribute,
            ast.Subscript: self._e_subscript,
            ast.BinOp: self._e_binop,
            ast.UnaryOp: self._e_unaryop,
            ast.BoolOp: self._e_boolop,
            ast.Compare: self._e_compare,
            ast.Call: self._e_call,
            ast.IfExp: self._e_ifexp,
            ast.Lambda: self._e_lambda,
            ast.List: self._e_sequence,
            ast.Tuple: self._e_sequence,
            ast.Set: self._e_sequence,
            ast.Dict: self._e_dict,
            ast.ListComp: self._e_comprehension,
            ast.SetComp: self._e_comprehension,
            ast.GeneratorExp: self._e_comprehension,
            ast.DictComp: self._e_comprehension,
            ast.JoinedStr: self._e_joinedstr,
            ast.FormattedValue: self._e_formatted,
            ast.Starred: lambda n, f: self.expr(n.value, f),
            ast.NamedExpr: self._e_namedexpr,
            ast.Await: lambda n, f: self.expr(n.value, f),
            ast.Yield: self._e_yield,
            ast.YieldFrom: self._e_yield,
            ast.Slice: self._e_slice,
        }

    def expr(self, node: ast.expr | None, frame: _Frame) -> Value:
        if node is None:
            return NONE
        self._tick()
        h = self.handlers.get(type(node))
        if h is None or not self._enter(frame, node):
            return EMPTY
        try:
            return h(node, frame)
        finally:
            self.nest -= 1

    def _e_constant(self, node: ast.Constant, frame: _Frame) -> Value:
        v = node.value
        if isinstance(v, str):
            if len(v) > 200:
                return EMPTY
            if _FILE_EXT.search(v):
                return Value(frozenset({("fname", v.lower())}), const=v)
            return Value(const=v)
        if isinstance(v, int) and v.bit_length() > _MAX_INT_BITS:
            return EMPTY  # thousands of digits: no constant worth propagating (nor printable)
        if isinstance(v, bool | int | float) or v is None:
            return Value(const=v)
        return EMPTY

    def _e_joinedstr(self, node: ast.JoinedStr, frame: _Frame) -> Value:
        labels = set()
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                if _FILE_EXT.search(part.value):
                    labels.add(("fname", part.value.lower()))
            else:
                self.expr(part, frame)
        return Value(frozenset(labels))

    def _e_formatted(self, node: ast.FormattedValue, frame: _Frame) -> Value:
        if node.format_spec is not None:
            self.expr(node.format_spec, frame)
        return self.expr(node.value, frame)

    def _e_slice(self, node: ast.Slice, frame: _Frame) -> Value:
        """A slice inside a tuple index (``a[:k, 1:]``): its bounds are walked, it is no key."""
        for part in (node.lower, node.upper, node.step):
            if part is not None:
                self.expr(part, frame)
        return EMPTY

    def _e_namedexpr(self, node: ast.NamedExpr, frame: _Frame) -> Value:
        v = self.expr(node.value, frame)
        self.bind(node.target, v, frame, node)
        return v

    def _e_yield(self, node, frame: _Frame) -> Value:
        v = self.expr(node.value, frame) if node.value is not None else NONE
        frame.returns.append(v)
        return EMPTY

    def _e_attribute(self, node: ast.Attribute, frame: _Frame) -> Value:
        base = self.expr(node.value, frame)
        return self.attribute(base, node.attr, frame, node)

    def attribute(self, base: Value, attr: str, frame: _Frame, node: ast.AST) -> Value:
        out = []
        data = set()
        for lab in base.labels:
            tag = lab[0]
            if tag == "lib":
                out.append(Value(frozenset({("lib", f"{lab[1]}.{attr}")})))
            elif tag == "module":
                mod = self.modules[lab[1]]
                v = mod.env.get(attr)
                if v is None and self._local_module(f"{mod.name}.{attr}") is not None:
                    v = self._module_value(f"{mod.name}.{attr}")
                if v is not None:
                    out.append(v)
            elif tag == "obj":
                cid = lab[1]
                out.append(self._heap_read(cid, attr))
                cls = self.classes[cid]
                if attr in cls.attrs:
                    out.append(cls.attrs[attr])
                if self.method_of(cid, attr) is not None:
                    out.append(Value(frozenset({("bmethod", cid, attr)})))
            elif tag == "class":
                cls = self.classes[lab[1]]
                if attr in cls.attrs:
                    out.append(cls.attrs[attr])
                m = self.method_of(lab[1], attr)
                if m is not None:
                    out.append(Value(frozenset({("func", m)})))
            elif tag in ("model", "ulib", "rng", "sampler", "splitter", "rankobj", "file") or (
                tag not in lb.OBJECT_TAGS
            ):
                data.add(lab)
        if data:
            extra = lb.column_labels(attr, self, frame, node)
            out.append(Value(frozenset(data) | extra))
        elif not out:
            extra = lb.column_labels(attr, self, frame, node)
            if extra:
                out.append(Value(extra))
        return join(out) if out else EMPTY

    def _e_subscript(self, node: ast.Subscript, frame: _Frame) -> Value:
        base = self.expr(node.value, frame)
        sl = node.slice
        if isinstance(sl, ast.Slice):
            bounds = [
                EMPTY if b is None else self.expr(b, frame) for b in (sl.lower, sl.upper, sl.step)
            ]
            base = self.slice_split(node, base, bounds, frame)
            idx = EMPTY
        else:
            idx = self.expr(sl, frame)
        key = idx.const
        if key is not NO:
            found = base.key(key)
            if found is not None:
                return found
            if (
                base.items is not None
                and isinstance(key, int)
                and not isinstance(key, bool)
                and -len(base.items) <= key < len(base.items)
            ):
                return base.items[key].with_labels(base.labels & lb.split_labels(base))
        labels = {lab for lab in base.labels if lab[0] not in ("lib", "module", "class", "func")}
        labels |= lb.index_labels(idx) | selected_rows(base, idx)
        if isinstance(key, str):
            labels |= lb.column_labels(key, self, frame, node)
        return Value(frozenset(labels))

    def _e_sequence(self, node, frame: _Frame) -> Value:
        values = [self.expr(e, frame) for e in node.elts]
        labels = frozenset().union(*(v.labels for v in values)) if values else frozenset()
        starred = any(isinstance(e, ast.Starred) for e in node.elts)
        return Value(labels, None if starred else tuple(values))

    def _e_dict(self, node: ast.Dict, frame: _Frame) -> Value:
        keys: dict[object, Value] = {}
        labels: set = set()
        known = True
        consts = []
        for k, v in zip(node.keys, node.values, strict=True):
            val = self.expr(v, frame)
            labels |= val.labels
            if k is None:  # **other
                if val.keys is not None:
                    keys.update(dict(val.keys))
                else:
                    known = False
                continue
            kv = self.expr(k, frame)
            if kv.const is NO or isinstance(kv.const, float):
                known = False
            else:
                keys[kv.const] = val
                consts.append(kv.const)
        if consts and set(consts) <= {0, 1, "0", "1"} and len(consts) == 2:
            labels.add(("classcond",))
        return Value(frozenset(labels), None, tuple(keys.items()) if known else None)

    def _e_comprehension(self, node, frame: _Frame) -> Value:
        inner = _Frame(frame.module, frame, {}, frame.ctx)
        inner.loops = list(frame.loops)
        mult = 1
        for gen in node.generators:
            it = self.expr(gen.iter, inner)
            mult *= len(it.items) if it.items is not None else 2
            self.bind(gen.target, it.element(), inner, node)
            for cond in gen.ifs:
                self.expr(cond, inner)
        inner.loops.append(mult)
        if isinstance(node, ast.DictComp):
            k = self.expr(node.key, inner)
            v = self.expr(node.value, inner)
            return Value(k.labels | v.labels)
        v = self.expr(node.elt, inner)
        return Value(v.labels)

    def _e_ifexp(self, node: ast.IfExp, frame: _Frame) -> Value:
        test = self._truth(self.expr(node.test, frame))
        if test is True:
            return self.expr(node.body, frame)
        if test is False:
            return self.expr(node.orelse, frame)
        return join([self.expr(node.body, frame), self.expr(node.orelse, frame)])

    def _e_lambda(self, node: ast.Lambda, frame: _Frame) -> Value:
        fid = self.define_function(node, frame)
        return Value(frozenset({("func", fid)}))

    def _e_unaryop(self, node: ast.UnaryOp, frame: _Frame) -> Value:
        v = self.expr(node.operand, frame)
        if v.const is not NO:
            try:
                if isinstance(node.op, ast.Not):
                    return Value(const=not v.const)
                if isinstance(node.op, ast.USub) and isinstance(v.const, int | float):
                    return Value(const=-v.const)
            except Exception:
                return EMPTY
        if isinstance(node.op, ast.Invert | ast.Not):
            self.invert_time_mask(v)
            if v.has("event"):
                return Value(v.labels | {("censind",)})
        return v.plain()

    def _e_boolop(self, node: ast.BoolOp, frame: _Frame) -> Value:
        values = [self.expr(v, frame) for v in node.values]
        truths = [self._truth(v) for v in values]
        if all(t is not None for t in truths):
            if isinstance(node.op, ast.And):
                return Value(const=all(truths))
            return Value(const=any(truths))
        return Value(frozenset().union(*(v.labels for v in values)))

    def _e_compare(self, node: ast.Compare, frame: _Frame) -> Value:
        left = self.expr(node.left, frame)
        rights = [self.expr(c, frame) for c in node.comparators]
        values = [left, *rights]
        folded = lb.fold_compare(node.ops, values)
        if folded is NO and self.task_kind is not None:
            folded = lb.fold_kind(node, values, self.task_kind)
        if folded is not NO:
            return Value(const=folded)
        labels = set().union(*(v.labels for v in values))
        labels = {lab for lab in labels if lab[0] not in lb.OBJECT_TAGS or lab[0] == "model"}
        op = node.ops[0]
        consts = [v.const for v in rights if v.const is not NO]
        labels |= self.time_mask(node, values, frame)
        if left.has("randval") and any(_fraction(c) for c in consts):
            # rng.random(n) < 0.8: a mask of rows drawn at random, wherever it is stored
            labels |= {("randmask", *lab[1:]) for lab in left.of("randval")}
        if (
            isinstance(op, ast.Eq | ast.NotEq)
            and any(c in (0, 1) for c in consts)
            and not left.has("randval")
        ):
            labels.add(("classcond",))
            if left.has("event") and (
                (isinstance(op, ast.Eq) and 0 in consts)
                or (isinstance(op, ast.NotEq) and 1 in consts)
            ):
                labels.add(("censind",))
        if left.has("dur"):
            if isinstance(op, ast.Lt | ast.LtE):
                labels.add(("durle", self.eid(frame, node)))
            elif isinstance(op, ast.Gt | ast.GtE):
                labels.add(("durgt", self.eid(frame, node)))
        if any(v.has("foldid") for v in values) and isinstance(op, ast.Eq | ast.NotEq):
            e = self.eid(frame, node)
            labels = {lab for lab in labels if lab[0] != "foldid"}
            labels.add(("split", ("kfold_cv",), e))
            self.event("foldsplit", "kfold_cv", e)
        if any(v.has("site") for v in values) and isinstance(
            op, ast.Eq | ast.NotEq | ast.In | ast.NotIn
        ):
            labels.add(("sitemask", self.eid(frame, node)))
        return Value(frozenset(labels))

    def _e_binop(self, node: ast.BinOp, frame: _Frame) -> Value:
        left = self.expr(node.left, frame)
        right = self.expr(node.right, frame)
        return self.binop(node.op, left, right, node, frame, node.left, node.right)

    def binop(self, op, left: Value, right: Value, node, frame, lnode, rnode) -> Value:
        folded = lb.fold_binop(op, left.const, right.const)
        if folded is not NO:
            return Value(const=folded)
        labels = set(left.labels | right.labels)
        labels = {lab for lab in labels if lab[0] not in lb.OBJECT_TAGS} | offset_cut(
            op, left, right
        )
        lsrc, rsrc = set(left.of("src")), set(right.of("src"))
        if isinstance(op, ast.Add) and lsrc and rsrc and lsrc != rsrc:
            labels.add(self.mark("blend", frame, node))
        elif isinstance(op, ast.Div):
            if left.has("src") and lb.one_minus(rnode, self, frame):
                labels.add(("odds", self.eid(frame, node)))
            elif left.has("oddsx") and (right.has("oddsx") or right.has("odds")):
                labels.add(self.mark("cal", frame, node, "prevalence"))
            elif (left.has("src") or left.has("logit")) and lb.temperature_name(rnode):
                labels.add(self.mark("cal", frame, node, "temperature"))
        elif isinstance(op, ast.Mult):
            for a, b in ((left, right), (right, left)):
                if a.has("odds") and b.const != 1:
                    labels.add(("oddsx", self.eid(frame, node)))
                if a.has("logit") and not b.has("src"):
                    labels.add(("logitx", self.eid(frame, node)))
                if isinstance(a.const, float) and 0 < a.const < 1:
                    labels.add(("frac",))  # 0.8 * len(X): a share of the rows
        elif isinstance(op, ast.Mod):
            k = right.const
            if isinstance(k, int) and not isinstance(k, bool) and 2 <= k <= 100:
                labels.add(("foldid", k))
        elif isinstance(op, ast.Sub):
            if left.const == 1 and right.has("event"):
                labels.add(("censind",))
        elif isinstance(op, ast.BitAnd):
            if (left.has("durle") and right.has("event")) or (
                right.has("durle") and left.has("event")
            ):
                labels.add(("horizon", self.eid(frame, node)))
        elif isinstance(op, ast.BitOr):
            if (left.has("durgt") and right.has("event")) or (
                right.has("durgt") and left.has("event")
            ):
                labels.add(("known", self.eid(frame, node)))
            if left.keys is not None and right.keys is not None:
                merged = dict(left.keys)
                merged.update(dict(right.keys))
                return Value(frozenset(labels), None, tuple(merged.items()))
        if (
            isinstance(op, ast.FloorDiv | ast.Div)
            and isinstance(right.const, int)
            and not isinstance(right.const, bool)
            and right.const >= 2
        ):
            labels.add(("frac",))  # len(X) // 5: a share of the rows
        if isinstance(op, ast.Div | ast.FloorDiv | ast.Mod) and not left.has("missflag"):
            # counts of observed values used as a divisor (a mean) are not indicator features
            labels = {lab for lab in labels if lab[0] != "missflag"}
        return Value(frozenset(labels))

    # ------------------------------------------------------------------ calls

    def _e_call(self, node: ast.Call, frame: _Frame) -> Value:
        args: list[Value] = []
        for a in node.args:
            v = self.expr(a, frame)
            if isinstance(a, ast.Starred) and v.items is not None:
                args.extend(v.items)
            else:
                args.append(v)
        kwargs: dict[str, Value] = {}
        for k in node.keywords:
            v = self.expr(k.value, frame)
            if k.arg is not None:
                kwargs[k.arg] = v
            elif v.keys is not None:
                for key, val in v.keys:
                    if isinstance(key, str):
                        kwargs[key] = val
                if v.labels:
                    kwargs["**"] = Value(v.labels)
            else:
                kwargs["**"] = v
        func = node.func
        if isinstance(func, ast.Attribute):
            recv = self.expr(func.value, frame)
            self.call_handed_functions(recv, args, kwargs, node, frame)
            return self.call_method(node, frame, recv, func.attr, args, kwargs, func.value)
        fv = self.expr(func, frame)
        self.call_handed_functions(fv, args, kwargs, node, frame)
        return self.call_value(node, frame, fv, args, kwargs)

    def call_value(self, node, frame, fv: Value, args, kwargs) -> Value:
        out = []
        handled = False
        for lab in fv.labels:
            tag = lab[0]
            if tag == "func":
                handled = True
                self._literal_blend_weights(args, node, frame)
                out.append(self._call_function(lab[1], args, kwargs, node, frame))
            elif tag == "bmethod":
                handled = True
                fid = self.method_of(lab[1], lab[2])
                if fid is not None:
                    self_v = Value(frozenset({("obj", lab[1])}))
                    out.append(self._call_function(fid, [self_v, *args], kwargs, node, frame))
            elif tag == "class":
                handled = True
                out.append(self._instantiate(lab[1], args, kwargs, node, frame))
            elif tag == "lib":
                handled = True
                out.append(self.call_library(lab[1], args, kwargs, node, frame))
            elif tag == "builtin":
                handled = True
                out.append(self.call_builtin(lab[1], args, kwargs, node, frame))
            elif tag == "model":
                handled = True
                called = self.model_call_inputs(args, kwargs, node, frame)
                out.append(self._predict(fv, args, kwargs, node, frame).with_labels({called}))
            elif tag == "lossobj":
                handled = True
                out.append(self.loss_value(args, kwargs))
            elif tag == "obj":
                handled = True
                cid = lab[1]
                fid = (
                    self.method_of(cid, "__call__")
                    or self.method_of(cid, "forward")
                    or self.method_of(cid, "call")
                )
                if fid is not None:
                    result = self._call_function(fid, [fv, *args], kwargs, node, frame)
                    if fv.has("model") and self.classes[cid].neural:
                        result = self._without_layers(result, cid)
                    out.append(result)
        if not handled:
            out.append(lb.data_union([fv, *args, *kwargs.values()]))
        return join(out)

    def _without_layers(self, value: Value, cid: int) -> Value:
        """A network's output without the predictions of the layers built inside its class (the
        network itself is the model)."""
        mod, first, last = self.classes[cid].span

        def inside(mid: int) -> bool:
            m = self.trace.models.get(mid)
            return m is not None and m.file == mod and first <= m.line <= last

        return Value(
            frozenset(lab for lab in value.labels if not (lab[0] == "src" and inside(lab[1]))),
            value.items,
            value.keys,
            value.const,
        )

    def _literal_blend_weights(self, args: list[Value], node, frame) -> None:
        """``combine(member_predictions, [0.6, 0.4])``: literal weights of the members."""
        members = [a for a in args if a.items is not None and lb.n_sources(a) > 1]
        weights = [
            a
            for a in args
            if a.items is not None
            and a.items
            and all(
                isinstance(x.const, int | float) and not isinstance(x.const, bool) for x in a.items
            )
        ]
        if len(members) == 1 and len(weights) == 1:
            m, w = members[0], weights[0]
            if len(m.items) == len(w.items):
                groups = [frozenset(lab for lab in it.labels if lab[0] == "src") for it in m.items]
                consts = [x.const for x in w.items]
                self.event(
                    "blend_weights", tuple(zip(groups, consts, strict=True)), self.eid(frame, node)
                )

    def _bind_params(self, f: _Func, args: list[Value], kwargs: dict[str, Value]) -> dict:
        a = f.node.args
        positional = [p.arg for p in (*a.posonlyargs, *a.args)]
        env: dict[str, Value] = {}
        n_default = len(f.defaults)
        for i, name in enumerate(positional):
            if i < len(args):
                env[name] = args[i]
            elif name in kwargs:
                env[name] = kwargs[name]
            elif i >= len(positional) - n_default:
                env[name] = f.defaults[i - (len(positional) - n_default)]
            else:
                env[name] = kwargs.get("**", EMPTY)
        if a.vararg is not None:
            extra = args[len(positional) :]
            env[a.vararg.arg] = Value(
                frozenset().union(*(v.labels for v in extra)) if extra else frozenset(),
                tuple(extra),
            )
        for p in a.kwonlyargs:
            env[p.arg] = kwargs.get(p.arg, f.kw_defaults.get(p.arg, EMPTY))
        if a.kwarg is not None:
            rest = {k: v for k, v in kwargs.items() if k not in env and k != "**"}
            labels = frozenset().union(*(v.labels for v in rest.values())) if rest else frozenset()
            env[a.kwarg.arg] = Value(labels, None, tuple(rest.items()))
        return env

    def _call_function(self, fid: int, args, kwargs, node, frame: _Frame | None) -> Value:
        f = self.funcs[fid]
        self.called.add(fid)
        ctx_site = (frame.module.index, getattr(node, "lineno", 0)) if frame is not None else None
        ctx = ((frame.ctx if frame is not None else ()) + ((ctx_site,) if ctx_site else ()))[-2:]
        env = self._bind_params(f, args, kwargs)
        key = (fid, tuple(sorted(env.items(), key=lambda kv: kv[0])), ctx, self.reached)
        try:
            cached = self.memo.get(key)
        except TypeError:
            cached = None
        if cached is not None:
            return cached
        if key in self.active or self.depth > _MAX_DEPTH or not self._enter(frame, node):
            return EMPTY
        self.active.add(key)
        self.depth += 1
        try:
            callee = _Frame(f.module, f.closure, env, ctx)
            if isinstance(f.node, ast.Lambda):
                result = self.expr(f.node.body, callee)
            else:
                self._block(f.node.body, callee)
                result = join(callee.returns) if callee.returns else NONE
        finally:
            self.depth -= 1
            self.nest -= 1
            self.active.discard(key)
        self.memo[key] = result
        return result

    def _instantiate(self, cid: int, args, kwargs, node, frame) -> Value:
        cls = self.classes[cid]
        labels = {("obj", cid)}
        if cls.neural:
            mid = self.model(("torch", cls.name), ("neural_net",), frame, node)
            labels.add(("model", mid))
        if not cls.neural:
            labels |= self._library_base_labels(cid, args, kwargs, node, frame)
        obj = Value(frozenset(labels))
        init = self.method_of(cid, "__init__")
        if init is not None:
            self._call_function(init, [obj, *args], kwargs, node, frame)
        elif cls.fields:  # a dataclass / NamedTuple: the arguments become its fields
            for name, value in zip(cls.fields, args, strict=False):
                self._heap_write(cid, name, value)
            for name, value in kwargs.items():
                if name in cls.fields:
                    self._heap_write(cid, name, value)
        self.run_hooks(cid, obj, node, frame)
        return obj

    def _library_base_labels(self, cid: int, args, kwargs, node, frame) -> set:
        """A user's subclass of a library model or trainer is constructed as that library class
        (``class WeightedTrainer(transformers.Trainer)``)."""
        out: set = set()
        for base in self.classes[cid].bases:
            for _, qual in base.of("lib"):
                if (
                    lib.symbol_key(qual) in lib.MODEL_FAMILIES
                    or cr.trainer_rule(qual)
                    or any(r.role == "model" for r in cr.call_rules(qual))
                ):
                    made = self.call_library(qual, args, kwargs, node, frame)
                    out |= {lab for lab in made.labels if lab[0] in ("model", "trainer")}
        return out

    # library calls -------------------------------------------------------------
