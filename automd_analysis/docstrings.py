"""Shared docstring text for every layer: the :func:`fill_doc` decorator and the sources that
several modules cite.

A docstring line holding only ``{name}`` is filled by ``@fill_doc(name=TEXT)`` (see
:func:`automd_analysis.metrics._docstrings.fill_doc`; it is defined in the metrics layer, the
lowest, so that the metric modules use it too). The constants below are the literature references
cited by functions in more than one module, each as a numbered footnote ``.. [1]``, and input
descriptions that functions of several modules share.
"""

from __future__ import annotations

from automd_analysis.metrics import fill_doc

__all__ = [
    "AUSTIN_STEYERBERG_2014",
    "COHEN_1960",
    "COLE_2015",
    "EFRON_TIBSHIRANI_1993",
    "HOLM_1979",
    "PAIRWISE_INPUTS",
    "SYNTHETIC_TASKS",
    "VAN_CALSTER_2019",
    "VICKERS_ELKIN_2006",
    "docs_reference",
    "fill_doc",
]

AUSTIN_STEYERBERG_2014 = """
.. [1] Austin PC, Steyerberg EW (2014). Graphical assessment of internal and external calibration
   of logistic regression models by using loess smoothers. Statistics in Medicine 33:517-535.
"""

COHEN_1960 = """
.. [1] Cohen J (1960). A coefficient of agreement for nominal scales. Educational and
   Psychological Measurement 20(1):37-46.
"""

COLE_2015 = """
.. [1] Cole TJ (2015). Too many digits: the presentation of numerical data. Arch Dis Child
   100(7):608-609.
"""

EFRON_TIBSHIRANI_1993 = """
.. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap, ch. 13 (percentile
   intervals). Chapman & Hall.
"""

HOLM_1979 = """
.. [1] Holm S (1979). A simple sequentially rejective multiple test procedure. Scandinavian
   Journal of Statistics 6(2), 65-70.
"""

VAN_CALSTER_2019 = """
.. [1] Van Calster B et al. (2019). Calibration: the Achilles heel of predictive analytics.
   BMC Medicine 17:230.
"""

VICKERS_ELKIN_2006 = """
.. [1] Vickers AJ, Elkin EB (2006). Decision curve analysis: a novel method for evaluating
   prediction models. Medical Decision Making 26:565-574.
"""

#: The inputs of the report's views of the paired comparisons (findings and matrix figure).
PAIRWISE_INPUTS = """
pairwise : DataFrame
    :func:`~automd_analysis.analysis.uncertainty.pairwise_comparisons` (any measures).
measure : str, default "score"
    ``score`` or ``ece``.
alpha : float, default 0.05
"""

#: The ``synthetic`` input of the report's per-task figures.
SYNTHETIC_TASKS = """
synthetic : iterable of str
    Synthetic tasks.
"""


def docs_reference(page: str, section: str) -> str:
    """The References section of a function that a section of a project page explains."""
    return f"""
References
----------
docs/{page}, "{section}".
"""
