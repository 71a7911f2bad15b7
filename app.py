"""HTTP routes only: Glue on ``POST /``, Lake Formation on ``POST /<Operation>``.

Everything else happens in chalicelib.protocol.wire (decode, validate, dispatch, encode).
"""

from typing import Callable, cast

from chalice import Chalice, Response
from chalice.app import Request

from chalicelib.protocol import framework, wire

app = Chalice(app_name="glue-catalog")

# Chalice answers 415 to any content type a route does not list; Glue clients send
# application/x-amz-json-1.1 and some tools send plain JSON.
_CONTENT_TYPES = [wire.JSON_11, wire.REST_JSON, "application/x-amz-json-1.0", "text/plain",
                  "application/octet-stream"]


def _respond(result: wire.WireResponse) -> Response:
    return Response(body=result.body, status_code=result.status, headers=result.headers)


@app.middleware("http")
def aws_shaped_framework_errors(request: Request, get_response: Callable[[Request], Response]) -> Response:
    """Chalice's own 415/405/500 answers get ``__type`` like every other error (see framework)."""
    response = get_response(request)
    if not framework.is_framework_error(response.status_code, response.body):
        return response
    glue = request is None or request.path == "/"
    return _respond(framework.reshape(response.status_code, response.body, response.headers, glue,
                                      tuple(_CONTENT_TYPES)))


def _request_parts() -> tuple[dict[str, str], bytes, dict]:
    request = app.current_request
    assert request is not None  # Chalice sets it before it calls a route
    headers = {k.lower(): v for k, v in request.headers.items()}
    # Typed str | bytes, but always bytes: Chalice encodes a str body (or base64-decodes it).
    return headers, cast(bytes, request.raw_body), request.context


@app.route("/", methods=["POST"], content_types=_CONTENT_TYPES)
def glue() -> Response:
    headers, body, context = _request_parts()
    return _respond(wire.handle_glue(headers, body, context))


@app.route("/{operation}", methods=["POST"], content_types=_CONTENT_TYPES)
def lakeformation(operation: str) -> Response:
    headers, body, context = _request_parts()
    return _respond(wire.handle_lakeformation(operation, headers, body, context))
