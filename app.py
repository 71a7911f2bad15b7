"""HTTP routes: Glue on ``POST /``, Lake Formation on ``POST /<Operation>``, the Paimon REST
catalog on ``/v1/...``, the Iceberg REST catalog on ``/iceberg/v1/...`` (Glue's endpoint shape);
and one scheduled function, the cleaner of deleted databases and tables.

Each route hands the request to its protocol's wire (chalicelib/protocol/<protocol>/wire.py:
decode, dispatch through the protocol's route table, encode); chalicelib.composition wires what
the protocols run on, once, here at import.
"""

import logging
import time
from typing import Any, Callable, cast

from chalice import Chalice, Rate, Response
from chalice.app import Request

from chalicelib import composition, settings
from chalicelib.protocol import framework
from chalicelib.protocol.aws_json.wire import JSON_11, REST_JSON
from chalicelib.protocol.glue import wire as glue_wire
from chalicelib.protocol.iceberg import wire as iceberg_wire
from chalicelib.protocol.iceberg.routes import ROUTE_LIST as ICEBERG_ROUTES
from chalicelib.protocol.lakeformation import wire as lakeformation_wire
from chalicelib.protocol.paimon import wire as paimon_wire
from chalicelib.protocol.paimon.routes import CATCH_ALL_METHODS as PAIMON_CATCH_ALL_METHODS
from chalicelib.protocol.paimon.routes import CATCH_ALL_PATHS as PAIMON_CATCH_ALL
from chalicelib.protocol.paimon.routes import ROUTE_LIST as PAIMON_ROUTES
from chalicelib.protocol.response import WireResponse
from chalicelib.protocol.web import wire as web_wire

composition.compose()
app = Chalice(app_name="glue-catalog")

# One line per request at INFO (GLUE_LOG_LEVEL=WARNING turns them off); the adapters' own loggers
# (chalicelib.*) log a 5xx with its traceback at ERROR, a client's mistake not at all. Levels are set
# here because Lambda's root logger is at WARNING and make run's is configured by infra/local/run.py.
request_log = logging.getLogger("glue_catalog.requests")
for _logger in ("glue_catalog", "chalicelib"):
    logging.getLogger(_logger).setLevel(settings.current().log_level)

# Chalice answers 415 to any content type a route does not list; Glue clients send
# application/x-amz-json-1.1 and some tools send plain JSON.
_CONTENT_TYPES = [JSON_11, REST_JSON, "application/x-amz-json-1.0", "text/plain",
                  "application/octet-stream"]


def _respond(result: WireResponse) -> Response:
    return Response(body=result.body, status_code=result.status, headers=result.headers)


def request_line(method: str, route: str, params: Any, headers: Any, status: int, seconds: float,
                 items_read: Any) -> str:
    """The request log's line: protocol, operation (Glue, Lake Formation) or method and route template
    (Paimon, Iceberg: no names of the caller's in the log), status, milliseconds, DynamoDB items read
    (``-`` where the response reports none, such as a refusal before the store)."""
    if route == "/":
        protocol, operation = "glue", str(headers.get("x-amz-target") or "").rpartition(".")[2][:100] or "-"
    elif route == "/{operation}":
        protocol, operation = "lakeformation", str((params or {}).get("operation") or "-")[:100]
    elif route.startswith("/v1/"):
        protocol, operation = "paimon", f"{method} {route}"
    elif route.startswith("/iceberg/"):
        protocol, operation = "iceberg", f"{method} {route}"
    else:
        protocol, operation = "http", f"{method} {route}"
    shown = items_read if items_read is not None else "-"
    return f"{protocol} {operation} {status} {seconds * 1000:.1f} ms items_read={shown}"


@app.middleware("http")
def log_each_request(request: Request, get_response: Callable[[Request], Response]) -> Response:
    """One log line per request (outermost, so the status is the one sent)."""
    started = time.perf_counter()
    response = get_response(request)
    if request is not None and request_log.isEnabledFor(logging.INFO):
        headers = response.headers or {}
        request_log.info(request_line(request.method, request.path, request.uri_params, request.headers,
                                      response.status_code, time.perf_counter() - started,
                                      headers.get("x-glue-items-read")))
    return response


