"""Command module (registers on automd_analysis.cli._apps)."""

from __future__ import annotations
