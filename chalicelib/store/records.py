"""The store's typed face: the records its functions take and return (docs/design.md, "Layers").

Frozen values, read from one item each: the layers above the store work with these, never with
the DynamoDB driver's items (``store.dynamo``, private to the store). A record read to be written
back conditionally carries what the store's condition compares (a version, an epoch, the stored
text of a JSON attribute), so the write stays exactly as strict as a write of the item read; the
JSON attributes are decoded by the record's accessors, when asked, not at every read. Slotted
where a request may hold thousands (tables, pending writes, objects): a slotted class costs
about twice as much to define at import.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol

from chalicelib.store.dynamo.fence import Fence

__all__ = ["CleanupJob", "CommitLock", "Database", "Fence", "ObjectState", "PendingWrite", "StoredPartition", "Table",
           "TableVersion", "Transaction"]


@dataclass(frozen=True)
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


@dataclass(frozen=True, slots=True)
class TableVersion:
    """An archived (non-current) version of a table: its number, encoded Table document
    (``catalog.load`` decodes it) and the commit at which it had become current."""

    table_uid: str
    version: int
    doc: bytes
    changed_seq: Optional[int] = None


@dataclass(frozen=True)
class Transaction:
    """A Lake Formation transaction as stored: its catalog (``region SEP account``), id (time
    ordered), kind (READ_AND_WRITE | READ_ONLY), status (ACTIVE | COMMIT_IN_PROGRESS | COMMITTED |
    ABORTED), start and end times, ``last_activity`` (from COMMIT_IN_PROGRESS on: when its commit
    started, its commit lease), ``snapshot_seq`` (commits with seq <= this are visible to it), its
    ``commit_seq``, the uids of the tables (scopes) it wrote, ``applied`` (1 once a COMMITTED one is
    fully applied) and ``handed_off`` (1 once its commit went to a cleanup job before its commit
    point). The store's status changes are conditional on the stored status, not on this copy."""

    catalog: str
    transaction_id: str
    kind: str
    status: str
    start_time: float
    last_activity: float
    snapshot_seq: int
    end_time: Optional[float] = None
    commit_seq: Optional[int] = None
    tables: Optional[list[str]] = None
    applied: Optional[int] = None
    handed_off: Optional[int] = None

    @property
    def seq(self) -> int:
        """The commit sequence number of a transaction past its commit point (ValueError before)."""
        if self.commit_seq is None:
            raise ValueError(f"transaction {self.transaction_id} has no commit sequence number ({self.status})")
        return self.commit_seq


@dataclass(frozen=True, slots=True)
class PendingWrite:
    """A transaction's uncommitted write, as ``store.transactions`` and ``store.pending_tables``
    make and read them: of an object (``op`` add | delete | replace; ``uri``, ``etag``, ``size``,
    partition ``values`` and ``partition_key``), or of a table definition (``op`` table; ``uri``:
    the table name, ``table``: the change, read by ``pending_tables.change_of``; ``doc``: the
    encoded new Table document, None when the table is deleted). ``key``: where it is stored."""

    transaction_id: str
    key: str
    op: str
    uri: str
    etag: Optional[str] = None
    size: Optional[int] = None
    values: Optional[list[str]] = None
    partition_key: Optional[str] = None
    table: Optional[str] = None
    doc: Optional[bytes] = None

    @property
    def object_key(self) -> str:
        """An object write's partition sort key (ValueError for a table definition's)."""
        if self.partition_key is None:
            raise ValueError(f"pending write {self.key} ({self.op}) is of no object")
        return self.partition_key


@dataclass(frozen=True, slots=True)
class ObjectState:
    """The latest committed state of one object of a governed table (``live`` 0: deleted), the
    commit that made it and the key of its current version."""

    table_uid: str
    uri: str
    live: int
    changed_seq: int
    version_key: str = ""
    etag: Optional[str] = None
    size: Optional[int] = None
    values: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CommitLock:
    """A table's commit lock: the transaction committing to it, since when."""

    table_uid: str
    transaction_id: str
    since: Optional[float] = None


@dataclass(frozen=True)
class CleanupJob:
    """A cleanup job as stored (``store.cleanup``): what a deleted database or table left to
    delete, or other background work of its ``kind`` (see ``service.cleanup``). ``job``: its key
    in the queue; ``owner`` / ``lease_until``: who works on it and until when (the store's
    claims, renewals and deletes compare them). The other members are what its kind needs."""

    queue: str
    job: str
    kind: str
    uid: str
    created: float
    lease_until: float
    owner: Optional[str] = None
    catalog: Optional[str] = None
    database: Optional[str] = None
    db_uid: Optional[str] = None
    name: Optional[str] = None
    indexes_json: Optional[str] = None
    doc: Optional[bytes] = None
    drop_files: Optional[bool] = None
    path: Optional[str] = None
    digest: Optional[str] = None
    table_uid: Optional[str] = None
    snapshots: Optional[str] = None

    def member(self, name: str) -> str:
        """A text member its kind always has (``name``, ``path``...; ValueError if it lacks it)."""
        value = getattr(self, name)
        if not isinstance(value, str):
            raise ValueError(f"cleanup job {self.job} ({self.kind}) has no {name}")
        return value

    def index_uids(self) -> list[str]:
        """A table job's: the uids of the deleted table's partition indexes."""
        return [index["uid"] for index in json.loads(self.indexes_json or "[]")]


class StoredPartition(Protocol):
    """A partition as ``store.partitions`` reads it (``get_partition``, ``get_partitions``,
    ``scan_range``). A read-only view, not a dataclass: the listings read a few attributes of
    each of thousands of partitions, and the store hands out its light records (converted when
    an attribute is read) so that no partition costs more than it did. ``key``: its partition
    sort key; ``values``, ``doc`` (encoded Partition document), ``segment`` bucket, ``revision``,
    ``uid`` (its life's identity); ``p_*``: its Paimon statistics."""

    @property
    def table_uid(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def values(self) -> list[str]: ...
    @property
    def doc(self) -> bytes: ...
    @property
    def segment(self) -> int: ...
    @property
    def revision(self) -> int: ...
    @property
    def uid(self) -> Optional[str]: ...
