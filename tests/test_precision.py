"""Published numbers, ranks and marks do not depend on floating-point noise.

:func:`automd_analysis.precision.comparable` is the one rule (12 significant digits) applied before
every rank, sort, threshold and "best" mark and in every CSV. The unit tests pin the rule; the
perturbation tests move every non-zero computed input of the published tables by one ulp (up or down, at
random with a fixed seed) - the size of the difference between two CPUs or BLAS builds - and
require every page of every published table (3-decimal display, ranks and bold marks) to stay
byte-identical, and every CSV to keep its ranks and labels.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from automd_analysis.precision import SIGNIFICANT_DIGITS, comparable, comparable_scalar, sample_sd

ROOT = Path(__file__).resolve().parent.parent
finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)


def test_values_equal_in_exact_arithmetic_compare_equal():
    assert comparable(1.9999999999999993) == comparable(2.0000000000000004) == 2.0
    assert comparable(0.1 + 0.2) == 0.3
    assert comparable(-0.0) == 0.0 and str(comparable(-0.0)) == "0.0"
    # values that differ in a digit anyone reads stay apart
    assert comparable(0.123456789011) != comparable(0.123456789012)


@given(
    st.floats(-1e6, 1e6, allow_nan=False).filter(lambda x: x != 0),
    st.integers(2, 12),
    st.integers(0, 3),
)
def test_the_sd_of_values_equal_at_12_digits_is_exactly_zero(x, n, ulps):
    """np.std of three copies of 0.2 is 3.4e-17 (its mean is rounded); an SD of ties is 0."""
    values = [x] * n
    for i in range(min(ulps, n)):
        values[i] = float(np.nextafter(values[i], np.inf))
    if len(set(comparable(values).tolist())) == 1:
        assert sample_sd(values) == 0.0
    assert sample_sd([0.2, 0.2, 0.2]) == 0.0
    assert sample_sd([0.2, 0.3]) == pytest.approx(np.std([0.2, 0.3], ddof=1), rel=1e-12)
    assert np.isnan(sample_sd([x]))


def test_every_container_keeps_its_shape_and_missing_values():
    series = pd.Series([1 / 3, np.nan, np.inf], index=["a", "b", "c"], name="x")
    out = comparable(series)
    assert list(out.index) == ["a", "b", "c"] and out.name == "x"
    assert out["a"] == 0.333333333333 and np.isnan(out["b"]) and out["c"] == np.inf
    frame = pd.DataFrame({"k": ["a"], "v": [2 / 3], "n": [3]})
    rounded = comparable(frame)
    assert rounded.loc[0, "v"] == 0.666666666667 and rounded.loc[0, "n"] == 3
    assert rounded["k"].tolist() == ["a"]
    assert comparable(np.array([[1 / 7]])).shape == (1, 1)
    assert comparable(pd.Series([0.5, None], dtype="Float64")).tolist()[0] == 0.5


@given(finite)
def test_rounding_is_within_half_a_unit_of_the_last_kept_digit(x):
    c = comparable_scalar(x)
    assert abs(c - x) <= 0.5 * 10 ** (1 - SIGNIFICANT_DIGITS) * abs(x) * (1 + 1e-15)
    assert comparable_scalar(c) == c  # idempotent


@given(finite, finite)
def test_rounding_keeps_the_order(x, y):
    lo, hi = sorted((x, y))
    assert comparable_scalar(lo) <= comparable_scalar(hi)


# --------------------------------------------------------------------------------------------------
# one ulp on the inputs of every published table


def _nudged(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Every finite non-zero value moved one ulp up or down (zeros are exact: clipped scores)."""
    out = values.astype(np.float64, copy=True)
    move = np.isfinite(out) & (out != 0)
    up = rng.random(out.shape) < 0.5
    out[move & up] = np.nextafter(out[move & up], np.inf)
    out[move & ~up] = np.nextafter(out[move & ~up], -np.inf)
    return out


#: Float columns that are not computed results: grid points, bin edges and horizons (read from a
#: grid file or a fixed linspace, the same bits everywhere), counts and budgets stored as floats.
EXACT_COLUMNS = frozenset(
    {"quantile", "time", "lo", "hi", "x", "horizon", "horizon_quantile", "step", "null_score"}
    | {"n", "n_rows", "n_events", "budget_minutes", "tokens_prompt", "tokens_completion"}
    | {"tokens_total"}
)


def _nudge_frame(frame: pd.DataFrame | None, rng: np.random.Generator) -> pd.DataFrame | None:
    if frame is None:
        return None
    out = frame.copy()
    for column in out.columns:
        if (
            column not in EXACT_COLUMNS
            and pd.api.types.is_float_dtype(out[column])
            and not isinstance(out[column].dtype, pd.api.extensions.ExtensionDtype)
        ):
            out[column] = _nudged(out[column].to_numpy(), rng)
    return out


def _published(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((directory / "tables").glob("*"))}


