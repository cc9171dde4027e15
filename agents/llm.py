"""Language models at the table: the ``llm:`` bot spec, an OpenAI-compatible client and a strict harness.

Spec (parsed once by :func:`parse_llm_spec` into an :class:`LLMSpec`)::

    llm:MODEL@URL[,option=value...]
    llm:qwen2.5-7b@http://127.0.0.1:8080/v1,temperature=0.2,time=30,structured=on

``URL`` is the server's OpenAI-compatible base (``.../v1``; ``/chat/completions`` is appended unless the
URL already ends with it); http or https. Options:

=============== ======================================================================== =========
option          meaning                                                                  default
=============== ======================================================================== =========
temperature     sampling temperature, 0-2, or ``none`` (not sent: the server's; reasoning   0
                models that take no temperature)
max_tokens      the most tokens one answer may have, 1-65536 (sent as ``max_tokens``)     64 (think: 2048)
max_completion_tokens  the same, sent as ``max_completion_tokens`` instead (OpenAI's       -
                reasoning models take only this); not with ``max_tokens``
reasoning_effort  ``minimal``, ``low``, ``medium``, ``high``: sent as ``reasoning_effort``  -
thinking_budget the most tokens a model may think, 1-65536: sent as ``thinking``          -
                ``{"type": "enabled", "budget_tokens": N}``
think           ``on``: the model may think first and ends its answer with a last line    off
                ``ACTION: NAME_OR_NUMBER`` (only that line is read; ``<think>`` blocks
                are dropped first); needs ``structured=off``, which it then defaults to
retries         tries again after HTTP 429/500/502/503/504/529 or a connection broken     4
                before a reply, 0-10, within the move's time: after ``Retry-After``
                when the server says, else a backoff of 0.5 s doubling, with jitter
rpm             requests a minute to this endpoint, shared by every ``llm:`` seat of the  0 (none)
                process, 0-100000
concurrency     requests in flight at once to this endpoint, shared likewise, 0-1000     0 (none)
time            seconds for one move, every attempt included (the move forfeits after)   60
attempts        answers asked for one move: 1-5 (the second and later carry the reason)  2
history         ``summary``: the game's conversation is kept, and past ``history_chars``   summary
                replaced by a summary (counts of the moves and events it held) and
                a full view; ``full``: kept, past ``history_chars`` the oldest turns
                dropped down to half; ``none``: each decision alone (``game`` and
                ``turn`` are the old names of ``full`` and ``none``)
history_chars   the most characters of earlier turns kept, 1000-200000                  16000
                                                                                         (full: 60000)
view            ``changes``: after a decision's full view, only what changed since the   changes
                seat's last decision (the legal actions always whole); ``full``: the
                whole view every decision (always so with ``history=none``)
full_every      with ``view=changes``, the full view again every N decisions (0: only    0
                after a cut, or when the model answers ``full_view``)
cards           ``once``: every card's text once in the system message, none at the       once (view=full:
                decisions; ``named``: each decision the texts of the cards its view      named)
                names that were not described before
structured      ``on``: ``response_format`` ``json_object`` with a schema of the legal    on
                actions (llama.cpp, vLLM); ``json_schema``: OpenAI's ``json_schema`` form;
                ``grammar``: a GBNF grammar (llama.cpp); ``off``: free text
seed            the server's sampling seed (the bot's own seed when not given)           bot seed
key_env         the environment variable holding the API key                             TAVERNZOO_LLM_API_KEY
transcript      ``on``: each game's record keeps the prompts and raw answers (bounded:    off
                :data:`MAX_TRANSCRIPT_CHARS`, the API key scrubbed)
fallback        a bot spec (no commas, not ``llm:``): when the model has no legal move    -
                (refused answers, a server failure after the retries, the move's time
                past), this bot moves for the seat, counted as ``fallbacks``, instead of
                the seat forfeiting
=============== ======================================================================== =========

The harness (docs/llm.md): the answer must name exactly one legal action, by its name or its number
(its position in the list shown, 1..n), either as the whole answer (surrounding white space ignored) or as
``{"action": NAME_OR_NUMBER}``. Nothing else is read into it: no prose is searched for an action name.
An illegal or unreadable answer is told why and asked again, up to ``attempts`` answers in all; then
the move fails with :class:`~tavernzoo.agents.external.BotFailure` (kind ``illegal``), which a tournament
records as a forfeit like any bot failure. A 429, a 5xx overload or a connection reset is tried again
(``retries``, after ``Retry-After`` or a backoff with jitter, within the move's time); a server that cannot
be reached or hangs up mid-reply, answers another HTTP error, or sends something that is not a chat
completion fails the move (kinds ``connect``, ``http``, ``garbage``); a move past its time forfeits
(``timeout``).

Bounds: one reply at most :data:`MAX_REPLY_BYTES` (read in chunks, the connection dropped past it), the
whole move within ``time`` seconds: one deadline from the host name's lookup to the reply's last byte
(the lookup, the connection, TLS, and every read and write, the status line and headers included, are
given only the time left, so a resolver or a server that trickles or hangs is cut off), a game's kept
conversation at most ``history_chars`` (past it summarised, or with ``history=full`` the older turns dropped
down to half of it), failure reasons clipped. The API key is sent as a bearer token and never written
anywhere: reasons are scrubbed of it.

Per-game stats (:meth:`LLMBot.game_stats`; in game records as ``bot_stats`` and summed in results):
moves (decisions asked of the model), forced (decisions with one legal action, played without a request),
full_views (the model's ``full_view`` answers), requests (attempts), illegal answers, forfeits, retries
(requests tried again after a 429, a 5xx or a reset), tokens in and out (as the server counts them), reasoning
tokens (of those out), latency (seconds spent waiting for the server)."""

from __future__ import annotations

import collections
import email.utils
import hashlib
import http.client
import importlib.metadata
import inspect
import ipaddress
import json
import os
import random
import re
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .base import BotBase, as_bot
from .external import BotFailure, clip
from .text_views import EventCounts

