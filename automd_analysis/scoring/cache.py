"""Content-addressed score cache with atomic writes (``docs/score_store.md``, section Cache).

One JSON file per scored submission content, ``<dir>/<key[:2]>/<key>.json``. The key is

    sha256(json([submission sha256 | "absent", task content hash, labels sha256,
                 scorer version, cache format]))

so a changed submission, manifest, hidden-label file or scorer gives a new key, and an unchanged
archive finds every entry again (no metric work). Entries are written to a temporary file in the
same directory, then ``os.replace``-d into place: a killed run leaves only
complete entries (plus temporaries, which are ignored and cleaned up by the next run).
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from automd_analysis._atomic import atomic_path
from automd_analysis.tasks import sha256_file  # re-exported: the one streamed file hash

__all__ = ["CACHE_FORMAT", "ScoreCache", "cache_key", "sha256_file"]

#: Version of the entry layout and of what an entry means; part of every key, so a change never
#: reads old entries. 2: the pooled subgroup is "Other (remaining)" when a kept category is "other".
#: 3: details hold calibration measures, the smoothed curve and bootstrap replicates; survival ECE
#: groups never split tied predictions. 4: details hold the subgroups' bootstrap replicates.
CACHE_FORMAT = 4
_TMP_PREFIX = ".tmp-"


def cache_key(
    submission_sha256: str | None,
    task_hash: str,
    labels_sha256: str,
    scorer_version: str,
    bootstrap: tuple[int, ...] = (0, 0),
    extra: list[dict] | None = None,
    settings: dict | None = None,
) -> str:
    """The cache key of one submission content scored against one task.

    Parameters
    ----------
    submission_sha256 : str or None
        sha256 of the submission bytes; ``None`` for an absent file (its "invalid: missing" result
        is cached too).
    task_hash : str
        :attr:`automd_analysis.tasks.Task.content_hash` (the canonical manifest JSON).
    labels_sha256 : str
        The pinned sha256 of the hidden-label file.
    scorer_version : str
        ``automd_analysis.__version__``.
    bootstrap : (int, int) or (int, int, int)
        ``(n_boot, seed)`` of the per-run bootstrap, and the replicates of every valid file's
        interval when there are any (another setting is another result).
    extra : list of dict, optional
        Fingerprints of the user metrics
        (:func:`~automd_analysis.scoring.extra_metrics.fingerprint`): adding, removing or editing
        one changes every key. Without user metrics the key is what it always was.
    settings : dict, optional
        Scoring settings that differ from their defaults (``{"ece_n_bins": 15}``): another
        setting is another result. Without any the key is what it always was.

    Returns
    -------
    str
        64 lower-case hex digits.
    """
    parts = [submission_sha256 or "absent", task_hash, labels_sha256, scorer_version, CACHE_FORMAT]
    if tuple(bootstrap) != (0, 0):
        parts.append([int(b) for b in bootstrap])
    if extra:
        parts.append({"extra_metrics": list(extra)})
    if settings:
        parts.append({"settings": dict(sorted(settings.items()))})
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def _plain(obj: Any) -> Any:
    """JSON-ready copy: numpy scalars/arrays to Python, tuples to lists, other objects to str."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [_plain(v) for v in obj.tolist()]
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, bool | int | str):
        return obj
    if isinstance(obj, float):
        return obj
    return str(obj)


class ScoreCache:
    """The cache directory of a score store.

    Parameters
    ----------
    directory : str or Path
        Created on first write.
    """

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)

    def path(self, key: str) -> Path:
        """Where the entry of ``key`` lives."""
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        """The entry of ``key``, or ``None`` if absent, unreadable or not for this key/format.

        A corrupt entry (impossible through :meth:`put`, but disks fail) is treated as missing, so
        it is simply scored again.
        """
        try:
            with open(self.path(key), encoding="utf-8") as fh:
                entry = json.load(fh)
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        if entry.get("format") != CACHE_FORMAT:
            return None
        return entry

    def has(self, key: str) -> bool:
        """True if a readable entry exists for ``key``."""
        return self.get(key) is not None

    def put(self, key: str, entry: dict) -> Path:
        """Write ``entry`` for ``key`` atomically (temporary file + ``os.replace``).

        A killed process leaves either the complete entry or none. There is no ``fsync``: after a
        power loss an entry could be truncated, which :meth:`get` detects (invalid JSON) and treats
        as missing, so the file is simply scored again.

        ``entry`` may hold numpy scalars, NaN and infinities (written as JSON ``NaN``/``Infinity``,
        which :meth:`get` reads back exactly). ``key`` and ``format`` are added.
        """
        target = self.path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        doc = _plain({**entry, "key": key, "format": CACHE_FORMAT})
        data = json.dumps(doc, sort_keys=True, allow_nan=True).encode("utf-8")
        with atomic_path(target, prefix=_TMP_PREFIX) as tmp:
            Path(tmp).write_bytes(data)
        return target

    def clean_temporaries(self, older_than: float = 0.0) -> int:
        """Delete temporaries left by killed runs; returns how many were removed.

        Parameters
        ----------
        older_than : float, default 0
            Only temporaries not modified for this many seconds are removed, so a scorer still
            writing to the same cache is not disturbed. Temporaries are never read either way.
        """
        removed = 0
        if not self.directory.is_dir():
            return 0
        now = time.time()
        for tmp in self.directory.glob(f"*/{_TMP_PREFIX}*"):
            try:
                if now - tmp.stat().st_mtime >= older_than:
                    tmp.unlink()
                    removed += 1
            except OSError:
                pass
        return removed
