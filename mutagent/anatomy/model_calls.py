"""Where the model is called: SDK resource calls and raw HTTP requests to model endpoints.

The recognisers are the stream family's (:mod:`mutagent.anatomy.streams.clients`); this module only turns
them into evidence sentences and caches them per file.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.callgraph import callee
from mutagent.anatomy.streams.clients import is_client, is_http_call, is_model_call
from mutagent.anatomy.syntax import string_value
from mutagent.anatomy.vocabulary import (
    HTTP_VERBS,
    LM_PROGRAM_PACKAGES,
    LM_PROGRAM_TYPES,
    MODEL_ENDPOINT_HINTS,
    words,
)
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


def _assigned_strings(ctx: SourceContext, name: cst.Name) -> list[str]:
    """The string literals assigned to the local ``name`` in its function (``path =
    '{model}:generateContent'``, also through ``.format_map(...)``)."""
    function = ctx.enclosing_function(name)
    if function is None:
        return []
    texts = []
    for assign in ctx.descendants(function.body, m.Assign(targets=[m.AssignTarget(m.Name(name.value))])):
        texts += [s.evaluated_value for s in ctx.descendants(assign.value, m.SimpleString())]
    return [t for t in texts if isinstance(t, str)]


def endpoint_request(ctx: SourceContext, call: cst.Call) -> str | None:
    """An HTTP request on a client whose path argument is a local the function assigned a model
    endpoint (``path = '{model}:generateContent'; self._api_client.request('post', path, body)``):
    the data flow names the endpoint the call itself leaves implicit. The client's verb may be
    its own spelling of a request (``async_request``, ``request_streamed``). A request whose path
    names no model endpoint (``path = 'files'``) is no model call."""
    func = call.func
    verb = isinstance(func, cst.Attribute) and bool(set(words(func.attr.value)) & HTTP_VERBS)
    if direct_model_call(ctx, call) or not (is_http_call(ctx, call) or (verb and is_client(ctx, func.value))):
        return None
    for arg in call.args:
        if isinstance(arg.value, cst.Name):
            for text in _assigned_strings(ctx, arg.value):
                if any(hint.lower() in text.lower() for hint in MODEL_ENDPOINT_HINTS):
                    return f"HTTP request {ctx.code(call.func)}() to {arg.value.value} = {text!r}"
    return None


def _program_attributes(ctx: SourceContext, klass: cst.ClassDef) -> dict[str, str]:
    """``self.NAME`` attributes the class binds to an LM program of an SDK that prompts a model on
    every call (``self.react = dspy.Predict(signature)``), with the program's qualified name."""

    def compute() -> dict[str, str]:
        found: dict[str, str] = {}
        pattern = m.Assign(targets=[m.AssignTarget(m.Attribute(value=m.Name("self")))], value=m.Call())
        for assign in ctx.descendants(klass, pattern):
            for qualified in ctx.qualified_names(assign.value.func):
                module, _, leaf = qualified.rpartition(".")
                if module.split(".")[0] in LM_PROGRAM_PACKAGES and leaf in LM_PROGRAM_TYPES:
                    found[assign.targets[0].target.attr.value] = qualified
        return found

    return ctx.cached(("anatomy", "lm-programs", id(klass)), compute)


def program_call(ctx: SourceContext, call: cst.Call) -> str | None:
    """A call of an LM program bound on ``self`` (``self.react(**inputs)``), or a call of a def of
    this file that is handed the program and calls that parameter (``self._call_with_truncation(
    self.react, ...)`` whose body runs ``module(...)``). A program only stored or logged is no call."""
    klass = ctx.enclosing(call, cst.ClassDef)
    if klass is None:
        return None
    programs = _program_attributes(ctx, klass)  # type: ignore[arg-type]
    if not programs:
        return None

    def program(node: cst.CSTNode) -> str | None:
        if m.matches(node, m.Attribute(value=m.Name("self"))) and node.attr.value in programs:  # type: ignore[attr-defined]
            return f"self.{node.attr.value} is a {programs[node.attr.value]}"  # type: ignore[attr-defined]
        return None

    func = call.func
    direct = program(func) or (program(func.value) if isinstance(func, cst.Attribute) else None)
    if direct:
        return f"calls an LM program: {direct}"
    target = callee(ctx, call)
    if target is None:
        return None
    params = [p.name.value for p in target.params.params]
    offset = 1 if params[:1] in (["self"], ["cls"]) else 0
    for index, arg in enumerate(call.args):
        what = program(arg.value)
        if what is None or arg.keyword is not None or arg.star or offset + index >= len(params):
            continue
        param = params[offset + index]
        if ctx.descendants(target.body, m.Call(func=m.Name(param) | m.Attribute(value=m.Name(param)))):
            return f"hands {target.name.value}() an LM program it calls as {param}(): {what}"
    return None
