"""The tool family's recognisers. Identifiers and keys are split into lower-case words
(``ALLOWED_TOOLS`` -> ``allowed``, ``tools``; ``requiresApproval`` -> ``requires``, ``approval``)
so vocabulary matches whole words only (``vocabulary.tool_words``).

``invocation`` (a call that runs a tool), ``results`` (tool-result constructs and where their id
and payload are: the tool-result and tool-call-id roles), ``context`` (code that handles tool
calls), ``guards`` (contract checks: a guard exactly one of whose branches refuses, read by the
allow-list, approval, tenant and validation roles), ``allowlist`` (tool names and tool
collections), ``arguments`` (a tool call's arguments and their validation), ``unknown`` (the
branch that answers a request for an unknown tool with an error report), ``failures`` (reports
that tell the model a tool failed).
"""
