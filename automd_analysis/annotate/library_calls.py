"""Calls the static analyser understands: libraries, builtins, and methods of models and data.

:class:`LibraryCalls` is mixed into the interpreter (:mod:`.interpreter`); its methods turn a call
with abstract arguments into an abstract result and record what the call means for the codebook
(a model constructed or fitted, a split, a calibrator, a rank transform, a written file...), using
the tables of :mod:`.library`.
"""

from __future__ import annotations

import ast

from automd_analysis.annotate import call_rules as cr
from automd_analysis.annotate import library as lib
from automd_analysis.annotate.hand_splits import ROW_SELECTORS, random_fold_ids, selected_rows
from automd_analysis.annotate.labels import (
    OBJECT_TAGS,
    PERSIST,
    RANDOM_METHODS,
    WEIGHT_KW,
    all_labels,
    column_labels,
    data_labels,
    data_union,
    index_labels,
    is_class_weighting,
    key_is,
    n_sources,
    stacked,
)
from automd_analysis.annotate.trace import ModelSite
from automd_analysis.annotate.values import EMPTY, NO, NONE, Value, join

__all__ = ["LibraryCalls"]


class LibraryCalls:
    """Call rules, mixed into the interpreter (which provides ``trace``, ``eid``, ``event``,
    ``mark``, ``model``, ``set_role``, ``roles``, ``call_value``, ``attribute``, ``lookup``,
    ``assign_name`` and the object heap)."""

    def call_library(self, qual: str, args, kwargs, node, frame) -> Value:
        key = lib.symbol_key(qual)
        root, name = key
        if name in ROW_SELECTORS and args:
            args = _selecting(args[0], args, 1)
        everything = [*args, *kwargs.values()]
        rules = cr.call_rules(qual)
        if rules:
            out = self.apply_call_rules(qual, rules, args, kwargs, node, frame)
            if out is not None:
                return out
        trainer = cr.trainer_rule(qual)
        if trainer is not None:
            return self.new_trainer(trainer, args, kwargs, node, frame)
        if key in lib.WRAPPERS:
            return self._wrapper(key, args, kwargs, node, frame)
        if key in lib.CALIBRATORS:
            mid = self.model(key, (), frame, node)
            m = self.trace.models[mid]
            m.calibration = lib.CALIBRATORS[key]
            self.set_role(mid, "calibrator")
            return Value(frozenset({("model", mid)}))
        if key in lib.MODEL_FAMILIES:
            return self._construct(key, lib.MODEL_FAMILIES[key], args, kwargs, node, frame)
        if key in lib.RESAMPLERS:
            return Value(frozenset({("sampler", lib.RESAMPLERS[key], self.eid(frame, node))}))
        if key in lib.SPLITTERS:
            return self._splitter(key, lib.SPLITTERS[key], args, kwargs, node, frame)
        if key in lib.CLASS_WEIGHT_FUNCTIONS:
            return data_union(everything).with_labels({("cw", self.eid(frame, node))})
        if key in lib.METRIC_FUNCTIONS:
            if any(v.has("demo") for v in everything):
                self.event("subgroup", name, self.eid(frame, node))
            return EMPTY
        if key in lib.MISSING_FUNCTIONS:
            return Value(frozenset({("missflag", self.eid(frame, node))}))
        if key in lib.MISSING_INDICATORS:
            return Value(frozenset({("missflag", self.eid(frame, node)), ("ulib", qual)}))
        if key in lib.INDICATOR_IMPUTERS:
            flag = kwargs.get("add_indicator")
            if flag is not None and flag.const is True:
                return Value(frozenset({("missflag", self.eid(frame, node)), ("ulib", qual)}))
            return Value(frozenset({("ulib", qual)}))
        if key == ("scipy", "rankdata"):
            return self._rank(args[0] if args else EMPTY, frame, node)
        if key == ("sklearn", "QuantileTransformer"):
            return Value(frozenset({("rankobj", self.eid(frame, node))}))
        if root in ("numpy", "pandas", "torch", "scipy", "math", "os", "pathlib", "sklearn"):
            return self._numeric_library(root, name, qual, args, kwargs, node, frame)
        if root in ("sys", "warnings", "logging", "time", "json", "pickle", "joblib", "random"):
            if root == "random" and name in ("choices", "sample", "random", "choice"):
                return data_union(everything).with_labels(
                    {("rand", "rep" if name == "choices" else "norep", self.eid(frame, node))}
                )
            return EMPTY
        if root == "csv" and name in ("writer", "DictWriter"):
            return data_union(args)
        if root in (
            "lifelines",
            "sksurv",
            "pycox",
            "torchtuples",
            "lightgbm",
            "xgboost",
            "catboost",
        ):
            return self._survival_or_boosting_helper(key, args, kwargs, node, frame)
        return data_union(everything).with_labels({("ulib", qual)})

    def _survival_or_boosting_helper(self, key, args, kwargs, node, frame) -> Value:
        root, name = key
        everything = [*args, *kwargs.values()]
        if name in ("Dataset", "DMatrix", "Pool", "DeviceQuantileDMatrix", "QuantileDMatrix"):
            out = data_union(everything)
            weight = kwargs.get("weight")
            if weight is not None and weight.const is not None and is_class_weighting(weight):
                out = out.with_labels({("sw", self.eid(frame, node))})
            return out
        if name == "concordance_index" or name.startswith("concordance"):
            if any(v.has("demo") for v in everything):
                self.event("subgroup", name, self.eid(frame, node))
            return EMPTY
        return data_union(everything)

    def _construct(self, key, families, args, kwargs, node, frame) -> Value:
        mid = self.model(key, families, frame, node)
        m = self.trace.models[mid]
        if key in lib.NONPARAMETRIC:
            self.set_role(mid, "nonparametric")
        if key in lib.RESAMPLING_MODELS:
            m.imbalance.setdefault(lib.RESAMPLING_MODELS[key], set()).add(self.eid(frame, node))
        self._record_kwargs(m, kwargs, frame, node)
        if key[1] == "train" and key[0] in ("lightgbm", "xgboost"):
            params = kwargs.get("params") or (args[0] if args else EMPTY)
            if params.keys is not None:
                self._record_kwargs(
                    m, {k: v for k, v in params.keys if isinstance(k, str)}, frame, node
                )
            data = [kwargs.get("train_set"), kwargs.get("dtrain"), *args[1:2]]
            self._fit(mid, [v for v in data if v is not None], {}, node, frame)
        if key[0] == "statsmodels" and args:
            self._fit(mid, args, {}, node, frame)
        return Value(frozenset({("model", mid)}))

    def _record_kwargs(self, m: ModelSite, kwargs: dict[str, Value], frame, node) -> None:
        for k, v in kwargs.items():
            if v.const is not NO and isinstance(v.const, str | int | float | bool | type(None)):
                m.kwargs[k] = v.const
            else:
                m.kwargs.setdefault(k, "<expr>")
        self.apply_keyword_rules("model", m.mid, kwargs, node, frame)

    def _wrapper(self, key, args, kwargs, node, frame) -> Value:
        kind, names = lib.WRAPPERS[key]
        inner_values = list(args) + [kwargs[n] for n in names if n in kwargs]
        inner_labels = set()
        for v in inner_values:
            inner_labels |= all_labels(v)
        inner = {lab[1] for lab in inner_labels if lab[0] == "model"}
        samplers = {lab for lab in inner_labels if lab[0] == "sampler"}
        missing = {lab for lab in inner_labels if lab[0] == "missflag"}
        if kind == "search":
            self._validation_events(kwargs, ("kfold_cv",), frame, node)
            return Value(frozenset(lab for lab in inner_labels if lab[0] == "model"))
        if kind in ("pipeline", "wrap"):
            for mid in inner:
                m = self.trace.models[mid]
                for s in samplers:
                    m.imbalance.setdefault(s[1], set()).add(s[2])
                if missing:
                    m.fit_labels |= missing
            keep = {lab for lab in inner_labels if lab[0] in ("model",)}
            return Value(frozenset(keep)) if keep else data_union(inner_values)
        mid = self.model(key, (), frame, node)
        m = self.trace.models[mid]
        m.inner |= inner
        if kind == "calibrate":
            method = kwargs.get("method")
            m.calibration = method.const if method and isinstance(method.const, str) else "sigmoid"
            self.set_role(mid, "ccv")
        elif kind == "blend":
            self.set_role(mid, "voting")
        elif kind == "stack":
            self.set_role(mid, "stack_wrapper")
        return Value(frozenset({("model", mid)}))

    def _validation_events(self, kwargs, designs, frame, node) -> None:
        """A validation event per design of a cross-validating call: its ``cv`` splitter's
        designs when it has one, else ``designs``."""
        cv = kwargs.get("cv")
        if cv is not None:
            found = [lab[1] for lab in cv.labels if lab[0] == "splitter"]
            if found:
                designs = found[0]
        for d in designs:
            self.event("validation", d, self.eid(frame, node))

    def _splitter(self, key, designs, args, kwargs, node, frame) -> Value:
        e = self.eid(frame, node)
        root, name = key
        everything = [*args, *kwargs.values()]
        if name in ("ShuffleSplit", "StratifiedShuffleSplit", "GroupShuffleSplit"):
            n = kwargs.get("n_splits") or (args[0] if args else None)
            if n is not None and n.const == 1:
                designs = ("single_holdout",) + (
                    ("group_split",) if "group_split" in designs else ()
                )
        if name[0].isupper():  # a splitter object; the design counts when it splits
            return Value(frozenset({("splitter", designs, e)}))
        if name.startswith("cross_val") or name in ("cross_validate", "learning_curve"):
            self._validation_events(kwargs, designs, frame, node)
            models = {lab[1] for v in everything for lab in v.labels if lab[0] == "model"}
            if name == "cross_val_predict":
                out = {("src", mid) for mid in models}
                for mid in models:
                    self._fit(mid, args[1:], {}, node, frame)
                return Value(frozenset(out))
            return EMPTY
        for d in designs:
            self.event("validation", d, e)
        data = data_union(everything)
        return data.with_labels({("split", designs, e)})

    def _rank(self, value: Value, frame, node) -> Value:
        labels = {lab for lab in value.labels if lab[0] in PERSIST}
        labels.add(self.mark("rank", frame, node))
        return Value(frozenset(labels))

    def _average(self, value: Value, frame, node, weights: Value | None = None) -> Value:
        """An average (or sum) over ``value``: members of a blend, folds/seeds, or ranks."""
        labels = {lab for lab in value.labels if lab[0] not in OBJECT_TAGS}
        srcs = {lab for lab in value.labels if lab[0] == "src"}
        e = self.eid(frame, node)
        if value.has("foldlist"):
            labels.add(self.mark("foldavg", frame, node))
        groups = [
            frozenset(lab for lab in it.labels if lab[0] == "src") for it in value.items or ()
        ]
        distinct = {g for g in groups if g}
        if len(distinct) > 1 or (not groups and len(srcs) > 1 and not value.has("foldlist")):
            labels.add(self.mark("blend", frame, node))
            if weights is not None and value.items and weights.items is not None:
                consts = [w.const for w in weights.items]
                if len(consts) == len(value.items) and all(
                    isinstance(c, int | float) and not isinstance(c, bool) for c in consts
                ):
                    self.event("blend_weights", tuple(zip(groups, consts, strict=True)), e)
        elif len(srcs) > 1 and value.has("foldlist"):
            labels.add(self.mark("blend", frame, node))
        return Value(frozenset(labels))

    def _numeric_library(self, root, name, qual, args, kwargs, node, frame) -> Value:
        everything = [*args, *kwargs.values()]
        first = args[0] if args else EMPTY
        if root in ("numpy", "torch") and name in (
            "mean",
            "average",
            "nanmean",
            "median",
            "nanmedian",
            "sum",
            "nansum",
        ):
            return self._average(first, frame, node, kwargs.get("weights"))
        if name in ("tensordot", "dot", "matmul", "einsum"):
            weights, preds = (args[0], args[1]) if len(args) > 1 else (EMPTY, first)
            if preds.items is None and weights.items is not None:
                weights, preds = preds, weights
            return self._average(preds, frame, node, weights).with_labels(
                weights.labels - {("classcond",)}
            )
        if name == "argsort":
            return self._argsort(first, frame, node)
        if name == "where" and root == "numpy":
            if len(args) >= 3:
                cond, a, b = args[0], args[1], args[2]
                labels = set(index_labels(cond)) | data_labels(a) | data_labels(b)
                if cond.has("event") and (a.has("dur") != b.has("dur")):
                    labels.add(("survext", self.eid(frame, node)))
                return Value(frozenset(labels))
            return Value(frozenset(index_labels(first)))
        if name in ("ones_like", "ones", "full", "full_like"):
            fill = (
                args[1] if name.startswith("full") and len(args) > 1 else kwargs.get("fill_value")
            )
            if name.startswith("full") and (fill is None or fill.const != 1):
                return EMPTY
            if name in ("ones_like", "full_like") and first.has("event"):
                return Value(frozenset({("forcedevent", self.eid(frame, node)), ("event",)}))
            return Value(frozenset({("ones", self.eid(frame, node))}))
        if name in ("zeros", "zeros_like", "empty", "empty_like", "arange", "linspace", "eye"):
            return EMPTY
        if name in ("isnan", "isna", "isnull", "notna", "notnull"):
            return Value(frozenset({("missflag", self.eid(frame, node))}))
        if name in ("default_rng", "RandomState", "Generator", "seed", "manual_seed"):
            return Value(frozenset({("rng",)}))
        if qual.startswith("numpy.random.") or (
            root == "torch" and name in ("randperm", "multinomial")
        ):
            return self._random(name, args, kwargs, frame, node)
        if key_is(root, name, "sklearn", "resample"):
            replace = kwargs.get("replace")
            rep = replace is None or replace.const is not False
            return data_union(everything).with_labels(
                {("rand", "rep" if rep else "norep", self.eid(frame, node))}
            )
        if name in ("split", "array_split") and root == "numpy":
            parts = self.split_sections(args, kwargs, frame, node)
            if parts is not None:
                return parts
        if name == "searchsorted":
            return data_union(everything).with_labels({("cut",)})
        if name in ("savetxt", "save") and root == "numpy":
            self.trace.sinks.append((join(args[1:2]), first, self.eid(frame, node)))
            return EMPTY
        if name in ("expit", "sigmoid", "softmax"):
            if first.has("logitx"):
                return Value(
                    frozenset(data_labels(first) | {self.mark("cal", frame, node, "platt")})
                )
            return Value(frozenset(data_labels(first)))
        if name == "logit" or (name == "log" and first.has("odds")):
            if first.has("src") or first.has("odds"):
                return Value(frozenset(data_labels(first) | {("logit", self.eid(frame, node))}))
            return Value(frozenset(data_labels(first)))
        if name in ("DataFrame", "concat", "Series") and root == "pandas":
            return self._frame(name, args, kwargs)
        if name in ("concatenate", "cat", "hstack"):
            # joining the rows of batches (or of folds' held-out parts) is not an average
            return Value(
                frozenset(lab for lab in data_union(everything).labels if lab[0] != "foldlist")
            )
        if name in ("column_stack", "vstack", "stack", "array", "asarray"):
            v = data_union(everything)
            if first.items is not None and name in ("array", "asarray"):
                return Value(v.labels, first.items)
            if name in ("column_stack", "vstack", "hstack", "stack") and n_sources(first) > 1:
                return v.with_labels({("cols",)})
            return v
        if root in ("os", "pathlib") or name in ("Path", "join"):
            consts = [a.const for a in args]
            out = data_union(everything)
            if consts and all(isinstance(c, str) for c in consts) and name == "Path":
                return Value(out.labels, const=consts[0] if len(consts) == 1 else NO)
            return out
        return data_union(everything)

    def _frame(self, name, args, kwargs) -> Value:
        everything = [*args, *kwargs.values()]
        out = data_union(everything)
        first = args[0] if args else kwargs.get("data", EMPTY)
        axis = kwargs.get("axis")
        if name == "concat" and (axis is None or axis.const in (0, "index")):
            # stacking the rows of batches (or of folds' held-out parts) is not an average
            out = Value(frozenset(lab for lab in out.labels if lab[0] != "foldlist"))
        if name == "DataFrame" and first.keys is not None:
            vals = Value(first.labels, tuple(v for _, v in first.keys))
            if n_sources(vals) > 1:
                out = out.with_labels({("cols",)})
            return Value(out.labels, None, first.keys)
        if (
            name == "concat"
            and n_sources(first) > 1
            and axis is not None
            and axis.const in (1, "columns")
        ):
            out = out.with_labels({("cols",)})
        if name == "concat" and first.items is not None:
            keyed = [v.keys for v in first.items]
            if all(k is not None for k in keyed):
                merged = {}
                for k in keyed:
                    merged.update(dict(k))
                return Value(out.labels, None, tuple(merged.items()))
        return out

    def _random(self, name, args, kwargs, frame, node) -> Value:
        """Random numbers: generated values (``randval``, rows drawn at random only once they
        select rows), fold ids, a permutation, or elements drawn from the rows themselves."""
        everything = [*args, *kwargs.values()]
        e = self.eid(frame, node)
        if name in ("permutation", "randperm"):
            return data_union(everything).with_labels({("perm",)})
        if name in ("shuffle", "seed", "default_rng"):
            return data_union(everything)
        k = random_fold_ids(name, args, kwargs)
        if k is not None:
            return Value(frozenset({("foldid", k)}))
        kind = "norep"
        if name == "choice":
            replace = kwargs.get("replace") or (args[2] if len(args) > 2 else None)
            kind = "rep" if replace is None or replace.const is not False else "norep"
            population = data_labels(args[0]) if args else set()
            if population:  # elements drawn from the rows (or their indices): a selection
                return data_union(everything).with_labels({("rand", kind, e)})
        return data_union(everything).with_labels({("randval", kind, e)})

    def _argsort(self, value: Value, frame, node) -> Value:
        if value.has("argsort"):
            return self._rank(value, frame, node)
        labels = {lab for lab in value.labels if lab[0] in PERSIST}
        labels.add(("argsort", self.eid(frame, node)))
        return Value(frozenset(labels))

    def call_builtin(self, name, args, kwargs, node, frame) -> Value:
        everything = [*args, *kwargs.values()]
        first = args[0] if args else EMPTY
        if name == "len":
            if first.items is not None:
                return Value(const=len(first.items))
            return EMPTY
        if name == "range":
            consts = [a.const for a in args]
            if consts and all(isinstance(c, int) and not isinstance(c, bool) for c in consts):
                try:
                    n = len(range(*consts))
                except (TypeError, ValueError, OverflowError):
                    n = 65
                if n <= 64:
                    return Value(frozenset(), tuple(EMPTY for _ in range(n)))
            elif len(args) == 3 and args[2].const != 1:
                return Value(frozenset({("batches",)}))  # range(0, n, batch_size)
            return EMPTY
        if name in ("list", "tuple", "sorted", "reversed", "iter", "next", "set", "frozenset"):
            return first
        if name == "zip":
            if args and all(a.items is not None for a in args):
                n = min(len(a.items) for a in args)
                items = tuple(
                    Value(
                        frozenset().union(*(a.items[i].labels for a in args)),
                        tuple(a.items[i] for a in args),
                    )
                    for i in range(n)
                )
                return Value(frozenset().union(*(a.labels for a in args)), items)
            return data_union(args)
        if name == "enumerate":
            if first.items is not None:
                items = tuple(
                    Value(it.labels, (Value(const=i), it)) for i, it in enumerate(first.items)
                )
                return Value(first.labels, items)
            return Value(first.labels)
        if name == "sum":
            return self._average(first, frame, node)
        if name in ("max", "min", "abs", "round", "float", "int", "str", "bool", "pow", "divmod"):
            if all(a.const is not NO for a in args) and name in (
                "float",
                "int",
                "str",
                "abs",
                "round",
            ):
                try:
                    return Value(
                        const={"float": float, "int": int, "str": str, "abs": abs, "round": round}[
                            name
                        ](*[a.const for a in args])
                    )
                except Exception:
                    return EMPTY
            if name in ("float", "int", "round", "bool"):  # one number, never predictions
                return Value(
                    frozenset(lab for lab in data_union(everything).labels if lab[0] not in PERSIST)
                )
            return data_union(everything)
        if name == "open":
            return first.with_labels({("file",)}).plain()
        if name == "dict":
            merged: dict = {}
            if first.keys is not None:
                merged.update(dict(first.keys))
            merged.update({k: v for k, v in kwargs.items() if k != "**"})
            return Value(data_union(everything).labels, None, tuple(merged.items()))
        if name == "map" and len(args) > 1:
            return self.call_value(node, frame, args[0], [args[1].element()], {})
        if name == "filter" and len(args) > 1:
            return args[1]
        if name == "getattr" and len(args) > 1 and isinstance(args[1].const, str):
            return self.attribute(first, args[1].const, frame, node)
        if name in (
            "any",
            "all",
            "isinstance",
            "issubclass",
            "hasattr",
            "callable",
            "print",
            "id",
            "hash",
            "type",
            "repr",
            "format",
            "vars",
            "setattr",
            "super",
        ):
            return EMPTY
        return data_union(everything)

    # methods -------------------------------------------------------------------

    def call_method(self, node, frame, recv: Value, name: str, args, kwargs, recv_node) -> Value:
        out: list[Value] = []
        handled = False
        for lab in recv.labels:
            tag = lab[0]
            if tag == "lib":
                handled = True
                out.append(self.call_library(f"{lab[1]}.{name}", args, kwargs, node, frame))
            elif tag == "module":
                handled = True
                v = self.attribute(Value(frozenset({lab})), name, frame, node)
                out.append(self.call_value(node, frame, v, args, kwargs))
            elif tag == "obj":
                fid = self.method_of(lab[1], name)
                if fid is not None:
                    handled = True
                    out.append(self._call_function(fid, [recv, *args], kwargs, node, frame))
                else:
                    attr = self._heap_read(lab[1], name)
                    if attr.labels:
                        handled = True
                        out.append(self.call_value(node, frame, attr, args, kwargs))
            elif tag == "class":
                fid = self.method_of(lab[1], name)
                if fid is not None:
                    handled = True
                    out.append(self._call_function(fid, args, kwargs, node, frame))
            elif tag == "func" and name in ("__call__",):
                handled = True
                out.append(self._call_function(lab[1], args, kwargs, node, frame))
            elif tag == "trainer" and lab[1] in self.trainers:
                handled = True
                out.append(self.trainer_method(lab[1], name, args, kwargs, node, frame))
        if handled and not recv.has("model"):
            return join(out)
        models = [lab[1] for lab in recv.labels if lab[0] == "model"]
        if models and not handled:
            out.append(self._model_method(recv, models, name, args, kwargs, node, frame))
            return join(out)
        if handled:
            return join(out)
        return self._data_method(recv, name, args, kwargs, node, frame, recv_node)

    def _model_method(self, recv, models, name, args, kwargs, node, frame) -> Value:
        if name in ("fit", "partial_fit", "fit_transform", "fit_predict", "train"):
            for mid in models:
                self._fit(mid, args, kwargs, node, frame)
            if name == "fit_predict" or (
                name == "fit_transform" and any("calibrator" in self.roles(m) for m in models)
            ):
                return self._predict(recv, args[:1], {}, node, frame)
            if name == "fit_transform":
                return data_union(args)
            return recv
        if name in lib.PREDICT_METHODS or (
            name == "transform" and any("calibrator" in self.roles(m) for m in models)
        ):
            return self._predict(recv, args, kwargs, node, frame)
        if name == "set_params":
            for mid in models:
                self._record_kwargs(self.trace.models[mid], kwargs, frame, node)
            return recv
        if name in ("score", "get_params", "save_model", "save", "print_summary", "summary"):
            return EMPTY
        if name in ("compile", "to", "eval", "cuda", "cpu", "double", "float", "requires_grad_"):
            return recv
        return (
            Value(frozenset(lab for lab in recv.labels if lab[0] not in ("model",)))
            if name
            in (
                "parameters",
                "named_parameters",
                "state_dict",
            )
            else recv
        )

    def _fit(self, mid: int, args, kwargs, node, frame) -> None:
        m = self.trace.models[mid]
        e = self.eid(frame, node)
        m.fit_eids.add(e)
        values = [*args, *(v for k, v in kwargs.items() if k not in WEIGHT_KW)]
        labels: set = set()
        for v in values:
            labels |= all_labels(v)
        labels = {lab for lab in labels if lab[0] not in OBJECT_TAGS}
        m.fit_labels |= labels
        self.apply_keyword_rules("fit", mid, kwargs, node, frame)
        self.note_fitted_splits(labels)
        if any(lab[0] == "sw" for lab in labels):
            m.imbalance.setdefault("class_weight", set()).add(e)
        for lab in labels:
            if lab[0] == "resampled":
                m.imbalance.setdefault(lab[1], set()).add(lab[2])
        rands = [lab for lab in labels if lab[0] == "rand"]
        if rands and ("classcond",) in labels:
            kind = "oversampling" if any(r[1] == "rep" for r in rands) else "undersampling"
            m.imbalance.setdefault(kind, set()).update(r[2] for r in rands)
        elif rands:  # rows drawn at random without regard to the class: a holdout split
            for r in rands:
                if r[1] == "norep":
                    self.event("validation", "single_holdout", r[2])
        for lab in labels:
            if (
                lab[0] == "split"
                and lab[1] == ("kfold_cv",)
                and ("foldsplit", "kfold_cv", lab[2]) in self.trace.events
            ):
                self.event("validation", "kfold_cv", lab[2])
        if m.key[0] == "lifelines" and m.key[1] not in ("KaplanMeierFitter",):
            ev = kwargs.get("event_col")
            if (ev is None or ev.const is None) and len(args) < 3 and m.key[1] != "WeibullFitter":
                m.fit_labels.add(("forcedevent", e))
            elif ev is not None and isinstance(ev.const, str) and args:
                col = args[0].key(ev.const)
                if col is not None:
                    m.fit_labels |= set(col.labels)
        if m.key in lib.NONPARAMETRIC:
            observed = kwargs.get("event_observed") or (args[1] if len(args) > 1 else None)
            if observed is not None and observed.has("censind"):
                self.set_role(mid, "censoring_km")
        sources = {lab[1] for lab in labels if lab[0] == "src" and lab[1] != mid}
        if sources:
            m.meta_inputs |= sources
            if "calibrator" in m.roles or "ccv" in m.roles:
                pass
            elif args and (stacked(args[0]) or args[0].has("cols")):
                self.set_role(mid, "stacker")
            else:
                self.set_role(mid, "calibrator")
                if m.calibration is None:
                    m.calibration = "platt" if "linear" in m.families else "model"

    def _predict(self, recv: Value, args, kwargs, node, frame) -> Value:
        labels: set = set()
        for v in (*args, *kwargs.values()):
            labels |= {lab for lab in all_labels(v) if lab[0] in PERSIST}
        labels |= {lab for lab in recv.labels if lab[0] in PERSIST}
        todo = [lab[1] for lab in recv.labels if lab[0] == "model"]
        seen: set[int] = set()
        while todo:
            mid = todo.pop()
            if mid in seen:
                continue
            seen.add(mid)
            m = self.trace.models[mid]
            labels.add(("src", mid))
            roles = self.roles(mid)
            if "calibrator" in roles or "ccv" in roles:
                e = min(m.fit_eids) if m.fit_eids else self.eid(frame, node)
                labels.add(("cal", e, m.calibration or "model"))
                self.event("cal", None, e)
            todo.extend(m.inner)
        for mid in list(seen):
            if "calibrator" in self.trace.models[mid].roles:
                self.event("calibration", self.trace.models[mid].calibration, self.eid(frame, node))
        return Value(frozenset(labels))

    def _data_method(self, recv: Value, name, args, kwargs, node, frame, recv_node) -> Value:
        if name in ROW_SELECTORS:
            args = _selecting(recv, args, 0)
        if name == "searchsorted":
            return data_union([recv, *args]).with_labels({("cut",)})
        everything = [*args, *kwargs.values()]
        ruled = self.apply_method_rules(name, recv, args, kwargs, node, frame)
        if ruled is not None:
            return ruled
        if name in cr.SCALAR_METHODS:
            return Value(frozenset(lab for lab in data_labels(recv) if lab[0] not in PERSIST))
        if name in ("append", "extend", "insert", "add", "appendleft", "update"):
            return self._mutate_container(recv, name, args, node, frame, recv_node)
        if name in ("fit_resample", "fit_sample"):
            samplers = [lab for lab in recv.labels if lab[0] == "sampler"]
            data = data_union(everything)
            if samplers:
                extra = {("resampled", s[1], s[2]) for s in samplers}
                out = data.with_labels(extra)
                return Value(out.labels, (Value(out.labels), Value(out.labels)))
            return data
        if name == "split":
            splitters = [lab for lab in recv.labels if lab[0] == "splitter"]
            if splitters:
                e = self.eid(frame, node)
                labels = set()
                for s in splitters:
                    designs = s[1]
                    groups = kwargs.get("groups") or (args[2] if len(args) > 2 else None)
                    if groups is not None and groups.has("site"):
                        designs = tuple(sorted({*designs, "group_split"}))
                        self.event("shift", "group", e)
                    for d in designs:
                        self.event("validation", d, s[2])
                    labels.add(("split", designs, s[2]))
                return Value(frozenset(labels | data_labels(data_union(everything))))
        if name in ("rank",):
            return self._rank(recv, frame, node)
        if name == "argsort":
            return self._argsort(recv, frame, node)
        if name in ("fit_transform", "transform") and recv.has("rankobj"):
            e = [lab[1] for lab in recv.labels if lab[0] == "rankobj"][0]
            first = args[0] if args else EMPTY
            if first.has("src"):
                return self._rank(first, frame, node)
            del e
        if name in ("mean", "sum", "median", "average"):
            axis = kwargs.get("axis")
            if recv.has("foldlist") or axis is not None or args:
                return self._average(recv, frame, node)
            return Value(frozenset(data_labels(recv)))
        if name in lib.MISSING_METHODS:
            return Value(frozenset({("missflag", self.eid(frame, node))}))
        if name in ("any", "all"):
            return Value(frozenset(lab for lab in recv.labels if lab[0] != "missflag"))
        if name == "isin" and recv.has("site"):
            return Value(recv.labels | {("sitemask", self.eid(frame, node))})
        if name in ("map", "replace") and args and args[0].has("classcond"):
            return Value(recv.labels | {("classcond",)})
        if name in (
            "to_csv",
            "to_parquet",
            "to_feather",
            "write",
            "writerow",
            "writerows",
            "to_json",
        ):
            path = args[0] if args else kwargs.get("path_or_buf", kwargs.get("path", EMPTY))
            if name in ("write", "writerow", "writerows"):
                self.trace.sinks.append((data_union(args), recv, self.eid(frame, node)))
            else:
                self.trace.sinks.append((recv, path, self.eid(frame, node)))
            return NONE
        if name in RANDOM_METHODS and (recv.has("rng") or name == "sample"):
            if name == "sample":
                replace = kwargs.get("replace")
                rep = replace is not None and replace.const is True
                return Value(
                    frozenset(data_labels(recv) | data_labels(data_union(everything)))
                    | {("rand", "rep" if rep else "norep", self.eid(frame, node))}
                )
            return self._random(name, args, kwargs, frame, node)
        if name in ("groupby",):
            labels = set(data_labels(recv))
            for a in everything:
                labels |= index_labels(a)
                if isinstance(a.const, str):
                    labels |= column_labels(a.const, self, frame, node)
            return Value(frozenset(labels))
        if name in ("apply", "transform", "agg", "aggregate", "pipe") and args:
            fn = args[0]
            if fn.has("func"):
                res = self.call_value(node, frame, fn, [Value(recv.labels)], {})
                return Value(recv.labels | res.labels)
        return self._plain_data_method(recv, name, args, everything)

    def _mutate_container(self, recv: Value, name, args, node, frame, recv_node) -> Value:
        """``list.append``/``extend``/``insert``, ``set.add``, ``dict.update``: the container
        variable gains the item's labels (and, for a short literal list, the item itself)."""
        if name in ("append", "extend", "insert", "add", "appendleft"):
            item = args[-1] if args else EMPTY
            new_labels = set(item.labels)
            target = recv_node.id if isinstance(recv_node, ast.Name) else None
            if (
                name != "extend"  # extending a list concatenates rows (batches, folds' rows)
                and frame.multiplicity(target) > 1
                and (item.has("src") or item.has("model"))
            ):
                new_labels.add(("foldlist", self.eid(frame, node)))
            items = None
            if (
                name == "append"
                and recv.items is not None
                and frame.multiplicity() == 1
                and len(recv.items) < 64
            ):
                items = (*recv.items, item)
            if isinstance(recv_node, ast.Name):
                old = self.lookup(recv_node.id, frame)
                self.assign_name(
                    recv_node.id, Value(old.labels | new_labels, items, old.keys), frame
                )
            else:
                self._update_container(recv_node, frozenset(new_labels), frame)
            return NONE
        if name == "update" and args:
            if (
                isinstance(recv_node, ast.Name)
                and recv.keys is not None
                and args[0].keys is not None
            ):
                merged = dict(recv.keys)
                merged.update(dict(args[0].keys))
                self.assign_name(
                    recv_node.id,
                    Value(recv.labels | args[0].labels, None, tuple(merged.items())),
                    frame,
                )
            return NONE
        return NONE

    def _plain_data_method(self, recv: Value, name, args, everything) -> Value:
        """Mapping access, string methods, copies, and any other method: the data labels of the
        receiver and the arguments flow through."""
        if name in ("get", "pop") and args and recv.keys is not None:
            found = recv.key(args[0].const)
            if found is not None:
                return found
        if name in ("items", "values", "keys"):
            if recv.keys is not None and name == "values":
                vals = tuple(v for _, v in recv.keys)
                return Value(recv.labels, vals)
            if recv.keys is not None and name == "items":
                return Value(
                    recv.labels, tuple(Value(v.labels, (Value(const=k), v)) for k, v in recv.keys)
                )
            return Value(recv.labels)
        if name in ("lower", "upper", "strip", "title", "capitalize") and isinstance(
            recv.const, str
        ):
            return Value(const=getattr(recv.const, name)())
        if name == "copy":
            return recv
        labels = set(data_labels(recv))
        for a in everything:
            if name in ("fillna", "clip", "astype", "reshape", "round"):
                continue
            labels |= data_labels(a)
        out = Value(frozenset(labels))
        if (
            name
            in (
                "to_numpy",
                "astype",
                "reset_index",
                "to_frame",
                "values",
                "ravel",
                "flatten",
                "squeeze",
                "detach",
                "cpu",
                "numpy",
                "tolist",
            )
            and recv.keys is not None
        ):
            return Value(out.labels, None, recv.keys)
        return out


def _selecting(base: Value, args, first: int) -> list[Value]:
    """The arguments of a call that selects rows of ``base`` by an index (``Subset(ds, idx)``,
    ``df.take(idx)``; indices from argument ``first`` on): random indices select rows drawn at
    random."""
    out = list(args)
    for i in range(first, len(out)):
        drawn = selected_rows(base, out[i])
        if drawn:
            out[i] = out[i].with_labels(drawn)
    return out
