"""Exit codes of the ``mutagent`` command, documented in ``--help`` and the README."""

OK = 0
GATE_FAILED = 1
USAGE_ERROR = 2
BASELINE_FAILED = 3
INTERNAL_ERROR = 4
# A run that produced no mutant at all (no operator matched the scanned files): nothing was
# tested, so it must not read as a pass, with or without a gate.
NO_MUTANTS = 5
INTERRUPTED = 130  # Ctrl-C or SIGTERM; the results already stored are kept and a re-run resumes

EPILOG = (
    "exit codes: 0 ok (also a --since run whose change touches no mutated line: nothing to test), "
    "1 gate failed (--fail-under / --max-survived / --fail-on-regression, or a gate with no scored mutant), "
    "2 usage, configuration or input error, 3 baseline not green, 4 internal error, "
    "5 no mutants (no operator matched any scanned file), 130 interrupted (results kept, re-run resumes)"
)
