"""Running the web app: uvicorn (asyncio, h11) with bounded headers, connections and time-outs.

uvicorn serves every connection as a coroutine, so a client that stalls does not hold up the others;
it bounds idle keep-alive connections but not a client that never finishes its request headers, so
:class:`BoundedH11Protocol` closes a connection whose request headers have not all arrived within
:data:`HEADER_SECONDS` (bodies are bounded by the app itself, :func:`tavernzoo.web.app.read_body`).
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_SECONDS = 10.0  # from a connection's start (or its last response) to its next request's headers
KEEP_ALIVE_SECONDS = 5
MAX_HEADER_BYTES = 64 << 10
MAX_CONNECTIONS = 1000  # more at once are answered 503


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing connections that do not send a whole request head in time."""

    header_seconds = HEADER_SECONDS

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._header_timer = self.loop.call_later(self.header_seconds, self._header_timeout)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._restart_header_timer()

    def _restart_header_timer(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
        if not self.transport.is_closing():
            self._header_timer = self.loop.call_later(self.header_seconds, self._header_timeout)

    def _header_timeout(self) -> None:
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            return  # a request is being served: its body and its answer have their own bounds
        if not self.transport.is_closing():
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
        super().connection_lost(exc)


def is_loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free one)."""
    if not 0 <= port < 65536:
        raise ValueError(f"--port {port} is not a TCP port (0-65535)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=2048)
    except OSError as error:
        raise ValueError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None


def make_server(app: Any, sock: socket.socket, quiet: bool = True, header_seconds: float = HEADER_SECONDS) -> Any:
    """A uvicorn Server for ``app`` on the bound ``sock`` (run it with ``server.run(sockets=[sock])``)."""
    import uvicorn

    protocol = type("Protocol", (BoundedH11Protocol,), {"header_seconds": header_seconds})
    config = uvicorn.Config(
        app, http=protocol, ws="none", lifespan="off", log_level="warning" if quiet else "info",
        access_log=not quiet, timeout_keep_alive=KEEP_ALIVE_SECONDS, limit_concurrency=MAX_CONNECTIONS,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES, timeout_graceful_shutdown=2,
    )
    return uvicorn.Server(config)


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def run_server(bot: str | None, web: bool, host: str, port: int, quiet: bool, banner: Callable[[str], str],
               allow_local: bool = False, sandbox: str | None = None, max_think: float | None = None) -> int:
    """Serve until Ctrl-C: the page (``web``) and/or the bot protocol for ``bot``; ``max_think`` (seconds)
    bounds the search of a seat the page asks for."""
    from .app import LOOPBACK_HOSTS, create_app
    from .tables import THINK_SECONDS

    loopback = is_loopback(host)
    if not loopback:
        print(f"warning: serving on {host}: other machines may reach this server", file=sys.stderr)
    app = create_app(bot=bot, web=web, allow_local=allow_local, sandbox=sandbox,
                     hosts=LOOPBACK_HOSTS + ((host,) if loopback else ("*",)),
                     max_think=THINK_SECONDS if max_think is None else max_think)
    sock = bind(host, port)
    server = make_server(app, sock, quiet)
    print(banner(url_of(sock)), flush=True)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    return 0


class ServerThread:
    """``with ServerThread(app) as url:`` the app served on a free loopback port by a thread (for tests
    and for drawing the docs' screenshots)."""

    def __init__(self, app: Any, header_seconds: float = HEADER_SECONDS):
        self.sock = bind("127.0.0.1", 0)
        self.server = make_server(app, self.sock, True, header_seconds)
        self.url = url_of(self.sock)
        self.thread: Any = None

    def __enter__(self) -> str:
        import threading
        import time

        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)
        return self.url

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()
