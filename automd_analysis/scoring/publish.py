"""Build the Parquet score store from the archive metadata and the score cache, and publish it.

The tables and their columns are ``docs/score_store.md``; this module is the only writer. Tables
are built from the cache alone (plus archive metadata), with explicit Arrow schemas, rows in a
fixed order and no timestamps of the scoring itself, so the same archive and cache always give
byte-identical files.

**Publishing is all or nothing** (:func:`write_store`). Every table is built and serialised in
memory first (a value that does not fit its column fails here, before anything is touched); the
files are then written into a new *generation* directory ``generations/<id>/`` (``<id>`` = a hash of
the content), and the store switches to it by atomically replacing one symbolic link,
``current -> generations/<id>``. The table names at the top of the store (``scores.parquet``, ...,
``store.json``) are fixed links through ``current``, so readers keep using the familiar paths and
always see one complete generation: the previous one until the switch, the new one after. A
process killed at any point leaves the previous store intact; its temporaries are removed by the
next publish. The previous generation is kept for readers that opened it just before a switch.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import math
import os
import shutil
from collections.abc import Collection
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from automd_analysis import __version__
from automd_analysis._atomic import make_temp_dir
from automd_analysis.archive import Run
from automd_analysis.metrics.bootstrap import bias_corrected_interval
from automd_analysis.schema import NOT_SCORABLE, PROCESS_KIND, SCHEMAS, STORE_SCHEMA_VERSION, TABLES
from automd_analysis.scoring.plan import FileRef
from automd_analysis.scoring.scorable import import_origin
from automd_analysis.tasks import ProcessTask

__all__ = [
    "CURRENT",
    "GENERATIONS",
    "SCHEMAS",
    "STORE_SCHEMA_VERSION",
    "TABLES",
    "store_files",
    "task_rows",
    "write_store",
]

#: Directory of the store's generations, and the link naming the published one.
GENERATIONS = "generations"
CURRENT = "current"
_TMP = ".tmp-"


def _nan(x) -> float:
    return math.nan if x is None else float(x)


def _minutes(t: datetime | None, start: datetime) -> float:
    return math.nan if t is None else (t - start).total_seconds() / 60.0


def run_key(run: Run) -> dict:
    """The run-key columns of ``run``."""
    return {
        "run_id": run.run_id,
        "experiment": run.experiment,
        "agent": run.agent,
        "llm": run.llm,
        "task": run.task,
        "rep": run.rep,
        "reference": run.reference,
    }


def _task_cols(manifest) -> dict:
    if isinstance(manifest, ProcessTask):  # no test set: only the kind and the metric
        return {"task_kind": PROCESS_KIND, "metric": manifest.metric, "validation": None,
                "shift": None, "internal_counterpart": None, "shared_test_set": None}  # fmt: skip
    return {
        "task_kind": manifest.kind.value,
        "metric": manifest.metric.value,
        "validation": manifest.validation,
        "shift": manifest.shift,
        "internal_counterpart": manifest.internal_counterpart,
        "shared_test_set": manifest.shared_test_set,
    }


def _task_facts(m) -> dict:
    """The ``tasks.parquet`` columns after the task columns: a manifest's facts, or a
    process-only task's (no null score, size or access), with the improvement scale."""
    if isinstance(m, ProcessTask):
        return {"null_score": None, "unit": None, "access": None, "synthetic": False,
                "higher_is_better": m.transformed_higher_is_better,
                "baseline_value": _nan(m.transformed(m.baseline)),
                "value_transform": m.transform, "best_value": _nan(m.best),
                "worst_value": m.worst_value}  # fmt: skip
    m0 = float(m.null_score)
    return {"null_score": m0, "unit": m.sizes.unit, "access": m.source.access,
            "synthetic": bool(m.synthetic), "higher_is_better": True, "baseline_value": m0,
            "value_transform": "none", "best_value": 1.0, "worst_value": m0}  # fmt: skip


