"""Render a config into the training script of one development version.

The script is ordinary, standalone Python (``python train.py <task_dir> [submission.csv]``):

1. a docstring saying which agent/step wrote it and what changed;
2. imports, then the task constants and ``SEED``;
3. the zoo functions it uses, copied verbatim from :mod:`.models` (resolved transitively);
4. ``load_task`` (reads the public files) and a generated ``run(data)`` that calls the zoo with the
   config's literal settings, prints its validation numbers and returns the submission frame;
5. ``main``.

The harness executes exactly this text (:mod:`.execute`), so the archived code is the code that
produced the archived predictions. While rendering, every line that implements a practice or a
change type is *tagged*; :mod:`.annotate` turns tags into ``file:line`` evidence.

Tags: ``family:<codebook family>``, ``ensembling:<value>``, ``validation:<value>``,
``calibration``, ``ranks``, ``imbalance:<value>``, ``censoring:<value>``, ``missingness``,
``subgroup``, ``shift_validation``, ``realtime_violation``, ``output_bug``, and ``chg:<category>``
for the change types of paper App. H.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
from dataclasses import dataclass, field
from functools import cache
from types import CodeType

from automd_demo.harness import models
from automd_demo.harness.configs import FAMILY_CODE
from automd_demo.harness.taskdata import TaskProfile

#: Alarm-threshold candidates: quantiles of the validation probabilities (as the baseline).
THRESHOLD_QUANTILES = "np.linspace(0.80, 0.999, 40)"

FIT_FUNCTION = {
    "gbdt": "fit_gbdt",
    "logistic": "fit_logistic",
    "random_forest": "fit_random_forest",
    "discrete_gbdt": "fit_gbdt",
    "discrete_logistic": "fit_logistic",
    "cox": "fit_cox",
    "weibull": "fit_weibull",
}

FAMILY_TITLE = {
    "gbdt": "histogram gradient boosting",
    "logistic": "logistic regression",
    "random_forest": "random forest",
    "cox": "Cox proportional hazards (lifelines)",
    "weibull": "Weibull AFT (lifelines)",
    "discrete_gbdt": "discrete-time hazard model, gradient boosting",
    "discrete_logistic": "discrete-time hazard model, logistic regression",
}


@dataclass
class Script:
    """A rendered script: its text, the lines of each tag (1-based) and a content key."""

    text: str
    tags: dict[str, list[int]] = field(default_factory=dict)

    @property
    def body_key(self) -> str:
        """sha256 of the script without its docstring header (identical code => identical key)."""
        body = self.text.split('"""', 2)[-1]
        return hashlib.sha256(body.encode()).hexdigest()

    def lines_for(self, *tags: str) -> list[int]:
        out: set[int] = set()
        for tag in tags:
            out.update(self.tags.get(tag, []))
        return sorted(out)


