"""Exit codes of the ``mutagent`` command, documented in ``--help`` and the README."""

OK = 0
GATE_FAILED = 1
USAGE_ERROR = 2
BASELINE_FAILED = 3
INTERNAL_ERROR = 4

EPILOG = (
    "exit codes: 0 ok, 1 gate failed (--fail-under / --max-survived / --fail-on-regression), "
    "2 usage, configuration or input error, 3 baseline not green, 4 internal error"
)
