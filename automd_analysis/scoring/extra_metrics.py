"""The user's own metrics: where they come from, what identifies them, and how one submission is
scored with them (docs/extending.md).

A user metric is an :class:`~automd_analysis.metrics.Metric` object in the user's own module, named
on the command line (``automd score --metric module:attribute``, repeatable) or registered under the
entry-point group ``automd.metrics`` of an installed package. It is imported by the user's own
Python - never from an archive. :func:`user_metrics` loads both kinds (entry points first, then the
command line, each name once); :func:`fingerprint` is what enters the cache key, so adding,
removing or editing a metric re-scores the selected submissions.

:func:`extra_metric_results` computes every applicable user metric on one submission: the value on
the observed data (all weights 1) and one value per bootstrap replicate, on the same resample
weights as the built-in metrics (so the intervals are comparable and paired across runs), with the
percentile interval of the finite replicates. A metric that raises, returns something that is not
a number, or returns a non-finite value never fails the scoring: it becomes a problem of that run
(``metric.failed`` / ``metric.non_finite``, with the metric's name and the message).
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points

import numpy as np

from automd_analysis import metrics
from automd_analysis.errors import AutomdError
from automd_analysis.metrics import Metric, MetricInputs

__all__ = [
    "ENTRY_POINT_GROUP",
    "UserMetric",
    "extra_metric_results",
    "fingerprint",
    "load_metric",
    "user_metrics",
]

#: Entry-point group of installed user metrics (each entry point names a Metric object).
ENTRY_POINT_GROUP = "automd.metrics"

_SPEC_FIX = (
    "pass --metric MODULE:ATTRIBUTE naming a Metric object of an importable module, e.g. "
    "--metric mymetrics:sens_at_90_spec (docs/extending.md)"
)


@dataclass(frozen=True)
class UserMetric:
    """A loaded user metric and where it came from.

    Attributes
    ----------
    spec : str
        ``module:attribute`` of the :class:`~automd_analysis.metrics.Metric` object (workers
        re-import it from this).
    metric : Metric
    origin : str
        ``"--metric"`` or ``"entry point NAME"``.
    """

    spec: str
    metric: Metric
    origin: str


def _source_sha256(function) -> str | None:
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return None
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def fingerprint(user: UserMetric) -> dict:
    """What identifies a user metric in the cache key: its declaration, ``module:attribute`` and
    the sha256 of its function's source (when Python can find the source)."""
    m = user.metric
    return {
        "name": m.name,
        "spec": user.spec,
        "kinds": list(m.kinds),
        "higher_is_better": m.higher_is_better,
        "vectorized": m.vectorized,
        "source_sha256": _source_sha256(m.function),
    }


def _load_error(message: str, spec: str, code: str, fix: str = _SPEC_FIX) -> AutomdError:
    return AutomdError(message, location=f"--metric {spec}", code=code, fix=fix)


def load_metric(spec: str, origin: str = "--metric") -> UserMetric:
    """Import the :class:`~automd_analysis.metrics.Metric` that ``spec`` (``module:attribute``,
    the attribute may be dotted) names.

    Raises
    ------
    AutomdError
        ``metric.bad_spec`` (no ``:``), ``metric.import_failed`` (the module or attribute cannot
        be imported; the message says why) or ``metric.not_a_metric``.

    Examples
    --------
    >>> load_metric("automd_analysis.metrics.registry:BUILTIN_METRICS").spec
    Traceback (most recent call last):
    ...
    automd_analysis.errors.AutomdError: automd_analysis.metrics.registry:BUILTIN_METRICS is a dict, ...
    >>> load_metric("no_such_module_xyz:m").spec
    Traceback (most recent call last):
    ...
    automd_analysis.errors.AutomdError: cannot import no_such_module_xyz:m: ModuleNotFoundError: ...
    """
    module_name, sep, attribute = str(spec).partition(":")
    if not sep or not module_name or not attribute:
        raise _load_error(f"{spec!r} is not of the form MODULE:ATTRIBUTE", spec, "metric.bad_spec")
    try:
        value = importlib.import_module(module_name)
        for part in attribute.split("."):
            value = getattr(value, part)
    except Exception as exc:  # any failure of the user's module is reported, never raised
        raise _load_error(
            f"cannot import {spec}: {type(exc).__name__}: {exc}", spec, "metric.import_failed"
        ) from None
    if not isinstance(value, Metric):
        raise _load_error(
            f"{spec} is a {type(value).__name__}, not an automd_analysis.metrics.Metric",
            spec,
            "metric.not_a_metric",
        )
    return UserMetric(spec=str(spec), metric=value, origin=origin)


