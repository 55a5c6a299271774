"""A short ``--token`` is redacted where it stands as a word of its own, never inside other words
(``--token t`` must not turn every "t" of a message into the marker)."""

from __future__ import annotations

from judgekit.annotation.labelstudio.redact import REDACTED, Redactor


def test_a_one_letter_token_leaves_other_words_whole() -> None:
    r = Redactor.for_label_studio(None, "t")
    message = "cannot reach the server: connection refused (Authorization: Token t)"
    assert r.text(message) == f"cannot reach the server: connection refused (Authorization: Token {REDACTED})"


def test_a_short_token_inside_a_word_stays_and_alone_is_redacted() -> None:
    r = Redactor.for_label_studio(None, "ab12")
    assert r.text("slab123 ab12 'ab12' x=ab12") == f"slab123 {REDACTED} '{REDACTED}' x={REDACTED}"


def test_a_long_token_is_redacted_anywhere() -> None:
    token = "s3cr3t-token-value"
    r = Redactor.for_label_studio(None, token)
    assert r.text(f"echo:{token}tail") == f"echo:{REDACTED}tail"
