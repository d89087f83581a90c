"""Where the model is called: SDK resource calls and raw HTTP requests to model endpoints.

The recognisers are the stream family's (:mod:`mutagent.anatomy.streams.clients`); this module only turns
them into evidence sentences and caches them per file.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.streams.clients import is_http_call, is_model_call
from mutagent.anatomy.syntax import string_value
from mutagent.anatomy.vocabulary import MODEL_ENDPOINT_HINTS
from mutagent.mutation.context import SourceContext


def _endpoint_in(ctx: SourceContext, call: cst.Call) -> str | None:

    for arg in call.args:
        texts = [string_value(arg.value)] if isinstance(arg.value, cst.SimpleString) else []
        texts += [p.value for p in ctx.descendants(arg.value, m.FormattedStringText())]
        for text in texts:
            if text and any(hint in text for hint in MODEL_ENDPOINT_HINTS):
                return text
    return None


def direct_model_call(ctx: SourceContext, call: cst.Call) -> str | None:
    """Evidence that ``call`` itself sends a request to a model, or None: an SDK resource call
    (``client.messages.create``, ``client.chat.completions.create``, ``client.responses.stream``)
    or an HTTP request naming a model endpoint (``"/v1/messages"``, ``"chat/completions"``) or
    made in code that talks to a model."""

    def compute() -> str | None:
        if is_model_call(call):
            return f"SDK call {ctx.code(call.func)}()"
        if is_http_call(ctx, call):
            endpoint = _endpoint_in(ctx, call)
            if endpoint:
                return f"HTTP request {ctx.code(call.func)}() to {endpoint!r}"
        return None

    return ctx.cached(("anatomy", "direct-model-call", id(call)), compute)
