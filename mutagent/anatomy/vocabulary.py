"""One vocabulary for every reading of agent code: the words that make a name about retrying,
counting attempts or turns, waiting, failing, and the statuses and error classes a provider uses.

The anatomy (``mutagent.anatomy``) and the operators read names through these lists, so a word
learnt once (``retriable``, ``round_cap``) counts everywhere. Identifiers are split into
lower-case words (``maxRetries`` -> ``max``, ``retries``), so ``entries`` is never read as
``tries``. The stream words (transport errors, SDK and HTTP clients, stop markers, stream
reads) and the tool words (tool calls, registries, refusals, result keys, arguments) are here
too, with the two name splitters those families use and the stream family's per-file cache;
the recognisers built on them are the anatomy's modules by family (``streams/``, ``retry/``,
``tools/``, ``turns``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from http import HTTPStatus
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

import libcst as cst

if TYPE_CHECKING:
    from mutagent.mutation.context import SourceContext

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
        "iters",  # max_iters, n_iters; the singular ``iter`` names iterators (iter_lines), not turns
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

#: Words of what a termination condition returns to end a multi-agent run: ``StopMessage``,
#: ``TerminationSignal``, ``HaltEvent``.
STOP_SIGNAL_WORDS = frozenset({"stop", "terminate", "termination", "terminated", "halt"})

#: Model requests count as turns where passing their limit raises such an error
#: (``if usage.requests >= request_limit: raise UsageLimitExceeded``): one request per turn.
REQUEST_WORDS = frozenset({"request", "requests"})

# == streams: transport errors, SDK and HTTP clients, stop markers, stream reads ==================

#: Exception classes that mean "the connection failed, dropped or stalled", per defining module.
#: A qualified name matches when it starts with one of these modules (``aiohttp`` also covers
#: ``aiohttp.client_exceptions``) and ends with one of its names. Family roots that also cover
#: HTTP status errors (``httpx.HTTPError``, ``aiohttp.ClientError``, ``requests.RequestException``,
#: ``anthropic.APIError``) are deliberately absent: dropping them is not a disconnect bug.
TRANSPORT_ERRORS: dict[str, frozenset[str]] = {
    **dict.fromkeys(
        ("httpx", "httpx2", "httpcore"),
        frozenset(
            (
                "TransportError RequestError NetworkError TimeoutException ConnectTimeout ReadTimeout "
                "WriteTimeout PoolTimeout ConnectError ReadError WriteError CloseError ProtocolError "
                "RemoteProtocolError LocalProtocolError ProxyError SSEError"
            ).split()
        ),
    ),
    "aiohttp": frozenset(
        (
            "ClientConnectionError ClientConnectorError ClientConnectorDNSError ClientOSError "
            "ClientConnectionResetError ServerConnectionError ServerDisconnectedError ServerTimeoutError "
            "ConnectionTimeoutError SocketTimeoutError ClientPayloadError ClientConnectorSSLError "
            "ClientSSLError TransferEncodingError ContentLengthError"
        ).split()
    ),
    "requests": frozenset(
        (
            "ConnectionError ConnectTimeout ReadTimeout Timeout ChunkedEncodingError ProxyError SSLError"
        ).split()
    ),
    "urllib3": frozenset(
        (
            "ProtocolError ReadTimeoutError ConnectTimeoutError TimeoutError NewConnectionError "
            "IncompleteRead InvalidChunkLength SSLError ProxyError"
        ).split()
    ),
    "http.client": frozenset({"IncompleteRead", "RemoteDisconnected", "BadStatusLine"}),
    "socket": frozenset({"timeout", "error", "gaierror"}),
    "ssl": frozenset({"SSLError", "SSLEOFError", "SSLZeroReturnError"}),
    "asyncio": frozenset({"TimeoutError", "IncompleteReadError"}),
    "websockets": frozenset({"ConnectionClosed", "ConnectionClosedError"}),
    "builtins": frozenset(
        (
            "ConnectionError ConnectionResetError ConnectionAbortedError ConnectionRefusedError "
            "BrokenPipeError TimeoutError"
        ).split()
    ),
}
#: Names that mean a transport failure whatever package defines them: every Stainless-generated
#: SDK (anthropic, openai, groq, cerebras, together...) has these two.
UNAMBIGUOUS_TRANSPORT_ERRORS = frozenset(
    (
        "APIConnectionError APITimeoutError RemoteProtocolError ServerDisconnectedError ClientPayloadError "
        "ChunkedEncodingError WebSocketConnectionClosedError"
    ).split()
)
#: Exceptions a ``json.loads`` (or pydantic ``model_validate_json``) failure is caught as.
DECODE_ERROR_CATCHERS = frozenset(
    (
        "json.JSONDecodeError json.decoder.JSONDecodeError orjson.JSONDecodeError simplejson.JSONDecodeError "
        "simplejson.errors.JSONDecodeError ujson.JSONDecodeError pydantic.ValidationError "
        "pydantic_core.ValidationError builtins.ValueError builtins.Exception builtins.BaseException"
    ).split()
)
JSON_PARSERS = frozenset({"json.loads", "orjson.loads", "ujson.loads", "simplejson.loads", "rapidjson.loads"})
PYDANTIC_JSON_PARSERS = frozenset({"model_validate_json", "parse_raw", "validate_json"})

#: The stream family's splitter keeps an acronym whole (``HTTPError`` -> ``httperror``); the tool
#: family's (``TOOL_CAMEL``) splits it (``http``, ``error``). They differ on purpose: each family's
#: word lists were written against its own splitter, and one merged splitter would change output.
STREAM_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def word_list(name: str | None) -> list[str]:
    """``"_sawMessage_stop"`` -> ``["saw", "message", "stop"]``: words of an identifier or key."""
    if not name:
        return []
    return [part.lower() for part in re.split(r"[^A-Za-z0-9]+", STREAM_CAMEL.sub("_", name)) if part]


def last_word(name: str) -> str:
    """``raw_event`` -> ``event``; ``chunk_size`` -> ``size`` (a size is no chunk)."""
    words = word_list(name)
    return words[-1] if words else ""


def tokens(name: str | None) -> set[str]:
    """The words of an identifier or key, as a set."""
    return set(word_list(name))


STREAM_ERROR_WORDS = frozenset("error errors fail failed failure abort reject raise exception".split())
_STREAM_CACHE: WeakKeyDictionary[SourceContext, dict[str, object]] = WeakKeyDictionary()


def cached_analysis(ctx: SourceContext, key: str, compute: Callable[[], object]):  # noqa: ANN202 - any value
    """Per-file memo so several operators share one analysis of the same file."""
    slot = _STREAM_CACHE.setdefault(ctx, {})
    if key not in slot:
        slot[key] = compute()
    return slot[key]


#: Packages whose client constructors take ``max_retries`` and ``timeout`` (Stainless SDKs and
#: the LangChain wrappers that pass them through).
SDK_PACKAGES = frozenset(
    (
        "anthropic openai groq cerebras together fireworks mistralai langchain_anthropic langchain_openai"
    ).split()
)
HTTP_PACKAGES = frozenset({"httpx", "httpx2", "requests", "aiohttp"})
HTTP_CLIENT_CLASSES = frozenset({"Client", "AsyncClient", "Session", "ClientSession"})
HTTP_VERBS = frozenset("get post put patch delete request stream send head options".split())
#: The resource path of a model call: ``client.messages.create``, ``client.chat.completions.create``,
#: ``client.responses.stream``.
MODEL_RESOURCES = frozenset({"messages", "completions", "responses"})
MODEL_METHODS = frozenset({"create", "stream", "parse", "acreate"})
#: The httpx transport interface: what it returns is a response whose body is a stream.
TRANSPORT_SENDS = frozenset({"handle_request", "handle_async_request"})
#: Events/lines that end a turn, per provider: Anthropic ``message_stop``, OpenAI chat ``[DONE]``,
#: OpenAI Responses ``response.completed`` (Realtime ``response.done``), Bedrock ``messageStop``,
#: Cohere ``message-end``/``stream-end``.
STOP_MARKERS = frozenset(
    ("message_stop [DONE] response.completed response.done messageStop message-end stream-end").split()
)
#: Event classes of those markers (``anthropic.types.RawMessageStopEvent``...), matched by suffix.
STOP_EVENT_CLASSES = ("MessageStopEvent", "ResponseCompletedEvent")
#: Events that belong to a streamed response; a function mentioning them handles stream events.
STREAM_EVENT_MARKERS = frozenset(
    (
        "message_start content_block_start content_block_delta content_block_stop message_delta message_stop "
        "text_delta input_json_delta contentBlockStart contentBlockDelta contentBlockStop messageStart "
        "messageStop [DONE]"
    ).split()
)
STREAM_EVENT_WORDS = frozenset("event events evt ev chunk chunks delta deltas sse".split())
#: Stop reasons meaning the output limit cut the answer.
LENGTH_MARKERS = frozenset(
    {"max_tokens", "length", "max_output_tokens", "MAX_TOKENS", "model_context_window_exceeded"}
)
LENGTH_ENUM_MEMBERS = frozenset({"MAX_TOKENS", "LENGTH", "MAX_OUTPUT_TOKENS"})
#: Stop reasons of a normal end, used to recognise reason-mapping dicts.
NORMAL_END_MARKERS = frozenset({"end_turn", "stop", "stop_sequence", "completed", "STOP"})
#: Words of a sentinel's name that say "the stream is over": ``SENTINEL``, ``_END``, ``EOF``,
#: ``STREAM_DONE``. ``_MISSING``/``NOT_GIVEN``/``_UNSET`` are sentinels too, for absent values.
END_SENTINEL_WORDS = frozenset(
    "sentinel end eof done stop stopped finished complete completed terminator terminate final last".split()
)
ABSENT_SENTINEL_WORDS = frozenset(
    "missing unset notset not given default empty none absent undefined".split()
)
#: Values a stop/finish reason takes across providers (Anthropic, OpenAI, Gemini, Ollama...).
STOP_REASON_VALUES = frozenset(
    (
        "length max_tokens max_output_tokens model_context_window_exceeded stop end_turn stop_sequence "
        "tool_calls tool_use function_call content_filter pause_turn refusal STOP MAX_TOKENS SAFETY"
    ).split()
)
#: Words that, with ``reason``/``cause``, name a stop reason: ``finish_reason``, ``stopReason``,
#: ``end_reason``, Ollama's ``done_reason``.
REASON_SUBJECTS = frozenset({"stop", "finish", "end", "done"})
#: Bare names SDK-based loops keep the stop reason under (``reply.finish``); on their own they
#: may as well be a flag (``self.stop``) or a method, so they need evidence (see below).
BARE_REASON_NAMES = frozenset({"finish", "stop"})
#: Wrappers that bound an await, and the position/name of their limit argument.
ASYNC_LIMITS: dict[str, tuple[int, str]] = {
    "asyncio.wait_for": (1, "timeout"),
    "asyncio.timeout": (0, "delay"),
    "asyncio.timeout_at": (0, "when"),
    "async_timeout.timeout": (0, "delay"),
    "anyio.fail_after": (0, "delay"),
    "anyio.move_on_after": (0, "delay"),
    "trio.fail_after": (0, "seconds"),
    "trio.move_on_after": (0, "seconds"),
}
#: Calls that wait for the next piece of a stream (or for the response itself).
STREAM_READS = frozenset(
    (
        "anext __anext__ read readline readany readchunk readuntil readexactly recv receive get iter_any "
        "iter_chunked iter_lines iter_bytes iter_text aiter_lines aiter_bytes aiter_text aiter_raw "
        "wait_for_event next_event"
    ).split()
)
#: Strings that only code talking to a model API contains: endpoints and the SSE media type (not
#: hosts: ``api.openai.com`` also serves tracing and files).
MODEL_ENDPOINT_HINTS = (
    "/v1/messages",
    "chat/completions",
    "/v1/completions",
    "/v1/responses",
    "generateContent",
    "text/event-stream",
    "/api/chat",
    "/api/generate",
    "bedrock-runtime",
)
#: LM programs: SDK objects that prompt a model each time they are called (``dspy.Predict(sig)``),
#: by the package that defines them and their class names.
LM_PROGRAM_PACKAGES = frozenset({"dspy"})
LM_PROGRAM_TYPES = frozenset({"Predict", "ChainOfThought", "ReAct", "ProgramOfThought", "CodeAct", "Refine"})
#: Calls that read a streamed body line by line or chunk by chunk.
SSE_READS = frozenset(
    "iter_lines aiter_lines iter_bytes aiter_bytes iter_text aiter_text aiter_raw iter_any iter_chunked "
    "readline readany readchunk iter_events aiter_events".split()
)

# == tools: tool calls, registries, refusals, tool results, arguments ==============================

TOOL_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@lru_cache(maxsize=8192)
def tool_words(text: str) -> frozenset[str]:
    """Lower-case words of identifiers, keys and string contents in ``text``."""
    return frozenset(part for part in re.split(r"[^a-z0-9]+", TOOL_CAMEL.sub("_", text).lower()) if part)


def node_words(ctx: SourceContext, node: cst.CSTNode) -> frozenset[str]:
    """Words of a node's source text (memoised: rendering a node is not free)."""
    return ctx.cached(("tools", "words", id(node)), lambda: tool_words(ctx.code(node)))


