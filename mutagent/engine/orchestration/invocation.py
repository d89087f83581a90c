"""How mutagent invokes pytest inside the isolated copy (baseline, workers, fresh-import runs).

The same arguments everywhere, so that the baseline, the control run and every mutant see the
same collection, configuration and plugins.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

# pytest options whose value is the next argument: the value is an expression, a name or a number,
# never a test path, so it is kept with its option and never probed on disk
# (``-k '<a 300-character expression>'`` must not become ``OSError: File name too long``).
VALUE_OPTIONS = frozenset(
    {
        "-k", "-m", "-p", "-c", "-o", "-W", "-r", "-n",
        "--deselect", "--ignore", "--ignore-glob", "--rootdir", "--confcutdir", "--maxfail", "--tb",
        "--junitxml", "--junit-xml", "--junit-prefix", "--basetemp", "--durations", "--durations-min",
        "--log-level", "--log-cli-level", "--log-file", "--log-format", "--import-mode", "--capture",
        "--override-ini", "--pythonwarnings", "--config-file", "--inifile", "--timeout", "--dist",
        "--randomly-seed", "--cov", "--cov-report", "--hypothesis-seed", "--hypothesis-profile",
        "--asyncio-mode", "--report-log", "--cache-dir", "--strict-markers-file",
    }
)  # fmt: skip


def is_path_argument(argument: str, copy_root: Path) -> bool:
    """Whether a ``--tests`` argument selects files (dropped when a fresh-import run passes node ids).

    A name the file system cannot even look up (too long, a NUL byte) is not a path.
    """
    if argument.startswith("-"):
        return False
    if "::" in argument:
        return True
    try:
        return (copy_root / argument).exists()
    except (OSError, ValueError):
        return False


def option_arguments(arguments: list[str], copy_root: Path) -> list[str]:
    """The ``--tests`` arguments that are not test paths, in order, values kept with their options."""
    kept: list[str] = []
    takes_value = False
    for argument in arguments:
        if takes_value:
            kept.append(argument)
            takes_value = False
        elif argument in VALUE_OPTIONS:
            kept.append(argument)
            takes_value = True
        elif not is_path_argument(argument, copy_root):
            kept.append(argument)
    return kept


def _has_pytest_config(root: Path) -> bool:
    """Whether pytest would find its own configuration file in ``root`` (else we pass an empty one
    so pytest does not pick up a stray ini file from the temporary directory's parents)."""
    if (root / "pytest.ini").is_file() or (root / ".pytest.ini").is_file():
        return True
    checks = {"pyproject.toml": ("[tool.pytest",), "tox.ini": ("[pytest]",), "setup.cfg": ("[tool:pytest]",)}
    for name, markers in checks.items():
        path = root / name
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            if any(marker in text for marker in markers):
                return True
    return False


def common_pytest_args(copy_root: Path, aux: Path) -> list[str]:
    """Arguments added to every pytest run in the copy."""
    args = [
        "--rootdir",
        str(copy_root),
        "--confcutdir",
        str(copy_root),
        "-p",
        "no:cacheprovider",
        "-q",
        # a killing test's traceback is formatted in every mutant child; pytest's long style
        # (source context, reprs through SDK frames) costs ~100 ms per failing test
        "--tb=native",
    ]
    if not _has_pytest_config(copy_root):
        ini = aux / "pytest.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        args += ["-c", str(ini)]
    if importlib.util.find_spec("xdist") is not None:
        args += ["-n", "0"]  # one process per worker; mutagent parallelises itself
    if importlib.util.find_spec("pytest_cov") is not None:
        args += ["--no-cov"]  # a second coverage tracer would replace ours and blind the baseline
    if importlib.util.find_spec("pytest_randomly") is not None:
        args += ["-p", "no:randomly"]  # the control run must see the baseline's order
    return args
