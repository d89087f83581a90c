"""Tool-call pairing rules every request must keep, checked on every request the server sees.

Like Codex's ``validate_request_body_invariants``: a suite that uses the fake server tests the
pairing rules for free. The rules are the ones both providers enforce: each tool result answers a
tool call of the assistant message right before it; each tool call is answered exactly once;
no id is empty. Every violation names the id so the failing test says what went wrong.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from mutagent.fakeserver.conversation import NeutralMessage, neutral_messages


def _id_text(call_id: Any) -> str:
    return repr(call_id) if isinstance(call_id, str) else f"<{call_id!r}>"


def _empty(call_id: Any) -> bool:
    return not isinstance(call_id, str) or not call_id.strip()


def _check_answers(pending: dict[str, int], message: NeutralMessage, where: str) -> list[str]:
    """Violations of ``message`` answering the calls still ``pending`` (id -> position)."""
    problems = []
    answered: Counter[str] = Counter()
    for result in message.results:
        if _empty(result.call_id):
            problems.append(
                f"{where}[{result.position}]: tool result with an empty tool call id "
                f"{_id_text(result.call_id)}"
            )
            continue
        answered[result.call_id] += 1
        if result.call_id not in pending:
            problems.append(
                f"{where}[{result.position}]: tool result for {_id_text(result.call_id)} answers "
                "no tool call of the preceding assistant message"
            )
    for call_id, position in pending.items():
        count = answered[call_id]
        if count == 0:
            problems.append(
                f"{where}[{position}]: tool call {_id_text(call_id)} is not answered in "
                f"{where}[{message.position}] ({message.role})"
            )
        elif count > 1:
            problems.append(f"{where}[{position}]: tool call {_id_text(call_id)} is answered {count} times")
    return problems


def _calls_of(message: NeutralMessage, where: str) -> tuple[dict[str, int], list[str]]:
    pending: dict[str, int] = {}
    problems = []
    for call_id in message.calls:
        if _empty(call_id):
            problems.append(f"{where}[{message.position}]: tool call with an empty id {_id_text(call_id)}")
        elif call_id in pending:
            problems.append(f"{where}[{message.position}]: tool call id {_id_text(call_id)} is used twice")
        else:
            pending[call_id] = message.position
    return pending, problems


def check_invariants(body: Any, dialect: str) -> list[str]:
    """Every violation of the pairing rules in ``body`` (empty list: the request is fine)."""
    problems: list[str] = []
    pending: dict[str, int] = {}
    where = "input" if dialect == "responses" else "messages"
    for message in neutral_messages(body, dialect):
        if message.role == "assistant":
            for call_id, position in pending.items():
                problems.append(
                    f"{where}[{position}]: tool call {_id_text(call_id)} is never answered "
                    f"({where}[{message.position}] is another assistant message)"
                )
            for result in message.results:
                problems.append(
                    f"{where}[{message.position}]: tool result for {_id_text(result.call_id)} "
                    "inside an assistant message"
                )
            pending, found = _calls_of(message, where)
            problems.extend(found)
        else:
            problems.extend(_check_answers(pending, message, where))
            pending = {}
    for call_id, position in pending.items():
        problems.append(
            f"{where}[{position}]: tool call {_id_text(call_id)} is never answered (the request ends with it)"
        )
    return problems


def assert_invariants(body: Any, dialect: str) -> None:
    """Raise ``AssertionError`` naming every violation: for checking a body by hand in a test."""
    problems = check_invariants(body, dialect)
    if problems:
        raise AssertionError("tool-call invariants broken: " + "; ".join(problems))
