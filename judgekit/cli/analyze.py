"""CLI commands (placeholder: filled in by the issue that owns this group)."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
