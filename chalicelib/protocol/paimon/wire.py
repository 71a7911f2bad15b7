"""The Paimon REST wire: PaimonRequest in, PaimonResponse out, errors as Paimon's ErrorResponse.

pypaimon's HttpClient maps an ErrorResponse's ``code`` to its exceptions (api/client.py):
400 BadRequestException, 401 NotAuthorizedException, 403 ForbiddenException, 404
NoSuchResourceException, 409 AlreadyExistsException, 501 NotImplementedException. The
catalog's exceptions (chalicelib.errors) are mapped to those codes here, in ``error_response``,
and nowhere else; a bug answers 500 with a generic message, never a traceback.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Collection
from urllib.parse import unquote_plus

from chalicelib import json_text, metrics
from chalicelib.domain.paimon import names
from chalicelib.context import RequestContext, context_from_bearer, require_one_authorization
from chalicelib.protocol import sigv4
from chalicelib.protocol.json_body import decode_object
from chalicelib.protocol.response import WireResponse
from chalicelib.errors import (AccessDeniedException, AlreadyExistsException, AuthenticationError,
                               ConcurrentModificationException,
                               EntityNotFoundException, RequestEntityTooLargeException,
                               ServiceError)

log = logging.getLogger(__name__)

JSON = "application/json"


class PaimonError(ServiceError):
    """An error with an explicit Paimon status (405, 501, ...) that no catalog exception names."""

    def __init__(self, status: int, message: str, resource_type: str | None = None,
                 resource_name: str | None = None) -> None:
        super().__init__(message, resource_type, resource_name)
        self.status = status


def not_implemented(what: str) -> PaimonError:
    """501: pypaimon raises NotImplementedException."""
    return PaimonError(501, f"{what} is not implemented by this catalog yet")


def bad_request(message: str) -> PaimonError:
    """400: pypaimon raises BadRequestException."""
    return PaimonError(400, message)


@dataclass
class PaimonRequest:
    """One decoded request: who calls, which route, its decoded path and query parameters and body.

    ``path`` values are URL-decoded (pypaimon encodes names form-style: '+' for a space, '%2F' for
    '/'); ``query`` holds the first value of each query parameter; ``body`` is the decoded JSON
    object ({} when the request had no body).
    """

    context: RequestContext
    method: str
    route: str
    path: dict[str, str]
    query: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)

    @property
    def warehouse(self) -> str:
        """The warehouse this request addresses (the ``{prefix}`` segment; see config.get_config)."""
        return self.path.get("prefix", "")

    def require(self, key: str, kind: type | tuple[type, ...] = str, where: str = "") -> Any:
        """A body member that must be present and of ``kind`` (400 naming the field otherwise)."""
        value = self.body.get(key)
        name = f"{where}.{key}" if where else key
        if value is None:
            raise bad_request(f"{name} is required")
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise bad_request(f"{name} must be a {names}, not {type(value).__name__}")
        return value

    def optional(self, key: str, kind: type | tuple[type, ...] = str) -> Any:
        """A body member that may be absent or null, else must be of ``kind``."""
        if self.body.get(key) is None:
            return None
        return self.require(key, kind)


@dataclass
class PaimonResponse:
    """A handler's answer: status and a JSON-able body (None: an empty 200, as Paimon's void calls)."""

    body: Any = None
    status: int = 200


Handler = Callable[[PaimonRequest], PaimonResponse]


def unserved(what: str) -> Handler:
    """The handler of a call the catalog does not serve (the data token, query auth and
    permissions wait for authentication): 501, which pypaimon raises as NotImplementedException."""
    def handler(request: PaimonRequest) -> PaimonResponse:
        raise not_implemented(what)
    handler.__name__ = handler.__qualname__ = f"unserved({what})"
    handler.__doc__ = f"{what}: not served (501)."
    return handler


def not_served(method: str, path: str) -> PaimonError:
    """501 for a path (or path template) the catalog does not route. Never a bare 404: Paimon's
    Java RESTCatalog reads a 404 as "the table/database does not exist", a 501 as a capability
    this server lacks (NotImplementedException), which it ignores or falls back from."""
    return PaimonError(501, f"{method} {path[:200]} is not served by this catalog")


def unrouted(method: str, path: str) -> WireResponse:
    """The answer of the catch-all routes under ``/v1`` (app.py): no handler serves ``path``."""
    status, body = error_response(not_served(method, path))
    return WireResponse(status, json_text.dumps(body), {"Content-Type": JSON})


def error_response(error: ServiceError) -> tuple[int, dict[str, Any]]:
    """The one mapping of catalog exceptions to Paimon's ErrorResponse and status code."""
    if isinstance(error, PaimonError):
        status = error.status
    elif isinstance(error, EntityNotFoundException):
        status = 404
    elif isinstance(error, AlreadyExistsException):
        status = 409
    elif isinstance(error, (AccessDeniedException,)):
        status = 403
    elif isinstance(error, AuthenticationError):
        status = 401
    elif isinstance(error, ConcurrentModificationException):
        # Paimon's servers answer a lost commit race with a 409 (pypaimon: AlreadyExistsException
        # is not what it retries on; CommitTableResponse.success=false is); handlers that want
        # the soft answer return it themselves.
        status = 409
    elif isinstance(error, RequestEntityTooLargeException):
        status = 413
    elif error.status >= 500:
        status = 500
    else:
        status = 400  # InvalidInputException, SerializationException and every other client error
    return status, {"message": error.message, "code": status, "resourceType": error.resource_type,
                    "resourceName": error.resource_name}


