"""File paths as a CI sees them: relative to the repository root, not to the mutated target.

CI annotations (JUnit ``file=``, a dashboard's file tree) resolve paths from the checkout's root.
A target in a sub-folder (``mutagent run ./agent``) records ``loop.py``; the CI needs
``agent/loop.py``. Outside a git repository the target root is the only root there is.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path, PurePosixPath


@cache
def _toplevel(directory: str) -> Path | None:
    """The nearest enclosing directory holding ``.git`` (a directory, or a file for worktrees)."""
    here = Path(directory)
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def repo_relative(path: Path, target_root: Path) -> str:
    """``path`` (relative to ``target_root``, or absolute) as a POSIX path relative to the git
    top level containing ``target_root``; relative to ``target_root`` when there is no repository
    (or the target root no longer exists, e.g. a report merged on another machine)."""
    try:
        root = Path(os.path.abspath(target_root))
    except (OSError, ValueError):
        return PurePosixPath(path).as_posix()
    full = Path(os.path.abspath(root / path))
    toplevel = _toplevel(str(root)) if root.is_dir() else None
    base = toplevel if toplevel is not None else root
    try:
        return full.relative_to(base).as_posix()
    except ValueError:
        return Path(path).as_posix()


def repo_root(target_root: Path) -> Path | None:
    """The git top level containing ``target_root``, if any."""
    root = Path(os.path.abspath(target_root))
    return _toplevel(str(root)) if root.is_dir() else None
