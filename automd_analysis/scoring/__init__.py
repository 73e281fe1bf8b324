"""Score archived runs: run -> score records; whole archive -> Parquet score store.

Parallel (local processes or a Dask cluster), cached by content hash (an unchanged re-run does no
metric work) and incremental (a killed run resumes where it stopped). Modules, one concern each:

``metrics_for``  validated predictions + labels -> metric record per task kind
``subgroups``    subgroup assignment (paper App. F) and subgroup scores
``cache``        content-hash cache with atomic writes
``plan``         archive + manifests -> files, cache keys, unique jobs
``worker``       score one file / one chunk of a task (what a worker process runs)
``store``        cache + archive metadata -> Parquet tables (``docs/score_store.md``)
``engine``       plan -> execute (process pool / Dask) -> publish
``profile``      CPU seconds per task and kind of work (``<store>/scoring_profile.json``)
"""

from automd_analysis.scoring.cache import ScoreCache, cache_key
from automd_analysis.scoring.engine import ScoreSummary, checked_settings, score_archive
from automd_analysis.scoring.worker import score_file

__all__ = [
    "ScoreCache",
    "ScoreSummary",
    "cache_key",
    "checked_settings",
    "score_archive",
    "score_file",
]
