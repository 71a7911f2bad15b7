"""Serve the Chalice app locally, like ``chalice local`` but without its keep-alive stall.

``chalice local`` writes the response headers and the body in two separate sends; with a
keep-alive client (boto3, the AWS CLI) the second small segment waits on Nagle's algorithm
until the client's delayed ACK fires, about 40 ms per request. Here every response leaves in
one ``sendall`` on a socket with TCP_NODELAY, over a threading HTTP/1.1 server.

Requests still go through chalice's own ``LocalGateway``, so routing, content types,
authorizers and CORS behave as under ``chalice local``; what differs is the edge, which plays API
Gateway's part more strictly: the request's framing is checked before its body is read (one
Content-Length, or chunked alone; at most MAX_BODY_BYTES), a request it cannot frame is answered
and its connection closed without reading further, a request must arrive within
``GatewayHandler.timeout`` seconds however slowly it trickles in, every refusal is an AWS-shaped
JSON error (``__type`` + ``x-amzn-ErrorType``), including the 403 for unknown paths, and the app
sees every value of a repeated header in ``multiValueHeaders``, as behind API Gateway.

With ``--tls-cert``/``--tls-key`` (infra/local/tls.py makes a pair) the port speaks HTTPS only
(TLS 1.2 or later), for clients that take no ``http://`` endpoint; on AWS, API Gateway terminates
TLS. Each connection's handshake runs on its own thread, and a plain HTTP request sent to that
port is answered with a 400 that says so, not left to hang.

Usage: ``python -m infra.local.server --host 127.0.0.1 --port 8000 [--app app:app]
[--tls-cert server.pem --tls-key server-key.pem]``
"""

from __future__ import annotations

import argparse
import base64
import importlib
import io
import json
import logging
import os
import re
import socket
import ssl
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional
from urllib.parse import parse_qs, urlparse

from chalice.app import Chalice
from chalice.config import Config
from chalice.local import (CustomLocalChalice, LambdaEventConverter, LocalChalice, LocalGateway, LocalGatewayException,
                            MatchResult, RouteMatcher)

PROJECT_DIR = Path(__file__).resolve().parents[2]
# API Gateway refuses payloads above 10 MiB before they reach the Lambda.
MAX_BODY_BYTES = 10 * 1024 * 1024
# After a 413 for a declared Content-Length of at most DRAIN_BYTES, the rest of that body is read
# and discarded (for DRAIN_SECONDS at most), so that a client that sends its whole body before it
# reads (http.client) gets the 413 rather than a connection reset. Nothing else the server refuses
# is read any further: a framing error, a chunked body over the limit or a longer declared body
# closes the connection right after the answer (the reset stops a client still sending at once;
# Linux keeps the answer it received readable).
DRAIN_SECONDS = 2.0
DRAIN_BYTES = 2 * MAX_BODY_BYTES
# Decoding a body this large builds up to ~25x its size in Python objects; decoded at once on
# interleaved threads they fragment the heap (eight 10 MB bodies at once kept ~220 MB from the
# OS for good; two at a time, ~60 MB). Such requests take turns, LARGE_BODY_SLOTS at a time
# (the GIL decodes one at a time anyway); ordinary ones (100 partitions are ~100 KB) never wait.
LARGE_BODY_BYTES = 1024 * 1024
LARGE_BODY_SLOTS = 2
# Content-Length is ASCII digits only: '²'.isdigit() is True, but int('²') raises.
_DIGITS = re.compile(r"[0-9]+")
# chunk-size CRLF, without extensions: no client of this service sends them, and lenient parsing
# of extensions and bare LFs is how requests get smuggled past a proxy that reads them otherwise.
_CHUNK_SIZE_LINE = re.compile(rb"([0-9A-Fa-f]{1,8})\r\n")
_MAX_TRAILER_LINES = 32
CHUNKED = -1  # _framing()'s answer for a chunked body
# The first byte of every TLS connection: a handshake record (RFC 8446, 5.1). Anything else on a
# TLS port is most likely a plain HTTP request to an https endpoint.
TLS_HANDSHAKE_RECORD = b"\x16"

log = logging.getLogger("infra.local.server")
# The app's request log (app.py): the answers this edge gives itself go to the same logger, as
# API Gateway's own refusals would show in its access log.
request_log = logging.getLogger("glue_catalog.requests")
# Open mode only, never deployed: empties the catalog (chalicelib/store/reset.py).
RESET_PATH = "/_local/reset"
_ACCOUNT_ID = re.compile(r"[0-9]{12}")


