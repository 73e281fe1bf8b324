"""``automd score`` end to end on the committed fixture, checked column by column against values
computed here independently (pandas + sklearn + pycox + lifelines + a plain utility loop), plus
exit codes and a SIGKILL-then-resume run that must give byte-identical tables."""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from references import require
from sklearn.metrics import brier_score_loss, roc_auc_score

import automd_analysis
from automd_analysis.scoring.publish import TABLES

#: The module shares one scored store: keep its tests on one xdist worker.
#: Integration tests (CLI, end to end, demo cohorts): `make test-fast` skips them.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("scoring_cli")]

SMALL = Path(__file__).resolve().parent / "fixtures" / "small"
ARCHIVE, DATA, MANIFESTS = SMALL / "archive", SMALL / "data", SMALL / "manifests"
EXPECTED = json.loads((SMALL / "expected.json").read_text())
#: What each designed corruption must be reported as (prefix of the first reason code).
CORRUPTION_CODES = {
    "missing": "file.missing",
    "unreadable": "file.",
    "survival_columns": "columns.",
    "wrong_ids": "ids.",
    "missing_rows": "ids.",
    "duplicate_ids": "ids.",
    "patient_hours": "rows.",
    "prob_range": "probability.",
    "nan_prob": "values.",
    "bad_label": "label.",
    "non_monotone": "survival.",
}
TOL = 1e-12


