"""The loess smoother behind the smoothed calibration measures (ICI, E50/E90/Emax, curves).

A local quadratic regression with tricube weights on nearest-neighbour windows (Cleveland, Grosse and
Shyu 1992, the model of R ``loess(y ~ x, degree = 2, span = 0.75)`` with ``family = "gaussian"``, i.e.
no robustness iterations), as used by Austin and Steyerberg (2019) for the integrated calibration
index. Definitions (x sorted, n observations):

- window size q = max(1, floor(span * n)); at x0 the bandwidth h(x0) is the q-th smallest distance
  |x_i - x0| (ties counted);
- weights w_i = (1 - (|x_i - x0| / h)^3)^3 for |x_i - x0| < h, else 0;
- the fit at x0 is a, the intercept of the weighted least-squares fit of y on (1, d, d^2) with
  d = x_i - x0; its local slope is b;
- degree falls back to 1 (then 0) when fewer than 3 (2) distinct x carry a positive weight, or when
  the 3x3 (2x2) normal equations are numerically singular (relative determinant below 1e-10);
- when at least q observations equal x0 exactly (h = 0) the fit is the mean of y over all of them;
  when no observation lies strictly inside the window (q = 1 and x0 between observations) it is the
  mean of y over the observations at the window's edge values.

Evaluation ("surface"): with at most ``max_direct`` distinct x the fit is computed directly at every
distinct x (exact). Above that, it is computed exactly at vertices - the union of ``n_vertices``
equally spaced points on [min x, max x] and ``n_vertices`` quantiles of x - and read elsewhere from
the not-a-knot cubic spline through the vertex values. R's default ``surface = "interpolate"`` does
the same kind of thing on its k-d tree vertices (about ten in one dimension, cubic Hermite); our
vertex set is denser, and the tests bound the interpolation error against the direct fit.

The window sums are vectorised (LLVM may reassociate them), so their last bits can differ between
CPUs with different vector widths; on one machine the result is bit-for-bit reproducible.

Pointwise variance (for curve intervals): the fit is linear in y, a = sum_i l_i y_i; the kernel also
returns sum_i l_i^2 so that a binomial variance a(1 - a) * sum_i l_i^2 can be formed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from automd_analysis.metrics._numba import cached_njit, prange

__all__ = ["LoessFit", "loess_fit"]

#: Relative determinant below which the local normal equations are treated as singular.
_SINGULAR = 1e-10


@cached_njit(inline="always")
def _window_start(xs, x0, q):
    """First index L of the q-element contiguous block of sorted xs nearest to x0."""
    n = xs.shape[0]
    lo = 0
    hi = n - q
    # smallest L with x0 - xs[L] <= xs[L + q] - x0 (moving right no longer helps)
    while lo < hi:
        mid = (lo + hi) >> 1
        if x0 - xs[mid] > xs[mid + q] - x0:
            lo = mid + 1
        else:
            hi = mid
    return lo


@cached_njit(nogil=True, inline="always")
def _tricube(xi, x0, inv_h):
    u = (xi - x0) * inv_h
    au = abs(u)
    c = max(1.0 - au * au * au, 0.0)
    return c * c * c, u


@cached_njit(inline="always")
def _add_point(s, w, u):
    """The sums ``s`` of w u^k (k = 0..4) with one more point's w and u added."""
    wu = w * u
    wu2 = wu * u
    return (s[0] + w, s[1] + wu, s[2] + wu2, s[3] + wu2 * u, s[4] + wu2 * u * u)


@cached_njit(nogil=True, fastmath={"reassoc", "nsz", "contract"})
def _moments(xs, ys, x0, inv_h, lo, hi):
    """Sums of w u^k (k = 0..4) and w y u^k (k = 0..2) over xs[lo:hi], u = (x - x0) / h."""
    s = (0.0, 0.0, 0.0, 0.0, 0.0)
    t0 = t1 = t2 = 0.0
    for i in range(lo, hi):
        w, u = _tricube(xs[i], x0, inv_h)
        s = _add_point(s, w, u)
        y = ys[i]
        t0 += w * y
        t1 += w * u * y
        t2 += w * u * u * y
    return s[0], s[1], s[2], s[3], s[4], t0, t1, t2


