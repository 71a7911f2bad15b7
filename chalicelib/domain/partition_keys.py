"""Sort keys of partition items and partition-index entries (see docs/design.md).

A partition item's sort key is its values under the table's partition-key types, each
component encoded by ``keycodec`` so that key order is value order. That makes the partitions
table itself an index on the leading partition keys (the "implicit index"). Unlike an explicit
index, it must hold *every* partition Glue accepts, so:

* a string value is escaped rather than refused when it holds U+0000-U+0002 (order-preserving);
* a value that does not convert to its key's type is stored as U+0002 + escaped text, which
  sorts below every valid value of that key: a typed range never contains it, and a typed
  comparison never matches it either (see ``expressions.evaluate``). One exception: a decimal
  written in exponent notation (``3e14``) is stored that way too (it did not convert when keys
  were first written, and keys never change) although it compares by value, so ranges over a
  decimal key also read that key's invalid region (``invalid_region_bounds``);
* typed encodings are not injective (``'7'`` and ``'07'`` are both 7), so tables with a
  non-string key append a hash of the raw values, keeping one key per distinct partition;
* a key longer than DynamoDB's 1,024-byte sort-key limit is cut at ``KEY_BYTES`` and ended by
  that hash; range bounds are cut at the same length, so ranges still cover it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import zlib
from dataclasses import dataclass
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any, Optional, Sequence

from chalicelib.domain import keycodec
from chalicelib.domain.expressions.binding import parse_value
from chalicelib.errors import InvalidInputException

KEY_BYTES = 990  # components part of a key; + 16 hash characters stays under 1,024 bytes
# lcm(1..10): for every TotalSegments <= 10, each segment is an equal run of whole buckets.
SEGMENT_MODULUS = 2520
_ESCAPES = {"\x00": "\x02\x03", "\x01": "\x02\x04", "\x02": "\x02\x05"}
_INVALID_MARK = "\x02"


@dataclass(frozen=True)
class IndexSpec:
    """A partition index as the store uses it: id, key names, their types and positions."""

    uid: str
    name: str
    keys: tuple[str, ...]
    types: tuple[str, ...]
    positions: tuple[int, ...]


def _escape(text: str) -> str:
    if not any(ch in text for ch in _ESCAPES):
        return text
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


# Partition values repeat heavily across a table's partitions (years, months, days, countries),
# so the typed encoding of a (value, type) pair is computed once per process, not per partition
# written: it is a pure function of the two strings. Bounded, so odd values cannot grow it.
_COMPONENT_CACHE = 16_384


@functools.lru_cache(maxsize=_COMPONENT_CACHE)
def _component(raw: str, glue_type: str) -> str:
    kind = keycodec.kind_of(glue_type)
    if kind == keycodec.STRING:
        return _escape(raw)
    if kind == keycodec.DECIMAL and ("e" in raw or "E" in raw):
        # Decimals in exponent notation did not convert before they were compared by value, so
        # partitions stored then have this key: sort keys must never change for the same values
        # (GetPartition finds a partition by recomputing its key). The planner adds the invalid
        # region of a decimal key to its ranges on the partitions table (``planner``).
        return _INVALID_MARK + _escape(raw)
    try:
        return keycodec.encode_value(parse_value(raw, glue_type), kind)
    except InvalidInputException:
        return _INVALID_MARK + _escape(raw)


def _identity_hash(values: Sequence[str]) -> str:
    return _identity_hash_of(tuple(values))


# A partition's sort key and each of its index entries' keys end with the same hash: the few
# most recent ones are kept, so writing a partition with three indexes hashes its values once.
@functools.lru_cache(maxsize=256)
def _identity_hash_of(values: tuple[str, ...]) -> str:
    return hashlib.sha256(_values_json(values).encode()).hexdigest()[:16]


_JSON = json.JSONEncoder(ensure_ascii=False)  # json.dumps(..., ensure_ascii=False), built once


def _values_json(values: tuple[str, ...]) -> str:
    """``json.dumps(list(values), ensure_ascii=False)``, the text a partition's identity hash
    was always taken of, written directly for strings (twice as fast as the encoder)."""
    try:
        return "[" + ", ".join(map(encode_basestring, values)) + "]"
    except TypeError:  # not all strings
        return _JSON.encode(list(values))


def _cut(text: str) -> str:
    return text.encode("utf-8", errors="surrogatepass")[:KEY_BYTES].decode("utf-8", errors="ignore")


def partition_sort_key(values: Sequence[str], key_types: Sequence[str]) -> str:
    """The partition item's sort key; ``key_types`` are the types the table was keyed with."""
    count = len(values)
    types = key_types if len(key_types) >= count else list(key_types) + ["string"] * (count - len(key_types))
    body = keycodec.SEP.join(map(_component, values, types)) + keycodec.SEP if count else ""
    # A character is at most 4 UTF-8 bytes: most keys are short enough not to be measured.
    if len(body) * 4 > KEY_BYTES and len(body.encode("utf-8", errors="surrogatepass")) > KEY_BYTES:
        return _cut(body) + _identity_hash(values)
    return body + _identity_hash(values) if _needs_hash(tuple(types[:count])) else body


@functools.lru_cache(maxsize=256)
def _needs_hash(types: tuple[str, ...]) -> bool:
    """Whether keys of these types end with the identity hash (any key not stored as text)."""
    return any(_kind_of(t) != keycodec.STRING for t in types)


