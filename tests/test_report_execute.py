"""automd_analysis.app.run_notebooks: discovery, notebook checks, papermill execution, failure reports."""

from __future__ import annotations

import json

import nbformat
import papermill
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from notebook_factory import code, markdown, parameters_cell, write_notebook
from papermill.execute import raise_for_execution_errors

from automd_analysis.app import run_notebooks as ex


def _outputs_text(path) -> str:
    nb = nbformat.read(path, as_version=4)
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text") or out.get("ename") or json.dumps(out.get("data", {})))
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# discovery and checks (no kernel)


def test_discover_orders_by_name_and_skips_scratch_files(tmp_path):
    for name in ("02_b.ipynb", "01_a.ipynb", "10_c.ipynb", "_scratch.ipynb", ".hidden.ipynb"):
        write_notebook(tmp_path / name, [parameters_cell("x = 1")])
    (tmp_path / "notes.txt").write_text("not a notebook")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    write_notebook(tmp_path / ".ipynb_checkpoints" / "01_a-checkpoint.ipynb", [])
    found = [p.name for p in ex.discover_notebooks(tmp_path)]
    assert found == ["01_a.ipynb", "02_b.ipynb", "10_c.ipynb"]


@pytest.mark.parametrize("make_dir", [False, True])
def test_discover_missing_or_empty_directory_is_a_structured_error(tmp_path, make_dir):
    target = tmp_path / "nbs"
    if make_dir:
        target.mkdir()
    with pytest.raises(ex.NotebookExecutionError) as info:
        ex.discover_notebooks(target)
    assert info.value.code == "report.no_notebooks"
    assert info.value.path == target
    assert info.value.fix


def test_check_notebook_requires_kernelspec(tmp_path):
    path = write_notebook(tmp_path / "a.ipynb", [parameters_cell("x = 1")], kernelspec=None)
    with pytest.raises(ex.NotebookExecutionError) as info:
        ex.check_notebook(path)
    err = info.value
    assert (err.code, err.location, err.path) == (
        "report.notebook_invalid",
        "metadata.kernelspec",
        path,
    )
    assert "python3" in err.fix


@pytest.mark.parametrize("n_tagged", [0, 2])
def test_check_notebook_requires_exactly_one_parameters_cell(tmp_path, n_tagged):
    cells = [parameters_cell(f"x{i} = 1") for i in range(n_tagged)] + [code("y = 2")]
    path = write_notebook(tmp_path / "a.ipynb", cells)
    with pytest.raises(ex.NotebookExecutionError) as info:
        ex.check_notebook(path)
    assert info.value.code == "report.notebook_invalid"
    assert f"found {n_tagged}" in info.value.message


def test_check_notebook_rejects_unreadable_file(tmp_path):
    path = tmp_path / "broken.ipynb"
    path.write_text("{ not json")
    with pytest.raises(ex.NotebookExecutionError) as info:
        ex.check_notebook(path)
    assert info.value.code == "report.notebook_invalid"
    assert info.value.path == path


def test_check_notebook_returns_parsed_notebook(tmp_path):
    path = write_notebook(tmp_path / "a.ipynb", [markdown("# T"), parameters_cell("x = 1")])
    nb = ex.check_notebook(path)
    assert [c.cell_type for c in nb.cells] == ["markdown", "code"]


def test_jobs_must_be_positive(tmp_path):
    write_notebook(tmp_path / "a.ipynb", [parameters_cell("x = 1")])
    with pytest.raises(ex.NotebookExecutionError) as info:
        ex.execute_notebooks(tmp_path, tmp_path / "out", jobs=0)
    assert info.value.code == "report.bad_option"


