"""unbounded-turns on a loop with two bounds of one counter: removing a comparison alone leaves the
loop bounded when the other is checked on every pass (the mutant is listed as equivalent, with the
reason), but not when the other sits on a path of its own, nor when the removed bound is the
range whose endless replacement also freezes the counter the other compares."""

from __future__ import annotations

from mutagent.mutation.context import SourceContext
from mutagent.mutation.registry import get_operator

UNBOUNDED = get_operator("unbounded-turns")


def _mutants(source: str) -> list[tuple[str, str | None]]:
    ctx = SourceContext(source, "loop.py")
    assert UNBOUNDED is not None
    return [(ctx.code(m.node).strip(), m.equivalent) for m in UNBOUNDED.find(ctx)]


def test_a_bound_checked_on_every_pass_makes_its_sibling_equivalent() -> None:
    source = (
        "def run(client, messages, max_tool_iterations=3):\n"
        "    for loop_iteration in range(max_tool_iterations):\n"
        "        reply = client.chat.completions.create(model='m', messages=messages)\n"
        "        if loop_iteration == max_tool_iterations - 1:\n"
        "            break\n"
    )
    found = dict(_mutants(source))
    header, check = "range(max_tool_iterations)", "loop_iteration == max_tool_iterations - 1"
    assert set(found) == {header, check}
    # the endless range freezes loop_iteration at 0, so the break no longer fires: a real mutant
    assert found[header] is None
    assert f"{header} bounds the same counter" in str(found[check])


def test_bounds_on_separate_paths_are_each_a_real_mutant() -> None:
    source = (
        "class Agent:\n"
        "    def step(self, messages):\n"
        "        iteration_count = 0\n"
        "        while True:\n"
        "            reply = self.client.chat.completions.create(model='m', messages=messages)\n"
        "            iteration_count += 1\n"
        "            if reply.tool_calls:\n"
        "                if iteration_count >= self.max_iteration:\n"
        "                    break\n"
        "                continue\n"
        "            if self.terminators:\n"
        "                if iteration_count >= self.max_iteration:\n"
        "                    break\n"
        "                continue\n"
        "            break\n"
    )
    found = _mutants(source)
    bounds = [reason for code, reason in found if code == "iteration_count >= self.max_iteration"]
    assert bounds == [None, None]
    assert ("iteration_count += 1", None) in found
