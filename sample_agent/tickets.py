"""A small ticket desk: the demo tools the agent is given, one read-only lookup per tenant's
tickets and one side-effecting create, so every part of the tool contract has something to guard."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .tools import Tool, ToolContext


@dataclass
class Ticket:
    id: str
    tenant_id: str
    title: str
    status: str = "open"
    priority: int = 3


@dataclass
class TicketDesk:
    """In-memory tickets. ``created`` lists every create that really ran, so a duplicate shows."""

    tickets: dict[str, Ticket] = field(default_factory=dict)
    created: list[Ticket] = field(default_factory=list)

    def owner_of(self, arguments: dict[str, Any]) -> str | None:
        ticket = self.tickets.get(arguments.get("ticket_id", ""))
        return ticket.tenant_id if ticket else None

    def get_ticket(self, arguments: dict[str, Any], context: ToolContext) -> dict[str, Any]:
        ticket = self.tickets.get(arguments["ticket_id"])
        if ticket is None:
            raise KeyError(f"no ticket {arguments['ticket_id']}")
        return {"id": ticket.id, "title": ticket.title, "status": ticket.status, "priority": ticket.priority}

    def create_ticket(self, arguments: dict[str, Any], context: ToolContext) -> dict[str, Any]:
        ticket = Ticket(
            f"T-{len(self.tickets) + 1}",
            context.tenant_id,
            arguments["title"],
            priority=arguments.get("priority", 3),
        )
        self.tickets[ticket.id] = ticket
        self.created.append(ticket)
        return {"id": ticket.id, "status": ticket.status}

    def tools(self) -> list[Tool]:
        return [
            Tool(
                "get_ticket",
                "Look up one support ticket by id.",
                {
                    "type": "object",
                    "properties": {"ticket_id": {"type": "string"}},
                    "required": ["ticket_id"],
                    "additionalProperties": False,
                },
                self.get_ticket,
                owner=self.owner_of,
            ),
            Tool(
                "create_ticket",
                "Open a new support ticket.",
                {
                    "type": "object",
                    "properties": {"title": {"type": "string"}, "priority": {"type": "integer"}},
                    "required": ["title"],
                    "additionalProperties": False,
                },
                self.create_ticket,
                side_effect=True,
            ),
        ]
