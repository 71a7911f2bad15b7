"""Response bodies that contain JSON already written, spliced in rather than re-encoded.

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
