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

from chalicelib.errors import InvalidInputException
# The compact codec is the shared one (orjson where it agrees with json), under the store's names.
from chalicelib.json_text import compact as compact_json
from chalicelib.json_text import loads

__all__ = ["MAX_DOCUMENT_BYTES", "compact_json", "decode_document", "decode_document_sized", "document_text",
           "encode_document", "loads"]

_COMPRESS_ABOVE = 1024
# DynamoDB items hold 400 KB; leave room for keys and the other attributes of the item.
MAX_DOCUMENT_BYTES = 380_000

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
