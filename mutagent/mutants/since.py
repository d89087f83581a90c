"""``--since REV``: mutate only the lines changed since a git revision (pull-request runs).

Changed lines are the added/modified lines of ``git diff -U0 REV`` (committed and uncommitted
work alike) plus every line of untracked files, which are new code too. Pure deletions add no
line: there is no code left on them to mutate.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from mutagent.errors import UsageError
from mutagent.model import Mutant

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", "-C", str(root), "-c", "core.quotePath=false", *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
            check=False,
        )
    except OSError as exc:
        raise UsageError(f"--since needs git, which could not be run: {exc.strerror or exc}") from exc


def unquote_path(text: str) -> str:
    """Undo git's C-style quoting of unusual paths (``"dir/\\303\\251.py"`` -> ``dir/é.py``)."""
    if not (len(text) >= 2 and text[0] == text[-1] == '"'):
        return text
    body, out, index = text[1:-1], bytearray(), 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            nxt = body[index + 1]
            if nxt in "01234567":
                out.append(int(body[index + 1 : index + 4], 8))
                index += 4
                continue
            out.append(_ESCAPES.get(nxt, ord(nxt)))
            index += 2
            continue
        out.extend(char.encode("utf-8"))
        index += 1
    return out.decode("utf-8", errors="surrogateescape")


def parse_diff(diff: str) -> dict[str, set[int]]:
    """Map each file of a ``-U0`` diff to the new-side line numbers its hunks add or modify."""
    changed: dict[str, set[int]] = {}
    current: str | None = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            target = unquote_path(line[4:].rstrip("\t"))
            current = None if target == "/dev/null" else target[2:] if target.startswith("b/") else target
            if current is not None:
                changed.setdefault(current, set())
            continue
        match = _HUNK.match(line)
        if match and current is not None:
            start = int(match.group(1))
            count = 1 if match.group(2) is None else int(match.group(2))
            changed[current].update(range(start, start + count))
    return {file: lines for file, lines in changed.items() if lines}


def changed_lines(root: Path | str, rev: str) -> dict[str, set[int]]:
    """Lines changed since ``rev`` under ``root``, keyed by path relative to ``root`` (posix)."""
    root = Path(root)
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory")
    if shutil.which("git") is None:
        raise UsageError("--since needs git, which is not installed")
    if not rev or rev.startswith("-"):
        raise UsageError(f"--since: {rev!r} is not a git revision")
    if _git(root, "rev-parse", "--show-toplevel").returncode != 0:
        raise UsageError(f"--since: {root} is not inside a git repository")
    if _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").returncode != 0:
        raise UsageError(f"--since: unknown git revision {rev!r}")
    diff = _git(root, "diff", "--no-color", "--no-ext-diff", "-U0", "--relative", rev, "--", ".")
    if diff.returncode != 0:
        last = (diff.stderr.strip().splitlines() or ["no message"])[-1]
        raise UsageError(f"--since: git diff {rev} failed: {last}")
    changed = parse_diff(diff.stdout)
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z", "--", ".")
    for name in filter(None, untracked.stdout.split("\0")):
        try:
            text = (root / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # binary or unreadable: nothing to mutate there
        changed[name] = set(range(1, max(text.count("\n") + (not text.endswith("\n")), 1) + 1))
    return changed


def filter_changed(mutants: Iterable[Mutant], changed: dict[str, set[int]]) -> list[Mutant]:
    """The mutants touching at least one changed line of their file."""
    kept = []
    for mutant in mutants:
        lines = changed.get(mutant.file)
        if lines and any(
            line in lines for line in range(mutant.location.start_line, mutant.location.end_line + 1)
        ):
            kept.append(mutant)
    return kept