def thread_safe(app: Chalice) -> Chalice:
    """Make ``app.current_request`` thread-local, as ``chalice local`` does by this class swap.

    Without it, concurrent requests on the threading server would see each other's request.
    """
    if not isinstance(app, LocalChalice):
        CustomLocalChalice.__bases__ = (LocalChalice, app.__class__)
        app.__class__ = CustomLocalChalice
    return app


class GreedyRouteMatcher(RouteMatcher):
    """chalice's RouteMatcher, plus API Gateway's greedy path parameters (``/a/{proxy+}``): a
    greedy route matches any path below its fixed part, and only when no other route does (as
    API Gateway prefers the most specific resource); the longest fixed part wins."""

    def __init__(self, route_urls: list[str]) -> None:
        super().__init__([url for url in route_urls if not _is_greedy(url)])
        self.greedy = sorted((url for url in route_urls if _is_greedy(url)), key=lambda url: -url.count("/"))

    def match_route(self, url: str) -> Any:
        try:
            return super().match_route(url)
        except ValueError:
            pass
        parsed = urlparse(url)
        parts = parsed.path.rstrip("/").split("/")
        for route_url in self.greedy:
            fixed = route_url.split("/")
            head, name = fixed[:-1], fixed[-1][1:-2]
            if len(parts) <= len(head):
                continue
            captured: dict[str, str] = {}
            for got, want in zip(parts, head):
                if want.startswith("{") and want.endswith("}"):
                    captured[want[1:-1]] = got
                elif got != want:
                    break
            else:
                captured[name] = "/".join(parts[len(head):])
                return MatchResult(route_url, captured, parse_qs(parsed.query, keep_blank_values=True))
        raise ValueError(f"No matching route found for: {url}")


def _is_greedy(url: str) -> bool:
    last = url.rsplit("/", 1)[-1]
    return last.startswith("{") and last.endswith("+}")


def load_app(spec: str = "app:app", project_dir: Path = PROJECT_DIR) -> Chalice:
    """Import ``module:attribute`` from ``project_dir``, ready for the threading server."""
    if str(project_dir) not in sys.path:
        sys.path.insert(0, str(project_dir))
    module_name, _, attr = spec.partition(":")
    return thread_safe(getattr(importlib.import_module(module_name), attr or "app"))


def load_config(project_dir: Path = PROJECT_DIR, stage: str = "dev") -> Config:
    """Build the chalice Config from ``.chalice/config.json`` when there is one.

    The stage's environment variables are applied only where the caller has not set them,
    so the harness (tests, ``make run``) keeps control of endpoints and table prefixes.
    """
    config_file = project_dir / ".chalice" / "config.json"
    from_disk: dict[str, Any] = json.loads(config_file.read_text()) if config_file.is_file() else {}
    config = Config(
        chalice_stage=stage,
        user_provided_params={},
        config_from_disk=from_disk,
        default_params={"project_dir": str(project_dir)},
    )
    for name, value in (config.environment_variables or {}).items():
        os.environ.setdefault(name, value)
    return config


def aws_error(error_type: str, message: str) -> bytes:
    """A JSON error body in the shape both AWS JSON 1.1 and REST-JSON clients parse."""
    return json.dumps({"__type": error_type, "Message": message}).encode()


class BodyTooLarge(Exception):
    """The request body is over MAX_BODY_BYTES: ``declared`` is its Content-Length when that is a
    number the drain after the 413 may read (None for a chunked body, or a length beyond any)."""

    def __init__(self, declared: Optional[int] = None) -> None:
        super().__init__(declared)
        self.declared = declared


class BadRequest(Exception):
    """The request's framing (Content-Length, chunks) cannot be read."""


class RequestTimeout(Exception):
    """The request did not arrive within the handler's timeout."""


class _DeadlineSocketReader(io.RawIOBase):
    """The connection's input, where every receive also respects a deadline for the request.

    A socket timeout alone bounds each receive, so a client that sends a byte every minute could
    hold a thread for as long as its declared Content-Length allows; with a deadline the whole
    request line, headers and body must arrive in time.
    """

    def __init__(self, sock: socket.socket, idle_timeout: float) -> None:
        super().__init__()
        self._sock = sock
        self._idle_timeout = idle_timeout
        self.deadline: Optional[float] = None  # time.monotonic() value, or None for no deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        timeout = self._idle_timeout
        if self.deadline is not None:
            timeout = min(timeout, self.deadline - time.monotonic())
            if timeout <= 0:
                raise TimeoutError("the request did not arrive in time")
        self._sock.settimeout(timeout)
        try:
            return self._sock.recv_into(buffer)
        finally:
            self._sock.settimeout(self._idle_timeout)  # for the response's writes


