"""Paths as the repository sees them: GitHub annotations and SARIF locate a file from the repo root.

A target is often a sub-directory of its repository (``services/agent``), while mutagent keeps
file paths relative to the target. A path relative to the target would make GitHub attach an
annotation to a file that does not exist, so these outputs use the path from the top of the git
work tree that contains the target, and fall back to the target-relative path outside git.
"""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path


@cache
def _toplevel(target_root: str) -> Path | None:
    try:
        done = subprocess.run(
            ["git", "-C", target_root, "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:  # no git installed
        return None
    if done.returncode != 0 or not done.stdout.strip():
        return None
    return Path(done.stdout.strip()).resolve()


def repo_relative(path: Path, target_root: Path) -> str:
    """``path`` (relative to ``target_root``, or absolute) relative to the git toplevel containing
    ``target_root``, in posix form; relative to ``target_root`` when it is in no git work tree."""
    path, target_root = Path(path), Path(target_root)
    full = path if path.is_absolute() else target_root / path
    top = _toplevel(str(target_root)) if target_root.is_dir() else None
    if top is not None:
        try:
            return full.resolve().relative_to(top).as_posix()
        except ValueError:
            pass
    try:
        return full.relative_to(target_root).as_posix()
    except ValueError:
        return path.as_posix()
