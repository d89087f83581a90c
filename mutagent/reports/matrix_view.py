"""The kill matrix and the guard map for a terminal.

The matrix spends one character per test x mutant cell so that a real suite (30 tests, 100
mutants) fits a normal terminal: columns are grouped by operator (or file) with a one-letter key,
and when the groups do not fit the width the matrix is cut into stacked blocks that each repeat
the header, rather than wrapping lines and destroying the grid.
"""

from __future__ import annotations

import string
from pathlib import PurePosixPath

from rich.console import Group as RenderGroup
from rich.console import RenderableType
from rich.text import Text

from mutagent.model import Mutant, Status
from mutagent.reports.guards import Cell, GuardEntry, KillMatrix

CELL_STYLE: dict[Cell, str] = {
    Cell.SOLE: "bold green",
    Cell.KILLED: "green",
    Cell.COVERED: "yellow",
    Cell.NOT_RUN: "dim",
    Cell.NONE: "",
}

STATUS_CHAR: dict[Status, tuple[str, str]] = {
    Status.KILLED: ("K", "green"),
    Status.TIMEOUT: ("T", "green"),
    Status.SURVIVED: ("S", "bold red"),
    Status.NO_COVERAGE: ("N", "red"),
}

GROUP_KEYS = string.ascii_lowercase + string.ascii_uppercase + string.digits
MIN_SPLIT = 4  # do not start a group in a block with fewer free columns than this


def short_test_names(tests: list[str]) -> list[str]:
    """``tests/test_loop.py::test_x`` -> ``test_loop::test_x`` when that stays unambiguous."""
    short = []
    for nodeid in tests:
        file, sep, rest = nodeid.partition("::")
        stem = PurePosixPath(file).stem if file.endswith(".py") else file
        short.append(f"{stem}{sep}{rest}")
    return short if len(set(short)) == len(short) else list(tests)