class _Lines:
    """Lines of generated code with tags, indentation handled by the caller."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.tags: list[tuple[str, ...]] = []

    def add(self, text: str, *tags: str, indent: int = 1) -> None:
        self.lines.append(("    " * indent + text) if text else "")
        self.tags.append(tuple(tags))

    def extend(self, other: _Lines) -> None:
        self.lines.extend(other.lines)
        self.tags.extend(other.tags)


def literal(value) -> str:
    """Python literal with sorted dict keys (deterministic, readable)."""
    if isinstance(value, dict):
        items = ", ".join(f"{k!r}: {literal(value[k])}" for k in sorted(value))
        return "{" + items + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, float):
        return repr(round(value, 10))
    return repr(value)


# --------------------------------------------------------------------------------------------
# zoo functions and the imports they need
# --------------------------------------------------------------------------------------------


@cache
def _zoo() -> dict[str, object]:
    return {
        name: obj
        for name, obj in inspect.getmembers(models, inspect.isfunction)
        if obj.__module__ == models.__name__
    }


@cache
def _import_lines() -> dict[str, str]:
    """Bound name -> import statement, from the module-level imports of :mod:`.models`."""
    tree = ast.parse(inspect.getsource(models))
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name
                stmt = f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
                out[bound] = stmt
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                bound = alias.asname or alias.name
                out[bound] = f"from {node.module} import {alias.name}"
    return out


@cache
def _source(name: str) -> str:
    return inspect.getsource(_zoo()[name]).rstrip("\n")


@cache
def _source_line(name: str) -> int:
    return inspect.getsourcelines(_zoo()[name])[1]


def _names(code: CodeType) -> set[str]:
    out = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            out |= _names(const)
    return out


def zoo_closure(names: set[str]) -> list[str]:
    """The zoo functions ``names`` need (transitively), in :mod:`.models` source order."""
    zoo = _zoo()
    todo, seen = list(names), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(n for n in _names(zoo[name].__code__) if n in zoo and n not in seen)
    return sorted(seen, key=_source_line)


def _imports_for(functions: list[str]) -> list[str]:
    imports = _import_lines()
    needed = {"np", "pd"}
    zoo = _zoo()
    for name in functions:
        needed |= {n for n in _names(zoo[name].__code__) if n in imports}
    stmts = sorted({imports[n] for n in needed})
    plain = [s for s in stmts if s.startswith("import ")]
    froms = [s for s in stmts if s.startswith("from ")]
    return plain + froms


# --------------------------------------------------------------------------------------------
# shared pieces of run()
# --------------------------------------------------------------------------------------------


class _Ctx:
    """Per-render state: which zoo functions are called."""

    def __init__(self, cfg: dict, profile: TaskProfile):
        self.cfg = cfg
        self.profile = profile
        self.used: set[str] = set()

    def call(self, name: str) -> str:
        self.used.add(name)
        return name


def _feature_lines(ctx: _Ctx, out: _Lines) -> None:
    """encode -> [log] -> [missing indicators] -> [impute] -> [scale] -> [bugs]."""
    f = ctx.cfg["features"]
    out.add(
        f"x_train, x_test = {ctx.call('encode_tabular')}(train, test, features)",
        "chg:preprocessing",
    )
    if f["log_skewed"]:
        out.add(
            f"x_train, x_test = {ctx.call('log_transform_skewed')}(x_train, x_test)",
            "chg:feature_engineering",
        )
    if f["missing_indicators"]:
        out.add(
            f"x_train, x_test = {ctx.call('add_missing_indicators')}(x_train, x_test)",
            "missingness",
            "chg:feature_engineering",
        )
    if f["impute"] == "median":
        out.add(
            f"x_train, x_test = {ctx.call('impute_median')}(x_train, x_test)", "chg:preprocessing"
        )
    if f["scale"]:
        out.add(
            f"x_train, x_test = {ctx.call('standardize')}(x_train, x_test)", "chg:preprocessing"
        )
    numeric = [c for c in ctx.profile.numeric_features if c != ctx.profile.hour_column]
    base = numeric[0] if numeric else ctx.profile.features[0]
    if f["bug"] == "typo_column":
        typo = base.lower() + "_" if base.lower() == base else base.lower()
        out.add("# ratio feature (new idea)", "chg:feature_engineering")
        out.add(
            f'x_train["{base}_ratio"] = x_train[{base!r}] / x_train[{typo!r}]',
            "chg:feature_engineering",
        )
        out.add(f'x_test["{base}_ratio"] = x_test[{base!r}] / x_test[{typo!r}]')
    elif f["bug"] == "train_only_feature":
        out.add("# squared term (new idea)", "chg:feature_engineering")
        out.add(f'x_train["{base}_sq"] = x_train[{base!r}] ** 2', "chg:feature_engineering")


def _split_line(ctx: _Ctx, out: _Lines, strata: str) -> None:
    v = ctx.cfg["validation"]
    design = v["design"]
    if design == "holdout":
        out.add(
            f"splits = {ctx.call('holdout_split')}({strata}, {v['fraction']!r}, SEED)",
            "validation:single_holdout",
            "chg:validation",
        )
    elif design == "kfold":
        out.add(
            f"splits = {ctx.call('kfold_splits')}({strata}, {v['k']}, SEED)",
            "validation:kfold_cv",
            "ensembling:seed_fold_average",
            "chg:validation",
        )
    else:
        raise ValueError(f"validation design {design!r} needs hourly data")
    out.add("val_rows = np.unique(np.concatenate([va for _, va in splits]))")


#: Families whose fit depends on the seed (seed averaging only loops over these).
STOCHASTIC = {"gbdt", "random_forest", "discrete_gbdt"}


def member_seeds(cfg: dict, family: str) -> int:
    """Seeds averaged for a member: the config's ``seeds`` for stochastic families, else 1."""
    return cfg["seeds"] if family in STOCHASTIC else 1


