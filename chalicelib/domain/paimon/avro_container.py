"""The header of an Avro object-container file, and an empty one (pure: no store, no wire).

Paimon's manifest lists are Avro object-container files: the magic ``Obj\\x01``, a metadata map
(``avro.schema``, the writer's schema JSON; ``avro.codec``), a 16-byte sync marker, then blocks
of records, each compressed by the codec. The header itself is never compressed, so the schema
a table's writer used can be read from any of its manifest lists without a codec, and a file
with the same schema, the ``null`` codec and no block is a valid, empty manifest list (what a
truncating snapshot's base and delta lists are: no manifest at all). Spec: Avro 1.11, "Object
Container Files"; longs are zig-zag varints, a map is blocks of (count, entries) ending with 0.
"""

from __future__ import annotations

MAGIC = b"Obj\x01"
SYNC_BYTES = 16
_MAX_HEADER_ENTRIES = 1000  # a manifest list's header holds two or three


class AvroHeaderError(ValueError):
    """Bytes that do not begin with an Avro object-container header."""


def _read_long(data: bytes, at: int) -> tuple[int, int]:
    shift, value = 0, 0
    while True:
        if at >= len(data) or shift > 63:
            raise AvroHeaderError("truncated or overlong varint in the Avro header")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (value >> 1) ^ -(value & 1), at
        shift += 7


def _read_bytes(data: bytes, at: int) -> tuple[bytes, int]:
    size, at = _read_long(data, at)
    if size < 0 or at + size > len(data):
        raise AvroHeaderError("truncated bytes in the Avro header")
    return data[at:at + size], at + size


def _long(value: int) -> bytes:
    zigzag = (value << 1) ^ (value >> 63)
    out = bytearray()
    while True:
        if zigzag < 0x80:
            out.append(zigzag)
            return bytes(out)
        out.append((zigzag & 0x7F) | 0x80)
        zigzag >>= 7


def _bytes(value: bytes) -> bytes:
    return _long(len(value)) + value


def read_header(data: bytes) -> tuple[dict[str, bytes], bytes]:
    """(metadata map, sync marker) of an Avro object-container file's first bytes."""
    if not data.startswith(MAGIC):
        raise AvroHeaderError("not an Avro object-container file (no Obj\\x01 magic)")
    at = len(MAGIC)
    metadata: dict[str, bytes] = {}
    while True:
        count, at = _read_long(data, at)
        if count == 0:
            break
        if count < 0:  # a block with its byte size after the count
            count = -count
            _size, at = _read_long(data, at)
        if len(metadata) + count > _MAX_HEADER_ENTRIES:
            raise AvroHeaderError("too many Avro header entries")
        for _ in range(count):
            key, at = _read_bytes(data, at)
            value, at = _read_bytes(data, at)
            try:
                metadata[key.decode("utf-8")] = value
            except UnicodeDecodeError:
                raise AvroHeaderError("an Avro header key is not UTF-8") from None
    if at + SYNC_BYTES > len(data):
        raise AvroHeaderError("truncated Avro header (no sync marker)")
    return metadata, data[at:at + SYNC_BYTES]


def writer_schema(data: bytes) -> bytes:
    """The ``avro.schema`` JSON of an Avro object-container file."""
    schema = read_header(data)[0].get("avro.schema")
    if not schema:
        raise AvroHeaderError("the Avro header holds no avro.schema")
    return schema


def empty_container(schema: bytes, sync: bytes) -> bytes:
    """An object-container file of ``schema`` with no records: header only, codec ``null``."""
    if len(sync) != SYNC_BYTES:
        raise ValueError("an Avro sync marker is 16 bytes")
    entries = [(b"avro.schema", schema), (b"avro.codec", b"null")]
    body = b"".join(_bytes(key) + _bytes(value) for key, value in entries)
    return MAGIC + _long(len(entries)) + body + _long(0) + sync
