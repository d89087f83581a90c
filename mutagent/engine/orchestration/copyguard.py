"""Keep the isolated copy as it was copied, whatever a mutant does to it.

A mutant runs arbitrary code in the copy: an agent's file tool, mutated, may delete or rewrite a
file of the project. The user's tree is safe (nothing runs there), but every later mutant, and
every worker restarted after a crash, would run against the damaged copy: a deleted module makes
collection fail, a rewritten data file turns later verdicts into lies. So the engine records each
copied file's size and modification time when the copy is made, and after every mutant (and
before a worker is restarted) puts back what changed.

A stat walk costs about a millisecond per few hundred files, far less than one mutant.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from mutagent.engine.selection.discover import skipped_dir

Signature = tuple[int, int]  # (size, mtime_ns): shutil.copy2 preserves the modification time


@dataclass
class Repair:
    """What one check found and put right (paths relative to the copy)."""

    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed_in_tree: list[str] = field(default_factory=list)  # restored from a tree edited since the copy

    def __bool__(self) -> bool:
        return bool(self.restored or self.removed)


def _walk(base: Path) -> dict[str, Signature]:
    found: dict[str, Signature] = {}
    stack = [base]
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not skipped_dir(Path(entry.path)):
                        stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    stat = entry.stat(follow_symlinks=False)
                    found[os.path.relpath(entry.path, base)] = (stat.st_size, stat.st_mtime_ns)
            except OSError:
                continue
    return found


class CopyGuard:
    """The copy's files as copied from ``original``, and the means to put them back."""

    def __init__(self, original: Path, copy: Path) -> None:
        self.original = original
        self.copy = copy
        self.files = _walk(copy)

    def repair(self) -> Repair:
        """Restore every copied file a mutant deleted or changed, and delete new ``.py`` files
        (which later runs would import or collect); other new files (caches, logs) are left."""
        repair = Repair()
        now = _walk(self.copy)
        for relative, signature in self.files.items():
            if now.get(relative) == signature:
                continue
            source, target = self.original / relative, self.copy / relative
            try:
                if _signature(source) != signature:
                    repair.changed_in_tree.append(relative)
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.is_dir() and not target.is_symlink():
                    shutil.rmtree(target)
                shutil.copy2(source, target)
                self.files[relative] = _signature(target)
                repair.restored.append(relative)
            except OSError:
                continue  # the tree's own file is gone too: nothing to restore it from
        for relative in now.keys() - self.files.keys():
            if relative.endswith(".py"):
                try:
                    (self.copy / relative).unlink()
                    repair.removed.append(relative)
                except OSError:
                    pass
        return repair


def _signature(path: Path) -> Signature:
    stat = path.stat()
    return (stat.st_size, stat.st_mtime_ns)
