"""A REST request's JSON object body, decoded once for every REST protocol (Paimon, Iceberg):
too large, not JSON, not an object or holding a lone surrogate is a client error, said as such."""

from __future__ import annotations

import json
from typing import Any, Optional

from chalicelib.errors import InvalidInputException, RequestEntityTooLargeException
from chalicelib.protocol.response import MAX_BODY_BYTES


def decode_object(raw: Optional[bytes]) -> dict[str, Any]:
    """The body's JSON object ({} for no body). InvalidInputException (each wire's 400) for a body
    that is no JSON object; RequestEntityTooLargeException past API Gateway's payload limit."""
    if raw and len(raw) > MAX_BODY_BYTES:
        raise RequestEntityTooLargeException(f"Request body exceeds {MAX_BODY_BYTES} bytes")
    if not raw or raw.isspace():
        return {}
    try:
        data = json.loads(raw.decode("utf-8").lstrip("\ufeff"))
    except (ValueError, UnicodeDecodeError) as error:
        raise InvalidInputException(f"Request body is not valid JSON: {error}") from None
    except RecursionError:
        raise InvalidInputException("Request body is nested too deeply") from None
    if not isinstance(data, dict):
        raise InvalidInputException("Request body must be a JSON object")
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputException("Request body holds a lone surrogate escape (strings must be valid Unicode)") from None
    return data
