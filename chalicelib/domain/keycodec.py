"""Order-preserving encoding of typed partition values into DynamoDB string sort keys.

A partition-index item's sort key holds the indexed partition values in index order. DynamoDB
compares string keys by their UTF-8 bytes, and UTF-8 byte order equals code-point order, which
is also Python's ``str`` order. Each value is encoded so that string order equals value order, and
every encoded component is *followed* by ``SEP`` (U+0001): a terminator rather than a pure
separator, so that

* a key is never the empty string (DynamoDB rejects empty key values), even for one empty value;
* ``'US'`` sorts before ``'USA'`` inside a key (``'US' SEP ...`` < ``'USA' SEP ...`` because SEP is
  smaller than any character a value may contain), so tuple order equals key order;
* all keys whose first k components are fixed share the prefix ``P`` (ending in SEP) and lie in
  ``[P, P[:-1] + U+0002]``: no key contains U+0002, so that upper bound is never a key itself.

Glue forbids U+0000-U+0002 in indexed values for exactly this reason; encoded non-string values
only ever contain ASCII letters, digits and ``- : . ~`` and space.

Also the domain's view of Glue column types (``kind_of``) and a nanosecond ``Timestamp``,
shared with the expression language in ``chalicelib.domain.expressions``.
"""

from __future__ import annotations

import datetime as _dt
import functools
import struct
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Iterable, Optional, Sequence

from chalicelib.errors import InvalidInputException

SEP = "\x01"
# The character just above SEP: replaces a trailing SEP to bound "every key with this prefix".
_AFTER_SEP = "\x02"
_FORBIDDEN = ("\x00", "\x01", "\x02")
MAX_SORT_KEY_BYTES = 1024

# ----------------------------------------------------------------------------------- type kinds
STRING = "string"
INT = "int"
DECIMAL = "decimal"
FLOAT = "double"
DATE = "date"
TIMESTAMP = "timestamp"
BOOLEAN = "boolean"

_KINDS = {
    "string": STRING, "char": STRING, "varchar": STRING,
    "int": INT, "integer": INT, "bigint": INT, "long": INT, "smallint": INT, "tinyint": INT,
    "decimal": DECIMAL, "numeric": DECIMAL,
    "double": FLOAT, "float": FLOAT, "real": FLOAT,
    "date": DATE,
    "timestamp": TIMESTAMP,
    "boolean": BOOLEAN,
}


@functools.lru_cache(maxsize=1024)
def base_type(glue_type: str) -> str:
    """The lowercase type name without parameters: ``'DECIMAL(10,2)'`` -> ``'decimal'``."""
    text = glue_type.strip().lower()
    for stop in "(<":
        text = text.split(stop, 1)[0]
    return text.strip()


@functools.lru_cache(maxsize=1024)
def kind_of(glue_type: str) -> str:
    """How values of a Glue column type compare: one of STRING, INT, DECIMAL, FLOAT, DATE,
    TIMESTAMP, BOOLEAN. Unknown and complex types (array<...>, struct<...>) compare as strings."""
    return _KINDS.get(base_type(glue_type), STRING)


# ------------------------------------------------------------------------------------ timestamp
_EPOCH = _dt.datetime(1970, 1, 1)
_NANOS_PER_SECOND = 1_000_000_000


@dataclass(frozen=True, order=True)
class Timestamp:
    """A timestamp with nanosecond precision (Glue/Hive timestamps carry up to 9 fraction
    digits, more than ``datetime`` holds), as nanoseconds since 1970-01-01 00:00:00 UTC."""

    epoch_nanos: int

    @classmethod
    def from_parts(cls, moment: _dt.datetime, nanos: int = 0) -> "Timestamp":
        """From a datetime (aware ones are converted to UTC; microseconds ignored) plus the
        fraction of its second in nanoseconds."""
        if moment.tzinfo is not None:
            moment = moment.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        seconds = (moment.replace(microsecond=0) - _EPOCH) // _dt.timedelta(seconds=1)
        value = cls(seconds * _NANOS_PER_SECOND + nanos)
        value.isoformat()  # raises OverflowError outside years 0001-9999
        return value

    def isoformat(self) -> str:
        """``yyyy-MM-dd HH:mm:ss.fffffffff``: fixed width, so string order is time order."""
        seconds, nanos = divmod(self.epoch_nanos, _NANOS_PER_SECOND)
        m = _EPOCH + _dt.timedelta(seconds=seconds)
        # Not strftime: glibc's %Y does not zero-pad years below 1000.
        return (f"{m.year:04d}-{m.month:02d}-{m.day:02d} "
                f"{m.hour:02d}:{m.minute:02d}:{m.second:02d}.{nanos:09d}")

    def __str__(self) -> str:
        return self.isoformat()


