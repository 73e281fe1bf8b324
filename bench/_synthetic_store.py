"""A paper-scale score store synthesised from a smaller one (for ``bench_run_pages.py``).

The paper's archive has 255 runs: 45 per agent for four agents and 75 simple-baseline runs, about
3,800 versions with code. :func:`paper_scale_store` builds one of that shape from any scored
store that has code (the demo store): each synthetic agent run copies a run of the source store
of the same agent (the first four agents, by name, with runs that have code) and repeats its
chain of versions until it has ``versions_per_run`` (copy ``k`` of version ``v0003`` is
``v0003k<k>``, its parent the copy of the original parent, or the last version of the previous
copy for a root), with its times shifted; baseline runs are copied as they are. Every code file
gets one comment line naming the synthetic run and copy, so no two versions share a text: the
pages must highlight and store every run's code (the content-addressed pages get no help from the
copying), while each diff is a real diff between the source's versions.
"""

from __future__ import annotations

import hashlib

import pandas as pd

from automd_analysis.analysis.store import BASELINE_AGENT, ScoreStore

__all__ = ["paper_scale_store"]


def _perturbed(text: str, tag: str) -> str:
    return text + ("" if text.endswith("\n") else "\n") + f"# {tag}\n"


def _copies(versions: list[str], parents: dict[str, str | None], wanted: int) -> list[tuple]:
    """``(new id, original id, copy, new parent)`` for ``wanted`` versions cycling ``versions``."""
    out, k = [], 0
    last = None
    while len(out) < wanted and versions:
        for v in versions:
            if len(out) >= wanted:
                break
            new = v if k == 0 else f"{v}k{k}"
            parent = parents.get(v)
            if parent is not None:
                parent = parent if k == 0 else f"{parent}k{k}"
            elif k > 0:
                parent = last
            out.append((new, v, k, parent))
        last = out[-1][0]
        k += 1
    return out


def paper_scale_store(
    source: ScoreStore,
    *,
    runs_per_agent: int = 45,
    baseline_runs: int = 75,
    versions_per_run: int = 21,
) -> ScoreStore:
    """A store of ``4 * runs_per_agent + baseline_runs`` runs built from ``source``'s main
    experiment (module docstring)."""
    main = source.runs.loc[source.runs["experiment"] == "main"]
    scored = set(source.scores["run_id"])  # a run imported without predictions has code only
    texts = {r: v for r, v in source.code_files_texts().items() if r in scored}
    with_code = main.loc[main["run_id"].isin(texts), "agent"]
    agents = sorted(set(with_code) - {BASELINE_AGENT})[:4]  # agents with scored code to copy
    frames: dict[str, list[pd.DataFrame]] = {
        name: [] for name in ("runs", "scores", "steps", "annotations", "pairs", "reasons",
                              "calibration_curves")
    }  # fmt: skip
    code_rows, layout_rows, text_rows = [], [], {}
    plan = [(a, runs_per_agent) for a in agents] + [(BASELINE_AGENT, baseline_runs)]
    for agent, count in plan:
        pool = main.loc[main["agent"] == agent].sort_values("run_id")
        pool = pool.loc[pool["run_id"].isin(texts)] if agent != BASELINE_AGENT else pool
        for i in range(count):
            src = pool.iloc[i % len(pool)]
            rep = int(src["rep"]) + 1000 * (i // len(pool) + 1)
            run_id = f"main/{agent}/{src['task']}/rep{rep}"
            rename = {"run_id": run_id, "rep": rep}
            scores = source.scores.loc[source.scores["run_id"] == src["run_id"]]
            selected = scores.loc[scores["is_selected"]]
            versions = scores.loc[~scores["is_selected"]]
            parents = dict(zip(versions["version"], versions["parent"], strict=True))
            wanted = versions_per_run if agent != BASELINE_AGENT else len(versions)
            copies = _copies(list(versions["version"]), parents, wanted)
            by_version = versions.set_index("version")
            span = float(pd.to_numeric(versions["elapsed_min"]).max() or 60.0) + 10.0
            rows = []
            for new, old, k, parent in copies:
                row = by_version.loc[old].to_dict() | {"version": new, "parent": parent}
                row["elapsed_min"] = float(row["elapsed_min"]) + k * span
                row["step"] = len(rows) + 1
                rows.append(row)
            frames["scores"].append(selected.assign(**rename))
            frames["scores"].append(pd.DataFrame(rows).assign(**rename))
            frames["steps"].append(pd.DataFrame(
                [{"run_id": run_id, "step": r["step"], "ok": bool(r["valid"]),
                  "reported_val_score": r["reported_val"], "elapsed_min": r["elapsed_min"],
                  "version": r["version"]} for r in rows]
            ))  # fmt: skip
            run = main.loc[main["run_id"] == src["run_id"]].assign(**rename)
            frames["runs"].append(run.assign(n_versions=len(rows), n_steps=len(rows)))
            for name in ("annotations", "pairs", "reasons", "calibration_curves"):
                table = getattr(source, name)
                if table is not None:
                    frames[name].append(
                        table.loc[table["run_id"] == src["run_id"]].assign(**rename)
                    )
            files = texts.get(src["run_id"], {})
            for new, old, k, _ in copies:
                if old not in files:
                    continue
                parts, start, layout = [], 0, []
                for path in sorted(files[old]):
                    text = _perturbed(files[old][path], f"synthetic {run_id} copy {k}")
                    target = path.replace(f"code/{old}/", f"code/{new}/", 1)
                    layout.append({"file": target, "start": start, "length": len(text)})
                    parts.append(text)
                    start += len(text) + 1
                joined = "\n".join(parts)
                sha = hashlib.sha256(joined.encode()).hexdigest()
                text_rows[sha] = joined
                key = run.iloc[0][["run_id", "experiment", "agent", "llm", "task", "rep",
                                   "reference"]].to_dict()  # fmt: skip
                code_rows.append(key | {"version": new, "n_files": len(parts), "code_sha256": sha})
                layout_rows += [key | {"version": new} | place for place in layout]
    tables = {name: pd.concat(parts, ignore_index=True) for name, parts in frames.items() if parts}
    steps = tables["steps"].merge(
        tables["runs"][["run_id", "experiment", "agent", "llm", "task", "rep", "reference"]],
        on="run_id",
    )
    return ScoreStore.from_frames(
        scores=tables["scores"],
        runs=tables["runs"],
        steps=steps.assign(created_at=pd.NaT, node=None, parent=None),
        annotations=tables.get("annotations"),
        pairs=tables.get("pairs"),
        reasons=tables.get("reasons"),
        calibration_curves=tables.get("calibration_curves"),
        subgroups=None,
        calibration_bins=None,
        tasks=source.tasks,
        code=pd.DataFrame(code_rows),
        code_files=pd.DataFrame(layout_rows),
        code_texts=pd.DataFrame({"code_sha256": list(text_rows), "text": list(text_rows.values())}),
        meta=dict(source.meta),
    )
