"""judgekit: decide whether an LLM judge can be trusted before any experiment relies on it.

``judgekit.agree(store, rubric)`` (the agreement report), ``judgekit.gate(store, policy)`` (the
trust gate: ``judgekit.gate`` is the package and, called, :func:`judgekit.gate.api.gate`) and
``judgekit.require_trusted(verdict, judge=..., rubric=...)`` (the guard an experiment calls).
"""

from judgekit.core.lazy import lazy_exports
from judgekit.errors import JudgekitError, UntrustedJudgeError
from judgekit.version import __version__

# Lazy so that `import judgekit` stays cheap (the gate imports pandas and the statistics);
# judgekit.gate.run takes __version__ from judgekit.version, not from this package, so no cycle.
_LAZY = {"agree": "judgekit.gate.api", "require_trusted": "judgekit.verdict.trust"}
__all__ = ["JudgekitError", "UntrustedJudgeError", "__version__", "agree", "gate", "require_trusted"]
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
