"""The AWS JSON machinery Glue and Lake Formation share: decode a request, validate it against
botocore's model, run the operation's handler from the protocol's route table, and report the
result or the error for the protocol's own wire to encode.

Glue speaks AWS JSON 1.1 (``protocol/glue/wire.py``), Lake Formation REST-JSON
(``protocol/lakeformation/wire.py``); both answer a ServiceError as the 4xx/5xx body botocore
turns into ``client.exceptions.<Code>``, and anything unexpected as an InternalServiceException
(logged here), never a framework error page.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import replace
from typing import Any, Callable, Collection, Mapping, Sequence

from chalicelib import json_text, metrics
from chalicelib.context import RequestContext, context_from_request, require_one_authorization
from chalicelib.errors import (InternalServiceException, RequestEntityTooLargeException,
                               SerializationException, ServiceError, UnknownOperationException)
from chalicelib.protocol import sigv4
from chalicelib.protocol.aws_json.model import operation_model
from chalicelib.protocol.aws_json.quick_check import passes_quickly
from chalicelib.protocol.aws_json.validate import validate_input
from chalicelib.protocol.response import MAX_BODY_BYTES

log = logging.getLogger(__name__)

JSON_11 = "application/x-amz-json-1.1"  # Glue's
REST_JSON = "application/json"  # Lake Formation's
# A handler: the caller and the validated request in, the response members out.
Handler = Callable[[RequestContext, dict[str, Any]], dict[str, Any]]
# Run after validation, before the handler (Glue's check of a TransactionId): caller, operation, request.
Precheck = Callable[[RequestContext, str, dict[str, Any]], None]


def dump(payload: Any) -> str:
    """The JSON text of a response body."""
    return json_text.dumps(payload)


# A \uD800-\uDFFF escape: JSON lets it through, but alone it decodes to a lone surrogate, which
# is not text: it could be neither stored (UTF-8) nor echoed in an error message.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _has_lone_surrogate(params: Any) -> bool:
    try:
        json.dumps(params, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


_fast_loads: Callable[[bytes], Any] | None = None


def _fast_decoder() -> Callable[[bytes], Any]:
    # Imported at the first request, not with the app: orjson brings datetime and uuid along
    # (~10 ms of a cold start).
    global _fast_loads
    if _fast_loads is None:
        import orjson
        _fast_loads = orjson.loads
    return _fast_loads


def _decode_body(raw_body: bytes | None, fast: bool = False) -> dict[str, Any]:
    """The request's JSON object. ``fast``: by orjson, which decodes a body about twice as fast
    as ``json`` and to the same values, but for integers beyond 64 bits, which it reads as
    floats: only for a caller that checks the result with ``validate.passes_quickly`` (true only
    when no such float can be in it) and decodes again without ``fast`` when that fails. A body
    orjson refuses (bad JSON, NaN, a lone surrogate, a byte-order mark) goes to ``json``, which
    accepts or words the refusal as it always did."""
    if raw_body and len(raw_body) > MAX_BODY_BYTES:
        raise RequestEntityTooLargeException(f"Request body exceeds {MAX_BODY_BYTES} bytes")
    if not raw_body or raw_body.isspace():  # isspace: no copy of a body that may be 10 MB
        return {}
    if fast:
        try:
            # Strict UTF-8 and no lone surrogate escapes, like the checks below.
            decoded = _fast_decoder()(raw_body)
        except ValueError:
            pass
        else:
            if isinstance(decoded, dict):
                return decoded
    try:
        # Strict UTF-8 (json.loads on bytes would let UTF-8-encoded surrogates through).
        text = raw_body.decode("utf-8").lstrip("\ufeff")
        params = json.loads(text)
    except (ValueError, UnicodeDecodeError) as error:
        raise SerializationException(f"Request body is not valid JSON: {error}") from None
    except RecursionError:
        raise SerializationException("Request body is nested too deeply") from None
    if not isinstance(params, dict):
        raise SerializationException("Request body must be a JSON object")
    # Nearly every body has no surrogate escape at all: only then is the decoded value checked.
    if "\\u" in text and _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(params):
        raise SerializationException(
            "Request body is not valid JSON text: a \\uD800-\\uDFFF escape is not part of a "
            "surrogate pair (strings must be valid Unicode)")
    return params


def _without_nulls(value: Any) -> Any:
    """The request with every member sent as JSON null left out, as AWS's JSON protocols read
    it (so no action stores a null and answers it back). Validation has run: a null map value
    or list item was refused there, so what is left are structure members."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _invoke(service: str, operation: str, routes: Mapping[str, Handler], raw_body: bytes | None,
            ctx: RequestContext, precheck: Precheck | None) -> Any:
    model = operation_model(service, operation)
    handler = routes.get(operation)
    if model is None or handler is None:
        known = "is not implemented by this service" if model else "does not exist"
        raise UnknownOperationException(f"Operation {service}:{operation} {known}")
    params = _decode_body(raw_body, fast=True)
    if not passes_quickly(model.input_shape, params):
        # Invalid, or holding what the quick check does not vouch for (members the model lacks,
        # documents, huge numbers): decoded exactly, then validated in full.
        params = _decode_body(raw_body)
        validate_input(model.input_shape, params)
    if raw_body and b"null" in raw_body:
        params = _without_nulls(params)
    if precheck is not None:
        precheck(ctx, operation, params)
    return handler(ctx, params)


