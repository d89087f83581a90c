"""One vocabulary for every reading of agent code: the words that make a name about retrying,
counting attempts or turns, waiting, failing, and the statuses and error classes a provider uses.

The anatomy (``mutagent.anatomy``) and the operators read names through these lists, so a word
learnt once (``retriable``, ``round_cap``) counts everywhere. Identifiers are split into
lower-case words (``maxRetries`` -> ``max``, ``retries``), so ``entries`` is never read as
``tries``. Stream and tool vocabulary still lives in ``operators/_streams.py`` and
``operators/_tools.py``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from http import HTTPStatus

import libcst as cst

# -- identifiers -----------------------------------------------------------------------------

#: Words that make a function, class, collection or call about retrying.
RETRY_WORDS = frozenset(
    {
        "retry",
        "retries",
        "retrying",
        "retried",
        "retryable",
        "retriable",
        "backoff",
        "transient",
        "recoverable",
    }
)
#: Words that make a collection or check about failures that must not be retried.
FATAL_WORDS = frozenset(
    {"fatal", "permanent", "unrecoverable", "nonretryable", "nonretriable", "giveup", "abort", "aborting"}
)
NEGATIONS = frozenset({"non", "not", "no", "never", "dont", "without"})
#: Words that on their own make a number an attempt counter or an attempt limit.
COUNT_WORDS = frozenset({"attempt", "attempts", "attempted", "retries", "tries", "tried", "trial", "trials"})
#: ``retry``/``try`` count only with one of these: ``retry_count``, ``max_retry``, ``try_no``.
COUNT_MODIFIERS = frozenset(
    {
        "count",
        "counts",
        "counter",
        "cnt",
        "limit",
        "max",
        "num",
        "number",
        "n",
        "no",
        "nr",
        "idx",
        "index",
        "budget",
        "left",
        "remaining",
        "total",
    }
)
#: Words that make a retry-ish name a duration, not a count (``retry_after``, ``attempt_timeout``).
TIME_WORDS = frozenset(
    {
        "after",
        "delay",
        "delays",
        "wait",
        "interval",
        "sleep",
        "timeout",
        "ms",
        "seconds",
        "secs",
        "backoff",
        "jitter",
        "deadline",
        "time",
        "elapsed",
        "duration",
    }
)


@lru_cache(maxsize=4096)
def words(identifier: str) -> tuple[str, ...]:
    """``maxRetries`` -> ``("max", "retries")``; ``APIError`` -> ``("api", "error")``; ``_back_off`` ->
    ``("backoff",)``. Words, not substrings, so ``entries`` never reads as ``tries``."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", identifier)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", spaced)
    # ``_back_off``/``BackOff`` name a backoff helper as much as ``backoff`` does.
    spaced = re.sub(r"(?<![a-z0-9])back_?off(?![a-z0-9])", "backoff", spaced.lower())
    return tuple(word for word in re.split(r"[^a-z0-9]+", spaced) if word)


def identifier(node: cst.CSTNode | None) -> str | None:
    """The name a reader would call ``node`` by: ``self.max_retries`` -> ``max_retries``,
    ``self._sleep(d)`` -> ``_sleep``, ``request["messages"]`` -> ``messages``."""
    if isinstance(node, cst.Await):
        node = node.expression
    if isinstance(node, cst.Call):
        node = node.func
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        index = node.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            value = index.value.evaluated_value
            return value if isinstance(value, str) else None
    return None


def is_fatal_name(name: str | None) -> bool:
    """``FATAL_STATUSES``, ``NON_RETRYABLE_ERRORS``, ``no_retry_codes``, ``should_give_up``."""
    if not name:
        return False
    parts = set(words(name))
    if FATAL_WORDS & parts or {"give", "up"} <= parts:
        return True
    return bool(parts & NEGATIONS and parts & RETRY_WORDS)


def is_retry_name(name: str | None) -> bool:
    """``RETRYABLE_STATUSES``, ``_should_retry``, ``with_backoff``, ``RetryPolicy`` (not the fatal kind)."""
    return bool(name) and bool(RETRY_WORDS & set(words(name))) and not is_fatal_name(name)


