"""What the static analyser knows about the libraries agents use (pure data, no imports of them).

A library symbol is looked up by its *key* ``(root package, final name)`` - e.g.
``sklearn.ensemble._forest.RandomForestClassifier`` and ``sklearn.ensemble.RandomForestClassifier``
both have the key ``("sklearn", "RandomForestClassifier")`` - so re-exports and private module
paths resolve alike. ``docs/annotation.md`` lists every rule built on these tables; the
deep-learning libraries and the keyword rules of every model (``class_weight=``,
``validation_split=``...) are rows of :mod:`.call_rules`.
"""

from __future__ import annotations

import re

__all__ = [
    "CALIBRATORS",
    "CLASS_WEIGHT_FUNCTIONS",
    "DEMOGRAPHIC_COLUMN",
    "DURATION_COLUMN",
    "EVENT_COLUMN",
    "METRIC_FUNCTIONS",
    "MISSING_FUNCTIONS",
    "MISSING_METHODS",
    "MODEL_FAMILIES",
    "PREDICT_METHODS",
    "RESAMPLERS",
    "SITE_COLUMN",
    "SPLITTERS",
    "WRAPPERS",
    "symbol_key",
]


def words(text: str) -> list[str]:
    """The whitespace-separated words of ``text``."""
    return text.split()


def symbol_key(qualname: str) -> tuple[str, str]:
    """``(root package, final name)`` of a dotted name (``"a.b.c"`` -> ``("a", "c")``).

    Examples
    --------
    >>> symbol_key("sklearn.ensemble._forest.RandomForestClassifier")
    ('sklearn', 'RandomForestClassifier')
    """
    parts = qualname.split(".")
    return parts[0], parts[-1]


def _table(root: str, names: str, value) -> dict:
    return {(root, n): value for n in names.split()}


#: Estimator classes (and functional training APIs) -> codebook model families.
MODEL_FAMILIES: dict[tuple[str, str], tuple[str, ...]] = {
    **_table(
        "sklearn",
        "HistGradientBoostingClassifier HistGradientBoostingRegressor "
        "GradientBoostingClassifier GradientBoostingRegressor",
        ("gbdt",),
    ),
    **_table(
        "sklearn",
        "RandomForestClassifier RandomForestRegressor ExtraTreesClassifier ExtraTreesRegressor",
        ("random_forest",),
    ),
    **_table(
        "sklearn",
        "LogisticRegression LogisticRegressionCV RidgeClassifier RidgeClassifierCV SGDClassifier "
        "Perceptron LinearRegression Ridge RidgeCV Lasso LassoCV ElasticNet ElasticNetCV LinearSVC "
        "LinearDiscriminantAnalysis PoissonRegressor BayesianRidge",
        ("linear",),
    ),
    **_table("sklearn", "MLPClassifier MLPRegressor", ("neural_net",)),
    **_table(
        "sklearn",
        "KNeighborsClassifier KNeighborsRegressor RadiusNeighborsClassifier",
        ("knn",),
    ),
    **_table(
        "sklearn",
        "SVC NuSVC SVR GaussianNB BernoulliNB MultinomialNB DecisionTreeClassifier "
        "DecisionTreeRegressor GaussianProcessClassifier QuadraticDiscriminantAnalysis "
        "AdaBoostClassifier",
        ("other",),
    ),
    **_table("lightgbm", "LGBMClassifier LGBMRegressor LGBMRanker train Booster", ("gbdt",)),
    **_table("xgboost", "XGBClassifier XGBRegressor train Booster", ("gbdt",)),
    **_table("xgboost", "XGBRFClassifier XGBRFRegressor", ("random_forest",)),
    **_table("catboost", "CatBoostClassifier CatBoostRegressor CatBoost", ("gbdt",)),
    **_table("ngboost", "NGBClassifier NGBRegressor NGBSurvival", ("gbdt",)),
    **_table("imblearn", "BalancedRandomForestClassifier", ("random_forest",)),
    **_table(
        "imblearn",
        "BalancedBaggingClassifier EasyEnsembleClassifier RUSBoostClassifier",
        ("other",),
    ),
    **_table("lifelines", "CoxPHFitter CoxTimeVaryingFitter", ("cox",)),
    **_table(
        "lifelines",
        "WeibullAFTFitter LogNormalAFTFitter LogLogisticAFTFitter "
        "GeneralizedGammaRegressionFitter PiecewiseExponentialRegressionFitter CRCSplineFitter "
        "WeibullFitter ExponentialFitter LogNormalFitter LogLogisticFitter",
        ("parametric_survival",),
    ),
    **_table("lifelines", "AalenAdditiveFitter KaplanMeierFitter", ("other",)),
    **_table("sksurv", "CoxPHSurvivalAnalysis CoxnetSurvivalAnalysis", ("cox",)),
    **_table("sksurv", "IPCRidge", ("parametric_survival",)),
    **_table("sksurv", "RandomSurvivalForest ExtraSurvivalTrees", ("random_forest",)),
    **_table(
        "sksurv",
        "GradientBoostingSurvivalAnalysis ComponentwiseGradientBoostingSurvivalAnalysis",
        ("gbdt",),
    ),
    **_table(
        "sksurv",
        "FastSurvivalSVM FastKernelSurvivalSVM SurvivalTree KaplanMeierEstimator",
        ("other",),
    ),
    **_table(
        "pycox",
        "CoxPH CoxCC CoxTime DeepHitSingle DeepHit LogisticHazard PMF MTLR BCESurv PCHazard",
        ("neural_net",),
    ),
    **_table("torch", "Sequential", ("neural_net",)),
    **_table("torchtuples", "MLPVanilla", ("neural_net",)),
    **_table("keras", "Sequential Model", ("neural_net",)),
    **_table("tensorflow", "Sequential Model", ("neural_net",)),
    **_table("statsmodels", "Logit Probit GLM OLS logit glm", ("linear",)),
    **_table("statsmodels", "PHReg phreg", ("cox",)),
    **_table("tabpfn", "TabPFNClassifier TabPFNRegressor", ("other",)),
    **_table("interpret", "ExplainableBoostingClassifier", ("other",)),
}