def user_metrics(
    specs: Sequence[str] = (), *, include_entry_points: bool = True
) -> list[UserMetric]:
    """The user metrics of a scoring: the entry points of ``automd.metrics`` (by name), then
    ``specs`` in order.

    Raises
    ------
    AutomdError
        A spec or entry point cannot be loaded (:func:`load_metric`), or two metrics share a name,
        or a name is a built-in metric's (``metric.duplicate_name``).
    """
    found: list[UserMetric] = []
    if include_entry_points:
        for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            found.append(load_metric(ep.value, origin=f"entry point {ep.name}"))
    found += [load_metric(spec) for spec in specs]
    reserved = set(metrics.BUILTIN_METRICS) | {m.name for m in metrics.ECE_METRICS.values()}
    seen: dict[str, UserMetric] = {}
    for user in found:
        name = user.metric.name
        if name in reserved or name in seen:
            other = "a built-in metric" if name in reserved else seen[name].spec
            raise _load_error(
                f"metric name {name!r} of {user.spec} ({user.origin}) is already taken by {other}",
                user.spec,
                "metric.duplicate_name",
                fix="give every user metric its own name (Metric(name=...))",
            )
        seen[name] = user
    return found


def _as_value(result) -> float:
    value = np.asarray(result)
    if value.shape != () or value.dtype.kind not in "biuf":
        raise TypeError(f"returned {type(result).__name__} {result!r:.60}, not a number")
    return float(value)


def _call(metric: Metric, inputs: MetricInputs, weights: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _as_value(metric.evaluate(inputs, weights))


def _problem(code: str, name: str, message: str, effect: str = "metric not published") -> dict:
    return {
        "code": code,
        "metric": name,
        "effect": effect,
        "message": f"user metric {name!r} {message}",
    }


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


def _replicates(metric: Metric, inputs: MetricInputs, weights: np.ndarray):
    """(replicate values with NaN for failures, failure count, first failure message)."""
    out = np.full(weights.shape[0], np.nan)
    failed, first = 0, None
    for b in range(weights.shape[0]):
        try:
            out[b] = _call(metric, inputs, np.asarray(weights[b], dtype=np.int64))
        except Exception as exc:  # the user's code: recorded, never raised
            failed += 1
            first = first or _describe(exc)
    return out, failed, first


def extra_metric_results(
    users: Sequence[UserMetric], inputs: MetricInputs, weights: np.ndarray | None, alpha: float
) -> tuple[list[dict], list[dict]]:
    """Every user metric that applies to ``inputs.kind`` on one submission.

    Parameters
    ----------
    users : sequence of UserMetric
    inputs : MetricInputs
        The submission's arrays (:func:`~automd_analysis.scoring.metrics_for.metric_inputs`).
    weights : numpy.ndarray of shape (n_boot, n_units), or None
        The task's resample weights (``None``: no bootstrap, the intervals are NaN).
    alpha : float
        1 - confidence level of the percentile intervals.

    Returns
    -------
    (rows, problems)
        ``rows``: one dict per metric with a finite value - ``metric``, ``higher_is_better``,
        ``value``, ``ci_low``, ``ci_high``, ``replicates`` (list; NaN where a replicate failed or
        was not finite); ``problems``: dicts ``code``, ``metric``, ``message``.
    """
    rows, problems = [], []
    ones = np.ones(inputs.n_units, dtype=np.int64)
    for user in users:
        metric = user.metric
        if inputs.kind not in metric.kinds:
            continue
        try:
            value = _call(metric, inputs, ones)
        except Exception as exc:  # the user's code: recorded, never raised
            problems.append(_problem("metric.failed", metric.name, f"failed: {_describe(exc)}"))
            continue
        if not math.isfinite(value):
            problems.append(_problem("metric.non_finite", metric.name, f"returned {value}"))
            continue
        reps = np.empty(0)
        if weights is not None and weights.shape[0]:
            reps, failed, first = _replicates(metric, inputs, weights)
            if failed:
                problems.append(
                    _problem(
                        "metric.failed",
                        metric.name,
                        f"failed on {failed} of {len(reps)} bootstrap replicates; first: {first}",
                        "replicates left out of the interval",
                    )
                )
            bad = int((~np.isfinite(reps)).sum()) - failed
            if bad:
                problems.append(
                    _problem(
                        "metric.non_finite",
                        metric.name,
                        f"returned a non-finite value on {bad} of {len(reps)} bootstrap replicates",
                        "replicates left out of the interval",
                    )
                )
                reps = np.where(np.isfinite(reps), reps, np.nan)
        low, high = metrics.percentile_interval(reps, alpha) if reps.size else (math.nan, math.nan)
        rows.append(
            {
                "metric": metric.name,
                "higher_is_better": metric.higher_is_better,
                "value": value,
                "ci_low": low,
                "ci_high": high,
                "replicates": [None if not math.isfinite(v) else float(v) for v in reps],
            }
        )
    return rows, problems
