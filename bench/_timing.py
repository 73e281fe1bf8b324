"""Timing helper shared by the benchmark scripts (run as ``python bench/<script>.py``, so this
directory is on ``sys.path``)."""

from __future__ import annotations

import statistics
import time


def timed(fn, repeat: int):
    """(median wall seconds, last result) over ``repeat`` calls of ``fn()``."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result