def automd(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "automd_analysis", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _score_args(out: Path, *extra: str) -> list[str]:
    return [
        "score",
        str(ARCHIVE),
        "--data",
        str(DATA),
        "--manifests",
        str(MANIFESTS),
        "--out",
        str(out),
        *extra,
    ]


def _entries(out: Path) -> list[Path]:
    """Complete cache entries (temporaries start with a dot)."""
    return [p for p in (out / "cache").glob("*/*.json") if not p.name.startswith(".")]


def _store_bytes(out: Path) -> dict[str, bytes]:
    return {f: (out / f).read_bytes() for f in [f"{t}.parquet" for t in TABLES] + ["store.json"]}


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "scores"
    proc = automd(*_score_args(out, "--jobs", "2", "--no-progress"))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "invalid:" in proc.stdout and "from cache" in proc.stdout
    return out


def _tables(out: Path) -> dict[str, pd.DataFrame]:
    return {t: pd.read_parquet(out / f"{t}.parquet") for t in TABLES}


# ---------------------------------------------------------------------------------------------
# independent computation
# ---------------------------------------------------------------------------------------------


def _manifest(task: str) -> dict:
    return yaml.safe_load((MANIFESTS / f"{task}.yaml").read_text())


def _labels(task: str) -> pd.DataFrame:
    return pd.read_csv(
        DATA / task / "labels.csv", dtype={"pid": str, "patient_id": str, "hour": str}
    )


def _grid(task: str) -> tuple[np.ndarray, list[str]]:
    texts = (DATA / task / "time_grid.csv").read_text().split()[1:]
    return np.array([float(t) for t in texts]), texts


def _aligned(task: str, sub_path: Path) -> dict:
    """Read a (valid) submission and align it to the labels file order with pandas."""
    m = _manifest(task)
    lab = _labels(task)
    ids = m["submission"]["id_columns"]
    sub = pd.read_csv(sub_path, dtype={c: str for c in ids})
    merged = lab[ids].merge(sub, on=ids, how="left", validate="one_to_one")
    out = {"labels": lab}
    if m["kind"] == "survival":
        grid, texts = _grid(task)
        out["surv"] = merged[texts].to_numpy(float)
        out["grid"] = grid
    else:
        out["p"] = merged["PredictedProbability"].to_numpy(float)
        if "PredictedLabel" in merged:
            out["label"] = merged["PredictedLabel"].to_numpy(int)
    return out


def _binary_bins(y, p) -> list[dict]:
    """Ten equal-width bins with numpy.histogram's edges and membership (the reference convention:
    edges ``linspace(0, 1, 11)``, [lo, hi), last bin closed)."""
    counts, edges = np.histogram(p, bins=10, range=(0.0, 1.0))
    sum_p, _ = np.histogram(p, bins=edges, weights=p)
    sum_y, _ = np.histogram(p, bins=edges, weights=y)
    rows = []
    for b in range(10):
        n = int(counts[b])
        rows.append(
            {
                "bin": b,
                "lo": edges[b],
                "hi": edges[b + 1],
                "n": n,
                "mean_pred": sum_p[b] / n if n else math.nan,
                "observed": sum_y[b] / n if n else math.nan,
                "kept": n > 0,
                "weight": n / len(p),
            }
        )
    return rows


def _ece_from_bins(rows) -> float:
    return sum(r["weight"] * abs(r["mean_pred"] - r["observed"]) for r in rows if r["kept"])


def _survival_groups(t, e, surv, grid) -> list[dict]:
    lifelines = require("lifelines")
    rows = []
    for q in (0.25, 0.5, 0.75):
        tq = np.quantile(t[e == 1], q)
        dist = np.abs(grid - tq)
        g = int(np.flatnonzero(dist == dist.min())[0])  # earlier grid point on an exact tie
        pred = surv[:, g]
        order = list(np.argsort(pred, kind="stable"))
        # np.array_split's cuts, each moved past a block of equal predictions (never split ties)
        cuts = np.cumsum([len(p) for p in np.array_split(order, 10)])[:-1].tolist()
        for i, c in enumerate(cuts):
            while 0 < c < len(order) and pred[order[c]] == pred[order[c - 1]]:
                c += 1
            cuts[i] = max(c, cuts[i - 1] if i else 0)
        parts = [
            np.array(order[a:b], dtype=int)
            for a, b in zip([0, *cuts], [*cuts, len(order)], strict=True)
        ]
        kept_n = sum(len(ix) for ix in parts if len(ix) >= 5)
        for b, ix in enumerate(parts):
            row = {
                "quantile": q,
                "time": grid[g],
                "bin": b,
                "n": len(ix),
                "mean_pred": pred[ix].mean() if len(ix) else math.nan,
            }
            if len(ix) >= 5:
                km = lifelines.KaplanMeierFitter().fit(t[ix], e[ix])
                row |= {
                    "observed": float(km.predict(grid[g])),
                    "kept": True,
                    "weight": len(ix) / kept_n,
                }
            else:
                row |= {"observed": math.nan, "kept": False, "weight": 0.0}
            rows.append(row)
    return rows


def _utility(pid, y, pred) -> float:
    """PhysioNet 2019 normalised utility, straight from the official definition (loops)."""

    def u(delta, predicted, septic):
        if not septic:
            return -0.05 if predicted else 0.0
        if predicted:
            if delta <= -6:
                return max((delta + 12) / 6, -0.05)
            return (3 - delta) / 9 if delta <= 3 else 0.0
        return -2 * (delta + 6) / 9 if -6 < delta <= 3 else 0.0

    u_obs = u_best = u_none = 0.0
    for patient in dict.fromkeys(pid):
        rows = np.flatnonzero(pid == patient)
        labels = y[rows]
        septic = bool(labels.any())
        t_sepsis = int(np.argmax(labels)) + 6 if septic else 10**9
        n = len(rows)
        best = np.zeros(n, bool)
        if septic:
            best[max(0, t_sepsis - 12) : min(t_sepsis + 3, n - 1) + 1] = True
        for t in range(n):
            d = t - t_sepsis
            u_obs += u(d, bool(pred[rows[t]]), septic)
            u_best += u(d, bool(best[t]), septic)
            u_none += u(d, False, septic)
    return (u_obs - u_none) / (u_best - u_none)


def _antolini(t, e, surv, grid, method):
    pycox_eval = require("pycox.evaluation")
    ev = pycox_eval.EvalSurv(pd.DataFrame(surv.T, index=grid), t.astype(float), e.astype(int))
    return ev.concordance_td(method)


def _groups(values: pd.Series, rule: str, attr: str) -> pd.Series:
    """Independent subgroup assignment (App. F): value thresholds / top-4 counts."""
    if rule == "tertiles":
        x = values.astype(float)
        q1, q2 = np.quantile(x.dropna(), [1 / 3, 2 / 3])
        lo, hi = x.min(), x.max()
        labels = [
            f"{attr} T1 [{lo:g}, {q1:g})",
            f"{attr} T2 [{q1:g}, {q2:g})",
            f"{attr} T3 [{q2:g}, {hi:g}]",
        ]
        return pd.Series(
            np.select([x < q1, x < q2, x >= q2], labels, default=None), index=values.index
        ).where(x.notna(), None)
    v = values.fillna("").astype(str).str.strip()
    counts = v[v != ""].value_counts()
    ranked = sorted(counts.index, key=lambda k: (-counts[k], k))
    top = ranked if rule == "categorical" else ranked[:4]
    return v.map(lambda s: None if s == "" else (s if s in top else "Other"))


def _expected_subgroups(task: str, al: dict) -> list[dict]:
    m = _manifest(task)
    lab = al["labels"]
    rows = []
    for attr in sorted(m["subgroups"]):
        spec = m["subgroups"][attr]
        groups = _groups(lab[spec["column"]], spec["rule"], attr)
        for g in groups.dropna().unique():
            mask = (groups == g).to_numpy()
            n = int(mask.sum())
            if m["kind"] == "survival":
                t, e = lab["time"].to_numpy(float), lab["event"].to_numpy(int)
                n_ev = int(e[mask].sum())
                ok = n >= 80
                score = (
                    _antolini(t[mask], e[mask], al["surv"][mask], al["grid"], "antolini")
                    if ok
                    else math.nan
                )
            else:
                y = lab[m["labels"]["label"]].to_numpy(int)
                n_ev = int(y[mask].sum())
                ok = n >= 50 and 0 < n_ev < n
                score = roc_auc_score(y[mask], al["p"][mask]) if ok else math.nan
            rows.append(
                {
                    "attribute": attr,
                    "group": g,
                    "n": n,
                    "n_events": n_ev,
                    "score_raw": score,
                    "eligible": ok,
                }
            )
    return rows


_EXPECTED_CACHE: dict[tuple[str, str], dict] = {}


def _expected_metrics(task: str, sub_path: Path) -> dict:
    """Metrics of one file, memoised by content (selected submissions copy versions)."""
    key = (task, hashlib.sha256(sub_path.read_bytes()).hexdigest())
    if key not in _EXPECTED_CACHE:
        _EXPECTED_CACHE[key] = _compute_expected(task, sub_path)
    return _EXPECTED_CACHE[key]


def _compute_expected(task: str, sub_path: Path) -> dict:
    m = _manifest(task)
    al = _aligned(task, sub_path)
    lab = al["labels"]
    if m["kind"] == "survival":
        t, e = lab["time"].to_numpy(float), lab["event"].to_numpy(int)
        groups = _survival_groups(t, e, al["surv"], al["grid"])
        eces = [
            sum(
                r["weight"] * abs(r["mean_pred"] - r["observed"])
                for r in groups
                if r["quantile"] == q and r["kept"]
            )
            for q in (0.25, 0.5, 0.75)
        ]
        raw = _antolini(t, e, al["surv"], al["grid"], "adj_antolini")
        out = {"raw": raw, "auroc": math.nan, "brier": math.nan, "ece": float(np.mean(eces))}
        out |= {"n": len(t), "n_rows": len(t), "n_events": int(e.sum()), "bins": groups}
    else:
        y = lab[m["labels"]["label"]].to_numpy(int)
        p = al["p"]
        bins = _binary_bins(y, p)
        out = {
            "auroc": roc_auc_score(y, p),
            "brier": brier_score_loss(y, p),
            "ece": _ece_from_bins(bins),
        }
        out["bins"] = bins
        if m["metric"] == "auroc":
            out["raw"] = out["auroc"]
        elif m["metric"] == "min_se_ppv":
            lab_pred = al["label"]
            tp = int(((lab_pred == 1) & (y == 1)).sum())
            se = tp / int((y == 1).sum())
            ppv = tp / int((lab_pred == 1).sum()) if (lab_pred == 1).any() else math.nan
            out["raw"] = min(v for v in (se, ppv) if not math.isnan(v))
        else:
            pid = lab["patient_id"].to_numpy()
            out["raw"] = _utility(pid, y, al["label"])
        if m["kind"] == "sequential":
            pid = lab["patient_id"]
            out |= {
                "n": pid.nunique(),
                "n_rows": len(y),
                "n_events": int(lab.groupby("patient_id")[m["labels"]["label"]].max().sum()),
            }
        else:
            out |= {"n": len(y), "n_rows": len(y), "n_events": int(y.sum())}
    m0 = m["null_score"]
    out["score"] = min(1.0, max(0.0, (out["raw"] - m0) / (1 - m0)))
    out["subgroups"] = _expected_subgroups(task, al) if m["kind"] != "sequential" else []
    return out


def _close(a, b, tol=TOL) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b)) or pd.isna(b)
    return abs(float(a) - float(b)) <= tol


