"""``mutagent suggest`` from start to end: ideas, probes, candidates, verification, what to keep.

1. For each survivor, the tests and faults to try (``choose``), each test read with libcst
   (``testsource``) and the fault spelt as that test's module would spell it.
2. Probes (``build``): each idea's test with the fault inserted and its statements observed,
   run twice on the original and once on the mutant, in one phase of the engine's workers.
3. Candidates (``decide``) from what the probes saw, each in a module of its own that imports
   what it uses from its model test's module (``standalone``).
4. Verification: each candidate on the original ``runs`` times (it must pass every time) and on
   the mutant once (it must fail, or time out), in a second phase. The first verified candidate
   of a survivor (the ideas' order) is its suggestion; a survivor without one keeps its recipe.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any

from rich.console import Console

from mutagent.config import EngineConfig
from mutagent.explore.catalogue import fits, scripts
from mutagent.explore.results import Exploration
from mutagent.fakeserver import behaviours as b
from mutagent.fakeserver.behaviours import ToolCall
from mutagent.fakeserver.dialects import dialect_named
from mutagent.fakeserver.inject import STALL, Fault, faulted, source_of
from mutagent.model import Mutant, RunData, Suggestion
from mutagent.suggest.build import PROBE_IMPORT, Rewrite, probe_function, rewrite
from mutagent.suggest.choose import Idea, function_lines, ideas_for, reach_lines
from mutagent.suggest.decide import Candidate, candidate_name, decide
from mutagent.suggest.session import Run, Session
from mutagent.suggest.standalone import Piece, standalone
from mutagent.suggest.testsource import TestSource, Unreadable, read_test

STALL_EXTRA = 8.0  # seconds a stalled request may take: the client's read timeout has to fire


@dataclass
class Tried:
    """One idea and what became of it."""

    idea: Idea
    src: TestSource | None = None
    rewrite: Rewrite | None = None
    fault_source: str = ""
    candidate: Candidate | None = None
    verdict: str = ""  # why it was not kept, or "verified"
    mutant_failure: str = ""


@dataclass
class Result:
    """Per survivor: the suggestion (None when no candidate verified) and every idea tried."""

    mutant: Mutant
    suggestion: Suggestion | None
    tried: list[Tried] = field(default_factory=list)


def _key(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:10]


def _renamed(text: str, src: TestSource) -> str:
    """A behaviour's spelling with the names the test's module uses (``b``, ``ToolCall``)."""
    if src.behaviours and src.behaviours != "b":
        text = text.replace("b.", f"{src.behaviours}.")
    if src.toolcall and src.toolcall != "ToolCall":
        text = text.replace("ToolCall(", f"{src.toolcall}(")
    return text


def fault_source(
    fault: Fault, src: TestSource, steps: dict[int, Any], exploration: Exploration | None
) -> str | None:
    """How the test writes ``fault`` at its step: the explored run's own spelling, or built from
    the scripted reply it copies (read from the test's source), or None when neither is known."""
    if exploration is not None:
        for run in exploration.runs:
            if run.test == src.nodeid and run.fault == fault and run.inserted:
                return _renamed(run.inserted, src)
    step = steps.get(fault.at)
    dialect = dialect_named(step.dialect) if step is not None else dialect_named("anthropic")
    stream = step.stream if step is not None else True
    if fault.transient or fault.kind in ("error-event", "malformed", "stall"):
        behaviour = faulted(fault, b.ok(text="Hi"), dialect, stream)
        return _renamed(source_of(behaviour), src) if behaviour is not None else None
    expression = src.step_expression(fault.at)
    if expression is None:
        return None
    namespace = {src.behaviours or "b": b, src.toolcall or "ToolCall": ToolCall}
    try:
        scripted = eval(compile(ast.parse(src.code(expression), mode="eval"), "<step>", "eval"), namespace)  # noqa: S307
    except Exception:  # noqa: BLE001 - a step built from the test's own variables: not known here
        return None
    behaviour = faulted(fault, scripted, dialect, stream) if isinstance(scripted, b.Behaviour) else None
    return _renamed(source_of(behaviour), src) if behaviour is not None else None


def _docstring(src: TestSource, idea: Idea) -> str:
    """One line (at most 90 characters) saying what the candidate adds to its model test."""
    if idea.fault is None:
        text = f"{src.name}, checking what this code decides."
        return text if len(text) <= 90 else "The same script, checking what this code decides."
    times = f" ({idea.times} times)" if idea.times > 1 else ""
    times += ", then the run again" if idea.again else ""
    what = idea.fault.describe()
    text = f"{src.name} with {what}{times}."
    return text if len(text) <= 90 else f"{what[0].upper()}{what[1:]}{times}, in the same script."


class Suggester:
    """One ``mutagent suggest`` over the stored run of ``config.root``."""

    def __init__(self, config: EngineConfig, console: Console, run_data: RunData, runs: int = 5) -> None:
        self.config = config
        self.console = console
        self.run_data = run_data
        self.runs = runs
        self.exploration = Exploration.from_json(run_data.exploration) if run_data.exploration else None
        self.session = Session(config, console)
        self.steps = {
            test: {step.index: step for step in script.steps}
            for test, script in scripts(self.session.baseline.faults, self.session.baseline.passing).items()
        }
        self._tests: dict[str, TestSource | str] = {}
        self._names: dict[str, int] = {}  # candidate names given so far (every round's unique)
        self._probes = 0  # probes written so far

    def test(self, nodeid: str) -> TestSource | str:
        """The test of ``nodeid`` read for a candidate, or why it cannot be one."""
        if nodeid not in self._tests:
            try:
                self._tests[nodeid] = read_test(self.session.root, nodeid)
            except Unreadable as reason:
                self._tests[nodeid] = str(reason)
        return self._tests[nodeid]

    def _covering(self, mutant: Mutant) -> list[str]:
        result = self.run_data.result_of(mutant)
        if result.covered_by:
            return list(result.covered_by)
        by_line = self.session.baseline.coverage.get(mutant.file, {})
        lines = range(mutant.location.start_line, mutant.location.end_line + 1)
        return sorted({t for line in lines for t in by_line.get(line, ())})

    def _step_for(self, test: str, fault: Fault) -> int | None:
        """The scripted step of ``test`` ``fault`` fits: its own, else the first that fits."""
        steps = self.steps.get(test, {})
        if fault.transient or not steps:
            return fault.at
        if fault.at in steps and fits(fault, steps[fault.at]):
            return fault.at
        return next((index for index in sorted(steps) if fits(fault, steps[index])), None)

    def _fitted(self, idea: Idea) -> Idea:
        """``idea`` with its fault moved to the first scripted step it fits, when it does not fit
        its own (a copy of a reply needs a reply: a scripted error is none)."""
        fault = idea.fault
        steps = self.steps.get(idea.test, {})
        if fault is None or fault.transient or fault.at not in steps or fits(fault, steps[fault.at]):
            return idea
        fitting = next((index for index in sorted(steps) if fits(fault, steps[index])), None)
        return idea if fitting is None else replace(idea, fault=replace(fault, at=fitting))

    def _nearby(self, mutant: Mutant) -> list[str]:
        """The tests that run the functions around the lines ``mutant`` is observed from."""
        around = function_lines(self.session.sources, reach_lines(mutant, self.session.sources))
        coverage = self.session.baseline.coverage
        return sorted(
            {
                t
                for file, lines in around.items()
                for line in lines
                for t in coverage.get(file, {}).get(line, ())
            }
        )

    def ideas(self, mutant: Mutant) -> list[Tried]:
        candidates_of = set(self._covering(mutant))
        if self.exploration is not None:
            candidates_of |= {run.test for run in self.exploration.runs}
        readable = {}
        for test in candidates_of:
            src = self.test(test)
            if isinstance(src, TestSource):
                readable[test] = len(src.code(src.function).splitlines())
        nearby = self._nearby(mutant)
        for test in nearby:
            src = self.test(test)
            if isinstance(src, TestSource):
                readable[test] = len(src.code(src.function).splitlines())
        duration = {t: self.session.baseline.duration(t) for t in readable}
        ideas = ideas_for(
            mutant,
            self._covering(mutant),
            readable,
            self.session.sources,
            self.exploration,
            duration,
            nearby,
            self._step_for,
        )
        tried = []
        for idea in ideas:
            src = self.test(idea.test)
            assert isinstance(src, TestSource)
            idea = self._fitted(idea)
            entry = Tried(idea, src)
            try:
                if idea.fault is not None:
                    spelt = fault_source(idea.fault, src, self.steps.get(idea.test, {}), self.exploration)
                    if spelt is None:
                        entry.verdict = f"cannot spell {idea.fault.label} in {src.name}'s script"
                        tried.append(entry)
                        continue
                    entry.fault_source = spelt
                    entry.rewrite = rewrite(src, spelt, idea.fault.at, idea.times, idea.again)
                else:
                    entry.rewrite = rewrite(src, None, 0)
            except Unreadable as reason:
                entry.verdict = str(reason)
            tried.append(entry)
        return tried

    def _extra(self, idea: Idea) -> float:
        fault = idea.fault
        if fault is None:
            return 0.0
        return (STALL_EXTRA if fault.kind == STALL else fault.wait) * idea.times

    def _module_for(self, model_file: str, stem: str) -> str:
        parent = PurePosixPath(model_file).parent
        return str(parent / f"test_mutagent_{stem}_{PurePosixPath(model_file).stem}.py")

    def probe(self, tried: list[Tried]) -> None:
        """Phase one: the probes, twice on the original and once on each mutant."""
        files: dict[str, list[str]] = {}
        models: dict[str, str] = {}
        runs: list[Run] = []
        for entry in (t for t in tried if t.rewrite is not None):
            assert entry.src is not None and entry.rewrite is not None
            self._probes += 1
            name = f"test_mutagent_probe_{self._probes}"
            path = self._module_for(entry.src.file, "probe")
            models[path] = entry.src.file
            files.setdefault(path, []).append(probe_function(entry.rewrite, name, name))
            test = f"{path}::{name}"
            limit = self.session.time_limit(entry.idea.test, self._extra(entry.idea))
            key = _key("probe", entry.idea.mutant.id, test)
            runs += [
                Run(f"{key}-o1", test, None, limit),
                Run(f"{key}-o2", test, None, limit),
                Run(f"{key}-m", test, entry.idea.mutant, limit),
            ]
            entry.verdict = key
        texts = {
            path: (self.session.root / models[path]).read_text(encoding="utf-8")
            + f"\n\n{PROBE_IMPORT}\n\n\n"
            + "\n\n".join(functions)
            for path, functions in files.items()
        }
        outcomes = self.session.run("suggest: probes", texts, runs) if runs else {}
        for entry in tried:
            if entry.rewrite is None:
                continue
            key, entry.verdict = entry.verdict, ""
            originals = [outcomes.get(f"{key}-o{n}") for n in (1, 2)]
            mutant = outcomes.get(f"{key}-m")
            if any(o is None or o.record is None for o in originals):
                why = next((o.message for o in originals if o is not None and o.message), "no record")
                entry.verdict = f"the probe did not run on the original: {why}"
                continue
            wait = entry.idea.fault.wait if entry.idea.fault is not None else 0.0
            name = candidate_name(entry.rewrite.src.name, entry.idea.label)
            entry.candidate = decide(
                entry.rewrite,
                [o.record for o in originals if o is not None and o.record is not None],
                mutant.record if mutant is not None else None,
                name=name,
                docstring=_docstring(entry.rewrite.src, entry.idea),
                wait=wait,
            )
            if entry.candidate is None:
                entry.verdict = "the mutant behaves like the original under this script"

    def verify(self, tried: list[Tried], write: str | None) -> dict[str, str]:
        """Phase two: each candidate on the original ``runs`` times and on its mutant once; the
        texts of the modules they were verified in, by path."""
        chosen = [t for t in tried if t.candidate is not None]
        names = self._names
        for entry in chosen:
            assert entry.candidate is not None
            count = names.get(entry.candidate.name, 0)
            names[entry.candidate.name] = count + 1
            if count:
                entry.candidate = _renamed_candidate(entry.candidate, f"{entry.candidate.name}_{count + 1}")
        modules: dict[str, list[Tried]] = {}
        for entry in chosen:
            assert entry.src is not None
            path = write or self._module_for(entry.src.file, "suggest")
            modules.setdefault(path, []).append(entry)
        packages = self.packages([e.src.file for e in chosen if e.src is not None])
        texts = {
            path: standalone(
                [
                    Piece(e.candidate.code, e.src.file, e.src.module, tuple(e.candidate.imports))
                    for e in entries
                ],  # type: ignore[union-attr]
                path,
                packages,
            )
            for path, entries in modules.items()
        }
        runs: list[Run] = []
        for path, entries in modules.items():
            for entry in entries:
                assert entry.candidate is not None
                test = f"{path}::{entry.candidate.name}"
                limit = self.session.time_limit(entry.idea.test, self._extra(entry.idea))
                key = _key("verify", entry.idea.mutant.id, test)
                runs += [Run(f"{key}-o{n}", test, None, limit) for n in range(self.runs)]
                runs.append(Run(f"{key}-m", test, entry.idea.mutant, limit))
                entry.verdict = key
        outcomes = self.session.run("suggest: verification", texts, runs) if runs else {}
        for entry in chosen:
            key, entry.verdict = entry.verdict, ""
            originals = [outcomes.get(f"{key}-o{n}") for n in range(self.runs)]
            mutant = outcomes.get(f"{key}-m")
            failed = next((o for o in originals if o is None or o.outcome != "passed"), None)
            if failed is not None or len(originals) < self.runs:
                why = failed.message if failed is not None else "not run"
                entry.verdict = f"it did not pass every run on the original ({why})"
            elif mutant is None or mutant.outcome not in ("failed", "timeout"):
                entry.verdict = "it passed on the mutant too"
            else:
                entry.verdict = "verified"
                entry.mutant_failure = (mutant.message or mutant.outcome).removeprefix("call: ")[:160]
        return texts

    def packages(self, files: list[str]) -> set[str]:
        """The directories of ``files`` that are packages (relative imports work there)."""
        return {
            str(PurePosixPath(path).parent)
            for path in set(files)
            if (self.session.root / PurePosixPath(path).parent / "__init__.py").is_file()
        }

    def close(self) -> None:
        self.session.close()


def _renamed_candidate(candidate: Candidate, name: str) -> Candidate:
    code = candidate.code.replace(f"def {candidate.name}(", f"def {name}(", 1)
    return Candidate(name, code, candidate.kills, candidate.imports)


ROUNDS = (slice(0, 3), slice(3, None))  # the first ideas of every survivor, then the rest for those left


def suggest(
    config: EngineConfig,
    console: Console,
    run_data: RunData,
    mutants: list[Mutant],
    *,
    write: str | None = None,
    runs: int = 5,
) -> tuple[list[Result], str]:
    """Build, run and verify candidate tests for ``mutants`` (survivors of ``run_data``); the
    results, and the module of every verified test for ``write`` ("" without it)."""
    suggester = Suggester(config, console, run_data, runs)
    try:
        tried = {m.id: suggester.ideas(m) for m in mutants}
        for ideas in ROUNDS:
            batch = [
                t
                for m in mutants
                if not any(e.verdict == "verified" for e in tried[m.id])
                for t in tried[m.id][ideas]
            ]
            if not any(t.rewrite is not None for t in batch):
                break
            suggester.probe(batch)
            suggester.verify(batch, write)
    finally:
        suggester.close()
    results = []
    kept_entries: list[Tried] = []
    same: dict[str, Tried] = {}  # a test's code without its name -> the first verified one
    for mutant in mutants:
        entries = tried[mutant.id]
        kept = next((t for t in entries if t.verdict == "verified"), None)
        suggestion = None
        if kept is not None and kept.candidate is not None and kept.src is not None:
            shape = kept.candidate.code.replace(kept.candidate.name, "", 1)
            first = same.setdefault(shape, kept)
            if first is kept:
                kept_entries.append(kept)
            else:  # the same test kills this mutant too: one test in the module, named once
                assert first.candidate is not None
                kept.candidate = first.candidate
            suggestion = Suggestion(
                mutant.id,
                kept.candidate.name,
                kept.candidate.code,
                kept.src.file,
                tuple(kept.candidate.imports),
                fault=kept.idea.fault.describe() if kept.idea.fault is not None else "",
                original_runs=runs,
                mutant_failure=kept.mutant_failure,
            )
        results.append(Result(mutant, suggestion, entries))
    module = ""
    if write is not None and kept_entries:
        module = standalone(
            [
                Piece(e.candidate.code, e.src.file, e.src.module, tuple(e.candidate.imports))
                for e in kept_entries
            ],  # type: ignore[union-attr]
            write,
            suggester.packages([e.src.file for e in kept_entries if e.src is not None]),
        )
    return results, module
