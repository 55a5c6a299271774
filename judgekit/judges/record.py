"""One answer in: parse it, count it in the judge's summary, and hand its call and rating to the
writer — for the job that was sent and for every follower (an item with the same text, answered
by the same call at no extra cost)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from judgekit.core.redact import redact
from judgekit.judges.base import Completion
from judgekit.judges.bounds import MAX_TOKEN_COUNT
from judgekit.judges.jobs import Job, JudgeRun
from judgekit.judges.prices import call_cost
from judgekit.judges.summary import JudgeSummary
from judgekit.judges.writer import judge_rating
from judgekit.store.calls import CallRow


@dataclass(slots=True)
class Answer:
    """What came back for one job: a completion, or the reason there is none (``error``)."""

    completion: Completion | None
    error: str | None = None
    latency: float = 0.0  #: seconds from the first attempt to the answer
    attempts: int = 1

    @classmethod
    def failed(cls, reason: str, latency: float = 0.0, attempts: int = 1) -> Answer:
        return cls(None, reason, latency, attempts)


def record(run: JudgeRun, job: Job, answer: Answer) -> None:
    """Write the call of ``job`` and the rating parsed from ``answer``, and the same answer for
    the job's followers; counts all of them in the summary and the progress sink."""
    shared, s = run.panel, run.summary
    items, rubric = shared.items, shared.rubric
    iid = items.ids[job.item]
    completion = answer.completion
    label: str | None = None
    rationale: str | None = None
    reason = answer.error
    if completion is not None and (bad := _bad_usage(completion)) is not None:
        completion, reason = None, bad  # a plugin judge's absurd usage: never stored, never summed
    if completion is not None:
        parsed = shared.parser.parse(completion.raw, quoted=items.quoted(job.item))
        status, label, rationale, reason = parsed.status, parsed.label, parsed.rationale, parsed.reason
        cost = call_cost(run.price, completion)
        tin, tout, tcached = completion.input_tokens, completion.output_tokens, completion.cached_tokens
        raw = completion.raw
        confidence = label_probability(raw, completion.tokens, label) if status == "ok" else None
    else:
        status, cost, tin, tout, tcached, raw = "error", 0.0, 0, 0, 0, None
        confidence = None
    s.called += status != "error"
    s.input_tokens += tin
    s.output_tokens += tout
    s.cached_tokens += tcached
    s.cost_usd += cost
    text = _count(s, status, rationale, reason)
    call = CallRow(
        key=job.key, judge_id=run.entry.id, spec=redact(run.entry.model), params=run.params,
        rubric=rubric.id, rubric_hash=rubric.hash, item_id=iid, item_hash=items.hashes[job.item],
        trial=job.trial, raw=raw, status=status, label=label, rationale=rationale,
        error=None if status == "ok" else reason, input_tokens=tin, output_tokens=tout,
        cached_tokens=tcached, cost_usd=cost, latency_s=answer.latency, attempts=answer.attempts,
        created_at=time.time(), confidence=confidence,
    )
    shared.writer.add(
        judge_rating(rubric, item_id=iid, rater_id=run.entry.id, trial=job.trial, status=status,
                     label=label, text=text, call_key=job.key),
        call,
    )
    if shared.progress is not None:
        shared.progress.advance(status, tin + tout, cost)
    for f in run.followers.pop(job.key, ()):
        # Same text as the item just answered: the same answer, no second call or cost.
        if completion is not None:
            p = shared.parser.parse(completion.raw, quoted=items.quoted(f.item))
            f_status, f_label = p.status, p.label
            f_why = p.rationale if p.status == "ok" else f"abstain: {p.reason}"
        else:
            f_status, f_label, f_why = "error", None, f"error: {reason}"
        setattr(s, f_status, getattr(s, f_status) + 1)
        s.called += f_status != "error"
        shared.writer.add(judge_rating(rubric, item_id=items.ids[f.item], rater_id=run.entry.id,
                                       trial=f.trial, status=f_status, label=f_label, text=f_why,
                                       call_key=job.key))
        if shared.progress is not None:
            shared.progress.advance(f_status, 0, 0.0)


def _bad_usage(c: Completion) -> str | None:
    """Why the usage of ``c`` cannot be stored (not a whole number from 0 to
    :data:`~judgekit.judges.bounds.MAX_TOKEN_COUNT`), or None; a judge that parses its provider's
    body with :func:`~judgekit.judges.bounds.token_count` never gets here."""
    for name in ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens"):
        value = getattr(c, name)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_TOKEN_COUNT:
            shown = repr(value)
            return f"malformed usage: {name} = {shown[:40]} is not a token count"
    return None


def _count(s: JudgeSummary, status: str, rationale: str | None, reason: str | None) -> str | None:
    """Count one answer's status (and its reason) in the summary; returns the rating's text."""
    if status == "ok":
        s.ok += 1
        return rationale
    if status == "abstain":
        s.abstain += 1
        s.abstentions[_short(reason)] += 1
        return f"abstain: {reason}"
    s.error += 1
    s.errors[_short(reason)] += 1
    return f"error: {reason}"


def _short(reason: str | None) -> str:
    text = reason or "unknown"
    return text if len(text) <= 120 else text[:119] + "…"


__all__ = [
    "Answer", "label_probability", "record",
]


# The probability of a judge's label from the token log-probabilities of its answer.
#
# A judge answers with text (JSON ``{"rationale": ..., "label": "full_refusal"}`` or the label
# alone); the provider gives each generated token's log-probability. The label's probability is
# the product of the probabilities of the tokens that spell it::
#
#     p(label) = exp( sum_{t overlapping the label's characters} logprob_t )
#
# where the label is found in the answer as the JSON string ``"<label>"`` (its first occurrence),
# else as the bare text ``<label>`` (first occurrence). This is the probability of the label given
# the tokens before it (the rationale, when it comes first), the quantity the selective-judging
# paper uses as a judge's confidence (Jung, Brahman & Choi, ICLR 2025, Sec. 3.2, ``math.exp`` of
# the answer token's log-probability). None when the tokens do not spell the answer or the label
# is not in it (nothing is guessed).

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


