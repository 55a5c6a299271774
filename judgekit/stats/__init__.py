"""Generic interval estimators and tests, pure functions over arrays (no I/O, no store)."""