#: Words of a call or keyword that records data for observability rather than sending it anywhere
#: (``span.add_event(...)``, ``tracer.record(...)``, ``logger.info(...)``, ``event_attributes=``):
#: a tool result built there is a copy for a trace, not what the model receives.
TELEMETRY_WORDS = frozenset(
    "span spans trace tracer tracing telemetry otel metric metrics attributes log logger logging".split()
)
#: Exceptions that derive from ``BaseException`` only: ``except Exception`` never catches them
#: (a task's cancellation, Ctrl-C, interpreter exit), so no retry written that way retries them.
BASE_ONLY_ERRORS = frozenset(
    (
        "builtins.KeyboardInterrupt builtins.SystemExit builtins.GeneratorExit asyncio.CancelledError "
        "asyncio.exceptions.CancelledError trio.Cancelled"
    ).split()
)
#: Things a tool is called by: ``tool(...)``, ``handler(...)``, ``spec.fn(...)``, ``run_tool(...)``.
TOOL_NOUNS = frozenset(
    ("tool tools handler handlers fn func function functions callable impl implementation").split()
)
INVOKE_VERBS = frozenset("invoke ainvoke dispatch execute run arun call acall apply".split())
CALLER_NOUNS = TOOL_NOUNS | {"executor", "registry", "toolbox", "toolset", "toolkit", "spec"}
CONTEXT_NOUNS = CALLER_NOUNS - {"spec"}  # ``spec`` alone (a CLI spec, a pytest spec...) says nothing
#: ``get_tool``/``make_tool_result``/``tool_error`` look a tool up or build a message, and
#: ``reject_tool_call``/``approve_tool`` answer or record a decision without running it: not a call of it.
NOT_INVOKING = frozenset(
    (
        "get find lookup load register make build create list describe resolve select format render log "
        "result results error errors message messages output outputs response schema schemas definition "
        "definitions calls name names spec specs param params choice extract parse "
        "reject refuse deny decline cancel abort skip block approve allow grant permit"
    ).split()
)
#: Collections that hold the tools the model may call.
REGISTRY_WORDS = frozenset(
    (
        "tools tool registry handlers functions allowed allowlist whitelist available permitted enabled "
        "registered known toolbox toolset toolkit catalog catalogue"
    ).split()
)
TOOLISH = frozenset(
    ("tool tools function functions fn func handler handlers registry toolbox toolset toolkit").split()
)
#: Things that say "this branch refuses": error results, refusal reasons.
REFUSAL_WORDS = REFUSAL_WORDS = frozenset(
    (
        "error errors err unknown invalid denied deny refuse refused refusal reject rejected forbidden "
        "unauthorized unauthorised disallowed permission missing cancelled canceled declined abort aborted "
        "fail failed failure required unexpected violation mismatch wrong unsupported illegal must cannot"
    ).split()
)
NEGATED = re.compile(
    r"\bnot\s+(allowed|permitted|found|authori[sz]ed|approved|available|supported)\b"
    # ownership refusals: "not in this tenant", "belongs to another account", "off limits"
    r"|\bnot\s+in\s+(this|your|the\s+same|the\s+caller'?s)\s+(tenant|workspace|account|org|organi[sz]ation|project)\b"
    r"|\b(another|a\s+different|other)\s+(tenant|user|account|customer|org|organi[sz]ation|workspace)'?s?\b"
    r"|\boff[\s-]limits\b"
    r"|\b(does\s+not|doesn'?t|do\s+not|don'?t)\s+(belong|own)\b",
    re.I,
)
#: Keys of a returned result that say it is an error: ``{"is_error": True}``, ``{"ok": False}``,
#: ``{"status": "error"}``, ``ToolResult(is_error=True)``.
ERROR_FLAGS = frozenset("is_error iserror error".split())
SUCCESS_FLAGS = frozenset("ok success succeeded allowed permitted approved".split())
ERROR_STATUSES = frozenset("error denied refused forbidden failed rejected".split())
#: Function/class/parameter words that put a function in charge of tool calls.
#: (``dispatch``/``execute``/``invoke`` alone name event dispatchers and database cursors too.)
TOOL_CONTEXT_WORDS = CONTEXT_NOUNS | {"call", "calls"}
ERROR_FLAG_KEYS = ("is_error", "isError")
ID_KEYS = ("tool_use_id", "tool_call_id", "call_id")
CONTENT_KEYS = ("content", "output", "result")
DIALECT_OF_ID = {"tool_use_id": "anthropic", "tool_call_id": "openai", "call_id": "responses"}
#: Other names a result object gives what the tool produced: ``StepResult(call_id=...,
#: observation=...)``, ``{"tool_call_id": ..., "text": ...}``.
PAYLOAD_KEYS = ("observation", "observations", "text", "response", "return_value", "outputs", "results")
RESULT_NOUNS = frozenset(
    "result results output outputs return observation response reply message outcome step".split()
)
TOOL_NAME_WORDS = frozenset("name tool toolset function fn func toolname called requested".split())
#: The head noun (last word) of a collection of tools: ``ALLOWED_TOOLS``, ``self._handlers``,
#: ``TOOL_REGISTRY``, ``available_functions``, ``allowlist``; deny-lists too (``BLOCKED_TOOLS``).
COLLECTION_HEADS = frozenset(
    (
        "tools registry handlers functions allowlist whitelist toolbox toolset toolsets toolkit toolkits "
        "catalog catalogue "
        "allowed permitted enabled available registered denylist blacklist blocklist disabled blocked "
        "forbidden allow permit allowlisted whitelisted"
    ).split()
)
#: Words that make a collection an allow-list (or deny-list) rather than the registry the tools
#: are looked up in: ``self.allow``, ``ALLOWED_TOOLS``, ``permitted``, ``enabled_tools``,
#: ``tool_whitelist``, ``BLOCKED_TOOLS``. ``self.tools``/``registry``/``handlers`` hold every tool
#: the loop can run, which may be more than the model may call.
ALLOW_WORDS = frozenset(
    (
        "allow allows allowed allowlist allowlisted permit permits permitted whitelist whitelisted enabled "
        "denylist blacklist blocklist disabled blocked forbidden denied banned"
    ).split()
)
#: ... or a mapping named for tools: ``tool_map``, ``TOOLS_BY_NAME``, ``function_table``.
MAPPING_HEADS = frozenset("map mapping dict table index lookup name names by set list".split())
UNWRAP_CALLS = frozenset("keys values items copy set list frozenset sorted tuple".split())