@app.middleware("http")
def aws_shaped_framework_errors(request: Request, get_response: Callable[[Request], Response]) -> Response:
    """Chalice's own 415/405/500 answers get ``__type`` like every other error (see framework)."""
    response = get_response(request)
    if not framework.is_framework_error(response.status_code, response.body):
        return response
    if request is not None and request.path.startswith("/v1/"):
        body = response.body if isinstance(response.body, dict) else {}
        answer = paimon_wire.framework_error(response.status_code, str(body.get("Message") or body.get("Code")))
        return Response(body=answer.body, status_code=answer.status, headers=answer.headers)
    if request is not None and request.path.startswith("/iceberg/"):
        body = response.body if isinstance(response.body, dict) else {}
        return _respond(iceberg_wire.framework_error(response.status_code,
                                                     str(body.get("Message") or body.get("Code"))))
    glue = request is None or request.path == "/"
    return _respond(framework.reshape(response.status_code, response.body, response.headers, glue,
                                      tuple(_CONTENT_TYPES)))


def _request_parts() -> tuple[dict[str, str], bytes, dict]:
    request = app.current_request
    assert request is not None  # Chalice sets it before it calls a route
    headers = {k.lower(): v for k, v in request.headers.items()}
    # Typed str | bytes, but always bytes: Chalice encodes a str body (or base64-decodes it).
    return headers, cast(bytes, request.raw_body), request.context


def _repeated_headers() -> frozenset[str]:
    """The lowercase names of the headers the request carried more than once. Chalice's
    ``headers`` hold one value a name (API Gateway's ``headers``: the last one sent); every value
    is in the event's ``multiValueHeaders`` (API Gateway's REST API, and infra/local/server.py)."""
    request = app.current_request
    multi = request.to_original_event().get("multiValueHeaders") if request is not None else None
    if not multi:
        return frozenset()
    counts: dict[str, int] = {}
    for name, values in multi.items():
        counts[name.lower()] = counts.get(name.lower(), 0) + len(values or ())
    return frozenset(name for name, count in counts.items() if count > 1)


def _query_pairs() -> list[tuple[str, str]]:
    """Every (name, value) of the query string, repeats included: a SigV4 signature covers them."""
    request = app.current_request
    params = request.query_params if request is not None else None
    return [(name, value) for name in params for value in params.getlist(name)] if params else []


@app.route("/", methods=["POST"], content_types=_CONTENT_TYPES)
def glue() -> Response:
    headers, body, context = _request_parts()
    return _respond(glue_wire.handle(headers, body, context, _query_pairs(), _repeated_headers()))


@app.route("/{operation}", methods=["POST"], content_types=_CONTENT_TYPES)
def lakeformation(operation: str) -> Response:
    headers, body, context = _request_parts()
    return _respond(lakeformation_wire.handle(operation, headers, body, context, _query_pairs(),
                                              _repeated_headers()))


# -- The catalog browser and the health endpoint (chalicelib/protocol/web) ----------------------
# GET / from a browser leads to the page; any other GET / keeps Chalice's 405, AWS-shaped by the
# middleware. The page's own paths take POST too, answered as the Lake Formation operation of
# that name they were before these routes existed.

@app.route("/", methods=["GET"], content_types=_CONTENT_TYPES)
def root_page() -> Response:
    headers, _body, _context = _request_parts()
    if web_wire.wants_html(headers):
        return _respond(web_wire.redirect_to_page())
    return _respond(framework.reshape(405, {"Code": "MethodNotAllowedError", "Message": "Unsupported method: GET"},
                                      {}, True, tuple(_CONTENT_TYPES)))


def _page_or_operation(operation: str, get: Callable[[], WireResponse]) -> Response:
    request = app.current_request
    assert request is not None  # as in _request_parts
    if request.method == "POST":
        return lakeformation(operation)
    return _respond(get())


