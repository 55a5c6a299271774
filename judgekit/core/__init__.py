"""Foundations every layer uses: lazy exports, hashing, YAML config models, the safe console,
values as written in a cell, and atomic file writes. Imports nothing of judgekit but errors."""