@cached_njit(nogil=True, fastmath={"reassoc", "nsz", "contract"})
def _weight_moments(xs, x0, inv_h, lo, hi, squared):
    """Sums of w^p u^k (k = 0..4; p = 1, or 2 if ``squared``) over xs[lo:hi] (outcome-free:
    binary y uses the positives' x)."""
    s = (0.0, 0.0, 0.0, 0.0, 0.0)
    for i in range(lo, hi):
        w, u = _tricube(xs[i], x0, inv_h)
        if squared:
            w = w * w
        s = _add_point(s, w, u)
    return s


@cached_njit(inline="always")
def _sum_count_at(xs, ys, xs1, binary, v):
    """Sum of y and count over the observations with x == v (``xs`` sorted)."""
    a = np.searchsorted(xs, v, side="left")
    b = np.searchsorted(xs, v, side="right")
    if binary:
        return float(
            np.searchsorted(xs1, v, side="right") - np.searchsorted(xs1, v, side="left")
        ), b - a
    total = 0.0
    for i in range(a, b):
        total += ys[i]
    return total, b - a


@cached_njit(nogil=True)
def _fit_range(xs, ys, xs1, binary, x_eval, q, want_var, max_degree, j0, j1, value, slope, sum_l2):
    """Local quadratic fit at x_eval[j0:j1], written to value/slope/sum_l2 (fitted value, local
    slope, sum of squared equivalent-kernel weights).

    ``xs`` sorted x with outcomes ``ys``; when ``binary`` the outcomes are 0/1 and ``xs1`` holds the
    sorted x of the observations with y = 1 (``ys`` is then unused), so no permutation is needed.
    """
    n = xs.shape[0]
    for j in range(j0, j1):
        x0 = x_eval[j]
        start = _window_start(xs, x0, q) if q < n else 0
        stop = start + q
        h = max(x0 - xs[start], xs[stop - 1] - x0)
        if h <= 0.0:
            # at least q observations equal x0: mean of all of them
            s, cnt = _sum_count_at(xs, ys, xs1, binary, x0)
            value[j] = s / cnt
            slope[j] = 0.0
            sum_l2[j] = 1.0 / cnt
            continue
        inv_h = 1.0 / h
        # observations with |x - x0| < h (all others weigh 0); distinct x among them, up to 3
        lo = np.searchsorted(xs, x0 - h, side="right")
        hi = np.searchsorted(xs, x0 + h, side="left")
        lo = max(lo, start)
        hi = min(hi, stop)
        if hi <= lo:
            # nobody strictly inside the window (q = 1, x0 between observations): the mean of y
            # over every observation at distance exactly h (one value on each side at most)
            tot = 0.0
            cnt = 0
            a = np.searchsorted(xs, x0, side="left")
            below = xs[a - 1] if a > 0 else np.nan
            b = np.searchsorted(xs, x0, side="right")
            above = xs[b] if b < n else np.nan
            for edge in (below, above):
                if abs(edge - x0) == h:  # also skips nan
                    part, k = _sum_count_at(xs, ys, xs1, binary, edge)
                    tot += part
                    cnt += k
            value[j] = tot / cnt
            slope[j] = 0.0
            sum_l2[j] = 1.0 / cnt
            continue
        if xs[lo] == xs[hi - 1]:
            distinct = 1
        elif np.searchsorted(xs, xs[lo], side="right") < np.searchsorted(
            xs, xs[hi - 1], side="left"
        ):
            distinct = 3
        else:
            distinct = 2
        if binary:
            s0, s1, s2, s3, s4 = _weight_moments(xs, x0, inv_h, lo, hi, False)
            lo1 = np.searchsorted(xs1, xs[lo], side="left")
            hi1 = np.searchsorted(xs1, xs[hi - 1], side="right")
            t0, t1, t2, _, _ = _weight_moments(xs1, x0, inv_h, lo1, hi1, False)
        else:
            s0, s1, s2, s3, s4, t0, t1, t2 = _moments(xs, ys, x0, inv_h, lo, hi)
        zero = (0.0, 0.0, 0.0, 0.0, 0.0)
        v0, v1, v2, v3, v4 = _weight_moments(xs, x0, inv_h, lo, hi, True) if want_var else zero
        degree = min(max_degree, 2 if distinct >= 3 else distinct - 1)
        done = False
        if degree == 2:
            # inverse of the symmetric 3x3 moment matrix [[s0,s1,s2],[s1,s2,s3],[s2,s3,s4]]
            c00 = s2 * s4 - s3 * s3
            c01 = s2 * s3 - s1 * s4
            c02 = s1 * s3 - s2 * s2
            det = s0 * c00 + s1 * c01 + s2 * c02
            scale = s0 * s2 * s4
            if scale > 0.0 and det > _SINGULAR * scale:
                c11 = s0 * s4 - s2 * s2
                c12 = s1 * s2 - s0 * s3
                # first and second rows of the inverse (symmetric): e1' M^-1 and e2' M^-1
                r0 = c00 / det
                r1 = c01 / det
                r2 = c02 / det
                value[j] = r0 * t0 + r1 * t1 + r2 * t2
                slope[j] = ((c01 * t0 + c11 * t1 + c12 * t2) / det) * inv_h
                if want_var:
                    sum_l2[j] = (
                        r0 * (r0 * v0 + r1 * v1 + r2 * v2)
                        + r1 * (r0 * v1 + r1 * v2 + r2 * v3)
                        + r2 * (r0 * v2 + r1 * v3 + r2 * v4)
                    )
                else:
                    sum_l2[j] = np.nan
                done = True
            else:
                degree = 1
        if not done and degree == 1:
            det = s0 * s2 - s1 * s1
            if s0 * s2 > 0.0 and det > _SINGULAR * s0 * s2:
                r0 = s2 / det
                r1 = -s1 / det
                value[j] = r0 * t0 + r1 * t1
                slope[j] = ((-s1 * t0 + s0 * t1) / det) * inv_h
                if want_var:
                    sum_l2[j] = r0 * (r0 * v0 + r1 * v1) + r1 * (r0 * v1 + r1 * v2)
                else:
                    sum_l2[j] = np.nan
                done = True
        if not done:
            value[j] = t0 / s0
            slope[j] = 0.0
            sum_l2[j] = v0 / (s0 * s0) if want_var else np.nan


