"""nbval runs of the report notebooks: score the fixture before the first notebook cell runs.

``pytest --nbval tests/nbval`` re-executes the committed copies in this directory against the small
fixture and compares their outputs with the stored ones (numbers must match; ``sanitize.cfg`` masks
timestamps, memory addresses and absolute paths). With xdist, run them with ``--dist loadfile``
so that all cells of a notebook run in order on one worker.
"""

from __future__ import annotations

from nbval_params import score_fixture


def pytest_collection_finish(session):
    # Every process that will run notebook cells (each xdist worker, or the only process) makes
    # sure the fixture's score store exists and is current; scoring is incremental and the
    # processes take turns (nbval_params.score_fixture).
    if any(item.path.suffix == ".ipynb" for item in session.items):
        score_fixture()