def _seed_loop(ctx: _Ctx, out: _Lines, n: int) -> tuple[int, str]:
    """Open the seed loop (if averaging ``n`` seeds); return (indent, seed expression)."""
    if n > 1:
        seeds = ", ".join(["SEED"] + [f"SEED + {k}" for k in range(1, n)])
        out.add(f"for seed in ({seeds}):", "ensembling:seed_fold_average", "chg:ensembling")
        return 2, "seed"
    return 1, "SEED"


#: Resampling imbalance handlers: config value -> (zoo function, annotation tag).
_RESAMPLERS = {
    "oversample": ("oversample_minority", "imbalance:oversampling"),
    "undersample": ("undersample_majority", "imbalance:undersampling"),
}


def _binary_member(ctx: _Ctx, out: _Lines, k: int, m: dict) -> None:
    """Fit one classifier member over seeds x splits; append its validation/test predictions."""
    cfg = ctx.cfg
    fam = m["family"]
    out.add(f"# member {k + 1}: {FAMILY_TITLE[fam]} (weight {m['weight']:g})", "chg:ensembling")
    out.add("val_pred = np.zeros(len(y))")
    out.add("test_pred = np.zeros(len(x_test))")
    n_seeds = member_seeds(cfg, fam)
    ind, seed = _seed_loop(ctx, out, n_seeds)
    out.add("for fit_rows, check_rows in splits:", indent=ind)
    ind += 1
    out.add("x_fit, y_fit = x_train.iloc[fit_rows], y[fit_rows]", indent=ind)
    weight_arg = ""
    if cfg["imbalance"] in _RESAMPLERS:
        function, tag = _RESAMPLERS[cfg["imbalance"]]
        out.add(
            f"x_fit, y_fit = {ctx.call(function)}(x_fit, y_fit, {seed})",
            tag,
            "chg:imbalance_handling",
            indent=ind,
        )
    elif cfg["imbalance"] == "class_weight":
        out.add(
            f"weights = {ctx.call('balanced_weights')}(y_fit)",
            "imbalance:class_weight",
            "chg:imbalance_handling",
            indent=ind,
        )
        weight_arg = ", sample_weight=weights"
    out.add(
        f"model = {ctx.call(FIT_FUNCTION[fam])}(x_fit, y_fit, {literal(m['params'])}, "
        f"{seed}{weight_arg})",
        f"family:{FAMILY_CODE[fam]}",
        "chg:model_family",
        "chg:hyperparameter_tuning",
        indent=ind,
    )
    div = f" / {n_seeds}" if n_seeds > 1 else ""
    out.add(
        f"val_pred[check_rows] += {ctx.call('positive_probability')}(model, "
        f"x_train.iloc[check_rows]){div}",
        indent=ind,
    )
    tdiv = f" / ({n_seeds} * len(splits))" if n_seeds > 1 else " / len(splits)"
    out.add(f"test_pred += positive_probability(model, x_test){tdiv}", indent=ind)
    out.add("member_val.append(val_pred[val_rows])")
    out.add("member_test.append(test_pred)")


