"""What the agent sends back after the model asks for tools: results in full, under the right ids,
and refusals (never executions) when a call breaks its contract."""

from __future__ import annotations

from typing import Any

import pytest

from mutagent.fakeserver import ToolCall
from mutagent.fakeserver import behaviours as b
from sample_agent.loop import StepLimitError
from sample_agent.tools import Tool, ToolContext

from .helpers import lookup_tool


def result_blocks(fake_model: Any, index: int) -> dict[str, dict[str, Any]]:
    """The tool_result blocks of request ``index``'s last message, by tool_use_id."""
    last = fake_model.requests[index].body["messages"][-1]
    return {block["tool_use_id"]: block for block in last["content"] if block["type"] == "tool_result"}


def test_tool_results_go_back_in_full_under_their_ids(fake_model, make_agent):
    alpha = "alpha: " + "a long answer " * 40
    beta = "beta: " + "another long answer " * 40
    h = make_agent(extra_tools=[lookup_tool({"alpha": alpha, "beta": beta})])
    fake_model.script(
        b.ok(
            text=None,
            tool_calls=[
                ToolCall("toolu_a", "lookup", {"q": "alpha"}),
                ToolCall("toolu_b", "lookup", {"q": "beta"}),
            ],
        ),
        b.ok(text="Both found."),
    )

    assert h.agent.run("look up alpha and beta") == "Both found."

    assert fake_model.request_count == 2
    assert fake_model.tool_results(1) == {"toolu_a": alpha, "toolu_b": beta}
    echoed = fake_model.requests[1].body["messages"][-2]
    assert echoed["role"] == "assistant"
    assert [(u["id"], u["input"]) for u in echoed["content"]] == [
        ("toolu_a", {"q": "alpha"}),
        ("toolu_b", {"q": "beta"}),
    ]
    assert not any(block.get("is_error") for block in result_blocks(fake_model, 1).values())


def test_a_crashing_tool_goes_back_as_an_error_result(fake_model, make_agent):
    def broken(arguments: dict[str, Any], context: ToolContext) -> str:
        raise ConnectionError("inventory service unreachable")

    schema = {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}
    h = make_agent(extra_tools=[Tool("stock", "Stock level of one SKU.", schema, broken)])
    fake_model.script(
        b.ok(text=None, tool_calls=[ToolCall("toolu_s", "stock", {"sku": "X-1"})]),
        b.ok(text="The service is down."),
    )

    assert h.agent.run("stock of X-1?") == "The service is down."

    block = result_blocks(fake_model, 1)["toolu_s"]
    assert block["is_error"] is True
    assert "ConnectionError" in block["content"] and "inventory service unreachable" in block["content"]


def test_a_tool_outside_the_allow_list_is_refused(fake_model, make_agent):
    h = make_agent()
    fake_model.script(
        b.ok(text=None, tool_calls=[ToolCall("toolu_x", "delete_all_tickets", {})]),
        b.ok(text="I cannot do that."),
    )

    h.agent.run("wipe everything")

    block = result_blocks(fake_model, 1)["toolu_x"]
    assert block["is_error"] is True
    assert "unknown tool 'delete_all_tickets'" in block["content"]
    assert [e["outcome"] for e in h.journal.of_kind("tool")] == ["refused"]


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({}, "missing required argument 'q'"),
        ({"q": 7}, "argument 'q' must be of type string"),
        ({"q": "alpha", "limit": 1000}, "unexpected argument 'limit'"),
    ],
    ids=["missing", "wrong-type", "extra-key"],
)
def test_arguments_outside_the_schema_are_refused(fake_model, make_agent, arguments, complaint):
    calls: list[dict[str, Any]] = []
    h = make_agent(extra_tools=[lookup_tool({"alpha": "A"}, calls)])
    fake_model.script(b.ok(text=None, tool_calls=[ToolCall("toolu_q", "lookup", arguments)]), b.ok(text="ok"))

    h.agent.run("look it up")

    block = result_blocks(fake_model, 1)["toolu_q"]
    assert block["is_error"] is True and complaint in block["content"]
    assert calls == []


def test_another_tenants_ticket_is_refused(fake_model, make_agent):
    h = make_agent()
    fake_model.script(
        b.ok(
            text=None,
            tool_calls=[
                ToolCall("toolu_own", "get_ticket", {"ticket_id": "T-1"}),
                ToolCall("toolu_other", "get_ticket", {"ticket_id": "T-9"}),
            ],
        ),
        b.ok(text="done"),
    )

    h.agent.run("show T-1 and T-9")

    blocks = result_blocks(fake_model, 1)
    assert "is_error" not in blocks["toolu_own"] and "Disk almost full" in blocks["toolu_own"]["content"]
    assert blocks["toolu_other"]["is_error"] is True
    assert "another tenant" in blocks["toolu_other"]["content"]
    assert "payroll" not in blocks["toolu_other"]["content"]


@pytest.mark.parametrize("approved", [False, True], ids=["denied", "approved"])
def test_side_effecting_tools_need_approval(fake_model, make_agent, approved):
    asked: list[str] = []

    def approve(call) -> bool:
        asked.append(call.name)
        return approved

    h = make_agent(approve=approve)
    fake_model.script(
        b.ok(text=None, tool_calls=[ToolCall("toolu_c", "create_ticket", {"title": "VPN down"})]),
        b.ok(text="done"),
    )

    h.agent.run("open a ticket")

    block = result_blocks(fake_model, 1)["toolu_c"]
    assert asked == ["create_ticket"]
    assert [t.title for t in h.desk.created] == (["VPN down"] if approved else [])
    assert block.get("is_error", False) is not approved
    assert ("needs approval" in block["content"]) is not approved


def test_a_repeated_side_effecting_call_runs_once(fake_model, make_agent):
    """The model asks again (say, after the turn was retried): same tenant, tool and arguments, in
    another key order. The ticket is created once; both calls get the first call's result."""
    h = make_agent(approve=lambda call: True)
    fake_model.script(
        b.ok(
            text=None, tool_calls=[ToolCall("toolu_1", "create_ticket", {"title": "VPN down", "priority": 1})]
        ),
        b.ok(
            text=None, tool_calls=[ToolCall("toolu_2", "create_ticket", {"priority": 1, "title": "VPN down"})]
        ),
        b.ok(
            text=None, tool_calls=[ToolCall("toolu_3", "create_ticket", {"title": "VPN down", "priority": 2})]
        ),
        b.ok(text="Opened."),
    )

    h.agent.run("open a VPN ticket")

    first, again, other = (fake_model.tool_results(i) for i in (1, 2, 3))
    assert again["toolu_2"] == first["toolu_1"]
    assert other["toolu_3"] != first["toolu_1"]
    assert [(t.title, t.priority) for t in h.desk.created] == [("VPN down", 1), ("VPN down", 2)]
    assert [e["outcome"] for e in h.journal.of_kind("tool")] == ["executed", "replayed", "executed"]


def test_the_model_cannot_keep_calling_tools_forever(fake_model, make_agent):
    h = make_agent(extra_tools=[lookup_tool({"x": "X"})])
    h.agent.max_steps = 2
    fake_model.script(
        *[b.ok(text=None, tool_calls=[ToolCall(f"toolu_{i}", "lookup", {"q": "x"})]) for i in (1, 2)]
    )

    with pytest.raises(StepLimitError, match="no final answer after 2 model calls"):
        h.agent.run("loop forever")

    assert fake_model.request_count == 2
