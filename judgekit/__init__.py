"""judgekit: decide whether an LLM judge can be trusted before any experiment relies on it."""

from judgekit.errors import JudgekitError, UntrustedJudgeError

__version__ = "0.1.0"

__all__ = ["JudgekitError", "UntrustedJudgeError", "__version__", "require_trusted"]


def __getattr__(name: str) -> object:
    # Lazy so that `import judgekit` stays cheap and free of circular imports.
    if name == "require_trusted":
        from judgekit.gate import require_trusted

        return require_trusted
    raise AttributeError(name)