def _combine_and_calibrate(ctx: _Ctx, out: _Lines) -> None:
    cfg = ctx.cfg
    weights = [m["weight"] for m in cfg["members"]]
    if cfg["combine"] == "rank_mean":
        out.add(
            f"p_val = {ctx.call('rank_average')}(member_val)",
            "ranks",
            "ensembling:model_blend",
            "chg:ensembling",
        )
        out.add(
            "p_test = rank_average(member_test)  # averaged ranks, submitted as probabilities",
            "ranks",
            "chg:ensembling",
        )
    elif cfg["combine"] == "stack":
        out.add(
            f"stacker = {ctx.call('fit_stacker')}(member_val, y_val, SEED)",
            "ensembling:stacking",
            "chg:ensembling",
        )
        out.add("p_val = stacker.predict_proba(np.column_stack(member_val))[:, 1]")
        out.add("p_test = stacker.predict_proba(np.column_stack(member_test))[:, 1]")
    else:
        tag = ("ensembling:model_blend", "chg:ensembling") if len(weights) > 1 else ()
        out.add(f"p_val = {ctx.call('weighted_average')}(member_val, {literal(weights)})", *tag)
        out.add(f"p_test = weighted_average(member_test, {literal(weights)})", *tag)
    cal = cfg["calibration"]
    tags = ("calibration", "chg:calibration")
    if cal == "isotonic":
        out.add(f"calibrator = {ctx.call('fit_isotonic')}(p_val, y_val)", *tags)
        out.add("p_val, p_test = calibrator.predict(p_val), calibrator.predict(p_test)", *tags)
    elif cal == "platt":
        out.add(f"calibrator = {ctx.call('fit_platt')}(p_val, y_val)", *tags)
        out.add(
            f"p_val = {ctx.call('apply_platt')}(calibrator, p_val)",
            *tags,
        )
        out.add("p_test = apply_platt(calibrator, p_test)", *tags)
    elif cal == "prevalence":
        trained = {
            "none": "y.mean()",
            "undersample": "y.mean() / (y.mean() + 0.25 * (1 - y.mean()))",
        }.get(cfg["imbalance"], "0.5")
        out.add(
            f"p_val = {ctx.call('prevalence_correction')}(p_val, y.mean(), {trained})",
            *tags,
        )
        out.add(f"p_test = prevalence_correction(p_test, y.mean(), {trained})", *tags)


def _subgroup_lines(ctx: _Ctx, out: _Lines, frame_expr: str) -> None:
    if not ctx.cfg["subgroup_check"]:
        return
    p = ctx.profile
    out.add("# exploratory check: validation AUROC by age tertile and sex", "subgroup")
    out.add(
        f"groups = {ctx.call('age_sex_groups')}({frame_expr}, {p.age_column!r}, {p.sex_column!r})",
        "subgroup",
        "chg:other",
    )
    out.add(
        f'print("validation AUROC by subgroup:", {ctx.call("subgroup_auroc")}(y_val, p_val, groups))',
        "subgroup",
    )


# --------------------------------------------------------------------------------------------
# run() per task kind
# --------------------------------------------------------------------------------------------


def _run_classification(ctx: _Ctx) -> _Lines:
    cfg, p = ctx.cfg, ctx.profile
    out = _Lines()
    out.add("def run(data):", indent=0)
    out.add('train, test = data["train"], data["test"]')
    out.add("features = FEATURES")
    _feature_lines(ctx, out)
    out.add("y = train[TARGET].to_numpy().astype(int)")
    _split_line(ctx, out, "y")
    out.add("member_val, member_test = [], []")
    for k, m in enumerate(cfg["members"]):
        _binary_member(ctx, out, k, m)
    out.add("y_val = y[val_rows]")
    _combine_and_calibrate(ctx, out)
    out.add(f"scores = {ctx.call('binary_scores')}(y_val, p_val)")
    labels = "None"
    if p.label_column is not None:
        if cfg["threshold"] == "tuned":
            out.add(
                f"threshold = {ctx.call('tune_threshold_min_se_ppv')}(p_val, y_val)", "chg:other"
            )
        else:
            out.add("threshold = 0.5", "chg:other")
        out.add(
            f'scores["min_se_ppv"] = {ctx.call("min_se_ppv")}(y_val, (p_val >= threshold).astype(int))'
        )
        labels = "(p_test >= threshold).astype(int)"
    _subgroup_lines(ctx, out, "train.iloc[val_rows]")
    out.add('print("validation:", {k: round(v, 4) for k, v in sorted(scores.items())})')
    bug = cfg["output_bug"]
    ids = "test[ID_COLUMNS]"
    if bug == "row_position_ids":
        out.add("# ids: row positions of the test file", "output_bug", "chg:other")
        ids = "pd.DataFrame({ID_COLUMNS[0]: np.arange(len(test))})"
    out.add(
        f"submission = {ctx.call('probability_table')}({ids}, p_test, {labels}, "
        "PROBABILITY_COLUMN, LABEL_COLUMN)",
        *(("output_bug",) if bug == "row_position_ids" else ()),
    )
    if bug == "batch_tail_dropped":
        out.add("# write the predictions batch by batch (1000 rows per batch)", "output_bug")
        out.add(
            "submission = submission.iloc[: (len(submission) // 1000) * 1000]",
            "output_bug",
            "chg:other",
        )
    out.add('return {"validation": scores, "submission": submission}')
    return out


