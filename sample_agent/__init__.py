"""A small, complete streaming agent loop on the official ``anthropic`` SDK: mutagent's demo target.

Modules, one job each: ``client`` (the SDK client, its own retries off, an idle read timeout),
``stream`` (raw events -> one message), ``retry`` (classification and delays), ``tools`` (tools as
contracts), ``journal`` (JSONL events), ``loop`` (the agent), ``tickets`` (demo tools).
"""

from .client import make_client
from .journal import Journal
from .loop import Agent, AgentError, ModelCallError, RetriesExhaustedError, StepLimitError
from .retry import Failure, RetryPolicy
from .stream import AssembledMessage, StreamAssembler, StreamError
from .tools import Tool, ToolCall, ToolRegistry, ToolResult

__all__ = [
    "Agent",
    "AgentError",
    "AssembledMessage",
    "Failure",
    "Journal",
    "ModelCallError",
    "RetriesExhaustedError",
    "RetryPolicy",
    "StepLimitError",
    "StreamAssembler",
    "StreamError",
    "Tool",
    "ToolCall",
    "ToolRegistry",
    "ToolResult",
    "make_client",
]
