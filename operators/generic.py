"""The ``generic`` family: mutmut's own node operators, one mutagent operator per function.

``mutagent run --operators generic`` gives the classic mutation-testing baseline (numbers,
strings, operators, arguments ...) next to the agent family, with mutagent's reporting (which
test kills which mutant). The mutation logic is imported from mutmut, not copied; this module
only adds what mutmut does not document: what each mutant means for an agent loop, the assertion
that kills it, and examples that the test suite checks. Where and why the generic family differs
from mutmut's own choice of mutants is documented in ``operators/_generic.py``.
"""

from __future__ import annotations

from mutagent.mutation.operator import Example
from operators._generic import GenericDoc, build_generic_operators

_MATCH = (
    "def f(x):\n    match x:\n        case 1:\n            return 'a'\n"
    "        case _:\n            return 'b'\n"
)

_DOCS: dict[str, GenericDoc] = {
    "operator_number": GenericDoc(
        description="A number literal becomes itself plus one (3 -> 4, 0.5 -> 1.5).",
        failure=(
            "An off-by-one limit, timeout, index or size: the retry cap, max_tokens or a "
            "truncation length is one more than intended. Tests that never pin the exact value "
            "let it through."
        ),
        hint="assert the exact value the constant controls (attempts made, tokens requested, slice length)",
        examples=(
            Example(before="def f(x):\n    return x + 1\n", after="def f(x):\n    return x + 2\n"),
            Example(
                before="MAX_RETRIES = 3\n",
                after="MAX_RETRIES = 4\n",
                note="module-level constants are mutated (mutmut itself does not)",
            ),
            Example(before="def f(x: Annotated[int, 3]) -> None:\n    pass\n", note="annotations never run"),
            Example(
                before="def f(x):\n    return len(x[1:])\n", note="mutmut never mutates len()/isinstance()"
            ),
            Example(before="@retry(3)\ndef f():\n    pass\n", note="decorator expressions run at import"),
        ),
    ),
    "operator_string": GenericDoc(
        description='A string literal gets "XX" around it, or is lower- or upper-cased.',
        failure=(
            "A wrong header name, model id, event type, tool name or stop reason: the loop "
            "compares or sends a string nobody checks."
        ),
        hint="assert the exact strings the loop sends (body, headers) and the branch each string selects",
        examples=(
            Example(before='def f():\n    return "Hi"\n', after='def f():\n    return "XXHiXX"\n'),
            Example(before='def f():\n    return "Hi"\n', after='def f():\n    return "hi"\n'),
            Example(before='def f():\n    return "Hi"\n', after='def f():\n    return "HI"\n'),
            Example(before='def f():\n    """Docs."""\n', note="triple-quoted strings are left alone"),
            Example(before="def f():\n    'Docs.'\n    return 1\n", note="a single-quoted docstring too"),
            Example(before='def f(x):\n    return f"{x}!"\n', note="mutmut does not mutate f-strings"),
        ),
    ),
    "operator_name": GenericDoc(
        description="True and False swap; deepcopy becomes copy.",
        failure=(
            "A flag flipped (stream=True, a retry toggle, a default) or a history shared instead of "
            "copied, so a later turn edits an earlier request."
        ),
        hint="assert what each flag selects, and that earlier requests stay unchanged after later turns",
        examples=(
            Example(before="def f():\n    return True\n", after="def f():\n    return False\n"),
            Example(before="STREAM = False\n", after="STREAM = True\n"),
            Example(
                before="def f(messages):\n    return copy.deepcopy(messages)\n",
                after="def f(messages):\n    return copy.copy(messages)\n",
            ),
            Example(before="def f(x):\n    return x is None\n"),
            Example(before="from copy import deepcopy\n", note="imports are not renamed"),
        ),
    ),
    "operator_assignment": GenericDoc(
        description='The value of an assignment becomes None (or "" when it was None).',
        failure=(
            "A computed value is lost: the parsed tool input, the accumulated text or the usage "
            "count is None by the time it is used."
        ),
        hint="assert on values that flow through the assignment, not only that the call returned",
        examples=(
            Example(
                before="def f():\n    x = compute()\n    return x\n",
                after="def f():\n    x = None\n    return x\n",
            ),
            Example(before="def f():\n    x = None\n", after='def f():\n    x = ""\n'),
            Example(before="def f():\n    x: int = 3\n", after="def f():\n    x: int = None\n"),
            Example(before="def f():\n    x: int\n", note="a bare annotation assigns nothing"),
            Example(before='__all__ = ["f"]\n', note="dunder metadata (__all__, __slots__) is left alone"),
            Example(before="def f(x):\n    x += 1\n", note="augmented assignments have their own operator"),
        ),
    ),
    "operator_augmented_assignment": GenericDoc(
        description="An augmented assignment (+=, -=, |= ...) becomes a plain assignment.",
        failure=(
            "An accumulator forgets what it had: streamed text keeps only the last delta, the "
            "token count only the last turn, the attempt counter never grows."
        ),
        hint="assert on totals built over several steps (full streamed text, summed usage, attempt count)",
        examples=(
            Example(before="def f(x):\n    x += 1\n", after="def f(x):\n    x = 1\n"),
            Example(
                before="def f(parts, delta):\n    parts.text += delta\n",
                after="def f(parts, delta):\n    parts.text = delta\n",
            ),
            Example(before="TOTAL = 0\nTOTAL += 5\n", after="TOTAL = 0\nTOTAL = 5\n"),
            Example(before="def f(x):\n    x = x + 1\n"),
            Example(before="def f(x):\n    x: int = 1\n"),
        ),
    ),
    "operator_remove_unary_ops": GenericDoc(
        description="A `not` or `~` is dropped.",
        failure=(
            "A condition inverted: the loop retries what it should give up on, stops when it "
            "should continue, treats an error event as success."
        ),
        hint="cover both outcomes of every negated condition (retryable and not, stop and continue)",
        examples=(
            Example(before="def f(x):\n    return not x\n", after="def f(x):\n    return x\n"),
            Example(before="def f(x):\n    return ~x\n", after="def f(x):\n    return x\n"),
            Example(
                before="def f(x):\n    if(not x):\n        return 1\n",
                after="def f(x):\n    if(x):\n        return 1\n",
                note="the parentheses stay, so the result still parses",
            ),
            Example(before="def f(x):\n    return -x\n", note="unary minus is generic-swap-op's"),
            Example(before="def f(x):\n    return x != 1\n"),
        ),
    ),
    "operator_dict_arguments": GenericDoc(
        description="A keyword of dict(a=..., b=...) gets an XX suffix.",
        failure=(
            "A request field or header misnamed: the server ignores `max_tokensXX` and the loop "
            "silently runs on defaults."
        ),
        hint="assert the exact keys of every request body and header dict the fake server receives",
        examples=(
            Example(
                before="def f():\n    return dict(a=1, b=2)\n",
                after="def f():\n    return dict(aXX=1, b=2)\n",
            ),
            Example(
                before="def f():\n    return dict(a=1, b=2)\n",
                after="def f():\n    return dict(a=1, bXX=2)\n",
            ),
            Example(
                before="def f(x):\n    return dict(model=x)\n",
                after="def f(x):\n    return dict(modelXX=x)\n",
            ),
            Example(
                before="def f(x):\n    return dict(x, a=1)\n", note="mutmut stops at a positional argument"
            ),
            Example(before="def f():\n    return {'a': 1}\n", note="only dict(...) calls"),
        ),
    ),
    "operator_arg_removal": GenericDoc(
        description="One argument of a call becomes None, or is dropped when there are several.",
        failure=(
            "A call loses an input: the tool runs without its arguments, the request without "
            "its system prompt, the sleep without its delay."
        ),
        hint="assert what each call received (fake server request, tool arguments), not only its result",
        examples=(
            Example(
                before="def f(a, b):\n    return g(a, b)\n", after="def f(a, b):\n    return g(None, b)\n"
            ),
            Example(
                before="def f(a, b):\n    return g(a, b)\n", after="def f(a, b):\n    return g(a, None)\n"
            ),
            Example(before="def f(a, b):\n    return g(a, b)\n", after="def f(a, b):\n    return g(b)\n"),
            Example(before="def f(a, b):\n    return g(a, b)\n", after="def f(a, b):\n    return g(a, )\n"),
            Example(before="def f(args):\n    return g(*args)\n", note="a lone starred argument is kept"),
            Example(before="def f():\n    return g()\n"),
        ),
    ),
    "operator_symmetric_string_methods_swap": GenericDoc(
        description="A string method becomes its mirror: lower/upper, lstrip/rstrip, find/rfind ...",
        failure=(
            "Text normalised the wrong way: a header compared in the wrong case, whitespace "
            "stripped from the wrong end of streamed text, the first match found instead of the last."
        ),
        hint="use inputs where both ends / both cases differ, and assert the normalised value",
        examples=(
            Example(before="def f(s):\n    return s.lower()\n", after="def f(s):\n    return s.upper()\n"),
            Example(before="def f(s):\n    return s.lstrip()\n", after="def f(s):\n    return s.rstrip()\n"),
            Example(
                before="def f(s):\n    return s.find('x')\n", after="def f(s):\n    return s.rfind('x')\n"
            ),
            Example(before="def f(s):\n    return s.strip()\n", note="strip has no mirror"),
            Example(before="def f(s):\n    return lower(s)\n", note="only method calls"),
        ),
    ),
    "operator_unsymmetrical_string_methods_swap": GenericDoc(
        description="split becomes rsplit (and back) when a maxsplit makes them differ.",
        failure="A line or SSE field split at the wrong separator: `event: a: b` keeps the wrong part.",
        hint="feed values that contain the separator more than once and assert both parts",
        examples=(
            Example(
                before="def f(s):\n    return s.split(':', 1)\n",
                after="def f(s):\n    return s.rsplit(':', 1)\n",
            ),
            Example(
                before="def f(s):\n    return s.rsplit(':', 1)\n",
                after="def f(s):\n    return s.split(':', 1)\n",
            ),
            Example(
                before="def f(s):\n    return s.split(maxsplit=1)\n",
                after="def f(s):\n    return s.rsplit(maxsplit=1)\n",
            ),
            Example(
                before="def f(s):\n    return s.split(':')\n", note="without maxsplit both are equivalent"
            ),
            Example(
                before="def f(s):\n    return s.partition(':')\n",
                note="partition is the symmetric operator's",
            ),
        ),
    ),
    "operator_lambda": GenericDoc(
        description="A lambda returns None (or 0 when it returned None).",
        failure="A callback or sort key stops working: a tool handler returns nothing, a backoff no delay.",
        hint="assert on what callbacks produce when the loop calls them",
        examples=(
            Example(before="def f():\n    return lambda: 1\n", after="def f():\n    return lambda: None\n"),
            Example(before="def f():\n    return lambda: None\n", after="def f():\n    return lambda: 0\n"),
            Example(before="KEY = lambda item: item[0]\n", after="KEY = lambda item: None\n"),
            Example(before="def f():\n    return None\n"),
            Example(before="def f(x=lambda: 1):\n    return x\n", note="a non-literal default is left alone"),
        ),
    ),
    "operator_keywords": GenericDoc(
        description="is/is not, in/not in swap; break becomes return, continue becomes break.",
        failure=(
            "A membership or identity test inverted (a retryable status treated as fatal), or a "
            "loop that leaves too early: the stream reader stops at the first ping event."
        ),
        hint="assert the loop processes every event and both sides of each membership test",
        examples=(
            Example(
                before="def f(x):\n    return x is None\n", after="def f(x):\n    return x is not None\n"
            ),
            Example(
                before="def f(x, y):\n    return x in y\n", after="def f(x, y):\n    return x not in y\n"
            ),
            Example(
                before="def f(xs):\n    for x in xs:\n        break\n",
                after="def f(xs):\n    for x in xs:\n        return\n",
            ),
            Example(
                before="def f(xs):\n    for x in xs:\n        continue\n",
                after="def f(xs):\n    for x in xs:\n        break\n",
            ),
            Example(
                before="for x in range(3):\n    break\n", note="`return` outside a function would not compile"
            ),
            Example(before="def f(x, y):\n    return x == y\n"),
        ),
    ),
    "operator_swap_op": GenericDoc(
        description="An arithmetic, comparison, boolean or augmented operator is swapped (+ to -, < to <=).",
        failure=(
            "Boundary and arithmetic bugs: the retry budget checked with <= instead of <, a "
            "backoff that shrinks, usage subtracted instead of added, `and` where `or` was meant."
        ),
        hint="test at the boundary (exactly max attempts, exactly the limit) and assert computed amounts",
        examples=(
            Example(before="def f(a, b):\n    return a + b\n", after="def f(a, b):\n    return a - b\n"),
            Example(before="def f(a, b):\n    return a < b\n", after="def f(a, b):\n    return a <= b\n"),
            Example(before="def f(a, b):\n    return a and b\n", after="def f(a, b):\n    return a or b\n"),
            Example(before="def f(x):\n    x += 1\n", after="def f(x):\n    x -= 1\n"),
            Example(
                before="@tool\ndef lookup(x):\n    return x * 2\n",
                after="@tool\ndef lookup(x):\n    return x / 2\n",
                note="decorated functions are mutated (mutmut itself skips them)",
            ),
            Example(before="def f(a, b):\n    return a @ b\n"),
            Example(before="def f(x):\n    return not x\n"),
        ),
    ),
    "operator_match": GenericDoc(
        description="One case of a match statement is dropped.",
        failure="An event or content-block type falls through unhandled: tool_use ignored, errors passed.",
        hint="have a test for every case of a dispatch on event or block type",
        examples=(
            Example(
                before=_MATCH,
                after="def f(x):\n    match x:\n        case _:\n            return 'b'\n",
            ),
            Example(
                before=_MATCH,
                after="def f(x):\n    match x:\n        case 1:\n            return 'a'\n",
            ),
            Example(
                before="match X:\n    case 1:\n        Y = 1\n    case 2:\n        Y = 2\n",
                after="match X:\n    case 2:\n        Y = 2\n",
            ),
            Example(
                before="def f(x):\n    match x:\n        case _:\n            return 'b'\n",
                note="one case stays",
            ),
            Example(before="def f(x):\n    if x == 1:\n        return 'a'\n"),
        ),
    ),
    "operator_if_exp": GenericDoc(
        description="A conditional expression always takes one branch (`(c) and False` / `(c) or True`).",
        failure=(
            "A fallback that is always or never used: the default model, the retry-after value "
            "or the tool result placeholder is picked regardless of the condition."
        ),
        hint="exercise both arms of every `a if c else b` and assert which value was used",
        examples=(
            Example(
                before="def f(a, b, c):\n    return a if c else b\n",
                after="def f(a, b, c):\n    return a if (c) and False else b\n",
            ),
            Example(
                before="def f(a, b, c):\n    return a if c else b\n",
                after="def f(a, b, c):\n    return a if (c) or True else b\n",
            ),
            Example(
                before="def f(a, b, c, d):\n    return a if c or d else b\n",
                after="def f(a, b, c, d):\n    return a if (c or d) and False else b\n",
            ),
            Example(before="def f(a, b, c):\n    if c:\n        return a\n    return b\n"),
            Example(before="def f(a, b):\n    return a or b\n"),
        ),
    ),
}

OPERATORS = build_generic_operators(_DOCS)
