"""The store's typed face: the records its functions take and return (docs/design.md, "Layers").

Frozen values, read from one item each: the layers above the store work with these, never with
the DynamoDB driver's items (``store.dynamo``, private to the store). A record read to be written
back conditionally carries what the store's condition compares (a version, an epoch, the stored
text of a JSON attribute), so the write stays exactly as strict as a write of the item read; the
JSON attributes are decoded by the record's accessors, when asked, not at every read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

from chalicelib.store.dynamo.fence import Fence

__all__ = ["Database", "Fence", "Table"]


@dataclass(frozen=True, slots=True)
class Database:
    """A database as stored: its catalog (``region SEP catalog id``), lowercase name, the uid of
    this incarnation and its encoded Database document (``catalog.load`` decodes it)."""

    catalog: str
    name: str
    uid: str
    doc: bytes


@dataclass(frozen=True, slots=True)
class Table:
    """The current version of a table as stored: its database's uid, lowercase name, the uid of
    this incarnation, version number and encoded Table document (``catalog.load`` decodes it).

    ``key_types``: the partition-key types its partition sort keys are encoded with (fixed at
    creation). ``indexes_json`` / ``backfills_json`` / ``column_epochs_json``: the stored text of
    its partition index definitions, the progress of CREATING indexes' backfills and the
    per-column drop counters, which the store's conditional writes compare (decoded by
    ``index_definitions``, ``backfill_progress``, ``column_epochs``). ``index_epoch``: bumped
    whenever the definitions change. ``changed_seq``: the commit at which this version became
    current (None: written before writes were stamped)."""

    db_uid: str
    name: str
    uid: str
    version: int
    doc: bytes
    key_types: Optional[list[str]] = None
    indexes_json: Optional[str] = None
    index_epoch: int = 0
    backfills_json: Optional[str] = None
    column_epochs_json: Optional[str] = None
    changed_seq: Optional[int] = None

    def index_definitions(self) -> list[dict[str, Any]]:
        """Its partition index definitions (a fresh list each call)."""
        return json.loads(self.indexes_json or "[]")

    def index_uids(self) -> list[str]:
        """The uids of its partition indexes."""
        return [index["uid"] for index in self.index_definitions()]

    def may_have_creating_index(self) -> bool:
        """False when no index of it is CREATING (a look at the stored text, no decoding)."""
        return '"CREATING"' in (self.indexes_json or "")

    def backfill_progress(self) -> dict[str, dict[str, Any]]:
        """Progress of its CREATING indexes' backfills, by index uid (a fresh dict each call)."""
        return json.loads(self.backfills_json or "{}")

    def column_epochs(self) -> dict[str, int]:
        """Per column (lowercase): how often it was dropped (a fresh dict each call)."""
        return json.loads(self.column_epochs_json or "{}")