def is_count_name(name: str | None) -> bool:
    """Attempt counters and limits: ``attempt``, ``max_attempts``, ``retries_left``, ``retry_count``.

    Durations that share the vocabulary (``retry_after``, ``attempt_timeout``) are not counts.
    """
    if not name:
        return False
    parts = set(words(name))
    if parts & TIME_WORDS:
        return False
    if parts & COUNT_WORDS:
        return True
    return name.lower() == "retry" or bool(parts & {"retry", "try"} and parts & COUNT_MODIFIERS)


#: Words an injected sleeper's name may carry besides "sleep": ``self._sleep``, ``sleep_fn``,
#: ``async_sleep``, ``fake_sleep``. ``before_sleep`` (a hook) or ``DoSleep`` (a value) are not sleeps.
SLEEPER_WORDS = frozenset(
    {"sleep", "async", "fn", "func", "function", "impl", "sleeper", "real", "fake", "clock"}
)

#: Verbs an injected waiting callable is named by besides "sleep": ``self.sleeper``, ``pause``,
#: ``wait``, ``delay_fn``, ``backoff_sleep``. ``wait_for_approval`` or ``event.wait()`` are not waits.
WAIT_VERBS = frozenset({"sleep", "sleeper", "pause", "wait", "delay"})
WAITER_WORDS = SLEEPER_WORDS | WAIT_VERBS | {"backoff", "retry", "do", "then"}
#: Words of an expression that is a duration: ``pause``, ``delay_s``, ``retry_after``, ``backoff``.
DURATION_WORDS = TIME_WORDS | {"pause", "s", "sec", "wait", "waits", "backoff", "delays"}
SLEEP_FUNCTIONS = frozenset(
    {
        "time.sleep",
        "asyncio.sleep",
        "anyio.sleep",
        "trio.sleep",
        "gevent.sleep",
        "eventlet.sleep",
        "curio.sleep",
    }
)
#: Words of a test that asks whether the attempt failed: ``if not ok``, ``if error``, ``if resp.failed``.
FAILURE_WORDS = frozenset(
    {
        "ok",
        "success",
        "succeeded",
        "successful",
        "error",
        "err",
        "errors",
        "failed",
        "failure",
        "exc",
        "exception",
    }
)
# -- statuses and errors -------------------------------------------------------------------------

#: 408 request timeout, 409 conflict (a lock held elsewhere), 425 too early, 429 rate limited;
#: every 5xx, 529 overloaded included, is the server's fault and worth another attempt.
RETRYABLE_4XX = frozenset({408, 409, 425, 429})
#: The fatal code a mutant adds to a retryable collection: a malformed request stays malformed.
FATAL_EXAMPLE = 400


def is_retryable_status(code: int) -> bool:
    return code in RETRYABLE_4XX or 500 <= code <= 599


def http_status(node: cst.CSTNode) -> int | None:
    """The HTTP error status (4xx/5xx) ``node`` spells: ``429``, ``HTTPStatus.TOO_MANY_REQUESTS``,
    ``httpx.codes.SERVICE_UNAVAILABLE``, ``requests.codes.too_many_requests``,
    ``status.HTTP_503_SERVICE_UNAVAILABLE``."""
    code: int | None = None
    if isinstance(node, cst.Integer):
        code = int(node.evaluated_value)
    elif isinstance(node, cst.Attribute):
        attr = node.attr.value
        spelled = re.match(r"HTTP_(\d{3})_", attr)
        if spelled:
            code = int(spelled.group(1))
        elif {"status", "codes", "http"} & set(words(identifier(node.value) or "")):
            member = HTTPStatus.__members__.get(attr.upper())
            code = int(member) if member is not None else None
    return code if code is not None and 400 <= code <= 599 else None


def is_status_name(name: str | None) -> bool:
    """``status``, ``status_code``, ``resp.status``, ``e.code``, ``http_status``."""
    return bool(name) and bool({"status", "code"} & set(words(name)))


