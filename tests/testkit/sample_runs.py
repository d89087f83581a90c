"""Hand-built :class:`RunData` for the report tests and for trying the reports without a run.

``sample_run_data()`` is a small but realistic agent loop with one mutant of every status and a
test that guards nothing; ``large_run_data()`` is a seeded synthetic run (30 tests x 100 mutants
by default) for layout checks. Both build real patches, so ``mutant.mutated_source`` and the
diffs are exact.
"""

from __future__ import annotations

import hashlib
import random

from mutagent.model import Location, Mutant, MutantResult, RunData, Status, TestInfo, TextPatch

LOOP_FILE = "agent/loop.py"
LOOP_SOURCE = '''\
"""A tiny streaming agent loop: the <kind> of code mutagent targets & reports on."""
import time

MAX_RETRIES = 3


class StreamCut(Exception):
    """The connection dropped before message_stop."""


def backoff(attempt, retry_after=None):
    if retry_after is not None:
        return float(retry_after)
    return min(2 ** attempt * 0.1, 5.0)


def run_turn(client, messages):
    for attempt in range(MAX_RETRIES):
        try:
            events = list(client.stream(messages))
        except StreamCut:
            time.sleep(backoff(attempt))
            continue
        if not events or events[-1]["type"] != "message_stop":
            time.sleep(backoff(attempt))
            continue
        return events
    raise RuntimeError("model did not finish after retries")


def tool_result(call, output):
    return {"type": "tool_result", "tool_use_id": call["id"], "content": output[:4000]}


def cancel(stream):
    stream.close()
'''

TOOLS_FILE = "agent/tools.py"
TOOLS_SOURCE = """\
def allowed(name, allow_list):
    return name in allow_list and len(name) <= 64
"""

T = "tests/test_loop.py::"
SAMPLE_TESTS = (
    T + "test_tool_result_sent_back",
    T + "test_retry_after_mid_stream_disconnect",
    T + "test_missing_message_stop_is_retried",
    T + "test_429_respects_retry_after",
    T + "test_malformed_json_gives_up_after_bounded_retries",
    T + "test_backoff_grows[3]",
    "tests/test_tools.py::test_allow_list",
    "tests/test_smoke.py::test_imports",
)


def _line_offsets(source: str) -> list[int]:
    offsets = [0]
    for index, char in enumerate(source):
        if char == "\n":
            offsets.append(index + 1)
    return offsets


def make_mutant(
    file: str,
    source: str,
    operator: str,
    line: int,
    original: str,
    replacement: str,
    *,
    scope: tuple[str, ...] = (),
    description: str = "",
    occurrence: int = 0,
    ignored_reason: str | None = None,
) -> Mutant:
    """A mutant replacing the ``occurrence``-th ``original`` on 1-based ``line`` by ``replacement``."""
    start_of_line = _line_offsets(source)[line - 1]
    line_text = source[start_of_line:].split("\n", 1)[0]
    col = -1
    for _ in range(occurrence + 1):
        col = line_text.index(original, col + 1)
    start = start_of_line + col
    digest = hashlib.sha256(
        "\x00".join(
            [file, ".".join(scope), operator, original, replacement, str(line), str(occurrence)]
        ).encode()
    ).hexdigest()[:12]
    return Mutant(
        id=digest,
        operator=operator,
        file=file,
        scope=scope,
        location=Location(line, col, line, col + len(original)),
        original=original,
        replacement=replacement,
        description=description or f"{original} -> {replacement}",
        patch=TextPatch(start, start + len(original), replacement),
        ignored_reason=ignored_reason,
    )


