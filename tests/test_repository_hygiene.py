"""The repository stands on its own: nothing in it points at files a user does not have (the
project's internal design notes) or at one machine's directories."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Internal notes outside the repository, and absolute paths of the machine it was developed on.
OUTSIDE = re.compile(r"\bSPEC (§|section|\d)|metrics_reference|\.\./shared|/work/")
TEXT = {".py", ".md", ".ipynb", ".yml", ".yaml", ".toml", ".cfg", ".txt", ".json", ".html", ".j2"}


def _tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
        ).stdout.decode()
        files = [ROOT / name for name in out.split("\0") if name]
    except (OSError, subprocess.SubprocessError):  # not a git checkout (e.g. an sdist)
        skip = {".git", ".venv", "data", "reports", "scores", "build", "runs_archive"}
        files = [p for p in ROOT.rglob("*") if not skip & set(p.relative_to(ROOT).parts)]
    keep = [p for p in files if p.is_file() and (p.suffix in TEXT or p.name == "Makefile")]
    return [p for p in keep if p != Path(__file__).resolve()]


def test_the_check_sees_code_docs_notebooks_and_tests():
    names = {p.relative_to(ROOT).as_posix() for p in _tracked_text_files()}
    assert {
        "README.md",
        "Makefile",
        "docs/tables.md",
        "automd_analysis/metrics/calibration.py",
    } <= names
    assert any(n.startswith("notebooks/") and n.endswith(".ipynb") for n in names)
    assert any(n.startswith("tests/") for n in names)


def test_nothing_points_outside_the_repository():
    offenders = []
    for path in _tracked_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if OUTSIDE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}")
    assert not offenders, "point at docs/ instead:\n" + "\n".join(offenders)
