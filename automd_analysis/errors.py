"""Structured errors shared by every module.

Every error a user can trigger names *what* is wrong, *where* (file, row, field) and *how to fix it*.
The CLI turns :class:`AutomdError` into a one-paragraph message and a non-zero exit code instead of a
traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class AutomdError(Exception):
    """Base class of all expected (user-facing) errors.

    Parameters
    ----------
    message : str
        What is wrong.
    path : str or Path, optional
        The file (or directory) concerned.
    location : str, optional
        Where inside the file: a row number, a field name (``"submission.id_columns"``), a cell.
    fix : str, optional
        What the user can do about it.
    code : str, optional
        A stable machine-readable code (``"manifest.invalid"``, ``"checksum.mismatch"``, ...).
    """

    message: str
    path: str | Path | None = None
    location: str | None = None
    fix: str | None = None
    code: str = "error"
    details: dict = field(default_factory=dict)

    def __str__(self) -> str:
        parts = [self.message]
        if self.path is not None:
            where = str(self.path)
            if self.location:
                where += f" ({self.location})"
            parts.append(f"in {where}")
        elif self.location:
            parts.append(f"at {self.location}")
        text = " ".join(parts)
        if self.fix:
            text += f". Fix: {self.fix}"
        return text

    def to_dict(self) -> dict:
        """Plain-data form, for ``--json`` output and score-store error columns."""
        return {
            "code": self.code,
            "message": self.message,
            "path": None if self.path is None else str(self.path),
            "location": self.location,
            "fix": self.fix,
            **({"details": self.details} if self.details else {}),
        }


class ManifestError(AutomdError):
    """A task manifest is missing, unreadable or does not match the schema."""


class DataError(AutomdError):
    """Task data is missing, unreadable or fails its checksum."""


class ArchiveError(AutomdError):
    """A runs archive (or one of its files) is malformed or unsafe."""


class ScoreStoreError(AutomdError):
    """The score store is missing, stale or malformed."""


class MaskingError(AutomdError):
    """Bad input to the masking test (wrong task kind, missing columns, mismatched rows, ...)."""


class Interrupted(AutomdError):
    """The user stopped a command (Ctrl-C); the message says what was kept. Exit code 130."""
