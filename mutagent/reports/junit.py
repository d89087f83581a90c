"""JUnit XML: one testcase per mutant, so any CI test-report UI lists the surviving bugs.

A surviving (or uncovered) mutant is a *failure* carrying its diff, the tests that reached it and
the operator's hint; a harness crash (RuntimeError) is an *error*; ignored, compile-error and
pending mutants are *skipped*; killed and timed-out mutants pass. ``file=`` is relative to the
repository root (what CI annotations resolve), not to the target folder.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath

from mutagent.model import Mutant, RunData, Status
from mutagent.reports.diff import diff_for
from mutagent.reports.hints import hint_for
from mutagent.reports.repopaths import repo_relative
from mutagent.reports.stats import UNDETECTED, sorted_mutants, status_of, summarize

_SKIPPED = (Status.IGNORED, Status.COMPILE_ERROR, Status.PENDING)
# Characters XML 1.0 cannot carry at all, even escaped (control bytes in a traceback, lone surrogates).
_NOT_XML = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _classname(file: str) -> str:
    path = PurePosixPath(file)
    return ".".join(path.with_suffix("").parts) if path.suffix == ".py" else file


def _case_name(mutant: Mutant) -> str:
    return f"{mutant.operator} at {mutant.file}:{mutant.location.start_line} [{mutant.id}]"


def _survivor_text(run_data: RunData, mutant: Mutant) -> str:
    result = run_data.result_of(mutant)
    hint = hint_for(run_data, mutant)
    lines = [mutant.description, "", diff_for(run_data, mutant).rstrip("\n"), ""]
    if result.covered_by:
        lines.append("covered by: " + ", ".join(result.covered_by))
    else:
        lines.append("covered by: no test reaches this code")
    if hint:
        lines.append("hint: " + hint.text())
    return "\n".join(lines) + "\n"


def to_junit(run_data: RunData) -> str:
    """The JUnit XML document (UTF-8, with declaration) for ``run_data``."""
    mutants = sorted_mutants(run_data.mutants)
    statuses = {m.id: status_of(run_data, m) for m in mutants}
    failures = sum(1 for s in statuses.values() if s in UNDETECTED)
    errors = sum(1 for s in statuses.values() if s is Status.RUNTIME_ERROR)
    skipped = sum(1 for s in statuses.values() if s in _SKIPPED)
    duration = sum(run_data.result_of(m).duration for m in mutants)
    counts = dict(
        tests=len(mutants), failures=failures, errors=errors, skipped=skipped, time=f"{duration:.3f}"
    )
    attrs = {key: str(value) for key, value in counts.items()}
    suites = ET.Element("testsuites", name="mutagent", **attrs)
    suite = ET.SubElement(suites, "testsuite", name="mutagent mutants", **attrs)
    score = summarize(run_data).total.score
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(
        properties, "property", name="mutation_score", value="n/a" if score is None else f"{score:.2f}"
    )
    ET.SubElement(properties, "property", name="root", value=run_data.root)

    for mutant in mutants:
        status = statuses[mutant.id]
        result = run_data.result_of(mutant)
        case = ET.SubElement(
            suite,
            "testcase",
            classname=_classname(mutant.file),
            name=_case_name(mutant),
            file=repo_relative(Path(mutant.file), Path(run_data.root)),
            line=str(mutant.location.start_line),
            time=f"{result.duration:.3f}",
        )
        if status in UNDETECTED:
            what = "survived" if status is Status.SURVIVED else "no test covers it"
            failure = ET.SubElement(
                case, "failure", type=status.value, message=f"{what}: {mutant.description}"
            )
            failure.text = _survivor_text(run_data, mutant)
        elif status is Status.RUNTIME_ERROR:
            error = ET.SubElement(
                case, "error", type=status.value, message="the harness crashed on this mutant"
            )
            error.text = result.error or result.status_reason or ""
        elif status in _SKIPPED:
            reason = mutant.ignored_reason or result.status_reason or result.error or status.value
            ET.SubElement(case, "skipped", type=status.value, message=f"{status.value}: {reason}")
        else:
            out = ET.SubElement(case, "system-out")
            out.text = f"{status.value} by: " + ", ".join(result.killed_by or ["(not recorded)"]) + "\n"
    ET.indent(suites)
    body = ET.tostring(suites, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + _NOT_XML.sub("\ufffd", body) + "\n"