@cached_njit(nogil=True)
def _fit_points_serial(xs, ys, xs1, binary, x_eval, q, want_var, max_degree):
    m = x_eval.shape[0]
    value, slope, sum_l2 = np.empty(m), np.empty(m), np.empty(m)
    _fit_range(xs, ys, xs1, binary, x_eval, q, want_var, max_degree, 0, m, value, slope, sum_l2)
    return value, slope, sum_l2


@cached_njit(nogil=True, parallel=True)
def _fit_points_parallel(xs, ys, xs1, binary, x_eval, q, want_var, max_degree):
    # every point is an independent fit: the result does not depend on the number of threads
    m = x_eval.shape[0]
    value, slope, sum_l2 = np.empty(m), np.empty(m), np.empty(m)
    for j in prange(m):
        _fit_range(
            xs, ys, xs1, binary, x_eval, q, want_var, max_degree, j, j + 1, value, slope, sum_l2
        )
    return value, slope, sum_l2


#: Window visits (points x evaluation sites) above which the fits run on the numba threads.
_PARALLEL_MIN_WORK = 5_000_000


def _fit_points(xs, ys, xs1, binary, x_eval, q, want_var, max_degree):
    """Local fits at every x_eval, on threads for large inputs (see :func:`_fit_range`)."""
    big = x_eval.shape[0] > 1 and q * x_eval.shape[0] >= _PARALLEL_MIN_WORK
    kernel = _fit_points_parallel if big else _fit_points_serial
    return kernel(xs, ys, xs1, binary, x_eval, q, want_var, max_degree)


