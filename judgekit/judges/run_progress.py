"""The progress of a whole panel run, read from the store: how many of the panel's calls are
answered, how many each live worker holds now, how many no one has claimed yet.

Runs of ``judgekit judge PANEL`` on one store (on any number of machines, with a PostgreSQL
store) share the panel's calls through leases (:mod:`~judgekit.judges.lease`). Which calls the
panel makes is what a run would plan (:func:`~judgekit.judges.batchfile.plan_panel`: the same
keys, nothing sent, nothing written); the store says which of them are answered (``ok`` or
``abstain``; an ``error`` is asked again, so it counts as pending) and which are leased, by whom.
A worker is a run holding a live lease: one not expired, of a run not known to be gone (on this
machine a killed run is gone at once, elsewhere when its leases expire). A run started with
``--worker NAME`` shows as that name. A call is counted once however many items share its text.

:func:`run_progress` reads it (``judge PANEL --status``, and the end of a ``judge --worker``
run); :class:`WorkerReport` is a worker's own summary with the whole run's progress.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from judgekit.store.calls import answered, describe_owner, live_leases, owner_gone, owner_name
from judgekit.store.database import Store

if TYPE_CHECKING:
    from judgekit.judges.panelfile import Panel
    from judgekit.judges.summary import PanelSummary


@dataclass(frozen=True)
class WorkerProgress:
    """One live worker: its name (``--worker NAME``; "" for a run that gave none), who it is for
    people, and how many of the panel's calls it holds now."""

    name: str
    describe: str
    leased: int


@dataclass(frozen=True)
class JudgeProgress:
    """One judge's calls in the panel: answered, leased by a live worker, pending."""

    id: str
    calls: int
    done: int
    leased: int

    @property
    def pending(self) -> int:
        return self.calls - self.done - self.leased


@dataclass
class RunProgress:
    """The whole run: every judge's calls, and the live workers."""

    judges: list[JudgeProgress] = field(default_factory=list)
    workers: list[WorkerProgress] = field(default_factory=list)

    @property
    def calls(self) -> int:
        return sum(j.calls for j in self.judges)

    @property
    def done(self) -> int:
        return sum(j.done for j in self.judges)

    @property
    def leased(self) -> int:
        return sum(j.leased for j in self.judges)

    @property
    def pending(self) -> int:
        return sum(j.pending for j in self.judges)

    def lines(self) -> list[str]:
        pct = f" ({100 * self.done / self.calls:.0f}%)" if self.calls else ""
        out = [f"Whole run: {self.done:,} of {self.calls:,} calls answered{pct}, {self.leased:,} "
               f"being answered by {len(self.workers)} worker{'s' if len(self.workers) != 1 else ''}, "
               f"{self.pending:,} pending."]
        out += [f"  worker {w.describe}: {w.leased:,} calls leased now" for w in self.workers]
        if len(self.judges) > 1:
            out += [f"  judge {j.id}: {j.done:,} of {j.calls:,} answered, {j.leased:,} leased, "
                    f"{j.pending:,} pending" for j in self.judges]
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls, "done": self.done, "leased": self.leased, "pending": self.pending,
            "workers": [{"name": w.name, "worker": w.describe, "leased": w.leased} for w in self.workers],
            "judges": [{"id": j.id, "calls": j.calls, "done": j.done, "leased": j.leased,
                        "pending": j.pending} for j in self.judges],
        }


def progress_of(store: Store, keys_by_judge: Mapping[str, Sequence[str]], *,
                now: float | None = None) -> RunProgress:
    """The progress of the calls ``keys_by_judge`` (judge id → its call keys) in ``store``:
    answered, leased by each live worker, pending. Reads only."""
    now = time.time() if now is None else now
    out = RunProgress()
    owners: Counter[str] = Counter()
    gone: dict[str, bool] = {}
    for jid, given in keys_by_judge.items():
        keys = list(dict.fromkeys(given))
        done = answered(store, keys)
        leased = 0
        for key, owner in live_leases(store, keys, now=now).items():
            if key in done:
                continue
            if owner not in gone:
                gone[owner] = owner_gone(owner)
            if not gone[owner]:
                owners[owner] += 1
                leased += 1
        out.judges.append(JudgeProgress(jid, len(keys), len(done), leased))
    out.workers = [WorkerProgress(owner_name(o), describe_owner(o), n) for o, n in owners.most_common()]
    return out


def run_progress(panel: Panel, store: Store, *, only: Sequence[str] | None = None,
                 env: dict[str, str] | None = None) -> RunProgress:
    """The whole run's progress on ``panel`` (its judges, or those ``only`` names) as ``store``
    holds it now; sends and writes nothing, needs no API key."""
    from judgekit.judges.batchfile import plan_panel
    from judgekit.judges.plan import judge_jobs

    keys: dict[str, list[str]] = {}
    for _, shared, runs in plan_panel(panel, store, only=only, env=env).parts:
        for run in runs:
            jobs = judge_jobs(run.params, shared.rubric, run.entry, shared.items,
                              by_item_id=run.judge.by_item_id)
            keys.setdefault(run.entry.id, []).extend(j.key for j in jobs)
    return progress_of(store, keys)


@dataclass
class WorkerReport:
    """What a ``judge --worker`` run prints: its own counts and the whole run's progress."""

    worker: str
    summary: PanelSummary
    progress: RunProgress

    def lines(self) -> list[str]:
        return [f"Worker {self.worker}:", *self.summary.lines(), *self.progress.lines()]

    def as_dict(self) -> dict[str, Any]:
        return {"worker": self.worker, **self.summary.as_dict(), "progress": self.progress.as_dict()}


__all__ = ["JudgeProgress", "RunProgress", "WorkerProgress", "WorkerReport", "progress_of", "run_progress"]