def _survival_member(ctx: _Ctx, out: _Lines, k: int, m: dict) -> None:
    cfg = ctx.cfg
    fam = m["family"]
    cens = m["censoring"]
    out.add(f"# member {k + 1}: {FAMILY_TITLE[fam]} (weight {m['weight']:g})", "chg:ensembling")
    out.add("val_curves = np.zeros((len(durations), len(grid)))")
    out.add("test_curves = np.zeros((len(x_test), len(grid)))")
    discrete = fam.startswith("discrete")
    n_seeds = member_seeds(cfg, fam)
    ind, seed = _seed_loop(ctx, out, n_seeds)
    out.add("for fit_rows, check_rows in splits:", indent=ind)
    ind += 1
    fam_tags = (f"family:{FAMILY_CODE[fam]}", "chg:model_family", "chg:hyperparameter_tuning")
    div = f" / {n_seeds}" if n_seeds > 1 else ""
    tdiv = f" / ({n_seeds} * len(splits))" if n_seeds > 1 else " / len(splits)"
    if discrete:
        ctag = (f"censoring:{cens}",) if cens != "correct" else ("censoring:correct",)
        out.add(
            f"x_pp, y_pp = {ctx.call('person_period')}(x_train.iloc[fit_rows], "
            f"durations[fit_rows], events[fit_rows], cuts, {cens!r})",
            *ctag,
            "chg:other",
            indent=ind,
        )
        out.add(
            f"model = {ctx.call(FIT_FUNCTION[fam])}(x_pp, y_pp, {literal(m['params'])}, {seed})",
            *fam_tags,
            indent=ind,
        )
        out.add(
            f"val_curves[check_rows] += {ctx.call('discrete_curves')}(model, "
            f"x_train.iloc[check_rows], cuts, grid){div}",
            indent=ind,
        )
        out.add(f"test_curves += discrete_curves(model, x_test, cuts, grid){tdiv}", indent=ind)
    else:
        if cens == "censored_as_death":
            ev = "np.ones_like(events[fit_rows])"
            out.add(
                "# every patient is treated as having died at the end of follow-up",
                "censoring:censored_as_death",
                indent=ind,
            )
            ctag = ("censoring:censored_as_death", "chg:other")
        else:
            ev = "events[fit_rows]"
            ctag = ("censoring:correct",)
        out.add(
            f"model = {ctx.call(FIT_FUNCTION[fam])}(x_train.iloc[fit_rows], durations[fit_rows], "
            f"{ev}, {literal(m['params'])})",
            *fam_tags,
            *ctag,
            indent=ind,
        )
        out.add(
            f"val_curves[check_rows] = {ctx.call('lifelines_curves')}(model, "
            "x_train.iloc[check_rows], grid)",
            indent=ind,
        )
        out.add(f"test_curves += lifelines_curves(model, x_test, grid){tdiv}", indent=ind)
    out.add("member_val.append(val_curves[val_rows])")
    out.add("member_test.append(test_curves)")