def _ts(text: str | None):
    return (
        None if text is None else pd.Timestamp(datetime.fromisoformat(text.replace("Z", "+00:00")))
    )


# ---------------------------------------------------------------------------------------------
# the checks
# ---------------------------------------------------------------------------------------------


@pytest.mark.reference
@pytest.mark.slow
def test_scores_every_column_independently(store):
    t = _tables(store)
    scores = t["scores"]
    assert len(scores) == sum(len(v) for v in EXPECTED.values())
    assert t["problems"].empty
    sub_rows = t["subgroups"].set_index(["run_id", "attribute", "group"])
    bin_rows = t["calibration_bins"]
    versions_seen = 0
    for _, row in scores.iterrows():
        run_dir = ARCHIVE / row.run_id
        rj = json.loads((run_dir / "run.json").read_text())
        assert (row.experiment, row.agent, row.task, row.rep) == (
            rj["experiment"],
            rj["agent"],
            rj["task"],
            rj["rep"],
        )
        assert row.llm == rj["llm"] and row.reference == rj.get("reference", False)
        m = _manifest(row.task)
        assert (row.task_kind, row.metric, row.validation, row["shift"]) == (
            m["kind"],
            m["metric"],
            m["validation"],
            m["shift"],
        )
        assert (
            row.internal_counterpart == m["internal_counterpart"]
            and row.shared_test_set == m["shared_test_set"]
        )
        assert row.null_score == m["null_score"]
        started = _ts(rj["started_at"])
        if row.version == "selected":
            assert row.is_selected and row.source_version == rj["selection"]["selected_version"]
            assert pd.isna(row.step) and row.parent is None and pd.isna(row.created_at)
            assert math.isnan(row.elapsed_min)
            assert _close(rj["reported_val_score"], row.reported_val)
            sub_path = run_dir / "submission.csv"
        else:
            versions_seen += 1
            meta = json.loads((run_dir / "versions" / row.version / "meta.json").read_text())
            assert not row.is_selected and row.source_version is None
            assert row.step == meta["step"] and row.parent == meta["parent"]
            assert row.created_at == _ts(meta["created_at"])
            assert _close((row.created_at - started).total_seconds() / 60, row.elapsed_min)
            assert _close(meta["reported_val_score"], row.reported_val)
            sub_path = run_dir / "versions" / row.version / "submission.csv"
        design = EXPECTED[row.run_id][row.version]
        assert row.valid == (design == "valid"), (row.run_id, row.version, design, row.reason_code)
        if sub_path.exists():
            sha = hashlib.sha256(sub_path.read_bytes()).hexdigest()
            assert row.submission_sha256 == sha
            labels_sha = m["files"]["labels"]["sha256"]
            assert len(row.cache_key) == 64 and row.cache_key != sha and labels_sha
        else:
            assert row.submission_sha256 is None and row.cache_key is None
        assert row.scorer_version == automd_analysis.__version__
        if not row.valid:
            assert row.reason_code.startswith(CORRUPTION_CODES[design]), (design, row.reason_code)
            assert row.reason_code in row.reason_codes.split("|")
            assert row.reason_codes.split("|") == sorted(row.reason_codes.split("|"))
            assert row.reason_message
            for col in ("raw", "score", "auroc", "ece", "brier"):
                assert math.isnan(row[col])
            assert pd.isna(row.n) and pd.isna(row.n_rows) and pd.isna(row.n_events)
            continue
        assert row.reason_code is None and row.reason_codes is None and row.reason_message is None
        exp = _expected_metrics(row.task, sub_path)
        for col in ("raw", "score", "auroc", "ece", "brier"):
            tol = 1e-9 if row.metric == "utility_2019" and col in ("raw", "score") else TOL
            assert _close(exp[col], row[col], tol), (
                row.run_id,
                row.version,
                col,
                exp[col],
                row[col],
            )
        assert (row.n, row.n_rows, row.n_events) == (exp["n"], exp["n_rows"], exp["n_events"])
        if not row.is_selected:
            continue
        # reliability rows
        got_bins = bin_rows[bin_rows.run_id == row.run_id].reset_index(drop=True)
        assert set(got_bins.kind) == {"survival" if row.task_kind == "survival" else "binary"}
        assert len(got_bins) == len(exp["bins"])
        for (_, g), e in zip(got_bins.iterrows(), exp["bins"], strict=True):
            for col in ("bin", "n", "kept"):
                assert g[col] == e[col]
            for col in ("mean_pred", "observed", "weight", "lo", "hi", "quantile", "time"):
                assert _close(e.get(col, math.nan), g[col]), (row.run_id, col)
        # subgroups
        exp_sg = exp["subgroups"]
        if row.task_kind == "sequential":
            assert row.run_id not in set(t["subgroups"].run_id)
        assert len(exp_sg) == len(t["subgroups"][t["subgroups"].run_id == row.run_id])
        for e in exp_sg:
            g = sub_rows.loc[(row.run_id, e["attribute"], e["group"])]
            assert (g.n, g.n_events, bool(g.eligible)) == (e["n"], e["n_events"], e["eligible"])
            assert _close(e["score_raw"], g.score_raw), (row.run_id, e)
            assert (g.reason is None) == e["eligible"]
    assert versions_seen > 100
    assert t["subgroups"].eligible.any() and (~t["subgroups"].eligible).any()
    assert set(t["subgroups"].task_kind) == {"survival", "classification"}


