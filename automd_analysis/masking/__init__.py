"""Masking test of the real-time rule for sequential tasks (paper App. G).

``procedure``  the test itself: masked test files, alarm comparison (pure, no code execution)
``results``    the results format (``masking.parquet`` or a user-supplied CSV) - read as data
``step``       the test over a whole archive, given a re-runner and explicit consent
``sandbox``    the only place archived code runs: a separate, limited process without network

Reports never re-run anything: ``automd regenerate`` reads masking results as data
(``--masking-results``) unless the user asks for the test with ``--masking
--allow-code-execution``.
"""

from automd_analysis.masking.procedure import (
    FLAG_THRESHOLD,
    MIN_ROWS,
    U_HIGH,
    U_LOW,
    MaskingComparison,
    MaskingError,
    compare_alarms,
    make_masked_test,
    mask_records,
    masking_plan,
    read_predictions_csv,
    retained_row_counts,
    run_masking_test,
    write_csv_atomic,
)
from automd_analysis.masking.results import (
    MASKING_COLUMNS,
    MASKING_FILE,
    REQUIRED_COLUMNS,
    STATUSES,
    MaskingResultsError,
    read_masking_results,
    write_masking_results,
)

__all__ = [
    "FLAG_THRESHOLD",
    "MASKING_COLUMNS",
    "MASKING_FILE",
    "MIN_ROWS",
    "REQUIRED_COLUMNS",
    "STATUSES",
    "U_HIGH",
    "U_LOW",
    "MaskingComparison",
    "MaskingError",
    "MaskingResultsError",
    "compare_alarms",
    "make_masked_test",
    "mask_records",
    "masking_plan",
    "read_masking_results",
    "read_predictions_csv",
    "retained_row_counts",
    "run_masking_test",
    "write_csv_atomic",
    "write_masking_results",
]
