"""The meaning of each role of :mod:`.call_rules` (losses, splits, trainers, back-propagation...).

:class:`RuleCalls` is mixed into the interpreter (:mod:`.interpreter`) next to
:class:`~.library_calls.LibraryCalls`: it reads the rows that match a call and applies each row's
role, the same way for every library. ``docs/annotation.md`` lists the resulting rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from automd_analysis.annotate import call_rules as cr
from automd_analysis.annotate.labels import (
    OBJECT_TAGS,
    PERSIST,
    all_labels,
    data_union,
    is_class_weighting,
    same_constant,
)
from automd_analysis.annotate.values import EMPTY, NO, NONE, Value

__all__ = ["RuleCalls", "TrainerSite", "argument", "evidence_holds", "rule_key"]

#: Labels a loss keeps of what it compares: provenance of the rows, not of the predictions.
_NOT_IN_LOSS = PERSIST | OBJECT_TAGS | {"src", "lossof", "call"}


@dataclass
class TrainerSite:
    """A trainer constructed in the code: its rule, the models it owns, its data."""

    rule: cr.TrainerRule
    models: set[int] = field(default_factory=set)
    train: list[Value] = field(default_factory=list)
    validated: bool = False


def argument(arg: cr.Arg | None, args, kwargs) -> Value | None:
    """The value given for ``arg`` (by keyword or position), or ``None``."""
    if arg is None:
        return None
    if arg.keyword in kwargs:
        return kwargs[arg.keyword]
    if arg.position is not None and arg.position < len(args):
        return args[arg.position]
    return None


def evidence_holds(ev: cr.Evidence, args, kwargs) -> bool:
    """Whether a row's evidence rule holds for a call's abstract arguments."""
    if ev.arg is None:
        return True
    v = argument(ev.arg, args, kwargs)
    if v is None:
        return False
    if v.const is not NO and any(same_constant(v.const, o) for o in ev.off):
        return False
    if ev.between is not None:
        c = v.const
        if not isinstance(c, int | float) or isinstance(c, bool):
            return False
        return ev.between[0] < c < ev.between[1]
    if ev.unless_split is not None and any(
        lab[0] == "split" and ev.unless_split in lab[1] for lab in all_labels(v)
    ):
        return False
    return not ev.from_classes or is_class_weighting(v)


def _models_in(v: Value | None) -> set[int]:
    return set() if v is None else {lab[1] for lab in all_labels(v) if lab[0] == "model"}


def rule_key(qual: str) -> tuple[str, str]:
    """``(root, name)`` of a model built by a table row (the class for ``X.from_pretrained``)."""
    parts = qual.split(".")
    name = parts[-2] if parts[-1] == "from_pretrained" and len(parts) > 2 else parts[-1]
    return parts[0], name


class RuleCalls:
    """Roles of the call table, mixed into the interpreter (which provides ``trace``, ``eid``,
    ``event``, ``model``, ``set_role``, ``_fit``, ``_predict``, ``_construct``, ``_splitter``,
    ``lineage``, ``method_of``, ``_call_function`` and the classes)."""

    def apply_call_rules(self, qual: str, rules, args, kwargs, node, frame) -> Value | None:
        """Apply the rows matching a library call; the value the call returns, if a row says."""
        out: Value | None = None
        key = rule_key(qual)
        e = self.eid(frame, node)
        everything = [*args, *kwargs.values()]
        for rule in rules:
            role = rule.role
            if role in ("imbalance", "validation"):
                if evidence_holds(rule.evidence, args, kwargs):
                    self.event(role, rule.value, e)
            elif role == "model":
                out = self._construct(key, (rule.value,), args, kwargs, node, frame)
            elif role == "loss":
                out = Value(frozenset({("lossobj", e)}))
            elif role == "loss_fn":
                out = self.loss_value(args, kwargs)
            elif role == "split":
                out = self._splitter(key, (rule.value,), args, kwargs, node, frame)
            elif role == "calibrator":
                mid = self.model(key, (), frame, node)
                self.trace.models[mid].calibration = rule.value
                self.set_role(mid, "calibrator")
                out = Value(frozenset({("model", mid)}))
            elif role == "batches":
                out = data_union(everything).with_labels({("batches",)})
        return out

    def apply_keyword_rules(self, at: str, mid: int, kwargs, node, frame) -> None:
        """Keyword rows of a model's constructor (``at="model"``) or ``fit`` (``at="fit"``)."""
        e = self.eid(frame, node)
        m = self.trace.models[mid]
        for rule in cr.rules_at(at):
            if rule.evidence.arg.keyword not in kwargs:
                continue
            if not evidence_holds(rule.evidence, (), kwargs):
                continue
            if rule.role == "imbalance":
                m.imbalance.setdefault(rule.value, set()).add(e)
            else:
                self.event(rule.role, rule.value, e)

    def apply_method_rules(self, name, recv: Value, args, kwargs, node, frame) -> Value | None:
        """Rows for a method of any object (``dataset.train_test_split``, ``loss.backward``)."""
        out = None
        for rule in cr.method_rules(name):
            if rule.role == "split":
                out = self._splitter(
                    ("method", name), (rule.value,), [recv, *args], kwargs, node, frame
                )
            elif rule.role == "batches":
                out = Value(recv.labels | {("batches",)})
            elif rule.role == "train_on":
                loss = argument(rule.evidence.arg, args, kwargs) if rule.evidence.arg else None
                if loss is None:
                    loss = args[0] if args else recv
                self.train_on(loss, node, frame)
                out = NONE
        return out

    # losses -------------------------------------------------------------------------------

    def loss_value(self, args, kwargs) -> Value:
        """A loss over predictions and targets: which models it compares (``lossof``) and the
        provenance labels of the rows, never the predictions themselves."""
        labels: set = set()
        for v in (*args, *kwargs.values()):
            for lab in all_labels(v):
                if lab[0] == "src":
                    labels.add(("lossof", lab[1]))
                elif lab[0] in ("lossof", "call") or lab[0] not in _NOT_IN_LOSS:
                    labels.add(lab)
        return Value(frozenset(labels))

    def train_on(self, loss: Value, node, frame) -> None:
        """Back-propagating ``loss`` fits the models it compares on the rows it carries (their
        inputs at the calls that produced the predictions, and the targets)."""
        labels = all_labels(loss)
        models = {lab[1] for lab in labels if lab[0] in ("lossof", "src")}
        rows = {lab for lab in labels if lab[0] not in _NOT_IN_LOSS}
        for lab in labels:
            if lab[0] == "call":
                rows |= self.call_inputs.get(lab[1], set())
        for mid in sorted(models):
            if mid in self.trace.models:
                self._fit(mid, [Value(frozenset(rows))], {}, node, frame)

    def model_call_inputs(self, args, kwargs, node, frame) -> tuple:
        """Remember what a network is called on; the label that refers to it."""
        e = self.eid(frame, node)
        rows = self.call_inputs.setdefault(e, set())
        for v in (*args, *kwargs.values()):
            rows |= {lab for lab in all_labels(v) if lab[0] not in _NOT_IN_LOSS}
        return ("call", e)

    # trainers -------------------------------------------------------------------------------

    def new_trainer(self, rule: cr.TrainerRule, args, kwargs, node, frame) -> Value:
        e = self.eid(frame, node)
        site = self.trainers.setdefault(e, TrainerSite(rule))
        site.models |= _models_in(argument(rule.model, args, kwargs) or EMPTY)
        site.train += [v for a in rule.train if (v := argument(a, args, kwargs)) is not None]
        given = [argument(a, args, kwargs) for a in rule.validation]
        if any(v is not None and v.const is not None for v in given):
            site.validated = True
            self.event("validation", "single_holdout", e)
        return Value(frozenset({("trainer", e)}))

    def trainer_method(self, e: int, name: str, args, kwargs, node, frame) -> Value:
        site = self.trainers[e]
        rule = site.rule
        if name == rule.fit:
            models = site.models | _models_in(argument(rule.fit_model, args, kwargs) or EMPTY)
            data = site.train + [
                v for a in rule.fit_train if (v := argument(a, args, kwargs)) is not None
            ]
            for mid in sorted(models):
                self._fit(mid, data, {}, node, frame)
            given = [argument(a, args, kwargs) for a in rule.fit_validation]
            if any(v is not None and v.const is not None for v in given):
                self.event("validation", "single_holdout", self.eid(frame, node))
            return NONE
        if name in rule.predict:
            models = site.models | _models_in(argument(rule.predict_model, args, kwargs) or EMPTY)
            recv = Value(frozenset(("model", m) for m in models))
            skip = rule.predict_model.keyword if rule.predict_model else None
            data = [a for a in args if not a.has("model")]
            return self._predict(
                recv, data, {k: v for k, v in kwargs.items() if k != skip}, node, frame
            )
        return EMPTY

    # framework hooks --------------------------------------------------------------------------

    def run_hooks(self, cid: int, obj: Value, node, frame) -> None:
        """Run the methods a framework calls on an instance of a user's subclass."""
        for cls in list(self.lineage(cid)):
            for base in cls.bases:
                for _, qual in base.of("lib"):
                    for hook in cr.hooks_of(qual):
                        self._run_hook(cid, hook, obj, node, frame)

    def _run_hook(self, cid: int, hook: str, obj: Value, node, frame) -> None:
        fid = self.method_of(cid, hook)
        if fid is None:
            return
        f = self.funcs[fid]
        a = f.node.args
        n = len(a.posonlyargs) + len(a.args) - len(f.defaults) - 1
        self._call_function(fid, [obj, *[EMPTY] * max(n, 0)], {}, node, frame)
