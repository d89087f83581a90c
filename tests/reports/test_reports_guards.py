"""Guard map and kill matrix: which test alone guards which path, and a matrix that fits a terminal."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

from rich.console import Console
from testkit.sample_runs import SAMPLE_TESTS, large_run_data, sample_run_data

from mutagent.model import MutantResult, Status
from mutagent.model import TestInfo as Info
from mutagent.reports.guards import Cell, guard_map, kill_matrix, sole_killer
from mutagent.reports.matrix_view import render_guard_map, render_kill_matrix, short_test_names
from mutagent.reports.terminal import render_terminal

T = "tests/test_loop.py::"


def ops(mutants) -> set[str]:
    return {m.operator for m in mutants}


def by_test(data):
    return {entry.test: entry for entry in guard_map(data)}


def test_only_killers_match_the_hand_computed_answer():
    entries = by_test(sample_run_data())
    assert ops(entries[T + "test_tool_result_sent_back"].only) == {"truncate-tool-result"}
    assert ops(entries[T + "test_retry_after_mid_stream_disconnect"].only) == {
        "swallow-disconnect",
        "skip-backoff",
    }
    assert ops(entries[T + "test_missing_message_stop_is_retried"].only) == {"drop-stop-check"}
    assert ops(entries[T + "test_malformed_json_gives_up_after_bounded_retries"].only) == {"unbounded-retry"}
    assert ops(entries["tests/test_tools.py::test_allow_list"].only) == {"tool-name-limit"}
    # ignore-retry-after is killed by two tests: both kill it, neither guards it alone
    for test in (T + "test_429_respects_retry_after", T + "test_backoff_grows[3]"):
        assert ops(entries[test].kills) == {"ignore-retry-after"}
        assert entries[test].only == []


def test_a_test_that_kills_nothing_guards_nothing():
    entries = by_test(sample_run_data())
    smoke = entries["tests/test_smoke.py::test_imports"]
    assert smoke.guards_nothing and smoke.covers == 1
    assert [e.test for e in entries.values() if e.guards_nothing] == ["tests/test_smoke.py::test_imports"]


def test_every_test_is_listed_in_suite_order():
    assert [e.test for e in guard_map(sample_run_data())] == list(SAMPLE_TESTS)


def test_sole_killer_is_not_claimed_when_other_covering_tests_never_ran():
    data = sample_run_data()
    mutant = next(m for m in data.mutants if m.operator == "drop-stop-check")
    result = data.results[mutant.id]
    # the engine stopped at the first failure: other covering tests were not run
    data.results[mutant.id] = MutantResult(
        mutant.id,
        Status.KILLED,
        killed_by=result.killed_by,
        covered_by=result.covered_by,
        tests_run=[T + "test_missing_message_stop_is_retried"],
    )
    assert sole_killer(data, mutant) is None
    entry = by_test(data)[T + "test_missing_message_stop_is_retried"]
    assert mutant not in entry.only and mutant in entry.unverified_only
    row = kill_matrix(data).tests.index(T + "test_tool_result_sent_back")
    column = kill_matrix(data).columns.index(mutant)
    assert kill_matrix(data).rows[row][column] is Cell.NOT_RUN


def test_matrix_cells_follow_the_results():
    data = sample_run_data()
    matrix = kill_matrix(data)
    assert len(matrix.rows) == len(SAMPLE_TESTS)
    assert all(len(row) == len(matrix.columns) for row in matrix.rows)
    # ignored, compile and runtime errors are not guardable: left out and counted
    assert matrix.excluded == 3 and len(matrix.columns) == len(data.mutants) - 3
    for i, test in enumerate(matrix.tests):
        for j, mutant in enumerate(matrix.columns):
            result = data.results[mutant.id]
            cell = matrix.rows[i][j]
            if test in result.killed_by:
                assert cell in (Cell.SOLE, Cell.KILLED)
                assert (cell is Cell.SOLE) == (len(result.killed_by) == 1)
            elif test in result.covered_by:
                assert cell is Cell.COVERED
            else:
                assert cell is Cell.NONE
    # columns are grouped: each operator's columns are contiguous
    labels = [g.label for g in matrix.groups]
    assert len(labels) == len(set(labels))


def test_30_by_100_matrix_fits_a_120_column_terminal():
    data = large_run_data(n_tests=30, n_mutants=100)
    matrix = kill_matrix(data)
    console = Console(record=True, width=120, color_system=None)
    console.print(render_kill_matrix(matrix, console.width), crop=False)
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= 120
    # every test appears once per block, and across the blocks each row shows every column once
    # the names do not fit beside the cells: rows carry numbers, and the full names follow, uncut
    short = short_test_names(matrix.tests)
    for number in range(1, 31):
        assert f"{number:>2} {short[number - 1]}" in lines
    for number in range(1, 31):
        rows = [line for line in lines if line.startswith(f"{number:>2} ") and "test_" not in line]
        assert rows, number
        label_width = lines[2].index(lines[2].strip()[0])  # the group-key header starts after the labels
        cells = "".join(row[label_width:].replace(" ", "") for row in rows)
        expected = "".join(c.value for c in matrix.rows[number - 1]).replace(" ", "")
        assert sorted(cells) == sorted(expected)
    blocks = sum(1 for line in lines if re.match(r"^\s*(mutant )?status [KTSN]", line))
    assert 1 <= blocks <= 3  # 100 columns do not fit 120 chars next to the labels, but 3 blocks do
    assert len(lines) <= blocks * 33 + 12 + 31  # one char per cell (and one line per full name)
    assert "…" not in "\n".join(lines)  # no name cut
    legend = "\n".join(lines).replace("\u00a0", " ")  # legend items are glued with no-break spaces
    assert "columns: a drop-stop-check (16)" in legend and "# killed by this test only" in legend


def test_matrix_groups_by_file_on_request():
    matrix = kill_matrix(large_run_data(), group_by="file")
    assert [g.label for g in matrix.groups] == sorted({m.file for m in matrix.columns})


def test_guard_map_render_flags_the_useless_test():
    console = Console(record=True, width=140, color_system=None)
    console.print(render_guard_map(guard_map(sample_run_data())))
    text = console.export_text()
    assert "tests/test_smoke.py::test_imports  kills 0  GUARDS NOTHING (covers 1, kills none)" in text
    assert "only it: agent/loop.py:24 drop-stop-check" in text
    assert text.count("GUARDS NOTHING") == 1


def test_terminal_report_shows_survivor_diff_and_tests():
    console = Console(record=True, width=120, color_system=None)
    render_terminal(sample_run_data(), console, verbose=True)
    text = console.export_text()
    assert "mutation score 70.0%" in text
    assert "-MAX_RETRIES = 3" in text and "+MAX_RETRIES = 4" in text
    assert "no test reaches this code" in text
    assert "Kill matrix" in text and "Guard map" in text
    assert "retry-budget" in text and "truncate-tool-result" in text


def test_many_survivors_are_listed_compactly_past_the_limit():
    data = large_run_data()
    survivors = [
        m for m in data.mutants if data.results[m.id].status in (Status.SURVIVED, Status.NO_COVERAGE)
    ]
    console = Console(record=True, width=120, color_system=None)
    render_terminal(data, console, matrix=False, guards=False, survivor_details=5)
    text = console.export_text()
    assert text.count("\n── ") == 5  # five survivors in full, each under its heading rule
    assert f"... and {len(survivors) - 5} more" in text
    for mutant in survivors:  # every survivor still named, with the id `mutagent show` takes
        assert f"[{mutant.id}]" in text


def test_the_operator_table_keeps_its_headers_in_an_80_column_log() -> None:
    """CI logs are often 80 columns: long operator names fold, the numbers' headers never shorten."""
    from mutagent.reports.terminal import render_summary

    data = sample_run_data()  # every status, so every count column is present
    long_name = "accept-truncated-tool-arguments-in-a-very-long-operator-name"
    data.mutants[0] = replace(data.mutants[0], operator=long_name)
    console = Console(width=80, record=True, color_system=None)
    console.print(render_summary(data, width=80))
    lines = console.export_text().splitlines()
    header = next(line for line in lines if line.strip().startswith("operator"))
    assert header.split() == [
        "operator",
        "mutants",
        "killed",
        "survived",
        "timeout",
        "no",
        "cov",
        "other",
        "score",
    ]
    assert all(len(line) <= 80 for line in lines)
    assert not any("…" in line for line in lines)  # the long name is folded, never cut
    body = lines[lines.index(header) + 2 :]
    assert long_name in "".join(line.split()[0] for line in body if line.strip())
    assert any(line.rstrip().endswith("%") for line in lines[3:])  # scores printed whole


