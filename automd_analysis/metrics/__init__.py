"""Pure metric functions on arrays (no I/O, no pandas): every number the toolkit publishes.

One module per concern:

``normalize``             eq. (1) normalised score
``discrimination``        AUROC, PhysioNet 2012 min(Se, PPV)
``concordance``           time-dependent concordance C^td (pycox semantics, O(G n log n))
``survival``              time grid, curve indexing, Kaplan-Meier
``survival_calibration``  survival ECE against Kaplan-Meier (App. F)
``survival_brier``        IPCW Brier score / integrated Brier score (extra)
``calibration``           binary ECE, reliability bins, Brier score
``calibration_binning``   equal-mass ECE, Murphy decomposition of the Brier score
``calibration_logistic``  calibration intercept / slope (model or cluster-robust SEs), Spiegelhalter z
``calibration_smooth``    loess calibration curve: ICI, E50/E90/Emax, curve with pointwise interval
``decision_curve``        net benefit with treat-all / treat-none references
``survival_dcal``         D-calibration of survival curves
``survival_horizon``      survival calibration at a horizon: KM groups, Cox slope, pseudo-value ICI
``utility``               PhysioNet/CinC 2019 normalised utility
``bootstrap``             bootstrap intervals (percentile, BCa) and the resample weights
``replicated``            a metric on the observed data and on its resamples in one kernel call
``registry``              :class:`Metric` declarations: the built-in metrics and the user's own

Every metric the score store uses takes ``weights=``: integer multiplicities per resampling unit,
or a matrix of them (one row per bootstrap replicate, :func:`bootstrap_weights`), for which it
returns every replicate at once. Malformed input raises :class:`ValueError` naming the argument and the first offending index; a metric
that is undefined on well-formed input returns ``nan`` and emits :class:`UndefinedMetricWarning`.
"""

from automd_analysis.metrics._docstrings import fill_doc
from automd_analysis.metrics._numba import set_kernel_threads
from automd_analysis.metrics._replicated import (
    Replicated,
    observed_first,
    recorded,
    recording,
    stacked_result,
    with_replicates,
)
from automd_analysis.metrics._validation import UndefinedMetricWarning
from automd_analysis.metrics._weights import cluster_row_weights
from automd_analysis.metrics.bootstrap import (
    BOOTSTRAP_METHODS,
    BootstrapResult,
    bca_interval,
    bootstrap_ci,
    bootstrap_indices,
    bootstrap_weights,
    percentile_interval,
)
from automd_analysis.metrics.calibration import CalibrationBins, brier, calibration_bins, ece
from automd_analysis.metrics.calibration_binning import (
    BrierDecomposition,
    brier_decomposition,
    calibration_bins_equal_mass,
    ece_equal_mass,
)
from automd_analysis.metrics.calibration_logistic import (
    CalibrationInterceptSlope,
    SpiegelhalterResult,
    calibration_intercept_slope,
    spiegelhalter_z,
)
from automd_analysis.metrics.calibration_smooth import (
    ICIResult,
    SmoothedCalibrationCurve,
    ici,
    smoothed_calibration_curve,
)
from automd_analysis.metrics.concordance import CONCORDANCE_METHODS, concordance_td
from automd_analysis.metrics.decision_curve import DecisionCurve, net_benefit
from automd_analysis.metrics.discrimination import auroc, min_se_ppv
from automd_analysis.metrics.normalize import normalized_score
from automd_analysis.metrics.registry import (
    BUILTIN_METRICS,
    ECE_METRICS,
    Metric,
    MetricInputs,
    ece_metric,
)
from automd_analysis.metrics.survival import (
    KaplanMeierCurve,
    grid_index_post,
    kaplan_meier,
    survival_time_grid,
)
from automd_analysis.metrics.survival_brier import integrated_brier_score, survival_brier_score
from automd_analysis.metrics.survival_calibration import (
    SurvivalECEResult,
    survival_ece,
    survival_ece_replicated,
)
from automd_analysis.metrics.survival_dcal import DCalibrationResult, d_calibration
from automd_analysis.metrics.survival_horizon import (
    SurvivalCalibrationAt,
    cox_calibration_slope,
    km_pseudo_observations,
    smoothed_survival_calibration_curve,
    survival_calibration_at,
    survival_ici_at,
)
from automd_analysis.metrics.utility import (
    UTILITY_PARAMETERS,
    SepsisUtilityParts,
    sepsis_utility,
    sepsis_utility_parts,
)

__all__ = [
    "set_kernel_threads",
    "fill_doc",
    "BOOTSTRAP_METHODS",
    "BUILTIN_METRICS",
    "CONCORDANCE_METHODS",
    "UTILITY_PARAMETERS",
    "BootstrapResult",
    "BrierDecomposition",
    "CalibrationBins",
    "CalibrationInterceptSlope",
    "DCalibrationResult",
    "DecisionCurve",
    "ECE_METRICS",
    "ICIResult",
    "KaplanMeierCurve",
    "Metric",
    "MetricInputs",
    "SepsisUtilityParts",
    "SmoothedCalibrationCurve",
    "SpiegelhalterResult",
    "SurvivalCalibrationAt",
    "Replicated",
    "SurvivalECEResult",
    "UndefinedMetricWarning",
    "auroc",
    "bca_interval",
    "bootstrap_ci",
    "bootstrap_indices",
    "bootstrap_weights",
    "brier",
    "brier_decomposition",
    "calibration_bins",
    "calibration_bins_equal_mass",
    "calibration_intercept_slope",
    "cluster_row_weights",
    "concordance_td",
    "cox_calibration_slope",
    "d_calibration",
    "ece",
    "ece_equal_mass",
    "ece_metric",
    "grid_index_post",
    "ici",
    "integrated_brier_score",
    "kaplan_meier",
    "km_pseudo_observations",
    "min_se_ppv",
    "net_benefit",
    "normalized_score",
    "percentile_interval",
    "sepsis_utility",
    "sepsis_utility_parts",
    "smoothed_calibration_curve",
    "smoothed_survival_calibration_curve",
    "spiegelhalter_z",
    "survival_brier_score",
    "survival_calibration_at",
    "survival_ece",
    "survival_ece_replicated",
    "survival_ici_at",
    "survival_time_grid",
    "recorded",
    "observed_first",
    "recording",
    "stacked_result",
    "with_replicates",
]
