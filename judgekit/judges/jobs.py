"""A panel run's working data: the items as plain lists, the jobs (item x trial) of each judge,
and what one judge's run carries (limiter, retry policy, summary) besides the run's shared parts.

No pandas on the hot path: the items are plain lists (:class:`~judgekit.store.items_table.ItemTable`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from judgekit.judges.base import Judge, JudgeEntry, JudgeRequest, Price
from judgekit.judges.limits import AdaptiveConcurrency, RateLimiter, RetryPolicy
from judgekit.judges.summary import JudgeSummary, ProgressSink
from judgekit.judges.writer import Writer
from judgekit.rubric.model import Rubric
from judgekit.rubric.prompt import AnswerParser, user_message
from judgekit.store.items_table import ItemTable
from judgekit.store.schema import is_missing, item_content_hash

if TYPE_CHECKING:
    import pandas as pd


@dataclass(slots=True)
class Job:
    """One call to make: an item (its position in :class:`Items`), a trial and the call key."""

    item: int
    trial: int
    key: str


class Items:
    """The panel's items as plain lists (no pandas on the hot path)."""

    def __init__(self, items: ItemTable | pd.DataFrame, *, key_extra: str = "") -> None:
        #: added to every item hash in the call keys: the template variables of a sub-panel
        #: (:func:`judgekit.judges.framing.variables_key`); "" for a panel without variables
        self.key_extra = key_extra
        table = items if isinstance(items, ItemTable) else ItemTable.from_frame(items)
        self.ids = table.ids
        self.prompts = _clean(table.column("prompt"))
        self.messages = _clean(table.column("messages"))
        self.responses = ["" if r is None else str(r) for r in _clean(table.column("response"))]
        self.hashes = [
            item_content_hash(p, m, r)
            for p, m, r in zip(self.prompts, self.messages, self.responses, strict=True)
        ]

    def request(self, i: int, trial: int) -> JudgeRequest:
        p, m, r = self.prompts[i], self.messages[i], self.responses[i]
        return JudgeRequest(self.ids[i], trial, p, m, r, user_message(p, m, r))

    def quoted(self, i: int) -> tuple[str, ...]:
        """The judged texts of item ``i`` (response, prompt, every turn of the conversation):
        the parser ignores what the judge copies from them."""
        turns = [_turn_text(m.get("content")) for m in self.messages[i] or () if isinstance(m, dict)]
        return tuple(str(q) for q in (self.responses[i], self.prompts[i], *turns) if q)


def _turn_text(content: Any) -> str:
    if isinstance(content, list):  # content blocks: [{"type": "text", "text": ...}, ...]
        return "\n".join(str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in content)
    return "" if content is None else str(content)


def _clean(values: list[Any]) -> list[Any]:
    return [None if is_missing(v) else v for v in values]


@dataclass
class PanelRun:
    """What every judge of one run shares: the rubric, the items, the parser, the writer and
    the progress sink."""

    rubric: Rubric
    items: Items
    parser: AnswerParser
    writer: Writer
    progress: ProgressSink | None = None


@dataclass
class JudgeRun:
    """One judge's part of a run: its jobs, limits, retry policy and summary."""

    panel: PanelRun
    entry: JudgeEntry
    judge: Judge
    params: str  #: canonical JSON of the judge's parameters (:func:`~judgekit.judges.base.spec_params`)
    summary: JudgeSummary
    conc: AdaptiveConcurrency
    rate: RateLimiter
    policy: RetryPolicy
    price: Price | None
    jobs: list[Job] = field(default_factory=list)
    system_chars: int = 0
    stopped: bool = False
    #: calls in a row whose every attempt failed to connect (reset by any answer): past
    #: :data:`judgekit.judges.stream.MAX_CONNECTION_FAILURES` the judge is stopped
    connection_failures: int = 0
    #: items with the same text as a pending job's item (same key): answered by its one call
    followers: dict[str, list[Job]] = field(default_factory=dict)

    pending_total: int = 0  #: jobs + followers at the start

    @property
    def pending(self) -> int:
        return len(self.jobs) + sum(len(f) for f in self.followers.values())


__all__ = ["Items", "Job", "JudgeRun", "PanelRun"]