_MAX_HEADER_LINE = 65_536  # bytes in a header line, and header lines in a request: http.client's limits
_MAX_HEADER_LINES = 100


class RequestHeaders:
    """A request's headers as this handler reads them from http.server's ``email.message.Message``:
    ``get`` and ``get_all`` by case-insensitive name, ``items`` in arrival order. Read here
    without the email package, which cost the server about 0.1 ms of CPU a request, a fifth of
    a small one's (``bench/bench_local_server.py`` runs both side by side)."""

    __slots__ = ("_pairs",)

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self._pairs = pairs

    def get(self, name: str, default: Any = None) -> Any:
        wanted = name.lower()
        for key, value in self._pairs:
            if key.lower() == wanted:
                return value
        return default

    def get_all(self, name: str, default: Any = None) -> Any:
        wanted = name.lower()
        found = [value for key, value in self._pairs if key.lower() == wanted]
        return found or default

    def items(self) -> list[tuple[str, str]]:
        return list(self._pairs)


class GatewayHeaders(dict):
    """A request's headers as chalice's LocalGateway takes them: one value a name, the last one
    sent (as API Gateway's ``headers``), and ``multi``, every value of each (lowercase) name in
    arrival order, for the event's ``multiValueHeaders``."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        super().__init__(pairs)
        self.multi: dict[str, list[str]] = {}
        for name, value in pairs:
            self.multi.setdefault(name.lower(), []).append(value)


class ApiGatewayEvents(LambdaEventConverter):
    """chalice's request-to-event converter, with the ``multiValueHeaders`` API Gateway's REST API
    adds (chalice local leaves them out): the app refuses a repeated Authorization header, which
    the single-valued ``headers`` hide."""

    def create_lambda_event(self, method: str, path: str, headers: dict[str, str],
                            body: Optional[bytes] = None) -> dict[str, Any]:
        event = super().create_lambda_event(method, path, headers, body)
        multi = getattr(headers, "multi", None)
        event["multiValueHeaders"] = multi if multi is not None else {k: [v] for k, v in event["headers"].items()}
        return event


class HeaderError(Exception):
    """The request's header block breaks a limit (a line too long, too many lines)."""


def read_headers(reader: Any) -> RequestHeaders:
    """The header lines up to the blank line that ends them. A line folded onto the next (an
    obsolete form) is joined with a space, as RFC 9112 lets a server do; a line without a colon
    is left out (the email parser kept it as a defect, which nothing read)."""
    pairs: list[tuple[str, str]] = []
    for _ in range(_MAX_HEADER_LINES + 1):
        line = reader.readline(_MAX_HEADER_LINE + 1)
        if len(line) > _MAX_HEADER_LINE:
            raise HeaderError("Line too long")
        if line in (b"\r\n", b"\n", b""):
            return RequestHeaders(pairs)
        text = line.decode("iso-8859-1").rstrip("\r\n")
        if text[:1] in (" ", "\t"):
            if pairs:
                name, value = pairs[-1]
                pairs[-1] = (name, f"{value} {text.strip()}")
            continue
        name, colon, value = text.partition(":")
        if colon:
            pairs.append((name, value.strip(" \t")))
    raise HeaderError("Too many headers")