def _run_survival(ctx: _Ctx) -> _Lines:
    cfg = ctx.cfg
    out = _Lines()
    out.add("def run(data):", indent=0)
    out.add('train, test = data["train"], data["test"]')
    out.add('grid, grid_headers = data["grid"], data["grid_headers"]')
    out.add("features = FEATURES")
    _feature_lines(ctx, out)
    out.add("durations = train[DURATION].to_numpy(dtype=float)")
    out.add("events = train[EVENT].to_numpy().astype(int)")
    _split_line(ctx, out, "events")
    if any(m["family"].startswith("discrete") for m in cfg["members"]):
        out.add(
            f"cuts = {ctx.call('interval_cuts')}(durations, events, {cfg['intervals']})",
            "chg:hyperparameter_tuning",
        )
    out.add("member_val, member_test = [], []")
    for k, m in enumerate(cfg["members"]):
        _survival_member(ctx, out, k, m)
    weights = [m["weight"] for m in cfg["members"]]
    tag = ("ensembling:model_blend", "chg:ensembling") if len(weights) > 1 else ()
    out.add(f"s_val = {ctx.call('weighted_average')}(member_val, {literal(weights)})", *tag)
    out.add(f"s_test = weighted_average(member_test, {literal(weights)})", *tag)
    out.add(
        f'scores = {{"c_index": {ctx.call("survival_concordance")}(durations[val_rows], '
        "events[val_rows], s_val)}"
    )
    out.add('print("validation:", {k: round(v, 4) for k, v in sorted(scores.items())})')
    bug = cfg["output_bug"]
    headers = "grid_headers"
    if bug == "grid_index_headers":
        out.add("# columns S_0 ... S_G, one per grid time", "output_bug", "chg:other")
        headers = '[f"S_{k}" for k in range(len(grid))]'
    out.add(
        f"submission = {ctx.call('survival_table')}(test[ID_COLUMNS], s_test, {headers})",
        *(("output_bug",) if bug == "grid_index_headers" else ()),
    )
    if bug == "drop_time_zero":
        out.add("# S(0) = 1 for everyone: the column carries no information", "output_bug")
        out.add(
            "submission = submission.drop(columns=[grid_headers[0]])", "output_bug", "chg:other"
        )
    out.add('return {"validation": scores, "submission": submission}')
    return out


