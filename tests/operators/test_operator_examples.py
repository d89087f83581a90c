"""Every operator's examples are executable documentation: this file runs them all.

One parametrised test covers every example of every registered operator (built-ins, the
generic family and installed plugins), so an operator added by anyone is checked without
touching this file. A mutated example's ``after`` must be exactly one mutant's mutated source;
a must-not-match example must produce no mutant of that operator at all. The meta-tests hold
every agent operator to the catalogue's standard (enough examples, a kebab-case name, the three
texts ``mutagent operators`` shows, a module of its own with a docstring).
"""

from __future__ import annotations

import inspect
import re
import sys

import pytest

from mutagent.mutation.generate import generate_for_source
from mutagent.mutation.operator import Example, Operator
from mutagent.mutation.registry import all_operators

KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")

OPERATORS = sorted(all_operators().values(), key=lambda op: op.name)
AGENT_OPERATORS = [op for op in OPERATORS if op.family == "agent"]
CASES = [
    pytest.param(operator, index, example, id=f"{operator.name}-{index}")
    for operator in OPERATORS
    for index, example in enumerate(operator.examples)
]


def _without_final_newline(text: str) -> str:
    """The only normalisation allowed: a missing or extra trailing newline."""
    return text[:-1] if text.endswith("\n") else text


def _show(sources: list[str]) -> str:
    return "\n".join(f"--- mutant {i}\n{text}" for i, text in enumerate(sources)) or "(no mutants)"


@pytest.mark.parametrize(("operator", "index", "example"), CASES)
def test_example(operator: Operator, index: int, example: Example) -> None:
    mutants = generate_for_source(example.before, f"example_{index}.py", [operator])
    assert all(m.operator == operator.name for m in mutants)
    produced = [m.mutated_source(example.before) for m in mutants]
    if example.must_not_match:
        assert not mutants, f"{operator.name} must not mutate this example, but produced:\n{_show(produced)}"
        return
    expected = _without_final_newline(example.after or "")
    hits = [text for text in produced if _without_final_newline(text) == expected]
    assert len(hits) == 1, (
        f"{operator.name} example {index}: expected exactly one mutant equal to\n{example.after}\n"
        f"got {len(hits)} among:\n{_show(produced)}"
    )


def test_every_registered_operator_has_examples() -> None:
    missing = [op.name for op in OPERATORS if not op.examples]
    assert not missing, f"operators without examples: {missing}"


def test_generic_operators_show_both_kinds_of_example() -> None:
    generic = [op for op in OPERATORS if op.family == "generic"]
    assert generic, "the generic family is empty"
    for operator in generic:
        assert any(not e.must_not_match for e in operator.examples), operator.name
        assert any(e.must_not_match for e in operator.examples), operator.name


@pytest.mark.parametrize("operator", AGENT_OPERATORS, ids=lambda op: op.name)
def test_agent_operator_meets_catalogue_standard(operator: Operator) -> None:
    mutated = [e for e in operator.examples if not e.must_not_match]
    must_not = [e for e in operator.examples if e.must_not_match]
    assert len(mutated) >= 3, f"{operator.name}: {len(mutated)} mutated examples, need at least 3"
    assert len(must_not) >= 2, f"{operator.name}: {len(must_not)} must-not-match examples, need at least 2"
    assert KEBAB.match(operator.name), f"{operator.name!r} is not kebab-case"
    for attribute in ("description", "failure", "hint"):
        text = getattr(operator, attribute, "")
        assert isinstance(text, str) and text.strip(), f"{operator.name}: empty {attribute}"


@pytest.mark.parametrize("operator", AGENT_OPERATORS, ids=lambda op: op.name)
def test_agent_operator_lives_in_its_own_documented_module(operator: Operator) -> None:
    module = sys.modules[type(operator).__module__]
    assert (module.__doc__ or "").strip(), f"{module.__name__} has no module docstring"
    siblings = [
        obj
        for _, obj in inspect.getmembers(module, inspect.isclass)
        if issubclass(obj, Operator) and obj.__module__ == module.__name__ and not inspect.isabstract(obj)
    ]
    assert siblings == [type(operator)], f"{module.__name__} defines {len(siblings)} operators, expected one"
    assert not getattr(module, "OPERATORS", None), f"{module.__name__} builds a family of operators"


def test_operator_names_are_unique_and_kebab_case() -> None:
    names = [op.name for op in OPERATORS]
    assert len(names) == len(set(names))
    assert all(KEBAB.match(name) for name in names), [n for n in names if not KEBAB.match(n)]


def test_every_mutmut_operator_has_a_documented_generic_operator() -> None:
    """Upgrading mutmut within the pinned range must not add an undocumented operator."""
    from operators._generic import mutmut_operator_functions, operator_name_for
    from operators.generic import _DOCS

    functions = [function for function, _ in mutmut_operator_functions()]
    assert {f.__name__ for f in functions} == set(_DOCS)
    assert {operator_name_for(f) for f in functions} <= {op.name for op in OPERATORS}