DEFAULT_KEY_ENV = "TAVERNZOO_LLM_API_KEY"
MAX_REPLY_BYTES = 256 * 1024
"""The largest HTTP body accepted from the server (a chat completion of a few tokens is ~1 KB)."""
MAX_HISTORY_CHARS = 60_000
"""The most characters of earlier turns kept in a ``history=full`` conversation (the default of ``history_chars``)."""
SUMMARY_HISTORY_CHARS = 16_000
"""The default ``history_chars`` of ``history=summary``: past it the kept turns become a summary."""
FULL_VIEW = "full_view"
"""The answer that asks for the whole view again (``view=changes``; once a decision, no attempt spent)."""
MAX_ANSWER_CHARS = 2000
"""An answer longer than this is refused unread (an action name is a few dozen characters)."""
MAX_THOUGHT_CHARS = 64_000
"""With ``think=on``, an answer (thinking and its ACTION line) longer than this is refused unread."""
THINK_MAX_TOKENS = 2048
"""``max_tokens`` with ``think=on`` unless given."""
RETRY_STATUSES = (429, 500, 502, 503, 504, 529)
"""HTTP statuses tried again (rate limited, overloaded, a gateway's failure)."""
BACKOFF_S = 0.5
"""The first wait before trying again when the server names none (then doubled each time, with jitter)."""
MAX_BACKOFF_S = 30.0
MAX_TRANSCRIPT_CHARS = 200_000
"""The most characters of one game's transcript (``transcript=on``); past it the rest is counted, not kept."""
HARNESS_OPTIONS = ("attempts", "history", "history_chars", "view", "full_every", "cards", "structured", "think")
"""The spec's options that change what the model is shown or how its answer is read (in the harness hash)."""
STRUCTURED = ("on", "json_schema", "grammar", "off")
HISTORY = ("summary", "full", "none")
HISTORY_ALIASES = {"game": "full", "turn": "none"}  # the names of earlier versions
VIEWS = ("changes", "full")
CARDS = ("once", "named")

SYSTEM_PROMPT = """You are a player in a tabletop game run by a referee program.
The rules and what the view's entries mean{cards} are below, once for the whole game. At each decision you get
what happened since your last decision, {seen}, and the numbered list of legal actions (when
only one action is legal it is played for you without asking). {answer} An answer that is not exactly one
legal action is refused; after {attempts} refused answer(s) you forfeit the game."""
ANSWER_PLAIN = """Answer with exactly one legal action: its
name (for example {example!r}) or its number in that list (1 for the first), either alone or as JSON
{{"action": "NAME"}}. Write nothing else."""
ANSWER_THINK = """You may think first, as long as you need. Then end
your answer with a last line that is exactly ACTION: followed by one legal action's name (for example
ACTION: {example}) or its number in that list (1 for the first). Only that last line is read."""
SEEN_FULL = "what you can see"
SEEN_CHANGES = ("what you can see (the first time whole; after that only what changed since your last "
                f"decision: answer {FULL_VIEW!r} once a decision to see it whole again)")


@dataclass(frozen=True)
class LLMSpec:
    """A parsed ``llm:`` spec (see the module docstring)."""

    model: str
    url: str
    temperature: float | None = 0.0
    max_tokens: int = 64
    time: float = 60.0
    attempts: int = 2
    history: str = "summary"
    structured: str = "on"
    seed: int | None = None
    key_env: str = DEFAULT_KEY_ENV
    history_chars: int | None = None
    """None: the history mode's default (:data:`SUMMARY_HISTORY_CHARS`, :data:`MAX_HISTORY_CHARS`)."""
    view: str = "changes"
    full_every: int = 0
    cards: str | None = None
    """None: ``once`` with :attr:`changes`, else ``named``."""
    max_completion_tokens: int | None = None
    reasoning_effort: str | None = None
    thinking_budget: int | None = None
    think: str = "off"
    retries: int = 4
    rpm: int = 0
    concurrency: int = 0
    transcript: str = "off"
    fallback: str | None = None

    def token_limit(self) -> dict[str, int]:
        """The answer's token cap as the request carries it."""
        if self.max_completion_tokens is not None:
            return {"max_completion_tokens": self.max_completion_tokens}
        return {"max_tokens": self.max_tokens}

    @property
    def kept_chars(self) -> int:
        """The most characters of earlier turns kept."""
        if self.history_chars is not None:
            return self.history_chars
        return MAX_HISTORY_CHARS if self.history == "full" else SUMMARY_HISTORY_CHARS

    @property
    def changes(self) -> bool:
        """Whether decisions after the first show only what changed (a kept conversation holds the rest)."""
        return self.view == "changes" and self.history != "none"

    @property
    def cards_once(self) -> bool:
        """Whether every card's text goes once into the system message (none at the decisions)."""
        return (self.cards or ("once" if self.changes else "named")) == "once"

    @property
    def endpoint(self) -> str:
        url = self.url.rstrip("/")
        return url if url.endswith("/chat/completions") else url + "/chat/completions"

    def label(self) -> str:
        return f"llm:{self.model}@{self.url}"


def parse_llm_spec(spec: str) -> LLMSpec:
    """``llm:MODEL@URL[,option=value...]`` as an :class:`LLMSpec`; ValueError naming what is wrong and what
    is valid."""
    usage = "write llm:MODEL@URL[,option=value...], e.g. llm:my-model@http://127.0.0.1:8080/v1,time=30"
    if not spec.startswith("llm:"):
        raise ValueError(f"bot spec {spec!r} is not an llm: spec; {usage}")
    head, *options = spec[len("llm:"):].split(",")
    # The model name ends at the first "@http://" or "@https://" (a model name may hold an @ itself).
    found = re.match(r"^(.+?)@(https?://.*)$", head, flags=re.IGNORECASE)
    if found is None:
        model, at, url = head.partition("@")
        if at and model.strip() and url:
            raise ValueError(f"bot spec {spec!r}: the URL {url!r} must be http:// or https:// with a host; {usage}")
        raise ValueError(f"bot spec {spec!r} names no MODEL@URL; {usage}")
    model, url = found.groups()
    parsed = urllib.parse.urlsplit(url)
    if parsed.username or parsed.password or "@" in parsed.netloc:
        # Not echoed: the spec holds a secret.
        raise ValueError("an llm: bot spec must put no credentials in its URL; the API key comes from the "
                         f"environment variable {DEFAULT_KEY_ENV} (or key_env=NAME)")
    if not parsed.hostname:
        raise ValueError(f"bot spec {spec!r}: the URL {url!r} must be http:// or https:// with a host; {usage}")
    try:
        parsed.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise ValueError(f"bot spec {spec!r}: the URL {url!r} has an invalid port") from None
    values: dict[str, Any] = {}
    for option in options:
        name, eq, value = option.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or name not in _OPTIONS:
            raise ValueError(f"bot spec {spec!r}: unknown option {option!r}; valid: "
                             f"{', '.join(f'{k}=' for k in _OPTIONS)}")
        if name in values:
            raise ValueError(f"bot spec {spec!r}: option {name} given twice")
        values[name] = _OPTIONS[name](value, spec)
    if "max_tokens" in values and "max_completion_tokens" in values:
        raise ValueError(f"bot spec {spec!r}: give max_tokens or max_completion_tokens, not both (the one given is "
                         "the field the request carries)")
    if values.get("think") == "on":
        if values.setdefault("structured", "off") != "off":
            raise ValueError(f"bot spec {spec!r}: think=on needs structured=off (a schema or grammar leaves the model "
                             "no room to think before its ACTION: line)")
        values.setdefault("max_tokens", THINK_MAX_TOKENS)
    if values.get("view") == "changes" and values.get("history") == "none":
        raise ValueError(f"bot spec {spec!r}: view=changes needs a kept conversation (history=summary or full): "
                         "with history=none every decision is shown whole")
    return LLMSpec(model=model.strip(), url=url, **values)


