"""The Iceberg REST wire: IcebergRequest in, IcebergResponse out, errors as the spec's ErrorModel.

An error answers ``{"error": {"message", "type", "code"}}`` with the status the Iceberg REST
OpenAPI spec gives it; clients branch on the status (pyiceberg's ``_handle_non_200_response``:
404 NoSuchTableError / NoSuchNamespaceError by call, 409 AlreadyExists / CommitFailed /
NamespaceNotEmpty by call, 501 NotImplementedError) and Iceberg Java also on ``type`` (a 404 of type
NoSuchNamespaceException is a missing namespace, else a missing table). The catalog's exceptions
(chalicelib.errors) are mapped here, in ``error_model``, and nowhere else; a bug answers 500 with
a generic message, never a traceback.

Authentication is Glue's: SigV4 with signing name ``glue`` (verified as every Glue request is,
over the path the client signed), or in the open local mode the access key id names the caller.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Collection, Optional, Sequence
from urllib.parse import unquote

from chalicelib import json_text, metrics
from chalicelib.context import RequestContext, context_from_request, require_one_authorization
from chalicelib.errors import (AccessDeniedException, AlreadyExistsException, AuthenticationError,
                               ConcurrentModificationException, EntityNotFoundException,
                               NamespaceNotEmptyException, RequestEntityTooLargeException, ServiceError)
from chalicelib.protocol import sigv4
from chalicelib.protocol.json_body import decode_object
from chalicelib.protocol.response import WireResponse

log = logging.getLogger(__name__)

JSON = "application/json"
SIGNING_NAME = "glue"  # Glue's Iceberg endpoint is signed for the glue service
NAMESPACE_SEPARATOR = "\x1f"  # the spec's default separator of multi-level namespace parts in a path


class IcebergError(ServiceError):
    """An error with an explicit Iceberg status and type (400 BadRequestException, 406, 501, ...)."""

    def __init__(self, status: int, error_type: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type


def bad_request(message: str) -> IcebergError:
    """400 BadRequestException (pyiceberg: BadRequestError)."""
    return IcebergError(400, "BadRequestException", message)


def not_implemented(what: str) -> IcebergError:
    """501 (pyiceberg: NotImplementedError): a route the spec has that this catalog does not serve."""
    return IcebergError(501, "NotImplementedException", f"{what} is not supported by this catalog")


@dataclass
class IcebergRequest:
    """One decoded request: the caller, the route, decoded path and query parameters, the body.

    ``path`` values are percent-decoded (clients encode each namespace part and the table name with
    ``quote(part, safe="")``); ``query`` holds the first value of each parameter; ``body`` is the
    decoded JSON object ({} when the request had none).
    """

    context: RequestContext
    method: str
    route: str
    path: dict[str, str]
    query: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)

    def require(self, key: str, kind: type | tuple[type, ...] = str, where: str = "") -> Any:
        """A body member that must be present and of ``kind`` (400 naming it otherwise)."""
        value = (self.body if not where else self.body.get(where) or {}).get(key)
        name = f"{where}.{key}" if where else key
        if value is None:
            raise bad_request(f"Invalid request: {name} is required")
        return check_kind(value, kind, name)

    def optional(self, key: str, kind: type | tuple[type, ...] = str) -> Any:
        """A body member that may be absent or null, else must be of ``kind``."""
        value = self.body.get(key)
        return None if value is None else check_kind(value, kind, key)


def check_kind(value: Any, kind: type | tuple[type, ...], name: str) -> Any:
    """``value`` if it is of ``kind`` (a bool is no int), else 400 naming ``name``."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool)):
        names = "/".join(_KIND_NAMES.get(k, k.__name__) for k in kinds)
        raise bad_request(f"Invalid request: {name} must be {names}, not {_KIND_NAMES.get(type(value), type(value).__name__)}")
    return value


_KIND_NAMES = {str: "a string", int: "an integer", bool: "a boolean", list: "a list", dict: "an object",
               float: "a number"}


@dataclass
class IcebergResponse:
    """A handler's answer: a JSON-able body (None with 204: no content)."""

    body: Any = None
    status: int = 200


def no_content() -> IcebergResponse:
    return IcebergResponse(None, 204)


Handler = Callable[[IcebergRequest], IcebergResponse]


def unserved(what: str) -> Handler:
    """The handler of a spec route this catalog does not serve: 501."""
    def handler(request: IcebergRequest) -> IcebergResponse:
        raise not_implemented(what)
    handler.__name__ = handler.__qualname__ = f"unserved({what})"
    handler.__doc__ = f"{what}: not served (501)."
    return handler


# EntityNotFoundException's resource type (set by the service) -> the spec's 404 type.
_NOT_FOUND_TYPES = {"DATABASE": "NoSuchNamespaceException", "NAMESPACE": "NoSuchNamespaceException",
                    "TABLE": "NoSuchTableException", "VIEW": "NoSuchViewException"}


