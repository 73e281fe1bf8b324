"""The scripted-agent harness that builds the demo archive (docs/demo_archive.md).

Modules, in the order data flows through them:

- :mod:`.taskdata` - the public files of a task and the agent's summary of them;
- :mod:`.configs` - a version's configuration, change types and codebook answers;
- :mod:`.menus` - proposal menus (the simulated LLMs) and drafts;
- :mod:`.models` - the model zoo, copied verbatim into every generated script;
- :mod:`.render` - config -> standalone ``train.py`` with tagged evidence lines;
- :mod:`.execute`, :mod:`.lab` - run a script (memoised), record what it printed;
- :mod:`.agents` - the four search policies; :mod:`.clock`, :mod:`.tokens` - simulated time/tokens;
- :mod:`.annotate`, :mod:`.writer`, :mod:`.baseline_runs` - the run directories;
- :mod:`.build` - the whole archive; :mod:`.rerun` - re-fit a run on another test file;
- :mod:`.toy` - tiny synthetic tasks for smoke tests.

``build_archive`` and ``rerun_submission`` are importable from here (loaded lazily: they pull in
scikit-learn and lifelines).
"""

from __future__ import annotations

__all__ = ["build_archive", "plan", "rerun_submission"]


def __getattr__(name: str):
    if name == "rerun_submission":
        from automd_demo.harness.rerun import rerun_submission

        return rerun_submission
    if name in ("build_archive", "plan"):
        from automd_demo.harness import build

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
