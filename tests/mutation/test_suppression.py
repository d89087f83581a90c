"""Suppression comments mark mutants Ignored (with the reason) instead of hiding them.

mutmut's ``# pragma: no mutate`` and mutagent's ``# mutagent: skip[=operators] reason`` work on
the mutated line, on the first line or trailing comment of the enclosing statement, and on the
header of an enclosing block; an operator-specific directive leaves other operators alone.
"""

from __future__ import annotations

import textwrap

import pytest

from mutagent.model import Mutant
from mutagent.mutation.generate import generate_for_source
from mutagent.mutation.registry import get_operator
from mutagent.mutation.suppress import directives_by_line, parse_directive

NUMBER = get_operator("generic-number")
STRING = get_operator("generic-string")
MATCH = get_operator("generic-match")


def _generate(source: str, *operators: object) -> list[Mutant]:
    return generate_for_source(textwrap.dedent(source), "mod.py", list(operators or (NUMBER, STRING)))


def _by_line(mutants: list[Mutant]) -> dict[int, set[str | None]]:
    lines: dict[int, set[str | None]] = {}
    for mutant in mutants:
        lines.setdefault(mutant.location.start_line, set()).add(mutant.ignored_reason)
    return lines


def _reasons(mutants: list[Mutant], operator: str, line: int) -> set[str | None]:
    return {m.ignored_reason for m in mutants if m.operator == operator and m.location.start_line == line}


def test_pragma_no_mutate_on_the_line_ignores_only_that_line() -> None:
    mutants = _generate(
        """\
        def f():
            a = 1  # pragma: no mutate
            b = 2
            return a + b
        """
    )
    lines = _by_line(mutants)
    assert lines[2] == {"pragma: no mutate"}
    assert lines[3] == {None}


def test_mutagent_skip_without_operators_ignores_every_operator() -> None:
    mutants = _generate(
        """\
        def f():
            return g(3, "x")  # mutagent: skip
        """
    )
    assert {m.operator for m in mutants} == {"generic-number", "generic-string"}
    assert {m.ignored_reason for m in mutants} == {"mutagent: skip"}


def test_skip_for_one_operator_keeps_the_others_and_reports_the_reason() -> None:
    mutants = _generate(
        """\
        def f():
            return g(3, "x")  # mutagent: skip=generic-number the count is cosmetic
        """
    )
    assert _reasons(mutants, "generic-number", 2) == {"the count is cosmetic"}
    assert _reasons(mutants, "generic-string", 2) == {None}


def test_skip_for_several_operators() -> None:
    mutants = _generate(
        """\
        def f():
            return g(3, "x")  # mutagent: skip=generic-string,generic-number both fine
        """
    )
    assert {m.ignored_reason for m in mutants} == {"both fine"}


def test_directive_on_a_def_header_covers_the_whole_function() -> None:
    mutants = _generate(
        """\
        def f():  # mutagent: skip=generic-number timing constants
            a = 1
            if a:
                return a + 2
            return "s"

        def g():
            return 3
        """
    )
    assert _reasons(mutants, "generic-number", 2) == {"timing constants"}
    assert _reasons(mutants, "generic-number", 4) == {"timing constants"}
    assert _reasons(mutants, "generic-string", 5) == {None}
    assert _reasons(mutants, "generic-number", 8) == {None}


def test_directive_after_the_colon_of_a_multi_line_header() -> None:
    mutants = _generate(
        """\
        def f(
            x,
            y,
        ):  # pragma: no mutate
            return x + 1

        def g(x):
            return x + 1
        """
    )
    assert _reasons(mutants, "generic-number", 5) == {"pragma: no mutate"}
    assert _reasons(mutants, "generic-number", 8) == {None}


@pytest.mark.parametrize(
    "header",
    ["if x:", "for i in x:", "while x:", "with x:", "try:"],
)
def test_directive_on_a_block_header_covers_the_block_only(header: str) -> None:
    tail = "\n    except E:\n        pass" if header == "try:" else ""
    source = f"def f(x):\n    {header}  # pragma: no mutate\n        y = 1{tail}\n    return 2\n"
    mutants = generate_for_source(source, "mod.py", [NUMBER])
    assert _reasons(mutants, "generic-number", 3) == {"pragma: no mutate"}
    assert _reasons(mutants, "generic-number", len(source.splitlines())) == {None}