def _caller(service: str, path: str, headers: dict[str, str], raw_body: bytes | None,
            gateway_context: dict | None, query: Sequence[tuple[str, str]] = (),
            repeated: Collection[str] = ()) -> RequestContext:
    """The verified caller when authentication is on (sigv4), else the open mode's caller."""
    require_one_authorization(headers, repeated)
    if sigv4.required():
        method = str((gateway_context or {}).get("httpMethod") or "POST")
        return sigv4.authenticate(service, method, sigv4.signed_path(gateway_context, path), headers, raw_body,
                                  query)
    return context_from_request(headers, gateway_context)


def serve(service: str, operation: str, routes: Mapping[str, Handler], headers: dict[str, str],
          raw_body: bytes | None, gateway_context: dict | None, path: str, query: Sequence[tuple[str, str]] = (),
          repeated: Collection[str] = (), precheck: Precheck | None = None) -> tuple[int, Any, ServiceError | None]:
    """Authenticate, decode, validate and run one request of ``service`` (``routes``: its route
    table, operation -> handler): (200, the response members, None), or (status, None, the error)."""
    metrics.reset()
    try:
        ctx = _caller(service, path, headers, raw_body, gateway_context, query, repeated)
        ctx = replace(ctx, service=service, operation=operation)
        from chalicelib.service import access  # with the handler's service, not at cold start
        with access.acting_as(ctx):
            return 200, _invoke(service, operation, routes, raw_body, ctx, precheck) or {}, None
    except ServiceError as error:
        # Without its traceback: the frames it holds keep the decoded request (hundreds of MB
        # for a 10 MB body) alive in a reference cycle until the next full garbage collection.
        return error.status, None, error.with_traceback(None)
    except Exception:  # a bug or a store outage: log it, answer a clean AWS-shaped 500
        log.exception("unhandled error in %s:%s", service, operation)
        return 500, None, InternalServiceException("Internal service error; the request was not applied or only partly read. Retry.")


def metric_headers() -> dict[str, str]:
    """The headers that report what the request cost the store."""
    # How many DynamoDB items the request read, and in how many DynamoDB requests: benchmarks
    # report items read per result and round trips per call.
    return {"x-glue-items-read": str(metrics.items_read()), "x-glue-ddb-requests": str(metrics.requests()),
            "x-glue-permission-items-read": str(metrics.permission_items_read())}
