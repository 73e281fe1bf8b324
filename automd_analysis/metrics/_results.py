"""What the metrics' result dataclasses share."""

from __future__ import annotations

__all__ = ["ScalarFields"]


class ScalarFields:
    """Base of a result dataclass whose fields are Python scalars (:meth:`as_dict`)."""

    def as_dict(self) -> dict:
        """Fields as a dict of Python scalars."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}
