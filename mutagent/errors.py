"""Errors that reach the user as one clear line and an exit code, never as a traceback."""

from __future__ import annotations

from mutagent import exitcodes


class MutagentError(Exception):
    """An expected failure: its message is printed on one line and the command exits ``exit_code``."""

    exit_code: int = exitcodes.USAGE_ERROR

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(MutagentError):
    """Bad input or configuration (exit 2)."""

    exit_code = exitcodes.USAGE_ERROR


class BaselineError(MutagentError):
    """The unmutated suite is not green (exit 3)."""

    exit_code = exitcodes.BASELINE_FAILED


class NoMutantsError(MutagentError):
    """No operator matched any scanned file (exit 5): an empty run is not a passing run."""

    exit_code = exitcodes.NO_MUTANTS


class InterruptedRun(MutagentError):
    """Ctrl-C or SIGTERM during a run (exit 130); the message says what was kept."""

    exit_code = exitcodes.INTERRUPTED
