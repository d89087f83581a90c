"""The stream family's recognisers. Stream bugs hide behind many spellings: ``httpx2.RemoteProtocolError``
after ``import httpx2 as h`` is ``h.RemoteProtocolError``, a stop marker is ``"message_stop"`` in
one loop and ``"[DONE]"`` in the next, a flag may be called ``saw_stop`` or ``self._complete``.
These modules recognise them by meaning: exception types by *qualified* name, stop flags by
where they are set (inside a branch that tested for an end-of-turn marker), fields by the
provider APIs' own names (``stop_reason``, ``finish_reason``, ``choices``...).

``clients`` (SDK and HTTP clients, model calls, transport errors), ``context`` (code that talks
to a model or reads a stream), ``release`` (values holding a streamed response: the stream-release
role), ``stop_check`` (end-of-turn markers, the branches and flags that record them: the stop-check
role), ``stop_reasons`` (stop/finish reason fields and values: the stop-check and length-stop roles).
"""