def decode_path(params: dict[str, str] | None) -> dict[str, str]:
    """Path parameters as names: neither chalice local nor API Gateway's REST API decode them, and
    pypaimon encodes form-style (RESTUtil.encode_string: quote_plus), so '+' is a space."""
    decoded = {}
    for name, value in (params or {}).items():
        text = unquote_plus(value, errors="strict") if value else ""
        if not text:
            raise bad_request(f"path parameter {name} must not be empty")
        decoded[name] = text
    return decoded


def handle(method: str, route: str, path_params: dict[str, str] | None, query: dict[str, str] | None,
           headers: dict[str, str], raw_body: bytes | None, gateway_context: dict | None,
           repeated: Collection[str] = ()) -> WireResponse:
    """Serve one Paimon request: look up the route's handler, decode, run it, encode the answer
    (``repeated``: the lowercase names of the headers the request carried more than once)."""
    from chalicelib.protocol.paimon.routes import ROUTES  # the handler modules load on first use

    metrics.reset()
    try:
        handler = ROUTES.get((method, route))
        if handler is None:
            allowed = sorted(m for m, r in ROUTES if r == route)
            if allowed:
                raise PaimonError(405, f"Method {method} is not allowed on {route}; use {', '.join(allowed)}")
            raise not_served(method, route)
        try:
            path = decode_path(path_params)
        except UnicodeDecodeError:
            raise bad_request("path parameters must be UTF-8 once URL-decoded") from None
        # Authenticated before anything else is read, so a refused caller learns nothing.
        require_one_authorization(headers, repeated)
        caller = sigv4.authenticate_bearer(headers) if sigv4.required() else context_from_bearer(headers, gateway_context)
        request = PaimonRequest(caller, method, route, path,
                                dict(query or {}), decode_object(raw_body) if method != "GET" else {})
        names.check_path(path)  # a name too long to exist is not found, whatever the route
        from chalicelib.service import access  # with the handler's service, not at cold start
        with access.acting_as(caller):
            response = handler(request)
        status, body = response.status, response.body
    except ServiceError as error:
        status, body = error_response(error.with_traceback(None))
    except Exception:  # a bug or a store outage: logged, answered as Paimon's 500
        log.exception("unhandled error in Paimon %s %s", method, route)
        status, body = 500, {"message": "Internal service error; the request was not applied or only partly "
                                        "read. Retry.", "code": 500, "resourceType": None, "resourceName": None}
    text = "" if body is None else json_text.dumps(body)
    return WireResponse(status, text, {"Content-Type": JSON, "x-glue-items-read": str(metrics.items_read()),
                                       "x-glue-ddb-requests": str(metrics.requests())})


def framework_error(status: int, message: str) -> WireResponse:
    """Chalice's own refusals (405, 415, 500) on a Paimon path, as an ErrorResponse."""
    status = 400 if status == 415 else status
    body = {"message": message, "code": status, "resourceType": None, "resourceName": None}
    return WireResponse(status, json_text.dumps(body), {"Content-Type": JSON})