def error_model(error: ServiceError) -> tuple[int, dict[str, Any]]:
    """The one mapping of catalog exceptions to the spec's ErrorModel and status."""
    if isinstance(error, IcebergError):
        status, kind = error.status, error.error_type
    elif isinstance(error, EntityNotFoundException):
        status, kind = 404, _NOT_FOUND_TYPES.get(error.resource_type or "", "NoSuchTableException")
    elif isinstance(error, NamespaceNotEmptyException):
        status, kind = 409, "NamespaceNotEmptyException"
    elif isinstance(error, AlreadyExistsException):
        status, kind = 409, "AlreadyExistsException"
    elif isinstance(error, ConcurrentModificationException):
        status, kind = 409, "CommitFailedException"  # a requirement failed or a racing commit won
    elif isinstance(error, AccessDeniedException):
        status, kind = 403, "ForbiddenException"
    elif isinstance(error, AuthenticationError):
        status, kind = error.status, error.code  # AWS's own: 403 SignatureDoesNotMatch, ...
    elif isinstance(error, RequestEntityTooLargeException):
        status, kind = 413, error.code
    elif error.status >= 500:
        status, kind = 503 if error.code == "ThrottlingException" else 500, error.code
    elif error.status == 429 or error.code == "ThrottlingException":
        status, kind = 429, error.code
    else:  # InvalidInputException and every other client error
        status, kind = 400, "BadRequestException"
    return status, {"error": {"message": error.message, "type": kind, "code": status}}


def decode_path(params: Optional[dict[str, str]]) -> dict[str, str]:
    """Path parameters as names: neither chalice local nor API Gateway decodes them; clients
    percent-encode every part (``%2F`` for a slash, ``%1F`` between namespace levels)."""
    decoded = {}
    for name, value in (params or {}).items():
        text = unquote(value, errors="strict") if value else ""
        if not text:
            raise bad_request(f"Invalid request: path parameter {name} must not be empty")
        decoded[name] = text
    return decoded


def _caller(method: str, path: str, headers: dict[str, str], raw_body: Optional[bytes],
            gateway_context: Optional[dict], query: Sequence[tuple[str, str]],
            repeated: Collection[str]) -> RequestContext:
    require_one_authorization(headers, repeated)
    if sigv4.required():
        return sigv4.authenticate(SIGNING_NAME, method, sigv4.signed_path(gateway_context, path), headers,
                                  raw_body, query)
    return context_from_request(headers, gateway_context)


def handle(method: str, route: str, path_params: Optional[dict[str, str]], query: Sequence[tuple[str, str]],
           headers: dict[str, str], raw_body: Optional[bytes], gateway_context: Optional[dict], path: str,
           repeated: Collection[str] = ()) -> WireResponse:
    """Serve one Iceberg REST request (``query``: every (name, value) pair, decoded; ``path``:
    the path as the client sent it; ``repeated``: lowercase names of repeated headers)."""
    from chalicelib.protocol.iceberg.routes import ROUTES  # the handler modules load on first use

    started = time.perf_counter()
    metrics.reset()
    try:
        handler = ROUTES.get((method, route))
        if handler is None:
            allowed = sorted(m for m, r in ROUTES if r == route)
            raise IcebergError(405, "MethodNotAllowedException",
                               f"Method {method} is not allowed on {route}; use {', '.join(allowed)}")
        # Authenticated before anything else is read, so a refused caller learns nothing.
        caller = _caller(method, path, headers, raw_body, gateway_context, query, repeated)
        try:
            decoded = decode_path(path_params)
        except UnicodeDecodeError:
            raise bad_request("Invalid request: path parameters must be UTF-8 once percent-decoded") from None
        first: dict[str, str] = {}
        for name, value in query:
            first.setdefault(name, value)
        body = decode_object(raw_body) if method in ("POST", "PUT") else {}
        request = IcebergRequest(replace(caller, service=SIGNING_NAME), method, route, decoded, first, body)
        from chalicelib.service import access  # with the handler's service, not at cold start
        with access.acting_as(request.context):
            response = handler(request)
        status, answer = response.status, response.body
    except ServiceError as error:
        status, answer = error_model(error.with_traceback(None))
    except Exception:  # a bug or a store outage: logged, answered as the spec's 500
        log.exception("unhandled error in Iceberg %s %s", method, route)
        status, answer = 500, {"error": {"message": "Internal service error; the request was not applied or only "
                                                    "partly read. Retry.", "type": "InternalServerError", "code": 500}}
    if method == "HEAD":
        answer = None  # a HEAD answer has no body (the status says it all)
    # orjson: a LoadTableResult of a table of 1,000 snapshots is 500 KB of JSON.
    text = "" if answer is None else json_text.compact_lenient(answer).decode("utf-8")
    # Server-Timing (W3C): the server's own time, so a client can tell it from the network's.
    headers_out: dict[str, str | list[str]] = {"x-glue-items-read": str(metrics.items_read()),
                                               "Server-Timing": f"app;dur={(time.perf_counter() - started) * 1000:.2f}"}
    if text:
        headers_out["Content-Type"] = JSON
    return WireResponse(status, text, headers_out)


def framework_error(status: int, message: str) -> WireResponse:
    """Chalice's own refusals (405, 415, 500) on an Iceberg path, as an ErrorModel."""
    status = 400 if status == 415 else status
    kind = {400: "BadRequestException", 405: "MethodNotAllowedException"}.get(status, "InternalServerError")
    return WireResponse(status, json_text.dumps({"error": {"message": message, "type": kind, "code": status}}),
                        {"Content-Type": JSON})
