"""``mutagent map [PATH] [--json]``: the anatomy of the target's agent loop, per file and function.

What mutagent recognised in each source file (where the model is called, the stream consumer
and its end-of-stream check, retry loops with their bounds, delays, classification and
Retry-After sources, the turn loop and its bound, tool dispatch, tool results and guards), with
the evidence behind each role, and the roles it did not find. It is the first thing to read
when a path of your loop got no mutant: a role that is not on the map gets no mutant either.

``--json`` prints one object::

    {"files": [{"file": "pkg/loop.py",
                "roles": [{"kind": "turn-bound", "function": "Agent.run", "line": 12, "column": 8,
                           "code": "turn > max_turns", "evidence": ["..."], "facts": {"sense": "stop"}}],
                "missing": ["no retry loop found", "..."]}],
     "missing": ["no guard found"],
     "skipped": ["pkg/broken.py: cannot parse: ..."]}

A file's ``missing`` lists the roles that file lacks; the top-level ``missing`` those no file of
the target has. When the last ``mutagent run`` (or ``mutagent explore``) of PATH explored faults,
``exploration`` holds what it found (keys in ``mutagent/reports/exploration.py``): per fault the
code that runs only under it and the runs where the loop crashed, hung or sent a malformed next
request; ``null`` otherwise. This is the dynamic half of the map: it does not depend on how the
code is spelt.

``--explain`` says why. ``mutagent map FILE:LINE --explain`` prints, for each agent operator,
whether that line is a site and the evidence present and missing (for an operator whose role has
a recogniser with evidence, see ``Operator.roles``; any other operator is explained by its mutants
on the line, and says that it reports no evidence yet). ``mutagent map PATH --explain`` adds,
under each role a file lacks, what that role's recogniser saw instead: its near misses (or, where
the operators' recogniser finds sites the map's own reading does not show, those sites). With
``--json``, ``FILE:LINE --explain`` prints::

    {"file": "loop.py", "line": 12, "code": "while self.steps <= limit:",
     "anatomy": [<role entries on that line>],
     "operators": [{"operator": "turn-limit-off-by-one", "site": false, "evidence": "reported",
                    "candidates": [{"role": "turn-bound", "kind": "comparison", "code": "...",
                                    "site": false, "present": [{"source": "structure", "text": "..."}],
                                    "missing": [...]}],
                    "mutants": [{"id": "...", "line": 12, "description": "...", "ignored": null}]}]}

and ``PATH --explain --json`` gives each file an ``explained`` object: a missing role's sentence
-> ``{"as": "near misses"|"sites", "candidates": [...]}``.

``kind`` is one of ``model-call``, ``stream-consumer``, ``end-of-stream-check``, ``retry-loop``,
``retry-bound``, ``retry-delay``, ``retry-classification``, ``retry-after-source``,
``turn-loop``, ``turn-bound``, ``tool-dispatch``, ``tool-result``, ``guard``. ``facts`` holds
kind-specific strings (a turn bound's ``sense``/``counter``/``limit``/``raises``, a tool result's
``id``/``content``/``error_flag``, a guard's ``guard`` kind, a model call's ``streaming``).
These keys are stable.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from mutagent.commands._targetargs import add_path_arguments

HELP = (
    "Show the anatomy of the agent loop per file and function: model calls, stream checks, retry and "
    "turn bounds, tool dispatch, results and guards, with evidence, and the roles not found."
)


def register(parser: argparse.ArgumentParser) -> None:
    add_path_arguments(
        parser,
        "the target project or a single source file (default: the current directory); with --explain, "
        "FILE:LINE explains one line",
    )
    parser.add_argument("--json", action="store_true", help="print the anatomy as JSON (stable keys)")
    parser.add_argument(
        "--explain",
        action="store_true",
        help="say why: for FILE:LINE, whether the line is a site of each agent operator and the evidence "
        "present or missing; for a PATH, what each missing role's recogniser saw instead",
    )


def _sources(path: Path, paths: list[str] | None) -> tuple[Path, list[str]]:
    """(root, source files relative to it): a single file maps alone; a directory is discovered as
    ``mutagent run`` discovers it."""
    from mutagent.config import build_config
    from mutagent.engine.selection.discover import discover
    from mutagent.errors import UsageError

    if not path.exists():
        raise UsageError(f"{path} does not exist")
    if path.is_file():
        if path.suffix != ".py":
            raise UsageError(f"{path} is not a Python source file")
        return path.parent, [path.name]
    config = build_config(path, {"paths": paths})
    return path, list(discover(path, config.paths or None, tests_given=True).sources)


def role_entry(ctx: Any, role: Any) -> dict[str, Any]:
    """The JSON form of one role."""
    import libcst as cst

    text = ctx.code(role.node).strip()
    if isinstance(role.node, (cst.For, cst.While, cst.If, cst.ExceptHandler, cst.With)):
        text = text.splitlines()[0]  # a block: its header line says which one
    code = " ".join(text.split())
    return {
        "kind": role.kind,
        "function": role.function,
        "line": role.line,
        "column": role.column,
        "code": code if len(code) <= 120 else code[:117] + "...",
        "evidence": list(role.evidence),
        "facts": dict(role.facts),
    }


def missing_in_target(files: list[dict[str, Any]]) -> list[str]:
    """The sentences for the role kinds no file of the target has."""
    from mutagent.anatomy import ROLE_KINDS

    present = {role["kind"] for entry in files for role in entry["roles"]}
    return [sentence for kind, sentence in ROLE_KINDS.items() if kind not in present]


def candidate_entry(ctx: Any, candidate: Any) -> dict[str, Any]:
    """The JSON form of one role candidate (see the module docstring)."""
    code = " ".join(ctx.code(candidate.node).split())
    return {
        "role": candidate.role,
        "kind": candidate.kind,
        "line": ctx.position(candidate.node).start.line,
        "code": code if len(code) <= 120 else code[:117] + "...",
        "site": candidate.site,
        "present": [{"source": e.source.value, "text": e.text} for e in candidate.present],
        "missing": [{"source": e.source.value, "text": e.text} for e in candidate.missing],
    }


def _explained(ctx: Any, anatomy: Any) -> dict[str, Any]:
    """For each role kind the file lacks and that has a recogniser: what it saw instead."""
    from mutagent.anatomy import ROLE_KINDS
    from mutagent.anatomy.explain import explain_missing

    found: dict[str, Any] = {}
    for kind, sentence in ROLE_KINDS.items():
        if sentence not in anatomy.missing():
            continue
        label, candidates = explain_missing(ctx, kind)
        if label:
            found[sentence] = {"as": label, "candidates": [candidate_entry(ctx, c) for c in candidates]}
    return found


def collect(
    path: Path, paths: list[str] | None, explain: bool = False
) -> tuple[list[dict[str, Any]], list[str]]:
    """One entry per source file (see the module docstring), and the files skipped with why."""
    import libcst as cst

    from mutagent.anatomy import anatomy_of
    from mutagent.mutation.context import SourceContext

    root, sources = _sources(path, paths)
    files: list[dict[str, Any]] = []
    skipped: list[str] = []
    for relative in sources:
        try:
            text = (root / relative).read_text(encoding="utf-8")
            ctx = SourceContext(text, relative)
        except (OSError, UnicodeDecodeError) as exc:
            skipped.append(f"{relative}: cannot read it ({exc})")
            continue
        except cst.ParserSyntaxError as exc:
            skipped.append(f"{relative}: cannot parse: {str(exc).splitlines()[0]}")
            continue
        anatomy = anatomy_of(ctx)
        entry = {
            "file": relative,
            "roles": [role_entry(ctx, role) for role in anatomy.roles],
            "missing": anatomy.missing(),
        }
        if explain:
            entry["explained"] = _explained(ctx, anatomy)
        files.append(entry)
    return files, skipped


def _print(files: list[dict[str, Any]]) -> None:
    from rich.markup import escape
    from rich.tree import Tree

    from mutagent.console import console

    for entry in files:
        tree = Tree(f"[bold]{escape(entry['file'])}[/]")
        by_function: dict[str, Any] = {}
        for role in entry["roles"]:
            function = role["function"] or "<module>"
            if function not in by_function:
                by_function[function] = tree.add(f"[cyan]{escape(function)}[/]")
            facts = ", ".join(f"{k}={v}" for k, v in role["facts"].items())
            label = f"[magenta]{role['kind']}[/] line {role['line']}: [dim]{escape(role['code'])}[/]"
            if facts:
                label += f"  [yellow]{escape(facts)}[/]"
            branch = by_function[function].add(label)
            for evidence in role["evidence"]:
                branch.add(f"[green]evidence:[/] {escape(evidence)}")
        if not entry["roles"]:
            console.print(f"[bold]{escape(entry['file'])}[/]: [dim]no agent role found[/]")
            continue
        if entry["missing"]:
            missing = tree.add(f"[red]not found here:[/] {escape('; '.join(entry['missing']))}")
            for sentence, explained in entry.get("explained", {}).items():
                if not explained["candidates"]:
                    missing.add(
                        f"{escape(sentence)}: [dim]no near miss (no candidate has evidence beyond its place "
                        "in the code)[/]"
                    )
                    continue
                label = "its recogniser's sites" if explained["as"] == "sites" else "near misses"
                branch = missing.add(f"{escape(sentence)}: {label}")
                for candidate in explained["candidates"]:
                    _add_candidate(branch, candidate)
        console.print(tree)
    roles = sum(len(entry["roles"]) for entry in files)
    console.print(f"[bold]{roles} roles in {len(files)} file{'' if len(files) == 1 else 's'}[/]")
    missing = missing_in_target(files)
    if missing:
        console.print(f"[bold red]not found in the target:[/] {escape('; '.join(missing))}")


def _add_candidate(tree: Any, candidate: dict[str, Any]) -> None:
    from rich.markup import escape

    verdict = "[green]site[/]" if candidate["site"] else "[red]not a site[/]"
    branch = tree.add(
        f"{verdict} {candidate['role']} {candidate['kind']} line {candidate['line']}: "
        f"[dim]{escape(candidate['code'])}[/]"
    )
    for evidence in candidate["present"]:
        branch.add(f"[green]present[/] {escape(evidence['source'])}: {escape(evidence['text'])}")
    for evidence in candidate["missing"]:
        branch.add(f"[red]missing[/] {escape(evidence['source'])}: {escape(evidence['text'])}")


def _line_target(path: str) -> tuple[Path, int] | None:
    """``FILE:LINE`` -> (FILE, LINE), or None for a plain path."""
    import re

    match = re.fullmatch(r"(.+):(\d+)", path)
    if match is None or Path(path).exists():
        return None
    return Path(match.group(1)), int(match.group(2))


def explain_document(file: Path, line: int) -> dict[str, Any]:
    """The JSON form of ``map FILE:LINE --explain`` (see the module docstring)."""
    import libcst as cst

    from mutagent.anatomy.explain import explain_line
    from mutagent.errors import UsageError
    from mutagent.mutation.context import SourceContext
    from mutagent.mutation.registry import select_operators

    if not file.is_file() or file.suffix != ".py":
        raise UsageError(f"{file} is not a Python source file")
    try:
        ctx = SourceContext(file.read_text(encoding="utf-8"), file.name)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {file}: {exc}") from exc
    except cst.ParserSyntaxError as exc:
        raise UsageError(f"{file}: cannot parse: {str(exc).splitlines()[0]}") from exc
    try:
        explanation = explain_line(ctx, line, select_operators("agent"))
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    return {
        "file": str(file),
        "line": line,
        "code": explanation.code,
        "anatomy": [role_entry(ctx, role) for role in explanation.anatomy],
        "operators": [
            {
                "operator": verdict.operator,
                "site": verdict.site,
                "evidence": "reported" if verdict.reports_evidence else "not reported",
                "candidates": [candidate_entry(ctx, c) for c in verdict.candidates],
                "mutants": [
                    {
                        "id": mutant.id,
                        "line": mutant.location.start_line,
                        "description": mutant.description,
                        "ignored": mutant.ignored_reason,
                    }
                    for mutant in verdict.mutants
                ],
            }
            for verdict in explanation.verdicts
        ],
    }


def _print_explanation(document: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.tree import Tree

    from mutagent.console import console

    tree = Tree(f"[bold]{escape(document['file'])}:{document['line']}[/]  [dim]{escape(document['code'])}[/]")
    if document["anatomy"]:
        seen = tree.add("the map's roles on this line")
        for role in document["anatomy"]:
            seen.add(f"[magenta]{role['kind']}[/]: {escape('; '.join(role['evidence']))}")
    silent = [
        v["operator"] for v in document["operators"] if v["evidence"] == "not reported" and not v["mutants"]
    ]
    for verdict in document["operators"]:
        if verdict["operator"] in silent:
            continue
        mutants = verdict["mutants"]
        label = "[green]site[/]" if verdict["site"] else "not a site"
        if verdict["evidence"] == "not reported":
            label += " [dim](this operator reports no evidence yet: judged by its mutants on this line)[/]"
        elif not verdict["candidates"]:
            label += " [dim](nothing on this line is a candidate for its role)[/]"
        branch = tree.add(f"[cyan]{verdict['operator']}[/]: {label}")
        for candidate in verdict["candidates"]:
            _add_candidate(branch, candidate)
        for mutant in mutants:
            ignored = f" [yellow](ignored: {escape(mutant['ignored'])})[/]" if mutant["ignored"] else ""
            branch.add(
                f"mutant {mutant['id']} line {mutant['line']}: {escape(mutant['description'])}{ignored}"
            )
        if verdict["site"] and not mutants:
            branch.add("[dim]no mutant on this line (the site yields no change this operator makes here)[/]")
    if silent:
        tree.add(
            f"not a site of {', '.join(silent)}: [dim]no mutant on this line (these operators report no "
            "evidence yet, so no more can be said)[/]"
        )
    console.print(tree)


def stored_exploration(path: Path) -> Any:
    """What the last run of ``path`` found by fault exploration (``None``: nothing stored)."""
    import sqlite3

    from mutagent.explore.results import Exploration
    from mutagent.store import store_path

    root = path if path.is_dir() else path.parent
    store = store_path(root)
    if not store.is_file():
        return None
    try:
        connection = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
        try:
            row = connection.execute("SELECT value FROM meta WHERE key='exploration'").fetchone()
        finally:
            connection.close()
        data = json.loads(row[0]) if row and row[0] else None
    except (sqlite3.Error, ValueError):
        return None
    return Exploration.from_json(data) if isinstance(data, dict) else None


def run(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from mutagent.console import console, warning
    from mutagent.errors import UsageError

    target = _line_target(args.path)
    if target is not None:
        if not args.explain:
            raise UsageError(f"{args.path}: FILE:LINE is explained with --explain")
        document = explain_document(*target)
        if args.json:
            console.out(json.dumps(document, indent=2), highlight=False)
        else:
            _print_explanation(document)
        return 0
    from mutagent.reports.exploration import exploration_json, render_exploration

    files, skipped = collect(Path(args.path), args.paths, explain=args.explain)
    exploration = stored_exploration(Path(args.path))
    if args.json:
        document = {
            "files": files,
            "missing": missing_in_target(files),
            "skipped": skipped,
            "exploration": exploration_json(exploration) if exploration is not None else None,
        }
        console.out(json.dumps(document, indent=2), highlight=False)
        return 0
    for message in skipped:
        warning(escape(f"skipped {message}"))
    _print(files)
    if exploration is not None:
        console.print()
        console.print(render_exploration(exploration))
    else:
        console.print(
            "[dim]no fault exploration stored: `mutagent explore PATH` (or `mutagent run`) adds it[/]"
        )
    return 0
