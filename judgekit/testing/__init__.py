"""Testing helpers: the fake LLM provider (:mod:`judgekit.testing.fakeserver`).

``from judgekit.testing import FakeServer`` — imported lazily, so that
``python -m judgekit.testing.fakeserver`` runs the module once.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FakeRequest", "FakeServer", "Reply", "label_reply"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from judgekit.testing import fakeserver

        return getattr(fakeserver, name)
    from judgekit.core.lazy import submodule

    return submodule(__name__, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
