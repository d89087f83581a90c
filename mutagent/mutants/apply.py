"""Writing one mutant into (and back out of) the user's tree: the engine of ``mutagent apply``.

The recorded source is the only safe baseline: applying over a file that differs from it would
mix the mutant with unrelated edits, and reverting over one would destroy them, so both refuse.
Line endings are kept as the file has them (the run compares text with universal newlines).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel

from mutagent.errors import UsageError
from mutagent.model import Mutant, RunData
from mutagent.reports.writer import ReportWriteError

APPLIED_MARKER = Path(".mutagent") / "applied.json"


@dataclass(frozen=True)
class AppliedMutant:
    """A mutant ``mutagent apply`` wrote into the tree and that is still there."""

    id: str
    file: str
    operator: str

    def revert_command(self, root: Path) -> str:
        where = "" if root == Path(".") else f" {root}"
        return f"mutagent apply {self.id}{where} --revert"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _mark_applied(root: Path, mutant: Mutant, mutated: str) -> None:
    """Remember the applied mutant so that ``mutagent run`` can refuse to test a mutated tree."""
    marker = root / APPLIED_MARKER
    record = {"id": mutant.id, "file": mutant.file, "operator": mutant.operator, "sha256": _digest(mutated)}
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps(record) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ReportWriteError(f"cannot write {marker}: {exc.strerror or exc}") from exc


def _clear_applied(root: Path) -> None:
    try:
        (root / APPLIED_MARKER).unlink(missing_ok=True)
    except OSError:
        pass


def applied_mutant(root: Path) -> AppliedMutant | None:
    """The mutant ``mutagent apply`` left in ``root``, if its file still holds exactly that mutant.

    A file restored some other way (``git checkout``, an editor) no longer matches the recorded
    digest, so a stale record never blocks a run.
    """
    try:
        record = json.loads((root / APPLIED_MARKER).read_text(encoding="utf-8"))
        current, _ = _read(root / str(record["file"]))
    except (OSError, ValueError, KeyError, TypeError, UsageError):
        return None
    if _digest(current) != record.get("sha256"):
        return None
    return AppliedMutant(str(record["id"]), str(record["file"]), str(record.get("operator", "")))


def _read(path: Path) -> tuple[str, str | None]:
    """The file's text with universal newlines, and the newline to write it back with."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise UsageError(f"{path}: no such file (is PATH the project the run tested?)") from exc
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path} is not UTF-8 text") from exc
    newline = "\r\n" if b"\r\n" in raw else None
    return text.replace("\r\n", "\n").replace("\r", "\n"), newline


def _write(path: Path, text: str, newline: str | None) -> None:
    try:
        with open(path, "w", encoding="utf-8", newline=newline) as handle:
            handle.write(text)
    except OSError as exc:
        raise ReportWriteError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _recorded(run_data: RunData, mutant: Mutant) -> str:
    source = run_data.sources.get(mutant.file)
    if source is None:
        raise UsageError(f"the run did not record the source of {mutant.file}; cannot apply {mutant.id}")
    return source.replace("\r\n", "\n").replace("\r", "\n")


def _undo_commands(root: Path, mutant: Mutant) -> list[str]:
    git = "git" if root == Path(".") else f"git -C {root}"
    return [f"{git} checkout -- {mutant.file}", f"mutagent apply {mutant.id} {root} --revert"]


def apply_mutant(run_data: RunData, mutant: Mutant, root: Path, console: Console) -> None:
    """Write ``mutant`` into ``root/mutant.file`` and warn loudly that the tree is now modified."""
    source = _recorded(run_data, mutant)
    mutated = mutant.mutated_source(source)
    target = root / mutant.file
    current, newline = _read(target)
    if current == mutated:
        _mark_applied(root, mutant, mutated)
        console.print(f"[yellow]{escape(mutant.file)} already contains mutant {mutant.id}[/]")
        return
    if current != source:
        raise UsageError(
            f"{target} differs from the version the run tested; refusing to mix the mutant with other edits "
            "(commit or stash them, or re-run mutagent)"
        )
    _write(target, mutated, newline)
    _mark_applied(root, mutant, mutated)
    console.print(
        Panel(
            f"[bold]{escape(str(target))}[/] now contains mutant [bold]{mutant.id}[/] "
            f"({escape(mutant.operator)}, line {mutant.location.start_line}).\n"
            "Your working tree is MODIFIED: do not commit this file.",
            title="[bold red]WARNING: source modified[/]",
            border_style="bold red",
        )
    )
    # outside the panel and unwrapped, so the commands can be copied as they are
    first, second = _undo_commands(root, mutant)
    console.print(f"undo with:  [bold]{escape(first)}[/]", soft_wrap=True)
    console.print(f"       or:  [bold]{escape(second)}[/]", soft_wrap=True)


def revert_mutant(run_data: RunData, mutant: Mutant, root: Path, console: Console) -> None:
    """Put back the recorded source if the file holds exactly ``mutant``; refuse otherwise."""
    source = _recorded(run_data, mutant)
    target = root / mutant.file
    current, newline = _read(target)
    if current == source:
        _clear_applied(root)
        console.print(f"{escape(str(target))} is already the original source")
        return
    if current != mutant.mutated_source(source):
        raise UsageError(
            f"{target} does not contain exactly mutant {mutant.id}; not reverting (use git to restore it)"
        )
    _write(target, source, newline)
    _clear_applied(root)
    console.print(f"[green]reverted[/] {escape(str(target))} to the original source")
