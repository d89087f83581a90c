"""Helpers for testing the engine on tiny generated targets (``tests/engine/``, ``reliability/``, ``cli/``).

``HandMutants`` is a mutant source whose mutants are written by hand as text replacements, so an
engine test can inject exactly the misbehaviour it is about (a hang, ``os._exit``, a syntax
error) independently of the operator library. ``python ENGINE_TARGETS SPEC ARGS...`` (this file,
run by its path) runs the real ``mutagent`` command line with such a source, for tests that must
signal a separate process (SIGINT, SIGKILL).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from textwrap import dedent

from mutagent.engine.selection.fingerprint import digest
from mutagent.model import Location, Mutant, TextPatch

ENGINE_TARGETS = str(Path(__file__).resolve())


@dataclass(frozen=True)
class HandMutant:
    """Replace the ``nth`` occurrence of ``find`` in ``file`` with ``replace``."""

    file: str
    find: str
    replace: str
    nth: int = 0
    operator: str = "hand"
    description: str = ""


def _location(text: str, start: int, end: int) -> Location:
    def line_col(offset: int) -> tuple[int, int]:
        line = text.count("\n", 0, offset) + 1
        return line, offset - (text.rfind("\n", 0, offset) + 1)

    (start_line, start_col), (end_line, end_col) = line_col(start), line_col(end)
    return Location(start_line, start_col, end_line, end_col)


class HandMutants:
    """A ``MutantSource`` built from :class:`HandMutant` specs."""

    def __init__(self, specs: list[HandMutant]) -> None:
        self.specs = specs
        self.key = digest("hand", json.dumps([spec.__dict__ for spec in specs], sort_keys=True))

    def generate(self, root: Path, relative: str, text: str) -> list[Mutant]:
        mutants = []
        for spec in self.specs:
            if spec.file != relative:
                continue
            start = -1
            for _ in range(spec.nth + 1):
                start = text.find(spec.find, start + 1)
                if start < 0:
                    raise ValueError(f"{spec.find!r} (occurrence {spec.nth}) not found in {relative}")
            end = start + len(spec.find)
            mutant_id = hashlib.sha256(
                f"{relative}|{spec.find}|{spec.replace}|{spec.nth}".encode()
            ).hexdigest()[:12]
            mutants.append(
                Mutant(
                    id=mutant_id,
                    operator=spec.operator,
                    file=relative,
                    scope=(),
                    location=_location(text, start, end),
                    original=spec.find,
                    replacement=spec.replace,
                    description=spec.description or f"{spec.find.strip()} -> {spec.replace.strip()}",
                    patch=TextPatch(start, end, spec.replace),
                )
            )
        return mutants

    def to_json(self) -> str:
        return json.dumps([spec.__dict__ for spec in self.specs])

    @classmethod
    def from_json(cls, text: str) -> HandMutants:
        return cls([HandMutant(**item) for item in json.loads(text)])


def write_target(root: Path, files: Mapping[str, str]) -> Path:
    """Create a target tree from ``{relative path: source}`` (sources are dedented)."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def tree_hash(root: Path, ignore: tuple[str, ...] = (".mutagent",)) -> dict[str, str]:
    """``relative path -> sha256`` of every file and directory under ``root`` (``ignore`` excluded)."""
    result: dict[str, str] = {}
    for current, dirs, files in os.walk(root):
        base = Path(current)
        dirs[:] = sorted(d for d in dirs if d not in ignore)
        for name in dirs:
            result[(base / name).relative_to(root).as_posix() + "/"] = "dir"
        for name in sorted(files):
            path = base / name
            result[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return result


def main(argv: list[str]) -> int:
    """``python tests/testkit/engine_targets.py SPEC.json run PATH [options]``."""
    from mutagent.cli import build_parser
    from mutagent.commands import run as run_command
    from mutagent.console import error
    from mutagent.errors import MutagentError

    source = HandMutants.from_json(Path(argv[0]).read_text(encoding="utf-8"))
    args = build_parser().parse_args(argv[1:])
    try:
        return run_command.run(args, mutant_source=source)
    except MutagentError as exc:
        error(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        error("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
