"""Response bodies that contain JSON already written, spliced in rather than re-encoded; and the
compact JSON codec (orjson where it agrees with ``json``) the layers share.

A partition is stored as its JSON text (store/documents.py). Decoding it only to encode it
again for the response cost about as much as reading it from DynamoDB, so list results can be
handed to the wire as ``JsonFragments``: a list whose members are JSON texts, joined as they
are. Everything else in a response is encoded with ``json.dumps`` as usual.
"""

from __future__ import annotations

import functools
import json
from decimal import Decimal
from typing import Any


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False)
_ORJSON: Any = None


def _orjson() -> Any:
    global _ORJSON
    if _ORJSON is None:
        import orjson
        _ORJSON = orjson
    return _ORJSON


def compact(obj: Any) -> bytes:
    """``json.dumps(obj, separators=(",", ":"), ensure_ascii=False)`` as UTF-8, by orjson.

    orjson writes JSON about ten times faster, the same text for every string, integer and
    container (checked for every character in tests/unit/test_compact_json.py). It differs in three
    places, which go to ``json`` instead: what it refuses (integers beyond 64 bits, a lone
    surrogate: TypeError, which ``json`` then raises in its own way), and NaN and infinities,
    which it writes as ``null`` (so any ``null`` in its text sends the object to ``json``). Floats
    may be spelled otherwise (``1e-7`` for ``1e-07``) but read back as the same number. orjson is
    imported on first use, not with the app: it brings datetime and uuid (~10 ms of a cold start).
    """
    try:
        raw = _orjson().dumps(obj)
    except TypeError:
        return _COMPACT.encode(obj).encode("utf-8")
    if b"null" in raw:
        return _COMPACT.encode(obj).encode("utf-8")
    return raw


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``, by orjson when it can (several times faster); what orjson refuses (a
    lone surrogate escaped in a string, say) is decoded by ``json``. orjson reads an integer
    beyond 64 bits as a float: only for texts whose integers are bounded."""
    try:
        return _orjson().loads(text)
    except ValueError:
        return json.loads(text)


class Spliced:
    """An object one member of which is JSON text already written by ``compact_lenient`` (say, a
    file's): ``compact_lenient`` splices the text in as it is (an orjson Fragment: a copy),
    rather than encoding ``value`` again; only if orjson refuses the rest is ``value`` encoded.
    The member goes where it is in ``obj``, else last."""

    __slots__ = ("obj", "key", "text", "value")

    def __init__(self, obj: dict[str, Any], key: str, text: bytes, value: Any) -> None:
        self.obj, self.key, self.text, self.value = obj, key, text, value


def compact_lenient(obj: Any) -> bytes:
    """``compact`` for texts where a NaN or an infinity may become ``null`` (JSON has neither;
    ``json`` would write the invalid ``NaN``): orjson always, ``json`` only for what orjson refuses
    (integers beyond 64 bits, a lone surrogate). For Iceberg metadata and answers, whose nulls are
    common (``compact`` would hand each of them to ``json``, ten times slower)."""
    if isinstance(obj, Spliced):
        try:
            return _orjson().dumps({**obj.obj, obj.key: _orjson().Fragment(obj.text)})  # type: ignore[no-any-return]
        except TypeError:
            obj = {**obj.obj, obj.key: obj.value}
    try:
        return _orjson().dumps(obj)  # type: ignore[no-any-return]
    except TypeError:
        return _COMPACT.encode(obj).encode("utf-8")


class JsonFragments(list):
    """A JSON array whose members are already JSON text (``str``)."""


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def dumps(payload: Any) -> str:
    """Compact JSON; ``JsonFragments`` at the top level of a response object are spliced."""
    if isinstance(payload, dict) and any(isinstance(v, JsonFragments) for v in payload.values()):
        members = []
        for name, value in payload.items():
            text = f"[{','.join(value)}]" if isinstance(value, JsonFragments) else dumps(value)
            members.append(f"{dumps(name)}:{text}")
        return f"{{{','.join(members)}}}"
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False, default=_default)


class Members(dict):
    """Members appended to many JSON objects (a page's partitions all get the same database,
    table and catalog names): their JSON text is encoded once. Not to be changed once used."""

    @functools.cached_property
    def text(self) -> str:
        """The members as JSON object members, without braces."""
        return ",".join(dumps(name) + ":" + dumps(value) for name, value in self.items())


def with_members(object_text: str, members: dict[str, Any]) -> str:
    """The JSON object ``object_text`` with ``members`` appended (their names must be new)."""
    if isinstance(members, Members):
        extra = members.text
    else:
        extra = ",".join(dumps(name) + ":" + dumps(value) for name, value in members.items())
    if not extra:
        return object_text
    head = object_text.rstrip()[:-1]
    # One f-string: a chain of ``+`` would copy the (kilobyte) object text at each step.
    return f'{head}{"," if head.strip() != "{" else ""}{extra}}}'
