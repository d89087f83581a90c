"""``mutagent suggest [PATH] [--id ID ...] [--write FILE]``: killing tests mutagent has seen kill.

For every survivor of the stored run (or those ``--id`` names), candidate tests are built from
the suite's own tests that reach its code, with the fault that reaches it inserted into their
script and assertions on what the mutant changes (see ``mutagent/suggest``). A candidate is shown
only when it passed on the original ``--runs`` times (default 5) and failed on the mutant; it is
kept in the store, so every report shows it as the survivor's hint. ``--write FILE`` writes the
verified tests as one module (verified there, at that path, with its imports). Where no candidate
verifies, the survivor gets its recipe in words and the reasons the candidates failed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mutagent.commands._targetargs import add_path_arguments

HELP = (
    "Build tests that kill the surviving mutants from the suite's own tests (the fault that reaches "
    "the code inserted), run them, and show only those that passed on the original and failed on the mutant."
)


def register(parser: argparse.ArgumentParser) -> None:
    add_path_arguments(parser, "the target project of the stored run (default: the current directory)")
    parser.add_argument(
        "--id",
        action="append",
        metavar="ID",
        help="a survivor to build tests for (a unique prefix; repeatable)",
    )
    parser.add_argument(
        "--write", metavar="FILE", help="write the verified tests into FILE (a path inside PATH)"
    )
    parser.add_argument(
        "--runs",
        metavar="N",
        type=int,
        default=5,
        help="runs on the original a test must pass (default 5, at least 3)",
    )
    parser.add_argument("--workers", metavar="N", help="parallel worker processes (default: number of cores)")
    parser.add_argument(
        "--tests", metavar="ARGS", help='pytest arguments the suite was run with, as for "mutagent run"'
    )


def _write_target(root: Path, write: str | None) -> str | None:
    from mutagent.errors import UsageError

    if write is None:
        return None
    path = Path(write)
    absolute = path if path.is_absolute() else Path.cwd() / path
    try:
        relative = absolute.resolve().relative_to(root.resolve())
    except ValueError:
        raise UsageError(
            f"--write {write}: the file must be inside {root} (its tests import from there)"
        ) from None
    if relative.suffix != ".py" or not relative.name.startswith("test"):
        raise UsageError(f"--write {write}: a test module's name starts with 'test' and ends with '.py'")
    if absolute.exists():
        raise UsageError(f"--write {write}: the file exists; mutagent writes a new module, never over yours")
    return relative.as_posix()


def run(args: argparse.Namespace) -> int:
    from rich.markup import escape
    from rich.syntax import Syntax
    from rich.text import Text

    from mutagent.config import build_config
    from mutagent.console import console
    from mutagent.errors import UsageError
    from mutagent.reports.hints import hint_for
    from mutagent.reports.load import find_mutant
    from mutagent.reports.stats import undetected_mutants
    from mutagent.store import Store, load_run_data
    from mutagent.suggest.run import suggest

    if args.runs < 3:
        raise UsageError(
            "--runs must be at least 3: a test shown as killing must pass the original every time"
        )
    config = build_config(Path(args.path), vars(args))
    root = config.root
    write = _write_target(root, args.write)
    run_data = load_run_data(root)
    survivors = undetected_mutants(run_data)
    if args.id:
        wanted = {find_mutant(run_data, ident).id for ident in args.id}
        survivors = [m for m in survivors if m.id in wanted]
        if not survivors:
            raise UsageError("none of the mutants --id names survived the stored run")
    if not survivors:
        console.print("No surviving mutants in the stored run: nothing to suggest.")
        return 0
    results, module = suggest(config, console, run_data, survivors, write=write, runs=args.runs)
    store = Store.open(root)
    try:
        fingerprints = store.fingerprints()
        for result in results:
            if result.suggestion is not None and result.mutant.id in fingerprints:
                store.save_suggestion(result.suggestion, fingerprints[result.mutant.id])
    finally:
        store.close()
    verified = [r for r in results if r.suggestion is not None]
    for result in results:
        mutant = result.mutant
        head = Text.assemble(
            (f"{mutant.file}:{mutant.location.start_line}", "bold"),
            f"  {mutant.operator}  ",
            (f"[{mutant.id}]", "dim"),
        )
        console.print(head)
        if result.suggestion is not None:
            s = result.suggestion
            console.print(
                Text(
                    f"  verified: passed {s.original_runs} times on the original, failed on the mutant "
                    f"({s.mutant_failure}); add it to {s.test_file}"
                    + (f" with {', '.join(s.imports)}" if s.imports else ""),
                    style="green",
                )
            )
            # never cropped to the terminal's width: it is code to copy
            console.print(
                Syntax(s.code, "python", theme="ansi_dark", background_color="default"),
                crop=False,
                soft_wrap=True,
            )
            continue
        console.print(Text("  no candidate verified:", style="yellow"))
        for entry in result.tried or []:
            what = f"{entry.idea.test.rsplit('::', 1)[-1]}" + (
                f" with {entry.idea.label}" if entry.idea.label else ""
            )
            console.print(f"    {escape(what)}: {escape(entry.verdict or 'not tried')}")
        if not result.tried:
            console.print("    no test of the suite reaches this code through fake_model.script(...)")
        advice = hint_for(run_data, mutant).advice
        if advice:
            console.print(Text.assemble(("  recipe: ", "bold cyan"), advice))
    if write is not None and module:
        target = root / write
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(module, encoding="utf-8")
        console.print(f"wrote {len(verified)} verified tests to {target}", highlight=False)
    console.print(
        f"[bold]{len(verified)} of {len(results)} survivors got a verified test[/] "
        f"(each passed {args.runs} runs on the original and failed on its mutant)"
    )
    return 0
