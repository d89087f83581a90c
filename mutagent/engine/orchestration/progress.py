"""Progress while mutants run: a rich bar on a terminal, sparse plain lines in CI logs."""

from __future__ import annotations

import time
from collections import Counter
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from mutagent.model import Status

PLAIN_INTERVAL = 30.0  # seconds between plain progress lines when nothing else triggers one


class RunProgress:
    """Counts per status, rendered live (TTY) or as a plain line every 10 % / 10 s (no TTY)."""

    def __init__(
        self, console: Console, total: int, label: str = "mutants", show_counts: bool = True
    ) -> None:
        self.console = console
        self.show_counts = show_counts
        self.total = total
        self.label = label
        self.done = 0
        self.counts: Counter[Status] = Counter()
        self.started = time.monotonic()
        self.live = console.is_terminal and not console.is_dumb_terminal
        self._bar: Progress | None = None
        self._task = None
        self._last_line = 0.0
        self._last_fraction = -1
        self._printed = -1

    def __enter__(self) -> RunProgress:
        if self.live and self.total:
            self._bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self.console,
                transient=False,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task(self.label, total=self.total, counts=self._counts_text())
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.__exit__(kind, value, tb)
        elif self.total and kind is None and self._printed != self.done:
            self._plain_line(force=True)

    def _counts_text(self) -> str:
        if not self.show_counts:
            return ""
        c = self.counts
        return (
            f"[green]killed {c[Status.KILLED]}[/] [red]survived {c[Status.SURVIVED]}[/] "
            f"[green]timeout {c[Status.TIMEOUT]}[/]"
            + (f" [yellow]errors {c[Status.RUNTIME_ERROR]}[/]" if c[Status.RUNTIME_ERROR] else "")
        )

    def advance(self, status: Status, steps: int = 1) -> None:
        self.done += steps
        self.counts[status] += steps
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, advance=steps, counts=self._counts_text())
        else:
            self._plain_line()

    def tick(self) -> None:
        if self._bar is None:
            self._plain_line()

    def _eta(self) -> str:
        if not self.done:
            return "?"
        elapsed = time.monotonic() - self.started
        remaining = elapsed / self.done * (self.total - self.done)
        return f"{int(remaining // 60)}m{int(remaining % 60):02d}s"

    def _plain_line(self, force: bool = False) -> None:
        if not self.total:
            return
        now = time.monotonic()
        fraction = int(10 * self.done / self.total)
        if not force and fraction == self._last_fraction and now - self._last_line < PLAIN_INTERVAL:
            return
        if not force and self.done == 0:
            return
        self._last_line, self._last_fraction, self._printed = now, fraction, self.done
        c = self.counts
        counts = (
            f"killed {c[Status.KILLED]}, survived {c[Status.SURVIVED]}, timeout {c[Status.TIMEOUT]}, "
            f"runtime errors {c[Status.RUNTIME_ERROR]}, "
            if self.show_counts
            else ""
        )
        percent = 100 * self.done // self.total
        self.console.print(
            f"{self.label} {self.done}/{self.total} ({percent}%): {counts}ETA {self._eta()}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