# ---------------------------------------------------------------------------------------------
# failure location in papermill's output layout (no kernel: papermill prepares the notebook and
# inserts its own error markers; we only plant the error output)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    before=st.lists(st.sampled_from(["md", "code"]), max_size=3),
    after=st.lists(st.sampled_from(["md", "code"]), min_size=1, max_size=5),
    data=st.data(),
)
def test_failure_index_refers_to_the_source_notebook(tmp_path_factory, before, after, data):
    tmp = tmp_path_factory.mktemp("loc")
    make = {"md": lambda i: markdown(f"text {i}"), "code": lambda i: code(f"v{i} = {i}")}
    cells = [make[k](i) for i, k in enumerate(before)]
    cells.append(parameters_cell("x = 1"))
    cells += [make[k](i + 100) for i, k in enumerate(after)]
    code_positions = [i for i, c in enumerate(cells) if c.cell_type == "code"]
    failing = data.draw(st.sampled_from(code_positions))
    cells[failing].source = f"\n\n  boom_{failing}()  \nmore = 1"
    source = write_notebook(tmp / "nb.ipynb", cells)

    prepared = papermill.execute_notebook(
        str(source), None, parameters={"x": 2}, prepare_only=True, progress_bar=False
    )
    # the failing cell sits one further down when it follows papermill's injected cell
    executed_index = failing + (1 if failing > len(before) else 0)
    prepared.cells[executed_index].outputs = [
        nbformat.v4.new_output("error", ename="NameError", evalue="boom", traceback=[])
    ]
    out = tmp / "out.ipynb"
    nbformat.write(prepared, out)
    with pytest.raises(papermill.PapermillExecutionError):
        raise_for_execution_errors(prepared, str(out))  # writes the copy with error markers

    failure = ex._locate_failure("nb.ipynb", out, RuntimeError("ignored"))
    assert failure.cell_index == failing
    assert failure.cell_first_line == f"boom_{failing}()"
    assert (failure.ename, failure.evalue) == ("NameError", "boom")


def test_failure_without_executed_copy_is_not_tied_to_a_cell(tmp_path):
    failure = ex._locate_failure("nb.ipynb", tmp_path / "absent.ipynb", KeyError("kernel"))
    assert failure.cell_index is None
    assert failure.ename == "KeyError"
    assert "before any cell ran" in failure.describe()


# ---------------------------------------------------------------------------------------------
# real execution (starts kernels)


@pytest.fixture
def notebook_dir(tmp_path):
    d = tmp_path / "nbs"
    write_notebook(
        d / "01_ok.ipynb",
        [
            markdown("# OK"),
            parameters_cell("x = 1\nlabel = 'default'"),
            code("print(label, x * 2)"),
        ],
    )
    write_notebook(
        d / "02_fails.ipynb",
        [
            parameters_cell("x = 1"),
            markdown("Some prose."),
            code("y = x + 1"),
            code("# look up a missing key\ntable = {}\ntable['ece']"),
            code("print('never reached')"),
        ],
    )
    write_notebook(d / "03_also_ok.ipynb", [parameters_cell("x = 1"), code("print('third', x)")])
    return d


@pytest.mark.slow
@pytest.mark.parametrize("jobs", [1, 2])
def test_execute_injects_parameters_and_reports_failures_in_order(notebook_dir, tmp_path, jobs):
    out = tmp_path / "executed"
    results = ex.execute_notebooks(notebook_dir, out, {"x": 21, "label": "injected"}, jobs=jobs)

    assert [r.name for r in results] == ["01_ok", "02_fails", "03_also_ok"]
    assert [r.ok for r in results] == [True, False, True]
    assert all(r.output == out / r.source.name and r.output.is_file() for r in results)
    assert "injected 42" in _outputs_text(out / "01_ok.ipynb")
    assert "third 21" in _outputs_text(out / "03_also_ok.ipynb")

    failure = results[1].failure
    assert failure == ex.NotebookFailure(
        notebook="02_fails.ipynb",
        cell_index=3,
        cell_first_line="# look up a missing key",
        ename="KeyError",
        evalue="'ece'",
    )
    # the partial copy is kept: the cells before the failure ran, the one after did not
    text = _outputs_text(out / "02_fails.ipynb")
    assert "KeyError" in text and "never reached" not in text


