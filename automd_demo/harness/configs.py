"""Configurations of a scripted agent's model: plain JSON-able dicts, one per development version.

A config says everything the rendered training script does (:mod:`.render`): features and
preprocessing, ensemble members and how they are combined, the validation design, class-imbalance
handling, probability calibration, alarm/label thresholds, exploratory checks, and (for the demo's
faulty agent) deliberate bugs. The harness derives two kinds of ground truth from configs:

- :func:`practices` - the codebook answers about a version's code (docs/archive.md);
- :func:`change_categories` - the change types between two versions (paper App. H).

Schema (all keys always present after :func:`normalise`)::

    kind        "survival" | "classification" | "sequential"
    seed        int, the script's SEED constant
    features    {impute: "median"|"none", scale, missing_indicators, log_skewed,
                 measured_flags, rolling (0 = off, else window hours), deltas,
                 whole_stay_max, bug: null|"typo_column"|"train_only_feature"}
    members     [{family, params, weight, censoring}]  (censoring only matters for survival)
    combine     "mean" | "rank_mean" | "stack"
    seeds       number of seeds averaged per member
    validation  {design: "holdout"|"kfold"|"target_site", k, fraction}
    imbalance   "none" | "class_weight" | "oversample" | "undersample"
    calibration "none" | "isotonic" | "platt" | "prevalence"
    threshold   "none" | "fixed" | "tuned"   (labels: min(Se,PPV) and sequential tasks)
    subgroup_check  bool (exploratory validation AUROC by age/sex; never changes predictions)
    output_bug  null | "grid_index_headers" | "drop_time_zero" | "row_position_ids"
                | "batch_tail_dropped" | "dropna_first_hours"
    intervals   discrete-time survival intervals
"""

from __future__ import annotations

import copy
import hashlib
import json

CLASSIFIER_FAMILIES = ("gbdt", "logistic", "random_forest")
SURVIVAL_FAMILIES = ("cox", "weibull", "discrete_gbdt", "discrete_logistic")

#: Codebook model family of each zoo family (docs/archive.md).
FAMILY_CODE = {
    "gbdt": "gbdt",
    "logistic": "linear",
    "random_forest": "random_forest",
    "cox": "cox",
    "weibull": "parametric_survival",
    "discrete_gbdt": "gbdt",
    "discrete_logistic": "linear",
}

#: Families that cannot fit missing values (a config without imputation crashes - a real bug).
NEEDS_IMPUTATION = {"logistic", "cox", "weibull", "discrete_logistic"}

DEFAULT_PARAMS = {
    "gbdt": {
        "max_iter": 30,
        "learning_rate": 0.1,
        "max_leaf_nodes": 15,
        "l2_regularization": 0.0,
        "max_features": 0.8,
        "max_bins": 63,
    },
    "logistic": {"C": 1.0},
    "random_forest": {"n_estimators": 40, "max_depth": 8, "min_samples_leaf": 5},
    "cox": {"penalizer": 0.01},
    "weibull": {"penalizer": 0.01},
    "discrete_gbdt": {
        "max_iter": 20,
        "learning_rate": 0.1,
        "max_leaf_nodes": 15,
        "max_features": 0.8,
        "max_bins": 63,
    },
    "discrete_logistic": {"C": 1.0},
}

OUTPUT_BUGS = {
    "survival": ("grid_index_headers", "drop_time_zero"),
    "classification": ("row_position_ids", "batch_tail_dropped"),
    "sequential": ("dropna_first_hours",),
}


def member(family: str, params: dict | None = None, weight: float = 1.0, censoring="correct"):
    """One ensemble member."""
    return {
        "family": family,
        "params": dict(DEFAULT_PARAMS[family] if params is None else params),
        "weight": float(weight),
        "censoring": censoring,
    }