def ordered_words(name: str) -> list[str]:
    return [part for part in re.split(r"[^a-z0-9]+", TOOL_CAMEL.sub("_", name).lower()) if part]


#: Names of a tool call's arguments: ``args``, ``arguments``, ``call.input``, ``tool_input``,
#: ``fn_kwargs``, ``parsed_args``, ``arguments_pre_parsed`` -- arguments words plus at most these.
ARG_LEAVES = frozenset("args arguments argument arg kwargs params input".split())
ARG_MODIFIERS = frozenset(
    (
        "tool call function fn func raw parsed validated json pre kw the llm model str dict obj named action "
        "step clean cleaned new all"
    ).split()
)
ARGUMENT_READS = frozenset("get pop items values keys copy setdefault".split())
VALIDATE_WORDS = frozenset(
    ("validate validates validation validator valid violation violations conforms verify check").split()
)
#: What a validator named for it checks is the request or the run's configuration, not a tool
#: call's arguments: ``validate_output_config_conflict``, ``validate_session_conversation_settings``,
#: ``_validate_resumed_session_output_guardrail_safety``, ``_validate_input_content_types``,
#: ``validate_pending_input_filter``, ``_validate_token_budget``.
REQUEST_SUBJECTS = frozenset(
    (
        "config configuration settings setting session conversation guardrail guardrails output content "
        "types filter budget token tokens header headers options credentials auth env environment request"
    ).split()
)
#: pydantic's own validating entry points; the operator swaps these for their non-validating twins.
PYDANTIC_VALIDATORS = frozenset(
    ("model_validate model_validate_json parse_obj parse_raw validate_python validate_json").split()
)
#: Words that make an arguments name a tool call's own: ``tool_input``, ``fn_kwargs``, ``call.args``.
TOOL_CALL_WORDS = frozenset("tool call function fn func action use tc".split())
#: Verbs of a helper that turns the raw arguments into their parsed form (the same arguments).
PARSE_VERBS = frozenset({"parse", "loads", "decode", "deserialize"})