# ------------------------------------------------------------------------------- value encoding
_INT_OFFSET = 1 << 63
_DECIMAL_EXP_OFFSET = 5000  # adjusted exponents -5000..4999 fit in 4 digits
_NEGATIVE_DECIMAL_END = "~"  # sorts after every digit: see _encode_decimal


def encode_value(value: Any, kind: str) -> str:
    """One value of the given kind (see ``kind_of``) as an order-preserving string.

    TypeError when the Python type does not match the kind (a programming error);
    InvalidInputException when the value cannot be indexed (forbidden characters, out of range).
    """
    if kind == STRING:
        return _encode_string(value)
    if kind == INT:
        return _encode_int(value)
    if kind == DECIMAL:
        return _encode_decimal(value)
    if kind == FLOAT:
        return _encode_float(value)
    if kind == DATE:
        return _encode_date(value)
    if kind == TIMESTAMP:
        _expect(value, Timestamp, kind)
        return value.isoformat()
    if kind == BOOLEAN:
        _expect(value, bool, kind)
        return "1" if value else "0"
    raise ValueError(f"unknown value kind {kind!r}")


def decode_value(text: str, kind: str) -> Any:
    """The inverse of ``encode_value``."""
    if kind == STRING:
        return text
    if kind == INT:
        return int(text) - _INT_OFFSET
    if kind == DECIMAL:
        return _decode_decimal(text)
    if kind == FLOAT:
        return _decode_float(text)
    if kind == DATE:
        return _dt.date.fromisoformat(text)
    if kind == TIMESTAMP:
        day, clock = text.split(" ")
        whole, fraction = clock.split(".")
        moment = _dt.datetime.fromisoformat(f"{day}T{whole}")
        return Timestamp.from_parts(moment, int(fraction))
    if kind == BOOLEAN:
        return text == "1"
    raise ValueError(f"unknown value kind {kind!r}")


def _expect(value: Any, python_type: type, kind: str) -> None:
    if not isinstance(value, python_type) or (python_type is int and isinstance(value, bool)):
        raise TypeError(f"a {kind} key component must be {python_type.__name__}, got {value!r}")


def _encode_string(value: str) -> str:
    _expect(value, str, STRING)
    for char in _FORBIDDEN:
        if char in value:
            raise InvalidInputException(
                f"Partition value {value!r} contains the character U+{ord(char):04X}: indexed "
                "partition values must not contain U+0000, U+0001 or U+0002")
    return value


def _encode_int(value: int) -> str:
    _expect(value, int, INT)
    if not -_INT_OFFSET <= value < _INT_OFFSET:
        raise InvalidInputException(f"Integer partition value {value} is outside the 64-bit range")
    # Offsetting by 2**63 folds the sign in: every value becomes 0..2**64-1, 20 digits wide.
    return f"{value + _INT_OFFSET:020d}"


