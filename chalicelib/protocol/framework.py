"""Chalice's own error answers, reshaped as AWS errors.

Before a request reaches the wire, Chalice itself may refuse it: 415 for a content type the route
does not list, 405 for a method it does not route, 500 when a view raises. Its bodies are
``{"Code": ..., "Message": ...}``, which botocore cannot map to an error code (it reads
``__type`` for Glue and ``x-amzn-ErrorType`` for Lake Formation), so a client saw a bare
``ClientError`` with code "415". These answers come from Chalice's ``__call__``, so they happen
deployed on Lambda as well as locally.
"""

from __future__ import annotations

from typing import Any, Mapping

from chalicelib import json_text
from chalicelib.protocol.aws_json.wire import JSON_11, REST_JSON
from chalicelib.protocol.response import Headers, WireResponse

# Chalice's codes whose AWS name is not just the code with an "Exception" suffix.
_AWS_NAMES = {
    "MethodNotAllowedError": "MethodNotAllowedException",
    "InternalServerError": "InternalServiceException",  # Glue's and Lake Formation's name
}


def is_framework_error(status: int, body: Any) -> bool:
    """True for an error Chalice wrote itself (the wire's own errors are already JSON text)."""
    return status >= 400 and isinstance(body, dict) and "Code" in body and "__type" not in body


def aws_error_name(chalice_code: str) -> str:
    """The AWS-style exception name for a Chalice error code (``UnsupportedMediaType`` ->
    ``UnsupportedMediaTypeException``, ``NotFoundError`` -> ``NotFoundException``)."""
    if chalice_code in _AWS_NAMES:
        return _AWS_NAMES[chalice_code]
    base = chalice_code.removesuffix("Error")
    return base if base.endswith("Exception") else base + "Exception"


def reshape(status: int, body: Mapping[str, Any], headers: Mapping[str, str | list[str]], glue: bool,
            accepted_types: tuple[str, ...] = ()) -> WireResponse:
    """Chalice's ``{"Code", "Message"}`` error as ``{"__type", "Message"}`` plus the
    ``x-amzn-ErrorType`` header, with the content type of the route's protocol."""
    code = aws_error_name(str(body.get("Code") or "InternalServerError"))
    message = str(body.get("Message") or code)
    if status == 415 and accepted_types:
        message += f"; send one of: {', '.join(accepted_types)}"
    out: Headers = {name: value for name, value in headers.items() if name.lower() != "content-type"}
    out["Content-Type"] = JSON_11 if glue else REST_JSON
    out["x-amzn-ErrorType"] = code
    return WireResponse(status, json_text.dumps({"__type": code, "Message": message}), out)