def test_reasons_table_lists_every_failed_check(store):
    t = _tables(store)
    scores, reasons = t["scores"], t["reasons"]
    invalid = scores[~scores.valid]
    got = reasons.groupby(["run_id", "version"]).code.apply(lambda s: "|".join(sorted(s)))
    for _, row in invalid.iterrows():
        assert got[(row.run_id, row.version)] == row.reason_codes
    assert len(reasons.groupby(["run_id", "version"])) == len(invalid)
    for ex in reasons.examples:
        assert isinstance(json.loads(ex), list)


def test_runs_steps_annotations_pairs_tables(store):
    t = _tables(store)
    runs = t["runs"].set_index("run_id")
    assert sorted(runs.index) == sorted(EXPECTED)
    for run_id, r in runs.iterrows():
        rj = json.loads((ARCHIVE / run_id / "run.json").read_text())
        start, end = _ts(rj["started_at"]), _ts(rj["ended_at"])
        minutes = (end - start).total_seconds() / 60
        assert r.started_at == start and r.ended_at == end and _close(minutes, r.run_minutes)
        assert r.budget_minutes == rj["budget_minutes"]
        assert r.ended_before_budget == (minutes < rj["budget_minutes"] - 1)
        tok = rj.get("tokens")
        if tok:
            assert (r.tokens_prompt, r.tokens_completion, r.tokens_total) == (
                tok["prompt"],
                tok["completion"],
                tok["total"],
            )
            assert r.tokens_simulated == tok.get("simulated", False)
        else:
            assert pd.isna(r.tokens_total) and r.tokens_simulated is None
        assert r.search == rj["search"] and r.objective == rj["objective"]
        assert r.selection_rule == rj["selection"]["rule"]
        assert r.selected_version == rj["selection"]["selected_version"]
        assert _close(rj["reported_val_score"], r.reported_val_score)
        vdir = ARCHIVE / run_id / "versions"
        n_versions = len(list(vdir.iterdir())) if vdir.exists() else 0
        assert r.n_versions == n_versions
        assert r.has_submission == (ARCHIVE / run_id / "submission.csv").exists()
        assert r.has_annotations == (ARCHIVE / run_id / "annotations.json").exists()
        m = _manifest(r.task)
        assert r.task_kind == m["kind"] and r.metric == m["metric"]
        steps = rj.get("steps")
        if steps is not None:
            assert (r.n_steps, r.n_steps_ok) == (len(steps), sum(s["ok"] for s in steps))
        else:
            metas = (
                [json.loads(p.read_text()) for p in vdir.glob("*/meta.json")]
                if vdir.exists()
                else []
            )
            ok = sum((not mt["faulty"]) and mt["reported_val_score"] is not None for mt in metas)
            assert (r.n_steps, r.n_steps_ok) == (len(metas), ok)
    steps = t["steps"]
    assert steps.groupby("run_id").size().sum() == runs.n_steps.sum()
    tree = steps[steps.run_id == "main/beta/fx_icu/rep0"]
    assert list(tree.step) == list(range(1, 9)) and tree.node.notna().all()
    # annotations, flattened independently
    ann, pairs = t["annotations"], t["pairs"]
    exp_ann, exp_pairs = set(), set()
    for run_id in EXPECTED:
        path = ARCHIVE / run_id / "annotations.json"
        if not path.exists():
            continue
        doc = json.loads(path.read_text())
        for field, a in doc["run"].items():
            values = a["value"] if isinstance(a["value"], list) else [a["value"]]
            for v in values:
                exp_ann.add((run_id, field, v, ";".join(a["evidence"]) or None))
        for i, p in enumerate(doc["pairs"]):
            for c in p["changes"] or ["none"]:
                exp_pairs.add((run_id, i, p["earlier"], p["later"], c, p["affects_predictions"]))
    assert set(zip(ann.run_id, ann.field, ann.value, ann.evidence, strict=True)) == exp_ann
    assert len(ann) == len(exp_ann)
    got_pairs = zip(
        pairs.run_id,
        pairs.pair_index,
        pairs.earlier,
        pairs.later,
        pairs.change,
        pairs.affects_predictions,
        strict=True,
    )
    assert set(got_pairs) == exp_pairs and len(pairs) == len(exp_pairs)
    weights = ann[ann.field == "censoring_handling"]
    assert set(weights.loc[weights.value == "censored_as_survivor", "affected_weight"]) == {1.0}


