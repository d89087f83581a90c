"""The blind split's ledger: each test-split package is scored once, after its labels were committed.

Why a ledger: recall measured on code whose labels were in view while the operators were tuned says
little about code nobody has read. A package enters the test split through a commit that holds only
its labels (``labels/NAME.toml``); ``score.py --blind NAME`` then checks in git that this is so
(the labels file was added by a commit touching nothing outside ``bench/corpus/labels/``, and it is
unchanged since), scores it once, and appends the first figures to ``blind.toml`` together with the
two commits. A second ``--blind`` of the same package is refused: any later score is a dev figure.
After its blind score a package may move to the dev split (``split = "dev"`` in its labels file).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

CORPUS = Path(__file__).resolve().parent
LEDGER = CORPUS / "blind.toml"
LABELS = CORPUS / "labels"


class BlindError(Exception):
    """Why a package cannot be scored blind (one line)."""


@dataclass(frozen=True)
class Provenance:
    """Where a blind package's labels came from in git."""

    labels_commit: str  # the commit that added labels/NAME.toml
    head: str  # the commit the operators are measured at


def _git(*args: str, cwd: Path = CORPUS) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BlindError(f"git {' '.join(args)}: {(result.stderr or result.stdout).strip()}")
    return result.stdout.strip()


def ledger_entries(path: Path = LEDGER) -> list[dict[str, Any]]:
    """Every recorded blind score, oldest first."""
    if not path.is_file():
        return []
    return list(tomllib.loads(path.read_text(encoding="utf-8")).get("score", []))


def blind_check(name: str, labels_file: Path, path: Path = LEDGER) -> Provenance:
    """Raise BlindError unless ``name`` may be scored blind now; return the commits to record."""
    if any(entry["package"] == name for entry in ledger_entries(path)):
        raise BlindError(f"{name} was already scored blind (see blind.toml): a new score is a dev figure")
    here = labels_file.resolve().parent
    top = Path(_git("rev-parse", "--show-toplevel", cwd=here))
    relative = labels_file.resolve().relative_to(top)
    added = _git("log", "--diff-filter=A", "--format=%H", "--", str(relative), cwd=top).splitlines()
    if not added:
        raise BlindError(f"{relative} is not committed: commit the labels alone before scoring them")
    commit = added[-1]
    touched = _git("show", "--name-only", "--format=", commit, cwd=top).splitlines()
    labels_dir = str(relative.parent)
    outside = [f for f in touched if f and not f.startswith(labels_dir + "/")]
    if outside:
        raise BlindError(f"the commit adding {relative} ({commit[:10]}) also changes {outside[0]}")
    if _git("status", "--porcelain", "--", str(relative), cwd=top):
        raise BlindError(f"{relative} has uncommitted changes: score the labels as committed")
    if _git("status", "--porcelain", "--", "operators", "mutagent", cwd=top):
        raise BlindError("operators/ or mutagent/ has uncommitted changes: measure a commit")
    return Provenance(labels_commit=commit, head=_git("rev-parse", "HEAD", cwd=top))


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(round(value, 4)) if isinstance(value, float) else str(value)
    if value is None:
        return '""'
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def record_blind_score(
    name: str, version: str, provenance: Provenance, overall: dict[str, Any], path: Path = LEDGER
) -> dict[str, Any]:
    """Append the first score of ``name`` to the ledger; return the entry written."""
    entry = {
        "package": name,
        "version": version,
        "labels_commit": provenance.labels_commit,
        "measured_at": provenance.head,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "sites": overall["expected"],
        "found": overall["found"],
        "recall": overall["recall"] if overall["recall"] is not None else "",
        "true": overall["true"],
        "false": overall["false"],
        "unjudged": overall["unjudged"],
        "precision": overall["precision"] if overall["precision"] is not None else "",
    }
    header = (
        ""
        if path.is_file()
        else (
            "# The blind split's first scores (written by `score.py --blind NAME`, never by hand).\n"
            "# labels_commit added labels/NAME.toml alone; measured_at is the commit whose operators were\n"
            "# scored. A later score of the same package is a dev figure and is not recorded here.\n"
        )
    )
    lines = ["", "[[score]]", *(f"{key} = {_toml_value(value)}" for key, value in entry.items())]
    with path.open("a", encoding="utf-8") as handle:
        handle.write(header + "\n".join(lines) + "\n")
    return entry