def sample_run_data(root: str = "/tmp/sample-agent") -> RunData:
    """A realistic small run: every status, a sole guard per agent path, one test guarding nothing."""
    ok, lp = LOOP_SOURCE, LOOP_FILE
    specs = [
        # (line, original, replacement, operator, scope, occurrence, status, killed_by, covered_by, extra)
        (22, "backoff(attempt)", "0", "skip-backoff", ("run_turn",), 0, Status.KILLED, [1], [1, 4], {}),
        (21, "StreamCut", "()", "swallow-disconnect", ("run_turn",), 0, Status.KILLED, [1], [0, 1, 2, 4], {}),
        (
            24,
            'events[-1]["type"] != "message_stop"',
            "False",
            "drop-stop-check",
            ("run_turn",),
            0,
            Status.KILLED,
            [2],
            [0, 1, 2, 4],
            {},
        ),
        (
            32,
            "output[:4000]",
            "output[:10]",
            "truncate-tool-result",
            ("tool_result",),
            0,
            Status.KILLED,
            [0],
            [0],
            {},
        ),
        (
            13,
            "float(retry_after)",
            "None",
            "ignore-retry-after",
            ("backoff",),
            0,
            Status.KILLED,
            [3, 5],
            [3, 5],
            {},
        ),
        (4, "3", "4", "retry-budget", (), 0, Status.SURVIVED, [], [0, 1, 2, 3, 4, 5, 7], {}),
        (14, "min(", "max(", "backoff-cap", ("backoff",), 0, Status.SURVIVED, [], [1, 2, 5], {}),
        (36, "stream.close()", "None", "leak-stream", ("cancel",), 0, Status.NO_COVERAGE, [], [], {}),
        (
            18,
            "range(MAX_RETRIES)",
            "iter(int, 1)",
            "unbounded-retry",
            ("run_turn",),
            0,
            Status.TIMEOUT,
            [4],
            [0, 1, 2, 3, 4],
            {"status_reason": "exceeded 5.0s (baseline 0.4s)"},
        ),
        (
            27,
            "return events",
            "return events[:-1]",
            "drop-last-event",
            ("run_turn",),
            0,
            Status.RUNTIME_ERROR,
            [],
            [0],
            {
                "error": 'Traceback (most recent call last):\n  File "worker.py", line 88, in run\n'
                "    os.fork()\nBlockingIOError: [Errno 11] Resource temporarily unavailable\n"
            },
        ),
        (
            28,
            "RuntimeError",
            "RuntimeError(",
            "raise-type",
            ("run_turn",),
            0,
            Status.COMPILE_ERROR,
            [],
            [],
            {"error": "SyntaxError: '(' was never closed"},
        ),
        (
            25,
            "backoff(attempt)",
            "0",
            "skip-backoff",
            ("run_turn",),
            0,
            Status.IGNORED,
            [],
            [],
            {"ignored": "pragma: no mutate (we do not back off on bad streams on purpose)"},
        ),
    ]
    mutants: list[Mutant] = []
    results: dict[str, MutantResult] = {}
    for line, original, replacement, operator, scope, occurrence, status, killed, covered, extra in specs:
        mutant = make_mutant(
            lp,
            ok,
            operator,
            line,
            original,
            replacement,
            scope=scope,
            occurrence=occurrence,
            ignored_reason=extra.get("ignored"),
        )
        mutants.append(mutant)
        results[mutant.id] = MutantResult(
            mutant_id=mutant.id,
            status=status,
            killed_by=[SAMPLE_TESTS[i] for i in killed],
            covered_by=[SAMPLE_TESTS[i] for i in covered],
            tests_run=[SAMPLE_TESTS[i] for i in covered],
            duration=0.05 * (1 + len(covered)),
            error=extra.get("error"),
            status_reason=extra.get("status_reason") or extra.get("ignored"),
        )
    tools = make_mutant(TOOLS_FILE, TOOLS_SOURCE, "tool-name-limit", 2, "64", "65", scope=("allowed",))
    mutants.append(tools)
    results[tools.id] = MutantResult(
        tools.id,
        Status.KILLED,
        killed_by=[SAMPLE_TESTS[6]],
        covered_by=[SAMPLE_TESTS[6]],
        tests_run=[SAMPLE_TESTS[6]],
        duration=0.02,
    )
    tests = [TestInfo(nodeid, duration=0.01 * (i + 1)) for i, nodeid in enumerate(SAMPLE_TESTS)]
    return RunData(
        root=root,
        mutants=mutants,
        results=results,
        tests=tests,
        sources={LOOP_FILE: LOOP_SOURCE, TOOLS_FILE: TOOLS_SOURCE},
    )


LARGE_OPERATORS = (
    "skip-backoff",
    "drop-stop-check",
    "swallow-disconnect",
    "truncate-tool-result",
    "ignore-retry-after",
    "retry-budget",
    "drop-tool-call",
    "unbounded-retry",
)


