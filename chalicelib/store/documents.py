"""Encoding of API objects (a Table, a Database...) into one DynamoDB binary attribute.

Glue objects are free-form and nested (StorageDescriptor, Parameters with values of up to
512,000 characters), so they are stored as compact JSON, zlib-compressed when that pays off.
The first byte says which: ``J`` plain JSON, ``Z`` zlib. An object that still does not fit in a
DynamoDB item is refused with a clear error rather than truncated.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

import orjson

from chalicelib.errors import InvalidInputException

_COMPRESS_ABOVE = 1024
# DynamoDB items hold 400 KB; leave room for keys and the other attributes of the item.
MAX_DOCUMENT_BYTES = 380_000
# json.dumps(obj, separators=(",", ":"), ensure_ascii=False), without building this encoder
# anew for every call (json.dumps reuses one only for its default arguments). No circular
# check: what is encoded is built from decoded JSON, which cannot refer to itself.
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False)


def compact_json(obj: Any) -> bytes:
    """``json.dumps(obj, separators=(",", ":"), ensure_ascii=False)`` as UTF-8, by orjson.

    orjson writes a 1 KB partition about ten times faster, the same text for every string,
    integer and container (checked for every character in tests/unit/test_compact_json.py). It
    differs in three places, which go to ``json`` instead: what it refuses (integers beyond 64
    bits, a lone surrogate: TypeError, which ``json`` then raises in its own way), and NaN and
    infinities, which it writes as ``null`` (so any ``null`` in its text sends the object to
    ``json``; documents seldom hold one). Floats may be spelled otherwise (``1e-7`` for
    ``1e-07``) but read back as the same number. Imported with the store, at the first request,
    not with the app: orjson brings datetime and uuid with it (~10 ms of a cold start).
    """
    try:
        raw = orjson.dumps(obj)
    except TypeError:
        return _COMPACT.encode(obj).encode("utf-8")
    if b"null" in raw:
        return _COMPACT.encode(obj).encode("utf-8")
    return raw


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``, by orjson when it can (several times faster on a partition or a
    DynamoDB answer); what orjson refuses (a lone surrogate escaped in a string, say) is decoded
    by ``json``. orjson reads an integer beyond 64 bits as a float: only for texts whose integers
    are bounded (a partition's are int32 or smaller, its timestamps floats; DynamoDB sends the
    numbers of items as text)."""
    try:
        return orjson.loads(text)
    except ValueError:
        return json.loads(text)


def encode_document(obj: Any, what: str = "object") -> bytes:
    """Serialize ``obj``; InvalidInputException if it cannot be stored whole."""
    raw = compact_json(obj)
    data = b"J" + raw
    if len(raw) > _COMPRESS_ABOVE:
        packed = b"Z" + zlib.compress(raw, 6)
        if len(packed) < len(data):
            data = packed
    if len(data) > MAX_DOCUMENT_BYTES:
        raise InvalidInputException(
            f"The {what} definition is too large: {len(raw)} bytes ({len(data)} compressed); "
            f"at most {MAX_DOCUMENT_BYTES} bytes compressed can be stored")
    return data


def decode_document(data: bytes) -> Any:
    """Inverse of encode_document."""
    return decode_document_sized(data)[0]


def document_text(data: bytes) -> str:
    """The stored object as its compact JSON text, without decoding it."""
    kind, body = data[:1], data[1:]
    if kind == b"Z":
        body = zlib.decompress(body)
    return body.decode("utf-8")


def decode_document_sized(data: bytes) -> tuple[Any, int]:
    """The object and the length of its JSON text (what it adds to a response, roughly)."""
    kind, body = data[:1], data[1:]
    if kind == b"Z":
        body = zlib.decompress(body)
    return json.loads(body), len(body)
