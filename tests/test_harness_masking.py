"""End to end: the masking test of the real-time rule (paper App. G) flags exactly the runs the
harness knows look ahead, using ``rerun_submission`` on archived runs."""

from __future__ import annotations

import json

import pytest

from automd_analysis import masking
from automd_analysis.tasks import get_task
from automd_demo.harness import menus
from automd_demo.harness.build import RunSpec, build_archive
from automd_demo.harness.rerun import rerun_submission
from automd_demo.harness.toy import make_toy_tasks

#: Integration tests (CLI, end to end, demo cohorts): `make test-fast` skips them.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    root, man = make_toy_tasks(tmp_path_factory.mktemp("toy_mask"))
    out = tmp_path_factory.mktemp("mask") / "arch"
    specs = [
        RunSpec("main", agent, "sim-llm-a", "toy_hourly_local", rep)
        for agent in ("autoresearch", "codex", "aide", "aiscientist")
        for rep in (0, 1)
    ]
    # make the AIDE-like agent very keen on the whole-stay feature, so this small archive surely
    # contains a violating run (the default propensity produces a few in the full demo archive)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(menus.AGENT_BIAS, "aide", {**menus.AGENT_BIAS["aide"], "whole_stay_max": 60.0})
        build_archive(out, data=root, manifests=man, specs=specs, size="tiny", jobs=1)
    return out, root, man


def test_masking_flags_exactly_the_violating_runs(archive, tmp_path):
    out, root, man = archive
    runs = sorted(p.parent for p in out.glob("main/*/toy_hourly_local/rep*/run.json"))
    runs = [r for r in runs if json.loads((r / "run.json").read_text())["selection"]["selected_version"]]  # fmt: skip
    truth = {
        str(r): json.loads((r / "logs/harness.json").read_text())["real_time_violation"]
        for r in runs
    }
    assert any(truth.values()), "the archive should contain a violating AIDE run"
    assert not all(truth.values())
    task = get_task("toy_hourly_local", root, man)

    def rerun(run_dir, test_csv, out_csv):
        return rerun_submission(run_dir, test_csv, out_csv, data=root, manifests=man)

    table = masking.run_masking_test(runs, task, seed=0, workdir=tmp_path, rerun=rerun)
    assert (table["status"] != "error").all(), table["error"].tolist()
    flagged = dict(zip(table["run_dir"], table["violation"].astype(bool), strict=True))
    assert flagged == truth
    # every full re-run reproduces the archived submission
    assert table["reproduces_original"].all()
    # the AIDE-like agent's whole-stay feature is among the violations (other runs may violate
    # through averaged ranks computed over the whole test file)
    reasons = {
        str(r): json.loads((r / "logs/harness.json").read_text())["real_time_violation_reasons"]
        for r in runs
    }
    assert any("whole_stay_max" in v for r, v in reasons.items() if "/aide/" in r)