RETRYABLE_ERRORS = frozenset(
    {
        "RateLimitError",
        "InternalServerError",
        "APIConnectionError",
        "APITimeoutError",
        "OverloadedError",
        "ServiceUnavailableError",
        "ConnectionError",
        "ConnectTimeout",
        "ReadTimeout",
        "TimeoutException",
        "ConnectError",
        "ReadError",
        "WriteError",
        "RemoteProtocolError",
        "NetworkError",
        "TransportError",
        "PoolTimeout",
        "ClientConnectionError",
        "ClientConnectorError",
        "ServerDisconnectedError",
        "ClientPayloadError",
        "ServerTimeoutError",
        "ChunkedEncodingError",
        "ConnectionResetError",
        "ConnectionAbortedError",
        "BrokenPipeError",
        "IncompleteRead",
        "TooManyRequests",
        "ResourceExhausted",
        "ServiceUnavailable",
        "DeadlineExceeded",
        "Timeout",
        "TimeoutError",
    }
)
FATAL_ERRORS = frozenset(
    {
        "AuthenticationError",
        "PermissionDeniedError",
        "BadRequestError",
        "NotFoundError",
        "UnprocessableEntityError",
        "InvalidRequestError",
        "RequestTooLargeError",
        "Unauthorized",
        "Forbidden",
        "NotFound",
        "BadRequest",
        "InvalidArgument",
        "PermissionDenied",
        "Unauthenticated",
    }
)


RETRYABLE_ERROR_WORDS = frozenset(
    {"overloaded", "unavailable", "throttled", "throttling", "transient", "retryable", "retriable"}
)

#: A raised class named ``TryAgain``, ``RetryLater``, ``TemporaryFailure`` asks for another attempt;
#: ``RetryError``/``RetriesExhausted`` report that the attempts ran out, which is the opposite.
TEMPORARY_WORDS = frozenset({"temporary", "temporarily", "transient", "later"})
GAVE_UP_WORDS = frozenset({"error", "exception", "exhausted", "exceeded", "failed", "limit", "max"})


# -- turns -------------------------------------------------------------------------------------

#: Words that make a counter or a limit about the agent's turns (model calls of one run).
TURN_WORDS = frozenset(
    {
        "turn",
        "turns",
        "step",
        "steps",
        "round",
        "rounds",
        "iteration",
        "iterations",
        "hop",
        "hops",
        "cycle",
        "cycles",
    }
)
#: Words that make a turn name a limit rather than a counter: ``max_turns``, ``step_budget``, ``_round_cap``.
LIMIT_WORDS = frozenset(
    {"max", "maximum", "limit", "limits", "cap", "budget", "allowed", "ceiling", "bound", "most", "threshold"}
)
#: Words that make a name about something else that is counted and bounded in agent code:
#: pages of a listing, tokens of usage accounting, chunks of a stream, items of a batch.
NOT_TURN_WORDS = frozenset(
    {
        "page",
        "pages",
        "token",
        "tokens",
        "usage",
        "chunk",
        "chunks",
        "item",
        "items",
        "batch",
        "batches",
        "byte",
        "bytes",
        "char",
        "chars",
        "line",
        "lines",
        "row",
        "rows",
        "epoch",
        "epochs",
        "warmup",
        "retry",
        "retries",
        "attempt",
        "attempts",
        "tries",
        "backoff",
        "delay",
        "timeout",
        "seconds",
    }
)
#: Words of a call that talks to a model (or runs a whole model turn) when the SDK call itself is
#: out of sight: ``self.llm.invoke``, ``await self._call_model()``, ``run_single_turn``.
MODEL_CALL_WORDS = frozenset(
    {"llm", "chat", "completion", "completions", "complete", "turn", "agent", "assistant"}
)

#: ``self.model.query(...)``, ``llm.generate(...)``: an object named for a model with a verb that asks it.
MODEL_OBJECT_WORDS = frozenset({"model", "llm", "lm"})
MODEL_VERBS = frozenset(
    "query aquery invoke ainvoke generate agenerate complete acomplete chat achat respond".split()
    + ["create", "stream"]
)