def test_guard_claims_follow_what_each_test_ran_on():
    """Issue 26: only a test run on every mutant it covers can be said to guard nothing."""
    data = sample_run_data()
    smoke = "tests/test_smoke.py::test_imports"
    skipped = "tests/test_loop.py::test_after_the_first_kill"
    data.tests.append(Info(skipped, 0.01))
    stopped = next(m for m in data.mutants if m.operator == "drop-stop-check")
    result = data.results[stopped.id]
    # --fast: the first killer stopped the mutant; the other covering tests never ran on it
    data.results[stopped.id] = replace(
        result, covered_by=[*result.covered_by, skipped], tests_run=result.killed_by[:1]
    )
    entry = by_test(data)[skipped]
    assert entry.unproven and not entry.guards_nothing and (entry.covers, entry.ran_on) == (1, 0)
    assert entry.idle_reason() == "kills none of the 0 it ran on, not run on 1 it covers"
    assert [e.test for e in by_test(data).values() if e.guards_nothing] == [smoke]
    # a test that runs no mutated line has nothing to guard: it is not said to guard nothing
    data.tests.append(Info("tests/test_other.py::test_unrelated", 0.01))
    unrelated = by_test(data)["tests/test_other.py::test_unrelated"]
    assert unrelated.reaches_nothing and not unrelated.guards_nothing and not unrelated.unproven
    assert by_test(data)[smoke].guards_nothing  # ran on the one mutant it covers, killed none
    text = " ".join(rendered_compact(data).split())
    assert "tests/test_other.py::test_unrelated" not in text
    assert "1 test with no mutant to guard" in text
    assert "not judged" in text and "a timeout or a crash ended those mutants" in text
    data.fast = True
    assert "--fast stopped those mutants at their first kill" in " ".join(rendered_compact(data).split())


def rendered_compact(data) -> str:
    console = Console(record=True, width=100, color_system=None)
    render_terminal(data, console)
    return console.export_text()


def test_a_parametrised_test_is_named_once_with_its_count():
    from mutagent.reports.testids import collapse, function_of

    assert function_of("tests/t.py::TestX::test_y[a::b-[1]]") == "tests/t.py::TestX::test_y"
    assert function_of("tests/t.py::test_plain") == "tests/t.py::test_plain"
    ids = [f"t.py::test_a[{i}]" for i in range(3)] + ["t.py::test_b", "t.py::test_c[only]"]
    suite = Counter({"t.py::test_a": 5, "t.py::test_b": 1, "t.py::test_c": 2})
    assert collapse(ids, suite) == ["t.py::test_a (3 of 5 cases)", "t.py::test_b", "t.py::test_c[only]"]
    assert collapse(ids) == ["t.py::test_a (3 cases)", "t.py::test_b", "t.py::test_c[only]"]
