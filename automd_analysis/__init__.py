"""automd-analysis: re-score and analyse archived runs of autonomous ML agents on medical tasks.

Data flows one way::

    manifest -> submission -> score store -> analysis tables -> report

Sub-packages and modules (one concern each):

``metrics``      pure metric functions on arrays (no I/O)
``tasks``        task manifests, data-root resolution, checksum-verified hidden labels
``submissions``  read + validate a prediction file against a task
``archive``      discover runs, versions, metadata and annotations (read-only)
``scoring``      runs -> score records -> Parquet score store (parallel, cached, incremental)
``analysis``     score store (+ annotations) -> tidy DataFrames, one module per paper analysis
``report``       paper-style tables, figures, notebook execution and the HTML report site
``demo``         demo cohorts from public data and the scripted-agent demo archive
``cli``          the ``automd`` command
"""

from automd_analysis._version import __version__

__all__ = ["__version__"]
