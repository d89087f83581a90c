"""The empty-reply role's branches: what a branch does once a model reply is found empty. It
fails (raises, returns an error), or it answers the emptiness: it says so in its own words
(``"Your previous response was empty"``, ``'Model returned empty action. Retrying...'``) and then
returns or asks again. A branch that only skips an empty chunk says nothing and changes nothing."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.exits import fails, only_reports
from mutagent.anatomy.syntax import statements, string_value
from mutagent.anatomy.vocabulary import tokens
from mutagent.mutation.context import SourceContext


def says_empty(ctx: SourceContext, block: cst.CSTNode) -> bool:
    """A string in ``block`` (a message, an error, a log line) says something came back empty."""
    texts = [string_value(s) for s in ctx.descendants(block, m.SimpleString())]
    texts += [part.value for part in ctx.descendants(block, m.FormattedStringText())]
    return any("empty" in tokens(text) for text in texts if text)


def handles_empty_reply(ctx: SourceContext, body: cst.BaseSuite) -> bool:
    """The branch fails, or it says the reply was empty and does something about it (returns a
    value, asks again, records a correction), rather than only logging or skipping."""
    if fails(body):
        return True
    if not says_empty(ctx, body) or only_reports(body):
        return False
    acts = [
        s
        for s in statements(body)
        if not isinstance(s, (cst.Pass, cst.Continue)) and not (isinstance(s, cst.Return) and s.value is None)
    ]
    return len(acts) > 1 or any(isinstance(s, cst.Return) for s in acts)
