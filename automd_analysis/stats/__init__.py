"""The statistics layer: one resampler, one interval rule, one p-value rule, one multiplicity rule.

- :mod:`~automd_analysis.stats.resample` - the draws behind every interval and test (validity,
  run-to-run variation and test patients, paired across agents);
- :mod:`~automd_analysis.stats.rules` - the paper's aggregation rules, applied to every draw;
- :mod:`~automd_analysis.stats.intervals` - value, interval, p-value and best marks of a draw
  distribution;
- :mod:`~automd_analysis.stats.multiplicity` - Holm's adjustment of a table's p-values;
- :mod:`~automd_analysis.stats.paired` - the sign-flip test across tasks;
- :mod:`~automd_analysis.stats.correlation` - correlations over runs within agent x task cells;
- :mod:`~automd_analysis.stats.ranks` - mean ranks and their intervals;
- :mod:`~automd_analysis.stats.wording` - how a result is said.

``docs/statistics.md`` explains each and gives the simulation that measures their coverage and
error rates (``bench/bench_error_rates.py``).
"""