def task_rows(manifests: dict, hashes: dict[str, str]) -> list[dict]:
    """``tasks.parquet`` rows: the manifest facts of each task (``manifests``: id ->
    TaskManifest, or ProcessTask for a process-only task; ``hashes``: id -> content hash), by
    task id."""
    return [
        {
            "task": task_id,
            "title": m.title,
            "origin": PROCESS_KIND if isinstance(m, ProcessTask) else m.origin,
        }  # fmt: skip
        | _task_cols(m)
        | _task_facts(m)
        | {"manifest_sha256": hashes.get(task_id)}
        for task_id, m in sorted(manifests.items())
    ]


def _score_row(ref: FileRef, entry: dict | None, manifest) -> dict:
    run, v = ref.run, ref.version
    row = run_key(run) | {
        "version": ref.version_id,
        "is_selected": ref.is_selected,
        "source_version": run.selected_version if ref.is_selected else None,
    }
    row |= _task_cols(manifest)
    row |= {
        "step": None if v is None else v.step,
        "parent": None if v is None else v.parent,
        "created_at": None if v is None else v.created_at,
        "elapsed_min": math.nan if v is None else _minutes(v.created_at, run.started_at),
        "reported_val": _nan(run.reported_val_score if v is None else v.reported_val_score),
    }
    reasons = _reasons(entry)
    m = (entry or {}).get("metrics") or {}
    row |= {
        "valid": bool(entry and entry["valid"]),
        "reason_code": reasons[0]["code"] if reasons else None,
        "reason_codes": "|".join(sorted({r["code"] for r in reasons})) or None,
        "reason_message": reasons[0]["message"] if reasons else None,
        "raw": _nan(m.get("raw")),
        "null_score": float(manifest.null_score),
        "score": _nan(m.get("score")),
        "auroc": _nan(m.get("auroc")),
        "ece": _nan(m.get("ece")),
        "brier": _nan(m.get("brier")),
        "n": m.get("n"),
        "n_rows": m.get("n_rows"),
        "n_events": m.get("n_events"),
        "metric_warnings": "; ".join(m.get("warnings") or []) or None,
        "submission_sha256": ref.sha256,
        "cache_key": ref.key,
        "scorer_version": (entry or {}).get("scorer_version", __version__),
    }
    return row


def _reasons(entry: dict | None) -> list[dict]:
    return [] if entry is None or entry["valid"] else list(entry["reasons"])


def _run_row(run: Run, manifest, annotations_source: str | None = None) -> dict:
    minutes = (run.ended_at - run.started_at).total_seconds() / 60.0
    tok = run.tokens or {}
    if run.steps is not None:
        n_steps, n_ok = len(run.steps), sum(s.ok for s in run.steps)
    else:
        n_steps = len(run.versions)
        n_ok = sum(1 for v in run.versions if _version_ok(v))
    return (
        run_key(run)
        | {
            "search": run.search,
            "objective": run.objective,
            "started_at": run.started_at,
            "ended_at": run.ended_at,
            "run_minutes": minutes,
            "budget_minutes": run.budget_minutes,
            "ended_before_budget": minutes < run.budget_minutes - ENDED_EARLY_TOLERANCE_MIN,
            "tokens_prompt": tok.get("prompt"),
            "tokens_completion": tok.get("completion"),
            "tokens_total": tok.get("total"),
            "tokens_simulated": tok.get("simulated") if run.tokens else None,
            "tokens_source": tok.get("source") if run.tokens else None,
            "selection_rule": run.selection_rule,
            "selected_version": run.selected_version,
            "reported_val_score": _nan(run.reported_val_score),
            "n_versions": len(run.versions),
            "has_submission": run.submission_path is not None,
            "incomplete": run.incomplete,
        }
        | dict(zip(("import_format", "import_source"), import_origin(run.notes), strict=True))
        | _task_cols(manifest)
        | {
            "n_steps": n_steps,
            "n_steps_ok": n_ok,
            "has_annotations": run.annotations is not None,
            "annotator": run.annotations.annotator if run.annotations is not None else None,
            "annotations_source": annotations_source
            or ("archive" if run.annotations is not None else "none"),
        }
    )


#: A run "ended before the budget" if it stopped at least this many minutes early.
ENDED_EARLY_TOLERANCE_MIN = 1.0


def _version_ok(v) -> bool:
    return (not v.faulty) and v.reported_val_score is not None


