"""The masking step in the pipeline, end to end through the CLI on a small demo archive.

``automd demo archive`` builds a tiny archive on the toy hourly task (the harness writes, for each
run, whether its code really looks ahead: ``logs/harness.json`` ``real_time_violation``);
``automd regenerate --masking --allow-code-execution`` must run the masking test (in the sandbox)
before the notebooks and notebook 07 must show its result; without consent nothing is re-run,
whatever the archive claims about itself; ``automd masking run`` must flag exactly the violating
runs, reuse its cache, and refuse a run whose archived script or config was tampered with.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from automd_analysis.masking.results import MASKING_FILE, read_masking_results
from automd_demo.harness.toy import make_toy_tasks

ROOT = Path(__file__).resolve().parent.parent
TASK = "toy_hourly_local"
AGENTS = ("aide", "aiscientist", "autoresearch", "codex")

pytestmark = pytest.mark.slow


def _automd(*args, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "automd_analysis", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    base = tmp_path_factory.mktemp("nb07_demo")
    data, manifests = make_toy_tasks(base / "toy")
    archive = base / "demo"
    built = _automd("demo", "archive", "--archive", archive, "--data", data, "--manifests",
                    manifests, "--size", "tiny", "--task", TASK, "--jobs", "1")  # fmt: skip
    assert built.returncode == 0, built.stderr
    return base, archive, data, manifests


def _truth(archive: Path) -> dict[str, tuple[str, bool]]:
    """run_id -> (search, the harness's ground truth of a real-time-rule violation)."""
    out = {}
    for agent in AGENTS:
        run_dir = archive / "main" / agent / TASK / "rep0"
        run = json.loads((run_dir / "run.json").read_text())
        facts = json.loads((run_dir / "logs" / "harness.json").read_text())
        out[f"main/{agent}/{TASK}/rep0"] = (run["search"], bool(facts["real_time_violation"]))
    return out


@pytest.fixture(scope="module")
def regenerated(demo):
    base, archive, data, manifests = demo
    notebooks = base / "notebooks"
    notebooks.mkdir()
    shutil.copy(ROOT / "notebooks" / "07_methods_and_development.ipynb", notebooks)
    scores, out = base / "scores", base / "report"
    result = _automd("regenerate", archive, "--data", data, "--manifests", manifests, "--scores",
                     scores, "--out", out, "--notebooks", notebooks, "--embedding-backend",
                     "hashing", "--jobs", "2", "--masking", "--allow-code-execution")  # fmt: skip
    return scores, out, result


def test_regenerate_runs_the_masking_step_and_notebook_07_shows_it(demo, regenerated):
    _, archive, _, _ = demo
    scores, out, result = regenerated
    assert result.returncode == 0, result.stderr
    assert "Masking test of the real-time rule" in result.stdout
    truth = _truth(archive)
    tree = {run_id: violates for run_id, (search, violates) in truth.items() if search == "tree"}
    assert any(tree.values()), f"the toy demo archive has no violating tree-search run: {truth}"
    results = read_masking_results(scores / MASKING_FILE)
    # every valid tree-search run was tested (all toy runs are valid), flagged exactly when it
    # really looks ahead, and its full re-run reproduces the archived alarms
    assert dict(zip(results["run_id"], results["flagged"].astype(bool), strict=True)) == tree
    assert (results["status"] != "error").all(), results["reason"].tolist()
    assert results["reproduces_original"].all()
    assert set(results["isolation"]) <= {"process+netns", "process"}
    # notebook 07 rendered the same results, with no error output
    table = pd.read_csv(out / "tables" / "masking_runs.csv", dtype=str, keep_default_na=False)
    assert dict(zip(table["run_id"], table["flagged"] == "true", strict=True)) == tree
    executed = nbformat.read(out / "notebooks" / "07_methods_and_development.ipynb", 4)
    outputs = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    page = (out / "html" / "07_methods_and_development.html").read_text()
    assert "masking.parquet" in page and "No masking-test results" not in page
    index = (out / "index.html").read_text()
    assert (
        "masking test of the real-time rule" in index and f"{sum(tree.values())} flagged" in index
    )
    assert "code embeddings:" in index and "backend hashing:" in index
    assert list((scores / "embeddings").rglob("*.npy"))  # filled before notebook 07 ran
    for name in ("table18_development", "table6_methods", "process_metrics_table4"):
        assert (out / "tables" / f"{name}.csv").is_file(), name


def test_a_plain_regenerate_after_the_masking_step_says_what_the_results_found(demo, regenerated):
    """Issue 29: a later ``regenerate`` without ``--masking`` reads the earlier results; the index
    keeps their counts (it dropped them) and shows no Markdown backticks (it showed them)."""
    base, archive, data, manifests = demo
    scores, out, first = regenerated
    assert first.returncode == 0, first.stderr
    before = (out / "index.html").read_text()
    found = re.search(r"masking test of the real-time rule \(paper App\. G\): [^;<]*", before)
    assert found and "eligible run(s)" in found.group(0)
    notebooks = base / "notebooks"
    again = _automd("regenerate", archive, "--data", data, "--manifests", manifests, "--scores",
                    scores, "--out", out, "--notebooks", notebooks, "--embedding-backend",
                    "hashing", "--jobs", "2")  # fmt: skip
    assert again.returncode == 0, again.stderr
    index = (out / "index.html").read_text()
    assert found.group(0) in index  # the same counts
    assert "results of an earlier automd masking run, read from masking.parquet" in index
    assert "re-run isolation:" in index
    assert "`" not in re.sub(r"<style.*?</style>", "", index, flags=re.S)


def test_masking_run_flags_exactly_the_violating_runs_and_uses_its_cache(demo, regenerated):
    _, archive, data, manifests = demo
    scores, _, first = regenerated
    assert first.returncode == 0, first.stderr
    truth = _truth(archive)
    args = ["masking", "run", archive, "--data", data, "--manifests", manifests, "--scores", scores,
            "--allow-code-execution"]  # fmt: skip
    every = _automd(*args, "--agents", ",".join(AGENTS))
    assert every.returncode == 0, every.stderr
    results = read_masking_results(scores / MASKING_FILE)
    flagged = dict(zip(results["run_id"], results["flagged"].astype(bool), strict=True))
    assert flagged == {run_id: violates for run_id, (_, violates) in truth.items()}
    assert not all(flagged.values())
    # the tree-search runs were tested by `regenerate` already: they come from the cache
    n_tree = sum(search == "tree" for search, _ in truth.values())
    assert f"{len(AGENTS) - n_tree} re-run now, {n_tree} from cache" in every.stdout
    again = _automd(*args, "--agents", ",".join(AGENTS))
    assert again.returncode == 0 and f"0 re-run now, {len(AGENTS)} from cache" in again.stdout


def test_a_tampered_script_is_refused_not_executed(demo, tmp_path):
    _, archive, data, manifests = demo
    copy = tmp_path / "demo"
    shutil.copytree(archive, copy)
    run_dir = copy / "main" / "aide" / TASK / "rep0"
    version = json.loads((run_dir / "run.json").read_text())["selection"]["selected_version"]
    script = run_dir / "code" / version / "train.py"
    script.write_text(script.read_text() + "\nraise SystemExit('this line must never run')\n")
    scores = tmp_path / "scores"
    scored = _automd("score", copy, "--data", data, "--manifests", manifests, "--out", scores,
                     "--no-progress")  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    # the config of another run smuggles a statement into a value that is pasted into the script
    other = copy / "main" / "aiscientist" / TASK / "rep0"
    version = json.loads((other / "run.json").read_text())["selection"]["selected_version"]
    config_path = other / "code" / version / "config.json"
    config = json.loads(config_path.read_text())
    config["config"]["seed"] = "42; raise SystemExit('injected')"
    config_path.write_text(json.dumps(config))
    result = _automd("masking", "run", copy, "--data", data, "--manifests", manifests,
                     "--scores", scores, "--allow-code-execution")  # fmt: skip
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "could not be tested" in result.stderr
    rows = read_masking_results(scores / MASKING_FILE).set_index("agent")
    assert rows.at["aide", "status"] == "error" and pd.isna(rows.at["aide", "flagged"])
    assert "refusing to run it" in rows.at["aide", "reason"]
    assert rows.at["aiscientist", "status"] == "error"
    assert "archive.config_invalid" in rows.at["aiscientist", "reason"]
    assert "seed" in rows.at["aiscientist", "reason"]


def test_nothing_is_re_run_without_consent_whatever_the_archive_claims(demo, tmp_path):
    base, archive, data, manifests = demo
    scores, out = tmp_path / "scores", tmp_path / "report"
    # the demo archive says it was built by the harness: that alone never runs its code
    assert "automd demo archive" in (archive / "archive.yaml").read_text()
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    shutil.copy(ROOT / "notebooks" / "07_methods_and_development.ipynb", notebooks)
    result = _automd("regenerate", archive, "--data", data, "--manifests", manifests, "--scores",
                     scores, "--out", out, "--notebooks", notebooks, "--embedding-backend",
                     "hashing", "--jobs", "2")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert not (scores / MASKING_FILE).exists()
    assert "masking test: not run" in (out / "index.html").read_text()
    refused = _automd("masking", "run", archive, "--data", data, "--manifests", manifests,
                      "--scores", scores)  # fmt: skip
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "--allow-code-execution" in refused.stderr and not (scores / MASKING_FILE).exists()
    half = _automd("regenerate", archive, "--scores", scores, "--out", out, "--masking")
    assert half.returncode == 2 and "explicit consent" in half.stderr