@dataclass(frozen=True)
class LoessFit:
    """A fitted loess curve: exact values and local slopes at ``vertices``.

    Attributes
    ----------
    vertices : numpy.ndarray
        Sorted points where the local regression was solved.
    values, slopes : numpy.ndarray
        Fitted value and local first derivative at each vertex.
    sum_l2 : numpy.ndarray
        Sum of squared equivalent-kernel weights at each vertex (``nan`` unless requested).
    exact : bool
        ``True`` when the vertices are every distinct x (direct evaluation).
    span : float
    q : int
        Window size (observations) of every local fit.
    sorted_x : numpy.ndarray
        The data's x, sorted (for summaries over the data that do not depend on order).
    """

    vertices: np.ndarray
    values: np.ndarray
    slopes: np.ndarray
    sum_l2: np.ndarray
    exact: bool
    span: float
    q: int
    sorted_x: np.ndarray

    def predict(self, x) -> np.ndarray:
        """The curve at ``x`` (inside [min, max] of the data).

        Exact at the vertices; between them the not-a-knot cubic spline through the vertex values
        (``scipy.interpolate.CubicSpline``), or linear interpolation with fewer than four vertices.
        """
        x = np.asarray(x, dtype=np.float64)
        v = self.vertices
        if v.size == 1:
            return np.full(x.shape, self.values[0])
        if self.exact:
            # every data point is a vertex: read the value itself where x is one
            k = np.clip(np.searchsorted(v, x), 0, v.size - 1)
            hit = v[k] == x
            if hit.all():
                return self.values[k]
        if v.size < 4:
            out = np.interp(x, v, self.values)
        else:
            from scipy.interpolate import CubicSpline

            out = CubicSpline(v, self.values)(x)
        k = np.clip(np.searchsorted(v, x), 0, v.size - 1)
        return np.where(v[k] == x, self.values[k], out)


def loess_fit(
    x: np.ndarray,
    y: np.ndarray,
    *,
    span: float = 0.75,
    max_direct: int = 2000,
    n_vertices: int = 64,
    want_var: bool = False,
    extra_points: np.ndarray | None = None,
    only_extra_points: bool = False,
    degree: int = 2,
) -> LoessFit:
    """Fit the module's loess (inputs already validated: finite 1-D float arrays of equal length).

    ``extra_points`` are added to the vertex set (e.g. a plotting grid, so that curve values there
    are exact); with ``only_extra_points`` they are the only vertices (those outside the data range
    are dropped). ``degree`` (2, 1 or 0) caps the local degree (1 = local linear, for comparisons
    with lowess).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y)
    binary = y.dtype.kind in "biu" and (y.size == 0 or (y.min() >= 0 and y.max() <= 1))
    if binary:
        xs = np.sort(x)
        xs1 = np.sort(x[y == 1])
        ys = np.empty(0)
    else:
        order = np.argsort(x, kind="stable")
        xs = np.ascontiguousarray(x[order])
        ys = np.ascontiguousarray(y[order], dtype=np.float64)
        xs1 = np.empty(0)
    n = xs.size
    q = int(min(n, max(1, np.floor(span * n))))
    distinct = np.unique(xs)
    if only_extra_points:
        vertices, exact = np.empty(0), False
    elif distinct.size <= max_direct:
        vertices, exact = distinct, True
    else:
        grid = np.linspace(xs[0], xs[-1], n_vertices)
        quants = np.quantile(xs, np.linspace(0.0, 1.0, n_vertices))
        vertices, exact = np.unique(np.concatenate((grid, quants))), False
    if extra_points is not None and extra_points.size:
        inside = extra_points[(extra_points >= xs[0]) & (extra_points <= xs[-1])]
        vertices = np.unique(np.concatenate((vertices, inside)))
    value, slope, sum_l2 = _fit_points(xs, ys, xs1, binary, vertices, q, want_var, degree)
    return LoessFit(
        vertices=vertices,
        values=value,
        slopes=slope,
        sum_l2=sum_l2,
        exact=exact,
        span=float(span),
        q=q,
        sorted_x=xs,
    )
