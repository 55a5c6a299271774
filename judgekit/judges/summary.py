"""What a panel run did: per-judge counts, tokens and cost, and the lines the CLI prints.

:class:`ProgressSink` receives the live events of a run (the CLI's rich bar,
:class:`judgekit.judges.progress.RichProgress`, implements it); :class:`PanelSummary` is what
:func:`judgekit.judges.panel.run_panel` returns, :class:`ReparseSummary` what a re-parse returns.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields
from typing import Any, Protocol


class ProgressSink(Protocol):
    """Receives progress events (the CLI's rich bar implements it)."""

    def start(self, total: int, cached: int) -> None: ...

    def advance(self, status: str, tokens: int, cost: float) -> None: ...

    def stop(self) -> None: ...


@dataclass
class JudgeSummary:
    """What one judge did in one run."""

    id: str
    spec: str
    total: int = 0  #: item x trial pairs
    cached: int = 0  #: answered by an earlier run (no call)
    called: int = 0  #: answered in this run
    ok: int = 0
    abstain: int = 0
    error: int = 0
    not_attempted: int = 0  #: left out because the judge was stopped
    retired: int = 0  #: stale ratings removed (other parameters, item text or trial count)
    attempts: int = 0  #: requests sent, retries included
    rate_limited: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    stored_cost_usd: float = 0.0  #: all calls of this judge in the store, under this rubric
    errors: Counter[str] = field(default_factory=Counter)
    abstentions: Counter[str] = field(default_factory=Counter)
    stopped: str | None = None
    lowest_concurrency: float | None = None
    batches: int = 0  #: provider batches submitted in this run
    batch_waiting: int = 0  #: calls still waiting in provider batches (run again to collect)
    other_run: int = 0  #: answered meanwhile by another judgekit run on the store (no call here)
    left_to_other_run: int = 0  #: claimed by another judgekit run that is still answering them
    other_runs: list[str] = field(default_factory=list)  #: those runs ("pid 4242 on host")
    pending: int = 0  #: dry run: calls a run would make
    estimated_cost_usd: float = 0.0  #: dry run: with answers of typical length
    max_cost_usd: float = 0.0  #: dry run: if every answer used max_tokens


@dataclass
class PanelSummary:
    """What a run did, per judge; ``complete`` is False when a judge was stopped or interrupted."""

    rubric: str
    items: int
    judges: list[JudgeSummary]
    seconds: float = 0.0
    interrupted: bool = False
    aggregates: dict[str, int] = field(default_factory=dict)
    dry_run: bool = False

    @property
    def complete(self) -> bool:
        return not self.interrupted and all(j.stopped is None for j in self.judges)

    @property
    def calls(self) -> int:
        """Judge calls answered in this run (all judge kinds; see ``requests`` for HTTP)."""
        return sum(j.called for j in self.judges)

    @property
    def requests(self) -> int:
        return sum(j.attempts for j in self.judges)

    def totals(self) -> dict[str, Any]:
        keys = ("total", "cached", "called", "ok", "abstain", "error", "not_attempted", "attempts",
                "input_tokens", "output_tokens", "cached_tokens", "other_run", "left_to_other_run")
        out: dict[str, Any] = {k: sum(getattr(j, k) for j in self.judges) for k in keys}
        out["cost_usd"] = round(sum(j.cost_usd for j in self.judges), 6)
        return out

    def lines(self) -> list[str]:
        if self.dry_run:
            return self._dry_lines()
        t = self.totals()
        out = [
            f"Panel over {self.items:,} items under {self.rubric}: calls {t['called']:,} answered now, "
            f"{t['cached']:,} from cache"
            + (f", {t['other_run']:,} by another judgekit run" if t["other_run"] else "")
            + f"; ratings {t['abstain']:,} abstentions, {t['error']:,} errors; "
            f"{t['input_tokens'] + t['output_tokens']:,} tokens, ${t['cost_usd']:.4f} "
            f"in {self.seconds:.1f}s."
        ]
        for j in self.judges:
            extra = f", {j.not_attempted} not attempted" if j.not_attempted else ""
            out.append(
                f"  {j.id} [{j.spec}]: ratings {j.ok:,} ok, {j.abstain:,} abstain, {j.error:,} error{extra}; "
                f"calls {j.called:,} answered, {j.cached:,} cached, {j.attempts:,} HTTP requests; "
                f"{j.input_tokens:,}+{j.output_tokens:,} tokens ({j.cached_tokens:,} cached), "
                f"${j.cost_usd:.4f} now, ${j.stored_cost_usd:.4f} in total"
            )
            if j.retired:
                out.append(f"    {j.retired} earlier ratings retired to the history (made with other "
                           "parameters, for an older item text or a trial no longer asked for)")
            for reason, n in j.errors.most_common(5):
                out.append(f"    error x{n}: {reason}")
            for reason, n in j.abstentions.most_common(3):
                out.append(f"    abstain x{n}: {reason}")
            if j.rate_limited:
                low = f", concurrency lowered to {j.lowest_concurrency:g}" if j.lowest_concurrency else ""
                out.append(f"    rate limited {j.rate_limited} times{low}")
            if j.batches:
                out.append(f"    submitted {j.batches} provider batch{'es' if j.batches > 1 else ''}")
            if j.batch_waiting:
                out.append(f"    {j.batch_waiting} calls waiting in provider batches; run again "
                           "to collect them")
            if j.other_run:
                out.append(f"    {j.other_run} answered meanwhile by another judgekit run on the store "
                           "(not sent again)")
            if j.left_to_other_run:
                who = ", ".join(j.other_runs[:3]) + (" and others" if len(j.other_runs) > 3 else "")
                out.append(f"    {j.left_to_other_run} calls are being answered by another judgekit "
                           f"run ({who}); that run stores and counts them")
            if j.stopped:
                out.append(f"    STOPPED: {j.stopped}")
        for rater, n in self.aggregates.items():
            out.append(f"  {rater}: {n} derived ratings")
        if self.interrupted:
            out.append("Interrupted: everything answered so far is stored; run again to finish.")
        return out

    def _dry_lines(self) -> list[str]:
        pending = sum(j.pending for j in self.judges)
        est = sum(j.estimated_cost_usd for j in self.judges)
        top = sum(j.max_cost_usd for j in self.judges)
        out = [f"Dry run over {self.items} items under {self.rubric}: {pending} calls to make, "
               f"{sum(j.cached for j in self.judges)} answered already; about ${est:.4f} "
               f"(at most ${top:.4f} if every answer used max_tokens). Nothing was sent."]
        for j in self.judges:
            cost = (f"~{j.input_tokens:,} input tokens, about ${j.estimated_cost_usd:.4f} "
                    f"(at most ${j.max_cost_usd:.4f})" if j.max_cost_usd else "no price (free or unknown)")
            out.append(f"  {j.id} [{j.spec}]: {j.pending} to make, {j.cached} cached; {cost}")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "rubric": self.rubric,
            "items": self.items,
            "complete": self.complete,
            "seconds": round(self.seconds, 3),
            "totals": self.totals(),
            "judges": [
                {k: (dict(v) if isinstance(v, Counter) else v) for k, v in j.__dict__.items()}
                for j in self.judges
            ],
            "aggregates": self.aggregates,
        }


