"""Pending table definitions: a transaction's uncommitted CreateTable / UpdateTable / DeleteTable.

They live in ``lf_pending_writes`` beside the object writes, under the *metadata scope* of their
database, ``meta SEP database uid``: the scope is listed in the transaction's ``tables`` like a
governed table's uid, so the commit takes its lock, checks it, applies it and rolls it forward
with the same machinery. One pending item per table name holds the net effect of every call
the transaction made on that name:

- ``base_uid`` / ``base_version``: the table as the transaction first saw it (None: absent);
- ``uid`` / ``version`` and ``doc``: what it becomes (``uid`` None: deleted). A new ``uid``
  differing from ``base_uid`` is a (re)creation, an equal one an update to ``version``;
- ``archive``, ``dropped`` (columns whose statistics go), ``indexes`` / ``key_types`` of a new
  table, and ``database`` (its name, for the search postings).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterator, Optional

from chalicelib import metrics
from chalicelib.store.dynamo.models import SEP, PendingWriteItem
from chalicelib.store.records import PendingWrite, Table

META = "meta"


def meta_scope(db_uid: str) -> str:
    """The commit scope (lock name suffix, pending-key prefix) of a database's table definitions.
    Table uids are hex, so no object scope can start with ``meta``."""
    return f"{META}{SEP}{db_uid}"


def is_meta_scope(scope: str) -> bool:
    """True for a metadata scope, False for a governed table's object scope (its uid)."""
    return scope.startswith(META + SEP)


def db_uid_of(scope: str) -> str:
    """The database uid of a metadata scope."""
    return scope[len(META) + 1:]


@dataclass
class TableChange:
    """The net change a transaction makes to one table name (see the module docstring)."""

    database: str
    base_uid: Optional[str] = None
    base_version: Optional[int] = None
    uid: Optional[str] = None
    version: int = 0
    archive: bool = True
    dropped: list[str] = field(default_factory=list)
    indexes: Optional[str] = None
    key_types: list[str] = field(default_factory=list)

    @property
    def creates(self) -> bool:
        """A new incarnation (created, or deleted and re-created, in the transaction)."""
        return self.uid is not None and self.uid != self.base_uid

    @property
    def removes_base(self) -> bool:
        """The incarnation the transaction saw goes away (deleted or replaced)."""
        return self.base_uid is not None and self.uid != self.base_uid


def as_pending(item: PendingWriteItem) -> PendingWrite:
    """The record of a pending write item (read from its attribute values: what its attribute
    descriptors return, at a tenth of their cost)."""
    get: Callable[[str], Any] = item.attribute_values.get
    return PendingWrite(get("transaction_id"), get("key"), get("op"), get("uri"), get("etag"), get("size"),
                        get("values"), get("partition_key"), get("table"), get("doc"))


def write_item(write: PendingWrite) -> PendingWriteItem:
    """The item of a pending write record."""
    return PendingWriteItem(write.transaction_id, write.key, op=write.op, uri=write.uri, etag=write.etag,
                            size=write.size, values=write.values, partition_key=write.partition_key,
                            table=write.table, doc=write.doc)


def change_of(write: PendingWrite) -> TableChange:
    """The TableChange a pending write of a table definition holds."""
    if write.table is None:
        raise ValueError(f"pending write {write.key} ({write.op}) holds no table change")
    return TableChange(**json.loads(write.table))


def pending_table_write(transaction_id: str, db_uid: str, name: str, change: TableChange,
                 doc: Optional[bytes]) -> PendingWrite:
    """The pending write recording ``change`` (``doc``: the encoded new Table document), not stored."""
    return PendingWrite(transaction_id, f"{meta_scope(db_uid)}{SEP}{name}", "table", name,
                        table=json.dumps(asdict(change), separators=(",", ":")), doc=doc)


def as_table(db_uid: str, write: PendingWrite) -> Optional[Table]:
    """The table a pending change makes, not stored (None: deleted)."""
    change = change_of(write)
    if change.uid is None or write.doc is None:  # a change that keeps a table stores its document
        return None
    return Table(db_uid, write.uri, change.uid, change.version, write.doc, key_types=change.key_types,
                 indexes_json=change.indexes, index_epoch=0)


def get_pending_table(transaction_id: str, db_uid: str, name: str) -> Optional[PendingWrite]:
    """The transaction's pending change of one table name, or None."""
    metrics.count_read()
    try:
        return as_pending(PendingWriteItem.get(transaction_id, f"{meta_scope(db_uid)}{SEP}{name}", consistent_read=True))
    except PendingWriteItem.DoesNotExist:
        return None


def pending_tables(transaction_id: str, db_uid: str) -> Iterator[PendingWrite]:
    """The transaction's pending table changes in one database, in name order."""
    scope = meta_scope(db_uid) + SEP
    for item in PendingWriteItem.query(transaction_id, range_key_condition=PendingWriteItem.key.startswith(scope),
                                       consistent_read=True):
        metrics.count_read()
        yield as_pending(item)
