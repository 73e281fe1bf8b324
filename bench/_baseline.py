"""The metric kernels of an earlier commit, importable next to today's (for same-run ratios).

``baseline_metrics(commit)`` extracts ``automd_analysis/metrics`` of ``commit`` with ``git archive``
into a temporary directory, renames the package (``automd_baseline_<commit>.metrics``, imports
rewritten) and imports it, so one benchmark process times both implementations on the same data.
"""

from __future__ import annotations

import importlib
import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The implementation before the weighted kernels (the reference of the speed ratios).
BASELINE_COMMIT = "2ca8809"


def package_name(commit: str = BASELINE_COMMIT) -> str:
    """The import name of the extracted package."""
    return f"automd_baseline_{commit}"


def extract(commit: str = BASELINE_COMMIT) -> Path:
    """Extract the renamed package into a new temporary directory; return that directory (to put
    on ``sys.path``)."""
    name = package_name(commit)
    data = subprocess.run(
        ["git", "archive", commit, "automd_analysis/metrics"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    target = Path(tempfile.mkdtemp(prefix="automd-baseline-")) / name
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            rel = Path(member.name).relative_to("automd_analysis")
            text = tar.extractfile(member).read().decode("utf-8")
            out = target / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text.replace("automd_analysis.metrics", f"{name}.metrics"))
    (target / "__init__.py").write_text("")
    return target.parent


def baseline_metrics(commit: str = BASELINE_COMMIT):
    """``automd_analysis.metrics`` as of ``commit`` (a module object)."""
    name = package_name(commit)
    if f"{name}.metrics" not in sys.modules:
        sys.path.insert(0, str(extract(commit)))
    return importlib.import_module(f"{name}.metrics")