def _encode_decimal(value: Decimal) -> str:
    """Sign class, then exponent, then significant digits.

    ``'0'`` negative < ``'1'`` zero < ``'2'`` positive. A positive value 0.d1d2...dn x 10^e
    (d1 != 0, no trailing zeros) is ``'2' + e+5000 (4 digits) + d1...dn``: a larger exponent
    is larger, and for equal exponents the digit strings compare like the numbers (a shorter
    string is a prefix padded with zeros, and SEP after it sorts below any digit).
    A negative value uses the complement of both (9999 - exponent code, 9 - each digit) so a
    larger magnitude sorts lower, and ends with '~': -0.12 must sort above -0.123, but the
    complemented '87' is a prefix of '876'; '87~' > '876~' because '~' sorts above digits.
    Equal numbers (1.0, 1.00) encode identically.
    """
    _expect(value, Decimal, DECIMAL)
    if not value.is_finite():
        raise InvalidInputException(f"Decimal partition value {value} is not a finite number")
    if value.is_zero():
        return "1"
    sign, digits, _ = value.as_tuple()
    text = "".join(map(str, digits)).rstrip("0")
    code = value.adjusted() + 1 + _DECIMAL_EXP_OFFSET
    if not 0 <= code <= 9999:
        raise InvalidInputException(f"Decimal partition value {value} is outside the indexable range")
    if not sign:
        return f"2{code:04d}{text}"
    complement = "".join(str(9 - int(d)) for d in text)
    return f"0{9999 - code:04d}{complement}{_NEGATIVE_DECIMAL_END}"


def _decode_decimal(text: str) -> Decimal:
    if text == "1":
        return Decimal(0)
    if text[0] == "2":
        exponent, digits = int(text[1:5]) - _DECIMAL_EXP_OFFSET, text[5:]
        sign = ""
    else:
        exponent = 9999 - int(text[1:5]) - _DECIMAL_EXP_OFFSET
        digits = "".join(str(9 - int(d)) for d in text[5:-1])
        sign = "-"
    return Decimal(f"{sign}0.{digits}E{exponent}")


