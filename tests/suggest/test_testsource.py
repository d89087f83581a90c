"""Reading a test for a candidate (``suggest.testsource``) and rewriting it (``suggest.build``):
parameters bound for one node id, the scripted steps located, a fault inserted where it belongs,
the statements after the script observed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mutagent.suggest.build import faulted_body, probe_function, rewrite
from mutagent.suggest.testsource import Unreadable, read_test

MODULE = '''
from __future__ import annotations

import pytest

from mutagent.fakeserver import ToolCall
from mutagent.fakeserver import behaviours as bh
from agent.loop import GaveUp, ask


@pytest.mark.parametrize(
    ("status", "retried"), [(500, True), pytest.param(400, False, id="bad")], ids=["five"]
)
def test_statuses(fake_model, status, retried):
    """A docstring the candidate does not keep."""
    fake_model.script(bh.http_error(status), bh.ok(text="hi"))

    assert ask(fake_model.base_url) == "hi"
    assert fake_model.request_count == 2


@pytest.mark.parametrize("text", ["hello", "bye"])
def test_auto_ids(fake_model, text):
    fake_model.script(bh.ok(text=text))
    assert ask(fake_model.base_url) == text


def test_two_scripts_and_a_star(fake_model):
    fake_model.script(bh.ok(text="one"), [bh.ok(text="two"), bh.ok(text="three")])
    first = ask(fake_model.base_url)
    fake_model.script(*[bh.ok(text=str(i)) for i in range(2)])
    with pytest.raises(GaveUp, match="no attempt"):
        ask(fake_model.base_url)
    assert first


class TestInAClass:
    def test_method(self, fake_model):
        fake_model.script(bh.ok())


def test_no_fake_model():
    assert True


def test_script_through_a_helper(fake_model):
    helper(fake_model)
'''


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_m.py").write_text(textwrap.dedent(MODULE))
    return tmp_path


def test_parameters_are_bound_for_the_node_id(root: Path) -> None:
    src = read_test(root, "tests/test_m.py::test_statuses[five]")
    assert src.bindings == [("status", "500"), ("retried", "True")]
    assert read_test(root, "tests/test_m.py::test_statuses[bad]").bindings == [
        ("status", "400"),
        ("retried", "False"),
    ]
    assert read_test(root, "tests/test_m.py::test_auto_ids[bye]").bindings == [("text", '"bye"')]
    assert src.behaviours == "bh" and src.toolcall == "ToolCall" and src.pytest_name == "pytest"


def test_scripted_steps_are_located_across_calls_lists_and_stars(root: Path) -> None:
    src = read_test(root, "tests/test_m.py::test_two_scripts_and_a_star")
    assert src.locate_step(0) == (0, 0)
    assert src.locate_step(1) is None  # inside a list argument
    assert src.locate_step(3) == (1, 0)  # before the starred steps of the second call
    assert src.locate_step(4) is None  # somewhere inside them


@pytest.mark.parametrize(
    "nodeid, reason",
    [
        ("tests/test_m.py::TestInAClass::test_method", "a test method of a class"),
        ("tests/test_m.py::test_no_fake_model", "does not take the fake_model fixture"),
        ("tests/test_m.py::test_script_through_a_helper", "does not call fake_model.script"),
        ("tests/test_m.py::test_statuses[missing]", "no parametrize value has the id"),
    ],
)
def test_a_test_that_cannot_be_a_model_says_why(root: Path, nodeid: str, reason: str) -> None:
    with pytest.raises(Unreadable, match=reason):
        read_test(root, nodeid)


def test_the_fault_goes_before_its_step_in_the_tests_own_layout(root: Path) -> None:
    src = read_test(root, "tests/test_m.py::test_statuses[five]")
    body = faulted_body(src, "bh.drop(reset=True)", 1)
    assert src.code(body[1]).strip() == (
        'fake_model.script(bh.http_error(status), bh.drop(reset=True), bh.ok(text="hi"))'
    )
    long = faulted_body(src, 'bh.http_error(429, headers={"retry-after": "1"})', 0, times=3)
    assert src.code(long[1]).strip().splitlines() == [
        "fake_model.script(",
        '    *[bh.http_error(429, headers={"retry-after": "1"})] * 3,',
        "    bh.http_error(status),",
        '    bh.ok(text="hi"),',
        ")",
    ]


def test_a_probe_observes_every_statement_after_the_script(root: Path) -> None:
    src = read_test(root, "tests/test_m.py::test_two_scripts_and_a_star")
    rw = rewrite(src, "bh.drop(reset=True)", 0)
    assert [s.kind for s in rw.after] == ["stmt", "call", "raises", "truth"]
    code = probe_function(rw, "test_probe", "key")
    compile(code, "probe", "exec")
    assert 'with _mutagent_probe.raises(2, lambda: (pytest.raises(GaveUp, match="no attempt"))):' in code
    statuses = probe_function(
        rewrite(read_test(root, "tests/test_m.py::test_statuses[five]"), None, 0), "t", "k"
    )
    assert "status = 500" in statuses and "docstring" not in statuses and "parametrize" not in statuses
    assert (
        "_mutagent_probe.compare(0, [lambda: (ask(fake_model.base_url)), lambda: (\"hi\")], ['=='])"
        in statuses
    )


def test_again_runs_the_first_action_twice_with_one_more_reply(root: Path) -> None:
    src = read_test(root, "tests/test_m.py::test_statuses[five]")
    rw = rewrite(src, "bh.http_error(400)", 0, again=True)
    steps = 'bh.http_error(400), bh.http_error(status), bh.ok(text="hi"), bh.ok(text="Done.")'
    assert rw.script.strip() == f"fake_model.script({steps})"
    assert [s.operands[0] for s in rw.after[:2]] == ["ask(fake_model.base_url)"] * 2
    assert [s.kind for s in rw.after] == ["compare", "compare", "compare"]
