"""mutagent: mutation testing for LLM agent loops.

Operators inject the bugs agent loops really have (a stream cut mid-event, a missing stop marker,
a tool result sent back truncated, an ignored ``Retry-After`` ...) and mutagent reports which tests
of the target's own fake-server suite kill each mutant.
"""

__version__ = "0.1.0"
