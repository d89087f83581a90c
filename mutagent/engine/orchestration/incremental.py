"""The incremental baseline: after an edit to function bodies, re-measure only the tests that ran them.

The previous run's baseline stays valid for every test that never executed a changed line,
provided nothing else changed what the tests run: the same settings (tool versions, pytest
arguments, configuration files, environment names), the same set of files, no test file or
conftest changed, and each changed source file keeps its import-time code (``edits``: the module
without its function bodies is the same, and no changed body ran at import time). Such a test
runs exactly the code it ran before, so its outcome, duration, control run and coverage carry
over; its coverage of an edited file moves with the unchanged lines. Every test that covered a
line of a changed function (or a line the edit touched) is measured again in the workers (in
batches; their control run comes with the mutants, as in a first run, so the merged baseline
lists them as ``unchecked`` until it is in); the rest is merged. Anything else, or any doubt,
means a full baseline.

What this cannot see, like the baseline cache before it: a test that reads a changed file as
data (its text, line numbers in a traceback), or a non-Python file the suite reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mutagent.engine.orchestration.baseline import Baseline
from mutagent.engine.selection.edits import FileEdit, function_edit
from mutagent.engine.selection.fingerprint import file_digest


@dataclass
class Increment:
    """A previous baseline, the edits since, and the tests to measure again (collection order)."""

    previous: Baseline
    edits: dict[str, FileEdit]
    remeasure: list[str]
    import_lines: dict[str, list[int]] = field(default_factory=dict)  # the previous ones, moved

    def merge(self, measured: Baseline | None) -> Baseline:
        """The full baseline: ``measured`` (the re-measured tests only, with the workers' new
        import-time lines) over the previous one."""
        previous = self.previous
        again = set(self.remeasure)
        if measured is None:
            if again:
                raise ValueError("tests to re-measure but no measurement")
            measured = Baseline(tests={}, order=[], coverage={}, import_lines=self.import_lines)
        coverage: dict[str, dict[int, set[str]]] = {}
        for file, lines in previous.coverage.items():
            edit = self.edits.get(file)
            for line, tests in lines.items():
                kept = [t for t in tests if t not in again]
                if not kept:
                    continue
                moved = line if edit is None else edit.moved(line)
                if moved is None:  # ``plan_increment`` re-measures every test covering such a line
                    raise ValueError(f"{file}:{line} is covered by a test not measured again")
                coverage.setdefault(file, {}).setdefault(moved, set()).update(kept)
        for file, lines in measured.coverage.items():
            for line, tests in lines.items():
                coverage.setdefault(file, {}).setdefault(line, set()).update(tests)
        order = {nodeid: i for i, nodeid in enumerate(previous.order)}
        import_lines = measured.import_lines if measured.import_lines is not None else self.import_lines
        preload = list(previous.preload)
        known = set(preload)
        preload += [m for m in measured.preload if m not in known]
        return Baseline(
            tests={n: measured.tests[n] if n in again else previous.tests[n] for n in previous.order},
            order=list(previous.order),
            coverage={
                f: {line: sorted(tests) for line, tests in sorted(lines.items())}
                for f, lines in sorted(coverage.items())
            },
            imported=sorted(set(previous.imported) | set(import_lines) | set(coverage)),
            control={
                **{n: r for n, r in previous.control.items() if n not in again},
                **measured.control,
            },
            import_lines=import_lines,
            preload=preload,
            targets=[*previous.targets, *(m for m in measured.targets if m not in set(previous.targets))],
            models=sorted(set(previous.models) | set(measured.models)),
            unchecked=list(measured.unchecked),  # their controls come with the mutants
            zygote_control={n: r for n, r in previous.zygote_control.items() if n not in again},
            faults=sorted(
                [f for f in previous.faults if f.get("test") not in again] + list(measured.faults),
                key=lambda f: (order.get(f.get("test", ""), len(order)), int(f.get("step", 0))),
            ),
        )


def plan_increment(
    previous_data: dict[str, Any],
    old_basis: dict[str, Any],
    new_basis: dict[str, Any],
    sources: dict[str, str],
) -> Increment | None:
    """The tests to measure again after the edits from ``old_basis`` to ``new_basis`` (see
    ``fingerprint.baseline_basis``), or ``None`` when only a full baseline is sound.

    ``sources``: today's text of every file to mutate; ``old_basis["sources"]`` the texts the
    previous baseline was measured on.
    """
    if old_basis.get("settings") != new_basis["settings"]:
        return None
    if previous_data.get("unchecked"):  # a run stopped during its control run: measure it all again
        return None
    old_files: dict[str, str] = old_basis.get("files") or {}
    new_files: dict[str, str] = new_basis["files"]
    if set(old_files) != set(new_files):  # a new or removed source or test file
        return None
    changed = sorted(name for name, digest in new_files.items() if old_files[name] != digest)
    if not changed or any(name not in sources for name in changed):  # a test file or conftest changed
        return None
    try:
        previous = Baseline.from_json(previous_data)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    if previous.import_lines is None:
        return None
    old_texts: dict[str, str] = old_basis.get("sources") or {}
    edits: dict[str, FileEdit] = {}
    import_lines = dict(previous.import_lines)
    again: set[str] = set()
    for name in changed:
        old_text = old_texts.get(name)
        if old_text is None or file_digest(old_text) != old_files[name]:
            return None
        edit = function_edit(old_text, sources[name])
        if edit is None:
            return None
        ran_at_import = set(previous.import_lines.get(name, ()))
        if any(first <= line <= last for first, last in edit.bodies for line in ran_at_import):
            return None  # a changed body ran while the module was imported (a decorator called it)
        moved_imports = [edit.moved(line) for line in sorted(ran_at_import)]
        if None in moved_imports:
            return None
        import_lines[name] = sorted(line for line in moved_imports if line is not None)
        for line, tests in previous.coverage.get(name, {}).items():
            if edit.touches(line) or edit.moved(line) is None:
                again.update(tests)
        edits[name] = edit
    remeasure = [nodeid for nodeid in previous.order if nodeid in again]
    return Increment(previous, edits, remeasure, import_lines)