def _step_rows(run: Run) -> list[dict]:
    key = run_key(run)
    if run.steps is not None:
        return [
            key
            | {
                "step": s.step,
                "ok": s.ok,
                "reported_val_score": _nan(s.reported_val_score),
                "created_at": s.created_at,
                "elapsed_min": _minutes(s.created_at, run.started_at),
                "version": s.version,
                "node": s.node,
                "parent": s.parent,
            }
            for s in run.steps
        ]
    return [
        key
        | {
            "step": v.step,
            "ok": _version_ok(v),
            "reported_val_score": _nan(v.reported_val_score),
            "created_at": v.created_at,
            "elapsed_min": _minutes(v.created_at, run.started_at),
            "version": v.version_id,
            "node": v.node,
            "parent": v.parent,
        }
        for v in sorted(run.versions, key=lambda v: (v.step, v.created_at, v.version_id))
    ]


def _annotation_rows(run: Run) -> tuple[list[dict], list[dict]]:
    if run.annotations is None:
        return [], []
    key = run_key(run)
    rows = []
    for name, ans in run.annotations.answers.items():
        values = ans.value if isinstance(ans.value, tuple) else (ans.value,)
        for value in values:
            rows.append(
                key
                | {
                    "field": name,
                    "value": value,
                    "affected_weight": _nan(ans.affected_weight),
                    "evidence": ";".join(ans.evidence) or None,
                }
            )
    pairs = []
    for i, p in enumerate(run.annotations.pairs):
        for change in p.changes or ("none",):
            pairs.append(
                key
                | {
                    "pair_index": i,
                    "earlier": p.earlier,
                    "later": p.later,
                    "change": change,
                    "affects_predictions": p.affects_predictions,
                    "evidence": ";".join(p.evidence) or None,
                }
            )
    return rows, pairs


_NON_FLOAT = frozenset(
    name
    for table in ("calibration_measures", "calibration_curves")
    for name, dtype in zip(SCHEMAS[table].names, SCHEMAS[table].types, strict=True)
    if dtype != pa.float64()
)


def _interval_columns(row: dict, boot: dict) -> dict:
    """``score_ci_low/high``, ``ece_bc`` and ``ece_bc_ci_low/high`` of a ``scores`` row from its
    replicates (:meth:`~automd_analysis.scoring.replicates.RunReplicates.to_dict`)."""
    low, high, score = (
        _nan(boot.get("score_ci_low")),
        _nan(boot.get("score_ci_high")),
        _nan(row.get("score")),
    )
    if math.isfinite(score) and math.isfinite(low):  # an interval holds its estimate
        low, high = min(low, score), max(high, score)
    # the plug-in ECE's percentile interval sits above the ECE on small test sets (the replicates
    # are biased upwards): the store publishes the bias-corrected ECE instead, with the interval
    # that belongs to it (docs/statistics.md, "Bias-corrected ECE")
    bc, bc_low, bc_high = bias_corrected_interval(
        _nan(row.get("ece")),
        [_nan(v) for v in boot["ece"]],
        float(boot.get("alpha", 0.05)),
        lower=0.0,
    )
    return {"score_ci_low": low, "score_ci_high": high, "ece_bc": bc, "ece_bc_ci_low": bc_low,
            "ece_bc_ci_high": bc_high}  # fmt: skip


