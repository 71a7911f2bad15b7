"""Serve the Chalice app locally, like ``chalice local`` but without its keep-alive stall.

``chalice local`` writes the response headers and the body in two separate sends; with a
keep-alive client (boto3, the AWS CLI) the second small segment waits on Nagle's algorithm
until the client's delayed ACK fires, about 40 ms per request. Here every response leaves in
one ``sendall`` on a socket with TCP_NODELAY, over a threading HTTP/1.1 server.

Requests still go through chalice's own ``LocalGateway``, so routing, content types, the
403 for unknown paths, authorizers and CORS behave exactly as under ``chalice local``.

Usage: ``python -m infra.local.server --host 127.0.0.1 --port 8000 [--app app:app]``
"""

from __future__ import annotations

import argparse
import base64
import importlib
import json
import logging
import os
import socket
import sys
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional

from chalice.app import Chalice
from chalice.config import Config
from chalice.local import CustomLocalChalice, LocalChalice, LocalGateway, LocalGatewayException

PROJECT_DIR = Path(__file__).resolve().parents[2]
# API Gateway refuses payloads above 10 MiB before they reach the Lambda.
MAX_BODY_BYTES = 10 * 1024 * 1024
# How long to keep swallowing an oversized upload after answering 413, so that the client
# reads our answer instead of a connection reset.
DRAIN_SECONDS = 2.0

log = logging.getLogger("infra.local.server")


def thread_safe(app: Chalice) -> Chalice:
    """Make ``app.current_request`` thread-local, as ``chalice local`` does by this class swap.

    Without it, concurrent requests on the threading server would see each other's request.
    """
    if not isinstance(app, LocalChalice):
        CustomLocalChalice.__bases__ = (LocalChalice, app.__class__)
        app.__class__ = CustomLocalChalice
    return app


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
    """The request body is over MAX_BODY_BYTES."""


class BadRequest(Exception):
    """The request's framing (Content-Length, chunks) cannot be read."""


class GatewayHandler(BaseHTTPRequestHandler):
    """Maps one HTTP request to ``LocalGateway.handle_request`` and writes the answer in one send."""

    protocol_version = "HTTP/1.1"  # keep-alive by default
    disable_nagle_algorithm = True  # TCP_NODELAY on the accepted socket
    timeout = 120  # seconds an idle keep-alive connection keeps its thread
    server: "GatewayServer"

    # Any method, even one http.server does not know, goes to the gateway, which answers
    # 403/405 like API Gateway instead of http.server's 501.
    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):
            return self.handle_gateway
        raise AttributeError(name)

    def handle_expect_100(self) -> bool:
        """Refuse an oversized upload before the client sends it."""
        if self._declared_length() > MAX_BODY_BYTES:
            self._send_too_large()
            return False
        return super().handle_expect_100()

    def handle_gateway(self) -> None:
        """Read the body, run the app through the gateway and send its response."""
        try:
            body = self._read_body()
        except BodyTooLarge:
            self._send_too_large()
            return
        except BadRequest as exc:
            self.close_connection = True
            self._send(400, {"x-amzn-ErrorType": "BadRequestException"}, aws_error("BadRequestException", str(exc)))
            return
        headers = {name: value for name, value in self.headers.items()}
        try:
            response = self.server.gateway.handle_request(
                method=self.command, path=self.path, headers=headers, body=body
            )
        except LocalGatewayException as exc:  # unknown route, authorizer refusal
            self._send(exc.CODE, dict(exc.headers), exc.body)
            return
        except Exception:  # a bug must answer like a service fault, never kill the connection
            log.exception("unhandled error serving %s %s", self.command, self.path)
            self._send(500, {"x-amzn-ErrorType": "InternalFailure"}, aws_error("InternalFailure", "internal error"))
            return
        out_headers: dict[str, Any] = dict(response.get("headers") or {})
        out_headers.update(response.get("multiValueHeaders") or {})
        out_body = response.get("body")
        if response.get("isBase64Encoded") and out_body is not None:
            out_body = base64.b64decode(out_body)
        self._send(response["statusCode"], out_headers, out_body)

    # -- request body -------------------------------------------------------------------

    def _declared_length(self) -> int:
        value = self.headers.get("Content-Length")
        try:
            return int(value) if value is not None else 0
        except ValueError:
            return 0  # reported as BadRequest by _read_body

    def _read_body(self) -> Optional[bytes]:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        value = self.headers.get("Content-Length")
        if value is None:
            return None
        if not value.strip().isdigit():
            raise BadRequest(f"invalid Content-Length: {value!r}")
        length = int(value)
        if length > MAX_BODY_BYTES:
            raise BodyTooLarge()
        body = self.rfile.read(length) if length else b""
        if len(body) != length:
            raise BadRequest("connection closed before the whole body arrived")
        return body or None

    def _read_chunked(self) -> bytes:
        parts: list[bytes] = []
        total = 0
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise BadRequest("invalid chunk size") from None
            if size == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass  # trailers are ignored
                return b"".join(parts)
            total += size
            if total > MAX_BODY_BYTES:
                raise BodyTooLarge()
            parts.append(self.rfile.read(size))
            self.rfile.readline(1024)  # CRLF after each chunk

    # -- response ------------------------------------------------------------------------

    def _send_too_large(self) -> None:
        # The body was not read, so this connection cannot carry another request.
        self.close_connection = True
        message = f"Request size exceeds the {MAX_BODY_BYTES} byte limit"
        self._send(
            413,
            {"x-amzn-ErrorType": "RequestEntityTooLargeException"},
            aws_error("RequestEntityTooLargeException", message),
        )
        self._drain()

    def _drain(self) -> None:
        """Discard what the client is still uploading for a moment, then let the socket close.

        Closing a socket with unread input makes the kernel send a reset, which can reach the
        client before our 413 does; this read is bounded in time and never kept.
        """
        try:
            self.connection.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + DRAIN_SECONDS
            self.connection.settimeout(0.25)
            while time.monotonic() < deadline:
                try:
                    if not self.connection.recv(65536):
                        break
                except socket.timeout:
                    continue
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


class GatewayServer(ThreadingHTTPServer):
    """A threading HTTP server that owns one LocalGateway for the app."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], app: Chalice, config: Config, access_log: bool = False):
        self.gateway = LocalGateway(thread_safe(app), config)
        self.access_log = access_log
        super().__init__(address, GatewayHandler)


def make_server(
    host: str = "127.0.0.1",
    port: int = 8000,
    app_spec: str = "app:app",
    project_dir: Path = PROJECT_DIR,
    access_log: bool = False,
) -> GatewayServer:
    """Load the app and bind the server (port 0 picks a free port: see ``server.server_port``)."""
    config = load_config(project_dir)
    app = load_app(app_spec, project_dir)
    return GatewayServer((host, port), app, config, access_log=access_log)


def main(argv: Optional[list[str]] = None) -> None:
    """Command-line entry point: serve until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument("--app", default="app:app", help="module:attribute of the Chalice app")
    parser.add_argument("--project-dir", type=Path, default=PROJECT_DIR, help="folder holding the app module")
    parser.add_argument("--access-log", action="store_true", help="log every request to stderr")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    server = make_server(args.host, args.port, args.app, args.project_dir.resolve(), args.access_log)
    print(f"Serving {args.app} on http://{args.host}:{server.server_port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