@pytest.mark.slow
def test_raise_for_failures_names_notebook_cell_and_error(notebook_dir, tmp_path):
    results = ex.execute_notebooks(notebook_dir, tmp_path / "executed", {"x": 3})
    with pytest.raises(ex.NotebookExecutionError) as info:
        ex.raise_for_failures(results)
    err = info.value
    assert err.code == "report.notebook_failed"
    assert err.path == notebook_dir / "02_fails.ipynb"
    assert err.location == "cell 3"
    text = str(err)
    assert "1 of 3 notebook(s) failed" in text
    assert "02_fails.ipynb: cell 3 (`# look up a missing key`): KeyError: 'ece'" in text
    assert str(tmp_path / "executed" / "02_fails.ipynb") in err.fix
    assert err.details["failures"][0]["cell_index"] == 3


def test_one_error_of_several_notebooks_is_said_once_and_kept_short(tmp_path):
    """Five notebooks failing on one 2.4 KB store error used to repeat it five times (issue 29)."""
    long = "the score store has no runs of experiment 'main' " + "x" * 2400
    results = [
        ex.NotebookResult(
            tmp_path / f"0{i}_nb.ipynb",
            tmp_path / "out" / f"0{i}_nb.ipynb",
            ex.NotebookFailure(f"0{i}_nb.ipynb", 4, "roles = dict()", "ScoreStoreError", long),
            1.0,
        )
        for i in range(1, 6)
    ]
    results.append(
        ex.NotebookResult(
            tmp_path / "07_nb.ipynb",
            tmp_path / "out" / "07_nb.ipynb",
            ex.NotebookFailure("07_nb.ipynb", 2, "x = 1", "KeyError", "'a'"),
            1.0,
        )
    )
    with pytest.raises(ex.NotebookExecutionError) as info:
        ex.raise_for_failures(results)
    message = info.value.message
    assert message.startswith("6 of 6 notebook(s) failed: 01_nb.ipynb: cell 4 (`roles = dict()`), ")
    assert message.count("ScoreStoreError") == 1 and message.count("01_nb.ipynb") == 1
    assert message.endswith("; 07_nb.ipynb: cell 2 (`x = 1`): KeyError: 'a'")
    assert len(message) < 700
    assert info.value.details["failures"][0]["evalue"] == long  # the whole message is kept


@pytest.mark.slow
def test_raise_for_failures_is_silent_when_all_succeed(notebook_dir, tmp_path):
    results = ex.execute_notebooks([notebook_dir / "01_ok.ipynb"], tmp_path / "o")
    assert results[0].ok
    ex.raise_for_failures(results)  # must not raise


@pytest.mark.slow
def test_invalid_notebook_is_a_failure_not_a_crash_and_stale_copy_is_removed(tmp_path):
    source = write_notebook(tmp_path / "nbs" / "01_x.ipynb", [code("x = 1")], kernelspec=None)
    out = tmp_path / "o"
    out.mkdir()
    (out / "01_x.ipynb").write_text("stale copy from an earlier run")
    [result] = ex.execute_notebooks([source], out)
    assert not result.ok
    assert result.failure.cell_index is None
    assert "kernelspec" in result.failure.evalue
    assert not (out / "01_x.ipynb").exists()


@pytest.mark.slow
def test_unknown_kernel_is_reported_before_any_cell(tmp_path):
    source = write_notebook(tmp_path / "01_k.ipynb", [parameters_cell("x = 1")])
    [result] = ex.execute_notebooks([source], tmp_path / "o", kernel_name="no_such_kernel_xyz")
    assert not result.ok
    assert result.failure.cell_index is None
    assert result.failure.ename == "NoSuchKernel"


@pytest.mark.slow
def test_cell_timeout_names_the_cell(tmp_path):
    source = write_notebook(
        tmp_path / "01_slow.ipynb",
        [parameters_cell("x = 1"), code("import time\ntime.sleep(60)")],
    )
    [result] = ex.execute_notebooks([source], tmp_path / "o", timeout=5)
    assert not result.ok
    assert result.failure.cell_index == 1
    assert result.failure.cell_first_line == "import time"


# ---------------------------------------------------------------------------------------------
# which parameters a notebook receives


def _nb(source: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[markdown("# T"), parameters_cell(source), code("x")])


