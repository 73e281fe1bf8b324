"""Runs without predictions for their task's test set are "not scorable here", not invalid
(issue 33 item 3); the problems ``automd import`` recorded reach the score store, per run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis.analysis.store import load_store, not_scorable_runs, selected_runs
from automd_analysis.importers.problems import RECORDED
from automd_analysis.scoring import score_archive
from automd_analysis.scoring.scorable import (
    IMPORT_EFFECT,
    NOT_SCORABLE_CODE,
    NOT_SCORABLE_EFFECT,
    import_origin,
    import_problem_codes,
    not_scorable_reason,
)

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "small"
NOTE = (
    "Imported by automd import aide from 'log' (automd-analysis 0.1.0); prediction files bound by "
    "none; no token counts. Problems: import.tokens_absent, import.final_file_missing, "
    "import.predictions_not_bound (see journal.md)."
)


def test_import_codes_are_read_from_the_closing_sentence_only():
    assert import_problem_codes(NOTE) == (
        "import.final_file_missing",
        "import.predictions_not_bound",
        "import.tokens_absent",
    )
    assert import_problem_codes(NOTE.replace("import.tokens_absent", "import.made_up")) == (
        "import.final_file_missing",
        "import.predictions_not_bound",
    )
    assert import_problem_codes(NOTE + " more text") == ()
    assert import_problem_codes("Problems: import.tokens_absent") == ()


@settings(max_examples=50)
@given(prefix=st.text(max_size=200), codes=st.lists(st.sampled_from(sorted(RECORDED))))
def test_free_text_before_the_sentence_never_adds_a_code(prefix, codes):
    listed = f" Problems: {', '.join(codes)} (see journal.md)." if codes else ""
    assert import_problem_codes(prefix + listed) == tuple(sorted(set(codes)))


def test_the_import_format_and_source_come_from_the_importer_s_first_sentence():
    assert import_origin(NOTE) == ("aide", "log")
    hyphen = NOTE.replace("import aide", "import aiscientist-v2").replace("'log'", "'a b's'")
    assert import_origin(hyphen) == ("aiscientist-v2", "a b's")
    assert import_origin("x " + NOTE) == (None, None)  # anchored: free text never claims it
    assert import_origin(NOTE.replace("import aide", "import AIDE<b>")) == (None, None)


@pytest.mark.parametrize("fmt", ["aide", "aiscientist-v2"])
def test_a_run_of_every_import_format_without_predictions_is_not_scorable(fmt):
    from types import SimpleNamespace

    run = SimpleNamespace(submission_path=None, submission_issue=None, versions=(),
                          notes=NOTE.replace("import aide", f"import {fmt}"))  # fmt: skip
    assert not_scorable_reason(run)["code"] == NOT_SCORABLE_CODE


def _archive(tmp: Path) -> Path:
    """The fixture's alpha/fx_cls runs 0 and 1 as three runs: rep 0 as it is, rep 1 imported
    from a log that kept no prediction file, rep 2 written by a harness without any file."""
    target = tmp / "archive"
    target.mkdir()
    meta = yaml.safe_load((FIXTURE / "archive" / "archive.yaml").read_text())
    (target / "archive.yaml").write_text(yaml.safe_dump(meta | {"experiments": {"main": "m"}}))
    source = FIXTURE / "archive" / "main" / "alpha" / "fx_cls"
    for rep in (0, 1, 2):
        run = target / "main" / "alpha" / "fx_cls" / f"rep{rep}"
        shutil.copytree(source / f"rep{min(rep, 1)}", run)
        doc = json.loads((run / "run.json").read_text()) | {"rep": rep}
        if rep:
            shutil.rmtree(run / "versions")
            (run / "submission.csv").unlink()
            (run / "annotations.json").unlink(missing_ok=True)
            doc["selection"] = {"rule": "final file", "selected_version": None}
        if rep == 1:
            doc["notes"] = NOTE
        (run / "run.json").write_text(json.dumps(doc))
    return target


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("scorable")
    summary = score_archive(
        _archive(tmp), tmp / "scores", data=FIXTURE / "data", manifests=FIXTURE / "manifests",
        bootstrap=0,
    )  # fmt: skip
    return summary, load_store(tmp / "scores")


def test_an_imported_run_without_predictions_is_not_scorable_and_not_invalid(scored):
    summary, store = scored
    assert (summary.n_runs, summary.n_not_scorable, summary.n_invalid_selected) == (3, 1, 1)
    status = store.runs.set_index("rep")["status"].to_dict()
    assert status == {0: "valid", 1: "not_scorable", 2: "invalid"}
    assert set(store.scores["rep"]) == {0, 2}  # no file, no row
    invalid = store.scores.loc[store.scores["is_selected"] & (store.scores["rep"] == 2)]
    assert invalid["reason_code"].tolist() == ["file.missing"]  # the harness run: agent failure
    assert list(selected_runs(store)["rep"]) == [0, 2]
    assert list(not_scorable_runs(store)["rep"]) == [1]
    assert json.loads((store.path / "store.json").read_text())["counts"]["not_scorable"] == 1
    origin = store.runs.set_index("rep")[["import_format", "import_source"]]
    assert origin.loc[1].tolist() == ["aide", "log"] and origin.loc[0].isna().all()


def test_import_problems_and_the_reason_are_in_the_problems_table(scored):
    _, store = scored
    rows = store.problems.loc[store.problems["rep"] == 1]
    found = sorted(zip(rows["effect"], rows["code"], strict=True))
    assert found == [
        (IMPORT_EFFECT, "import.final_file_missing"),
        (IMPORT_EFFECT, "import.predictions_not_bound"),
        (IMPORT_EFFECT, "import.tokens_absent"),
        (NOT_SCORABLE_EFFECT, NOT_SCORABLE_CODE),
    ]
    imported = rows.loc[rows["effect"] == IMPORT_EFFECT]
    assert set(imported["path"]) == {"main/alpha/fx_cls/rep1/journal.md"}
    assert imported["message"].tolist() == [RECORDED[c] for c in imported["code"]]
    assert store.problems.loc[store.problems["rep"] != 1].empty


def test_runs_without_predictions_need_no_task_data(tmp_path):
    archive = _archive(tmp_path)
    for rep in (0, 2):
        shutil.rmtree(archive / "main" / "alpha" / "fx_cls" / f"rep{rep}")
    score_archive(archive, tmp_path / "scores", data=tmp_path / "no-data",
                  manifests=FIXTURE / "manifests", bootstrap=0)  # fmt: skip
    store = load_store(tmp_path / "scores")
    assert store.runs["status"].tolist() == ["not_scorable"]
    assert store.runs["task_kind"].tolist() == ["classification"]  # from the manifest
    assert isinstance(store.scores, pd.DataFrame) and store.scores.empty