@dataclass
class ReparseSummary:
    """What a re-parse changed (no call is made)."""

    judges: dict[str, dict[str, int]]

    def lines(self) -> list[str]:
        out = ["Re-parsed stored completions with the current parser (no calls made)."]
        for jid, c in self.judges.items():
            out.append(f"  {jid}: {c['parsed']} completions, {c['changed']} changed "
                       f"({c['ok']} ok, {c['abstain']} abstain)")
        return out


def merge_summaries(parts: list[PanelSummary], labels: list[str], *, items: int) -> PanelSummary:
    """One summary of a panel run as sub-panels (``rubric_by`` / ``variables``): each judge's
    counts, tokens and costs added up over the parts; ``stored_cost_usd`` counted once per
    rubric (sub-panels under one rubric share its stored calls)."""
    judges: dict[str, JudgeSummary] = {}
    stored: dict[tuple[str, str], float] = {}
    for part in parts:
        for j in part.judges:
            stored[(j.id, part.rubric)] = j.stored_cost_usd
            acc = judges.get(j.id)
            if acc is None:
                judges[j.id] = acc = JudgeSummary(id=j.id, spec=j.spec)
            for f in fields(JudgeSummary):
                old, new = getattr(acc, f.name), getattr(j, f.name)
                if f.name in ("id", "spec", "stored_cost_usd"):
                    continue
                if f.name == "stopped":
                    setattr(acc, f.name, old or new)
                elif f.name == "lowest_concurrency":
                    lows = [v for v in (old, new) if v is not None]
                    setattr(acc, f.name, min(lows) if lows else None)
                elif isinstance(old, Counter):
                    old.update(new)
                elif isinstance(old, list):
                    old.extend(v for v in new if v not in old)
                else:
                    setattr(acc, f.name, old + new)
    for (jid, _), cost in stored.items():
        judges[jid].stored_cost_usd += cost
    aggregates: dict[str, int] = {}
    for part in parts:
        for rater, n in part.aggregates.items():
            aggregates[rater] = aggregates.get(rater, 0) + n
    rubrics = "; ".join(f"{p.rubric} for {label}" if label else p.rubric
                        for p, label in zip(parts, labels, strict=False))
    return PanelSummary(rubric=rubrics, items=items, judges=list(judges.values()),
                        seconds=sum(p.seconds for p in parts),
                        interrupted=any(p.interrupted for p in parts), aggregates=aggregates,
                        dry_run=any(p.dry_run for p in parts))


__all__ = ["JudgeSummary", "PanelSummary", "ProgressSink", "ReparseSummary", "merge_summaries"]
