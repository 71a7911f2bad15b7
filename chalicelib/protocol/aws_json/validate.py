"""Validate a decoded request against its botocore input shape.

botocore's own client-side validator checks only required members, types and minimums; AWS
checks far more on the server (maximum lengths, patterns, enums, list and map sizes). This walker
checks all of them and reports violations the way AWS's front end does, so messages look
familiar (it runs only for a request the quick check, ``quick_check``, did not pass)::

    1 validation error detected: Value 'x...x' at 'databaseInput.name' failed to satisfy
    constraint: Member must have length less than or equal to 255

Members the model does not know are passed through untouched: a newer client may send members
an older model lacks, and Glue stores what it is given. Their nesting is bounded, though
(``MAX_UNKNOWN_DEPTH``): the model bounds the depth of everything else, so nothing the service
stores or echoes can be nested deep enough to exhaust Python's recursion limit later.
"""

from __future__ import annotations

import reprlib
from typing import Any

from botocore.model import Shape

from chalicelib import timestamps
from chalicelib.errors import InvalidInputException, SerializationException
from chalicelib.protocol.aws_json.quick_check import passes_quickly
from chalicelib.protocol.aws_json.shape_rules import INTEGER_RANGES, compiled_pattern, finite

_MAX_ERRORS_REPORTED = 10
MAX_UNKNOWN_DEPTH = 32
_TIMESTAMP_RULE = (f"Member must be a timestamp in epoch seconds from {timestamps.EARLIEST} "
                   f"(0001-01-02) to {timestamps.LATEST} (9999-12-31)")


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
        # AWS's JSON services ignore members their model lacks; dropped here below the top level
        # so that no service stores one inside a DatabaseInput, TableInput... and echoes it back
        # in a shape botocore cannot read (the quick check sends every request holding one to
        # this walk). The top level stays as sent: nothing stores it whole, and a TransactionId
        # is checked on any operation carrying one (test_transaction_id_check).
        if path:
            for name in [name for name in value if name not in shape.members]:
                del value[name]

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
            compiled = compiled_pattern(pattern)
            if compiled is not None and compiled.fullmatch(value) is None:
                self.fail(value, path, f"Member must satisfy regular expression pattern: {pattern}")

    def _check_integer(self, shape: Shape, value: Any, path: str) -> None:
        if type(value) is not int:
            self.fail(value, path, "Member must be an integer")
            return
        low, high = INTEGER_RANGES[shape.type_name]
        if not low <= value <= high:
            self.fail(value, path, f"Member must be an integer from {low} to {high}")
            return
        self._check_range(shape, value, path)

    _check_long = _check_integer

    def _check_double(self, shape: Shape, value: Any, path: str) -> None:
        if not finite(value):
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
