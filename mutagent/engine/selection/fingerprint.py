"""What a stored result depends on, as hashes: a result is reused only while its hash still matches.

* a mutant's result depends on the mutant itself (id, operator), the source of its enclosing
  top-level statement, which tests cover it and the source of those tests' files (and of the
  ``conftest.py`` files above them), and whether the run stops at the first kill (``--fast``);
* the baseline depends on every source and test file, the project's configuration files, the
  test selection, the passed-through environment names and the tool versions. ``baseline_basis``
  keeps those parts apart, so that a run after an edit to function bodies only can tell which
  files changed and re-measure only the tests that ran them (``orchestration.incremental``).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import sys
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from mutagent import __version__
from mutagent.model import Mutant


def digest(*parts: str) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part.encode("utf-8", "surrogatepass"))
        hasher.update(b"\x00")
    return hasher.hexdigest()


def file_digest(text: str) -> str:
    return digest(text)


def conftests_above(test_file: str, files: dict[str, str]) -> list[str]:
    """``conftest.py`` files in the directories from the root down to ``test_file``'s directory."""
    parts = PurePosixPath(test_file).parts[:-1]
    found = []
    for depth in range(len(parts) + 1):
        candidate = PurePosixPath(*parts[:depth], "conftest.py").as_posix()
        if candidate in files:
            found.append(candidate)
    return found


def mutant_fingerprint(
    mutant: Mutant, statement_source: str, covering: Iterable[str], files: dict[str, str], fast: bool
) -> str:
    tests = sorted(set(covering))
    test_files = sorted({nodeid.split("::", 1)[0] for nodeid in tests})
    related = sorted({c for f in test_files for c in conftests_above(f, files)} | set(test_files))
    return digest(
        "mutant-v1",
        mutant.id,
        mutant.operator,
        mutant.replacement,
        statement_source,
        "fast" if fast else "full",
        json.dumps(tests),
        *[f"{name}\x01{file_digest(files.get(name, ''))}" for name in related],
    )


def _pytest_version() -> str:
    """pytest's version, part of every cache key, read without importing pytest: the engine
    computes the keys before it starts its first worker, and importing pytest costs ~90 ms."""
    try:
        return importlib.metadata.version("pytest")
    except importlib.metadata.PackageNotFoundError:  # a pytest without distribution metadata
        import pytest

        return pytest.__version__


def _settings_parts(
    root: Path, config_texts: dict[str, str], test_args: list[str] | None, pass_env: list[str]
) -> list[str]:
    return [
        __version__,
        sys.version,
        _pytest_version(),
        root.name,
        json.dumps(test_args),
        json.dumps(sorted(pass_env)),
        *[f"{name}\x01{file_digest(text)}" for name, text in sorted(config_texts.items())],
    ]


def baseline_key(
    root: Path,
    files: dict[str, str],
    config_texts: dict[str, str],
    test_args: list[str] | None,
    pass_env: list[str],
) -> str:
    settings = _settings_parts(root, config_texts, test_args, pass_env)
    return digest(
        "baseline-v2",  # v2: import-time lines, preload modules, models, zygote control
        *settings[:6],
        *[f"{name}\x01{file_digest(text)}" for name, text in sorted(files.items())],
        *settings[6:],
    )


def baseline_basis(
    root: Path,
    config_texts: dict[str, str],
    test_args: list[str] | None,
    pass_env: list[str],
    files: dict[str, str],
) -> dict[str, Any]:
    """What a baseline was measured on, file by file: ``settings`` (everything but the source and
    test files: versions, configuration files, test selection, environment names) and each
    file's digest. Two bases with equal settings differ only in the files whose digests differ."""
    return {
        "settings": digest("baseline-basis-v1", *_settings_parts(root, config_texts, test_args, pass_env)),
        "files": {name: file_digest(text) for name, text in sorted(files.items())},
    }