def _encode_float(value: float) -> str:
    """IEEE-754 bits as 16 hex digits, flipped so unsigned order equals numeric order:
    positives get the sign bit set, negatives get every bit inverted."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    _expect(value, float, FLOAT)
    if value != value:
        raise InvalidInputException("NaN cannot be a partition index value")
    if value == 0.0:
        value = 0.0  # -0.0 == 0.0, so they must encode alike
    (bits,) = struct.unpack(">Q", struct.pack(">d", value))
    bits = bits ^ 0xFFFF_FFFF_FFFF_FFFF if bits >> 63 else bits | (1 << 63)
    return f"{bits:016x}"


def _decode_float(text: str) -> float:
    bits = int(text, 16)
    bits = bits & ~(1 << 63) if bits >> 63 else bits ^ 0xFFFF_FFFF_FFFF_FFFF
    (value,) = struct.unpack(">d", struct.pack(">Q", bits))
    return value


def _encode_date(value: _dt.date) -> str:
    if isinstance(value, _dt.datetime) or not isinstance(value, _dt.date):
        raise TypeError(f"a date key component must be datetime.date, got {value!r}")
    return value.isoformat()  # years 0001-9999: always yyyy-MM-dd, fixed width


# ------------------------------------------------------------------------------------ whole keys
def encode_key(values: Sequence[Any], types: Sequence[str], max_bytes: int = MAX_SORT_KEY_BYTES) -> str:
    """The sort key for typed partition values under the given Glue column types (index order).

    InvalidInputException if a value cannot be indexed or the key would exceed ``max_bytes``
    UTF-8 bytes (DynamoDB's sort-key limit is 1,024 bytes; pass less to leave room for a prefix).
    """
    if len(values) != len(types):
        raise ValueError(f"{len(values)} values for {len(types)} key types")
    key = "".join(encode_value(v, kind_of(t)) + SEP for v, t in zip(values, types))
    size = _utf8_size(key)
    if size > max_bytes:
        raise InvalidInputException(
            f"The indexed partition values need a {size}-byte index key; the limit is "
            f"{max_bytes} bytes (DynamoDB sort keys hold at most {MAX_SORT_KEY_BYTES} bytes)")
    return key


def decode_key(key: str, types: Sequence[str]) -> tuple[Any, ...]:
    """The typed values of a key made by ``encode_key`` (anything after the last of
    ``len(types)`` components, such as a uniqueness suffix, is ignored)."""
    parts = key.split(SEP)
    if len(parts) <= len(types):
        raise ValueError(f"key {key!r} has fewer than {len(types)} components")
    return tuple(decode_value(p, kind_of(t)) for p, t in zip(parts, types))


def range_bounds(key_range: Any, types: Sequence[str],
                 max_bytes: int = MAX_SORT_KEY_BYTES) -> tuple[Optional[str], Optional[str]]:
    """Inclusive sort-key bounds ``(low, high)`` covering exactly the keys in a key range.

    ``key_range`` has ``equals`` (typed values for a prefix of the index keys) and ``low`` /
    ``high`` (each None or ``(typed value, inclusive)``) on the next key, like
    ``chalicelib.domain.expressions.KeyRange``. None means unbounded on that side; otherwise
    query with ``BETWEEN low AND high``, ``>= low`` or ``<= high``. The bounds stay correct when
    keys carry extra text after their last component. A bound longer than ``max_bytes`` is
    widened to one that fits, so the result may then be a superset (callers re-filter anyway).
    The range must not be empty (low value above high value).
    """
    prefix = "".join(encode_value(v, kind_of(t)) + SEP for v, t in zip(key_range.equals, types))
    low = prefix or None
    high = prefix[:-1] + _AFTER_SEP if prefix else None
    if key_range.low is not None:
        value, inclusive = key_range.low
        next_kind = kind_of(types[len(key_range.equals)])
        # Equal values start with E + SEP; larger ones with E + (a character above U+0002).
        low = prefix + encode_value(value, next_kind) + (SEP if inclusive else _AFTER_SEP)
    if key_range.high is not None:
        value, inclusive = key_range.high
        encoded = encode_value(value, kind_of(types[len(key_range.equals)]))
        # E + U+0002 is above every key whose component equals E and below every larger one;
        # E alone is below every key whose component equals E (those continue with SEP).
        high = prefix + encoded + _AFTER_SEP if inclusive else prefix + encoded
    if high == "":
        raise ValueError("empty key range: nothing sorts below the empty string")
    if low is not None and _utf8_size(low) > max_bytes:
        low = _truncate_utf8(low, max_bytes)  # a shorter prefix is a smaller bound: still covers
    if high is not None and _utf8_size(high) > max_bytes:
        # Everything <= high is < successor(any prefix of high); the successor may grow by a byte.
        high = successor(_truncate_utf8(high, max_bytes - 4))
    return low, high


def merge_bounds(bounds: Iterable[tuple[Optional[str], Optional[str]]]
                 ) -> list[tuple[Optional[str], Optional[str]]]:
    """Sorted, pairwise-disjoint inclusive bounds covering the same keys as the given ones, so
    that querying each in turn yields every key once (None = unbounded on that side)."""
    ordered = sorted(bounds, key=lambda b: (b[0] is not None, b[0] or ""))
    merged: list[tuple[Optional[str], Optional[str]]] = []
    for low, high in ordered:
        if merged and _overlaps(merged[-1][1], low):
            last_low, last_high = merged[-1]
            merged[-1] = (last_low, None if high is None or last_high is None else max(high, last_high))
        else:
            merged.append((low, high))
    return merged


def _overlaps(last_high: Optional[str], low: Optional[str]) -> bool:
    return last_high is None or low is None or low <= last_high


# ------------------------------------------------------------------------------------- helpers
def _utf8_size(text: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInputException("Partition values must be valid Unicode (no lone surrogates)") from None


def _truncate_utf8(text: str, max_bytes: int) -> str:
    """The longest prefix of text whose UTF-8 form fits in max_bytes (never splits a character)."""
    return text.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")


_MAX_CHAR = 0x10FFFF


def successor(prefix: str) -> Optional[str]:
    """The smallest string above every string that starts with ``prefix`` (None if there is
    none: the prefix is all U+10FFFF). Skips the surrogate block, which UTF-8 cannot carry."""
    chars = list(prefix)
    while chars:
        code = ord(chars.pop()) + 1
        if code <= _MAX_CHAR:
            if 0xD800 <= code <= 0xDFFF:
                code = 0xE000
            return "".join(chars) + chr(code)
    return None
