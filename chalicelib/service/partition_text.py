"""A stored partition as the JSON text a response carries: spliced from the stored text, not
decoded and encoded again (json_text.JsonFragments). Shared by the listings of ordinary and of
governed tables."""

from __future__ import annotations

from typing import Any

from chalicelib import timestamps
from chalicelib.json_text import with_members
from chalicelib.store.documents import compact_json, document_text, loads


def render_text(names: dict[str, str], doc_bytes: bytes) -> tuple[str, int]:
    """A stored partition as response JSON text (with ``names``: where it belongs) and its
    length; decoded only in the rare case it may hold a timestamp no client can parse, which is
    then left out."""
    text = with_members(timestamps.readable_text(document_text(doc_bytes)), names)
    return text, len(text)


def render_text_without_columns(names: dict[str, str], doc_bytes: bytes) -> tuple[str, int]:
    """As ``render_text``, less the StorageDescriptor's Columns (ExcludeColumnSchema, which
    Spark and Athena-style readers send when they list partitions): the document is decoded and
    encoded again by orjson, a third of the CPU ``json`` took both ways."""
    text = timestamps.readable_text(document_text(doc_bytes))
    doc: Any = loads(text)
    descriptor = doc.get("StorageDescriptor") if isinstance(doc, dict) else None
    if isinstance(descriptor, dict) and "Columns" in descriptor:
        del descriptor["Columns"]
        text = compact_json(doc).decode("utf-8")
    text = with_members(text, names)
    return text, len(text)