def _detail_rows(tables: dict, key: dict, row: dict, details: dict) -> list[dict]:
    """Rows a selected valid submission adds: subgroups (and their bootstrap replicates),
    reliability bins, calibration measures and curve, bootstrap replicates (and, on the ``scores``
    row, the score's interval and the bias-corrected ECE with its interval), the user metrics; returns the problems of the user metrics."""
    for sg in details["subgroups"]:
        tables["subgroups"].append(key | {"task_kind": row["task_kind"]} | sg)
    for sg in details.get("subgroup_replicates") or []:
        tables["subgroup_replicates"].append(
            {"run_id": key["run_id"], "attribute": sg["attribute"], "group": sg["group"]}
            | {"replicates": [_nan(v) for v in sg["replicates"]]}
        )
    for b in details["calibration_bins"]:
        tables["calibration_bins"].append(key | b)
    tables["calibration_measures"].append(
        key | {"task_kind": row["task_kind"]} | _nullable(details["calibration_measures"])
    )
    for point in details["calibration_curve"]:
        tables["calibration_curves"].append(key | _nullable(point))
    boot = details.get("bootstrap")
    if boot:
        row |= _interval_columns(row, boot)
        run_id = key["run_id"]
        for i, (score, ece) in enumerate(zip(boot["score"], boot["ece"], strict=True)):
            tables["replicates"].append(
                {"run_id": run_id, "replicate": i, "score": _nan(score), "ece": _nan(ece)}
            )
    extra = details.get("extra_metrics") or {"rows": [], "problems": []}
    for r in extra["rows"]:
        tables["extra_metrics"].append(
            key
            | {"task_kind": row["task_kind"]}
            | {k: r[k] for k in ("metric", "higher_is_better", "value", "ci_low", "ci_high")}
            | {"replicates": [_nan(v) for v in r["replicates"]]}
        )
    return [
        {
            "run_id": key["run_id"],
            "experiment": key["experiment"],
            "agent": key["agent"],
            "task": key["task"],
            "rep": key["rep"],
            "version": "selected",
            "effect": p["effect"],
            "code": p["code"],
            "message": p["message"],
            "path": None,
            "location": f"metric {p['metric']}",
            "fix": "correct the metric's function (docs/extending.md) and run automd score again; "
            "everything else of the run is scored",
        }
        for p in extra["problems"]
    ]


def _nullable(record: dict) -> dict:
    """A cached record as column values: NaN in a non-float slot (a count, a text) is null."""
    return {
        k: None if isinstance(v, float) and math.isnan(v) and k in _NON_FLOAT else v
        for k, v in record.items()
    }


def build_tables(
    runs: list[Run],
    files: list[FileRef],
    entries: dict[str, dict],
    manifests: dict,
    problems: list[dict],
    annotation_sources: dict[str, str] | None = None,
    not_scorable: Collection[str] = frozenset(),
) -> dict[str, list[dict]]:
    """Rows of every table (lists of dicts in final order).

    Parameters
    ----------
    runs : list of Run
        The runs to publish, sorted (runs whose selected file could not be scored are left out by
        the caller).
    files : list of FileRef
        The files of those runs (others are ignored), in plan order.
    entries : dict
        Cache entries by key (files whose key has no entry are left out).
    manifests : dict
        Task id -> TaskManifest.
    problems : list of dict
        Rows for ``problems.parquet``.
    annotation_sources : dict, optional
        Run id -> where its annotations come from (``archive``, ``generated``, ``none``).
    not_scorable : collection of str, optional
        Runs published without files on purpose (they must have none).

    A run's ``status`` is its selected row's validity; a run published without one (no
    prediction file for its task's test set) is ``not_scorable``.
    """
    tables: dict[str, list[dict]] = {name: [] for name in TABLES}
    problems = list(problems)
    by_run: dict[str, list[FileRef]] = {}
    for ref in files:
        by_run.setdefault(ref.run.run_id, []).append(ref)
    for run in runs:
        manifest = manifests[run.task]
        source = (annotation_sources or {}).get(run.run_id)
        tables["runs"].append(_run_row(run, manifest, source))
        tables["runs"][-1]["status"] = NOT_SCORABLE  # until its selected row says otherwise
        tables["steps"].extend(_step_rows(run))
        ann, pairs = _annotation_rows(run)
        tables["annotations"].extend(ann)
        tables["pairs"].extend(pairs)
        if run.run_id in not_scorable and by_run.get(run.run_id):
            raise ValueError(f"run {run.run_id} is not scorable but has files to publish")
        for ref in by_run.get(run.run_id, []):
            entry = ref.inline if ref.inline is not None else entries.get(ref.key)
            if entry is None:
                continue  # not scored (an error recorded in problems)
            row = _score_row(ref, entry, manifest)
            if not ref.is_selected and row["valid"] and entry.get("interval"):
                row |= _interval_columns(row, entry["interval"])  # version_bootstrap replicates
            tables["scores"].append(row)
            if ref.is_selected:
                tables["runs"][-1]["status"] = "valid" if row["valid"] else "invalid"
            key = run_key(run)
            for r in _reasons(entry):
                tables["reasons"].append(
                    key
                    | {
                        "version": ref.version_id,
                        "code": r["code"],
                        "message": r["message"],
                        "examples": json.dumps(r.get("examples", []), sort_keys=True),
                    }
                )
            details = (entry or {}).get("details") if ref.is_selected and row["valid"] else None
            if details:
                problems += _detail_rows(tables, key, row, details)
    tables["problems"] = sorted(
        problems,
        key=lambda p: tuple(
            "" if p.get(c) is None else str(p.get(c)) for c in SCHEMAS["problems"].names
        ),
    )
    return tables