def fit(text: str, width: int) -> str:
    """Cut ``text`` to ``width`` characters, keeping both ends (test names differ at either end)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return text[:width]
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


def _blocks(matrix: KillMatrix, avail: int) -> list[list[tuple[int, int, int]]]:
    """Split the groups into blocks of (group index, start, stop) segments no wider than ``avail``."""
    blocks: list[list[tuple[int, int, int]]] = [[]]
    used = 0
    for index, group in enumerate(matrix.groups):
        start = group.start
        while start < group.stop:
            gap = 1 if blocks[-1] else 0
            free = avail - used - gap
            remaining = group.stop - start
            if free < min(remaining, MIN_SPLIT) and blocks[-1]:
                blocks.append([])
                used = 0
                continue
            take = min(remaining, max(free, 1))
            blocks[-1].append((index, start, start + take))
            used += gap + take
            start += take
    return [block for block in blocks if block]


def render_kill_matrix(matrix: KillMatrix, width: int) -> RenderableType:
    """The matrix as stacked text blocks no wider than ``width``, followed by its legend."""
    if not matrix.columns:
        return Text("Kill matrix: no mutant that a test could guard.", style="dim")
    digits = len(str(len(matrix.tests)))
    names = short_test_names(matrix.tests)
    longest = max((len(n) for n in names), default=0) + digits + 1
    cells_needed = len(matrix.columns) + len(matrix.groups) - 1
    # labels get whatever the cells leave over, and at least a third of the width when cells are many
    label_width = min(longest, max(16, width // 3, width - 1 - cells_needed))
    # a test name is never cut: when the names do not fit, rows carry their number only and the
    # full names follow the matrix (rich folds a name longer than the line instead of cutting it)
    numbered_only = longest > label_width
    if numbered_only:
        label_width = max(digits, len("status"))
        labels = [f"{i + 1:>{digits}}" for i in range(len(names))]
    else:
        labels = [f"{i + 1:>{digits}} {name}" for i, name in enumerate(names)]
    avail = max(width - label_width - 1, 8)
    keys = {index: GROUP_KEYS[index % len(GROUP_KEYS)] for index in range(len(matrix.groups))}

    lines: list[Text] = [
        Text.assemble(
            ("Kill matrix", "bold"),
            f": {len(matrix.tests)} tests x {len(matrix.columns)} mutants "
            f"(rows: tests, columns: mutants grouped by {matrix.group_by})",
        )
    ]
    for block in _blocks(matrix, avail):
        header = Text(" " * label_width + " ")
        caption = "mutant status" if len("mutant status") <= label_width else "status"
        status = Text(caption.rjust(label_width) + " ")
        rows = [Text(label.ljust(label_width) + " ") for label in labels]
        for position, (group, start, stop) in enumerate(block):
            if position:
                header.append(" ")
                status.append(" ")
                for row in rows:
                    row.append(" ")
            header.append(keys[group] * (stop - start), style="bold cyan")
            for column in range(start, stop):
                char, style = STATUS_CHAR[matrix.statuses[column]]
                status.append(char, style=style)
            for row, cells in zip(rows, matrix.rows, strict=True):
                for column in range(start, stop):
                    row.append(cells[column].value, style=CELL_STYLE[cells[column]])
        lines.extend([Text(""), header, status, *rows])
    lines.append(Text(""))
    if numbered_only:
        lines.append(Text("rows:", style="bold"))
        lines.extend(Text(f"{i + 1:>{digits}} {name}", overflow="fold") for i, name in enumerate(names))
    lines.append(_cell_legend())
    lines.append(_group_legend(matrix, keys))
    if matrix.excluded:
        lines.append(Text(f"({matrix.excluded} ignored, erroring or pending mutants not shown)", style="dim"))
    return RenderGroup(*lines)


def _nbsp(text: str) -> str:
    """Keep a legend item on one line: rich wraps at spaces, never at no-break spaces."""
    return text.replace(" ", "\u00a0")


def _cell_legend() -> Text:
    legend = Text("cells: ")
    for cell in Cell:
        shown = cell.value if cell is not Cell.NONE else "␣"
        legend.append(shown, style=CELL_STYLE[cell] or "dim")
        legend.append(_nbsp(f" {cell.meaning}") + "   ")
    legend.append("  status: ")
    for status, (char, style) in STATUS_CHAR.items():
        legend.append(char, style=style)
        legend.append(_nbsp(f" {status.value}") + "   ")
    return legend


def _group_legend(matrix: KillMatrix, keys: dict[int, str]) -> Text:
    legend = Text("columns: ")
    for index, group in enumerate(matrix.groups):
        legend.append(keys[index], style="bold cyan")
        legend.append(_nbsp(f" {group.label} ({group.size})") + "   ")
    return legend


def _where(mutant: Mutant) -> str:
    return f"{mutant.file}:{mutant.location.start_line} {mutant.operator}"


def render_guard_map(entries: list[GuardEntry]) -> RenderableType:
    """Per test: how many mutants it kills and the paths only it guards; useless tests stand out.

    A list rather than a table: test ids are long and so are the guarded paths, and a table
    squeezes one of them into an unreadable column on an 80-column terminal.
    """
    digits = len(str(len(entries)))
    lines: list[Text] = [Text("Guard map: the paths each test alone guards", style="bold")]
    for number, entry in enumerate(entries, start=1):
        head = Text.assemble((f"{number:>{digits}} ", "dim"), (entry.test, "bold"))
        head.append(f"  kills {len(entry.kills)}")
        if entry.guards_nothing:
            head.append(f"  GUARDS NOTHING ({entry.idle_reason()})", style="bold red")
        elif entry.unproven:
            head.append(f"  not judged ({entry.idle_reason()})", style="yellow")
        elif entry.reaches_nothing:
            head.append(f"  no mutant to guard ({entry.idle_reason()})", style="dim")
        elif not entry.only:
            head.append("  nothing alone (every kill shared with another test)", style="yellow")
        lines.append(head)
        indent = " " * (digits + 1)
        for mutant in entry.only:
            where = f"{_where(mutant)} "
            lines.append(Text.assemble(indent, ("only it: ", "green"), where, (f"[{mutant.id}]", "dim")))
        for mutant in entry.unverified_only:
            lines.append(
                Text.assemble(
                    indent,
                    ("sole known killer: ", "dim"),
                    f"{_where(mutant)} ",
                    (f"[{mutant.id}] (other covering tests were not run)", "dim"),
                )
            )
    return RenderGroup(*lines)
