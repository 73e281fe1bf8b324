"""Proposal menus: weighted one-step changes an agent can make, standing in for an LLM's ideas.

A *menu item* is a function ``(config, profile, rng) -> (new_config, description) | None``
(``None`` = not applicable to this config/task). A *menu* (one per simulated LLM) is a table of
propensities - how likely the LLM is to propose each kind of change. The menus are built so that
the simulated LLMs reach similar validation scores but differ in calibration, as in paper §4.6:
``sim-llm-a`` (the default) likes rank-average ensembles and class re-weighting and rarely
recalibrates; ``sim-llm-c`` recalibrates often and seldom submits ranks.

Agent styles (:data:`AGENT_BIAS`) and the stated objective (:data:`OBJECTIVE_BIAS`, paper App.
F.1: calibration steps become frequent under the Brier and AUROC+ECE objectives) multiply the
menu weights. :func:`debug` is the "fix the crash" proposal of tree agents.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from automd_demo.harness.configs import (
    CLASSIFIER_FAMILIES,
    DEFAULT_PARAMS,
    OUTPUT_BUGS,
    SURVIVAL_FAMILIES,
    base_config,
    clone,
    crashes_without_imputation,
    member,
    normalise,
)
from automd_demo.harness.taskdata import TaskProfile

Proposal = tuple[dict, str]
ItemFn = Callable[[dict, TaskProfile, np.random.Generator], Proposal | None]

DEFAULT_LLM = "sim-llm-a"
LLMS = ("sim-llm-a", "sim-llm-b", "sim-llm-c")


def _neighbour(values: list, current, rng: np.random.Generator):
    """A value next to ``current`` in ``values`` (or a random one if it is not listed)."""
    if current not in values:
        return values[int(rng.integers(len(values)))]
    i = values.index(current)
    options = [values[j] for j in (i - 1, i + 1) if 0 <= j < len(values)]
    return options[int(rng.integers(len(options)))]


def _first_member(cfg: dict, families: tuple[str, ...]) -> int | None:
    for k, m in enumerate(cfg["members"]):
        if m["family"] in families:
            return k
    return None


def _hp(family_set: tuple[str, ...], key: str, values: list, label: str) -> ItemFn:
    def item(cfg, profile, rng):
        k = _first_member(cfg, family_set)
        if k is None:
            return None
        new = clone(cfg)
        params = new["members"][k]["params"]
        old = params.get(key)
        params[key] = _neighbour(values, old, rng)
        return normalise(new), f"tune {label}: {old} -> {params[key]}"

    return item


BOOSTED = ("gbdt", "discrete_gbdt")
LINEAR_MODELS = ("logistic", "cox", "weibull", "discrete_logistic")


def _switch_family(cfg, profile, rng):
    families = SURVIVAL_FAMILIES if profile.kind == "survival" else CLASSIFIER_FAMILIES
    if profile.kind == "sequential":
        families = ("gbdt", "logistic")
    current = cfg["members"][0]["family"]
    options = [f for f in families if f != current]
    fam = options[int(rng.integers(len(options)))]
    new = clone(cfg)
    new["members"][0] = member(fam, weight=new["members"][0]["weight"])
    if fam in LINEAR_MODELS:  # unscaled, the lifelines solvers take ~10x longer
        new["features"]["scale"] = True
    return normalise(new), f"replace the {current} model by {fam}"


def _add_member(cfg, profile, rng):
    if len(cfg["members"]) >= 3:
        return None
    families = SURVIVAL_FAMILIES if profile.kind == "survival" else CLASSIFIER_FAMILIES
    if profile.kind == "sequential":
        families = ("gbdt", "logistic")
    present = {m["family"] for m in cfg["members"]}
    options = [f for f in families if f not in present]
    if not options:
        return None
    fam = options[int(rng.integers(len(options)))]
    new = clone(cfg)
    new["members"].append(member(fam, weight=0.5))
    if crashes_without_imputation(new, profile.has_missing):
        new["features"]["impute"] = "median"
    if fam in LINEAR_MODELS:
        new["features"]["scale"] = True
    return normalise(new), f"blend in a {fam} model (weight 0.5)"


def _reweight(cfg, profile, rng):
    if len(cfg["members"]) < 2:
        return None
    new = clone(cfg)
    k = int(rng.integers(1, len(new["members"])))
    old = new["members"][k]["weight"]
    new["members"][k]["weight"] = _neighbour([0.2, 0.3, 0.5, 0.7, 1.0], old, rng)
    return normalise(
        new
    ), f"re-weight blend member {k + 1}: {old:g} -> {new['members'][k]['weight']:g}"


def _drop_member(cfg, profile, rng):
    if len(cfg["members"]) < 2:
        return None
    new = clone(cfg)
    gone = new["members"].pop(int(rng.integers(1, len(new["members"]))))
    if len(new["members"]) < 2 and new["combine"] != "mean":
        new["combine"] = "mean"
    return normalise(new), f"ablation: drop the {gone['family']} member"


def _rank_average(cfg, profile, rng):
    if profile.kind == "survival" or cfg["combine"] == "rank_mean":
        return None
    if profile.kind == "sequential" and rng.random() < 0.7:  # rarer with hourly alarms
        return None
    new = clone(cfg)
    text = "average member ranks instead of probabilities (robust to scale differences)"
    if len(new["members"]) < 2:
        present = new["members"][0]["family"]
        fam = "logistic" if present != "logistic" else "gbdt"
        new["members"].append(member(fam, weight=1.0))
        if crashes_without_imputation(new, profile.has_missing):
            new["features"]["impute"] = "median"
        if fam in LINEAR_MODELS:
            new["features"]["scale"] = True
        text = f"rank-average ensemble with a {fam} model"
    new["combine"] = "rank_mean"
    return normalise(new), text


def _stacking(cfg, profile, rng):
    if profile.kind != "classification" or len(cfg["members"]) < 2 or cfg["combine"] == "stack":
        return None
    if cfg["validation"]["design"] != "kfold":
        return None
    new = clone(cfg)
    new["combine"] = "stack"
    return normalise(new), "stack the members with a logistic regression on out-of-fold predictions"


def _seed_average(cfg, profile, rng):
    stochastic = {"gbdt", "random_forest", "discrete_gbdt"}
    if cfg["seeds"] >= 2 or not any(m["family"] in stochastic for m in cfg["members"]):
        return None
    if cfg["validation"]["design"] == "kfold" and rng.random() < 0.7:  # folds already average
        return None
    new = clone(cfg)
    new["seeds"] = 2
    return normalise(new), "average 2 seeds per model"


def _kfold(cfg, profile, rng):
    if cfg["validation"]["design"] == "kfold":
        return None
    if profile.kind == "sequential" and rng.random() < 0.6:  # slow on hourly data: often skipped
        return None
    new = clone(cfg)
    k = 3
    new["validation"] = {"design": "kfold", "k": k, "fraction": 0.2}
    return normalise(new), f"{k}-fold cross-validation; average the fold models on the test set"


def _holdout(cfg, profile, rng):
    if cfg["validation"]["design"] == "holdout":
        return None
    new = clone(cfg)
    new["validation"] = {"design": "holdout", "k": 5, "fraction": 0.2}
    if new["combine"] == "stack":
        new["combine"] = "mean"
    return normalise(new), "back to a single 20% holdout (faster iterations)"


def _toggle(key: str, on_text: str, off_text: str, *, kinds=None, need_missing=False) -> ItemFn:
    def item(cfg, profile, rng):
        if kinds and profile.kind not in kinds:
            return None
        if need_missing and not profile.has_missing:
            return None
        new = clone(cfg)
        new["features"][key] = not cfg["features"][key]
        return normalise(new), on_text if new["features"][key] else off_text

    return item


def _turn_on(key: str, text: str, *, kinds=None, need_missing=False, value=True) -> ItemFn:
    def item(cfg, profile, rng):
        if kinds and profile.kind not in kinds:
            return None
        if need_missing and not profile.has_missing:
            return None
        if cfg["features"][key]:
            return None
        new = clone(cfg)
        new["features"][key] = value
        return normalise(new), text

    return item


def _impute(cfg, profile, rng):
    if cfg["features"]["impute"] == "median" or not profile.has_missing:
        return None
    new = clone(cfg)
    new["features"]["impute"] = "median"
    return normalise(new), "impute missing values with training medians"


def _scale(cfg, profile, rng):
    if cfg["features"]["scale"] and any(m["family"] in LINEAR_MODELS for m in cfg["members"]):
        return None  # unscaled, a Cox fit on the demo's cohorts can take 20 s instead of 2
    new = clone(cfg)
    new["features"]["scale"] = not cfg["features"]["scale"]
    return normalise(new), "standardise features" if new["features"]["scale"] else "drop scaling"


def _imbalance(kind_of: str, text: str) -> ItemFn:
    def item(cfg, profile, rng):
        if profile.kind == "survival" or cfg["imbalance"] == kind_of:
            return None
        new = clone(cfg)
        new["imbalance"] = kind_of
        return normalise(new), text

    return item


def _calibrate(cfg, profile, rng):
    if profile.kind == "survival" or cfg["calibration"] != "none" or cfg["combine"] == "stack":
        return None
    options = ["isotonic", "platt"] + (["prevalence"] if cfg["imbalance"] != "none" else [])
    method = options[int(rng.integers(len(options)))]
    new = clone(cfg)
    new["calibration"] = method
    what = {
        "isotonic": "isotonic regression on validation predictions",
        "platt": "Platt scaling on validation predictions",
        "prevalence": "prevalence correction of the re-weighted probabilities",
    }[method]
    return normalise(new), f"recalibrate probabilities: {what}"


def _recalibrate_reweighted(cfg, profile, rng):
    """After class re-weighting or resampling: put the probabilities back on the event scale."""
    if cfg["imbalance"] == "none" or cfg["calibration"] != "none" or cfg["combine"] == "stack":
        return None
    method = ["prevalence", "prevalence", "isotonic", "platt"][int(rng.integers(4))]
    new = clone(cfg)
    new["calibration"] = method
    return normalise(new), f"recalibrate after re-weighting the classes ({method})"


def _reweight_and_recalibrate(cfg, profile, rng):
    """Class weights or oversampling *and* a recalibration step, in one change."""
    if profile.kind == "survival" or cfg["imbalance"] != "none" or cfg["calibration"] != "none":
        return None
    if cfg["combine"] == "stack":
        return None
    new = clone(cfg)
    new["imbalance"] = ["class_weight", "class_weight", "oversample"][int(rng.integers(3))]
    new["calibration"] = ["prevalence", "isotonic", "platt"][int(rng.integers(3))]
    what = "balanced class weights" if new["imbalance"] == "class_weight" else "oversampling"
    return normalise(new), f"{what} for the rare outcome, then {new['calibration']} recalibration"


def _drop_calibration(cfg, profile, rng):
    if cfg["calibration"] == "none":
        return None
    new = clone(cfg)
    new["calibration"] = "none"
    return normalise(new), "ablation: remove the calibration step"


def _threshold(cfg, profile, rng):
    if profile.label_column is None or cfg["threshold"] == "tuned":
        return None
    new = clone(cfg)
    new["threshold"] = "tuned"
    what = (
        "alarm threshold by validation utility"
        if profile.kind == "sequential"
        else ("label threshold maximising min(Se, PPV) on validation")
    )
    return normalise(new), f"tune the {what}"


def _subgroup(cfg, profile, rng):
    if cfg["subgroup_check"] or profile.kind == "sequential":
        return None
    if not (profile.age_column or profile.sex_column):
        return None
    new = clone(cfg)
    new["subgroup_check"] = True
    return normalise(new), "check validation AUROC by age tertile and sex"


def _censoring_member(error_rate: float) -> ItemFn:
    """Add a discrete-time GBDT member; with ``error_rate`` its censoring treatment is wrong."""

    def item(cfg, profile, rng):
        if profile.kind != "survival" or len(cfg["members"]) >= 3:
            return None
        if any(m["family"] == "discrete_gbdt" for m in cfg["members"]):
            return None
        new = clone(cfg)
        censoring = "correct"
        if rng.random() < error_rate:
            censoring = ["censored_as_death", "censored_as_survivor"][int(rng.integers(2))]
        weight = float(rng.choice([0.3, 0.5]))
        new["members"].append(member("discrete_gbdt", weight=weight, censoring=censoring))
        text = f"blend in a discrete-time boosting model on person-period rows (weight {weight:g})"
        return normalise(new), text

    return item


def _target_site(cfg, profile, rng):
    if profile.kind != "sequential" or profile.target_site is None:
        return None
    if cfg["validation"]["design"] == "target_site":
        return None
    new = clone(cfg)
    new["validation"] = {"design": "target_site", "k": 5, "fraction": 0.2}
    return normalise(
        new
    ), "validate and pick the threshold on the labelled target-hospital patients"


def _bug(kind: str, text: str) -> ItemFn:
    def item(cfg, profile, rng):
        if cfg["features"]["bug"] is not None:
            return None
        new = clone(cfg)
        new["features"]["bug"] = kind
        return normalise(new), text

    return item


def _output_refactor(cfg, profile, rng):
    """Rewrite the submission writer - and (the faulty agent's mistake) break the format."""
    if cfg["output_bug"] is not None:
        return None
    options = OUTPUT_BUGS[profile.kind]
    new = clone(cfg)
    new["output_bug"] = options[int(rng.integers(len(options)))]
    if new["output_bug"] == "dropna_first_hours":
        text = "add lag-1 features of the trend variables"
    else:
        text = "refactor the prediction and submission-writing code"
    return normalise(new), text


@dataclass(frozen=True)
class MenuItem:
    name: str
    fn: ItemFn
    weight: float


def _items() -> list[MenuItem]:
    return [
        MenuItem(
            "gbdt_iterations",
            _hp(BOOSTED, "max_iter", [20, 30, 50, 80], "boosting iterations"),
            3.0,
        ),  # fmt: skip
        MenuItem(
            "gbdt_learning_rate",
            _hp(BOOSTED, "learning_rate", [0.03, 0.05, 0.1, 0.2], "learning rate"),
            2.0,
        ),  # fmt: skip
        MenuItem(
            "gbdt_leaves", _hp(BOOSTED, "max_leaf_nodes", [7, 15, 31], "max leaf nodes"), 2.0
        ),  # fmt: skip
        MenuItem(
            "gbdt_l2",
            _hp(("gbdt",), "l2_regularization", [0.0, 0.1, 1.0, 5.0], "L2 regularisation"),
            1.0,
        ),  # fmt: skip
        MenuItem(
            "logistic_c",
            _hp(
                ("logistic", "discrete_logistic"),
                "C",
                [0.01, 0.1, 1.0, 10.0],
                "inverse regularisation C",
            ),
            1.0,
        ),  # fmt: skip
        MenuItem(
            "forest_depth", _hp(("random_forest",), "max_depth", [4, 6, 8, 12], "tree depth"), 1.0
        ),  # fmt: skip
        # not 0.1: lifelines' Cox fit at 0.1 takes ~20 s on demo_flchain_later (2 s at 0.05)
        MenuItem(
            "cox_penalizer",
            _hp(("cox", "weibull"), "penalizer", [0.001, 0.01, 0.05, 0.5], "penalizer"),
            2.0,
        ),  # fmt: skip
        MenuItem("switch_family", _switch_family, 1.2),
        MenuItem("add_member", _add_member, 1.5),
        MenuItem("reweight_members", _reweight, 0.8),
        MenuItem("drop_member", _drop_member, 0.2),
        MenuItem("rank_average", _rank_average, 1.0),
        MenuItem("stacking", _stacking, 0.3),
        MenuItem("seed_average", _seed_average, 1.2),
        MenuItem("kfold", _kfold, 1.2),
        MenuItem("holdout", _holdout, 0.2),
        MenuItem(
            "missing_indicators",
            _toggle(
                "missing_indicators",
                "add missing-value indicator features",
                "remove the missing-value indicators",
                kinds=("classification", "survival"),
                need_missing=True,
            ),
            1.2,
        ),  # fmt: skip
        MenuItem(
            "log_skewed",
            _toggle(
                "log_skewed",
                "log-transform skewed features",
                "drop the log transform",
                kinds=("classification", "survival"),
            ),
            0.8,
        ),  # fmt: skip
        MenuItem("impute", _impute, 0.6),
        MenuItem("scale", _scale, 0.4),
        MenuItem(
            "class_weight",
            _imbalance("class_weight", "balanced class weights for the rare outcome"),
            1.0,
        ),  # fmt: skip
        MenuItem(
            "oversample",
            _imbalance("oversample", "oversample the positive class to balance training"),
            0.5,
        ),  # fmt: skip
        MenuItem(
            "undersample",
            _imbalance(
                "undersample", "train on all positive rows and a quarter of the negative rows"
            ),
            0.4,
        ),  # fmt: skip
        MenuItem("calibrate", _calibrate, 0.7),
        MenuItem("recalibrate_reweighted", _recalibrate_reweighted, 1.0),
        MenuItem("reweight_and_recalibrate", _reweight_and_recalibrate, 0.5),
        MenuItem("drop_calibration", _drop_calibration, 0.1),
        MenuItem("threshold", _threshold, 3.0),
        MenuItem("subgroup_check", _subgroup, 0.12),
        MenuItem("censoring_member", _censoring_member(0.35), 1.0),
        MenuItem(
            "measured_flags",
            _turn_on(
                "measured_flags",
                "add measurement-count features (how often each variable was charted so far)",
                kinds=("sequential",),
            ),
            1.2,
        ),  # fmt: skip
        MenuItem(
            "rolling",
            _turn_on(
                "rolling",
                "add 6-hour rolling mean/max of the main vitals",
                kinds=("sequential",),
                value=6,
            ),
            1.8,
        ),  # fmt: skip
        MenuItem(
            "deltas",
            _turn_on(
                "deltas", "add hour-to-hour changes of the main vitals", kinds=("sequential",)
            ),
            1.2,
        ),  # fmt: skip
        MenuItem(
            "whole_stay_max",
            _turn_on(
                "whole_stay_max",
                "add each patient's maximum of the main vitals over the stay",
                kinds=("sequential",),
            ),
            1.0,  # only agents with an explicit bias propose it (see weights_for)
        ),
        MenuItem("target_site", _target_site, 1.5),
        MenuItem("feature_typo", _bug("typo_column", "add a ratio feature"), 0.25),
        MenuItem("train_only_feature", _bug("train_only_feature", "add a squared term"), 0.2),
        MenuItem("output_refactor", _output_refactor, 1.0),  # idem
    ]


ITEMS: dict[str, MenuItem] = {item.name: item for item in _items()}

#: Propensity multipliers of the simulated LLMs (menu name -> item -> factor).
MENUS: dict[str, dict[str, float]] = {
    "sim-llm-a": {
        "rank_average": 2.6,
        "class_weight": 1.8,
        "oversample": 1.4,
        "calibrate": 0.35,
        "recalibrate_reweighted": 0.6,
        "reweight_and_recalibrate": 0.8,
    },
    "sim-llm-b": {
        "rank_average": 0.9,
        "class_weight": 1.2,
        "calibrate": 1.2,
        "recalibrate_reweighted": 1.4,
        "reweight_and_recalibrate": 1.6,
    },
    "sim-llm-c": {
        "rank_average": 0.15,
        "class_weight": 0.7,
        "oversample": 0.5,
        "calibrate": 2.6,
        "recalibrate_reweighted": 2.6,
        "reweight_and_recalibrate": 3.0,
    },
}

#: Agent styles: multipliers on top of the menu.
AGENT_BIAS: dict[str, dict[str, float]] = {
    "autoresearch": {"seed_average": 1.5, "kfold": 1.3, "add_member": 1.2},
    "codex": {"seed_average": 1.0, "kfold": 2.0, "add_member": 1.3, "holdout": 0.0},
    "aide": {
        "whole_stay_max": 6.0,
        "seed_average": 0.6,
        "kfold": 0.6,
        "gbdt_iterations": 1.3,
        "feature_typo": 1.6,
        "train_only_feature": 1.6,
        "subgroup_check": 1.5,
    },
    "aiscientist": {
        "kfold": 0.35,
        "seed_average": 0.4,
        "oversample": 2.0,
        "calibrate": 0.6,
        "recalibrate_reweighted": 0.5,
        "feature_typo": 2.0,
        "train_only_feature": 2.0,
        "output_refactor": 0.3,
        "censoring_member": 1.3,
    },
}

#: Under calibration-aware objectives calibration steps become frequent and ranks disappear.
OBJECTIVE_BIAS: dict[str | None, dict[str, float]] = {
    None: {},
    "brier": {
        "calibrate": 5.0,
        "recalibrate_reweighted": 5.0,
        "rank_average": 0.05,
        "class_weight": 0.5,
        "oversample": 0.5,
    },
    "auroc+ece": {
        "calibrate": 8.0,
        "recalibrate_reweighted": 8.0,
        "rank_average": 0.02,
        "class_weight": 0.4,
        "oversample": 0.4,
    },
}

#: Which items each AI-Scientist-like stage draws from (paper §4.1: four stages).
STAGE_ITEMS: dict[str, set[str] | None] = {
    "1-initial": None,
    "2-tuning": {
        "gbdt_iterations",
        "gbdt_learning_rate",
        "gbdt_leaves",
        "gbdt_l2",
        "logistic_c",
        "forest_depth",
        "cox_penalizer",
        "threshold",
    },
    "3-research": None,
    "4-ablation": {
        "missing_indicators",
        "log_skewed",
        "measured_flags",
        "rolling",
        "deltas",
        "drop_member",
        "drop_calibration",
        "scale",
        "output_refactor",
        "feature_typo",
        "train_only_feature",
    },
}


def weights_for(
    llm: str, agent: str, objective: str | None, stage: str | None = None
) -> dict[str, float]:
    """Effective propensity of every item for an (LLM, agent, objective, stage)."""
    allowed = STAGE_ITEMS.get(stage) if stage else None
    out = {}
    for name, item in ITEMS.items():
        w = item.weight
        w *= MENUS[llm].get(name, 1.0)
        w *= AGENT_BIAS.get(agent, {}).get(name, 1.0)
        w *= OBJECTIVE_BIAS.get(objective, {}).get(name, 1.0)
        if name in ("whole_stay_max", "output_refactor") and not AGENT_BIAS.get(agent, {}).get(
            name
        ):
            w = 0.0
        if allowed is not None and name not in allowed:
            w = 0.0
        out[name] = w
    return out


def propose(
    cfg: dict,
    profile: TaskProfile,
    rng: np.random.Generator,
    weights: dict[str, float],
    *,
    n_changes: int = 1,
) -> tuple[dict, list[str], list[str]] | None:
    """Draw ``n_changes`` applicable items (without repeats) and apply them in turn.

    Returns ``(new_config, item_names, descriptions)`` or None when nothing applies.
    """
    names = sorted(n for n, w in weights.items() if w > 0)
    current = cfg
    used, texts = [], []
    for _ in range(n_changes):
        options = [n for n in names if n not in used]
        while options:
            w = np.array([weights[n] for n in options])
            pick = options[int(rng.choice(len(options), p=w / w.sum()))]
            result = ITEMS[pick].fn(current, profile, rng)
            options.remove(pick)
            if result is not None and result[0] != current:
                current, text = result
                used.append(pick)
                texts.append(text)
                break
    if not used:
        return None
    return current, used, texts


def debug(cfg: dict, profile: TaskProfile, error: str | None) -> Proposal | None:
    """The fix a debugging step proposes for a crashed script (None if it cannot see one)."""
    if cfg["features"]["bug"] is not None:
        new = clone(cfg)
        new["features"]["bug"] = None
        return normalise(
            new
        ), f"fix the crash ({(error or '').split(':')[0]}): remove the broken feature"
    if crashes_without_imputation(cfg, profile.has_missing):
        new = clone(cfg)
        new["features"]["impute"] = "median"
        return normalise(new), "fix the crash (missing values): impute training medians"
    return None


# --------------------------------------------------------------------------------------------
# drafts: the first script an agent writes
# --------------------------------------------------------------------------------------------


def draft(kind: str, style: str, profile: TaskProfile) -> Proposal:
    """An initial config. ``style`` is one of :data:`DRAFT_STYLES`."""
    family = {
        "survival": {"simple": "cox", "alt": "weibull", "raw": "cox"},
        "sequential": {"simple": "logistic", "raw": "logistic"},
        "classification": {"simple": "logistic", "alt": "random_forest", "raw": "logistic"},
    }[kind]
    boosted = "discrete_gbdt" if kind == "survival" else "gbdt"
    fam = family.get(style, boosted)
    needs = fam in ("logistic", "cox", "weibull", "discrete_logistic", "random_forest")
    impute = "median" if needs and style != "raw" else "none"
    cfg = base_config(kind, fam, impute=impute, scale=fam in ("logistic", "cox", "weibull"))
    if style == "boosting_cv" and kind != "sequential":  # hourly data: holdout is cheaper
        cfg["validation"] = {"design": "kfold", "k": 3, "fraction": 0.2}
    if kind == "sequential" or profile.label_column is not None:
        cfg["threshold"] = "fixed"
    if kind == "sequential" and fam == "gbdt":  # ~50k patient-hours: a lighter first model
        cfg["members"][0]["params"].update(max_iter=20, max_leaf_nodes=15)
    if style == "alt" and kind == "sequential":
        cfg["threshold"] = "tuned"
    text = {
        "simple": f"baseline: {fam} on all features, 20% holdout",
        "boosting": f"baseline: {fam} with default settings, 20% holdout",
        "boosting_cv": f"baseline: {fam}, cross-validated"
        if kind != "sequential"
        else f"baseline: {fam} with default settings, 20% patient holdout",
        "alt": f"baseline: {fam}, 20% holdout"
        + (", alarm threshold tuned on validation" if kind == "sequential" else ""),
        "raw": f"baseline: {fam} on the raw features",
    }[style]
    return normalise(cfg), text


DRAFT_STYLES = ("simple", "boosting", "boosting_cv", "alt", "raw")

#: Draft-style propensities per agent (Phase 0 of the autoresearch protocol asks for a
#: deliberately simple model; Codex starts with a cross-validated boosting model).
DRAFT_WEIGHTS: dict[str, dict[str, float]] = {
    "autoresearch": {"simple": 0.65, "boosting": 0.35},
    "codex": {"boosting_cv": 0.7, "boosting": 0.3},
    "aide": {"boosting": 0.4, "simple": 0.25, "alt": 0.2, "raw": 0.15},
    "aiscientist": {"boosting": 0.35, "simple": 0.25, "alt": 0.2, "raw": 0.2},
}


def draw_draft(
    agent: str, profile: TaskProfile, rng: np.random.Generator, exclude=()
) -> tuple[dict, str, str]:
    """A draft for ``agent``: ``(config, description, style)``; ``exclude`` avoids styles."""
    weights = {k: v for k, v in DRAFT_WEIGHTS[agent].items() if k not in exclude}
    if not weights:
        weights = DRAFT_WEIGHTS[agent]
    names = sorted(weights)
    p = np.array([weights[n] for n in names])
    style = names[int(rng.choice(len(names), p=p / p.sum()))]
    cfg, text = draft(profile.kind, style, profile)
    return cfg, text, style


def params_default(family: str) -> dict:
    return dict(DEFAULT_PARAMS[family])