@app.route("/ui", methods=["GET", "POST"], content_types=_CONTENT_TYPES)
def ui_page() -> Response:
    request = app.current_request
    assert request is not None  # as in _request_parts
    called = str((request.context or {}).get("path") or request.path)
    if request.method == "GET" and called.endswith("/"):
        # /ui/ matches this route too, but the page's relative links need /ui.
        return _respond(web_wire.redirect_to_page("../ui"))
    return _page_or_operation("ui", web_wire.page)


@app.route("/ui/{name}", methods=["GET"], content_types=_CONTENT_TYPES)
def ui_file(name: str) -> Response:
    return _respond(web_wire.page(name))


@app.route("/health", methods=["GET", "POST"], content_types=_CONTENT_TYPES)
def health() -> Response:
    return _page_or_operation("health", web_wire.health)


@app.route("/ping", methods=["GET", "POST"], content_types=_CONTENT_TYPES)
def ping() -> Response:
    return _page_or_operation("ping", web_wire.health)


def _paimon_view(template: str) -> Callable[..., Response]:
    def view(**_params: str) -> Response:
        headers, body, context = _request_parts()
        request = app.current_request
        assert request is not None  # as in _request_parts
        # Chalice's MultiDict answers the last value of a repeated parameter for params[name].
        params = request.query_params
        query: dict[str, str] = {name: params[name] for name in params} if params else {}
        result = paimon_wire.handle(request.method, template, request.uri_params or {}, query, headers,
                                    body, context, _repeated_headers())
        return _respond(result)
    return view


def _register_paimon_routes() -> None:
    """One Chalice route per Paimon path template (Chalice's matcher has no greedy path
    parameters), then the catch-all routes (routes.CATCH_ALL_PATHS)."""
    methods: dict[str, list[str]] = {}
    for method, template, _handler in PAIMON_ROUTES:
        methods.setdefault(template, []).append(method)
    for i, (template, verbs) in enumerate(methods.items()):
        app.route(template, methods=verbs, content_types=_CONTENT_TYPES,
                  name=f"paimon_{i}")(_paimon_view(template))
    for i, template in enumerate(PAIMON_CATCH_ALL):
        app.route(template, methods=PAIMON_CATCH_ALL_METHODS, content_types=_CONTENT_TYPES,
                  name=f"paimon_unrouted_{i}")(_paimon_unrouted)


def _paimon_unrouted(**_params: str) -> Response:
    """Any other path under /v1: 501 as Paimon's ErrorResponse (wire.unrouted)."""
    request = app.current_request
    assert request is not None  # as in _request_parts
    return _respond(paimon_wire.unrouted(request.method, request.path))


_register_paimon_routes()


def _iceberg_view(template: str) -> Callable[..., Response]:
    def view(**_params: str) -> Response:
        headers, body, context = _request_parts()
        request = app.current_request
        assert request is not None  # as in _request_parts
        signed = str((context or {}).get("path") or request.path)
        result = iceberg_wire.handle(request.method, template, request.uri_params or {}, _query_pairs(), headers,
                                     body, context, signed, _repeated_headers())
        return _respond(result)
    return view


def _register_iceberg_routes() -> None:
    """One Chalice route per Iceberg REST path template, as for Paimon."""
    methods: dict[str, list[str]] = {}
    for method, template, _handler in ICEBERG_ROUTES:
        methods.setdefault(template, []).append(method)
    for i, (template, verbs) in enumerate(methods.items()):
        app.route(template, methods=verbs, content_types=_CONTENT_TYPES,
                  name=f"iceberg_{i}")(_iceberg_view(template))


_register_iceberg_routes()


@app.schedule(Rate(1, unit=Rate.MINUTES), name="cleanup_deleted")
def cleanup_deleted(_event: Any) -> None:
    """Delete the contents of deleted databases and tables (chalicelib.service.cleanup), for
    20 of the function's 30 seconds at most; what is left waits for the next run."""
    from chalicelib.service import cleanup  # not at import: the HTTP function never needs it

    cleanup.run(max_seconds=20.0)


# Last: everything above is loaded for good (chalicelib.composition.tune_collector).
composition.tune_collector()