def test_else_and_except_headers_count_as_block_headers() -> None:
    mutants = _generate(
        """\
        def f(x):
            try:
                a = 1
            except ValueError:  # mutagent: skip
                a = 2
            if x:
                b = 3
            else:  # mutagent: skip
                b = 4
            return a + b
        """,
        NUMBER,
    )
    assert _reasons(mutants, "generic-number", 3) == {None}
    assert _reasons(mutants, "generic-number", 5) == {"mutagent: skip"}
    assert _reasons(mutants, "generic-number", 7) == {None}
    assert _reasons(mutants, "generic-number", 9) == {"mutagent: skip"}


def test_trailing_comment_of_a_multi_line_statement_covers_all_its_lines() -> None:
    mutants = _generate(
        """\
        def f():
            return g(
                1,
                2,
            )  # pragma: no mutate
        """,
        NUMBER,
    )
    assert len(mutants) == 2
    assert {m.ignored_reason for m in mutants} == {"pragma: no mutate"}


def test_directive_inside_brackets_covers_only_its_own_line() -> None:
    mutants = _generate(
        """\
        def f():
            return g(
                1,  # pragma: no mutate
                2,
            )
        """,
        NUMBER,
    )
    assert _reasons(mutants, "generic-number", 3) == {"pragma: no mutate"}
    assert _reasons(mutants, "generic-number", 4) == {None}


def test_a_multi_line_mutation_is_suppressed_only_by_a_directive_on_what_it_changes() -> None:
    source = textwrap.dedent(
        """\
        def f(x):
            match x:
                case 1:
                    return "a"  # pragma: no mutate
                case 2:
                    return "b"
                case _:
                    return "c"
        """
    )
    mutants = generate_for_source(source, "mod.py", [MATCH])
    dropped = {m.description: m.ignored_reason for m in mutants}
    assert dropped == {"drop case 1": "pragma: no mutate", "drop case 2": None, "drop case _": None}


def test_a_hash_inside_a_string_is_not_a_directive() -> None:
    mutants = _generate(
        """\
        def f():
            return "# pragma: no mutate", 1
        """
    )
    assert {m.ignored_reason for m in mutants} == {None}


def test_suppressed_mutants_are_still_generated() -> None:
    plain = _generate("def f():\n    return 1, 'a'\n")
    suppressed = _generate("def f():\n    return 1, 'a'  # pragma: no mutate\n")
    assert [m.id for m in plain] == [m.id for m in suppressed]
    assert all(m.ignored_reason for m in suppressed)


def test_mutmut_start_end_region() -> None:
    mutants = _generate(
        """\
        def f():
            a = 1
            # pragma: no mutate start
            b = 2
            c = 3
            # pragma: no mutate end
            return a + b + c + 4
        """,
        NUMBER,
    )
    assert _by_line(mutants) == {2: {None}, 4: {"pragma: no mutate"}, 5: {"pragma: no mutate"}, 7: {None}}


def test_mutmut_standalone_block_pragma_covers_the_rest_of_the_block() -> None:
    mutants = _generate(
        """\
        def f(x):
            a = 1
            if x:
                # pragma: no mutate block
                b = 2
                c = 3
            return a + 4
        """,
        NUMBER,
    )
    assert _by_line(mutants) == {2: {None}, 5: {"pragma: no mutate"}, 6: {"pragma: no mutate"}, 7: {None}}


@pytest.mark.parametrize(
    ("comment", "operators", "reason"),
    [
        ("# pragma: no mutate", frozenset(), "pragma: no mutate"),
        ("#pragma:no mutate", frozenset(), "pragma: no mutate"),
        ("# mutagent: skip", frozenset(), "mutagent: skip"),
        ("# mutagent: skip=a-b,c flaky upstream", frozenset({"a-b", "c"}), "flaky upstream"),
        ("# noqa  mutagent: skip=x", frozenset({"x"}), "mutagent: skip"),
    ],
)
def test_parse_directive(comment: str, operators: frozenset[str], reason: str) -> None:
    directive = parse_directive(comment)
    assert directive is not None
    assert (directive.operators, directive.reason) == (operators, reason)


@pytest.mark.parametrize("comment", ["# just a comment", "# mutagent: skipping", "# pragma: mutate"])
def test_parse_directive_ignores_other_comments(comment: str) -> None:
    assert parse_directive(comment) is None


def test_unclosed_start_runs_to_the_end_of_the_file() -> None:
    directives = directives_by_line("a = 1\n# pragma: no mutate start\nb = 2\nc = 3\n")
    assert sorted(directives) == [2, 3, 4]