def is_turn_name(name: str | None) -> bool:
    """``turn``, ``steps_taken``, ``self._rounds``, ``max_turns``, ``step_budget`` (not ``max_retries``,
    ``page``, ``max_tokens``)."""
    if not name:
        return False
    parts = set(words(name))
    return bool(parts & TURN_WORDS) and not parts & NOT_TURN_WORDS


def is_turn_limit_name(name: str | None) -> bool:
    """``max_turns``, ``step_budget``, ``_round_cap``, ``MAX_ITERATIONS``, ``turn_limit``."""
    return is_turn_name(name) and bool(set(words(name or "")) & LIMIT_WORDS)


# -- retry-after and tool guards ----------------------------------------------------------------

#: Headers a server states its wait in (seconds or an HTTP date; milliseconds).
RETRY_AFTER_HEADERS = frozenset({"retry-after", "retry-after-ms"})
#: Headers by which a server orders a retry or forbids one, whatever the status says.
RETRY_OVERRIDE_HEADERS = frozenset({"x-should-retry"})

#: What a tool guard checks, by the words of its test (``mutagent map`` names the kind).
GUARD_KINDS: dict[str, frozenset[str]] = {
    "allow-list": frozenset(
        "allow allowed allowlist permitted permit whitelist enabled denylist blocklist blocked".split()
        + ["forbidden"]
    ),
    "schema": frozenset(
        "schema validate validation valid invalid required missing problems unexpected".split()
    ),
    "tenant": frozenset("tenant tenants owner owns account org organization workspace".split()),
    "approval": frozenset("approval approved approve confirm confirmed consent pending decision".split()),
    "idempotency": frozenset("idempotency idempotent dedup dedupe completed executed processed seen".split()),
}


# -- history, partial output and its rollback -----------------------------------------------------

#: What conversation history is called: ``messages``, ``self.history``, ``request["messages"]``.
HISTORY_WORDS = frozenset(
    {"messages", "msgs", "history", "conversation", "transcript", "dialog", "dialogue", "chat"}
)

#: What an attempt's partial output is called while it streams in.
PARTIAL_WORDS = frozenset(
    {
        "partial",
        "partials",
        "chunks",
        "deltas",
        "fragments",
        "pieces",
        "parts",
        "accumulated",
        "buffer",
        "buf",
        "pending",
        "draft",
        "collected",
        "streamed",
    }
)

#: Verbs of a call that undoes what a failed attempt already did: ``await rewind()``,
#: ``self._rollback_partial()``, ``state.revert()``, ``transcript.undo_last()``.
ROLLBACK_VERBS = frozenset({"rewind", "rollback", "revert", "undo"})

#: What a per-attempt accumulator of streamed output is called (its variable or its class):
#: ``acc = ReplyAccumulator()``, ``assembler = StreamAssembler()``, ``builder = MessageBuilder()``.
ACCUMULATOR_WORDS = PARTIAL_WORDS | frozenset(
    {"acc", "accumulator", "assembler", "builder", "collector", "aggregator", "accum"}
)


# -- time budgets and tenacity stop strategies ----------------------------------------------------

#: Words of a time budget: ``deadline``, ``time.monotonic()``, ``elapsed > max_elapsed``.
TIME_BUDGET_WORDS = frozenset(
    {"deadline", "elapsed", "monotonic", "time", "timeout", "budget", "perf", "counter", "expires"}
)

TENACITY_STOPS = frozenset({"stop_after_attempt", "stop_after_delay", "stop_before_delay"})


# -- attempt limits -------------------------------------------------------------------------------

#: Words that make an attempt-count name a configured limit rather than a running counter.
ATTEMPT_LIMIT_WORDS = frozenset({"max", "maximum", "limit", "budget", "total", "allowed", "num", "number"})

#: Words of a counter that counts down to zero: compared with 0, it is the bound itself.
COUNTDOWN_WORDS = frozenset({"left", "remaining", "remain"})


# -- reading a header or a carried wait -----------------------------------------------------------

HEADER_GETTERS = frozenset({"get", "getheader", "get_one", "getfirst"})

#: A helper that reads a header it is given by name: ``_get_header_value(error, "retry-after")``,
#: ``header(resp, RETRY_AFTER_MS)``, ``parse_header_seconds(resp, name)``.
READ_WORDS = frozenset("get read header headers value lookup fetch parse extract find".split())

