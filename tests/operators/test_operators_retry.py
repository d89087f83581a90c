"""The retry operators: vocabulary, alias resolution, silence on unrelated code, and that their
mutants do what their descriptions claim when executed (not only that they parse)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest
from testkit.operator_runs import mutants, mutated

from mutagent.anatomy.retry.classification import error_kind
from mutagent.anatomy.retry.loops import is_retry_loop
from mutagent.anatomy.vocabulary import http_status, is_count_name, is_fatal_name, is_retry_name
from mutagent.mutation.context import SourceContext
from mutagent.mutation.generate import generate_for_source
from mutagent.mutation.registry import all_operators

RETRY_OPERATORS = (
    "ignore-retry-after",
    "keep-partial-history",
    "retry-bound-off-by-one",
    "unbounded-retry",
    "skip-backoff",
    "misclassify-retryable",
)
ROOT = Path(__file__).resolve().parents[2]


# -- vocabulary ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "count"),
    [
        ("attempt", True),
        ("max_attempts", True),
        ("retriesLeft", True),
        ("retry_count", True),
        ("n_tries", True),
        ("retry", True),
        ("entries", False),
        ("retry_after", False),
        ("attempt_timeout", False),
        ("max_turns", False),
        ("retry_policy", False),
    ],
)
def test_count_names(name: str, count: bool) -> None:
    assert is_count_name(name) is count


@pytest.mark.parametrize(
    ("name", "retry", "fatal"),
    [
        ("RETRYABLE_STATUSES", True, False),
        ("_back_off", True, False),
        ("_sleep_for_retry", True, False),
        ("NON_RETRYABLE_STATUSES", False, True),
        ("retry_if_not_exception_type", False, True),
        ("FATAL_ERRORS", False, True),
        ("retrieve_documents", False, False),
        ("feedback_offset", False, False),
    ],
)
def test_retry_and_fatal_names(name: str, retry: bool, fatal: bool) -> None:
    assert (is_retry_name(name), is_fatal_name(name)) == (retry, fatal)


@pytest.mark.parametrize(
    ("expression", "code"),
    [
        ("429", 429),
        ("HTTPStatus.TOO_MANY_REQUESTS", 429),
        ("httpx.codes.SERVICE_UNAVAILABLE", 503),
        ("requests.codes.too_many_requests", 429),
        ("status.HTTP_529_SITE_OVERLOADED", 529),
        ("200", None),
        ("1000", None),
        ("config.TOO_MANY_REQUESTS", None),
    ],
)
def test_http_status_spellings(expression: str, code: int | None) -> None:
    assert http_status(cst.parse_expression(expression)) == code


def test_error_kinds_resolve_aliases() -> None:
    ctx = SourceContext(
        "from anthropic import RateLimitError as RL, AuthenticationError\n"
        "import httpx2 as h\n"
        "RL; AuthenticationError; h.ReadError; KeyError\n"
    )
    kinds = [error_kind(ctx, statement.value) for statement in ctx.nodes(cst.Expr)]
    assert kinds == ["retryable", "fatal", "retryable", None]


# -- retry paths -------------------------------------------------------------------------------------


def loops(source: str) -> list[bool]:
    ctx = SourceContext(textwrap.dedent(source))
    return [is_retry_loop(ctx, loop) for loop in ctx.nodes(cst.For) + ctx.nodes(cst.While)]


def test_a_loop_over_data_is_no_retry_loop_even_when_it_sleeps() -> None:
    assert loops(
        """
        import time
        def consume(events):
            for event in events:
                try:
                    handle(event)
                except ValueError:
                    time.sleep(1)
        """
    ) == [False]


def test_an_agent_turn_loop_is_no_retry_loop() -> None:
    assert loops(
        """
        def run(client, messages, max_turns):
            for turn in range(max_turns):
                try:
                    reply = client.messages.create(messages=messages)
                except KeyError:
                    break
                messages.append(reply)
        """
    ) == [False]


def test_retry_loops_are_recognised_by_counter_sleep_or_helper_name() -> None:
    assert loops(
        """
        def a(call):
            attempt = 0
            while True:
                try:
                    return call()
                except OSError:
                    attempt += 1
        def b(call):
            for _ in range(3):
                try:
                    return call()
                except OSError:
                    sleep_fn(1)
        def with_retries(call):
            for _ in range(3):
                try:
                    return call()
                except OSError:
                    pass
        """
    ) == [True, True, True]


# -- aliases and spellings -------------------------------------------------------------------------


def test_skip_backoff_follows_aliases_sync_and_async() -> None:
    found = mutants(
        "skip-backoff",
        """
        from time import sleep as nap
        import asyncio as aio
        import trio

        def a(call, max_retries):
            for attempt in range(max_retries):
                try:
                    return call()
                except OSError:
                    nap(2 ** attempt)

        async def b(call, tries):
            for attempt in range(tries):
                try:
                    return await call()
                except OSError:
                    await aio.sleep(delay=attempt)
                    await trio.sleep(attempt)
        """,
    )
    assert [m.original for m in found] == ["2 ** attempt", "attempt", "attempt"]


def test_ignore_retry_after_reads_in_any_casing_once_per_header() -> None:
    found = mutants(
        "ignore-retry-after",
        """
        def delay(resp):
            ms = resp.headers.get("Retry-After-Ms")
            if ms:
                return float(ms) / 1000
            value = resp.headers.get("RETRY-AFTER", "1")
            try:
                return float(value)
            except ValueError:
                return parse_date(resp.headers.get("retry-after"))
        """,
    )
    assert [(m.original, m.replacement) for m in found] == [
        ('resp.headers.get("Retry-After-Ms")', "None"),
        ('resp.headers.get("RETRY-AFTER", "1")', '"1"'),
    ]


# -- silence on unrelated code ---------------------------------------------------------------------


@pytest.mark.parametrize("name", RETRY_OPERATORS)
def test_no_site_in_code_without_retries(name: str) -> None:
    source = """
    import time, json

    ROUTES = {404: "not found", 500: "server error"}

    def serve(handler, status, chunks, delay):
        handler.send_response(status)
        handler.send_header("Retry-After", "2")
        for chunk in chunks:
            time.sleep(delay)
            handler.wfile.write(chunk)
        if status == 404:
            return ROUTES[404]

    def parse(lines, messages):
        for line in lines:
            try:
                messages.append(json.loads(line))
            except ValueError:
                stack.pop()
                continue
        while len(messages) > 10:
            messages.pop(0)
        for attempt in attempts_log:
            print(attempt)
    """
    assert mutants(name, source) == []


@pytest.mark.parametrize("module", ["stream.py", "tools.py", "journal.py", "tickets.py", "client.py"])
def test_sample_agent_modules_without_retry_logic_get_no_retry_mutants(module: str) -> None:
    path = ROOT / "sample_agent" / module
    if not path.exists():
        pytest.skip(f"sample_agent/{module} not present")
    operators = [all_operators()[n] for n in RETRY_OPERATORS if n != "misclassify-retryable"]
    assert generate_for_source(path.read_text(), module, operators) == []


# -- mutants behave as described -------------------------------------------------------------------


class Failing:
    """A model call that always fails, counting its calls; stops a runaway loop after ``limit``."""

    def __init__(self, error: type[BaseException] = ConnectionError, limit: int = 50) -> None:
        self.calls = 0
        self.error = error
        self.limit = limit

    def __call__(self) -> None:
        self.calls += 1
        if self.calls > self.limit:
            raise KeyboardInterrupt("runaway retry loop")
        raise self.error("down")


def run(code: str, entry: str, *args: object) -> object:
    namespace: dict[str, object] = {}
    exec(compile(code, "mutant.py", "exec"), namespace)
    return namespace[entry](*args)  # type: ignore[operator]


UNBOUNDED = """
def call(request, max_attempts=3):
    for attempt in range(1, max_attempts + 1):
        try:
            return request()
        except ConnectionError:
            if attempt == max_attempts:
                raise
