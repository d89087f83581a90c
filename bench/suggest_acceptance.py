"""Issue 25's acceptance, reproducible: fault exploration's cost and findings, and ``mutagent suggest``.

    python bench/suggest_acceptance.py                 # everything, writes its section of RESULTS.md
    python bench/suggest_acceptance.py --only explore  # exploration cost and the fault table
    python bench/suggest_acceptance.py --only sample,responses

Three parts, each on temporary copies (nothing is written into the repository but the section
"Fault exploration and mutagent suggest" at the end of ``bench/RESULTS.md``, which ``run.py``
keeps when it rewrites the file):

* ``explore``: the sample agent's baseline and exploration measured in one engine (``mutagent
  explore``'s code path, in process): the wall time of each, the worker seconds exploration spent
  against its budget, and per fault kind the code that runs only under it.
* ``sample``: a full ``mutagent run`` of the sample agent; the test functions of its fault suites
  (``test_retries.py``, ``test_streaming.py``) that alone guard an agent mutant (the guard map's
  "only it" lines) are deleted; ``mutagent run`` again gives the new survivors; ``mutagent
  suggest --write tests/test_suggested.py``; the written module run 5 times in a row with plain
  pytest on the original; ``mutagent run`` again with it: the score.
* ``responses``: the second demo target (``tests/fixtures/responses_agent``): ``mutagent run``,
  ``mutagent suggest``, the share of survivors with a verified test.

The bench is too slow for the test suite (``tests/suggest/test_suggest_end_to_end.py`` is its
small end-to-end twin, ``tests/suggest/test_responses_agent.py`` the Responses part).
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import libcst as cst
from common import REPO, BenchError, bench_env, console, copy_sample_agent, copy_tree, machine_info, scratch
from rich.console import Console

RESULTS = REPO / "bench" / "RESULTS.md"
HEADING = "## Fault exploration and mutagent suggest (issue 25)"
FAULT_SUITES = ("tests/test_retries.py", "tests/test_streaming.py")
RESPONSES_AGENT = REPO / "tests" / "fixtures" / "responses_agent"


def mutagent(*args: str, cwd: Path, timeout: float = 3600) -> tuple[float, str]:
    """Run the mutagent command line; (wall seconds, output). A failure is a BenchError."""
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "mutagent", *args],
        cwd=cwd,
        env={**bench_env(), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    wall = time.monotonic() - started
    if result.returncode != 0:
        raise BenchError(
            f"mutagent {' '.join(args)} failed ({result.returncode}):\n"
            f"{result.stdout[-3000:]}{result.stderr[-3000:]}"
        )
    return wall, result.stdout + result.stderr


def score_line(output: str) -> str:
    return next((line.strip() for line in output.splitlines() if line.startswith("mutation score")), "?")


# --- exploration --------------------------------------------------------------------------------
def explore_section(workers: int, repeat: int) -> list[str]:
    from mutagent.config import EngineConfig
    from mutagent.engine.orchestration.runner import Engine
    from mutagent.explore.results import Exploration
    from mutagent.reports.exploration import exploration_json
    from mutagent.store import Store

    rows = []
    last: Exploration | None = None
    for number in range(repeat):
        with scratch("explore") as parent:
            target = copy_sample_agent(parent)
            engine = Engine(
                EngineConfig(root=target, workers=workers, explore_only=True), Console(file=io.StringIO())
            )
            stats = engine.run()
            store = Store.open(target)
            try:
                last = Exploration.from_json(json.loads(store.get_meta("exploration") or "{}"))
            finally:
                store.close()
            assert stats.exploration is not None
            rows.append((stats.baseline_wall, stats.exploration[1], last))
            console.print(
                f"explore run {number + 1}: baseline {stats.baseline_wall:.1f}s, "
                f"exploration {stats.exploration[1]:.1f}s"
            )
    assert last is not None
    lines = [
        "### Exploration's cost on the sample agent",
        "",
        f"`EngineConfig(explore_only=True, workers={workers})` on a fresh copy (what `mutagent "
        "explore` runs), "
        f"{repeat} runs. The baseline's wall is its measured batches (per-test coverage); the control run "
        "overlaps the mutants in `mutagent run` and is not part of it. The budget is in worker seconds: "
        "1x the baseline's wall time x the workers x 0.85 (the default `--explore-budget 1`; the rest is "
        "the engine's work around each run).",
        "",
        "| run | baseline wall | exploration wall | exploration / baseline | explored runs "
        "| worker s spent / budget | runs left out |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for index, (baseline, explored, exploration) in enumerate(rows, 1):
        lines.append(
            f"| {index} | {baseline:.1f} s | {explored:.1f} s | {explored / baseline:.2f}x "
            f"| {len(exploration.runs)} | "
            f"{exploration.spent:.1f} / {exploration.budget:.1f} | {exploration.left_out} |"
        )
    document = exploration_json(last)
    shared = document["shared"]
    lines += [
        "",
        "### The faults the sample agent handles, and the handling code exploration found",
        "",
        "Lines that run only under the fault (the last run above); lines most faults run (a failed "
        'attempt\'s common path) are listed once below the table. "went on": the loop returned and '
        'the test\'s own checks, written for the script without the fault, disagreed; "recovered": '
        'the test passed with the fault; "gave up": the agent\'s own error.',
        "",
        "| fault | handling code found (beyond the shared path) | what the loop did |",
        "| --- | --- | --- |",
    ]
    for report in last.by_fault():
        own = report.where({f: set(v) for f, v in shared.items()}) or (
            "(the shared path)" if report.handling else "none"
        )
        did = ", ".join(f"{verdict} {len(tests)}" for verdict, tests in report.verdicts.items())
        lines.append(f"| {report.label} | {own} | {did} |")
    common = "; ".join(f"{file}:{', '.join(map(str, v))}" for file, v in shared.items())
    lines += ["", f"Shared path: {common}", ""]
    return lines


# --- the sample agent: delete guards, suggest, back to 100 % --------------------------------------
def _delete_functions(path: Path, names: set[str]) -> None:
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    body = [n for n in module.body if not (isinstance(n, cst.FunctionDef) and n.name.value in names)]
    path.write_text(module.with_changes(body=body).code, encoding="utf-8")


def sample_section(workers: int) -> list[str]:
    from mutagent.reports.guards import guard_map
    from mutagent.reports.stats import undetected_mutants
    from mutagent.store import load_run_data

    with scratch("suggest-sample") as parent:
        target = copy_sample_agent(parent)
        wall_full, full_output = mutagent("run", str(target), "--workers", str(workers), cwd=parent)
        full = load_run_data(target)
        console.print(f"full run: {score_line(full_output)} in {wall_full:.0f}s")
        doomed: dict[str, set[str]] = {}
        alone: set[str] = set()
        for entry in guard_map(full):
            file, _, name = entry.test.partition("::")
            if file in FAULT_SUITES and entry.only:
                doomed.setdefault(file, set()).add(name.split("[")[0])
                alone |= {m.id for m in entry.only}
        deleted = sorted(f"{file}::{name}" for file, names in doomed.items() for name in names)
        for file, names in doomed.items():
            _delete_functions(target / file, names)
        _, output = mutagent("run", str(target), "--workers", str(workers), cwd=parent)
        reduced = load_run_data(target)
        survivors = undetected_mutants(reduced)
        console.print(f"without {len(deleted)} tests: {score_line(output)}; {len(survivors)} survivors")
        write = target / "tests" / "test_suggested.py"
        wall_suggest, suggested = mutagent(
            "suggest", str(target), "--workers", str(workers), "--write", str(write), cwd=parent
        )
        data = load_run_data(target)
        verified = [m for m in survivors if m.id in data.suggestions]
        written = write.read_text(encoding="utf-8") if write.exists() else ""
        tests = written.count("\ndef test_")
        console.print(
            f"suggest: {len(verified)} of {len(survivors)} verified in {wall_suggest:.0f}s; "
            f"{tests} tests written"
        )
        passes = []
        for _ in range(5):
            run = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    str(write.relative_to(target)),
                ],
                cwd=target,
                env=bench_env(),
                capture_output=True,
                text=True,
            )
            passes.append(run.returncode == 0)
        _, output = mutagent("run", str(target), "--workers", str(workers), cwd=parent)
        final = score_line(output)
        console.print(f"with the written tests: {final}; 5 plain runs passed: {passes}")
        lines = [
            "### mutagent suggest on the sample agent, without the tests that alone guard its fault handling",
            "",
            f"1. `mutagent run sample_agent --workers {workers}`: {score_line(full_output)} "
            f"({len(full.mutants)} agent mutants).",
            f"2. Deleted the {len(deleted)} test functions of {', '.join(FAULT_SUITES)} whose guard-map "
            "entry "
            f"guards an agent mutant alone ({len(alone)} mutants guarded alone): "
            + ", ".join(f"`{t.split('::')[1]}`" for t in deleted)
            + ".",
            f"3. `mutagent run` again: {len(survivors)} survivors ("
            + ", ".join(sorted({m.operator for m in survivors}))
            + ").",
            f"4. `mutagent suggest sample_agent --write tests/test_suggested.py`: **{len(verified)} of "
            f"{len(survivors)} survivors got a verified test** ({wall_suggest:.0f} s; each passed 5 runs on "
            "the "
            f"original and failed on its mutant); {tests} test functions written (a test that kills two "
            "mutants is written once).",
            f"5. The written module with plain `pytest`, 5 times in a row on the original: "
            f"{'all 5 passed' if all(passes) else f'{sum(passes)} of 5 passed'}.",
            f"6. `mutagent run` with it: {final}.",
            "",
            "| survivor | verified test (model test, fault) |",
            "| --- | --- |",
        ]
        for mutant in survivors:
            s = data.suggestions.get(mutant.id)
            what = f"`{s.test_name}` ({s.fault or 'its own script'})" if s else "none: recipe in words"
            lines.append(f"| {mutant.file}:{mutant.location.start_line} {mutant.operator} | {what} |")
        lines.append("")
        return lines


def responses_section(workers: int) -> list[str]:
    from mutagent.reports.stats import undetected_mutants
    from mutagent.store import load_run_data

    with scratch("suggest-responses") as parent:
        target = copy_tree(RESPONSES_AGENT, parent / "responses_agent")
        _, output = mutagent("run", str(target), "--workers", str(workers), cwd=parent)
        survivors = undetected_mutants(load_run_data(target))
        wall, _ = mutagent("suggest", str(target), "--workers", str(workers), cwd=parent)
        data = load_run_data(target)
        verified = [m for m in survivors if m.id in data.suggestions]
        share = len(verified) / len(survivors) if survivors else 1.0
        console.print(f"responses agent: {score_line(output)}; {len(verified)} of {len(survivors)} verified")
        lines = [
            "### mutagent suggest on the Responses agent (`tests/fixtures/responses_agent`)",
            "",
            f"`mutagent run`: {score_line(output)}. `mutagent suggest` ({wall:.0f} s): **{len(verified)} of "
            f"{len(survivors)} survivors ({share:.0%}) got a verified test** (target: at least 70 %); every "
            "hint "
            'names "OpenAI Responses via the SDK, streaming".',
            "",
            "| survivor | verified test | or why not |",
            "| --- | --- | --- |",
        ]
        for mutant in survivors:
            s = data.suggestions.get(mutant.id)
            lines.append(
                f"| {mutant.file}:{mutant.location.start_line} {mutant.operator} | "
                + (f"`{s.test_name}` ({s.fault or 'its own script'}) |  |" if s else " | recipe in words |")
            )
        lines.append("")
        return lines


def write_section(parts: dict[str, list[str]], machine: dict[str, Any]) -> None:
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
    start = text.find(f"\n{HEADING}")
    previous = text[start:] if start >= 0 else ""
    kept: dict[str, list[str]] = {}
    titles = (
        ("explore", "### Exploration"),
        ("sample", "### mutagent suggest on the sample"),
        ("responses", "### mutagent suggest on the Responses"),
    )
    for key, title in titles:
        begin = previous.find(title)
        if begin >= 0 and key not in parts:
            # A part may hold several ### subsections (exploration has its fault table): it ends
            # where the next part's title starts, not at its own next subsection.
            starts = [previous.find("\n" + other, begin + 1) for _, other in titles if other != title]
            ends = [at for at in starts if at >= 0]
            end = min(ends) if ends else -1
            kept[key] = previous[begin : end if end >= 0 else len(previous)].rstrip("\n").splitlines() + [""]
    merged = {**kept, **parts}
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    body = [
        HEADING,
        "",
        f"Written by `python bench/suggest_acceptance.py` (last: {when}, {machine.get('cpu', '?')}, "
        f"{machine.get('nproc', '?')} cores, load average at the start "
        f"{machine.get('load average (1, 5, 15 min)', '?')}); `run.py` keeps this section when it "
        "rewrites the file.",
        "",
    ]
    for key in ("explore", "sample", "responses"):
        body += merged.get(key, [])
    head = text[:start] if start >= 0 else text.rstrip("\n") + "\n"
    RESULTS.write_text(head + "\n" + "\n".join(body).rstrip("\n") + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only", default="explore,sample,responses", help="comma list: explore, sample, responses"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2, help="exploration runs to measure (default 2)")
    args = parser.parse_args()
    wanted = [p.strip() for p in args.only.split(",") if p.strip()]
    machine = machine_info()
    parts: dict[str, list[str]] = {}
    if "explore" in wanted:
        parts["explore"] = explore_section(args.workers, args.repeat)
    if "sample" in wanted:
        parts["sample"] = sample_section(args.workers)
    if "responses" in wanted:
        parts["responses"] = responses_section(args.workers)
    write_section(parts, machine)
    console.print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
