"""Minimal agent outputs in every import format, small enough to build per test and to mutate.

The fixtures of ``tests/fixtures/agent_logs.py`` carry real demo predictions (they need the demo
data); these carry one two-line submission of the classification demo task, so that tests of
hostile and broken inputs run in the fast suite. Field names and shapes follow each agent's own
serialiser, as in ``agent_logs.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from automd_analysis.errors import AutomdError
from automd_analysis.importers import ImportOptions, import_source
from automd_analysis.importers.problems import FATAL, RECORDED

TASK = "demo_support_death30"
SUBMISSION = "patient_id,PredictedProbability\nsup00004,0.25\n"
T0 = 1_780_000_000.0
AIS_STAGES = (
    "stage_1_initial_implementation_1_preliminary",
    "stage_4_ablation_studies_1_first_attempt",
)
#: A sub-stage named by AI-Scientist-v2's LLM, as real public runs name them (free text: spaces).
AIS_FREE_TEXT_STAGE = "stage_2_baseline_tuning_2_Hyperparameter Fine-Tuning"


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8", errors="surrogatepass")
    return path


def dumps(obj: Any) -> str:
    """Compact JSON as the agents write it (``ensure_ascii`` keeps lone surrogates escaped)."""
    return json.dumps(obj, separators=(",", ":"))


def aide_node(i: int, **over) -> dict:
    node = {
        "code": f"import pandas as pd\nprint({i})\n",
        "plan": f"idea {i}",
        "step": i,
        "id": f"{i:032x}",
        "ctime": T0 + 60.0 * i,
        "parent": None,
        "children": [],
        "_term_out": ["ok\n"],
        "exec_time": 30.0,
        "exc_type": None,
        "exc_info": None,
        "exc_stack": None,
        "analysis": "ok",
        "metric": {"value": 0.7 + 0.01 * i, "maximize": True},
        "is_buggy": False,
    }
    node.update(over)
    return node


def aide_journal(nodes: list[dict], n2p: dict | None = None) -> str:
    return dumps({"nodes": nodes, "node2parent": n2p or {}, "__version": "2"})


def build_aide(root: Path, nodes: list[dict] | None = None, *, journal: str | None = None,
               config: str | None = None) -> Path:  # fmt: skip
    nodes = nodes if nodes is not None else [aide_node(0), aide_node(1)]
    write(root / "journal.json", journal if journal is not None else aide_journal(nodes))
    write(root / "config.yaml", config or "agent:\n  code:\n    model: gpt-4.1\n")
    write(root / "submission.csv", SUBMISSION)
    return root


def ais_node(i: int, **over) -> dict:
    node = aide_node(i, step=i, is_buggy_plots=False, is_seed_node=False, is_seed_agg_node=False)
    node["metric"] = {
        "value": {
            "metric_names": [
                {
                    "metric_name": "val auc",
                    "lower_is_better": False,
                    "data": [
                        {"dataset_name": "d", "final_value": 0.6 + 0.01 * i, "best_value": 0.6}
                    ],
                }
            ]
        },  # fmt: skip
        "maximize": None,
        "name": None,
        "description": None,
    }
    node.update(over)
    return node


def build_ais(root: Path, stages: dict[str, list[dict] | str] | None = None, *,
              best: dict[str, str] | None = None) -> Path:  # fmt: skip
    """``logs/0-run`` with ``stages`` (name → nodes, or raw journal text); by default a stage 1
    and a finished stage 4 (its last node a seed-aggregation node)."""
    if stages is None:
        stages = {
            AIS_STAGES[0]: [ais_node(0), ais_node(1)],
            AIS_STAGES[1]: [ais_node(2), ais_node(3, is_seed_agg_node=True, exec_time=0.0)],
        }
    for name, nodes in stages.items():
        text = nodes if isinstance(nodes, str) else aide_journal(nodes)
        write(root / name / "journal.json", text)
        write(root / name / "config.yaml", "agent:\n  code:\n    model: gpt-4o\n")
        if best and name in best:
            write(root / name / "best_node_id.txt", best[name])
    write(root / "submission.csv", SUBMISSION)
    return root


def build_ais_free_text(root: Path, sub_name: str = "Hyperparameter Fine-Tuning") -> Path:
    """``logs/0-run`` of a finished run whose stage-2 sub-stage folder carries the LLM's free-text
    name (``stage_2_baseline_tuning_2_<sub_name>``; a ``/`` in it makes nested folders, as
    ``save_run``'s ``mkdir(parents=True)`` does)."""
    return build_ais(root, {
        AIS_STAGES[0]: [ais_node(0), ais_node(1)],
        f"stage_2_baseline_tuning_2_{sub_name}": [ais_node(1), ais_node(2)],
        AIS_STAGES[1]: [ais_node(2), ais_node(3), ais_node(4, is_seed_agg_node=True, exec_time=0.0)],
    })  # fmt: skip


def rollout_line(ts: str, kind: str, payload: dict) -> str:
    return dumps({"timestamp": ts, "type": kind, "payload": payload})


def rollout(model: str = "gpt-5", total: int = 1200, ts: str = "2026-05-01T09:00:00.000Z") -> str:
    lines = [
        rollout_line(ts, "session_meta", {"id": "s1", "timestamp": ts, "cwd": "/w"}),
        rollout_line(ts, "turn_context", {"cwd": "/w", "model": model}),
        rollout_line(
            "2026-05-01T10:00:00.000Z",
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": {
                        "input_tokens": total - 200,
                        "output_tokens": 200,
                        "total_tokens": total,
                    }
                },
            },
        ),  # fmt: skip
    ]
    return "\n".join(lines) + "\n"


