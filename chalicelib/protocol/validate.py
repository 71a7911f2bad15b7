"""Validate a decoded request against its botocore input shape.

botocore's own client-side validator checks only required members, types and minimums; AWS
checks far more on the server (maximum lengths, patterns, enums, list and map sizes). This walker
checks all of them and reports violations the way AWS's front end does, so messages look
familiar::

    1 validation error detected: Value 'x...x' at 'databaseInput.name' failed to satisfy
    constraint: Member must have length less than or equal to 255

Members the model does not know are passed through untouched: a newer client may send members
an older model lacks, and Glue stores what it is given. Their nesting is bounded, though
(``MAX_UNKNOWN_DEPTH``): the model bounds the depth of everything else, so nothing the service
stores or echoes can be nested deep enough to exhaust Python's recursion limit later.
"""

from __future__ import annotations

import functools
import math
import re
import reprlib
import threading
from typing import Any, Callable

from botocore.model import Shape

from chalicelib import timestamps
from chalicelib.errors import InvalidInputException, SerializationException

# Java's regexes spell "any supplementary character" as a surrogate-pair range, which Python's
# `re` rejects (and Python strings hold such characters as single code points anyway).
_SURROGATE_RANGE = "\\uD800\\uDC00-\\uDBFF\\uDFFF"
_SUPPLEMENTARY_RANGE = "\\U00010000-\\U0010FFFF"
_MAX_ERRORS_REPORTED = 10
MAX_UNKNOWN_DEPTH = 32
# Glue's integers and longs are Java's int and long; a double must survive float().
_INTEGER_RANGES = {"integer": (-2**31, 2**31 - 1), "long": (-2**63, 2**63 - 1)}
_MAX_DOUBLE = 1.7976931348623157e308
_TIMESTAMP_RULE = (f"Member must be a timestamp in epoch seconds from {timestamps.EARLIEST} "
                   f"(0001-01-02) to {timestamps.LATEST} (9999-12-31)")


def _finite(value: Any) -> bool:
    """A JSON number usable as a double (ints compare exactly: no OverflowError on huge ones)."""
    if type(value) is float:
        return math.isfinite(value)
    return type(value) is int and -_MAX_DOUBLE <= value <= _MAX_DOUBLE


