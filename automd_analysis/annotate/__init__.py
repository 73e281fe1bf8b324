"""Codebook answers from archived code (static analysis) and prediction forensics.

``automd annotate`` reads each run's archived Python files with :mod:`ast` - nothing is executed,
imported or unpickled - and writes ``annotations.json`` files in the archive format
(``docs/archive.md``) into a separate directory; ``docs/annotation.md`` documents every rule, the
forensics statistics and the measured agreement with ground truth.
"""
