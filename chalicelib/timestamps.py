"""Epoch-second timestamps a client can read back.

The JSON protocols carry timestamps as epoch seconds and botocore turns them into ``datetime``
objects in the client's local time zone (``botocore.utils.parse_timestamp``), which exist only
for years 1 to 9999: one value outside that range makes the whole response unreadable. The
readable range is kept one day inside those years so that every time zone (UTC-12 to UTC+14)
can represent it.
"""

from __future__ import annotations

import json
import re
from typing import Any

EARLIEST = -62_135_510_400  # 0001-01-02T00:00:00Z
LATEST = 253_402_214_400  # 9999-12-31T00:00:00Z

# Client-supplied timestamps stored in table and partition documents (the others are the
# service's own clock readings).
CLIENT_MEMBERS = ("LastAccessTime", "LastAnalyzedTime")

# In stored JSON text a timestamp outside the readable range has at least 11 integer digits or
# an exponent; readable values that look like this (years before 1653 or after 2286) are rare
# and only cost a decode to confirm.
_CLIENT_MEMBER_START = '"LastA'
_SUSPECT = re.compile(r'"LastA(?:ccess|nalyzed)Time":(?:-?\d{11}|-?[\d.]+[eE])')


def readable(value: Any) -> bool:
    """Whether ``value`` is a number of epoch seconds every client can parse.

    Compares without converting to float, so a 400-digit integer is simply out of range.
    """
    return type(value) in (int, float) and EARLIEST <= value <= LATEST


def drop_unreadable(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` without client timestamps no client could read (stored before they were
    refused on input); the same object when there are none, which is nearly always."""
    bad = [name for name in CLIENT_MEMBERS if name in doc and not readable(doc[name])]
    if not bad:
        return doc
    return {k: v for k, v in doc.items() if k not in bad}


def may_hold_unreadable(text: str) -> bool:
    """Whether a stored document's JSON text may hold an unreadable timestamp (a cheap scan;
    False means certainly not)."""
    # str.find runs at memchr speed; a regex search over the whole text costs ~10x more.
    at = text.find(_CLIENT_MEMBER_START)
    while at >= 0:
        if _SUSPECT.match(text, at):
            return True
        at = text.find(_CLIENT_MEMBER_START, at + len(_CLIENT_MEMBER_START))
    return False


def readable_text(text: str) -> str:
    """A stored document's JSON text with unreadable client timestamps dropped: the text itself
    (not decoded) unless the cheap scan finds a suspect number."""
    if not may_hold_unreadable(text):
        return text
    doc = json.loads(text)
    cleaned = drop_unreadable(doc) if isinstance(doc, dict) else doc
    if cleaned is doc:
        return text
    return json.dumps(cleaned, separators=(",", ":"), ensure_ascii=False)
