"""The web server's guard on every request: only its own page may call it, and no body can hurt it.

Every request must carry the ``Host`` the server is bound to (a rebinding DNS name is refused);
an ``Origin``, when present, must be that host; a POST must be ``Content-Type: application/json``
(a cross-site form or ``no-cors`` fetch cannot send that). Bodies are bounded (MAX_BODY,
MAX_JSON_DEPTH, MAX_DIGITS) whatever ``Content-Length`` says; a body that is not read closes the
connection. A refusal is ``{"error": "<one line>"}`` with a 4xx status (ApiError). What the
server answers to a request that passes is `GuardedHandler.answer`'s job, in `experiments.web`.
"""

from __future__ import annotations

import json
import re
import socket
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, unquote, urlsplit

MAX_BODY = 64 * 1024  # bytes in one request body; a longer one is refused unread
MAX_JSON_DEPTH = 8  # nesting of a request body (the API's own bodies are 3 deep)
MAX_DIGITS = 19  # digits of one number in a request body
REQUEST_TIMEOUT_S = 20  # a client that stops sending mid-request is dropped after this long
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class ApiError(Exception):
    """An answer other than 200: status and a one-line reason."""

    def __init__(self, status: int, message: str):
        super().__init__(" ".join(message.split())[:500])
        self.status = status


def one_line(error: BaseException, path: Path | None = None) -> str:
    """An exception as one short line, without the server's folder names."""
    text = " ".join(str(error).split()) or type(error).__name__
    if path is not None:
        text = text.replace(str(path), path.name)
    return text[:300]


def json_depth(raw: bytes) -> int:
    """How deeply `raw`'s arrays and objects nest (brackets inside strings do not count)."""
    brackets = re.sub(rb'"(?:[^"\\]|\\.)*"', b"", raw).translate(None, delete=bytes(set(range(256)) - set(b"[]{}")))
    depth = deepest = 0
    for b in brackets:
        depth += 1 if b in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _small_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ApiError(400, f"a number in the request body has more than {MAX_DIGITS} digits")
    return int(text)


def _no_constant(text: str) -> None:
    raise ApiError(400, f"{text} is not JSON")


def parse_body(raw: bytes) -> dict:
    """The request body as a JSON object, checked before parsing: nesting, number sizes."""
    if json_depth(raw) > MAX_JSON_DEPTH:
        raise ApiError(400, f"request body nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        body = json.loads(raw or b"null", parse_int=_small_int, parse_constant=_no_constant)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ApiError(400, f"request body is not JSON: {e}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "request body must be a JSON object")
    return body


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """The Host headers this server answers: the address it is bound to (and the loopback names
    when it listens on loopback or on every address), with its port. Any other name, as a
    rebinding DNS name would give, is refused."""
    names = {host.lower()}
    if host in LOOPBACK or host in ("", "0.0.0.0", "::"):
        names |= set(LOOPBACK)
    names -= {"", "0.0.0.0", "::"}
    out = set()
    for n in names:
        n = f"[{n}]" if ":" in n else n
        out.add(f"{n}:{port}")
        if port == 80:
            out.add(n)
    return frozenset(out)


class GuardedHandler(BaseHTTPRequestHandler):
    """Checks a request, reads its body (bounded) and hands it to `answer`; any ApiError becomes
    its 4xx answer. The server gives `hosts` (from `allowed_hosts`) and `verbose`."""

    server: Any
    protocol_version = "HTTP/1.1"
    timeout = REQUEST_TIMEOUT_S  # on the socket: a stalled client cannot hold a thread

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", "frame-ancestors 'none'")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":  # a HEAD is answered with the headers alone
            self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj, separators=(",", ":")).encode(), "application/json")

    def _check_origin(self) -> None:
        """Only this server's own page may call it: the Host is the bound address, a present Origin is it too."""
        hosts = self.server.hosts
        host = (self.headers.get("Host") or "").strip().lower()
        if host not in hosts:
            raise ApiError(403, f"Host {host[:80]!r} is not this server's address ({', '.join(sorted(hosts))})")
        origin = self.headers.get("Origin")
        if origin is not None and origin.strip().lower() not in {f"http://{h}" for h in hosts}:
            raise ApiError(403, f"cross-origin request from {origin[:80]!r} refused")

    def _read_body(self) -> bytes:
        """The request body, bounded by MAX_BODY whatever Content-Length says. Anything else
        closes the connection unread (see `_refuse`): a body left on it must not be taken
        for the next request."""
        if self.headers.get("Transfer-Encoding") is not None:
            raise ApiError(411, "send the body with a Content-Length, not a Transfer-Encoding")
        given = self.headers.get_all("Content-Length") or []
        if len(given) != 1:
            raise ApiError(411, "a POST needs exactly one Content-Length")
        text = given[0].strip()
        if not (text.isascii() and text.isdigit()):
            raise ApiError(400, f"Content-Length must be a non-negative integer, got {text[:20]!r}")
        if len(text) > 9 or int(text) > MAX_BODY:
            raise ApiError(413, f"request body over {MAX_BODY} bytes")
        length = int(text)
        try:
            raw = self.rfile.read(length)
        except (TimeoutError, OSError):
            raise ApiError(408, f"request body not sent within {REQUEST_TIMEOUT_S} s") from None
        if len(raw) != length:
            raise ApiError(400, "request body shorter than its Content-Length")
        self._body_read = True
        return raw

    def _refuse(self, e: ApiError) -> None:
        """Answer an error; when the body was not read, close the connection after taking at most
        MAX_BODY bytes of what arrived (so that the client gets the answer before the close)."""
        unread = self.command not in ("GET", "HEAD") and not self._body_read
        if unread:
            self.close_connection = True
        self._json(e.status, {"error": str(e)})
        if unread:
            try:
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_WR)
                self.connection.settimeout(0.2)
                taken = 0
                while taken < MAX_BODY:
                    chunk = self.connection.recv(MAX_BODY - taken)
                    if not chunk:
                        break
                    taken += len(chunk)
            except OSError:
                pass

    def answer(self, method: str, url: SplitResult, parts: list[str], body: dict | None) -> None:
        """Answer a request that passed the checks (`parts`: the path's parts, unquoted; `body`:
        a POST's JSON object, None for a GET); raise ApiError to refuse it."""
        raise ApiError(404, f"nothing at {method} {url.path[:80]}")

    def _route(self, method: str) -> None:
        self._body_read = False
        try:
            self._check_origin()
            url = urlsplit(self.path)
            parts = [unquote(p) for p in url.path.split("/")[1:]]
            body = None
            if method == "POST":
                ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
                if ctype != "application/json":
                    raise ApiError(415, f"a POST must have Content-Type: application/json, got {ctype[:40]!r}")
                body = parse_body(self._read_body())
            self.answer(method, url, parts, body)
        except ApiError as e:
            self._refuse(e)
        except Exception as e:  # a bug in an engine or a bot: say so in one line, keep serving
            import traceback

            traceback.print_exc()
            self.close_connection = True
            self._json(500, {"error": f"internal error: {type(e).__name__}: {one_line(e)}"})

    def do_GET(self) -> None:
        self._route("GET")

    def do_POST(self) -> None:
        self._route("POST")

    def _not_served(self) -> None:
        """Any other method: the same Host and Origin checks first, then 405 in one line."""
        self._body_read = False
        try:
            self._check_origin()
            raise ApiError(405, f"method {self.command[:20]} is not served here; use GET or POST")
        except ApiError as e:
            self._refuse(e)

    do_HEAD = do_PUT = do_DELETE = do_OPTIONS = do_PATCH = do_TRACE = do_CONNECT = _not_served
