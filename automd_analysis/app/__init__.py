"""The application layer: the one place that wires scoring, masking, embeddings and notebooks.

- :mod:`.pipeline` - ``automd regenerate``: archive -> score store -> masking results ->
  embeddings -> notebooks -> HTML report;
- :mod:`.run_notebooks` - executing the report notebooks (papermill);
- :mod:`.stamps` - which notebooks are up to date, and how a re-run replaces its outputs;
- :mod:`.notebook` - a notebook's session (:func:`~.notebook.open_report`): its folders, the
  loaded score store, the masking-test results and the embedding cache;
- :mod:`.masking` - the sandboxed masking test, assembled once;
- :mod:`.scoring`, :mod:`.annotating`, :mod:`.importing`, :mod:`.task_data` - what the other
  commands of ``automd`` call.

The command line (:mod:`automd_analysis.cli`) only parses, calls this layer and prints;
:mod:`automd_analysis.report` only turns tables and figures into pages. Submodules are imported
by name (``from automd_analysis.app import pipeline``); nothing is imported eagerly here.
"""
