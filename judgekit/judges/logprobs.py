"""The probability of a judge's label from the token log-probabilities of its answer.

A judge answers with text (JSON ``{"rationale": ..., "label": "full_refusal"}`` or the label
alone); the provider gives each generated token's log-probability. The label's probability is
the product of the probabilities of the tokens that spell it::

    p(label) = exp( sum_{t overlapping the label's characters} logprob_t )

where the label is found in the answer as the JSON string ``"<label>"`` (its first occurrence),
else as the bare text ``<label>`` (first occurrence). This is the probability of the label given
the tokens before it (the rationale, when it comes first), the quantity the selective-judging
paper uses as a judge's confidence (Jung, Brahman & Choi, ICLR 2025, Sec. 3.2, ``math.exp`` of
the answer token's log-probability). None when the tokens do not spell the answer or the label
is not in it (nothing is guessed).
"""

from __future__ import annotations

import math


def label_probability(raw: str | None, tokens: list[tuple[str, float]] | None, label: str | None) -> float | None:
    """``p(label)`` as in the module docstring, or None."""
    if raw is None or not tokens or not label:
        return None
    if "".join(t for t, _ in tokens) != raw:
        return None  # the tokens are not this answer: no position can be trusted
    quoted = raw.find(f'"{label}"')
    start = quoted + 1 if quoted >= 0 else raw.find(label)
    if start < 0:
        return None
    end = start + len(label)
    total, pos = 0.0, 0
    for text, logprob in tokens:
        lo, hi = pos, pos + len(text)
        pos = hi
        if hi > start and lo < end:
            total += logprob
    return math.exp(total)


__all__ = ["label_probability"]