#: Library base classes whose user subclasses are neural networks.
NEURAL_BASES = {("torch", "Module"), ("keras", "Model"), ("tensorflow", "Model")}

#: Univariate estimators fitted for weights or baselines, not submitted models unless they reach
#: the submission file.
NONPARAMETRIC = {("lifelines", "KaplanMeierFitter"), ("sksurv", "KaplanMeierEstimator")}

#: Estimators that wrap other estimators: key -> (kind, keyword names holding the inner model(s)).
#: Kinds: ``calibrate`` (probability calibration), ``blend`` (voting), ``stack``, ``search``
#: (hyperparameter search with cross-validation), ``pipeline``, ``wrap`` (pass-through).
WRAPPERS: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {
    ("sklearn", "CalibratedClassifierCV"): ("calibrate", ("estimator", "base_estimator")),
    **_table("sklearn", "VotingClassifier VotingRegressor", ("blend", ("estimators",))),
    **_table(
        "sklearn",
        "StackingClassifier StackingRegressor",
        ("stack", ("estimators", "final_estimator")),
    ),
    **_table(
        "sklearn",
        "GridSearchCV RandomizedSearchCV HalvingGridSearchCV HalvingRandomSearchCV",
        ("search", ("estimator",)),
    ),
    **_table("sklearn", "Pipeline make_pipeline", ("pipeline", ("steps",))),
    **_table("imblearn", "Pipeline make_pipeline", ("pipeline", ("steps",))),
    **_table(
        "sklearn",
        "OneVsRestClassifier MultiOutputClassifier BaggingClassifier TransformedTargetRegressor "
        "ClassifierChain",
        ("wrap", ("estimator", "base_estimator")),
    ),
}

#: Post-hoc calibrators fitted on predictions: key -> method name.
CALIBRATORS: dict[tuple[str, str], str] = {
    ("sklearn", "IsotonicRegression"): "isotonic",
    ("betacal", "BetaCalibration"): "beta",
    ("netcal", "TemperatureScaling"): "temperature",
    ("netcal", "LogisticCalibration"): "platt",
    ("netcal", "BetaCalibration"): "beta",
    ("netcal", "IsotonicRegression"): "isotonic",
}

#: Resampling classes and functions -> codebook ``class_imbalance_handling`` value.
RESAMPLERS: dict[tuple[str, str], str] = {
    **_table(
        "imblearn",
        "SMOTE SMOTENC SMOTEN ADASYN BorderlineSMOTE SVMSMOTE KMeansSMOTE SMOTEENN SMOTETomek",
        "smote",
    ),
    ("imblearn", "RandomOverSampler"): "oversampling",
    **_table(
        "imblearn",
        "RandomUnderSampler NearMiss TomekLinks EditedNearestNeighbours "
        "RepeatedEditedNearestNeighbours AllKNN CondensedNearestNeighbour OneSidedSelection "
        "NeighbourhoodCleaningRule InstanceHardnessThreshold ClusterCentroids",
        "undersampling",
    ),
}

