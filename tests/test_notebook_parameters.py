"""Every report notebook's ``parameters`` cell is written as ``name: type = value  # help``, the form
papermill's own inference reads: ``papermill --help-notebook`` lists each name with its type and
one line of help, and papermill logs no "Unable to parse line"."""

from __future__ import annotations

import logging
from pathlib import Path

import nbformat
import pytest

from automd_analysis.app.run_notebooks import declared_parameters

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def test_there_are_report_notebooks():
    assert len(NOTEBOOKS) == 7


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_papermill_infers_every_parameter_with_type_and_help(path, caplog):
    from papermill.inspection import inspect_notebook

    with caplog.at_level(logging.DEBUG, logger="papermill"):
        inferred = inspect_notebook(path)
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    nb = nbformat.read(path, as_version=4)
    assert set(inferred) == declared_parameters(nb)  # every assignment of the cell was read
    for name, p in inferred.items():
        assert p["inferred_type_name"] not in ("None", ""), name
        assert p["help"] and "\n" not in p["help"], name
        assert p["default"] != "", name


#: Notebook parameters that only read a setting fixed when the archive is scored, and the option
#: of ``automd score`` / ``automd regenerate`` that sets it.
SCORING_PARAMETERS = {"n_bins": "--ece-bins"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_parameter_fixed_at_scoring_says_which_option_sets_it(path):
    """``papermill -p n_bins 15`` alone changes nothing (the ECE was computed when the archive was
    scored): ``--help-notebook`` says so and names the option, which both commands have."""
    from cli_tree import command_at
    from papermill.inspection import inspect_notebook

    from automd_analysis.app.pipeline import PIPELINE_PARAMETERS

    inferred = inspect_notebook(path)
    for name, option in SCORING_PARAMETERS.items():
        if name not in inferred:
            continue
        assert "fixed when scoring" in inferred[name]["help"], inferred[name]["help"]
        assert f"automd score/regenerate {option}" in inferred[name]["help"]
        for command in ("score", "regenerate"):
            assert option in {o for p in command_at(command).params for o in p.opts}, command
        assert PIPELINE_PARAMETERS[name] == option  # regenerate hands the scored value on