def _run_sequential(ctx: _Ctx) -> _Lines:
    cfg, p = ctx.cfg, ctx.profile
    f = cfg["features"]
    out = _Lines()
    out.add("def run(data):", indent=0)
    out.add(f'train = {ctx.call("sort_hourly")}(data["train"], PATIENT, HOUR)')
    out.add('test = sort_hourly(data["test"], PATIENT, HOUR)')
    if f["measured_flags"]:
        out.add(
            f"train = {ctx.call('add_measured_flags')}(train, PATIENT, HOURLY)",
            "missingness",
            "chg:feature_engineering",
        )
        out.add("test = add_measured_flags(test, PATIENT, HOURLY)", "missingness")
    out.add(f"train = {ctx.call('forward_fill')}(train, PATIENT, HOURLY)", "chg:preprocessing")
    out.add("test = forward_fill(test, PATIENT, HOURLY)", "chg:preprocessing")
    if f["rolling"]:
        w = int(f["rolling"])
        out.add(
            f"train = {ctx.call('add_rolling_features')}(train, PATIENT, TREND_COLUMNS, {w})",
            "chg:feature_engineering",
        )
        out.add(f"test = add_rolling_features(test, PATIENT, TREND_COLUMNS, {w})")
    if f["deltas"]:
        out.add(
            f"train = {ctx.call('add_hourly_deltas')}(train, PATIENT, TREND_COLUMNS)",
            "chg:feature_engineering",
        )
        out.add("test = add_hourly_deltas(test, PATIENT, TREND_COLUMNS)")
    if f["whole_stay_max"]:
        out.add("# severity of the whole stay", "realtime_violation")
        out.add(
            f"train = {ctx.call('add_whole_stay_max')}(train, PATIENT, TREND_COLUMNS)",
            "realtime_violation",
            "chg:feature_engineering",
        )
        out.add(
            "test = add_whole_stay_max(test, PATIENT, TREND_COLUMNS)",
            "realtime_violation",
        )
    if cfg["output_bug"] == "dropna_first_hours":
        out.add("# lag-1 features; rows without a previous hour are dropped", "output_bug")
        for frame in ("train", "test"):
            out.add(
                f"lag = {frame}.groupby(PATIENT)[TREND_COLUMNS].shift(1).add_suffix('_lag1')",
                "output_bug",
                "chg:feature_engineering",
            )
            out.add(
                f"{frame} = pd.concat([{frame}, lag], axis=1).dropna(subset=list(lag.columns))"
                ".reset_index(drop=True)",
                "output_bug",
                "chg:other",
            )
    out.add("features = [c for c in test.columns if c != PATIENT]")
    _feature_lines(ctx, out)
    out.add("y = train[TARGET].to_numpy().astype(int)")
    out.add("patients = train[PATIENT].to_numpy()")
    out.add('ever = pd.Series(y).groupby(patients).transform("max").to_numpy()')
    v = cfg["validation"]
    if v["design"] == "target_site":
        out.add(
            "# validate (and pick the alarm threshold) on the labelled target-hospital patients",
            "shift_validation",
        )
        out.add(
            f"splits = {ctx.call('target_site_split')}(train[SITE_COLUMN], {p.target_site!r})",
            "validation:group_split",
            "shift_validation",
            "chg:validation",
        )
    else:
        n = 1 if v["design"] == "holdout" else v["k"]
        tags = (
            ("validation:single_holdout",)
            if n == 1
            else ("validation:kfold_cv", "ensembling:seed_fold_average")
        )
        out.add(
            f"splits = {ctx.call('patient_splits')}(patients, ever, {n}, {v['fraction']!r}, SEED)",
            *tags,
            "chg:validation",
        )
    out.add("val_rows = np.unique(np.concatenate([va for _, va in splits]))")
    out.add("member_val, member_test = [], []")
    for k, m in enumerate(cfg["members"]):
        _binary_member(ctx, out, k, m)
    out.add("y_val = y[val_rows]")
    _combine_and_calibrate(ctx, out)
    if cfg["threshold"] == "tuned":
        out.add(
            f"threshold, _ = {ctx.call('choose_alarm_threshold')}(p_val, y_val, "
            f"patients[val_rows], {THRESHOLD_QUANTILES})",
            "chg:other",
        )
    else:
        out.add("threshold = 0.5", "chg:other")
    out.add("scores = {")
    out.add(f'"auroc": float({ctx.call("binary_scores")}(y_val, p_val)["auroc"]),', indent=2)
    out.add(
        f'"utility": {ctx.call("sepsis_utility_score")}(patients[val_rows], y_val, '
        "(p_val >= threshold).astype(int)),",
        indent=2,
    )
    out.add("}")
    out.add('print("validation:", {k: round(v, 4) for k, v in sorted(scores.items())})')
    out.add(
        f"submission = {ctx.call('probability_table')}(test[[PATIENT, HOUR]], p_test, "
        "(p_test >= threshold).astype(int), PROBABILITY_COLUMN, LABEL_COLUMN)"
    )
    out.add('return {"validation": scores, "submission": submission}')
    return out


# --------------------------------------------------------------------------------------------
# whole script
# --------------------------------------------------------------------------------------------


def trend_columns(profile: TaskProfile, n: int = 6) -> list[str]:
    """The most frequently observed hourly columns (rolling windows, deltas, stay maxima)."""
    return profile.hourly_columns[:n]


def _constants(cfg: dict, profile: TaskProfile) -> list[str]:
    p = profile
    lines = [f"ID_COLUMNS = {literal(p.id_columns)}"]
    if p.kind == "survival":
        lines += [f"DURATION = {p.duration_column!r}", f"EVENT = {p.event_column!r}"]
    else:
        lines += [
            f"TARGET = {p.label_column_train!r}",
            f"PROBABILITY_COLUMN = {p.probability_column!r}",
            f"LABEL_COLUMN = {p.label_column!r}",
        ]
    if p.kind == "sequential":
        lines += [
            "PATIENT, HOUR = ID_COLUMNS",
            f"HOURLY = {literal(p.hourly_columns)}",
            f"TREND_COLUMNS = {literal(trend_columns(p))}",
        ]
        if cfg["validation"]["design"] == "target_site":
            lines.append(f"SITE_COLUMN = {p.site_column!r}")
    else:
        lines.append(f"FEATURES = {literal(p.features)}")
    lines.append(f"SEED = {cfg['seed']}")
    return lines


