"""Write simple-baseline fits as ordinary archive runs (agent ``baseline``, ``reference: true``).

Used by ``automd baselines`` (any task with a manifest, real wall-clock timestamps) and by the
demo archive builder (simulated timestamps so the archive is reproducible byte for byte). A
baseline run has one version ``v0001``; its code is a copy of :mod:`automd_demo.baselines`
(the module that fitted it) followed by a small driver, and its annotations cite lines of that
copy.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from automd_analysis._atomic import make_temp_dir
from automd_analysis.tasks import Task
from automd_demo import baselines
from automd_demo.harness.clock import BUDGET_MINUTES, iso, run_start
from automd_demo.harness.writer import _write, dump_json

VERSION = "v0001"
CODE_FILE = f"code/{VERSION}/baseline.py"

#: Substring -> codebook evidence tag, searched in the copied module.
_MARKERS = {
    "neural_net": "tt.practical.MLPVanilla(",
    "gbdt": "model = HistGradientBoostingClassifier(",
    "single_holdout": "fit_ids, hold_ids = train_test_split(",
    "censoring": "model.fit(",
}


def baseline_script(task: Task, seed: int) -> str:
    """The archived code: the baselines module source plus a driver for this task and seed."""
    source = inspect.getsource(baselines).rstrip("\n")
    driver = [
        "",
        "",
        "# ---- driver (written by `automd baselines`) ----",
        "if __name__ == '__main__':",
        "    import sys",
        "",
        "    from automd_analysis.tasks import get_task",
        "",
        f"    fit = fit_baseline(get_task({task.id!r}), seed={seed})",
        "    fit.submission.to_csv(sys.argv[1] if len(sys.argv) > 1 else 'submission.csv',",
        "                          index=False, lineterminator='\\n')",
    ]
    return source + "\n" + "\n".join(driver) + "\n"


def _line_of(text: str, needle: str) -> list[str]:
    for i, line in enumerate(text.split("\n"), start=1):
        if needle in line:
            return [f"{CODE_FILE}:{i}"]
    return []


def baseline_annotations(task: Task, script: str) -> dict:
    """Codebook answers for a baseline run (the fixed App. D procedure)."""
    m = task.manifest
    kind = m.kind.value
    external_shift = m.validation == "external" and m.shift in ("cohort", "hospital")

    def ans(value, evidence=()):
        return {"value": value, "evidence": list(evidence)}

    family = "neural_net" if kind == "survival" else "gbdt"
    fam_ev = _line_of(script, _MARKERS[family])
    run = {
        "model_families": ans([family], fam_ev),
        "ensembling": ans(["single_model"], fam_ev),
        "validation_design": (
            ans(["single_holdout"], _line_of(script, _MARKERS["single_holdout"]))
            if kind == "sequential"
            else ans(["none"])
        ),
        "probability_calibration": ans("no"),
        "averaged_ranks_as_probabilities": ans("no"),
        "class_imbalance_handling": ans("na" if kind == "survival" else "none"),
        "recalibration_after_imbalance": ans("na"),
        "censoring_handling": (
            ans("correct", _line_of(script, _MARKERS["censoring"]))
            if kind == "survival"
            else ans("na")
        ),
        "missingness_features": ans("no" if m.paper.get("ehr") else "na"),
        "subgroup_checks": ans("no"),
        "validation_under_shift": ans("no" if external_shift else "na"),
    }
    return {
        "schema_version": 1,
        "annotator": "automd baselines (fixed procedure of paper App. D)",
        "run": run,
        "pairs": [],
    }


def write_baseline_run(
    task: Task,
    seed: int,
    run_dir: Path,
    *,
    experiment: str = "main",
    demo: bool = False,
    data_note: str | None = None,
) -> dict:
    """Fit the baseline with ``seed`` and write run ``rep<seed>`` atomically.

    With ``demo=True`` the timestamps come from the simulated clock (reproducible archive);
    otherwise they are the real UTC start and end of the fit.
    """
    real_start = datetime.now(UTC).replace(microsecond=0)
    fit = baselines.fit_baseline(task, seed)
    csv = fit.submission.to_csv(index=False, lineterminator="\n").encode()
    if demo:
        started = run_start(experiment, "baseline", task.id, seed)
        ended = started + timedelta(minutes=5 + 3 * (task.manifest.kind.value != "classification"))
    else:
        started = real_start
        ended = max(datetime.now(UTC).replace(microsecond=0), started)
    script = baseline_script(task, seed)
    run_dir = Path(run_dir)
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = make_temp_dir(run_dir.parent, prefix=f".{run_dir.name}.tmp-")
    try:
        _write(tmp / CODE_FILE, script)
        config = {"task": task.id, "seed": seed, "procedure": "paper App. D"}
        _write(tmp / "code" / VERSION / "config.json", json.dumps(config, indent=1, sort_keys=True) + "\n")  # fmt: skip
        _write(tmp / "versions" / VERSION / "submission.csv", csv)
        _write(tmp / "submission.csv", csv)
        meta = {
            "version": VERSION,
            "created_at": iso(ended),
            "step": 1,
            "parent": None,
            "reported_val_score": None,
            "faulty": False,
            "code_files": [CODE_FILE, f"code/{VERSION}/config.json"],
            "stage": None,
        }
        _write(tmp / "versions" / VERSION / "meta.json", dump_json(meta))
        details = ", ".join(f"{k} {v}" for k, v in sorted(fit.details.items()))
        _write(
            tmp / "journal.md",
            f"# Simple baseline on {task.id}, seed {seed}\n\n"
            f"- step 1 [{CODE_FILE}]: paper App. D procedure"
            f"{' (' + details + ')' if details else ''} | submission written\n",
        )
        log = [f"seed {seed}"] + [f"{k}: {v}" for k, v in sorted(fit.details.items())]
        if not demo:
            log.append(f"fit seconds: {fit.fit_seconds:.2f}")
        _write(tmp / "logs" / f"{VERSION}.log", "\n".join(log) + "\n")
        run = {
            "schema_version": 1,
            "experiment": experiment,
            "agent": "baseline",
            "task": task.id,
            "rep": seed,
            "llm": "none",
            "reference": True,
            "search": "none",
            "objective": None,
            "started_at": iso(started),
            "ended_at": iso(ended),
            "budget_minutes": BUDGET_MINUTES,
            "tokens": None,
            "selection": {"rule": "single_fit", "selected_version": VERSION},
            "reported_val_score": None,
            "notes": data_note or "Simple baseline model (paper App. D), fixed settings.",
        }
        _write(tmp / "run.json", dump_json(run))
        _write(tmp / "annotations.json", dump_json(baseline_annotations(task, script)))
        if run_dir.exists():
            shutil.rmtree(run_dir)
        os.replace(tmp, run_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"fit_seconds": round(fit.fit_seconds, 3), "details": fit.details}
