"""``python -m sample_agent "prompt"``: one conversation against the real API.

Needs ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL points it elsewhere (a fake server, a proxy).
Side-effecting tools ask for approval on the terminal.
"""

from __future__ import annotations

import argparse
import os
import sys

from .client import make_client
from .journal import Journal
from .loop import DEFAULT_MODEL, Agent, AgentError
from .tickets import Ticket, TicketDesk
from .tools import ToolCall, ToolRegistry


def ask_approval(call: ToolCall) -> bool:
    answer = input(f"allow {call.name}({call.input})? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sample_agent", description=__doc__.splitlines()[0])
    parser.add_argument("prompt")
    parser.add_argument("--model", default=os.environ.get("SAMPLE_AGENT_MODEL", DEFAULT_MODEL))
    parser.add_argument("--tenant", default="acme")
    parser.add_argument("--journal", help="append the conversation's events to this JSONL file")
    args = parser.parse_args(argv)
    if not os.environ.get("ANTHROPIC_API_KEY"):
        print("sample_agent: set ANTHROPIC_API_KEY to talk to the real API", file=sys.stderr)
        return 2
    desk = TicketDesk({"T-1": Ticket("T-1", args.tenant, "Disk almost full on db-1")})
    agent = Agent(
        make_client(os.environ.get("ANTHROPIC_BASE_URL")),
        ToolRegistry(desk.tools(), tenant_id=args.tenant, approve=ask_approval),
        model=args.model,
        journal=Journal(args.journal),
    )
    try:
        print(agent.run(args.prompt))
    except AgentError as exc:
        print(f"sample_agent: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