#: Balanced ensembles of imbalanced-learn undersample internally.
RESAMPLING_MODELS = {
    ("imblearn", n): "undersampling"
    for n in (
        "BalancedRandomForestClassifier",
        "BalancedBaggingClassifier",
        "EasyEnsembleClassifier",
        "RUSBoostClassifier",
    )
}

#: Functions returning class-frequency weights.
CLASS_WEIGHT_FUNCTIONS = {
    ("sklearn", "compute_class_weight"),
    ("sklearn", "compute_sample_weight"),
}

#: Cross-validation splitters and helpers -> codebook ``validation_design`` values.
SPLITTERS: dict[tuple[str, str], tuple[str, ...]] = {
    ("sklearn", "train_test_split"): ("single_holdout",),
    ("sklearn", "PredefinedSplit"): ("single_holdout",),
    **_table(
        "sklearn", "KFold StratifiedKFold TimeSeriesSplit LeaveOneOut LeavePOut", ("kfold_cv",)
    ),
    **_table(
        "sklearn",
        "RepeatedKFold RepeatedStratifiedKFold ShuffleSplit StratifiedShuffleSplit",
        ("repeated_cv",),
    ),
    **_table("sklearn", "GroupKFold StratifiedGroupKFold", ("kfold_cv", "group_split")),
    ("sklearn", "GroupShuffleSplit"): ("single_holdout", "group_split"),
    **_table("sklearn", "LeaveOneGroupOut LeavePGroupsOut", ("group_split",)),
    **_table(
        "sklearn", "cross_val_score cross_validate cross_val_predict learning_curve", ("kfold_cv",)
    ),
    ("lightgbm", "cv"): ("kfold_cv",),
    ("xgboost", "cv"): ("kfold_cv",),
    ("iterstrat", "MultilabelStratifiedKFold"): ("kfold_cv",),
}

#: Method names that turn a fitted model into predictions.
PREDICT_METHODS = frozenset(
    words(
        "predict_proba predict decision_function predict_survival_function predict_partial_hazard "
        "predict_log_partial_hazard predict_cumulative_hazard predict_expectation predict_median "
        "predict_percentile predict_surv_df predict_surv predict_cif predict_hazard predict_risk "
        "predict_survival predict_cumulative_hazard_function forward"
    )
)

#: Performance metrics (subgroup checks are these, computed within demographic groups).
METRIC_FUNCTIONS = {
    **_table(
        "sklearn",
        "roc_auc_score average_precision_score brier_score_loss log_loss accuracy_score "
        "f1_score precision_score recall_score confusion_matrix roc_curve precision_recall_curve "
        "balanced_accuracy_score matthews_corrcoef",
        True,
    ),
    ("lifelines", "concordance_index"): True,
    **_table(
        "sksurv",
        "concordance_index_censored concordance_index_ipcw cumulative_dynamic_auc "
        "integrated_brier_score brier_score",
        True,
    ),
    ("pycox", "EvalSurv"): True,
}

#: Functions and methods whose result marks missing values.
MISSING_FUNCTIONS = {
    ("numpy", "isnan"),
    ("pandas", "isna"),
    ("pandas", "isnull"),
    ("pandas", "notna"),
    ("pandas", "notnull"),
    ("torch", "isnan"),
}
MISSING_METHODS = frozenset({"isna", "isnull", "notna", "notnull"})
#: Imputers/indicators that add missing-value indicator columns.
MISSING_INDICATORS = {("sklearn", "MissingIndicator")}
INDICATOR_IMPUTERS = {
    ("sklearn", "SimpleImputer"),
    ("sklearn", "IterativeImputer"),
    ("sklearn", "KNNImputer"),
}

#: Rank transforms.
RANK_FUNCTIONS = {("scipy", "rankdata"), ("sklearn", "QuantileTransformer")}

#: Column-name patterns (case-insensitive), matched against literal column keys.
SITE_COLUMN = re.compile(
    r"(^|_)(hosp|hospital|hospitalid|site|center|centre|unit|ward|icu|cohort|source|region|"
    r"domain)(id|_id)?($|_)",
    re.IGNORECASE,
)
DEMOGRAPHIC_COLUMN = re.compile(
    r"^(age|sex|gender|race|ethnicity|ethnic|race_ethnicity)(_group|_bin|_cat)?$", re.IGNORECASE
)
EVENT_COLUMN = re.compile(
    r"^(event|events|status|dead|death|died|fstat|censor|censored|observed|e|delta|"
    r"event_observed|label_event|vital_status)$",
    re.IGNORECASE,
)
DURATION_COLUMN = re.compile(
    r"^(duration|durations|time|times|t|futime|survival_time|stime|days|months|followup|"
    r"follow_up|time_to_event|tte|los)$",
    re.IGNORECASE,
)
