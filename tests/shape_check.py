"""Check the service's raw response bodies against botocore's output shapes.

Actions build their responses by hand (dicts, and JSON text with stored documents spliced in);
botocore's parser is lenient (it drops unknown members and passes wrong types through), so a
response that AWS would never send can look fine in a test. The checker reads the raw body of
every response the test clients receive and reports what the operation's output shape does not
allow: a missing or null required member, a member the shape does not know (usually a typo), a
wrong JSON type, a value outside an enum, and a null where AWS would omit the member.

``install(events)`` registers the check on a botocore event emitter (a session's, before its
clients are created: clients copy the session's handlers). Violations are recorded in
``VIOLATIONS``; the test harness fails the test during which they happened (tests/conftest.py).
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
from typing import Any, Optional

from botocore.model import OperationModel, Shape

# Services whose responses are checked (botocore's hyphenized service ids).
SERVICES = ("glue", "lakeformation")

_LOCK = threading.Lock()
VIOLATIONS: list[str] = []
# How many responses were checked, so the harness can prove the check is wired in.
CHECKED = {"count": 0}


def check_value(shape: Shape, value: Any, path: str = "") -> list[str]:
    """Every way ``value`` (decoded JSON) does not follow ``shape``; ``path`` names the member."""
    where = path or "<body>"
    if value is None:
        return [f"{where}: null (AWS omits a member that has no value)"]
    kind = shape.type_name
    if kind == "structure":
        return _check_structure(shape, value, path)
    if kind == "list":
        if not isinstance(value, list):
            return [f"{where}: expected a list ({shape.name}), got {_kind(value)}"]
        out: list[str] = []
        for i, item in enumerate(value):
            out += check_value(shape.member, item, f"{path}[{i}]")
        return out
    if kind == "map":
        if not isinstance(value, dict):
            return [f"{where}: expected a map ({shape.name}), got {_kind(value)}"]
        out = []
        for key, item in value.items():
            out += _check_scalar(shape.key, key, f"{path}{{key {key!r}}}")
            out += check_value(shape.value, item, f"{path}[{key!r}]")
        return out
    return _check_scalar(shape, value, where)


def _check_structure(shape: Shape, value: Any, path: str) -> list[str]:
    where = path or "<body>"
    if not isinstance(value, dict):
        return [f"{where}: expected a structure ({shape.name}), got {_kind(value)}"]
    out: list[str] = []
    members = shape.members
    for name in shape.required_members:
        if value.get(name) is None and not _is_location_member(members.get(name)):
            out.append(f"{_join(path, name)}: required member of {shape.name} is missing or null")
    for name, item in value.items():
        member = members.get(name)
        if member is None:
            out.append(f"{_join(path, name)}: not a member of {shape.name}")
        elif item is None and name in shape.required_members:
            continue  # reported above
        else:
            out += check_value(member, item, _join(path, name))
    return out


def _check_scalar(shape: Shape, value: Any, where: str) -> list[str]:
    kind = shape.type_name
    if kind == "string":
        if not isinstance(value, str):
            return [f"{where}: expected a string ({shape.name}), got {_kind(value)}"]
        if shape.enum and value not in shape.enum:
            return [f"{where}: {value!r} is not one of {shape.name}'s values {shape.enum}"]
        return []
    if kind in ("integer", "long"):
        if isinstance(value, bool) or not isinstance(value, int):
            return [f"{where}: expected an integer ({shape.name}), got {_kind(value)}"]
        return []
    if kind in ("double", "float"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return [f"{where}: expected a number ({shape.name}), got {_kind(value)}"]
        return []
    if kind == "boolean":
        if not isinstance(value, bool):
            return [f"{where}: expected a boolean ({shape.name}), got {_kind(value)}"]
        return []
    if kind == "timestamp":
        # The JSON protocols put timestamps in the body as epoch seconds (a number).
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return [f"{where}: expected a timestamp as epoch seconds ({shape.name}), got {_kind(value)}"]
        return []
    if kind == "blob":
        if not isinstance(value, str):
            return [f"{where}: expected a base64 string ({shape.name}), got {_kind(value)}"]
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return [f"{where}: not valid base64 ({shape.name})"]
        return []
    return [f"{where}: shape type {kind!r} of {shape.name} is not checked here"]


def check_response(operation_model: OperationModel, status: int, body: bytes) -> list[str]:
    """Every way a raw HTTP response body does not follow the operation's output (or error) shape."""
    name = operation_model.name
    if status >= 400:
        return [f"{name}: {v}" for v in check_error_body(body)]
    if status >= 300:
        return [f"{name}: unexpected HTTP status {status}"]
    shape = operation_model.output_shape
    if shape is None:
        # No output shape: AWS answers with an empty body or an empty object.
        if body.strip() in (b"", b"{}"):
            return []
        return [f"{name}: the operation has no output, yet the body is {body[:200]!r}"]
    payload = shape.serialization.get("payload")
    if payload and shape.members[payload].type_name in ("blob", "string"):
        return []  # a raw (streaming) payload, not JSON
    if not body.strip():
        return [] if not shape.required_members else [f"{name}: empty body, but {shape.name} has required members"]
    try:
        decoded = json.loads(body)
    except ValueError as exc:
        return [f"{name}: the body is not JSON ({exc})"]
    if payload:
        shape = shape.members[payload]  # the body is the payload structure itself
    return [f"{name}: {v}" for v in check_value(shape, decoded)]


def check_error_body(body: bytes) -> list[str]:
    """An error body must be a JSON object with a string ``__type`` and a string ``Message``."""
    try:
        decoded = json.loads(body)
    except ValueError as exc:
        return [f"error body is not JSON ({exc}): {body[:200]!r}"]
    if not isinstance(decoded, dict):
        return [f"error body is not an object: {body[:200]!r}"]
    out = []
    for key in ("__type", "Message"):
        if not isinstance(decoded.get(key), str) or not decoded[key]:
            out.append(f"error body lacks a string {key!r}: {body[:200]!r}")
    return out


def _after_call(http_response: Any, model: OperationModel, **_: Any) -> None:
    """botocore ``after-call`` handler: check the raw body of the final response (after retries)."""
    found = check_response(model, http_response.status_code, http_response.content or b"")
    with _LOCK:
        CHECKED["count"] += 1
        VIOLATIONS.extend(found)


def install(events: Any) -> None:
    """Register the check on a botocore event emitter for the catalog's services."""
    for service in SERVICES:
        events.register(f"after-call.{service}", _after_call, unique_id=f"shape-check-{service}")


def take_violations() -> list[str]:
    """The violations recorded so far, clearing the record."""
    with _LOCK:
        found = list(VIOLATIONS)
        VIOLATIONS.clear()
    return found


def _is_location_member(member: Optional[Shape]) -> bool:
    # Header / status-code members (rest-json) are not in the body.
    return member is not None and bool(member.serialization.get("location"))


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _kind(value: Any) -> str:
    return type(value).__name__