def _number(kind, low, high, name, none=False):
    def check(value: str, spec: str):
        if none and value == "none":
            return None
        try:
            number = kind(value)
        except ValueError:
            number = None
        if number is None or not low <= number <= high or number != number:
            raise ValueError(f"bot spec {spec!r}: {name}={value!r} must be a {kind.__name__} from {low} to {high}"
                             + (" or none" if none else ""))
        return number
    return check


def _choice(choices, name, aliases=None):
    def check(value: str, spec: str):
        value = (aliases or {}).get(value, value)
        if value not in choices:
            raise ValueError(f"bot spec {spec!r}: {name}={value!r}; valid: {', '.join(choices)}")
        return value
    return check


def _fallback(value: str, spec: str) -> str:
    if not value or value.startswith("llm:"):
        raise ValueError(f"bot spec {spec!r}: fallback={value!r} must name a bot that needs no model server "
                         "(heuristic, random, mcts:200, a zoo: or cmd: bot; a spec without commas)")
    return value


def _env_name(value: str, spec: str) -> str:
    if not value or not all(c.isalnum() or c == "_" for c in value):
        raise ValueError(f"bot spec {spec!r}: key_env={value!r} must be an environment variable name "
                         "(letters, digits, _)")
    return value


_OPTIONS = {
    "temperature": _number(float, 0.0, 2.0, "temperature", none=True),
    "max_tokens": _number(int, 1, 65536, "max_tokens"),
    "max_completion_tokens": _number(int, 1, 65536, "max_completion_tokens"),
    "reasoning_effort": _choice(("minimal", "low", "medium", "high"), "reasoning_effort"),
    "thinking_budget": _number(int, 1, 65536, "thinking_budget"),
    "think": _choice(("off", "on"), "think"),
    "retries": _number(int, 0, 10, "retries"),
    "rpm": _number(int, 0, 100_000, "rpm"),
    "concurrency": _number(int, 0, 1000, "concurrency"),
    "transcript": _choice(("off", "on"), "transcript"),
    "fallback": lambda value, spec: _fallback(value, spec),
    "time": _number(float, 0.1, 3600.0, "time"),
    "attempts": _number(int, 1, 5, "attempts"),
    "history": _choice(HISTORY, "history", HISTORY_ALIASES),
    "history_chars": _number(int, 1000, 200_000, "history_chars"),
    "view": _choice(VIEWS, "view"),
    "full_every": _number(int, 0, 1000, "full_every"),
    "cards": _choice(CARDS, "cards"),
    "structured": _choice(STRUCTURED, "structured"),
    "seed": _number(int, 0, 2**31 - 1, "seed"),
    "key_env": _env_name,
}


# --- the client -----------------------------------------------------------------------------------------


@dataclass
class Completion:
    text: str
    tokens_in: int
    tokens_out: int
    seconds: float
    reasoning_tokens: int = 0
    """Of ``tokens_out``, those the server counts as reasoning (``completion_tokens_details``)."""
    reasoning: str = ""
    """The server's ``reasoning_content`` (clipped): recorded, never read for the action."""
    model: str = ""
    """The model id the server reports (``model`` of the reply)."""
    retries: int = 0
    """Requests tried again before this one answered (429, 5xx, a connection reset)."""


class _Transient(Exception):
    """A failure worth trying again (the server's ``Retry-After`` seconds, if it said)."""

    def __init__(self, failure: BotFailure, retry_after: float | None = None):
        super().__init__(failure.reason)
        self.failure, self.retry_after = failure, retry_after


RESET_ERRORS = (ConnectionResetError, ConnectionAbortedError, BrokenPipeError, http.client.RemoteDisconnected)
"""A connection broken before the reply: tried again (a refused one is not: nothing listens there)."""


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """A ``Retry-After`` header's wait in seconds (delta-seconds or an HTTP date), None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class EndpointLimit:
    """Requests a minute and requests in flight to one endpoint, shared by every ``llm:`` seat of a process
    (:func:`endpoint_limit`). A wait past the move's deadline fails the move (``timeout``)."""

    def __init__(self, rpm: int = 0, concurrency: int = 0, clock=time.monotonic):
        self.rpm, self.concurrency, self.clock = rpm, concurrency, clock
        self.starts: collections.deque[float] = collections.deque()
        self.in_flight = 0
        self.condition = threading.Condition()

    def tighten(self, rpm: int, concurrency: int) -> None:
        """The stricter of each limit (0: none) when another seat names the same endpoint."""
        def stricter(a: int, b: int) -> int:
            return min(a, b) if a and b else a or b

        with self.condition:
            self.rpm, self.concurrency = stricter(self.rpm, rpm), stricter(self.concurrency, concurrency)

    def acquire(self, deadline: float, on_timeout) -> None:
        """Room for one request, waited for until ``deadline`` at most; past it ``raise on_timeout()`` (at once
        when the minute's requests are spent until after the deadline)."""
        with self.condition:
            while True:
                now = self.clock()
                while self.starts and self.starts[0] <= now - 60.0:
                    self.starts.popleft()
                if self.rpm and len(self.starts) >= self.rpm:
                    ready = self.starts[0] + 60.0  # the oldest request of the minute leaves it then
                elif self.concurrency and self.in_flight >= self.concurrency:
                    ready = deadline  # when a request ends (release notifies), the deadline at the latest
                else:
                    self.starts.append(now)
                    self.in_flight += 1
                    return
                if now >= deadline or ready > deadline:
                    raise on_timeout()
                self.condition.wait(ready - now)

    def release(self) -> None:
        with self.condition:
            self.in_flight -= 1
            self.condition.notify()


