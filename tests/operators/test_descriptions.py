"""A mutant's description is true of the code it sits in (issue 26, item 7).

Every ignore-length-stop mutant says the same thing in its own words: the code handled a response
cut by the output limit as cut, and the mutant no longer does ("'response.incomplete' no longer
counts as a cut response", "the max_tokens/length stop check never fires"). Here that claim is
checked by running the code: each snippet ends a Responses stream with a ``response.incomplete``
(or ``response.completed``) event and signals a cut response by raising ``Truncated``. The claim
holds when the original raises ``Truncated`` on the incomplete event and not on the completed one,
and the mutant does not raise it on the incomplete event.

A Responses agent that treats ``response.incomplete`` as one more way for a stream to end (beside
``response.completed``) has no cut-response handling at all: a mutant there would read inverted,
so it must not be made.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import pytest
from testkit.operator_runs import mutants


class Truncated(Exception):
    """What the snippets raise for a response cut by the output limit."""


@dataclass
class Event:
    type: str
    response: object = "the response"


@dataclass
class Response:
    status: str
    output_text: str = "half an answer"


def reads_as_cut(source: str, event_type: str) -> bool:
    """Whether ``final_response`` of ``source`` treats a stream ending in ``event_type`` as cut."""
    namespace: dict[str, object] = {"Truncated": Truncated, "StreamEnded": RuntimeError}
    exec(compile(source, "snippet.py", "exec"), namespace)  # noqa: S102 - the test's own snippets
    status = {"response.incomplete": "incomplete", "response.completed": "completed"}[event_type]
    try:
        namespace["final_response"]([Event(event_type, Response(status))])  # type: ignore[operator]
    except Truncated:
        return True
    except RuntimeError:
        return False
    return False


SNIPPETS = {
    # a cut response raises: each mutant's description is true
    "set-of-cut-events": """
        def final_response(events):
            for event in events:
                if event.type == "response.completed":
                    return event.response
                if event.type in {"response.incomplete", "response.failed"}:
                    raise Truncated(event.type)
    """,
    "not-in-cut-events": """
        def final_response(events):
            for event in events:
                if event.type not in ("response.incomplete", "response.failed"):
                    return event.response
                raise Truncated(event.type)
    """,
    "equals-incomplete": """
        def final_response(events):
            for event in events:
                if event.type == "response.incomplete":
                    raise Truncated(event.response)
                return event.response
    """,
    "status-incomplete": """
        def final_response(events):
            response = events[-1].response
            if response.status == "incomplete":
                raise Truncated(response.output_text)
            return response.output_text
    """,
    # response.incomplete is just another way to end: no cut handling, no mutant
    "set-of-terminal-events": """
        def final_response(events):
            for event in events:
                if event.type in ("response.completed", "response.incomplete"):
                    return event.response
            raise StreamEnded("no terminal event")
    """,
    "or-of-terminal-events": """
        def final_response(events):
            for event in events:
                if event.type == "response.completed" or event.type == "response.incomplete":
                    return event.response
            raise StreamEnded("no terminal event")
    """,
    "not-in-terminal-events": """
        def final_response(events):
            for event in events:
                if event.type not in ["response.completed", "response.incomplete"]:
                    continue
                return event.response
            raise StreamEnded("no terminal event")
    """,
    "or-of-terminal-statuses": """
        def final_response(events):
            response = events[-1].response
            if response.status == "completed" or response.status == "incomplete":
                return response.output_text
            raise StreamEnded(response.status)
    """,
}


@pytest.mark.parametrize("name", SNIPPETS)
def test_every_ignore_length_stop_description_is_true_of_its_code(name: str) -> None:
    source = textwrap.dedent(SNIPPETS[name])
    made = mutants("ignore-length-stop", source)
    handles_cut = reads_as_cut(source, "response.incomplete") and not reads_as_cut(
        source, "response.completed"
    )
    if not handles_cut:
        # nothing here reads a cut response as cut: any description of this family would be false
        assert [m.description for m in made] == []
        return
    assert made, f"{name}: the cut-response check was not found"
    for mutant in made:
        mutated = mutant.mutated_source(source)
        assert not reads_as_cut(mutated, "response.incomplete"), (
            f"{name}: {mutant.description!r} is not true: the mutant still reads the cut response as cut"
        )