def _nested_deeper(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists/objects more than ``limit`` levels (iterative: no recursion)."""
    level = [value]
    for _ in range(limit):
        level = [child for node in level for child in (node.values() if isinstance(node, dict) else node)
                 if isinstance(child, (dict, list))]
        if not level:
            return False
    return True


def _unknown_too_deep(value: dict, known: frozenset[str]) -> str | None:
    """The first member the model does not define whose value nests too deeply, if any."""
    for name, item in value.items():
        if name not in known and isinstance(item, (dict, list)) and _nested_deeper(item, MAX_UNKNOWN_DEPTH):
            return name
    return None


@functools.cache
def _compiled_pattern(pattern: str) -> re.Pattern[str] | None:
    """Compile a model pattern for full matching (AWS matches the whole value); None if the
    pattern uses syntax Python lacks (e.g. ``\\p{L}``), in which case it is not enforced."""
    try:
        return re.compile(pattern.replace(_SURROGATE_RANGE, _SUPPLEMENTARY_RANGE), re.DOTALL)
    except re.error:
        return None


def _camel(name: str) -> str:
    return name[:1].lower() + name[1:]


# A bounded repr: a plain repr() of a 10 MB list would copy all of it only to keep 64 characters.
_short_repr = reprlib.Repr()
_short_repr.maxlevel, _short_repr.maxlist, _short_repr.maxdict = 2, 4, 4
_short_repr.maxstring = _short_repr.maxother = 64


def _show(value: Any) -> str:
    text = value[:65] if isinstance(value, str) else _short_repr.repr(value)
    return text if len(text) <= 64 else text[:61] + "..."


class _EnoughErrors(Exception):
    """Stops the walk once one more error than the message shows has been found."""


class _Walker:
    def __init__(self) -> None:
        self.errors: list[str] = []

    def fail(self, value: Any, path: str, rule: str) -> None:
        if len(self.errors) > _MAX_ERRORS_REPORTED:
            # A 10 MB body can hold a million violations; wording them all cost seconds of CPU
            # and hundreds of MB per request, for a message that shows ten.
            raise _EnoughErrors()
        shown = "null" if value is None else f"'{_show(value)}'"
        self.errors.append(f"Value {shown} at '{path}' failed to satisfy constraint: {rule}")

    def check(self, shape: Shape, value: Any, path: str) -> None:
        kind = shape.type_name
        checker = getattr(self, f"_check_{kind}", None)
        if checker is not None:
            checker(shape, value, path)

    def _check_structure(self, shape: Shape, value: Any, path: str) -> None:
        if shape.metadata.get("document"):
            # A document (IcebergStructField.Type, say) is any JSON value; only its depth is bounded.
            if isinstance(value, (dict, list)) and _nested_deeper(value, MAX_UNKNOWN_DEPTH):
                raise SerializationException(
                    f"Request body is nested too deeply at '{path}': at most {MAX_UNKNOWN_DEPTH} levels of "
                    "JSON are accepted inside a document member")
            return
        if not isinstance(value, dict):
            self.fail(value, path, "Member must be a structure (JSON object)")
            return
        for name in shape.required_members:
            if value.get(name) is None:
                self.fail(None, self._join(path, name), "Member must not be null")
        deep = _unknown_too_deep(value, frozenset(shape.members))
        if deep is not None:
            raise SerializationException(
                f"Request body is nested too deeply at '{self._join(path, deep)}': at most "
                f"{MAX_UNKNOWN_DEPTH} levels of JSON are accepted inside a member the model does not define")
        for name, member in shape.members.items():
            if name in value and value[name] is not None:
                self.check(member, value[name], self._join(path, name))

    def _check_list(self, shape: Shape, value: Any, path: str) -> None:
        if not isinstance(value, list):
            self.fail(value, path, "Member must be a list (JSON array)")
            return
        self._check_size(shape, len(value), value, path)
        for i, item in enumerate(value, start=1):
            if item is None:
                self.fail(None, f"{path}.{i}.member", "Member must not be null")
            else:
                self.check(shape.member, item, f"{path}.{i}.member")

    def _check_map(self, shape: Shape, value: Any, path: str) -> None:
        if not isinstance(value, dict):
            self.fail(value, path, "Member must be a map (JSON object)")
            return
        self._check_size(shape, len(value), value, path)
        for key, item in value.items():
            self.check(shape.key, key, f"{path}.key")
            if item is None:
                self.fail(None, f"{path}.{key}", "Map value must not be null")
            else:
                self.check(shape.value, item, f"{path}.{key}")

    def _check_string(self, shape: Shape, value: Any, path: str) -> None:
        if not isinstance(value, str):
            self.fail(value, path, "Member must be a string")
            return
        self._check_size(shape, len(value), value, path, unit="length")
        enum = shape.enum
        if enum and value not in enum:
            self.fail(value, path, f"Member must satisfy enum value set: [{', '.join(enum)}]")
        pattern = shape.metadata.get("pattern")
        if pattern:
            compiled = _compiled_pattern(pattern)
            if compiled is not None and compiled.fullmatch(value) is None:
                self.fail(value, path, f"Member must satisfy regular expression pattern: {pattern}")

    def _check_integer(self, shape: Shape, value: Any, path: str) -> None:
        if type(value) is not int:
            self.fail(value, path, "Member must be an integer")
            return
        low, high = _INTEGER_RANGES[shape.type_name]
        if not low <= value <= high:
            self.fail(value, path, f"Member must be an integer from {low} to {high}")
            return
        self._check_range(shape, value, path)

    _check_long = _check_integer

    def _check_double(self, shape: Shape, value: Any, path: str) -> None:
        if not _finite(value):
            self.fail(value, path, "Member must be a finite number")
            return
        self._check_range(shape, value, path)

    _check_float = _check_double

    def _check_boolean(self, shape: Shape, value: Any, path: str) -> None:
        if not isinstance(value, bool):
            self.fail(value, path, "Member must be a boolean")

    def _check_timestamp(self, shape: Shape, value: Any, path: str) -> None:
        # The JSON protocols send epoch seconds; a number is the only form botocore produces.
        # Refuse what no client could read back (it would break every listing holding it).
        if not timestamps.readable(value):
            self.fail(value, path, _TIMESTAMP_RULE)

    def _check_blob(self, shape: Shape, value: Any, path: str) -> None:
        if not isinstance(value, str):
            self.fail(value, path, "Member must be a base64-encoded string")

    def _check_size(self, shape: Shape, size: int, value: Any, path: str, unit: str = "length") -> None:
        low, high = shape.metadata.get("min"), shape.metadata.get("max")
        if low is not None and size < low:
            self.fail(value, path, f"Member must have {unit} greater than or equal to {low}")
        if high is not None and size > high:
            self.fail(value, path, f"Member must have {unit} less than or equal to {high}")

    def _check_range(self, shape: Shape, value: float, path: str) -> None:
        low, high = shape.metadata.get("min"), shape.metadata.get("max")
        if low is not None and value < low:
            self.fail(value, path, f"Member must have value greater than or equal to {low}")
        if high is not None and value > high:
            self.fail(value, path, f"Member must have value less than or equal to {high}")

    @staticmethod
    def _join(path: str, name: str) -> str:
        return f"{path}.{_camel(name)}" if path else _camel(name)


Check = Callable[[Any], bool]

# Within one request, a list or map equal to the last one its check passed is not walked again:
# the 100 partitions of a BatchCreatePartition nearly always share their Columns and SerDe
# parameters, and ``==`` compares them in C (a third of the batch's validation was Columns).
# Only for shapes holding nothing but text: 1 == 1.0 == True, so an equal list of numbers or
# booleans could still hold a value of the wrong type. Per thread, and dropped when the request
# is validated (it holds parts of the request).
_recent = threading.local()


def _passed_before(check: Check, value: Any) -> bool:
    passed = getattr(_recent, "passed", None)
    return passed is not None and passed.get(check) == value


def _remember(check: Check, value: Any) -> None:
    passed = getattr(_recent, "passed", None)
    if passed is not None:
        passed[check] = value


def _text_only(shape: Shape, seen: set[str]) -> bool:
    """Whether every value ``shape`` admits is text (strings, and lists, maps and structures of
    them); a recursive shape is not, to keep this finite."""
    kind = shape.type_name
    if kind == "string":
        return True
    if shape.name in seen or shape.metadata.get("document"):
        return False
    seen = seen | {shape.name}
    if kind == "structure":
        return all(_text_only(member, seen) for member in shape.members.values())
    if kind == "list":
        return _text_only(shape.member, seen)
    if kind == "map":
        return _text_only(shape.key, seen) and _text_only(shape.value, seen)
    return False


_compiled: dict[tuple[int, str], Check] = {}
# Checks being built by the thread that holds the lock. They are published to _compiled only
# when the outermost build is done: a recursive shape's check calls a placeholder until then,
# and a concurrent request that found the placeholder would fail with an IndexError (a 500).
_pending: dict[tuple[int, str], Check] = {}
_compile_lock = threading.RLock()


def _bounds_ok(metadata: dict, size: float) -> bool:
    low, high = metadata.get("min"), metadata.get("max")
    return (low is None or size >= low) and (high is None or size <= high)


def _compile(shape: Shape) -> Check:
    """A fast yes/no check of a value against a shape, built once per shape.

    Valid requests (nearly all) pay only for this; the walker above runs just to word the
    errors of an invalid one. A BatchCreatePartition of 100 partitions has ~100k nodes.
    """
    cache_key = (id(shape._shape_resolver), shape.name)
    found = _compiled.get(cache_key)
    if found is not None:
        return found
    with _compile_lock:  # re-entrant: building a shape compiles its members
        found = _compiled.get(cache_key) or _pending.get(cache_key)
        if found is not None:
            return found
        outermost = not _pending
        slot: list[Check] = []
        _pending[cache_key] = lambda value: slot[0](value)  # recursive shapes refer to themselves
        try:
            slot.append(_build(shape))
            _pending[cache_key] = slot[0]
            if outermost:
                _compiled.update(_pending)
        finally:
            if outermost:
                _pending.clear()
        return slot[0]


# orjson (wire._decode_body's fast decoder) reads an integer beyond 64 bits as a float, and
# every such float is at least this large.
_FAST_DECODER_EXACT = 2.0 ** 63


def _build(shape: Shape) -> Check:
    """The check of ``shape``. True means valid, and more: that the value holds nothing a fast
    decoder may have read otherwise than ``json`` (no float of 2**63 or more, where an integer
    beyond 64 bits would be one), so the request may go on with that decoding. Hence False, and
    the walker, for what is not walked here: members the model lacks, and documents holding
    more than text. False never refuses anything by itself: the walker then decides."""
    kind, meta = shape.type_name, shape.metadata
    if kind == "structure" and meta.get("document"):
        # Any JSON value, not walked here: only text and booleans are vouched for (see _build).
        return lambda value: type(value) in (str, bool)
    if kind == "structure":
        required = tuple(shape.required_members)
        checks = {name: _compile(member) for name, member in shape.members.items()}

        def structure(value: Any) -> bool:
            if not isinstance(value, dict):
                return False
            for name in required:
                if value.get(name) is None:
                    return False
            # The members sent, not every member the shape has: a PartitionInput's
            # StorageDescriptor has 14 members in the model and about 5 in a request.
            for name, item in value.items():
                check = checks.get(name)
                if check is None:
                    return False  # a member the model lacks: not walked here (see _build)
                if item is not None and not check(item):
                    return False
            return True
        return structure
    low, high = meta.get("min"), meta.get("max")
    # Inclusive bounds as plain numbers (no lookups per value); math.inf where the model has none.
    lo = low if low is not None else -math.inf
    hi = high if high is not None else math.inf
    if kind == "list":
        item_check = _compile(shape.member)
        remembered = _text_only(shape, set())

        def list_check(value: Any) -> bool:
            if not isinstance(value, list) or not lo <= len(value) <= hi:
                return False
            if remembered and _passed_before(list_check, value):
                return True
            for item in value:
                if item is None or not item_check(item):
                    return False
            if remembered:
                _remember(list_check, value)
            return True
        return list_check
    if kind == "map":
        key_check, value_check = _compile(shape.key), _compile(shape.value)
        remembered = _text_only(shape, set())

        def map_check(value: Any) -> bool:
            if not isinstance(value, dict) or not lo <= len(value) <= hi:
                return False
            if remembered and _passed_before(map_check, value):
                return True
            for k, v in value.items():
                if not key_check(k) or v is None or not value_check(v):
                    return False
            if remembered:
                _remember(map_check, value)
            return True
        return map_check
    if kind == "string":
        return _string_check(shape, lo, hi)
    if kind in ("integer", "long"):
        low, high = _INTEGER_RANGES[kind]
        return lambda value: type(value) is int and low <= value <= high and _bounds_ok(meta, value)
    if kind in ("double", "float"):
        # Not a float of 2**63 or more: it may have been an integer beyond 64 bits (see _build).
        return lambda value: _finite(value) and _bounds_ok(meta, value) and not (
            type(value) is float and abs(value) >= _FAST_DECODER_EXACT)
    if kind == "boolean":
        return lambda value: type(value) is bool
    if kind == "timestamp":
        return timestamps.readable
    if kind == "blob":
        return lambda value: type(value) is str
    return lambda value: True


_MEMO_SIZE = 4096


def _string_check(shape: Shape, lo: float, hi: float) -> Check:
    meta = shape.metadata
    enum = frozenset(shape.enum or ())
    pattern = _compiled_pattern(meta["pattern"]) if meta.get("pattern") else None
    if enum and pattern is None:
        return lambda value: type(value) is str and lo <= len(value) <= hi and value in enum
    if pattern is None:
        if "min" not in meta and "max" not in meta:
            return lambda value: type(value) is str
        return lambda value: type(value) is str and lo <= len(value) <= hi
    # Strings repeat across a request and across requests (column names and types, formats,
    # SerDe classes): a string that matched the pattern once is remembered (a bounded set,
    # emptied when full) instead of matched again. The regex is most of a batch's validation.
    matched: set[str] = set()
    fullmatch = pattern.fullmatch

    def string(value: Any) -> bool:
        if type(value) is not str or not lo <= len(value) <= hi or (enum and value not in enum):
            return False
        if value in matched:
            return True
        if fullmatch(value) is None:
            return False
        if len(matched) >= _MEMO_SIZE:
            matched.clear()
        matched.add(value)
        return True
    return string


def passes_quickly(shape: Shape | None, params: Any) -> bool:
    """Whether ``params`` is valid and holds nothing a fast decoder reads otherwise than
    ``json`` (see ``_build``); False: decode it exactly and call ``validate_input``."""
    if shape is None:
        return params in ({}, None)
    try:
        _recent.passed = {}
        try:
            return _compile(shape)(params)
        finally:
            _recent.passed = None
    except RecursionError:
        return False


def validate_input(shape: Shape | None, params: Any) -> None:
    """Raise InvalidInputException listing every constraint ``params`` violates."""
    if passes_quickly(shape, params):
        return
    if shape is None:
        raise InvalidInputException("This operation takes no input members")
    walker = _Walker()
    try:
        walker.check(shape, params, "")
    except _EnoughErrors:
        pass
    except RecursionError:
        # Only a recursive shape (none of the implemented operations has one) can get here.
        raise SerializationException("Request body is nested too deeply") from None
    if walker.errors:
        count = len(walker.errors)
        shown = "; ".join(walker.errors[:_MAX_ERRORS_REPORTED])
        if count > _MAX_ERRORS_REPORTED:
            raise InvalidInputException(
                f"More than {_MAX_ERRORS_REPORTED} validation errors detected (the first {_MAX_ERRORS_REPORTED}): {shown}")
        noun = "error" if count == 1 else "errors"
        raise InvalidInputException(f"{count} validation {noun} detected: {shown}")