def build_codex(root: Path, text: str | None = None, *, script: str = "print(1)\n") -> Path:
    write(root / "sessions/2026/05/01/rollout-2026-05-01T09-00-00-x.jsonl", text or rollout())
    write(root / "train.py", script)
    write(root / "submission.csv", SUBMISSION)
    return root


RESULTS_TSV = (
    "commit\troc_auc\tmemory_gb\tstatus\tdescription\n"
    "6370aa9\t0.786498\t5.3\tkeep\tbaseline\n"
    "226390c\t0.000000\t0.0\tcrash\tOOM\n"
)


#: The ``git_commit`` variant: its own statuses ``ok``, ``failed`` (empty metric) and ``partial``.
RESULTS_TSV_GIT_COMMIT = (
    "git_commit\tval_auc\tmemory_gb\tstatus\tdescription\n"
    "6370aa9\t0.781000\t5.3\tok\tbaseline\n"
    "226390c\t\t0.0\tfailed\tOOM\n"
    "fc3c800\t0.779000\t7.9\tpartial\thit the time limit\n"
    "a1b2c3d\t0.790000\t5.1\tok\tmore features\n"
)


def build_autoresearch(root: Path, tsv: str = RESULTS_TSV, *, rollout_text: str | None = None
                       ) -> Path:  # fmt: skip
    write(root / "results.tsv", tsv)
    write(root / "journal.md", "1. baseline -> KEEP\n")
    write(root / "train.py", "print(1)\n")
    write(root / "submission.csv", SUBMISSION)
    if rollout_text is not None:
        write(root / "sessions/rollout-2026-05-02T08-00-00-y.jsonl", rollout_text)
    return root


def fml_step(i: int, **over) -> dict:
    step = {
        "step_id": i, "idea_id": f"idea-{i}", "idea_description": f"idea {i}", "action": "improve",
        "edit_success": True, "val_result": {"success": True, "primary_metric": 0.7},
        "primary_metric": 0.7, "step_duration_seconds": 60.0,
        "token_usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
        "metadata": {},
    }  # fmt: skip
    step.update(over)
    return step


def fml_summary(steps: list[dict] | None = None, **over) -> dict:
    summary = {
        "model": "gpt-5.4", "best_val_metric": 0.7,
        "task_config": {"metric": "auroc", "metric_direction": "higher"},
        "total_duration_seconds": 120.0, "val_steps": steps or [fml_step(1), fml_step(2)],
        "token_usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }  # fmt: skip
    summary.update(over)
    return summary


def build_fmlbench(root: Path, summary: dict | str | None = None,
                   snapshots: dict[int, dict] | None = None) -> Path:  # fmt: skip
    summary = summary if summary is not None else fml_summary()
    write(root / "summary.json", summary if isinstance(summary, str) else dumps(summary))
    for sid, files in (snapshots or {}).items():
        write(root / f"step_snapshots/step_{sid:04d}_code.json", dumps(files))
    write(root / "submission.csv", SUBMISSION)
    return root


def build_mlebench(root: Path, *, metadata: str | None = None, journal: str | None = None) -> Path:
    run_id = f"{TASK}_0f1e2d3c-1f2e-4d3c-8b4a-5968778695a4"
    meta = {"run_group": root.name, "created_at": "2026-05-29T08-00-00-GMT",
            "runs": {run_id: {"success": True}}}  # fmt: skip
    write(root / "metadata.json", metadata if metadata is not None else dumps(meta))
    build_aide(root / run_id / "logs", journal=journal)
    write(root / run_id / "submission/submission.csv", SUBMISSION)
    return root


BUILDERS = {
    "aide": build_aide,
    "aiscientist-v2": build_ais,
    "codex": build_codex,
    "autoresearch": build_autoresearch,
    "fmlbench": build_fmlbench,
    "mlebench": build_mlebench,
}

#: Format variants met in real runs (docs/importing.md lists them): name -> (format, builder).
VARIANTS = {
    "aiscientist-v2 free-text sub-stage": ("aiscientist-v2", build_ais_free_text),
    "autoresearch git_commit": (
        "autoresearch",
        lambda root: build_autoresearch(root, RESULTS_TSV_GIT_COMMIT),
    ),
}
#: Every format and every variant: name -> (format, builder).
ALL_SOURCES = {**{fmt: (fmt, build) for fmt, build in BUILDERS.items()}, **VARIANTS}


def try_import(fmt: str, source: Path, dest: Path, **options):
    """``import_source`` with the classification demo task; returns ``(report, None)`` or
    ``(None, error)`` for an :class:`AutomdError` (any other exception propagates: a bug)."""
    opts = {"agent": "agent", "task": None if fmt == "mlebench" else TASK, **options}
    replace_existing = opts.pop("replace", False)
    try:
        return import_source(fmt, source, dest, ImportOptions(**opts),
                             replace_existing=replace_existing), None  # fmt: skip
    except AutomdError as exc:
        return None, exc


def check_outcome(report, error, dest: Path) -> set[str]:
    """The reason codes of an import, after checking the contract every import keeps: a fatal
    error is a documented fatal code, never ``import.internal_*``, and leaves no run in DEST; a
    success reads back without a problem and records only documented codes."""
    from automd_analysis.archive import open_archive

    if error is not None:
        assert error.code in FATAL and not error.code.startswith("import.internal"), error
        assert error.fix, error
        assert not list(dest.glob("*/*/*/rep*")), "a failed import wrote a run"
        str(error).encode("utf-8")  # printable
        return {error.code}
    arch = open_archive(dest)
    assert arch.problems == [], arch.problems
    codes = {p.code for r in report.runs for p in r.problems}
    assert codes <= set(RECORDED), codes
    for r in report.runs:
        for p in r.problems:
            str(p).encode("utf-8")
    return codes
