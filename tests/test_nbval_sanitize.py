"""tests/nbval/sanitize.cfg: timestamps, addresses and paths do not fail nbval; numbers do."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_output
from nbval.plugin import get_sanitize_patterns
from notebook_factory import code, write_notebook

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "tests" / "nbval" / "sanitize.cfg"
PATTERNS = get_sanitize_patterns(CONFIG.read_text())


def sanitize(text: str) -> str:
    for regex, replacement in PATTERNS:
        text = re.sub(regex, replacement, text)
    return text


def test_config_is_read_by_nbval():
    assert len(PATTERNS) == 6


def test_embedded_figure_pixels_are_masked_but_not_their_caption():
    a = '<img src="data:image/png;base64,iVBORw0KGgo+/AAA=" width="900"> n = 12'
    b = '<img src="data:image/png;base64,iVBORw0KGgoBBBB/9==" width="900"> n = 12'
    assert sanitize(a) == sanitize(b)
    assert sanitize(a.replace('width="900"', 'width="800"')) != sanitize(b)
    assert sanitize(a.replace("n = 12", "n = 13")) != sanitize(b)


def test_volatile_parts_are_masked():
    a = (
        "at 2026-01-02T03:04:05.123456Z obj <x at 0x7f3a2b1c0d10> "
        "/home/ci/checkout/build/nbval/report/tables/t.csv "
        "/srv/venv/lib/python3.11/site-packages/pandas/core/frame.py /tmp/pytest-0/x/y"
    )
    b = (
        "at 2031-12-31 23:59:59+01:00 obj <x at 0x55d0aa01b2c0> "
        "/Users/me/src/automd/build/nbval/report/tables/t.csv "
        "/opt/conda/lib/python3.12/site-packages/pandas/core/frame.py /tmp/abc/def"
    )
    assert sanitize(a) == sanitize(b)


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=64), st.integers(0, 8))
def test_numbers_are_never_masked(value, decimals):
    text = f"| codex | {value:.{decimals}f} | 0.517 ± 0.012 | {int(abs(value)) % 10**9} |"
    assert sanitize(text) == text


def _stored_notebook(path: Path, stored_text: str) -> Path:
    """A notebook whose one cell prints a line with a timestamp, an address, a path and a number;
    the stored output is ``stored_text`` (what a previous run printed)."""
    cell = code(
        "import datetime, os\n"
        "print(f'run at {datetime.datetime.now().isoformat()} object 0x{id(os):012x} '\n"
        "      f'file {os.getcwd()}/build/nbval/report/tables/t.csv score 0.517346')"
    )
    cell.execution_count = 1
    cell.outputs = [new_output("stream", name="stdout", text=stored_text)]
    return write_notebook(path, [cell])


def _nbval(notebook: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbval",
            str(notebook),
            "--nbval-sanitize-with",
            str(CONFIG),
            "-p",
            "no:cacheprovider",
            "-q",
        ],
        capture_output=True,
        text=True,
        cwd=notebook.parent,
    )


@pytest.mark.slow
@pytest.mark.parametrize(("stored_number", "passes"), [("0.517346", True), ("0.517347", False)])
def test_nbval_ignores_volatile_parts_but_not_numbers(tmp_path, stored_number, passes):
    stored = (
        "run at 2020-01-01T00:00:00.000001 object 0x7f0000000000 file "
        f"/elsewhere/checkout/build/nbval/report/tables/t.csv score {stored_number}\n"
    )
    result = _nbval(_stored_notebook(tmp_path / "nb.ipynb", stored))
    assert (result.returncode == 0) is passes, result.stdout[-3000:]
    if not passes:
        assert "0.517347" in result.stdout
