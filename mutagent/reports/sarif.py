"""SARIF 2.1.0 (``--sarif FILE``): survivors as static-analysis results.

GitHub code scanning and other SARIF viewers show each surviving mutant natively, on the span it
mutated: one rule per operator (its failure and hint as help text), one result per survivor with
the diff in its message. Columns are Unicode code points (libcst's positions), declared through
``columnKind``; paths are relative to the repository root (``repopaths``), which is how code
scanning resolves a relative ``uri``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mutagent import __version__
from mutagent.model import Mutant, RunData, Status
from mutagent.reports.diff import diff_for
from mutagent.reports.hints import hint_for
from mutagent.reports.opinfo import operator_info
from mutagent.reports.repopaths import repo_relative
from mutagent.reports.stats import status_of, undetected_mutants

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _rule(name: str) -> dict[str, Any]:
    info = operator_info(name)
    help_text = "\n\n".join(
        part
        for part in (
            f"Failure simulated: {info.failure}" if info.failure else "",
            f"What to assert: {info.hint}" if info.hint else "",
        )
        if part
    )
    rule: dict[str, Any] = {
        "id": name,
        "name": "".join(word.capitalize() for word in name.split("-")),
        "shortDescription": {"text": info.description or f"mutagent operator {name}"},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"tags": ["mutation-testing", "agent-loop"]},
    }
    if info.failure:
        rule["fullDescription"] = {"text": info.failure}
    if help_text:
        rule["help"] = {"text": help_text, "markdown": help_text}
    return rule


def _result(run_data: RunData, mutant: Mutant, rule_index: int, root: Path) -> dict[str, Any]:
    status = status_of(run_data, mutant)
    result = run_data.result_of(mutant)
    diff = diff_for(run_data, mutant).rstrip("\n")
    what = "no test reaches this code" if status is Status.NO_COVERAGE else "no test noticed this bug"
    headline = f"Surviving mutant ({status.value}): {mutant.description or mutant.operator} ({what})."
    loc = mutant.location
    hint = hint_for(run_data, mutant)
    text = f"{headline}\n\n{diff}\n\nmutagent show {mutant.id}"
    markdown = f"{headline}\n\n```diff\n{diff}\n```\n\n`mutagent show {mutant.id}`"
    if hint.code:  # only a test mutagent ran on the original and on this mutant
        text += f"\n\n{hint.verified}\n{hint.code}"
        markdown += f"\n\n{hint.verified}\n\n```python\n{hint.code.rstrip()}\n```"
    return {
        "ruleId": mutant.operator,
        "ruleIndex": rule_index,
        "level": "warning",
        "message": {"text": text, "markdown": markdown},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": repo_relative(Path(mutant.file), root)},
                    "region": {
                        "startLine": loc.start_line,
                        "startColumn": loc.start_col + 1,
                        "endLine": loc.end_line,
                        "endColumn": loc.end_col + 1,
                    },
                }
            }
        ],
        "partialFingerprints": {"mutagentMutantId/v1": mutant.id},
        "properties": {
            "status": status.value,
            "coveredBy": list(result.covered_by),
            "original": mutant.original,
            "replacement": mutant.replacement,
        },
    }


def to_sarif(run_data: RunData) -> dict[str, Any]:
    """The SARIF log of ``run_data``: every operator with a survivor as a rule, every survivor a result."""
    survivors = undetected_mutants(run_data)
    names = sorted({m.operator for m in survivors})
    index = {name: i for i, name in enumerate(names)}
    root = Path(run_data.root)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "mutagent",
                        "version": __version__,
                        "rules": [_rule(name) for name in names],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": [_result(run_data, m, index[m.operator], root) for m in survivors],
            }
        ],
    }
