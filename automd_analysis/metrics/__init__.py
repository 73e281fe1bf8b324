"""Pure metric functions on arrays (no I/O)."""
