"""mutagent's timeout rule beside PIT's and Stryker's, rendered into ``bench/RESULTS.md``.

The rule's numbers are read from the installed engine (its configuration defaults and its
per-mutant fork allowance), so the paragraph stays true of the engine the benchmarks measured.
PIT's (``timeoutFactor`` 1.25, ``timeoutConstant`` 4000 ms) and Stryker's (``timeoutFactor`` 1.5,
``timeoutMS`` 5000) are their documented defaults.
"""

from __future__ import annotations

import dataclasses
import importlib

PEERS = (("PIT", 1.25, 4.0), ("Stryker", 1.5, 5.0))
EXAMPLES = (0.01, 0.1, 1.0, 5.0)  # baseline seconds of a mutant's covering tests


def _engine_rule() -> tuple[float, float, float] | None:
    """(factor, constant, per-mutant allowance) of the installed engine, or None if not found."""
    for config_module, plan_module in (
        ("mutagent.config", "mutagent.engine.verdict"),
        ("mutagent.engine.config", "mutagent.engine.plan"),  # the layout before the engine's restructure
    ):
        try:
            config = importlib.import_module(config_module)
            plan = importlib.import_module(plan_module)
        except ImportError:
            continue
        fields = {f.name: f.default for f in dataclasses.fields(config.EngineConfig)}
        allowance = float(getattr(plan, "FORK_ALLOWANCE", 0.0))
        return float(fields["timeout_factor"]), float(fields["timeout_constant"]), allowance
    return None


def timeout_doc() -> list[str]:
    """Markdown lines: the rule, a table of budgets for a few test durations, what it means."""
    rule = _engine_rule()
    if rule is None:
        return ["## Timeouts", "", "The installed engine's timeout defaults could not be read."]
    factor, constant, allowance = rule
    header = ["covering tests' baseline time", f"mutagent ({factor:g} × t + {constant + allowance:g} s)"]
    header += [f"{name} ({f:g} × t + {c:g} s)" for name, f, c in PEERS]
    rows = []
    for t in EXAMPLES:
        cells = [f"{t:g} s", f"{factor * t + constant + allowance:.2f} s"]
        cells += [f"{f * t + c:.2f} s" for _, f, c in PEERS]
        rows.append(cells)
    lines = [
        "## Timeouts",
        "",
        f"A mutant is a Timeout when its job outlives {factor:g} × the baseline time of the tests it runs + "
        f"{constant:g} s (`--timeout-factor`, `--timeout-constant`) + {allowance:g} s for the fork, the code "
        "swap and reporting; a test's baseline time is the larger of its plain baseline run and its run "
        "alone in the forking harness (the control run), and each test also has a CPU budget by the same "
        "rule. PIT times a mutant out after 1.25 × the normal time + 4 s, Stryker after 1.5 × + 5 s. For "
        "long tests the three rules are close (about 2× the tests' time); for short tests mutagent's "
        "constant is the smallest, so a mutant that only makes a fast test a few seconds slower is a "
        "Timeout here where PIT and Stryker would wait it out. Timeout counts as detected in the score.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]
    return lines
