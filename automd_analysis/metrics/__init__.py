"""Pure metric functions on arrays (no I/O, no pandas): every number the toolkit publishes.

One module per concern:

``normalize``             eq. (1) normalised score
``discrimination``        AUROC, PhysioNet 2012 min(Se, PPV)
``concordance``           time-dependent concordance C^td (pycox semantics, O(G n log n))
``survival``              time grid, curve indexing, Kaplan-Meier
``survival_calibration``  survival ECE against Kaplan-Meier (App. F)
``survival_brier``        IPCW Brier score / integrated Brier score (extra)
``calibration``           binary ECE, reliability bins, Brier score
``utility``               PhysioNet/CinC 2019 normalised utility
``bootstrap``             bootstrap intervals; fast exact replicates of every metric above

Malformed input raises :class:`ValueError` naming the argument and the first offending index; a metric
that is undefined on well-formed input returns ``nan`` and emits :class:`UndefinedMetricWarning`.
"""

from automd_analysis.metrics._validation import UndefinedMetricWarning
from automd_analysis.metrics.bootstrap import (
    BOOTSTRAP_METHODS,
    BootstrapResult,
    auroc_bootstrap,
    bca_interval,
    bootstrap_ci,
    bootstrap_indices,
    concordance_td_bootstrap,
    ece_bootstrap,
    min_se_ppv_bootstrap,
    percentile_interval,
    sepsis_utility_bootstrap,
    survival_ece_bootstrap,
)
from automd_analysis.metrics.calibration import CalibrationBins, brier, calibration_bins, ece
from automd_analysis.metrics.concordance import CONCORDANCE_METHODS, concordance_td
from automd_analysis.metrics.discrimination import auroc, min_se_ppv
from automd_analysis.metrics.normalize import normalized_score
from automd_analysis.metrics.survival import (
    KaplanMeierCurve,
    grid_index_post,
    kaplan_meier,
    survival_time_grid,
)
from automd_analysis.metrics.survival_brier import integrated_brier_score, survival_brier_score
from automd_analysis.metrics.survival_calibration import SurvivalECEResult, survival_ece
from automd_analysis.metrics.utility import (
    UTILITY_PARAMETERS,
    SepsisUtilityParts,
    sepsis_utility,
    sepsis_utility_parts,
)

__all__ = [
    "BOOTSTRAP_METHODS",
    "CONCORDANCE_METHODS",
    "UTILITY_PARAMETERS",
    "BootstrapResult",
    "CalibrationBins",
    "KaplanMeierCurve",
    "SepsisUtilityParts",
    "SurvivalECEResult",
    "UndefinedMetricWarning",
    "auroc",
    "auroc_bootstrap",
    "bca_interval",
    "bootstrap_ci",
    "bootstrap_indices",
    "brier",
    "calibration_bins",
    "concordance_td",
    "concordance_td_bootstrap",
    "ece",
    "ece_bootstrap",
    "grid_index_post",
    "integrated_brier_score",
    "kaplan_meier",
    "min_se_ppv",
    "min_se_ppv_bootstrap",
    "normalized_score",
    "percentile_interval",
    "sepsis_utility",
    "sepsis_utility_bootstrap",
    "sepsis_utility_parts",
    "survival_brier_score",
    "survival_ece",
    "survival_ece_bootstrap",
    "survival_time_grid",
]