"""


def test_unbounded_retry_mutant_really_never_gives_up() -> None:
    original = Failing()
    with pytest.raises(ConnectionError):
        run(UNBOUNDED, "call", original)
    assert original.calls == 3
    (code,) = mutated("unbounded-retry", UNBOUNDED)
    runaway = Failing()
    with pytest.raises(KeyboardInterrupt):
        run(code, "call", runaway)


def test_off_by_one_mutant_makes_one_more_request() -> None:
    source = """
    def call(request, max_attempts=3):
        attempt = 0
        while True:
            attempt += 1
            try:
                return request()
            except ConnectionError:
                if attempt >= max_attempts:
                    raise
    """
    (code,) = mutated("retry-bound-off-by-one", source)
    failing = Failing()
    with pytest.raises(ConnectionError):
        run(code, "call", failing)
    assert failing.calls == 4


def test_library_no_wait_replacements_work_with_the_libraries_protocols() -> None:
    source = """
    import backoff
    from tenacity import retry, wait_exponential

    @retry(wait=wait_exponential(multiplier=1))
    def a(): ...

    @backoff.on_exception(backoff.expo, OSError, factor=2)
    def b(): ...
    """
    replacements = {m.replacement for m in mutants("skip-backoff", source)}
    tenacity_wait = eval("lambda _: 0")
    assert tenacity_wait(object()) == 0
    (backoff_gen,) = replacements - {"lambda _: 0"}
    generator = eval(backoff_gen)(factor=2, max_value=10)
    generator.send(None)  # backoff primes the generator, then sends the last exception or value
    assert [generator.send(OSError()) for _ in range(3)] == [0, 0, 0]


def test_misclassify_removes_one_code_and_keeps_valid_collections() -> None:
    outputs = mutated("misclassify-retryable", "RETRY_ON = (429,)\nFATAL_STATUSES = {401}\n")
    assert "RETRY_ON = ()\nFATAL_STATUSES = {401}\n" in outputs
    assert "RETRY_ON = (429, 400)\nFATAL_STATUSES = {401}\n" in outputs
    assert "RETRY_ON = (429,)\nFATAL_STATUSES = set()\n" in outputs
    for output in outputs:
        exec(compile(output, "m.py", "exec"), {})


def test_fatal_handler_is_mutated_only_when_a_retry_handler_follows() -> None:
    source = """
    import anthropic, time
    def call(request, attempts):
        for attempt in range(attempts):
            try:
                return request()
            except anthropic.AuthenticationError:
                raise
            except anthropic.APIStatusError:
                time.sleep(1)
        for attempt in range(attempts):
            try:
                return request()
            except anthropic.RateLimitError:
                time.sleep(1)
            except anthropic.AuthenticationError:
                raise
    """
    originals = [m.original for m in mutants("misclassify-retryable", source)]
    assert originals == [
        "anthropic.AuthenticationError",
        "anthropic.APIStatusError",
        "anthropic.RateLimitError",
    ]


def test_a_dropped_fatal_class_says_which_handler_it_meets_before_the_retry() -> None:
    """The first handler in between may catch a base of the dropped class (not decidable from one
    file), so the description names it; a handler of interrupts and cancellations alone cannot
    catch an Exception, so it is passed over; and a cancellation dropped in front of ``except
    Exception`` is no mutant at all (it is no Exception: the retry never sees it)."""
    source = """
    import asyncio, time
    def run(step, attempts):
        for attempt in range(attempts):
            try:
                return step()
            except RunCancelled:
                raise
            except (InputCheckError, OutputCheckError):
                raise
            except KeyboardInterrupt:
                raise
            except ValueError:
                raise
            except asyncio.CancelledError:
                raise
            except Exception:
                time.sleep(1)
    """
    described = sorted(m.description for m in mutants("misclassify-retryable", source))
    assert described == [
        "InputCheckError falls through to `except ValueError` (retried if that does not catch it)",
        "OutputCheckError falls through to `except ValueError` (retried if that does not catch it)",
        "RunCancelled falls through to `except (InputCheckError, OutputCheckError)` "
        "(retried if that does not catch it)",
        "ValueError now retried",
    ]


def test_every_example_mutant_compiles() -> None:
    for name in RETRY_OPERATORS:
        for example in all_operators()[name].examples:
            for output in mutated(name, example.before):
                compile(output, f"{name}.py", "exec")


EQUIVALENT = """\
def disable_sdk_retries(settings):
    if settings.max_retries is not None and settings.max_retries <= 0:
        return True
    max_retries = settings.max_retries
    return max_retries is not None and max_retries > 0
