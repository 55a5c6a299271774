"""Testing helpers: the fake LLM provider (:mod:`judgekit.testing.fakeserver`) and the synthetic
study generator (:mod:`judgekit.testing.study`).

``from judgekit.testing import FakeServer`` — imported lazily, so that
``python -m judgekit.testing.fakeserver`` runs the module once.
"""

from judgekit.core.lazy import lazy_exports

_LAZY = {
    "FakeRequest": "fakeserver",
    "FakeServer": "fakeserver",
    "Reply": "fakeserver",
    "label_reply": "fakeserver",
    "make_study": "study",
    "write_study": "study",
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
