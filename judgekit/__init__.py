"""judgekit: decide whether an LLM judge can be trusted before any experiment relies on it."""

from judgekit.errors import JudgekitError, UntrustedJudgeError
from judgekit.version import __version__

__all__ = ["JudgekitError", "UntrustedJudgeError", "__version__", "agree", "gate", "require_trusted"]


def __getattr__(name: str) -> object:
    # Lazy so that `import judgekit` stays cheap (the gate imports pandas and the statistics);
    # judgekit.gate.run takes __version__ from judgekit.version, not from this package, so no cycle.
    if name == "require_trusted":
        from judgekit.verdict.trust import require_trusted

        return require_trusted
    if name == "agree":
        # judgekit.agree(store, "refusal"); judgekit.gate(store, policy) is the package
        # judgekit.gate itself, callable (judgekit/gate/__init__.py)
        from judgekit.gate.api import agree

        return agree
    from judgekit.core.lazy import submodule

    return submodule(__name__, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