class GatewayHandler(BaseHTTPRequestHandler):
    """Maps one HTTP request to ``LocalGateway.handle_request`` and writes the answer in one send."""

    protocol_version = "HTTP/1.1"  # keep-alive by default
    disable_nagle_algorithm = True  # TCP_NODELAY on the accepted socket
    # Seconds an idle keep-alive connection keeps its thread, and the time a request has from
    # its first line to its last body byte (GatewayServer.request_timeout can lower the latter).
    timeout = 120
    server: "GatewayServer"

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the plain makefile() reader: replaced by one that keeps a deadline
        self._reader = _DeadlineSocketReader(self.connection, self.timeout)
        self.rfile = io.BufferedReader(self._reader)

    def handle_one_request(self) -> None:
        # Waiting for the next request line is bounded as a whole, not per receive.
        self._reader.deadline = time.monotonic() + self.timeout
        super().handle_one_request()

    def parse_request(self) -> bool:
        """http.server's ``parse_request`` (the request line, keep-alive, Expect) with the
        headers read by :func:`read_headers` instead of the email package."""
        # The request line has arrived: headers and body get the request timeout from now on.
        self._reader.deadline = time.monotonic() + self.server.request_timeout
        self.command = None  # type: ignore[assignment]  # as http.server: set in case of an error below
        self.request_version = self.default_request_version
        self.close_connection = True
        self.requestline = requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = requestline.split()
        if not words:
            return False
        if len(words) >= 3:
            version = words[-1]
            number = version[5:].split(".") if version.startswith("HTTP/") else []
            if len(number) != 2 or not all(part.isdigit() and len(part) <= 10 for part in number):
                self.send_error(HTTPStatus.BAD_REQUEST, f"Bad request version ({version!r})")
                return False
            major, minor = int(number[0]), int(number[1])
            if (major, minor) >= (2, 0):
                self.send_error(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, f"Invalid HTTP version ({version[5:]})")
                return False
            if (major, minor) >= (1, 1):
                self.close_connection = False
            self.request_version = version
        if not 2 <= len(words) <= 3:
            self.send_error(HTTPStatus.BAD_REQUEST, f"Bad request syntax ({requestline!r})")
            return False
        command, path = words[:2]
        if len(words) == 2:
            self.close_connection = True
            if command != "GET":
                self.send_error(HTTPStatus.BAD_REQUEST, f"Bad HTTP/0.9 request type ({command!r})")
                return False
        self.command, self.path = command, ("/" + path.lstrip("/") if path.startswith("//") else path)
        try:
            self.headers = read_headers(self.rfile)  # type: ignore[assignment]
        except HeaderError as error:
            self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, str(error))
            return False
        connection = self.headers.get("Connection", "").lower()
        if connection == "close":
            self.close_connection = True
        elif connection == "keep-alive":
            self.close_connection = False
        if self.headers.get("Expect", "").lower() == "100-continue" and self.request_version >= "HTTP/1.1":
            return self.handle_expect_100()
        return True

    # Any method, even one http.server does not know, goes to the gateway, which answers
    # 403/405 like API Gateway instead of http.server's 501.
    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):
            return self.handle_gateway
        raise AttributeError(name)

    def handle_expect_100(self) -> bool:
        """Refuse a badly framed or oversized upload before the client sends it."""
        try:
            self._framing()
        except BodyTooLarge as exc:
            self._send_too_large(exc.declared)
            return False
        except BadRequest as exc:
            self._send_bad_request(str(exc))
            return False
        return super().handle_expect_100()

    def handle_gateway(self) -> None:
        """Read the body, run the app through the gateway and send its response."""
        self._started = time.perf_counter()
        self._app_answered = False
        try:
            body = self._read_body()
        except BodyTooLarge as exc:
            self._send_too_large(exc.declared)
            return
        except BadRequest as exc:
            self._send_bad_request(str(exc))
            return
        except RequestTimeout:
            self.close_connection = True
            message = f"The request did not arrive within {self.server.request_timeout:g} seconds"
            self._send_error(408, "RequestTimeoutException", message)
            return
        if self.path.split("?", 1)[0] == RESET_PATH and self.command == "POST":
            self._reset(body)
            return
        try:
            self.server.routes.match_route(self.path)
        except ValueError:
            # API Gateway's answer for a path no resource matches. chalice's own answer lacks
            # __type, and quotes the Authorization header into its JSON unescaped.
            path = self.path.split("?", 1)[0]
            if path.startswith("/v1/"):
                # Paimon's clients read a 404 as "no such table": an unrouted path is a 501.
                message = json.dumps({"message": f"{path[:200]} is not served by this catalog", "code": 501,
                                      "resourceType": None, "resourceName": None})
                self._send(501, {"Content-Type": "application/json"}, message.encode())
                return
            self._send_error(403, "MissingAuthenticationTokenException",
                             f"Missing Authentication Token: no resource at {path!r}")
            return
        if body is not None and len(body) > LARGE_BODY_BYTES:
            if not self.server.large_bodies.acquire(timeout=self.server.request_timeout):
                self._send_error(400, "ThrottlingException", "Too many large requests at once; retry")
                return
            try:
                self._run_gateway(body)
            finally:
                self.server.large_bodies.release()
        else:
            self._run_gateway(body)

    def _run_gateway(self, body: Optional[bytes]) -> None:
        headers = GatewayHeaders(self.headers.items())
        try:
            response = self.server.gateway.handle_request(
                method=self.command, path=self.path, headers=headers, body=body
            )
        except LocalGatewayException as exc:  # an authorizer's refusal
            self._send_gateway_exception(exc)
            return
        except Exception:  # a bug must answer like a service fault, never kill the connection
            log.exception("unhandled error serving %s %s", self.command, self.path)
            self._send_error(500, "InternalFailure", "internal error")
            return
        finally:
            # The request (and its body) would otherwise stay referenced by this thread for as
            # long as the keep-alive connection idles.
            self.server.app.current_request = None
        self._app_answered = True  # app.py logged it
        out_headers: dict[str, Any] = dict(response.get("headers") or {})
        out_headers.update(response.get("multiValueHeaders") or {})
        out_body = response.get("body")
        if response.get("isBase64Encoded") and out_body is not None:
            out_body = base64.b64decode(out_body)
        self._send(response["statusCode"], out_headers, out_body)

    def _reset(self, body: Optional[bytes]) -> None:
        """``POST /_local/reset``: empty the catalog, in open mode only: every account's, or
        with a JSON body ``{"AccountId": "<12 digits>"}`` that account's alone."""
        from chalicelib.protocol import sigv4

        if sigv4.required():
            self._send_error(403, "AccessDeniedException",
                             f"{RESET_PATH} is served in open mode only; this server verifies signatures (GLUE_AUTH)")
            return
        try:
            request = json.loads(body) if body and body.strip() else {}
        except ValueError:
            request = None
        if not isinstance(request, dict) or set(request) - {"AccountId"}:
            self._send_error(400, "InvalidInputException",
                             f"{RESET_PATH} takes no parameters but AccountId: a JSON body {{\"AccountId\": "
                             "\"123456789012\"}} empties that account's catalog, none every account's")
            return
        account = request.get("AccountId")
        if "AccountId" in request and not (isinstance(account, str) and _ACCOUNT_ID.fullmatch(account)):
            self._send_error(400, "InvalidInputException",
                             f"{RESET_PATH}: AccountId must be an account id of 12 digits, not {json.dumps(account)[:100]}")
            return
        from chalicelib.store.reset import empty_account, empty_catalog

        try:
            deleted = empty_catalog() if account is None else empty_account(account)
        except Exception:  # the store's fault: logged with its traceback, answered as a 500
            log.exception("%s failed", RESET_PATH)
            self._send_error(500, "InternalServiceException", "the reset failed part way; retry it")
            return
        answer: dict[str, Any] = {"ItemsDeleted": deleted}
        if account is not None:
            answer["AccountId"] = account
        self._send(200, {"Content-Type": "application/json"}, json.dumps(answer).encode())

    # -- request body -------------------------------------------------------------------

    def _framing(self) -> Optional[int]:
        """How the body is delimited: its length, CHUNKED, or None for no body.

        Anything two parsers could read differently is refused (request smuggling): several
        different lengths, a length together with chunked, codings other than chunked alone.
        """
        codings = self.headers.get_all("Transfer-Encoding") or []
        lengths = self.headers.get_all("Content-Length") or []
        if codings:
            if lengths:
                raise BadRequest("Content-Length and Transfer-Encoding cannot both be sent")
            names = [name.strip(" \t").lower() for value in codings for name in value.split(",")]
            if names != ["chunked"]:
                raise BadRequest(f"Transfer-Encoding must be chunked alone, not {', '.join(codings)!r}")
            return CHUNKED
        if not lengths:
            return None
        values = {value.strip(" \t") for header in lengths for value in header.split(",")}
        if len(values) > 1:
            raise BadRequest(f"conflicting Content-Length values: {', '.join(sorted(values))!r}")
        (value,) = values
        if not _DIGITS.fullmatch(value):
            raise BadRequest(f"invalid Content-Length: {value!r}")
        digits = value.lstrip("0") or "0"
        # Compare lengths first: int() of a 5,000-digit string raises.
        if len(digits) > len(str(MAX_BODY_BYTES)) or int(digits) > MAX_BODY_BYTES:
            raise BodyTooLarge(int(digits) if len(digits) <= len(str(DRAIN_BYTES)) else None)
        return int(digits)

    def _read_body(self) -> Optional[bytes]:
        framing = self._framing()
        try:
            if framing == CHUNKED:
                body = self._read_chunked()
            elif framing:
                # BufferedReader.read(n) receives straight into one bytes object of size n.
                body = self.rfile.read(framing)
                if len(body) != framing:
                    raise BadRequest(f"the connection closed after {len(body)} of {framing} body bytes")
            else:
                body = b""
        except TimeoutError:
            raise RequestTimeout() from None
        except OSError as exc:  # reset by the client mid-body
            raise BadRequest(f"the body could not be read: {exc}") from None
        finally:
            self._reader.deadline = None  # the response's writes have their own timeout
        return body or None

    def _read_chunked(self) -> bytes:
        parts: list[bytes] = []
        total = 0
        while True:
            line = self.rfile.readline(16)
            match = _CHUNK_SIZE_LINE.fullmatch(line)
            if match is None:
                if not line:
                    raise BadRequest("the connection closed before the last chunk")
                raise BadRequest(f"invalid chunk size line {line[:16]!r}: expected hex digits and CRLF, "
                                 "without extensions")
            size = int(match.group(1), 16)
            if size == 0:
                self._read_trailers()
                return parts[0] if len(parts) == 1 else b"".join(parts)
            total += size
            if total > MAX_BODY_BYTES:
                raise BodyTooLarge()  # how much more the client means to send is unknown: not drained
            chunk = self.rfile.read(size)
            if len(chunk) != size:
                raise BadRequest(f"the connection closed inside a chunk ({len(chunk)} of {size} bytes)")
            parts.append(chunk)
            if self.rfile.read(2) != b"\r\n":
                raise BadRequest("a chunk's data must be followed by CRLF")

    def _read_trailers(self) -> None:
        """Skip the trailer fields after the last chunk, up to the empty line that ends them."""
        for _ in range(_MAX_TRAILER_LINES):
            line = self.rfile.readline(8192)
            if line == b"\r\n":
                return
            if not line.endswith(b"\r\n"):
                raise BadRequest("the chunked body ended without its final CRLF")
        raise BadRequest(f"more than {_MAX_TRAILER_LINES} trailer lines")

    # -- response ------------------------------------------------------------------------

    def _send_error(self, status: int, error_type: str, message: str, headers: Optional[dict[str, Any]] = None) -> None:
        self._send(status, {**(headers or {}), "x-amzn-ErrorType": error_type}, aws_error(error_type, message))

    def _send_too_large(self, declared: Optional[int]) -> None:
        # The body was not read, so this connection cannot carry another request.
        self.close_connection = True
        self._send_error(413, "RequestEntityTooLargeException", f"Request size exceeds the {MAX_BODY_BYTES} byte limit")
        if declared is not None and declared <= DRAIN_BYTES:
            self._drain(declared)

    def _send_bad_request(self, message: str) -> None:
        # Where the body ends is unknown, so this connection cannot carry another request, and
        # nothing more of it is read: the connection closes as soon as the answer is sent.
        self.close_connection = True
        self._send_error(400, "BadRequestException", message)

    def _send_gateway_exception(self, exc: LocalGatewayException) -> None:
        """chalice's LocalGateway refusals ({"message": ...} only) in AWS's error shape."""
        headers = dict(exc.headers or {})
        error_type = headers.pop("x-amzn-ErrorType", None) or {401: "UnauthorizedException"}.get(
            exc.CODE, "AccessDeniedException" if exc.CODE == 403 else "InternalFailure")
        try:
            message = str(json.loads(exc.body or b"{}").get("message") or error_type)
        except (ValueError, AttributeError):
            message = error_type
        self._send_error(exc.CODE, error_type, message, headers)

    def _drain(self, limit: int) -> None:
        """Discard up to ``limit`` bytes the client is still sending, for DRAIN_SECONDS at most,
        then let the socket close.

        Closing a socket with unread input makes the kernel send a reset, which stops a client
        still sending its body before it reads our 413 (http.client raises instead of answering
        it); this read is bounded in time and bytes, and never kept.
        """
        try:
            self.connection.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + DRAIN_SECONDS
            self.connection.settimeout(0.25)
            while limit > 0 and time.monotonic() < deadline:
                try:
                    received = len(self.connection.recv(min(65536, limit)))
                except socket.timeout:
                    continue
                if not received:
                    break
                limit -= received
        except OSError:
            pass

    def _send(self, status: int, headers: dict[str, Any], body: Optional[bytes | str]) -> None:
        """Write status line, headers and body with one sendall (the point of this server)."""
        if isinstance(body, str):
            body = body.encode("utf-8")
        body = body or b""
        try:
            reason = HTTPStatus(status).phrase
        except ValueError:
            reason = ""
        lines = [f"HTTP/1.1 {status} {reason}", f"Date: {self.date_time_string()}", f"Content-Length: {len(body)}"]
        lower = {name.lower() for name in headers}
        if "content-type" not in lower:
            lines.append("Content-Type: application/json")
        for name, value in headers.items():
            if name.lower() in ("content-length", "connection", "transfer-encoding", "date"):
                continue  # framing is ours to decide
            for item in value if isinstance(value, list) else [value]:
                lines.append(f"{name}: {item}")
        if self.close_connection:
            lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")
        payload = head if self.command == "HEAD" else head + body
        try:
            self.wfile.write(payload)
        except OSError:
            self.close_connection = True
        self.log_request(status, len(body))
        if not getattr(self, "_app_answered", True) and request_log.isEnabledFor(logging.INFO):
            milliseconds = (time.perf_counter() - self._started) * 1000
            path = (self.path or "").split("?", 1)[0][:200]
            request_log.info(f"http {self.command} {path} {status} {milliseconds:.1f} ms items_read=-")

    def send_error(self, code: int, message: Optional[str] = None, explain: Optional[str] = None) -> None:
        """http.server's own errors (malformed request line, headers too long) as AWS JSON.

        Each is the client's mistake, so the 505 for an unknown HTTP version becomes a 400:
        this server answers 5xx only for its own faults.
        """
        self.close_connection = True
        text = message or HTTPStatus(code).phrase
        code = 400 if code >= 500 else code
        error_type = "BadRequestException"
        if not hasattr(self, "command") or self.command is None:
            self.command = ""
        self._send(code, {"x-amzn-ErrorType": error_type}, aws_error(error_type, text))

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        if self.server.access_log:
            sys.stderr.write(f"{self.address_string()} - {format % args}\n")


def tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    """The server side of TLS for ``cert`` (PEM, the chain to send) and its ``key``: TLS 1.2 or
    later, and HTTP/1.1 chosen by ALPN (a client offering h2 too must not expect it here)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["http/1.1"])
    return context


def plain_http_refusal() -> bytes:
    """The answer to a plain HTTP request on the TLS port, as the 400 of this server's others."""
    body = aws_error("BadRequestException", "This port serves HTTPS only: use an https:// endpoint URL")
    head = ("HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
            f"x-amzn-ErrorType: BadRequestException\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n")
    return head.encode("ascii") + body


class GatewayServer(ThreadingHTTPServer):
    """A threading HTTP server that owns one LocalGateway for the app (over TLS with ``tls``)."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], app: Chalice, config: Config, access_log: bool = False,
                 request_timeout: float = GatewayHandler.timeout, tls: Optional[ssl.SSLContext] = None):
        self.app = thread_safe(app)
        self.gateway = LocalGateway(self.app, config)
        self.gateway.event_converter = ApiGatewayEvents(GreedyRouteMatcher(list(self.app.routes)),
                                                        self.app.api.binary_types)
        self.routes = GreedyRouteMatcher(list(self.app.routes))
        self.access_log = access_log
        self.request_timeout = request_timeout
        self.large_bodies = threading.BoundedSemaphore(LARGE_BODY_SLOTS)
        self.tls = tls
        super().__init__(address, GatewayHandler)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """With TLS, the connection's handshake first, on its own thread: a wrapped listening
        socket would shake hands inside ``accept``, where one silent client stalls all others."""
        if self.tls is not None:
            request = self._start_tls(request, client_address)
            if request is None:
                return
        super().process_request_thread(request, client_address)

    def _start_tls(self, sock: socket.socket, client_address: Any) -> Optional[ssl.SSLSocket]:
        """The connection wrapped in TLS once its handshake is done (within the request timeout),
        or None, the connection closed, when the client sent plain HTTP, left or failed the handshake."""
        assert self.tls is not None
        sock.settimeout(self.request_timeout)
        try:
            first = sock.recv(1, socket.MSG_PEEK)
            if first == TLS_HANDSHAKE_RECORD:
                return self.tls.wrap_socket(sock, server_side=True)
            if first:
                sock.recv(65536)  # what the request sent so far: unread, the close would reset the answer
                sock.sendall(plain_http_refusal())
        except ssl.SSLError as exc:  # e.g. a client that does not trust the certificate
            log.warning("TLS handshake with %s failed: %s", client_address[0], exc)
        except OSError:  # a timeout or a reset: nothing to tell
            pass
        self.shutdown_request(sock)
        return None


def make_server(
    host: str = "127.0.0.1",
    port: int = 8000,
    app_spec: str = "app:app",
    project_dir: Path = PROJECT_DIR,
    access_log: bool = False,
    request_timeout: float = GatewayHandler.timeout,
    tls: Optional[ssl.SSLContext] = None,
) -> GatewayServer:
    """Load the app and bind the server (port 0 picks a free port: see ``server.server_port``);
    with ``tls`` (see :func:`tls_context`) it serves HTTPS only."""
    config = load_config(project_dir)
    app = load_app(app_spec, project_dir)
    return GatewayServer((host, port), app, config, access_log=access_log, request_timeout=request_timeout,
                         tls=tls)


def start_cleaner(stop: threading.Event) -> Optional[threading.Thread]:
    """Start the background cleaner of deleted databases and tables (chalicelib.service.cleanup),
    which Lambda has in the scheduled function instead; None when GLUE_CLEANUP_THREAD=0 (tests of
    jobs left to others). Call after ``make_server``: the store reads its environment on import."""
    if os.environ.get("GLUE_CLEANUP_THREAD", "1") == "0":
        return None
    from chalicelib.service import cleanup

    thread = threading.Thread(target=cleanup.serve_forever, args=(stop,), name="cleanup", daemon=True)
    thread.start()
    return thread


def start_crawl_worker(stop: threading.Event, endpoint: str,
                       ca_bundle: Optional[str] = None) -> Optional[threading.Thread]:
    """Start the crawl worker (pipelines.crawl_worker: claims the runs StartCrawler queues and
    crawls them through ``endpoint``), which is a function of its own when deployed; None when
    GLUE_CRAWL_WORKER=0. ``ca_bundle``: what the worker's client trusts of a local HTTPS endpoint.
    Call after ``make_server``, like ``start_cleaner``."""
    if os.environ.get("GLUE_CRAWL_WORKER", "1") == "0":
        return None
    from pipelines.crawl_worker import Worker

    worker = Worker(endpoint, verify=ca_bundle)
    thread = threading.Thread(target=worker.serve_forever, args=(stop,), name="crawl-worker", daemon=True)
    thread.start()
    return thread


def local_endpoint(host: str, port: int, tls: bool) -> str:
    """The URL this process's own workers reach the server at."""
    reach = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
    if ":" in reach and not reach.startswith("["):
        reach = f"[{reach}]"
    return f"{'https' if tls else 'http'}://{reach}:{port}"


