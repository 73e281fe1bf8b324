"""Reason codes of invalid submissions and the paper's categories of them (App. E).

Every invalid verdict of :func:`automd_analysis.submissions.validate_submission` carries one of the
stable codes of :data:`REASON_CODES`; the score store keeps the first failing one per submission
(``reason_code``). :func:`paper_category` maps a code to the paper's invalid-submission
breakdown. Plain data shared by the validator and the analyses, which read the codes from the
store.
"""

from __future__ import annotations

__all__ = ["PAPER_CATEGORIES", "REASON_CODES", "paper_category"]

#: Stable reason codes (the machine-readable part of every invalid verdict) and their meaning.
REASON_CODES: dict[str, str] = {
    "file.missing": "the submission file does not exist",
    "file.not_regular": "the path is a directory, device, FIFO or other non-regular file",
    "file.outside_root": "the path resolves (through symlinks) outside the allowed directory",
    "file.unreadable": "the file cannot be opened or read",
    "file.empty": "the file is empty or has no header row",
    "file.too_large": "the file exceeds the task's size limit",
    "file.binary": "the file contains NUL bytes: it is binary (or UTF-16), not a UTF-8 CSV",
    "file.encoding": "the file is not valid UTF-8 text",
    "csv.malformed": "the CSV cannot be parsed (bad quoting, oversized field)",
    "csv.ragged": "a row has a different number of fields than the header",
    "columns.duplicate": "a column name appears more than once",
    "columns.missing": "a required column is absent",
    "columns.extra": "a column that the task does not declare is present",
    "columns.grid_missing": "a time-grid point has no survival column",
    "columns.grid_extra": "a survival column header is not a time-grid point",
    "columns.grid_duplicate": "two survival column headers denote the same grid time",
    "ids.missing": "test-set identifiers are absent",
    "ids.extra": "identifiers that are not in the test set are present",
    "ids.duplicate": "an identifier appears in more than one row",
    "rows.missing": "test patient-hours (patient id + hour) are absent",
    "rows.extra": "patient-hours that are not in the test set are present",
    "rows.duplicate": "a patient-hour appears in more than one row",
    "values.missing": "a prediction cell is empty or NA",
    "values.non_numeric": "a prediction cell is not a number",
    "values.non_finite": "a prediction cell is NaN or infinite",
    "probability.out_of_range": "a probability is outside [0, 1]",
    "label.not_binary": "a predicted label is not 0 or 1",
    "survival.out_of_range": "a survival probability is outside [0, 1]",
    "survival.increasing": "a survival curve increases along the time grid",
}


#: Category of each reason code for the invalid-submission table. ``{unit}`` is filled from the
#: task's unit (patient / encounter / stay); ``columns.*`` and ``values.*`` depend on the task kind.
_CATEGORY_BY_PREFIX: dict[str, str] = {
    "file.": "missing or unreadable file",
    "csv.": "missing or unreadable file",
    "rows.": "incorrect patient-hour rows",
    "ids.": "incorrect {unit} identifiers",
    "probability.": "invalid probabilities",
    "label.": "invalid binary predictions",
    "survival.": "invalid survival curves",
}

#: Every category :func:`paper_category` can return (with ``{unit}`` unfilled), in table order.
PAPER_CATEGORIES: tuple[str, ...] = (
    "missing or unreadable file",
    "malformed survival columns",
    "incorrect columns",
    "incorrect patient-hour rows",
    "incorrect {unit} identifiers",
    "invalid probabilities",
    "invalid binary predictions",
    "invalid survival curves",
    "other",
)


def paper_category(code: str, kind: str | None = None, unit: str | None = None) -> str:
    """Map a reason code to the paper's invalid-submission category (App. E).

    The paper reports e.g. "five had malformed survival columns, five had incorrect patient-hour
    rows, one had incorrect patient identifiers, and one had incorrect encounter identifiers".

    Parameters
    ----------
    code : str
        A reason code (:data:`REASON_CODES`), typically a run's first failing check.
    kind : {"survival", "classification", "sequential"}, optional
        Task kind. Column problems of a survival task are "malformed survival columns"; value
        problems (missing / non-numeric / non-finite cells) of a survival task are "invalid
        survival curves", of other tasks "invalid probabilities".
    unit : str, optional
        The task's unit (manifest ``sizes.unit``: ``patients``, ``encounters``, ``stays``);
        identifier problems become "incorrect <unit> identifiers" (default "patient").

    Returns
    -------
    str
        One of :data:`PAPER_CATEGORIES` (``{unit}`` filled in); ``"other"`` for unknown codes.
    """
    noun = (unit or "patients").strip().lower()
    noun = {"patient-hours": "patient"}.get(noun, noun.removesuffix("s")) or "patient"
    if code.startswith("columns."):
        return (
            "malformed survival columns"
            if kind == "survival" or code.startswith("columns.grid_")
            else "incorrect columns"
        )
    if code.startswith("values."):
        return "invalid survival curves" if kind == "survival" else "invalid probabilities"
    for prefix, category in _CATEGORY_BY_PREFIX.items():
        if code.startswith(prefix):
            return category.format(unit=noun)
    return "other"