_LIMITS: dict[str, EndpointLimit] = {}
_LIMITS_LOCK = threading.Lock()


def endpoint_limit(spec: LLMSpec) -> EndpointLimit | None:
    """The process's one :class:`EndpointLimit` of ``spec``'s endpoint (None when the spec sets no limit)."""
    if not spec.rpm and not spec.concurrency:
        return None
    with _LIMITS_LOCK:
        limit = _LIMITS.get(spec.endpoint)
        if limit is None:
            limit = _LIMITS[spec.endpoint] = EndpointLimit(spec.rpm, spec.concurrency)
        else:
            limit.tighten(spec.rpm, spec.concurrency)
        return limit


class ChatClient:
    """POSTs chat completions to one OpenAI-compatible endpoint, bounded in size and time (stdlib only)."""

    def __init__(self, spec: LLMSpec):
        self.spec = spec
        self.key = os.environ.get(spec.key_env) or None
        parts = urllib.parse.urlsplit(spec.endpoint)
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname, parts.port
        self._path = parts.path + (f"?{parts.query}" if parts.query else "")
        self.limit = endpoint_limit(spec)
        self.rng = random.Random(0)  # the backoff's jitter (reseeded by the bot)
        self.sleep = time.sleep

    def scrub(self, text: str) -> str:
        """``text`` without the API key in it."""
        return text.replace(self.key, "[API key]") if self.key else text

    def _fail(self, kind: str, reason: str) -> BotFailure:
        return BotFailure(kind, self.scrub(reason))

    def body(self, messages: list[dict[str, str]], extra: dict[str, Any]) -> dict[str, Any]:
        """The request's JSON: the sampling and reasoning settings the spec names, and nothing it does not."""
        spec = self.spec
        body: dict[str, Any] = {"model": spec.model, "messages": messages, **spec.token_limit(), "stream": False}
        if spec.temperature is not None:
            body["temperature"] = spec.temperature
        if spec.reasoning_effort is not None:
            body["reasoning_effort"] = spec.reasoning_effort
        if spec.thinking_budget is not None:
            body["thinking"] = {"type": "enabled", "budget_tokens": spec.thinking_budget}
        return {**body, **extra}

    def complete(self, messages: list[dict[str, str]], deadline: float, extra: dict[str, Any]) -> Completion:
        """One chat completion, tried again after a 429, a 5xx or a reset connection (up to ``retries`` times,
        waiting ``Retry-After`` or a backoff with jitter, within ``deadline``); BotFailure (``connect``,
        ``http``, ``garbage``, ``timeout``) otherwise."""
        retries = 0
        while True:
            try:
                completion = self._limited(messages, deadline, extra)
                completion.retries = retries
                return completion
            except _Transient as transient:
                failure = transient.failure
                if retries >= self.spec.retries:
                    raise BotFailure(failure.kind, failure.reason
                                     + (f" (after {retries} retries)" if retries else "")) from None
                wait = transient.retry_after
                if wait is None:
                    wait = min(MAX_BACKOFF_S, BACKOFF_S * 2 ** retries) * (0.5 + self.rng.random() / 2)
                if time.monotonic() + wait >= deadline:
                    raise BotFailure(failure.kind, failure.reason + f"; waiting {wait:.3g} s to try again would pass "
                                     f"the move's {self.spec.time:g} s") from None
                self.sleep(wait)
                retries += 1

    def _limited(self, messages: list[dict[str, str]], deadline: float, extra: dict[str, Any]) -> Completion:
        if self.limit is None:
            return self._post(messages, deadline, extra)
        self.limit.acquire(deadline, lambda: self._fail(
            "timeout", f"this process's limit for {self.spec.url} (rpm={self.spec.rpm}, concurrency="
            f"{self.spec.concurrency}) left no room within the move's {self.spec.time:g} s"))
        try:
            return self._post(messages, deadline, extra)
        finally:
            self.limit.release()

    def _post(self, messages: list[dict[str, str]], deadline: float, extra: dict[str, Any]) -> Completion:
        spec = self.spec
        body = self.body(messages, extra)
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        started = time.monotonic()
        where = f"{spec.url}"

        def left() -> float:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._fail("timeout", f"no complete answer from {where} within the move's {spec.time:g} s")
            return remaining

        connection_type = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        kwargs = {"context": _deadline_tls_context()} if self._https else {}
        connection = connection_type(self._host, self._port, timeout=left(), **kwargs)
        # http.client resolves the host name with getaddrinfo, which takes no timeout: a resolver that
        # hangs would hold the move past its time. The name is looked up within the time left instead.
        connection._create_connection = self._bounded_connect(left, where)
        try:
            try:
                connection.connect()
                # A socket timeout bounds each read, not the reply: a server sending a header byte now and
                # then would hold the move for as long as it liked. From here every read and write of the
                # socket (the status line and headers too) gets only the time left.
                connection.sock.deadline = deadline
                connection.request("POST", self._path, body=data, headers=headers)
                response = connection.getresponse()
            except TimeoutError:
                raise self._fail("timeout", f"{where} did not answer within the move's {spec.time:g} s") from None
            except (ConnectionError, OSError, http.client.HTTPException) as error:
                failure = self._fail("connect", f"cannot reach {where}: {error or type(error).__name__}")
                if isinstance(error, RESET_ERRORS):
                    raise _Transient(failure) from None
                raise failure from None
            raw = self._read(response, where)
        finally:
            connection.close()
        seconds = time.monotonic() - started
        text = raw.decode("utf-8", errors="replace")
        if response.status != 200:
            detail = _error_detail(text)
            failure = self._fail("http", f"{where} answered HTTP {response.status}"
                                 + (f": {clip(detail, 300)}" if detail else "")
                                 + (" (is the model name right?)" if response.status in (400, 404) else ""))
            if response.status in RETRY_STATUSES:
                raise _Transient(failure, retry_after_seconds(response.getheader("Retry-After")))
            raise failure
        try:
            reply = json.loads(text)
            message = reply["choices"][0]["message"]
            content = message.get("content")
            if content is None:
                content = ""
            if not isinstance(content, str):
                raise TypeError("content is not a string")
            usage = reply.get("usage") or {}
            tokens_in = _count(usage.get("prompt_tokens"))
            tokens_out = _count(usage.get("completion_tokens"))
            details = usage.get("completion_tokens_details") or {}
            reasoning_tokens = _count(details.get("reasoning_tokens") if isinstance(details, dict) else None)
            # Recorded in the transcript and counted, never read for the action: the answer is `content` alone.
            reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
            reasoning = clip(reasoning, MAX_THOUGHT_CHARS) if isinstance(reasoning, str) else ""
            model = reply.get("model")
            model = clip(model, 200) if isinstance(model, str) else ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
            raise self._fail("garbage", f"{where} answered something that is not a chat completion: "
                             f"{clip(repr(text[:200]), 240)}") from None
        return Completion(content, tokens_in, tokens_out, seconds, reasoning_tokens, reasoning, model)

    def _bounded_connect(self, left, where: str):
        """A ``socket.create_connection`` for ``http.client`` whose name lookup is bounded by ``left()``
        (the numeric addresses are then connected to, each within the time left; TLS still checks the
        certificate against the host name, which http.client passes on)."""
        def connect(address, timeout=None, source_address=None):
            host, port = address
            addresses = resolve(host, port, left(), lambda: self._fail(
                "timeout", f"the name {host!r} of {where} was not resolved within the move's {self.spec.time:g} s"))
            error: OSError | None = None
            for family, kind, protocol, _, socket_address in addresses:
                timeout = left()  # before the socket: past the time, BotFailure leaves nothing open
                sock = _DeadlineSocket(family, kind, protocol)
                try:
                    sock.settimeout(timeout)
                    if source_address:
                        sock.bind(source_address)
                    sock.connect(socket_address)
                    # TLS's handshake (one call, bounded as a whole by the socket's timeout) gets what is left.
                    sock.settimeout(left())
                    return sock
                except OSError as failure:
                    sock.close()
                    error = failure
            raise error if error is not None else OSError(f"no address for {host!r}")
        return connect

    def _read(self, response, where: str) -> bytes:
        chunks, size = [], 0
        while True:
            try:
                chunk = response.read1(1 << 14) if hasattr(response, "read1") else response.read(1 << 14)
            except TimeoutError:
                raise self._fail("timeout", f"{where} stopped sending within the move's {self.spec.time:g} s") from None
            except http.client.IncompleteRead:
                # A chunked body that ends before its last chunk: the server hung up mid-reply.
                raise self._fail("connect", f"{where} cut the connection mid-reply "
                                 f"(after {size} bytes of a chunked body)") from None
            except (ConnectionError, OSError, http.client.HTTPException) as error:
                failure = self._fail("connect", f"the connection to {where} broke: {error}")
                raise (_Transient(failure) if isinstance(error, RESET_ERRORS) else failure) from None
            if not chunk:
                if response.length:
                    # http.client returns the end of the stream as the end of the body, however many of the
                    # bytes the server announced are missing; half a completion is a broken connection.
                    raise self._fail("connect", f"{where} cut the connection mid-reply "
                                     f"({size} of the {size + response.length} bytes it announced came)")
                return b"".join(chunks)
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                raise self._fail("garbage", f"{where} sent a reply over {MAX_REPLY_BYTES} bytes; it was cut off")
            chunks.append(chunk)


