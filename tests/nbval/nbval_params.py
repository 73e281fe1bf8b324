"""Where the nbval copies of the report notebooks get their data: the small committed fixture.

Shared by ``conftest.py`` (scores the fixture before nbval runs the notebooks), ``update.py``
(regenerates the executed copies) and ``tests/test_nbval_sync.py``. Paths are relative to the
repository root, which is how the notebooks resolve them (``automd_analysis.report.notebook``), so
the committed copies hold no machine-specific path.
"""

from __future__ import annotations

import fcntl
from contextlib import contextmanager
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURE = "tests/fixtures/small"
#: Score store and report directory of the nbval runs (git-ignored ``build/``).
SCORES_DIR = "build/nbval/scores"
OUTPUT_DIR = "build/nbval/report"
#: ``automd annotate`` output for the fixture: scored with ``--annotations`` so that notebook 02
#: compares it with the fixture's own answers (which still win).
ANNOTATIONS_DIR = "build/nbval/annotations"

#: Embedding cache of notebook 07's exploration metrics (git-ignored ``build/``).
EMBEDDING_CACHE = "build/nbval/embeddings"

#: The parameters offered to every executed copy (``automd regenerate`` offers the same names);
#: each notebook receives those its ``parameters`` cell declares
#: (``automd_analysis.app.run_notebooks.notebook_parameters``). Notebook 07's embedding backend is
#: pinned to the deterministic hashing fallback: CI does not install the ``embeddings`` extra, a
#: development machine may, and the stored outputs must not depend on which. Its masking results
#: are the fixture's synthetic ``masking.csv`` (the fixture's runs cannot be re-run).
PARAMETERS: dict[str, object] = {
    "archive": f"{FIXTURE}/archive",
    "scores_dir": SCORES_DIR,
    "data_root": f"{FIXTURE}/data",
    "manifests_dir": f"{FIXTURE}/manifests",
    "output_dir": OUTPUT_DIR,
    "main_experiment": "main",
    "objectives_experiment": "objectives",
    "llm_experiment": "llm",
    "seed": 0,
    "embedding_backend": "hashing",
    "embedding_cache": EMBEDDING_CACHE,
    "masking_results": f"{FIXTURE}/masking.csv",
    "min_cell": None,
    "n_bins": 10,
}

#: Directory of the executed copies and of the source notebooks.
COPIES = REPO_ROOT / "tests" / "nbval"
SOURCES = REPO_ROOT / "notebooks"


def parameters_for(notebook: Path) -> dict[str, object]:
    """The parameters injected into one notebook: :data:`PARAMETERS` it declares."""
    import nbformat

    from automd_analysis.app.run_notebooks import notebook_parameters

    return notebook_parameters(nbformat.read(notebook, as_version=4), PARAMETERS)


@contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def fixture_workspace():
    """The fixture's folders, resolved by the workspace rules from the repository root."""
    from automd_analysis.archive.workspace import open_workspace

    return open_workspace(
        f"{FIXTURE}/archive",
        data=PARAMETERS["data_root"],
        manifests=PARAMETERS["manifests_dir"],
        scores=SCORES_DIR,
        annotations=ANNOTATIONS_DIR,
        out=OUTPUT_DIR,
        root=REPO_ROOT,
    )


def score_fixture(jobs: int = 1):
    """Score the fixture archive into :data:`SCORES_DIR` (incremental; safe to call from several
    processes at once: they take turns, and the store files are replaced atomically)."""
    from automd_analysis.annotate.runs import annotate_archive
    from automd_analysis.archive import open_archive
    from automd_analysis.scoring import score_archive
    from automd_analysis.tasks import load_manifests

    ws = fixture_workspace()
    archive = open_archive(ws.archive)
    with _locked(ws.scores.parent / ".score.lock"):
        annotate_archive(
            archive,
            ws.annotations,
            manifests=load_manifests(ws.manifests),
            data_root=ws.data,
            jobs=1,
        )
        return score_archive(
            archive,
            ws.scores,
            data=ws.data,
            manifests=ws.manifests,
            jobs=jobs,
            annotations=ws.annotations,
        )
