"""What Inspect AI loads through judgekit's ``inspect_ai`` entry point: importing the scorer
registers it as ``judgekit/judge``."""

from judgekit.integrations.inspect_scorer import judge

__all__ = ["judge"]
