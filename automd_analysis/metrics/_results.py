"""What the metrics' result dataclasses share."""

from __future__ import annotations

from dataclasses import fields

import numpy as np

__all__ = ["ArrayColumns", "ScalarFields"]

#: A field's annotation that makes it a column: a string under postponed evaluation, else the type.
_ARRAY = ("np.ndarray", np.ndarray)


class ScalarFields:
    """Base of a result dataclass whose fields are Python scalars (:meth:`as_dict`)."""

    def as_dict(self) -> dict:
        """Fields as a dict of Python scalars."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


class ArrayColumns:
    """Base of a result dataclass whose ``np.ndarray`` fields are table columns (:meth:`as_dict`)."""

    def as_dict(self) -> dict[str, np.ndarray]:
        """Columns as a dict of arrays (e.g. for ``pandas.DataFrame``)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.type in _ARRAY}