class _Deadline:
    """Gives every read and write of a socket only the time left before ``deadline`` (``time.monotonic``),
    so the whole exchange, not each call, is bounded; past it, TimeoutError as for any socket timeout."""

    deadline: float | None = None

    def _time_left(self) -> None:
        if self.deadline is not None:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("the deadline has passed")
            self.settimeout(remaining)

    # http.client reads only through makefile(), whose reads are recv_into, and writes through sendall.
    def recv_into(self, *args, **kwargs):
        self._time_left()
        return super().recv_into(*args, **kwargs)

    def sendall(self, *args, **kwargs):
        self._time_left()
        return super().sendall(*args, **kwargs)


class _DeadlineSocket(_Deadline, socket.socket):
    pass


class _DeadlineSSLSocket(_Deadline, ssl.SSLSocket):
    pass


def _deadline_tls_context() -> ssl.SSLContext:
    """The default TLS context (certificates and host names checked), wrapping into deadline sockets."""
    context = ssl.create_default_context()
    context.sslsocket_class = _DeadlineSSLSocket
    return context


def resolve(host: str, port: int, seconds: float, on_timeout) -> list[tuple]:
    """``socket.getaddrinfo(host, port)`` (TCP) within ``seconds``; past them ``raise on_timeout()``.

    getaddrinfo itself cannot be interrupted, so it runs in a daemon thread that is left to finish on its
    own (it holds nothing but the name) while the caller goes on; its errors (``socket.gaierror``) are the
    caller's, as if it had called getaddrinfo."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:  # an address already (127.0.0.1, a local server): getaddrinfo looks nothing up
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    outcome: list[Any] = []

    def lookup() -> None:
        try:
            outcome.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as error:
            outcome.append(error)

    worker = threading.Thread(target=lookup, name=f"resolve {host}", daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        raise on_timeout()
    if isinstance(outcome[0], OSError):
        raise outcome[0]
    return outcome[0]


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _error_detail(text: str) -> str:
    try:
        data = json.loads(text)
        error = data.get("error", data) if isinstance(data, dict) else data
        if isinstance(error, dict):
            error = error.get("message", error)
        return str(error)
    except (ValueError, RecursionError):
        return text.strip()


# --- constrained output ---------------------------------------------------------------------------------


def answer_schema(names: list[str], also: tuple[str, ...] = ()) -> dict[str, Any]:
    """A JSON schema whose only valid documents are the answers the harness takes: ``{"action": NAME}`` for
    a legal action's name or ``{"action": N}`` for its number in the shown list (1..n), or one of ``also``
    (requests to the harness such as :data:`FULL_VIEW`, after the names)."""
    numbers = list(range(1, len(names) + 1))
    return {"type": "object", "properties": {"action": {"anyOf": [
        {"type": "string", "enum": [*names, *also]}, {"type": "integer", "enum": numbers}]}},
        "required": ["action"], "additionalProperties": False}


def answer_grammar(names: list[str], also: tuple[str, ...] = ()) -> str:
    """A GBNF grammar of ``{"action": "NAME"}`` for the legal names (every name a quoted literal) and ``also``
    or ``{"action": N}`` for their numbers in the shown list (1..n)."""
    def literal(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    alternatives = " | ".join([literal('"' + name + '"') for name in [*names, *also]]
                              + [literal(str(number)) for number in range(1, len(names) + 1)])
    return f'root ::= "{{\\"action\\": " ( {alternatives} ) "}}"\n'


def structured_request(mode: str, names: list[str], also: tuple[str, ...] = ()) -> dict[str, Any]:
    if mode == "on":
        return {"response_format": {"type": "json_object", "schema": answer_schema(names, also)}}
    if mode == "json_schema":
        return {"response_format": {"type": "json_schema", "json_schema": {
            "name": "action", "strict": True, "schema": answer_schema(names, also)}}}
    if mode == "grammar":
        return {"grammar": answer_grammar(names, also)}
    return {}


REQUEST = -1
""":func:`read_answer`'s action for an answer that is one of its ``also`` requests (the request is the reason)."""


