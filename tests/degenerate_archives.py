"""Tiny archives with degenerate data: constant predictions, one outcome class, a calibration
measure undefined for every run, a single valid run, a single agent, runs without predictions.

:func:`build` writes one :class:`Case` (tasks with their manifests and hidden labels, and a runs
archive) with the writer helpers and task models of ``tests/fixtures/make_small_fixture.py``;
:data:`CASES` is the hypothesis strategy of the property test that runs every report notebook on
such archives (``tests/test_degenerate_reports.py``). Imported by the test modules as
``import degenerate_archives`` (pytest puts ``tests/`` on ``sys.path``).
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

_FIXTURE = Path(__file__).resolve().parent / "fixtures" / "make_small_fixture.py"


def _fixture_module():
    name = "make_small_fixture"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, _FIXTURE)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


fx = _fixture_module()

#: What an agent run submits: probabilities as a modest model would, one constant value for every
#: unit, only 0 and 1 (the logit-scale slope and intercept are undefined), or an invalid file.
PREDICTIONS = ("ordinary", "constant", "extreme", "invalid")
#: The task kinds a case may hold (``cls_ext``: an external validation of ``cls``).
TASK_KINDS = ("cls", "surv", "seq")


@dataclass(frozen=True)
class Case:
    """One degenerate archive.

    Attributes
    ----------
    agents : int
        Agents besides the simple baseline (1 or 2).
    reps : int
        Repetitions per agent and task.
    tasks : tuple of str
        Of :data:`TASK_KINDS`; ``cls`` is always there.
    one_class : bool
        The classification task's labels are all 0 (AUROC and every ranking measure undefined).
    predictions : str
        What every agent run submits (:data:`PREDICTIONS`), except the runs below.
    valid_runs : {"all", "one"}
        ``"one"``: only the first agent run of the main experiment is valid, the others submit
        files that fail the checks (``invalid`` predictions make no run valid).
    baseline : bool
        Simple-baseline runs on every task.
    external : bool
        Add an external-validation task of the classification task (notebook 04).
    others : bool
        Add an ``objectives`` and an ``llm`` experiment (notebooks 03 and 06).
    unscorable : bool
        Add runs imported without predictions (not scorable here).
    """

    agents: int = 2
    reps: int = 2
    tasks: tuple[str, ...] = ("cls", "surv")
    one_class: bool = False
    predictions: str = "ordinary"
    valid_runs: str = "all"
    baseline: bool = True
    external: bool = False
    others: bool = False
    unscorable: bool = False


CASES = st.builds(
    Case,
    agents=st.integers(1, 2),
    reps=st.integers(1, 2),
    tasks=st.sets(st.sampled_from(TASK_KINDS[1:])).map(lambda s: ("cls", *sorted(s))),
    one_class=st.booleans(),
    predictions=st.sampled_from(PREDICTIONS),
    valid_runs=st.sampled_from(("all", "one")),
    baseline=st.booleans(),
    external=st.booleans(),
    others=st.booleans(),
    unscorable=st.booleans(),
)


@dataclass(frozen=True)
class Built:
    """The folders of a built case."""

    archive: Path
    data: Path
    manifests: Path


def _tasks(case: Case) -> dict[str, object]:
    n = 60
    tasks: dict[str, object] = {
        "cls": fx.ClassificationTask("cls", n, 11, 0.3, False, "E"),
    }
    if case.one_class:
        tasks["cls"].y[:] = 0
    if case.external:
        tasks["cls_ext"] = fx.ClassificationTask("cls_ext", n, 12, 0.3, False, "X")
    if "surv" in case.tasks:
        tasks["surv"] = fx.SurvivalTask("surv", n, 13, white_share=0.7, grid_max=45.0)
    if "seq" in case.tasks:
        tasks["seq"] = fx.SequentialTask("seq", 20, 14)
    return tasks


def _write_tasks(tasks: dict, data: Path, manifests: Path) -> None:
    for tid, task in tasks.items():
        extra = {}
        if tid == "cls_ext":
            extra = {"validation": "external", "shift": "hospital", "internal_counterpart": "cls"}
        fx.write_task(task, data, manifests, **extra)


def _values(task, how: str, rng: np.random.Generator) -> np.ndarray:
    """Predictions of ``task`` (probabilities, or survival curves) of kind ``how``."""
    ordinary = task.predict(rng, 0.6) if task.kind != "classification" else None
    if task.kind == "classification":
        signal = task.signal + rng.normal(scale=1.0, size=task.n)
        ordinary = np.round(1 / (1 + np.exp(-(signal - 1.0))), 4)
    if how == "constant":
        return np.full_like(ordinary, 0.3 if task.kind != "survival" else 0.8)
    if how == "extreme":
        if task.kind == "survival":
            return np.where(ordinary > 0.5, 1.0, 0.0).cumprod(axis=1)
        return (ordinary > np.median(ordinary)).astype(float)
    return ordinary


def _submission(task, how: str, rng: np.random.Generator) -> bytes:
    values = _values(task, "ordinary" if how == "invalid" else how, rng)
    corrupt = {"classification": "wrong_ids", "survival": "wrong_ids", "sequential": "bad_label"}
    return task.submission(values, corrupt[task.kind] if how == "invalid" else None)


def _run(root: Path, exp: str, agent: str, tid: str, rep: int, content: bytes | None,
         start, **over) -> None:  # fmt: skip
    run_dir = root / exp / agent / tid / f"rep{rep}"
    selected = None
    if content is not None:
        fx.write_version(run_dir, "v01", start + timedelta(minutes=30), 1, content,
                         reported_val_score=0.7, code_files=["code/v01/train.py"])  # fmt: skip
        code = run_dir / "code" / "v01" / "train.py"
        code.parent.mkdir(parents=True, exist_ok=True)
        code.write_text("from sklearn.linear_model import LogisticRegression\n", encoding="utf-8")
        (run_dir / "submission.csv").write_bytes(content)
        selected = "v01"
    doc = fx.run_doc(exp, agent, tid, rep, started_at=fx.iso(start),
                     ended_at=fx.iso(start + timedelta(minutes=90)),
                     selection={"rule": "last valid", "selected_version": selected},
                     reported_val_score=0.7 if selected else None, **over)  # fmt: skip
    fx.write_json(run_dir / "run.json", doc)


def build(case: Case, root: Path) -> Built:
    """Write ``case`` under ``root`` (``archive/``, ``data/``, ``manifests/``)."""
    built = Built(root / "archive", root / "data", root / "manifests")
    tasks = _tasks(case)
    _write_tasks(tasks, built.data, built.manifests)
    experiments = {"main": "degenerate case"}
    if case.others:
        experiments |= {"objectives": "objectives", "llm": "other LLMs"}
    fx.write_archive_yaml(built.archive, name="degenerate", experiments=experiments)
    rng = np.random.default_rng(7)
    agents = ["alpha", "beta"][: case.agents]
    first = True
    for tid, task in tasks.items():
        for agent in agents:
            for rep in range(case.reps):
                how = case.predictions
                if case.valid_runs == "one" and not first:
                    how = "invalid"
                first = False
                start = fx.T0 + timedelta(hours=rep)
                _run(built.archive, "main", agent, tid, rep, _submission(task, how, rng), start)
        if case.baseline:
            for rep in range(2):
                _run(built.archive, "main", "baseline", tid, rep,
                     _submission(task, "ordinary", rng), fx.T0, llm="none", reference=True,
                     search="none", tokens=None)  # fmt: skip
    if case.others:
        for rep, objective in enumerate(("brier", "auroc+ece")):
            _run(built.archive, "objectives", agents[0], "cls", rep,
                 _submission(tasks["cls"], case.predictions, rng), fx.T0, objective=objective)  # fmt: skip
        _run(built.archive, "llm", agents[0], "cls", 0,
             _submission(tasks["cls"], case.predictions, rng), fx.T0, llm="llm-b")  # fmt: skip
    if case.unscorable:
        note = ("Imported by automd import aide from 'log' (automd-analysis 0); prediction files "
                "bound by none; no token counts. Problems: import.final_file_missing, "
                "import.predictions_not_bound (see journal.md).")  # fmt: skip
        _run(built.archive, "main", "imported", "cls", 0, None, fx.T0, notes=note, tokens=None)
    return built
