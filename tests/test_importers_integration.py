"""Every import format end to end: import -> ``automd score`` -> ``automd regenerate``; the
exported tables show the imported agents (one slow test over all formats, small demo tasks)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from fixtures import agent_logs as al

from automd_analysis.archive import open_archive

ROOT = Path(__file__).resolve().parent.parent
MANIFESTS = ROOT / "data_manifests"
PATTERN = "node_predictions/{node_id}/submission.csv"


def automd(*args) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "automd_analysis", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.mark.slow
def test_all_formats_import_score_and_regenerate(tmp_path, demo_root):
    src, dest = tmp_path / "sources", tmp_path / "archive"
    common = ["--archive", dest, "--data", demo_root, "--manifests", MANIFESTS, "--json"]
    imports = [
        ("aide", al.build_aide(src / "aide/logs/0-exp", demo_root), src / "aide/logs/0-exp",
         ["--predictions", PATTERN]),
        ("aiscientist-v2", al.build_aiscientist(src / "ais/logs/0-run", demo_root),
         src / "ais/logs/0-run", ["--predictions", PATTERN]),
        ("codex", al.build_codex(src / "codex", demo_root), src / "codex",
         ["--predictions", "submission_history/{step:04d}/submission.csv"]),
        ("autoresearch", al.build_autoresearch(src / "ar", demo_root), src / "ar", []),
        ("fmlbench", al.build_fmlbench(src / "fml/20260601_101500", demo_root),
         src / "fml/20260601_101500", ["--predictions", "step_predictions/step_{step:04d}.csv"]),
    ]  # fmt: skip
    agents = {}
    for fmt, exp, path, extra in imports:
        agent = fmt.replace("-v2", "")
        out = automd("import", fmt, path, "--agent", agent, "--task", exp["task"], *common, *extra)
        (r,) = json.loads(out.stdout)["runs"]
        assert r["selection"]["selected_version"] == exp["selected"]
        agents[agent] = exp["task"]
    group = src / "mle/2026-05-29T08-00-00-GMT_run-group_aide"
    mle = al.build_mlebench(group, demo_root)
    out = automd("import", "mlebench", group, "--agent", "mlebench-aide", *common)
    assert len(json.loads(out.stdout)["runs"]) == len(mle["runs"])
    # a second LLM of codex, for the LLM-comparison tables (experiment role `llm`)
    automd("import", "codex", src / "codex", "--agent", "codex", "--task", al.SEQUENTIAL,
           "--experiment", "llm", "--llm", "gpt-5-mini", "--rep", "1", *common)  # fmt: skip
    for task in (al.CLASSIFICATION, al.SURVIVAL, al.SEQUENTIAL):
        automd("baselines", task, "--seeds", "0", "--archive", dest, "--data", demo_root,
               "--manifests", MANIFESTS)  # fmt: skip
    arch = open_archive(dest)
    assert arch.problems == [] and len(arch.runs()) == 6 + len(mle["runs"]) + 3

    scores, report = tmp_path / "scores", tmp_path / "report"
    out = automd("score", dest, "--data", demo_root, "--manifests", MANIFESTS, "--out", scores,
                 "--jobs", "2", "--no-progress")  # fmt: skip
    assert "invalid:       0 files, 0 selected submissions" in out.stdout
    automd("regenerate", dest, "--data", demo_root, "--manifests", MANIFESTS, "--scores", scores,
           "--out", report, "--jobs", "2", "--embedding-backend", "hashing")  # fmt: skip
    assert (report / "index.html").is_file()

    table2 = pd.read_csv(report / "tables" / "table2_primary_scores.csv")
    imported = {*agents, "mlebench-aide"}
    assert imported <= set(table2["agent"])
    assert (table2.set_index("agent").loc[sorted(imported), "valid_rate_mean"] == 1.0).all()
    # tokens: logged by Codex/autoresearch/FML-bench, absent for AIDE / AI-Scientist-v2
    t11 = pd.read_csv(report / "tables" / "table11_tokens.csv").set_index("agent")
    assert t11.loc["aide", "n_with_tokens"] == 0 and t11.loc["aiscientist", "n_with_tokens"] == 0
    assert t11.loc["codex", "n_with_tokens"] == 1 and t11.loc["fmlbench", "n_with_tokens"] == 1
    assert t11.loc["codex", "tokens_m_mean"] == pytest.approx(33_200 / 1e6)
    # development tables work on the imported trees (App. H pairs, Table 18)
    t18 = pd.read_csv(report / "tables" / "table18_development.csv").set_index("agent")
    assert t18.loc["aide", "versions_per_run"] == 5 and t18.loc["fmlbench", "versions_per_run"] == 4
    pairs = pd.read_csv(report / "tables" / "version_pairs_sampled.csv")
    assert {"aide", "aiscientist", "codex", "fmlbench"} <= set(pairs["agent"])
    tree_pair = pairs[(pairs.agent == "aide") & (pairs.later == al.AIDE_TREE[3][0])]
    assert tree_pair["earlier"].tolist() == [al.AIDE_TREE[2][0]]  # its parent node's version
