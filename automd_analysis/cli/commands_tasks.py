"""``automd tasks`` and ``automd validate`` (owned by the tasks/submissions work)."""

from __future__ import annotations
