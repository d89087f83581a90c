"""Build the Anthropic client the agent talks through.

Two settings matter for correctness, not just configuration:

* ``max_retries=0``: one adapter call is one provider attempt. The SDK's own retry loop would
  resend silently, outside the journal and outside the attempt limit, and a 5xx would be retried
  by both the SDK and the agent, multiplying attempts.
* a read timeout: httpx2 applies it to every read, so it is an idle watchdog between two stream
  chunks. A stalled stream fails fast with ``httpx2.ReadTimeout`` and the turn is retried instead
  of hanging for the SDK's ten-minute default.
"""

from __future__ import annotations

import anthropic
import httpx2

DEFAULT_IDLE_TIMEOUT = 60.0


def make_client(
    base_url: str | None = None,
    *,
    api_key: str | None = None,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    connect_timeout: float = 10.0,
    http_client: httpx2.Client | None = None,
) -> anthropic.Anthropic:
    """A client for the real API (``base_url=None``) or a fake server. ``http_client`` lets a test
    observe the transport; the timeout set here still applies to each request."""
    return anthropic.Anthropic(
        base_url=base_url,
        api_key=api_key,
        max_retries=0,
        timeout=httpx2.Timeout(connect=connect_timeout, read=idle_timeout, write=30.0, pool=connect_timeout),
        http_client=http_client,
    )