def main(argv: Optional[list[str]] = None) -> None:
    """Command-line entry point: serve until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument("--app", default="app:app", help="module:attribute of the Chalice app")
    parser.add_argument("--project-dir", type=Path, default=PROJECT_DIR, help="folder holding the app module")
    parser.add_argument("--access-log", action="store_true", help="log every request to stderr")
    parser.add_argument("--request-timeout", type=float,
                        default=float(os.environ.get("GLUE_LOCAL_REQUEST_TIMEOUT", GatewayHandler.timeout)),
                        help="seconds a request has from its first line to its last body byte "
                             "(default $GLUE_LOCAL_REQUEST_TIMEOUT or %(default)s)")
    parser.add_argument("--tls-cert", type=Path, help="serve HTTPS with this PEM certificate (chain)")
    parser.add_argument("--tls-key", type=Path, help="the private key of --tls-cert")
    args = parser.parse_args(argv)
    if (args.tls_cert is None) != (args.tls_key is None):
        parser.error("--tls-cert and --tls-key go together")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    tls = tls_context(args.tls_cert, args.tls_key) if args.tls_cert else None
    server = make_server(args.host, args.port, args.app, args.project_dir.resolve(), args.access_log,
                         args.request_timeout, tls)
    stop_cleaner = threading.Event()
    start_cleaner(stop_cleaner)
    start_crawl_worker(stop_cleaner, local_endpoint(args.host, server.server_port, tls is not None))
    print(f"Serving {args.app} on {'https' if tls else 'http'}://{args.host}:{server.server_port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        stop_cleaner.set()
        server.server_close()


if __name__ == "__main__":
    main()
