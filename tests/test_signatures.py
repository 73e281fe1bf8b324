"""``parameters_of``: a twin function takes its signature from the function written out in full."""

from __future__ import annotations

import inspect

import pytest

from automd_analysis.analysis import calibration_practices, llm, objectives, primary, shift
from automd_analysis.signatures import parameters_of


def _first(store: str, experiment: str = "main", *, alpha: float = 0.05, n: int | None = None):
    return store, experiment, alpha, n


def test_the_twin_gets_the_templates_defaults_and_annotations_and_keeps_its_return():
    @parameters_of(_first)
    def twin(store, experiment, *, alpha, n) -> tuple:
        return store, experiment, alpha, n

    assert twin("s") == ("s", "main", 0.05, None)
    assert twin("s", "other", alpha=0.1, n=3) == ("s", "other", 0.1, 3)
    signature = inspect.signature(twin)
    assert list(signature.parameters.values()) == list(
        inspect.signature(_first).parameters.values()
    )
    assert signature.return_annotation == "tuple"
    with pytest.raises(TypeError, match="alpah"):
        twin("s", alpah=0.1)


def test_the_twins_keyword_defaults_are_a_copy():
    @parameters_of(_first)
    def twin(store, experiment, *, alpha, n):
        return alpha

    twin.__kwdefaults__["alpha"] = 0.5
    assert _first.__kwdefaults__["alpha"] == 0.05
    assert twin("s") == 0.5


@pytest.mark.parametrize(
    "listed",
    [
        "def twin(store, *, alpha, n): ...",  # a parameter missing
        "def twin(store, experiment, alpha, n): ...",  # a keyword-only one made positional
        "def twin(store, experiment, *, n, alpha): ...",  # another order
    ],
)
def test_a_twin_that_does_not_list_the_same_parameters_is_refused(listed):
    namespace: dict = {}
    exec(listed, namespace)
    with pytest.raises(TypeError, match="does not list the parameters of _first"):
        parameters_of(_first)(namespace["twin"])


def test_a_twin_that_declares_its_own_default_or_annotation_is_refused():
    def with_default(store, experiment="other", *, alpha, n): ...

    def with_annotation(store: int, experiment, *, alpha, n): ...

    for twin in (with_default, with_annotation):
        with pytest.raises(TypeError, match="declare them once, on _first"):
            parameters_of(_first)(twin)


@pytest.mark.parametrize(
    ("twin", "template"),
    [
        (calibration_practices.ece_by_task_class, primary.agent_summary),
        (shift.external_ratios, primary.agent_summary),
        (llm.llm_summary_detail, llm.llm_runs),
        (objectives.objective_summary_by_agent, objectives.objective_summary),
        (objectives.objective_points, objectives.objective_runs),
        (objectives.objective_practices, objectives.objective_runs),
        (objectives.objective_baseline, objectives.objective_runs),
    ],
)
def test_the_packages_twins_have_their_templates_parameters(twin, template):
    mine, theirs = inspect.signature(twin), inspect.signature(template)
    assert list(mine.parameters.values()) == list(theirs.parameters.values())
    assert mine.return_annotation == theirs.return_annotation
    assert twin.__doc__ != template.__doc__  # each keeps its own docstring
