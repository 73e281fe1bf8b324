"""Speed of the development / process / masking analyses on paper-sized synthetic inputs.

Run: ``python bench/bench_development.py [--repeat 3] [--minilm]``. Prints a Markdown table of the
median wall time of each operation (see docs/performance.md, section "Development, process metrics
and masking").

Sizes follow the paper: 4 agents x 15 tasks x 3 reps = 180 runs, 25 versions and 30 steps per run
(~4,500 versions), code of ~150 lines per version; sequential test set of 8,000 patients x ~38 h
(~300,000 patient-hours).
"""

from __future__ import annotations

import argparse
import hashlib
from dataclasses import replace

import numpy as np
import pandas as pd
from _timing import timed

from automd_analysis.analysis import development, process
from automd_analysis.analysis.embeddings import embed_code
from automd_analysis.analysis.store import ScoreStore
from automd_analysis.masking import compare_alarms, mask_records
from automd_analysis.schema import RUN_KEY


def synthetic_store(n_agents=4, n_tasks=15, n_reps=3, n_versions=25, n_steps=30, seed=0):
    rng = np.random.default_rng(seed)
    scores, runs, steps, code = [], [], [], {}
    for a in range(n_agents):
        search = "tree" if a % 2 else "linear"
        for t in range(n_tasks):
            for r in range(n_reps):
                key = {
                    "run_id": f"main/agent{a}/task{t}/rep{r}",
                    "experiment": "main",
                    "agent": f"agent{a}",
                    "llm": "llm",
                    "task": f"task{t}",
                    "rep": r,
                    "reference": False,
                }
                times = np.sort(rng.uniform(0, 700, n_versions))
                raw = 0.5 + 0.4 * rng.uniform(size=n_versions)
                valid = rng.uniform(size=n_versions) > 0.1
                texts = {}
                for i in range(n_versions):
                    vid = f"v{i:03d}"
                    parent = f"v{rng.integers(i):03d}" if (search == "tree" and i) else None
                    scores.append({**key, "version": vid, "is_selected": False, "step": i + 1,
                                   "parent": parent, "elapsed_min": times[i], "valid": valid[i],
                                   "raw": raw[i], "score": (raw[i] - 0.5) / 0.5,
                                   "metric": "auroc"})  # fmt: skip
                    lines = [f"x{j} = model_{rng.integers(20)}(alpha={rng.integers(9)})"
                             for j in range(150)]  # fmt: skip
                    texts[vid] = "\n".join(lines)
                code[key["run_id"]] = texts
                best = int(np.argmax(np.where(valid, raw, -1)))
                scores.append({**key, "version": "selected", "is_selected": True, "step": None,
                               "parent": None, "elapsed_min": np.nan, "valid": True,
                               "raw": raw[best], "score": (raw[best] - 0.5) / 0.5,
                               "metric": "auroc"})  # fmt: skip
                runs.append({**key, "search": search, "metric": "auroc", "run_minutes": 700.0,
                             "budget_minutes": 720.0, "ended_before_budget": True,
                             "reported_val_score": raw[best] + 0.02, "tokens_total": 1e6})  # fmt: skip
                for s in range(n_steps):
                    version = f"v{s:03d}" if s < n_versions else None
                    steps.append({"run_id": key["run_id"], "step": s + 1, "ok": bool(version),
                                  "reported_val_score": raw[s] + 0.02 if version else np.nan,
                                  "version": version})  # fmt: skip
    return _store(pd.DataFrame(scores), pd.DataFrame(runs), pd.DataFrame(steps), code), code


def _store(scores, runs, steps, code) -> ScoreStore:
    """The frames as a checked score store, with the columns the loader requires and the code
    tables the scorer would publish."""
    scores = scores.assign(task_kind="classification", validation="internal", shift="none",
                           internal_counterpart=None, reason_code=None, auroc=scores["raw"],
                           ece=0.05, brier=0.2)  # fmt: skip
    keys = scores.drop_duplicates("run_id").set_index("run_id")[list(RUN_KEY[1:])]
    steps = steps.join(keys, on="run_id")
    rows, texts = [], {}
    for run_id, versions in code.items():
        for version, text in versions.items():
            sha = hashlib.sha256(text.encode()).hexdigest()
            texts[sha] = text
            rows.append({"run_id": run_id, **keys.loc[run_id].to_dict(), "version": version,
                         "n_files": 1, "code_sha256": sha})  # fmt: skip
    return ScoreStore.from_frames(
        scores=scores,
        runs=runs.assign(objective=None),
        steps=steps,
        code=pd.DataFrame(rows),
        code_texts=pd.DataFrame({"code_sha256": list(texts), "text": list(texts.values())}),
    )


def synthetic_sequential(n_patients=8000, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(8, 70, n_patients)
    pid = np.repeat([f"p{i:05d}" for i in range(n_patients)], lengths)
    hour = np.concatenate([np.arange(n) for n in lengths])
    return pd.DataFrame({"patient_id": pid, "hour": hour, "x": rng.uniform(size=hour.size)})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--minilm", action="store_true", help="also time the MiniLM backend")
    args = parser.parse_args()
    store, code = synthetic_store()
    no_code = replace(store, code=None)
    pairs = development.version_pairs(store)
    texts = [t for run in code.values() for t in run.values()]
    features = synthetic_sequential()
    masked = mask_records(features, "patient_id", "hour", seed=1)
    alarms_full = features.assign(PredictedLabel=(features["x"] > 0.9).astype(int))
    alarms_masked = alarms_full.merge(masked[["patient_id", "hour"]])
    embed_code(texts[:2], backend="hashing")  # import cost out of the timings

    rows = [
        ("table18 (180 runs, 4,500 versions)", lambda: development.table18(store)),
        ("figure5_curves (5-min grid)", lambda: development.figure5_curves(store)),
        (
            "version_pairs + sample_pairs",
            lambda: development.sample_pairs(development.version_pairs(store), seed=0),
        ),  # fmt: skip
        (
            "embed_code hashing (4,500 texts x 150 lines)",
            lambda: embed_code(texts, backend="hashing"),
        ),  # fmt: skip
        (
            "process_metrics incl. hashing embeddings (180 runs)",
            lambda: process.process_metrics(store, backend="hashing"),
        ),  # fmt: skip
        (
            "process_metrics without code (180 runs)",
            lambda: process.process_metrics(no_code),
        ),  # fmt: skip
        (
            f"mask_records ({len(features):,} patient-hours)",
            lambda: mask_records(features, "patient_id", "hour", seed=1),
        ),  # fmt: skip
        (
            f"compare_alarms ({len(alarms_masked):,} retained rows)",
            lambda: compare_alarms(
                alarms_full, alarms_masked, patient_column="patient_id", hour_column="hour"
            ),
        ),  # fmt: skip
    ]
    if args.minilm:
        embed_code(texts[:2], backend="minilm")
        rows.append(("embed_code minilm (100 texts x 150 lines)",
                     lambda: embed_code(texts[:100], backend="minilm")))  # fmt: skip
    print(f"pairs formed: {len(pairs):,}")
    print("| operation | median seconds |\n|---|---|")
    for name, fn in rows:
        print(f"| {name} | {timed(fn, args.repeat)[0]:.2f} |")


if __name__ == "__main__":
    main()
