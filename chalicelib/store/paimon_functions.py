"""Paimon functions in DynamoDB: one item each in the ``paimon`` table, under the database's uid.

Hash key: the Glue database's **uid** (the ``paimon`` table's other items hang off table uids;
both are random UUIDs, so they never meet); range key: ``function SEP name``; ``doc``: the
function's GetFunctionResponse JSON (definition, uuid, audit fields). Keyed by the uid, a
database's functions are unreachable the moment its item is deleted and a database re-created
under the same name starts without them; the database's cleanup job then deletes them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterator

from chalicelib import metrics
from chalicelib.store.catalog import delete_items
from chalicelib.store.dynamo.models import SEP, PaimonItem
from chalicelib.store.dynamo.retry import conditional

_PREFIX = f"function{SEP}"


@dataclass(frozen=True)
class StoredFunction:
    """One function item: its name and GetFunctionResponse JSON (``raw``: the bytes as stored,
    the condition of a replace)."""

    name: str
    data: dict[str, Any]
    raw: bytes


def _key(name: str) -> str:
    return _PREFIX + name


def _encode(data: dict[str, Any]) -> bytes:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _stored(item: PaimonItem) -> StoredFunction:
    raw = bytes(item.doc) if item.doc is not None else b"{}"
    return StoredFunction(item.key[len(_PREFIX):], json.loads(raw), raw)


def create_function(db_uid: str, name: str, data: dict[str, Any]) -> bool:
    """Store a new function; False if one of that name exists (one conditional put)."""
    item = PaimonItem(db_uid, _key(name), doc=_encode(data))
    return conditional(lambda: item.save(condition=PaimonItem.key.does_not_exist()))


def get_function(db_uid: str, name: str) -> StoredFunction | None:
    """One function (one GetItem), or None."""
    metrics.count_read()
    try:
        return _stored(PaimonItem.get(db_uid, _key(name), consistent_read=True))
    except PaimonItem.DoesNotExist:
        return None


def replace_function(db_uid: str, old: StoredFunction, data: dict[str, Any]) -> bool:
    """Replace a function if it is still exactly ``old``; False if it changed or went meanwhile
    (so of two racing alters exactly one lands, and neither overwrites the other unseen)."""
    item = PaimonItem(db_uid, _key(old.name), doc=_encode(data))
    return conditional(lambda: item.save(condition=PaimonItem.doc == old.raw))


def delete_function(db_uid: str, name: str) -> bool:
    """Remove a function; False if there is none."""
    item = PaimonItem(db_uid, _key(name))
    return conditional(lambda: item.delete(condition=PaimonItem.key.exists()))


def query_functions(db_uid: str, prefix: str = "", after: str | None = None,
                    page_size: int = 100) -> Iterator[StoredFunction]:
    """Functions whose names start with ``prefix``, in name order, after ``after`` (a name): one
    Query, read lazily in pages of ``page_size`` items."""
    start = {"table_uid": {"S": db_uid}, "key": {"S": _key(after)}} if after is not None else None
    for item in PaimonItem.query(db_uid, PaimonItem.key.startswith(_key(prefix)), consistent_read=True,
                                 last_evaluated_key=start, page_size=page_size):
        metrics.count_read()
        yield _stored(item)


def purge_database(db_uid: str) -> None:
    """Delete every function of an unlinked database (batched, keys only; within the current
    cleanup budget, see ``catalog.purging``)."""
    delete_items(PaimonItem, PaimonItem.query(db_uid, PaimonItem.key.startswith(_PREFIX),
                                              attributes_to_get=["table_uid", "key"]))
