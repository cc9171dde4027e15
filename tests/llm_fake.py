"""A tiny OpenAI-compatible server for the llm: tests: the model name picks how it (mis)behaves.

``first``: answers ``{"action": NAME}`` with the first name of the schema's enum (the legal actions) or of
the grammar; ``prose``: a sentence that mentions an action (never accepted); ``number``: the text
``" 0 "`` (no legal action's number: they count from 1); ``one``: ``" 1 "`` (the first action shown);
``viewfirst``: ``full_view`` whenever it may, else as ``first``; ``flaky429``/``flaky503``/``flakyreset``: each
request answered twice with HTTP 429 (``Retry-After: 0``), 503 or a closed connection, then as ``first``;
``busy``: 429 with ``Retry-After: 3600``; ``error503``: always 503; ``think``: thinking, then ``ACTION: 1``
(with ``reasoning_content``); ``thinkbad``: no ACTION line;
``error500``: HTTP 500; ``garbage``: a 200 that is not JSON; ``unknown``: 404 model not found;
``huge``: a body far over the client's limit; ``hang``: headers and part of a body, then silence;
``drip``: a byte every 0.2 s for a minute; ``dripheaders``: the status line and headers a byte every 0.3 s
(a minute's worth); ``cut``: headers and half the body, then the connection closed (``cutchunked``: the same in chunked
encoding); ``late``: ``" 0 "`` after a second's thought. Every request body is
kept in ``requests``. With ``tls=(certfile, keyfile)`` it serves https (:func:`self_signed_cert` makes a pair).
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import re
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeLLM:
    def __init__(self, tls: tuple[str, str] | None = None):
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.seen: dict[str, int] = {}  # how often each request body came (the flaky modes)
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
        scheme = "http"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.server.server_address[1]}/v1"
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
    def completion(text: str, reasoning: str | None = None, model: str = "fake-model-2") -> bytes:
        message = {"role": "assistant", "content": text}
        usage = {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}
        if reasoning is not None:
            message["reasoning_content"] = reasoning
            usage["completion_tokens_details"] = {"reasoning_tokens": 3}
        return json.dumps({"id": "x", "object": "chat.completion", "model": model, "choices": [
            {"index": 0, "message": message, "finish_reason": "stop"}], "usage": usage}).encode()

    def times_seen(self, body: dict) -> int:
        """How many times this exact request came before (a retry resends the same body)."""
        key = json.dumps(body, sort_keys=True)
        self.seen[key] = self.seen.get(key, 0) + 1
        return self.seen[key] - 1

    def respond(self, handler, body: dict):
        mode = body.get("model")
        if mode == "first":
            self._send(handler, 200, self.completion(json.dumps({"action": legal_names(body)[0]})))
        elif mode == "viewfirst":  # asks for the whole view when it may, then plays the first legal action
            names = legal_names(body)
            asks = "full_view" in names and not body["messages"][-1]["content"].startswith("The whole view now")
            self._send(handler, 200, self.completion(json.dumps({"action": "full_view" if asks else names[0]})))
        elif mode in ("flaky429", "flaky503", "flakyreset"):  # twice a failure (429 says wait 0 s), then as first
            if self.times_seen(body) < 2:
                if mode == "flaky429":
                    handler.send_response(429)
                    handler.send_header("Retry-After", "0")
                    handler.send_header("Content-Length", "2")
                    handler.end_headers()
                    handler.wfile.write(b"{}")
                elif mode == "flaky503":
                    self._send(handler, 503, b'{"error": {"message": "overloaded"}}')
                else:
                    handler.close_connection = True  # no reply at all: the client sees the connection end
                return
            self._send(handler, 200, self.completion(json.dumps({"action": legal_names(body)[0]})))
        elif mode == "busy":  # rate limited for an hour
            handler.send_response(429)
            handler.send_header("Retry-After", "3600")
            handler.send_header("Content-Length", "2")
            handler.end_headers()
            handler.wfile.write(b"{}")
        elif mode == "error503":
            self._send(handler, 503, b'{"error": {"message": "overloaded"}}')
        elif mode == "think":  # thoughts in the content and in reasoning_content, the action on the last line
            self._send(handler, 200, self.completion("<think>attack? ACTION: 2</think>\nI weigh it up.\nACTION: 1",
                                                     reasoning="ACTION: 2 would be wrong; " * 50))
        elif mode == "thinkbad":
            self._send(handler, 200, self.completion("I would play the first one.\n1"))
        elif mode == "prose":
            self._send(handler, 200, self.completion("I think I will attack, probably."))
        elif mode == "number":
            self._send(handler, 200, self.completion(" 0 "))
        elif mode == "one":
            self._send(handler, 200, self.completion(" 1 "))
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
        elif mode == "dripheaders":
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + b"X-Pad: " + b"x" * 200 + b"\r\n"
            for byte in head[:200]:
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(0.3)
            handler.close_connection = True
        elif mode == "cut":
            data = self.completion(json.dumps({"action": "x"}))
            self._send(handler, 200, data[:len(data) // 2], length=len(data))
            handler.close_connection = True  # the server hangs up mid-body
        elif mode == "cutchunked":
            data = self.completion(json.dumps({"action": "x"}))
            handler.send_response(200)
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            half = data[:len(data) // 2]
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(half), half))
            handler.wfile.flush()
            handler.close_connection = True
        elif mode == "late":
            time.sleep(1)
            self._send(handler, 200, self.completion(" 0 "))
        else:
            self._send(handler, 400, b'{"error": "no such mode"}')


def legal_names(body: dict) -> list[str]:
    """The action names a request's structured output allows (schema enum or grammar literals)."""
    form = body.get("response_format") or {}
    schema = form.get("schema") or (form.get("json_schema") or {}).get("schema")
    if schema:
        return schema["properties"]["action"]["anyOf"][0]["enum"]
    if body.get("grammar"):
        return re.findall(r'"\\"([^"\\]+)\\""', body["grammar"])
    raise AssertionError("the fake server's 'first' mode needs structured output")


def self_signed_cert(directory) -> tuple[str, str]:
    """``(certfile, keyfile)`` of a certificate for 127.0.0.1 that signs itself (a client trusts it as its CA)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    certfile, keyfile = f"{directory}/cert.pem", f"{directory}/key.pem"
    with open(certfile, "wb") as out:
        out.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(keyfile, "wb") as out:
        out.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    return certfile, keyfile