def action_line(text: str) -> tuple[str | None, str]:
    """A thinking answer's action (``think=on``): after any ``<think>...</think>`` block, the last non-empty
    line must read ``ACTION: ...``; ``(what follows it, "")``, else ``(None, why not)``. Nothing else of the
    thinking is read."""
    if len(text) > MAX_THOUGHT_CHARS:
        return None, f"the answer is {len(text)} characters long, over {MAX_THOUGHT_CHARS}"
    _, closed, after = text.rpartition("</think>")
    lines = [line.strip() for line in (after if closed else text).splitlines() if line.strip()]
    if not lines or not lines[-1].startswith("ACTION:"):
        return None, "the answer's last line must be ACTION: followed by one legal action's name or number"
    return lines[-1][len("ACTION:"):], ""


def read_answer(text: str, names: tuple[str, ...], legal: list[int],
                also: tuple[str, ...] = ()) -> tuple[int | None, str]:
    """``(action, "")`` when ``text`` names exactly one legal action (its name, or its number N in the
    shown list: ``legal[N - 1]``; alone or as ``{"action": ...}``), ``(REQUEST, request)`` when it is one of
    ``also``, else ``(None, why not)``. No prose is searched."""
    answer: Any = text.strip()
    if len(answer) > MAX_ANSWER_CHARS:
        return None, f"the answer is {len(answer)} characters long; name one action"
    if answer.startswith("{"):
        try:
            data = json.loads(answer)
        except (ValueError, RecursionError):
            return None, "the answer starts like JSON but is not valid JSON"
        if not isinstance(data, dict) or set(data) != {"action"}:
            return None, 'JSON answers must be exactly {"action": NAME_OR_NUMBER}'
        answer = data["action"]
        if isinstance(answer, bool) or not isinstance(answer, int | str):
            return None, "the action must be a name or a number"
        if isinstance(answer, int):
            answer = str(answer)
        answer = answer.strip()
    if not answer:
        return None, "the answer is empty"
    if answer.isdigit() and answer.isascii():
        # The number of a line in the list the model was shown, never the game's internal action index:
        # a model answering 1 means the first line.
        number = int(answer)
        if 1 <= number <= len(legal):
            return legal[number - 1], ""
        return None, f"{number} is not the number of a legal action (they are numbered 1 to {len(legal)})"
    if answer in also:
        return REQUEST, answer
    if answer in names:
        index = names.index(answer)
        if index in legal:
            return index, ""
        return None, f"{answer!r} is not legal now"
    return None, f"{clip(repr(answer), 80)} is not the name or number of a legal action"


# --- the bot --------------------------------------------------------------------------------------------


@dataclass
class GameStats:
    moves: int = 0
    """Decisions the model was asked to make."""
    forced: int = 0
    """Decisions with one legal action, played without a request."""
    full_views: int = 0
    """Times the model asked for the whole view (``view=changes``)."""
    fallbacks: int = 0
    """Decisions the ``fallback`` bot played because the model had no legal move."""
    requests: int = 0
    illegal: int = 0
    forfeits: int = 0
    retries: int = 0
    """Requests tried again after a 429, a 5xx or a reset connection (not counted in ``requests``)."""
    tokens_in: int = 0
    tokens_out: int = 0
    reasoning_tokens: int = 0
    """Of ``tokens_out``, the server's reasoning tokens."""
    latency_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"moves": self.moves, "forced": self.forced, "full_views": self.full_views, "fallbacks": self.fallbacks,
                "requests": self.requests, "illegal": self.illegal, "forfeits": self.forfeits,
                "retries": self.retries, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "reasoning_tokens": self.reasoning_tokens,
                "latency_s": round(self.latency_s, 4)}


@dataclass
class _Conversation:
    """The turns of a game's conversation kept for its next requests (``history`` summary or full): each
    decision's user message and accepted answer, with the events told and the moves played in them (what
    a summary counts when they are dropped)."""

    messages: list[dict[str, str]] = field(default_factory=list)
    events: list[list[str]] = field(default_factory=list)
    """The event lines each kept decision told (one list per decision)."""
    summary: EventCounts = field(default_factory=lambda: EventCounts())
    """What the turns dropped so far held."""
    cut: bool = False
    """Turns were dropped since the last decision: the next one shows the full view (and the summary)."""

    def chars(self) -> int:
        return sum(len(m["content"]) for m in self.messages)

    def add(self, asked: dict[str, str], answer: str, events: list[str]) -> None:
        self.messages += [asked, {"role": "assistant", "content": answer}]
        self.events.append(events)

    def trim(self, mode: str, cap: int) -> None:
        """Past ``cap`` characters: ``summary`` drops every kept turn into the summary; ``full`` drops the oldest
        down to half of it. Either way the kept conversation then grows unchanged for many requests (a cached
        prefix stays valid) rather than shifting at every one."""
        if self.chars() <= cap:
            return
        keep = 0 if mode == "summary" else cap // 2
        while self.messages and (self.chars() > keep or mode == "summary"):
            _asked, answer = self.messages[:2]
            self.summary.add(self.events.pop(0), answer["content"])
            del self.messages[:2]
        self.cut = True