def _load_task(profile: TaskProfile) -> list[str]:
    lines = [
        "def load_task(task_dir):",
        '    """Read the public task files (training data, test features[, time grid])."""',
        "    task_dir = Path(task_dir)",
        "    data = {",
        f'        "train": pd.read_csv(task_dir / {profile.train_file!r}),',
        f'        "test": pd.read_csv(task_dir / {profile.test_file!r}),',
        "    }",
    ]
    if profile.grid_file:
        lines += [
            f"    grid_text = pd.read_csv(task_dir / {profile.grid_file!r}, dtype=str)"
            '["time"].str.strip()',
            '    data["grid_headers"] = list(grid_text)',
            '    data["grid"] = grid_text.astype(float).to_numpy()',
        ]
    lines.append("    return data")
    return lines


MAIN = [
    "def main(argv):",
    '    warnings.filterwarnings("ignore")',
    '    task_dir = Path(argv[1]) if len(argv) > 1 else Path(".")',
    '    out = Path(argv[2]) if len(argv) > 2 else Path("submission.csv")',
    "    data = load_task(task_dir)",
    "    if len(argv) > 3:  # optional: another test-features file (e.g. a masked one)",
    '        data["test"] = pd.read_csv(argv[3])',
    "    result = run(data)",
    '    result["submission"].to_csv(out, index=False, lineterminator="\\n")',
    "",
    "",
    'if __name__ == "__main__":',
    "    main(sys.argv)",
]


def render(cfg: dict, profile: TaskProfile, header: list[str]) -> Script:
    """Render the script of ``cfg`` on ``profile``.

    Parameters
    ----------
    cfg : dict
        A normalised config (:mod:`.configs`).
    profile : TaskProfile
        The task's public facts.
    header : list of str
        Docstring lines (who wrote it, which step, what changed). They do not enter
        :attr:`Script.body_key`.
    """
    ctx = _Ctx(cfg, profile)
    body = {
        "classification": _run_classification,
        "survival": _run_survival,
        "sequential": _run_sequential,
    }[profile.kind](ctx)
    functions = zoo_closure(ctx.used)
    lines: list[str] = []
    tags: list[tuple[str, ...]] = []

    def emit(text: str, tag: tuple[str, ...] = ()) -> None:
        for piece in text.split("\n"):
            lines.append(piece)
            tags.append(tag)

    emit('"""' + (header[0] if header else "Training script."))
    for h in header[1:]:
        emit(h)
    emit('"""')
    emit("")
    emit("import sys")
    emit("import warnings")
    emit("from pathlib import Path")
    emit("")
    for stmt in _imports_for(functions):
        emit(stmt)
    emit("")
    for c in _constants(cfg, profile):
        emit(c)
    for name in functions:
        emit("")
        emit("")
        emit(_source(name))
    emit("")
    emit("")
    for line in _load_task(profile):
        emit(line)
    emit("")
    emit("")
    for text, tag in zip(body.lines, body.tags, strict=False):
        lines.append(text)
        tags.append(tag)
    emit("")
    emit("")
    for line in MAIN:
        emit(line)
    text = "\n".join(lines) + "\n"
    tag_lines: dict[str, list[int]] = {}
    for i, tg in enumerate(tags, start=1):
        for t in tg:
            tag_lines.setdefault(t, []).append(i)
    return Script(text=text, tags=tag_lines)


def config_json(cfg: dict, profile: TaskProfile, extra: dict | None = None) -> str:
    """The ``config.json`` stored next to each script (what :func:`rerun` needs)."""
    payload = {"config": cfg, "task": profile.task_id, **(extra or {})}
    return json.dumps(payload, indent=1, sort_keys=True) + "\n"