"""


def test_a_bound_decided_by_a_dominating_check_is_an_ignored_equivalent_mutant() -> None:
    operator = all_operators()["retry-bound-off-by-one"]
    mutants = {m.original: m for m in generate_for_source(EQUIVALENT, "policy.py", [operator])}
    dominated = mutants["max_retries > 0"]
    assert dominated.replacement == "max_retries >= 0"
    assert dominated.ignored_reason is not None and dominated.ignored_reason.startswith("equivalent mutant: ")
    assert "line 2" in dominated.ignored_reason
    assert "max_retries == 0 now reads as retries enabled" in dominated.description
    # the deciding check is an "are retries enabled?" predicate: it bounds no attempt, no mutant
    assert "settings.max_retries <= 0" not in mutants


@pytest.mark.parametrize(
    "between",
    ["    max_retries = max_retries - 1\n", "    settings.max_retries = 5\n"],
    ids=["reassigned-local", "reassigned-attribute"],
)
def test_no_equivalence_claim_when_an_operand_changes_in_between(between: str) -> None:
    from mutagent.anatomy.dominance import decided_earlier

    def comparison_in(source: str) -> tuple[SourceContext, cst.Comparison]:
        ctx = SourceContext(source)
        (found,) = [c for c in ctx.nodes(cst.Comparison) if ctx.code(c).strip() == "max_retries > 0"]
        return ctx, found

    lines = EQUIVALENT.splitlines(keepends=True)
    assert decided_earlier(*comparison_in(EQUIVALENT)) is not None
    assert decided_earlier(*comparison_in("".join(lines[:4]) + between + "".join(lines[4:]))) is None