class LLMBot(BotBase):
    """A seat played by a language model through an OpenAI-compatible server (see the module docstring)."""

    wants_information_state = True
    wants_events = True  # the model is told everything its seat saw happen since its previous decision

    def __init__(self, config: Any, seed: int | None, spec: LLMSpec | str, game: Any,
                 load_bot: Callable | None = None):
        """``load_bot`` (agents.load_bot, handed in by it: this module is below the loader) loads the
        ``fallback=`` bot."""
        self.spec = parse_llm_spec(spec) if isinstance(spec, str) else spec
        self.game, self.config = game, config
        self.name = self.spec.label()
        self.names = tuple(game.action_names(config))
        self.client = ChatClient(self.spec)
        self.seed = self.spec.seed if self.spec.seed is not None else random.Random(seed).randrange(2**31)
        self.client.rng.seed(self.seed)
        self.model_id = ""  # the model the server says answered (its latest reply's)
        self._harness: str | None = None
        self.fallback = None
        if self.spec.fallback is not None:
            if load_bot is None:
                raise ValueError(f"bot spec {self.name!r}: fallback= needs the bot loader (agents.load_bot)")
            try:
                self.fallback = as_bot(load_bot(self.spec.fallback, game, config, seed))
            except ValueError as error:
                raise ValueError(f"bot spec {self.name!r}: fallback={self.spec.fallback}: {error}") from None
        self.seat = 0
        self.last_prompt: str | None = None
        self.reset()

    # --- the Bot protocol and the hosts' hooks ------------------------------------------------------

    def reset(self) -> None:
        from .text_views import ShownSoFar

        self.stats = GameStats()
        self._history = _Conversation()
        self._shown = ShownSoFar(cards=not self.spec.cards_once)
        self._since_full = 0  # decisions shown since the last full view, that one included
        self._view: dict[str, Any] | None = None
        self._info: Any = None
        self._since: list[str] = []
        self._events_told = False  # the host hands every step's events (the table engine does)
        self._transcript: list[dict[str, Any]] = []
        self._transcript_chars = 0

    def begin_game(self, seat: int, seed: int | None = None) -> None:
        self.seat = seat
        self.reset()
        if self.fallback is not None:
            self.fallback.begin_game(seat, seed)

    def game_over(self, returns: Any, seat: int) -> None:
        if self.fallback is not None:
            self.fallback.game_over(returns, seat)

    def observe_view(self, view: dict[str, Any]) -> None:
        self._view = view

    def observe_information_state(self, state: Any, seat: int) -> None:
        self._info, self.seat = state, seat

    def observe_events(self, lines: list[str]) -> None:
        self._events_told = True
        self._since.extend(lines)
        if self.fallback is not None and self.fallback.wants_events:
            self.fallback.observe_events(lines)

    def game_stats(self) -> dict[str, Any]:
        """The game's counts, and what a record needs to say which harness and model played: the tavernzoo
        version, :meth:`harness_hash`, the model asked for and the one the server said answered, and with
        ``transcript=on`` the transcript (non-numbers: results sum only the counts)."""
        out: dict[str, Any] = {**self.stats.as_dict(), "tavernzoo": _version(), "harness": self.harness_hash(),
                               "model": self.spec.model, "model_id": self.model_id}
        if self.spec.transcript == "on":
            out["transcript"] = self._transcript
        return out

    def harness_hash(self) -> str:
        """A short sha256 of everything that decides what the model is shown and how its answer is read: the
        instructions, the rules brief under the table's options, the entries' meanings, the cards' texts, the view
        formats and the answer parsers (their source), and the spec's options that change them. Two records with
        the same hash were played under the same harness."""
        from . import text_views

        if self._harness is not None:
            return self._harness
        cards = text_views.SeatView(self.game, 0, {}, [], config=self.config).all_cards
        parts = [SYSTEM_PROMPT, ANSWER_PLAIN, ANSWER_THINK, SEEN_FULL, SEEN_CHANGES,
                 text_views.changes_format(self.game), text_views.rules_brief(self.game, self.config),
                 json.dumps(cards, sort_keys=True),
                 json.dumps(getattr(self.game.encoder, "VIEW_FIELDS", {}), sort_keys=True),
                 *(_source(part) for part in (read_answer, action_line, structured_request, answer_schema,
                                                        answer_grammar, text_views.SeatView, text_views.ShownSoFar,
                                                        text_views.view_changes, text_views.view_text,
                                                        text_views.bounded_events, LLMBot.act)),
                 json.dumps({name: getattr(self.spec, name) for name in HARNESS_OPTIONS}, sort_keys=True)]
        self._harness = hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:16]
        return self._harness

    def _note(self, entry: dict[str, Any]) -> None:
        """One transcript entry, scrubbed of the API key, while the game's transcript has room."""
        if self.spec.transcript != "on":
            return
        entry = {key: self.client.scrub(value) if isinstance(value, str) else value for key, value in entry.items()}
        size = len(json.dumps(entry))
        if self._transcript_chars + size > MAX_TRANSCRIPT_CHARS:
            if not self._transcript or "cut" not in self._transcript[-1]:
                self._transcript.append({"cut": f"the transcript stops here: over {MAX_TRANSCRIPT_CHARS} characters"})
            return
        self._transcript_chars += size
        self._transcript.append(entry)

    def system_message(self, seat_view: Any) -> dict[str, str]:
        """The same text at every decision of a game: the instructions with a fixed example, the seat, the
        rules, the entries' meanings; every request opens with it, so servers that cache prompts read it once."""
        from .text_views import changes_format

        seen = SEEN_CHANGES if self.spec.changes else SEEN_FULL
        answer = (ANSWER_THINK if self.spec.think == "on" else ANSWER_PLAIN).format(example=self.names[0])
        cards = " (and what every card does)" if self.spec.cards_once and seat_view.all_cards else ""
        text = SYSTEM_PROMPT.format(answer=answer, attempts=self.spec.attempts, seen=seen, cards=cards)
        if self.spec.changes:
            text += "\n" + changes_format(self.game)
        return {"role": "system", "content": text + "\n\n" + seat_view.standing_text(all_cards=self.spec.cards_once)}

    def act(self, observation: dict[str, Any]) -> int:
        from .text_views import bounded_events, seat_view_of

        legal = [int(i) for i in np.flatnonzero(np.asarray(observation["action_mask"]))]
        if len(legal) == 1:
            # Nothing to choose: no request is paid for. The events seen so far stay for the next real
            # decision, whose story then covers this step too.
            self._view = self._info = None
            self.stats.forced += 1
            return legal[0]
        if self._info is None:
            raise BotFailure("protocol", "the host handed the llm bot no information state of its seat "
                             "(agents.infoset.feed does)")
        # Over the bot protocol only the information state arrives; the seat's view of it is the same view.
        view = self._view if self._view is not None else self.game.encoder.view(self._info, self.seat)
        # A host that does not hand every step's events (the bot protocol sends only the information state)
        # leaves the latest step's, which the view says are only those.
        since = bounded_events(self._since) if self._events_told else None
        seat_view = seat_view_of(self.game, view, self._info, self.seat, legal, since)
        info = self._info
        self._view = self._info = None
        self._since = []
        self.stats.moves += 1
        try:
            return self._ask(seat_view, legal)
        except BotFailure as failure:
            if self.fallback is None:
                self.stats.forfeits += 1
                raise
            # The table plays on: the fallback bot, told what it wants of this decision, moves for the seat.
            self.stats.fallbacks += 1
            self._note({"move": self.stats.moves, "fallback": self.spec.fallback, "failure": str(failure)})
            if self.fallback.wants_view:
                self.fallback.observe_view(view)
            if self.fallback.wants_information_state:
                self.fallback.observe_information_state(info, self.seat)
            return self.fallback.act(observation)

    def _ask(self, seat_view: Any, legal: list[int]) -> int:
        """The model's move at one decision (BotFailure when it has none)."""
        spec = self.spec
        if not spec.changes:
            self._shown.reset()  # nothing earlier is kept for the model: every decision is shown whole
        history = self._history
        full = history.cut or (spec.full_every > 0 and self._since_full >= spec.full_every)
        if history.cut or self._shown.view is None:
            self._shown.reset()
            full = True
        prompt = self._shown.decision_text(seat_view, full)
        if history.cut and history.summary.decisions:
            prompt = history.summary.text() + "\n\n" + prompt
        history.cut = False
        self._since_full = 1 if full else self._since_full + 1
        self.last_prompt = seat_view.standing_text(all_cards=self.spec.cards_once) + "\n\n" + prompt
        legal_names = [self.names[i] for i in legal]
        also = (FULL_VIEW,) if spec.changes and not full else ()
        extra = structured_request(spec.structured, legal_names, also)
        extra["seed"] = (self.seed + self.stats.moves) % 2**31  # a fixed seed per move: games reproduce
        system = self.system_message(seat_view)
        if self.stats.moves == 1:
            self._note({"system": system["content"]})
        turn = [{"role": "user", "content": prompt}]
        asked = turn[0]  # what the kept conversation holds of this decision
        deadline = time.monotonic() + spec.time
        reason = ""
        attempt = 0
        while attempt < spec.attempts:
            kept = history.messages if spec.history != "none" else []
            self.stats.requests += 1
            completion = self.client.complete([system, *kept, *turn], deadline, extra)
            self.stats.tokens_in += completion.tokens_in
            self.stats.tokens_out += completion.tokens_out
            self.stats.reasoning_tokens += completion.reasoning_tokens
            self.stats.retries += completion.retries
            self.stats.latency_s += completion.seconds
            self.model_id = completion.model or self.model_id
            self._note({"move": self.stats.moves, "prompt": turn[-1]["content"], "answer": completion.text,
                        **({"reasoning": clip(completion.reasoning, 4000)} if completion.reasoning else {})})
            answer, reason = (action_line(completion.text) if spec.think == "on"
                              else (completion.text, ""))
            index, reason = (read_answer(answer, self.names, legal, also) if answer is not None
                             else (None, reason))
            turn.append({"role": "assistant", "content": clip(completion.text, MAX_THOUGHT_CHARS if spec.think == "on"
                                                              else MAX_ANSWER_CHARS)})
            if index == REQUEST:
                # The whole view, once: the request spends no attempt (and is not offered again this decision).
                self.stats.full_views += 1
                also = ()
                extra = {**extra, **structured_request(spec.structured, legal_names)}
                asked = {"role": "user", "content": "The whole view now:\n\n"
                         + self._shown.decision_text(seat_view, full=True)}
                turn.append(asked)
                self._since_full = 1
                continue
            if index is not None:
                if spec.history != "none":
                    # Kept as asked (the first user message), with the accepted answer as its name.
                    history.add(asked, self.names[index], seat_view.since)
                    history.trim(spec.history, spec.kept_chars)
                return index
            attempt += 1
            self.stats.illegal += 1
            if attempt < spec.attempts:
                turn.append({"role": "user", "content": f"Refused: {reason}. Answer with exactly one legal action "
                             f"name or number from the list (for example {legal_names[0]!r}); "
                             f"{spec.attempts - attempt} attempt(s) left."})
        raise BotFailure("illegal", self.client.scrub(f"{spec.attempts} answer(s) refused; the last: {reason}"))

    def close(self) -> None:
        if self.fallback is not None:
            self.fallback.close()


def _source(part: Any) -> str:
    """A function's or class's source (its qualified name where no source ships, e.g. from a zip)."""
    try:
        return inspect.getsource(part)
    except (OSError, TypeError):
        return part.__qualname__


def _version() -> str:
    try:
        return importlib.metadata.version("tavernzoo")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def make_llm_bot(spec: str, game: Any, config: Any, seed: int | None, load_bot: Callable) -> LLMBot:
    """``load_bot``'s entry for ``llm:`` specs (it hands itself in, for ``fallback=``)."""
    return LLMBot(config, seed, parse_llm_spec(spec), game, load_bot)


__all__ = ["ChatClient", "LLMBot", "LLMSpec", "answer_grammar", "answer_schema", "make_llm_bot", "parse_llm_spec",
           "read_answer"]
