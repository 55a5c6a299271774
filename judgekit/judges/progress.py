"""The live progress bar of a panel run (rich): done/total, rate, ETA, abstentions, errors,
tokens, cost. When stderr is not a terminal (a log file, CI, ``nohup``) there is no bar: a plain
line every :attr:`RichProgress.plain_every` seconds instead (``judging: 120 of 1,000 calls
answered (12%), 3.2/s, 0 abstain, 1 error``), so a long run's log shows it is alive; with
``--no-progress``, nothing."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rich is imported when a bar may be drawn (a run with calls to make)
    from rich.console import Console
    from rich.progress import Progress, TaskID


class RichProgress:
    """A :class:`~judgekit.judges.summary.ProgressSink` drawing a rich progress bar."""

    #: seconds between two plain progress lines when there is no bar
    plain_every = 10.0

    def __init__(self, console: Console | None = None, *, enabled: bool | None = None) -> None:
        self._console = console
        self._enabled = enabled
        self._auto = enabled is None  # plain lines only when the bar is off for want of a terminal
        self._plain = False
        self._plain_last = 0.0
        self._total = 0
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self.abstain = 0
        self.error = 0
        self.tokens = 0
        self.cost = 0.0
        self.done = 0
        self._t0 = 0.0
        self._last = 0.0

    @property
    def console(self) -> Console:
        """The console the bar is drawn on (by default a rich console on stderr, made on first use)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True)
        return self._console

    @property
    def enabled(self) -> bool:
        """Whether the bar is drawn: as given, else when the console is a terminal."""
        if self._enabled is None:
            self._enabled = self.console.is_terminal
        return self._enabled

    def start(self, total: int, cached: int) -> None:
        self._t0 = time.perf_counter()
        self._total = total
        if total == 0:  # nothing to call: no bar, no console made
            return
        if not self.enabled:
            self._plain = self._auto
            self._plain_last = self._t0
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]judging[/bold]"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[stats]}"),
            console=self.console,
            transient=False,
            refresh_per_second=8,
        )
        self._progress.start()
        self._task = self._progress.add_task(
            "judging", total=total, rate="", stats=f"{cached} cached" if cached else ""
        )
        self._cached = cached

    def advance(self, status: str, tokens: int, cost: float) -> None:
        self.done += 1
        self.tokens += tokens
        self.cost += cost
        if status == "abstain":
            self.abstain += 1
        elif status == "error":
            self.error += 1
        if self._plain:
            now = time.perf_counter()
            if now - self._plain_last >= self.plain_every:
                self._plain_last = now
                self._plain_line(now)
            return
        if self._progress is None or self._task is None:
            return
        now = time.perf_counter()
        if now - self._last < 0.1:  # formatting per call would cost more than the call
            self._progress.update(self._task, completed=self.done)
            return
        self._last = now
        self._refresh(now)

    def _plain_line(self, now: float) -> None:
        import sys

        rate = self.done / max(now - self._t0, 1e-9)
        share = f" ({100 * self.done / self._total:.0f}%)" if self._total else ""
        sys.stderr.write(f"judging: {self.done:,} of {self._total:,} calls answered{share}, {rate:.1f}/s, "
                         f"{self.abstain:,} abstain, {self.error:,} error\n")
        sys.stderr.flush()

    def _refresh(self, now: float) -> None:
        if self._progress is None or self._task is None:
            return
        rate = self.done / max(now - self._t0, 1e-9)
        cached = f"{self._cached} cached · " if self._cached else ""
        self._progress.update(
            self._task,
            completed=self.done,
            rate=f"{rate:.1f}/s",
            stats=f"{cached}{self.abstain} abstain · {self.error} error · "
            f"{self.tokens:,} tok · ${self.cost:.4f}",
        )

    def stop(self) -> None:
        if self._progress is not None:
            self._refresh(time.perf_counter())
            self._progress.stop()
            self._progress = None
