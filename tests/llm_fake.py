"""A tiny OpenAI-compatible server for the llm: tests: the model name picks how it (mis)behaves.

``first``: answers ``{"action": NAME}`` with the first name of the schema's enum (the legal actions) or of
the grammar; ``prose``: a sentence that mentions an action (never accepted); ``number``: the text
``" 0 "``; ``error500``: HTTP 500; ``garbage``: a 200 that is not JSON; ``unknown``: 404 model not found;
``huge``: a body far over the client's limit; ``hang``: headers and part of a body, then silence;
``drip``: a byte every 0.2 s for a minute. Every request body is kept in ``requests``.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeLLM:
    def __init__(self):
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802 - the http.server name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append(body)
                owner.headers.append(dict(self.headers))
                try:
                    owner.respond(self, body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up, as it should

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.handle_error = lambda request, address: None  # a client that hung up early is expected
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    @staticmethod
    def _send(handler, status: int, data: bytes, length: int | None = None):
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data) if length is None else length))
        handler.end_headers()
        handler.wfile.write(data)
        handler.wfile.flush()

    @staticmethod
    def completion(text: str) -> bytes:
        return json.dumps({"id": "x", "object": "chat.completion", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}}).encode()

    def respond(self, handler, body: dict):
        mode = body.get("model")
        if mode == "first":
            self._send(handler, 200, self.completion(json.dumps({"action": legal_names(body)[0]})))
        elif mode == "prose":
            self._send(handler, 200, self.completion("I think I will attack, probably."))
        elif mode == "number":
            self._send(handler, 200, self.completion(" 0 "))
        elif mode == "error500":
            self._send(handler, 500, b'{"error": {"message": "internal trouble"}}')
        elif mode == "garbage":
            self._send(handler, 200, b"<html>not json</html>")
        elif mode == "unknown":
            self._send(handler, 404, b'{"error": {"message": "model \'unknown\' not found"}}')
        elif mode == "huge":
            self._send(handler, 200, self.completion("x" * (2 << 20)))
        elif mode == "hang":
            self._send(handler, 200, b'{"choices": [', length=1000)
            time.sleep(20)
        elif mode == "drip":
            handler.send_response(200)
            handler.send_header("Content-Length", "100000")
            handler.end_headers()
            for _ in range(300):
                handler.wfile.write(b" ")
                handler.wfile.flush()
                time.sleep(0.2)
        else:
            self._send(handler, 400, b'{"error": "no such mode"}')


def legal_names(body: dict) -> list[str]:
    """The action names a request's structured output allows (schema enum or grammar literals)."""
    form = body.get("response_format") or {}
    schema = form.get("schema") or (form.get("json_schema") or {}).get("schema")
    if schema:
        return schema["properties"]["action"]["enum"]
    if body.get("grammar"):
        return re.findall(r'"\\"([^"\\]+)\\""', body["grammar"])
    raise AssertionError("the fake server's 'first' mode needs structured output")
