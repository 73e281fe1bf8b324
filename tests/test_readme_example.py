"""The README's API example runs as written, on the demo tasks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
SECTION = "## Using the metric functions directly"


def readme_example() -> str:
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text[text.index(SECTION) :], re.S)
    assert blocks, "the README's API section has no python block"
    return blocks[0]


def test_the_example_loads_a_task_a_submission_and_computes_an_interval_and_a_calibration():
    code = readme_example()
    for name in ("get_task", "load_labels", "validate_submission", "bootstrap_weights",
                 "weights=W", "ece("):  # fmt: skip
        assert name in code, name


@pytest.mark.slow
def test_readme_example_runs_as_written(demo_root, monkeypatch, capsys):
    monkeypatch.setenv("AUTOMD_DATA", str(demo_root))
    exec(compile(readme_example(), str(README), "exec"), {"__name__": "readme"})
    out = capsys.readouterr().out
    match = re.fullmatch(
        r"AUROC (\d\.\d{3}) \(95% CI (\d\.\d{3}) to (\d\.\d{3})\), ECE (\d\.\d{3})\n", out
    )
    assert match, out
    point, low, high, _ = map(float, match.groups())
    assert low <= point <= high