@pytest.mark.parametrize(
    "source, declared",
    [
        ("x = 1\nlabel: str = 'a'\n# comment\n", {"x", "label"}),
        ("a, (b, c) = 1, (2, 3)\n[d] = [4]\ne = f = 5", {"a", "b", "c", "d", "e", "f"}),
        ("%matplotlib inline\n!echo hi\nseed = 0", {"seed"}),
        ("if True:\n    hidden = 1\nobj.attr = 2\nitems[0] = 3\nshown = 4", {"shown"}),
        ("", set()),
    ],
)
def test_declared_parameters_are_the_top_level_assignments(source, declared):
    assert ex.declared_parameters(_nb(source)) == declared


def test_declared_parameters_unknown_without_a_parseable_cell():
    assert ex.declared_parameters(_nb("x = = 1")) is None
    no_cell = nbformat.v4.new_notebook(cells=[code("x = 1")])
    assert ex.declared_parameters(no_cell) is None


def test_notebook_parameters_keep_only_declared_names():
    offered = {"x": 2, "label": "injected", "embedding_backend": "hashing"}
    assert ex.notebook_parameters(_nb("x = 1\nlabel = 'a'"), offered) == {
        "x": 2,
        "label": "injected",
    }
    assert ex.notebook_parameters(_nb("x = = 1"), offered) == offered  # unknown: pass everything
    assert ex.notebook_parameters(_nb("x = 1"), None) == {}


@pytest.mark.slow
def test_executed_notebook_gets_only_its_declared_parameters(tmp_path):
    source = write_notebook(
        tmp_path / "01_p.ipynb",
        [parameters_cell("x = 1"), code("print(x, 'label' in dir())")],
    )
    [result] = ex.execute_notebooks([source], tmp_path / "o", {"x": 5, "label": "not declared"})
    assert result.ok
    nb = nbformat.read(result.output, as_version=4)
    injected = [c for c in nb.cells if ex.INJECTED_TAG in c.metadata.get("tags", [])]
    assert (
        len(injected) == 1 and "label" not in injected[0].source and "x = 5" in injected[0].source
    )
    assert "5 False" in _outputs_text(result.output)


def test_cells_whose_requirements_are_unmet_are_left_out_with_a_note():
    cells = [markdown("# Page"), code("overview()"), markdown("## Scores"), code("scores()")]
    for cell in cells[2:]:
        cell.metadata["automd"] = {"requires": ["main", "llm"]}
    nb = nbformat.v4.new_notebook(cells=cells)
    kept, unmet = ex.without_unmet_cells(nb, {"main": False, "llm": False}, "*left out*")
    assert [c.source for c in kept.cells] == ["# Page", "overview()", "*left out*"]
    assert unmet == ["main", "llm"]
    assert len(nb.cells) == 4  # the source notebook is not changed
    same, none = ex.without_unmet_cells(nb, {"main": True, "llm": True}, "*left out*")
    assert same is nb and none == []


@pytest.mark.parametrize(("failures", "ok"), [(1, True), (2, True), (3, False)])
def test_a_kernel_that_died_before_its_first_reply_is_started_again(
    tmp_path, monkeypatch, failures, ok
):
    """A kernel that loses its TCP port to another process dies before any cell runs: the notebook
    is started again (at most three attempts in all); any other failure is reported at once."""
    nb = write_notebook(tmp_path / "n.ipynb", [parameters_cell("x = 1")])
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) <= failures:
            raise RuntimeError("Kernel died before replying to kernel_info")

    monkeypatch.setattr(papermill, "execute_notebook", flaky)
    result = ex.execute_notebook(nb, tmp_path / "out.ipynb")
    assert result.ok is ok
    assert len(calls) == min(failures + 1, 3)
    if not ok:
        assert "Kernel died before replying" in result.failure.evalue


def test_a_cell_error_is_not_retried(tmp_path, monkeypatch):
    nb = write_notebook(tmp_path / "n.ipynb", [parameters_cell("x = 1")])
    calls = []

    def failing(*args, **kwargs):
        calls.append(1)
        raise ValueError("boom")

    monkeypatch.setattr(papermill, "execute_notebook", failing)
    assert not ex.execute_notebook(nb, tmp_path / "out.ipynb").ok
    assert len(calls) == 1