def _to_table(rows: list[dict], schema: pa.Schema) -> pa.Table:
    cols = {name: [r.get(name) for r in rows] for name in schema.names}
    return pa.Table.from_pydict(cols, schema=schema)


def store_files() -> list[str]:
    """File names of one generation: every table's ``<name>.parquet``, then ``store.json``."""
    return [f"{name}.parquet" for name in TABLES] + ["store.json"]


def _parquet_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", version="2.6")
    return sink.getvalue()


def _serialise(tables: dict[str, list[dict]], meta: dict) -> dict[str, bytes]:
    """Every file of a generation, in memory (all conversion errors happen here)."""
    files = {
        f"{name}.parquet": _parquet_bytes(_to_table(tables.get(name, []), SCHEMAS[name]))
        for name in TABLES
    }
    doc = {"schema_version": STORE_SCHEMA_VERSION, "scorer_version": __version__, **meta}
    files["store.json"] = (
        json.dumps(doc, indent=1, sort_keys=True, allow_nan=False) + "\n"
    ).encode()
    return files


@contextlib.contextmanager
def _locked(out: Path):
    """An exclusive lock on ``out/.lock`` (one publisher at a time)."""
    with open(out / ".lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.is_dir():
        shutil.rmtree(path, ignore_errors=True)


def _clean_stale(out: Path) -> None:
    """Remove what a killed publish left: temporaries in the store and half-written generations."""
    for entry in out.glob(f"{_TMP}*"):
        _remove(entry)
    gens = out / GENERATIONS
    if gens.is_dir():
        for entry in gens.glob(f"{_TMP}*"):
            _remove(entry)


def _switch(out: Path, generation: str) -> None:
    """Point ``current`` at ``generations/<generation>`` (atomic), then fix the top-level links."""
    link = out / f"{_TMP}current-{os.getpid()}"
    _remove(link)
    if (out / CURRENT).exists() and not (out / CURRENT).is_symlink():
        _remove(out / CURRENT)  # a copied store (copytree follows links): replace the directory
    os.symlink(f"{GENERATIONS}/{generation}", link)
    os.replace(link, out / CURRENT)
    for name in store_files():
        target = f"{CURRENT}/{name}"
        path = out / name
        if path.is_symlink() and os.readlink(path) == target:
            continue
        tmp = out / f"{_TMP}{name}-{os.getpid()}"
        _remove(tmp)
        os.symlink(target, tmp)
        os.replace(tmp, path)  # a file of the pre-generation layout is replaced too


def _collect_garbage(out: Path, keep: set[str]) -> None:
    """Remove generations other than ``keep`` (the current and the previous one)."""
    gens = out / GENERATIONS
    for entry in gens.iterdir():
        if entry.name not in keep and not entry.name.startswith(_TMP):
            _remove(entry)


def write_store(out_dir: str | Path, tables: dict[str, list[dict]], meta: dict) -> list[Path]:
    """Publish every table and ``store.json`` as one new generation of the store (all or nothing).

    Returns
    -------
    list of Path
        The published paths (``<out>/<name>.parquet`` ..., ``<out>/store.json``).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = _serialise(tables, meta)
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    generation = digest.hexdigest()[:16]
    with _locked(out):
        _clean_stale(out)
        gens = out / GENERATIONS
        gens.mkdir(exist_ok=True)
        previous = (
            os.readlink(out / CURRENT).rsplit("/", 1)[-1] if (out / CURRENT).is_symlink() else None
        )
        final = gens / generation
        if not final.is_dir():
            staging = make_temp_dir(gens, prefix=_TMP)
            for name, data in files.items():
                (staging / name).write_bytes(data)
            os.replace(staging, final)
        _switch(out, generation)
        _collect_garbage(out, {generation, previous or generation})
    return [out / name for name in store_files()]