def large_run_data(n_tests: int = 30, n_mutants: int = 100, n_files: int = 4, seed: int = 0) -> RunData:
    """A seeded synthetic run for layout checks: realistic shape, arbitrary but fixed outcomes."""
    rng = random.Random(seed)
    tests = [
        TestInfo(f"tests/test_{f'area{i % 5}'}.py::test_agent_behaviour_number_{i:02d}", duration=0.01)
        for i in range(n_tests)
    ]
    per_file = -(-n_mutants // n_files)
    sources = {
        f"agent/module_{f}.py": "".join(f"value_{i} = compute({i}) + 1\n" for i in range(per_file))
        for f in range(n_files)
    }
    statuses = (
        [Status.KILLED] * 12
        + [Status.SURVIVED] * 3
        + [Status.NO_COVERAGE, Status.TIMEOUT, Status.IGNORED, Status.RUNTIME_ERROR]
    )
    mutants: list[Mutant] = []
    results: dict[str, MutantResult] = {}
    for n in range(n_mutants):
        file = f"agent/module_{n % n_files}.py"
        line = n // n_files + 1
        operator = LARGE_OPERATORS[rng.randrange(len(LARGE_OPERATORS))]
        mutant = make_mutant(file, sources[file], operator, line, "+ 1", "- 1", scope=(f"f{line}",))
        status = statuses[rng.randrange(len(statuses))]
        covered: list[str] = []
        killed: list[str] = []
        if status not in (Status.NO_COVERAGE, Status.IGNORED):
            covered = [t.nodeid for t in rng.sample(tests, rng.randint(1, 6))]
        if status in (Status.KILLED, Status.TIMEOUT):
            killed = covered[: rng.choice((1, 1, 2, 3))]
        mutants.append(mutant)
        results[mutant.id] = MutantResult(
            mutant.id,
            status,
            killed_by=killed,
            covered_by=covered,
            tests_run=list(covered),
            duration=0.1,
            error="Traceback ...\nOSError: boom" if status is Status.RUNTIME_ERROR else None,
            status_reason="pragma" if status is Status.IGNORED else None,
        )
    return RunData(root="/tmp/large-agent", mutants=mutants, results=results, tests=tests, sources=sources)


def sample_fault_log() -> list[dict[str, object]]:
    """A fault log (``RunData.faults``) for :func:`sample_run_data`'s tests, as the baseline records it."""
    steps = [
        (0, "tool-call", "complete"),
        (0, "ok", "complete"),
        (1, "cut", "mid-text"),
        (1, "ok", "complete"),
        (2, "no-stop", "after-finish"),
        (2, "ok", "complete"),
        (3, "http-429+retry-after", "before-first-byte"),
        (3, "ok", "complete"),
        (4, "malformed", "mid-text"),
        (4, "malformed", "mid-text"),
        (4, "malformed", "mid-text"),
        (5, "http-503", "before-first-byte"),
        (5, "ok", "complete"),
    ]
    log: list[dict[str, object]] = []
    for test, fault, position in steps:
        step = sum(1 for entry in log if entry["test"] == SAMPLE_TESTS[test])
        log.append(
            {
                "test": SAMPLE_TESTS[test],
                "dialect": "anthropic",
                "behaviour": fault,
                "fault": fault,
                "position": position,
                "stream": position != "before-first-byte",
                "step": step,
            }
        )
    return log


PARAMETRISED_FAMILIES = {"test_stream": 32, "test_retry_statuses": 16, "test_tool_results": 8}


def parametrised_run_data(mutant_count: int = 28, survived: int = 4, uncovered: int = 2) -> RunData:
    """A run of the sample agent's real mutants (operators, hints and diffs as a run has them)
    against a parametrised suite: ``test_stream`` has 32 cases, ``test_retry_statuses`` 16,
    ``test_tool_results`` 8, plus two smoke tests that reach no mutant. Every mutant is covered by
    all 32 ``test_stream`` cases and one other family; cases 1-3 of each family kill, the other
    cases kill nothing. The first ``survived`` mutants survive, the next ``uncovered`` are
    NoCoverage, the rest are killed (issue 26: such a run printed each survivor's 32 ids)."""
    from pathlib import Path

    from mutagent.mutation.generate import generate_for_source
    from mutagent.mutation.registry import select_operators

    agent = Path(__file__).resolve().parents[2] / "sample_agent"
    operators = select_operators("agent")
    sources = {
        name: (agent / name).read_text(encoding="utf-8") for name in ("loop.py", "tools.py", "client.py")
    }
    mutants = [m for name, text in sources.items() for m in generate_for_source(text, name, operators)]
    mutants = [m for m in mutants if m.ignored_reason is None][:mutant_count]
    tests = [
        TestInfo(f"tests/{family}.py::{family}[case-{i}]", 0.01)
        for family, cases in PARAMETRISED_FAMILIES.items()
        for i in range(cases)
    ]
    tests += [
        TestInfo("tests/test_smoke.py::test_imports", 0.01),
        TestInfo("tests/test_smoke.py::test_version", 0.01),
    ]

    def cases(family: str) -> list[str]:
        return [t.nodeid for t in tests if f"::{family}[" in t.nodeid]

    results: dict[str, MutantResult] = {}
    for index, mutant in enumerate(mutants):
        covered = cases("test_stream") + cases("test_retry_statuses" if index % 2 else "test_tool_results")
        if index < survived:
            results[mutant.id] = MutantResult(
                mutant.id, Status.SURVIVED, covered_by=covered, tests_run=covered
            )
        elif index < survived + uncovered:
            results[mutant.id] = MutantResult(mutant.id, Status.NO_COVERAGE)
        else:
            killers = [t for t in covered if t.endswith(("[case-1]", "[case-2]", "[case-3]"))]
            results[mutant.id] = MutantResult(
                mutant.id, Status.KILLED, killed_by=killers, covered_by=covered, tests_run=covered
            )
    return RunData(root=str(agent), mutants=mutants, results=results, tests=tests, sources=sources)