WRITE_WORDS = frozenset("set send add write put del delete remove pop update append".split())

#: Attribute names that carry a server's wait after it was parsed from the header:
#: ``err.retry_after``, ``normalized.retry_after_seconds``, ``err.wait_hint``, ``exc.server_delay``.
CARRIED_WAIT_WORDS = frozenset({"wait", "delay", "backoff", "after"})

CARRIED_SOURCE_WORDS = frozenset({"hint", "hinted", "server", "suggested", "requested", "header"})

WAITING_WORDS = frozenset({"delay", "wait", "backoff", "sleep", "pause", "advice"})


# -- delay arguments ------------------------------------------------------------------------------

DELAY_KEYWORDS = frozenset({"seconds", "secs", "delay", "duration", "timeout", "delay_seconds"})


# -- retry classification -------------------------------------------------------------------------

#: Field names that hold a classification whatever their class: ``statuses``, ``retry_on``, ``errors``.
CLASSIFICATION_WORDS = frozenset(
    {
        "status",
        "statuses",
        "code",
        "codes",
        "error",
        "errors",
        "exception",
        "exceptions",
        "types",
        "on",
        "forcelist",
    }
)

ERROR_TYPE_WORDS = frozenset(
    {
        "error",
        "exception",
        "timeout",
        "overloaded",
        "limit",
        "exceeded",
        "unavailable",
        "failure",
        "failed",
        "throttled",
        "throttling",
        "busy",
        "reset",
        "refused",
        "aborted",
        "quota",
        "invalid",
        "denied",
        "unauthorized",
    }
)

#: Names of delay schedules (``RETRY_DELAYS``, ``backoff_seconds``); ``RETRY_AFTER_STATUS_CODES`` is
#: still a classification.
CLASSIFIED_DELAY_WORDS = frozenset(
    {
        "delay",
        "delays",
        "wait",
        "waits",
        "interval",
        "intervals",
        "sleep",
        "ms",
        "seconds",
        "secs",
        "jitter",
        "duration",
        "schedule",
    }
)

#: Flags that carry a verdict: ``retryable = False`` on an error class, ``Failure(..., retryable=True)``.
#: (``transient``/``fatal`` alone are too common elsewhere: rich's ``Progress(transient=True)``.)
VERDICT_WORDS = frozenset({"retryable", "retriable"})


# -- idempotency keys -----------------------------------------------------------------------------

KEY_WORDS = frozenset("key keys idempotency fingerprint digest dedup dedupe hash".split())

DONE_WORDS = frozenset(
    (
        "completed executed processed done applied replayed cache cached results ledger journal idempotency "
        "dedup memo outcomes store seen ran finished redis kv"
    ).split()
)

HASHERS = frozenset("sha256 sha1 sha512 sha224 sha384 md5 blake2b blake2s uuid5 uuid3".split())

IDEMPOTENCY_HEADERS = frozenset("idempotency-key x-idempotency-key".split())

PRESENCE_CALLS = frozenset("get exists has contains __contains__ lookup fetch".split())

STORE_CALLS = frozenset("add set put setdefault update append save record".split())

REPEAT_WORDS = frozenset("idempotency idempotent dedup dedupe deduplication replay duplicate".split())

IDEMPOTENCY_WORDS = frozenset({"idempotency", "idempotent", "dedup", "dedupe", "deduplication"})


# -- limit errors and model requests --------------------------------------------------------------

#: Words of an error raised once a limit is passed: ``MaxTurnsExceeded``, ``UsageLimitExceeded``,
#: ``TooManyStepsError``. A rate limiter's error (``RateLimitExceeded``) is about time, not turns.
EXCEEDED_WORDS = frozenset({"exceeded", "exceeds", "exceed", "limit", "limits", "exhausted", "many"})

#: Model requests count as turns where passing their limit raises such an error
#: (``if usage.requests >= request_limit: raise UsageLimitExceeded``): one request per turn.
REQUEST_WORDS = frozenset({"request", "requests"})
