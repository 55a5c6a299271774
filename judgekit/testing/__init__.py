"""Testing helpers: the fake LLM provider (:mod:`judgekit.testing.fakeserver`)."""

from judgekit.testing.fakeserver import FakeRequest, FakeServer, Reply, label_reply

__all__ = ["FakeRequest", "FakeServer", "Reply", "label_reply"]