def _csv_agrees(old: bytes, new: bytes) -> bool:
    """Same rows and text columns (ranks, labels, counts); floats equal to 1e-9 relative: a
    standard deviation of nearly equal values amplifies an ulp of its inputs into its 12th digit,
    which no page shows (the pages are compared byte for byte)."""
    import io

    a = pd.read_csv(io.BytesIO(old), keep_default_na=False, dtype=str)
    b = pd.read_csv(io.BytesIO(new), keep_default_na=False, dtype=str)
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return False
    for column in a.columns:
        x, y = a[column], b[column]
        if (x == y).all():
            continue
        fx, fy = pd.to_numeric(x, errors="coerce"), pd.to_numeric(y, errors="coerce")
        if fx.isna().ne(fy.isna()).any() or column.startswith("rank"):
            return False
        if not np.allclose(fx, fy, rtol=1e-9, atol=0, equal_nan=True):
            return False
    return True


@pytest.fixture(scope="module")
def fixture_store():
    sys.path.insert(0, str(ROOT / "tests" / "nbval"))
    try:
        import nbval_params
    finally:
        sys.path.pop(0)
    from automd_analysis.analysis.store import load_store

    summary = nbval_params.score_fixture()
    return load_store(summary.out_dir)


STORE_TABLES = (
    "scores",
    "runs",
    "subgroups",
    "calibration_bins",
    "reasons",
    "annotations",
    "pairs",
    "steps",
    "calibration_measures",
    "calibration_curves",
    "replicates",
    "annotation_comparison",
)


def _with_twin(store, agent: str, twin: str):
    """``store`` plus a copy of every main-experiment run of ``agent`` named ``twin``: every mean, rank,
    mark and comparison of the two is an exact tie, which one ulp of noise must not break."""
    from automd_analysis.analysis.store import ScoreStore

    frames = {}
    for name in STORE_TABLES:
        frame = getattr(store, name)
        if frame is None or "run_id" not in frame:
            frames[name] = frame
            continue
        ids = frame["run_id"].astype(str)
        mine = ids.str.startswith("main/") & (ids.str.split("/").str[1] == agent)
        copy = frame.loc[mine].copy()
        copy["run_id"] = ids[mine].str.replace(f"/{agent}/", f"/{twin}/", regex=False)
        if "agent" in copy:
            copy["agent"] = twin
        frames[name] = pd.concat([frame, copy], ignore_index=True)
    return ScoreStore(**frames, problems=store.problems, meta=store.meta, path=store.path)


@pytest.mark.slow
def test_one_ulp_on_the_score_store_changes_no_published_table(fixture_store, tmp_path):
    import notebook_exports as nx

    from automd_analysis.analysis.store import ScoreStore

    store = _with_twin(fixture_store, "alpha", "alpha-twin")
    rng = np.random.default_rng(20261201)
    frames = {name: _nudge_frame(getattr(store, name), rng) for name in STORE_TABLES}
    nudged = ScoreStore(**frames, problems=store.problems, meta=store.meta, path=store.path)
    changed = sum(
        int((frames[n].select_dtypes("float").to_numpy() != getattr(store, n)
             .select_dtypes("float").to_numpy()).sum())
        for n in ("scores", "subgroups", "calibration_bins")
    )  # fmt: skip
    assert changed > 100  # the perturbation really moved the inputs

    before = tmp_path / "before"
    after = tmp_path / "after"
    nx.export_notebook_outputs(nx.report_on(store, before), draw_figures=False)
    nx.export_notebook_outputs(nx.report_on(nudged, after), draw_figures=False)
    old, new = _published(before), _published(after)
    assert old.keys() == new.keys() and len(old) > 30
    pages = [n for n in old if not n.endswith(".csv") and old[n] != new[n]]
    assert not pages, f"one ulp changed what {pages} show (3 decimals, ranks, bold marks)"
    numbers = [n for n in old if n.endswith(".csv") and not _csv_agrees(old[n], new[n])]
    assert not numbers, f"one ulp changed ranks or labels of {numbers}"
    same = sum(old[n] == new[n] for n in old if n.endswith(".csv"))
    assert same >= 0.9 * sum(n.endswith(".csv") for n in old)  # most CSVs are byte-identical


@pytest.mark.slow
def test_one_ulp_on_the_process_metrics_changes_no_rank_or_rho(fixture_store):
    from automd_analysis.analysis import process
    from automd_analysis.report.tables import csv_text

    store = fixture_store
    assert store.code_texts(), "the fixture store publishes the code of its versions"

    def embed(texts, nudge=None):
        from automd_analysis.analysis.embeddings import embed_code

        e, name = embed_code(texts, backend="hashing")
        return (e if nudge is None else _nudged(e, nudge)), name

    def tables(per_run):
        return [
            csv_text(process.spearman_table(per_run)),
            csv_text(process.process_summary(per_run)),
            csv_text(process.opportunity_partition(per_run)),
        ]

    per_run = process.process_metrics(store, embed=embed)
    rng = np.random.default_rng(7)
    shaken = process.process_metrics(store, embed=lambda t: embed(t, rng))
    assert csv_text(per_run) == csv_text(shaken)  # per-run values, to 12 significant digits
    assert tables(per_run) == tables(shaken)
    nudged = _nudge_frame(per_run, np.random.default_rng(8))
    assert tables(per_run) == tables(nudged)
    # effective dimensions of 2 computed by two paths are one value, so ranks tie
    dims = comparable(per_run["effective_dim"].to_numpy())
    assert (dims == 2.0).sum() >= 2