def test_tables_sorted_and_schema_documented(store):
    t = _tables(store)
    doc = (Path(__file__).resolve().parent.parent / "docs" / "score_store.md").read_text()
    for name, df in t.items():
        assert f"{name}.parquet" in doc
        if name == "replicates":  # keyed by run_id alone
            keys = list(zip(df.run_id, df.replicate, strict=True))
            assert keys == sorted(keys), name
        elif name == "subgroup_replicates":  # run_id alone, groups in display order
            assert list(df.run_id) == sorted(df.run_id), name
        elif "run_id" in df and name != "problems":
            keys = list(zip(df.experiment, df.agent, df.task, df.rep, strict=True))
            assert keys == sorted(keys), name
        for col in df.columns:
            assert f"`{col}`" in doc, (name, col)


def test_unchanged_rerun_is_cached_and_identical(store, tmp_path):
    import shutil

    copy = tmp_path / "again"
    shutil.copytree(store, copy)
    proc = automd(*_score_args(copy, "--jobs", "1", "--no-progress"))
    assert proc.returncode == 0, proc.stderr
    assert " 0 scored now" in proc.stdout
    assert _store_bytes(copy) == _store_bytes(store)


_SLOW_SCORER = """
import sys, time
from automd_analysis.scoring import worker
_real = worker.score_file
def _slow(*args, **kwargs):
    time.sleep(0.3)
    return _real(*args, **kwargs)
worker.score_file = _slow
from automd_analysis.cli import main
main(sys.argv[1:])
"""


