"""``mutagent run`` settings: command-line flags over ``[tool.mutagent]`` in the target's pyproject.

Every key is validated here, once, so that a typo in CI configuration is one clear line naming
the key (exit 2) instead of a silently ignored setting.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mutagent.errors import UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


@dataclass
class EngineConfig:
    """Everything the engine needs to know about one run."""

    root: Path
    paths: list[str] = field(default_factory=list)
    tests: list[str] | None = None
    operators: str = "agent"
    workers: int = field(default_factory=lambda: os.cpu_count() or 1)
    timeout_factor: float = 2.0
    timeout_constant: float = 1.0
    fast: bool = False
    exclude_flaky: bool = False
    pass_env: list[str] = field(default_factory=list)
    fail_under: float | None = None
    max_survived: int | None = None
    # fork fresh-import runs from a warm zygote (off: a new ``python -m pytest`` per such mutant,
    # the slow reference path; results are the same, the control run checks it)
    zygote: bool = True
    # fault exploration: it may spend this many times the suite's summed test time (0: off)
    explore_budget: float = 1.0
    # ``mutagent explore``: the baseline and the exploration only, no mutant
    explore_only: bool = False


def _string_list(key: str, value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    raise UsageError(f"{key} must be a string or a list of strings, not {value!r}")


def _tests(key: str, value: Any) -> list[str]:
    if isinstance(value, str):
        try:
            args = shlex.split(value)
        except ValueError as exc:
            raise UsageError(f"{key}: cannot split {value!r}: {exc}") from exc
    else:
        args = _string_list(key, value)
    if not args:
        raise UsageError(f"{key} must select at least one test path or option")
    return args


def _operators(key: str, value: Any) -> str:
    if isinstance(value, list):
        value = ",".join(_string_list(key, value))
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{key} must be a family (agent, generic, all) or a comma list of operator names")
    return value


def _positive_int(key: str, value: Any) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{key} must be a whole number of at least 1, not {value!r}")
    return value


def _number(minimum: float, strict: bool) -> Callable[[str, Any], float]:
    def parse(key: str, value: Any) -> float:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                pass
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
        if ok and (value > minimum if strict else value >= minimum) and value != float("inf"):
            return float(value)
        bound = f"greater than {minimum:g}" if strict else f"at least {minimum:g}"
        raise UsageError(f"{key} must be a number {bound}, not {value!r}")

    return parse


def _bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise UsageError(f"{key} must be true or false, not {value!r}")


def _count(key: str, value: Any) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UsageError(f"{key} must be a whole number of at least 0, not {value!r}")
    return value


def _percent(key: str, value: Any) -> float:
    if isinstance(value, str):
        value = value.strip().rstrip("%")
    score = _number(0.0, strict=False)(key, value)
    if score > 100:
        raise UsageError(f"{key} must be a percentage between 0 and 100, not {value!r}")
    return score


# pyproject key (kebab-case, as on the command line) -> (EngineConfig field, parser)
KEYS: dict[str, tuple[str, Callable[[str, Any], Any]]] = {
    "paths": ("paths", _string_list),
    "tests": ("tests", _tests),
    "operators": ("operators", _operators),
    "workers": ("workers", _positive_int),
    "timeout-factor": ("timeout_factor", _number(0.0, strict=True)),
    "timeout-constant": ("timeout_constant", _number(0.0, strict=False)),
    "fast": ("fast", _bool),
    "exclude-flaky": ("exclude_flaky", _bool),
    "pass-env": ("pass_env", _string_list),
    "fail-under": ("fail_under", _percent),
    "max-survived": ("max_survived", _count),
    "zygote": ("zygote", _bool),
    "explore-budget": ("explore_budget", _number(0.0, strict=False)),
}

# Per-invocation options that have no place in a shared table (each CI job or PR sets its own):
# naming one in [tool.mutagent] is an error pointing at the flag, never a silently ignored key.
CLI_ONLY_KEYS: frozenset[str] = frozenset({"since", "shard", "json", "html", "junit", "group-by"})


def check_test_paths(root: Path, arguments: list[str] | None) -> None:
    """Stop with one line naming a ``--tests`` path that does not exist under ``root``.

    Checked before the baseline starts: pytest would otherwise collect nothing there and the run
    would end with "collected no tests" without saying which path was wrong. Only an argument
    that reads as a path is checked (it holds a ``/`` or a ``::``, or ends in ``.py``): a bare
    word may be the value of a plugin's option (``--count 3``) that mutagent cannot tell apart.
    """
    from mutagent.engine.orchestration.invocation import VALUE_OPTIONS

    takes_value = False
    for argument in arguments or []:
        if takes_value:
            takes_value = False
            continue
        if argument in VALUE_OPTIONS:
            takes_value = True
            continue
        if argument.startswith("-"):
            continue
        path = argument.split("::", 1)[0]
        if not ("/" in path or os.sep in path or path.endswith(".py") or "::" in argument):
            continue
        try:
            found = (root / path).exists()
        except (OSError, ValueError):
            found = False
        if not found:
            raise UsageError(f"--tests: {path} does not exist in {root}")


def read_pyproject(root: Path) -> dict[str, Any]:
    """The ``[tool.mutagent]`` table of ``root/pyproject.toml`` ({} when absent)."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: cannot read TOML: {exc}") from exc
    table = data.get("tool", {}).get("mutagent", {})
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.mutagent] must be a table")
    return table


def build_config(root: Path, cli: Mapping[str, Any]) -> EngineConfig:
    """Merge ``[tool.mutagent]`` (validated key by key) with command-line values (``None`` = not given)."""
    config = EngineConfig(root=root)
    for raw_key, value in read_pyproject(root).items():
        key = raw_key.replace("_", "-")
        if key in CLI_ONLY_KEYS:
            raise UsageError(
                f"{raw_key!r} in [tool.mutagent] of {root / 'pyproject.toml'} is not a setting: "
                f"pass --{key} on the command line"
            )
        if key not in KEYS:
            known = ", ".join(sorted(KEYS))
            raise UsageError(
                f"unknown key {raw_key!r} in [tool.mutagent] of {root / 'pyproject.toml'} "
                f"(known keys: {known})"
            )
        name, parse = KEYS[key]
        setattr(config, name, parse(f"[tool.mutagent] {raw_key}", value))
    for key, (name, parse) in KEYS.items():
        value = cli.get(name)
        if value is None or value == []:
            continue
        if isinstance(value, bool) and not value:
            continue
        setattr(config, name, parse(f"--{key}", value))
    return config