def base_config(kind: str, family: str, *, impute: str = "median", scale: bool = False) -> dict:
    """The simplest config of a kind: one member, single holdout, no extras."""
    cfg = {
        "kind": kind,
        "seed": 42,
        "features": {
            "impute": impute,
            "scale": scale,
            "missing_indicators": False,
            "log_skewed": False,
            "measured_flags": False,
            "rolling": 0,
            "deltas": False,
            "whole_stay_max": False,
            "bug": None,
        },
        "members": [member(family)],
        "combine": "mean",
        "seeds": 1,
        "validation": {"design": "holdout", "k": 5, "fraction": 0.2},
        "imbalance": "none",
        "calibration": "none",
        "threshold": "none",
        "subgroup_check": False,
        "output_bug": None,
        "intervals": 6,
    }
    return normalise(cfg)


def normalise(cfg: dict) -> dict:
    """A canonical deep copy: JSON round trip (sorted keys), member weights as floats."""
    out = json.loads(json.dumps(cfg, sort_keys=True))
    for m in out["members"]:
        m["weight"] = float(m["weight"])
    return out


def config_hash(cfg: dict) -> str:
    """sha256 of the canonical JSON of a config."""
    return hashlib.sha256(json.dumps(normalise(cfg), sort_keys=True).encode()).hexdigest()


def clone(cfg: dict) -> dict:
    return copy.deepcopy(cfg)


def crashes_without_imputation(cfg: dict, has_missing: bool) -> bool:
    """Whether the script will raise because a NaN-intolerant model meets missing values."""
    return (
        has_missing
        and cfg["features"]["impute"] == "none"
        and any(m["family"] in NEEDS_IMPUTATION for m in cfg["members"])
    )


# --------------------------------------------------------------------------------------------
# ground truth: change types between two versions (paper App. H categories)
# --------------------------------------------------------------------------------------------

_FEATURE_KEYS = (
    "missing_indicators",
    "log_skewed",
    "measured_flags",
    "rolling",
    "deltas",
    "whole_stay_max",
    "bug",
)
_PREPROCESSING_KEYS = ("impute", "scale")


def change_categories(old: dict, new: dict) -> list[str]:
    """Change types from ``old`` to ``new`` (sorted; empty when the configs are equal).

    Categories follow paper App. H: ensembling (members, weights, averaging, combination),
    hyperparameter_tuning (settings within a family), feature_engineering (constructing, removing
    or selecting predictors), preprocessing (imputation, encoding, scaling), model_family,
    calibration, imbalance_handling, validation, other (thresholds, censoring treatment,
    exploratory checks, output writing, seeds).
    """
    out: set[str] = set()
    of, nf = old["features"], new["features"]
    if any(of[k] != nf[k] for k in _FEATURE_KEYS):
        out.add("feature_engineering")
    if any(of[k] != nf[k] for k in _PREPROCESSING_KEYS):
        out.add("preprocessing")
    old_fams = [m["family"] for m in old["members"]]
    new_fams = [m["family"] for m in new["members"]]
    if sorted(set(old_fams)) != sorted(set(new_fams)):
        out.add("model_family")
    if (
        len(old_fams) != len(new_fams)
        or [m["weight"] for m in old["members"]] != [m["weight"] for m in new["members"]]
        or old["combine"] != new["combine"]
        or old["seeds"] != new["seeds"]
    ):
        out.add("ensembling")
    if len(old_fams) == len(new_fams) and old_fams == new_fams:
        if any(
            a["params"] != b["params"] for a, b in zip(old["members"], new["members"], strict=True)
        ):
            out.add("hyperparameter_tuning")
        if any(
            a["censoring"] != b["censoring"]
            for a, b in zip(old["members"], new["members"], strict=True)
        ):
            out.add("other")
    elif (
        old_fams
        and new_fams
        and old_fams[0] == new_fams[0]
        and old["members"][0]["params"] != new["members"][0]["params"]
    ):
        out.add("hyperparameter_tuning")
    if old["intervals"] != new["intervals"]:
        out.add("hyperparameter_tuning")
    if old["validation"] != new["validation"]:
        out.add("validation")
    if old["imbalance"] != new["imbalance"]:
        out.add("imbalance_handling")
    if old["calibration"] != new["calibration"]:
        out.add("calibration")
    if (
        old["threshold"] != new["threshold"]
        or old["subgroup_check"] != new["subgroup_check"]
        or old["output_bug"] != new["output_bug"]
        or old["seed"] != new["seed"]
    ):
        out.add("other")
    return sorted(out)