@pytest.mark.slow
def test_sigkill_midway_then_rerun_gives_identical_store(store, tmp_path):
    script = tmp_path / "slow_automd.py"
    script.write_text(_SLOW_SCORER)
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, str(script), *_score_args(out, "--jobs", "1", "--no-progress")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    try:
        while len(_entries(out)) < 5:
            assert proc.poll() is None, "the scorer finished before it could be killed"
            assert time.monotonic() < deadline, "no cache entries appeared"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "scores.parquet").exists()
    n_before = len(_entries(out))
    for entry in _entries(out):  # every entry left behind is complete
        json.loads(entry.read_text())
    done = automd(*_score_args(out, "--jobs", "1", "--no-progress"))
    assert done.returncode == 0, done.stderr
    assert f"{n_before} from cache" in done.stdout
    assert _store_bytes(out) == _store_bytes(store)


def test_exit_codes_and_messages(tmp_path):
    missing = automd(
        "score", str(tmp_path / "nope"), "--data", str(DATA), "--out", str(tmp_path / "o")
    )
    assert missing.returncode == 2
    assert "archive directory not found" in missing.stderr and "Fix:" in missing.stderr
    assert "Traceback" not in missing.stderr
    nodata = automd(
        "score",
        str(ARCHIVE),
        "--data",
        str(tmp_path / "nodata"),
        "--manifests",
        str(MANIFESTS),
        "--out",
        str(tmp_path / "o"),
    )
    assert nodata.returncode == 2 and "data root not found" in nodata.stderr
    assert "Traceback" not in nodata.stderr and not (tmp_path / "o" / "scores.parquet").exists()


def test_missing_manifest_exits_2_but_writes_everything_else(tmp_path):
    import shutil

    manifests = tmp_path / "m"
    shutil.copytree(MANIFESTS, manifests)
    (manifests / "fx_surv_ext.yaml").unlink()
    out = tmp_path / "o"
    proc = automd(
        "score",
        str(ARCHIVE),
        "--data",
        str(DATA),
        "--manifests",
        str(manifests),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--no-progress",
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "fx_surv_ext" in proc.stderr and "Traceback" not in proc.stderr
    runs = pd.read_parquet(out / "runs.parquet")
    problems = pd.read_parquet(out / "problems.parquet")
    skipped = set(problems.loc[problems.code == "manifest.missing", "run_id"])
    assert skipped == {r for r in EXPECTED if "/fx_surv_ext/" in r}
    assert set(runs.run_id) == set(EXPECTED) - skipped
