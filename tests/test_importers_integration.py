"""Every import format end to end: import -> ``automd annotate`` -> ``automd score`` ->
``automd regenerate``; the exported tables show the imported agents (one slow test over all
formats, small demo tasks), and the reproductions of issue 20's eight findings
(``fixtures/issue20_findings.py``), imported as studies with ``--layout``, go through the whole
pipeline too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from fixtures import agent_logs as al
from fixtures import issue20_findings as F

from automd_analysis.archive import open_archive

ROOT = Path(__file__).resolve().parent.parent
MANIFESTS = ROOT / "data_manifests"
PATTERN = "node_predictions/{node_id}/submission.csv"


def automd(*args, ok: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "automd_analysis", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    if ok:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def import_findings(src: Path, dest: Path, demo_root: Path, common: list) -> dict:
    """The issue-20 reproductions as studies (one ``--layout`` import per format); returns
    ``{agent: (run json of its one run, what the reproduction was designed to show)}``."""
    task = al.CLASSIFICATION

    def subm(quality, seed):
        return al.predictions(demo_root, task, quality, seed)

    builds = [
        ("aide", "aide-found", F.f1_f3_aide_as_found, []),
        ("aiscientist-v2", "ais-torch", F.f2_f4_f8_ais_torch, ["--predictions", PATTERN]),
        ("aiscientist-v2", "ais-partial", F.f5_ais_truncated, ["--predictions", PATTERN]),
        ("autoresearch", "ar-found", F.f7_autoresearch_as_found, ["--llm", "gpt-5"]),
    ]
    out = {}
    for fmt, agent, build, extra in builds:
        root = src / f"study-{agent}"
        exp = build(root / agent / task / "rep0", subm)
        proc = automd("import", fmt, root, "--layout", "{agent}/{task}/rep{rep}", *common, *extra)
        study = json.loads(proc.stdout)
        assert study["ok"] and study["imported"] == 1, study
        (run,) = study["sources"][0]["runs"]
        out[agent] = (run, exp)
    return out


@pytest.mark.slow
def test_all_formats_import_annotate_score_and_regenerate(tmp_path, demo_root):
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
    found = import_findings(src, dest, demo_root, common)
    for task in (al.CLASSIFICATION, al.SURVIVAL, al.SEQUENTIAL):
        automd("baselines", task, "--seeds", "0", "--archive", dest, "--data", demo_root,
               "--manifests", MANIFESTS)  # fmt: skip
    arch = open_archive(dest)
    assert arch.problems == [] and len(arch.runs()) == 6 + len(mle["runs"]) + len(found) + 3

    annotations = tmp_path / "annotations"
    automd("annotate", dest, "--out", annotations, "--data", demo_root, "--manifests", MANIFESTS,
           "--jobs", "2", "--no-progress", ok=False)  # fmt: skip
    problems = json.loads((annotations / "problems.json").read_text())
    problems = problems if isinstance(problems, list) else problems.get("problems", [])
    for agent in found:
        run_dir = annotations / "main" / agent / al.CLASSIFICATION / "rep0"
        assert (run_dir / "annotations.json").is_file(), agent
        assert not [p for p in problems
                    if agent in p["run_id"] and p["code"] == "annotate.no_code"], agent  # fmt: skip

    scores, report = tmp_path / "scores", tmp_path / "report"
    out = automd("score", dest, "--data", demo_root, "--manifests", MANIFESTS, "--out", scores,
                 "--jobs", "2", "--no-progress", "--annotations", annotations)  # fmt: skip
    assert "invalid:       0 files, 0 selected submissions" in out.stdout
    automd("regenerate", dest, "--data", demo_root, "--manifests", MANIFESTS, "--scores", scores,
           "--out", report, "--jobs", "2", "--embedding-backend", "hashing",
           "--annotations", annotations)  # fmt: skip
    assert (report / "index.html").is_file()
    check_findings(found, arch, report)

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


def check_findings(found: dict, arch, report: Path) -> None:
    """What each reproduction was designed to show, in the archive and the report."""
    runs = {r.agent: r for r in arch.runs() if r.agent in found}
    aide, exp = runs["aide-found"], found["aide-found"][1]
    assert aide.llm == exp["llm"] and aide.selected_version == "final"  # findings 1 and 3
    assert aide.read_text(aide.version("final").code_files[0]) == exp["code"]
    torch, exp = runs["ais-torch"], found["ais-torch"][1]
    assert torch.selected_version == exp["selected"]  # finding 4: the earlier of a 1e-16 tie
    assert torch.reported_val_score == exp["reported"]  # its primary metric, not a mean
    assert torch.read_text(torch.version(exp["selected"]).code_files[0]) == F.TORCH_LOOP  # 2
    assert {v.step for v in torch.versions} <= {s.step for s in torch.steps}  # finding 8
    partial, exp = runs["ais-partial"], found["ais-partial"][1]
    assert partial.incomplete and partial.selected_version == exp["selected"]  # finding 5
    ar, exp = runs["ar-found"], found["ar-found"][1]
    assert (ar.ended_at - ar.started_at).total_seconds() / 60 == exp["minutes"]  # finding 7
    assert (ar.dir / "logs" / exp["program"]).is_file()
    coverage = pd.read_csv(report / "tables" / "run_coverage.csv")
    flagged = coverage.loc[coverage["n_incomplete"] > 0, "agent"].tolist()
    assert sorted(flagged) == ["ais-partial", "aiscientist"]  # the fixture lacks stage 3
