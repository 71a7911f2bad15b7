"""Rules of botocore's shapes that the quick check (``quick_check``) and the walker that words
the errors (``validate``) both apply."""

from __future__ import annotations

import functools
import math
import re
from typing import Any

# Java's regexes spell "any supplementary character" as a surrogate-pair range, which Python's
# `re` rejects (and Python strings hold such characters as single code points anyway).
_SURROGATE_RANGE = "\\uD800\\uDC00-\\uDBFF\\uDFFF"
_SUPPLEMENTARY_RANGE = "\\U00010000-\\U0010FFFF"
# Glue's integers and longs are Java's int and long; a double must survive float().
INTEGER_RANGES = {"integer": (-2**31, 2**31 - 1), "long": (-2**63, 2**63 - 1)}
_MAX_DOUBLE = 1.7976931348623157e308


def finite(value: Any) -> bool:
    """A JSON number usable as a double (ints compare exactly: no OverflowError on huge ones)."""
    if type(value) is float:
        return math.isfinite(value)
    return type(value) is int and -_MAX_DOUBLE <= value <= _MAX_DOUBLE


@functools.cache
def compiled_pattern(pattern: str) -> re.Pattern[str] | None:
    """Compile a model pattern for full matching (AWS matches the whole value); None if the
    pattern uses syntax Python lacks (e.g. ``\\p{L}``), in which case it is not enforced."""
    try:
        return re.compile(pattern.replace(_SURROGATE_RANGE, _SUPPLEMENTARY_RANGE), re.DOTALL)
    except re.error:
        return None