# --------------------------------------------------------------------------------------------
# ground truth: codebook answers about one version's code (docs/archive.md, paper App. I)
# --------------------------------------------------------------------------------------------


def uses_fold_models_for_test(cfg: dict) -> bool:
    """k-fold designs average the fold models' test predictions (fold averaging)."""
    return cfg["validation"]["design"] == "kfold"


def practices(cfg: dict, *, kind: str, external_with_shift: bool, has_missing: bool) -> dict:
    """Codebook answers (values only) for the code of ``cfg``.

    Parameters
    ----------
    kind : str
        Task kind.
    external_with_shift : bool
        External task with a cohort or hospital shift (``validation_under_shift`` applies).
    has_missing : bool
        Whether ``missingness_features`` applies: an EHR task (manifest ``paper.ehr``, the
        codebook's scope), whatever the task's missing values.
    """
    fams = sorted({FAMILY_CODE[m["family"]] for m in cfg["members"]})
    ensembling = []
    if len(cfg["members"]) > 1:
        ensembling.append("stacking" if cfg["combine"] == "stack" else "model_blend")
    stochastic = {"gbdt", "random_forest", "discrete_gbdt"}
    seeded = cfg["seeds"] > 1 and any(m["family"] in stochastic for m in cfg["members"])
    if seeded or uses_fold_models_for_test(cfg):
        ensembling.append("seed_fold_average")
    if not ensembling:
        ensembling = ["single_model"]
    design = cfg["validation"]["design"]
    validation = {"holdout": "single_holdout", "kfold": "kfold_cv", "target_site": "group_split"}[
        design
    ]
    binary = kind in ("classification", "sequential")
    imbalance = {
        "none": "none",
        "class_weight": "class_weight",
        "oversample": "oversampling",
        "undersample": "undersampling",
    }[cfg["imbalance"]]
    calibrated = cfg["calibration"] != "none"
    out = {
        "model_families": fams,
        "ensembling": sorted(ensembling),
        "validation_design": [validation],
        "probability_calibration": "yes" if calibrated else "no",
        # ranks recalibrated by an isotonic or Platt fit are no longer submitted as ranks
        "averaged_ranks_as_probabilities": (
            "yes"
            if binary
            and cfg["combine"] == "rank_mean"
            and cfg["calibration"] not in ("isotonic", "platt")
            else "no"
        ),
        "class_imbalance_handling": imbalance if binary else "na",
        "recalibration_after_imbalance": (
            ("yes" if calibrated else "no") if binary and imbalance != "none" else "na"
        ),
        "censoring_handling": "na",
        "affected_weight": None,
        "missingness_features": "na",
        # the renderer writes the exploratory subgroup check into binary and hourly scripts only
        "subgroup_checks": "yes" if cfg["subgroup_check"] and kind != "survival" else "no",
        "validation_under_shift": "na",
    }
    if kind == "survival":
        total = sum(m["weight"] for m in cfg["members"])
        wrong = [m for m in cfg["members"] if m["censoring"] != "correct"]
        if wrong:
            kinds = sorted({m["censoring"] for m in wrong})
            out["censoring_handling"] = kinds[0]
            out["affected_weight"] = round(sum(m["weight"] for m in wrong) / total, 6)
        else:
            out["censoring_handling"] = "correct"
    if has_missing:
        f = cfg["features"]
        out["missingness_features"] = (
            "yes" if f["missing_indicators"] or f["measured_flags"] else "no"
        )
    if external_with_shift:
        out["validation_under_shift"] = "yes" if design == "target_site" else "no"
    return out