def first_value_prefix_bounds(prefix: str, key_types: Sequence[str]) -> tuple[str, str] | None:
    """Inclusive sort-key bounds holding every partition whose first value starts with
    ``prefix`` (a superset: re-filter what they fetch); None when no range narrows that (an empty
    prefix, or a first key that is not a string: typed encodings do not keep text prefixes)."""
    if not prefix or not key_types or keycodec.kind_of(key_types[0]) != keycodec.STRING \
            or any(0xD800 <= ord(ch) <= 0xDFFF for ch in prefix):
        return None
    # A string component is its escaped text, and escaping works character by character, so the
    # key of a value starting with ``prefix`` starts with the escaped prefix (cut as keys are).
    low = _cut(_escape(prefix))
    high = keycodec.successor(low)
    return (low, high) if high is not None else None


def invalid_region_bounds(equals: Sequence[Any], key_types: Sequence[str]) -> tuple[str, Optional[str]]:
    """Inclusive sort-key bounds of the partitions whose leading values equal the typed
    ``equals`` and whose next value is stored as not converting to its key's type (U+0002 +
    text: see the module docstring), whatever follows. InvalidInputException (like
    ``keycodec.range_bounds``) when an equal value cannot be encoded."""
    prefix = "".join(keycodec.encode_value(v, keycodec.kind_of(t)) + keycodec.SEP
                     for v, t in zip(equals, key_types))
    # Every such key starts with prefix + U+0002 and so lies below prefix + U+0003, which is no
    # key itself: the component there is U+0002 + text or a typed encoding (ASCII above U+0020).
    low = prefix + _INVALID_MARK
    if len(low.encode("utf-8")) <= KEY_BYTES:
        return low, prefix + "\x03"
    # Keys are cut at KEY_BYTES (then the hash): every such key starts with the cut prefix.
    low = _cut(low)
    return low, keycodec.successor(low)


def segment_of(sort_key: str) -> int:
    """A stable pseudo-random bucket in [0, SEGMENT_MODULUS) for GetPartitions Segment."""
    return zlib.crc32(sort_key.encode("utf-8", errors="surrogatepass")) % SEGMENT_MODULUS


def segment_buckets(total: int, number: int) -> tuple[int, int]:
    """The buckets (inclusive range) of segment ``number`` of ``total``: a contiguous run, so
    DynamoDB can filter a segment with one BETWEEN; disjoint and covering for total <= 10."""
    return number * SEGMENT_MODULUS // total, (number + 1) * SEGMENT_MODULUS // total - 1


class IndexValueError(Exception):
    """A partition cannot be entered into an index; ``code`` is Glue's BackfillErrorCode."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@functools.lru_cache(maxsize=64)
def _kind_of(glue_type: str) -> str:
    return keycodec.kind_of(glue_type)


# Why a value cannot be an index key component (``_index_component``), when not the codec's own message.
_HAS_ESCAPE, _NOT_OF_TYPE = "escape", "type"


@functools.lru_cache(maxsize=_COMPONENT_CACHE)
def _index_component(raw: str, glue_type: str) -> tuple[str, str]:
    """(the typed key component of ``raw``, "") or ("", why it has none): ``_HAS_ESCAPE``,
    ``_NOT_OF_TYPE`` or the codec's message. A pure function of the two strings, cached like
    ``_component`` (refusals too: they are answers, not exceptions)."""
    if any(ch in raw for ch in _ESCAPES):
        return "", _HAS_ESCAPE
    try:
        typed = parse_value(raw, glue_type)
    except InvalidInputException:
        return "", _NOT_OF_TYPE
    try:
        return keycodec.encode_value(typed, keycodec.kind_of(glue_type)), ""
    except InvalidInputException as error:
        return "", error.message


def index_entry_key(values: Sequence[str], index: IndexSpec) -> str:
    """The entry's sort key: the indexed values (typed, strictly) + the partition's identity
    (cut at ``KEY_BYTES`` before the identity when longer, like ``partition_sort_key``).
    The same key ``keycodec.encode_key`` gives for the typed values.

    IndexValueError when a value is missing, does not fit its type, or holds U+0000-U+0002.
    """
    key, refused = "", ""
    for name, glue_type, position in zip(index.keys, index.types, index.positions):
        if position >= len(values):
            raise IndexValueError("MISSING_PARTITION_VALUE_ERROR",
                                  f"Partition has no value for indexed key '{name}'")
        raw = values[position]
        component, why = _index_component(raw, glue_type)
        if why == _HAS_ESCAPE:
            raise IndexValueError("UNSUPPORTED_PARTITION_CHARACTER_ERROR",
                                  f"Value of indexed key '{name}' contains U+0000, U+0001 or U+0002")
        if why == _NOT_OF_TYPE:
            raise IndexValueError("INVALID_PARTITION_TYPE_DATA_ERROR",
                                  f"Value '{raw}' of indexed key '{name}' is not a valid {glue_type}")
        # The codec's refusals come after every value was found and parsed, as when the whole
        # key was encoded at once.
        refused = refused or why
        key += component + keycodec.SEP
    if refused:
        raise IndexValueError("INVALID_PARTITION_TYPE_DATA_ERROR", refused)
    # Values Glue accepts (up to 1,024 characters each) may need more than a sort key holds:
    # cut like a partition sort key; the planner cuts range bounds at the same length.
    if len(key) * 4 > KEY_BYTES and len(key.encode("utf-8")) > KEY_BYTES:
        return _cut(key) + _identity_hash(values)
    return key + _identity_hash(values)
