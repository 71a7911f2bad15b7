"""PynamoDB models: one model per DynamoDB table. Key schemas are described in docs/design.md.

Children are keyed by their parent's *uid* (a random id minted at creation), never by its name:
once a database or table item is deleted, everything below it is unreachable at once, and a
database or table re-created under the same name starts empty even if a cleanup was cut short.
"""

from __future__ import annotations

import json
from typing import Any

from pynamodb.attributes import (Attribute, BinaryAttribute, BooleanAttribute, ListAttribute, NumberAttribute,
                                 UnicodeAttribute)
from pynamodb.constants import NUMBER
from pynamodb.models import Model

from chalicelib.store.dynamo.config import BaseMeta, instrument, table_name

# Joins key components. Glue names match the "single-line string" pattern, which excludes
# U+0000-U+001F (but tab), so this separator can never occur inside a name.
SEP = "\x01"


class IntAttribute(Attribute[int]):
    """A DynamoDB number that only ever holds an integer (versions, sequence numbers, counts,
    sizes). PynamoDB's NumberAttribute is typed float; timestamps, which hold fractions, stay one.

    Stored exactly as a NumberAttribute; read back as an int: DynamoDB returns an integral
    number in plain digits (``1e3`` is answered ``1000``), which is what NumberAttribute's
    ``json.loads`` would have made an int of too.
    """

    attr_type = NUMBER

    def serialize(self, value: int) -> str:
        """The number as DynamoDB's ``N`` text."""
        return json.dumps(value)

    def deserialize(self, value: str) -> int:
        """The integer of DynamoDB's ``N`` text."""
        return int(value)


class StrListAttribute(ListAttribute[str]):
    """``ListAttribute(of=UnicodeAttribute)`` typed as what it reads, a list of strings
    (PynamoDB types that attribute as a list of UnicodeAttribute)."""

    def __init__(self, *, null: bool | None = None) -> None:
        super().__init__(null=null, of=UnicodeAttribute)  # type: ignore[arg-type]


class DocumentAttribute(BinaryAttribute):
    """A partition's document (store/documents.py's encoding: ``J`` + JSON, or ``Z`` + zlib),
    read back as those bytes whether it was stored as a DynamoDB binary or, as the partition
    write path stores a plain-JSON one since 2026-11-28, as a string (``dynamo_json.document``):
    a string needs no base64 on either side, which was a tenth of an indexed GetPartitions' CPU.
    Items written before keep their binaries; both read the same."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(legacy_encoding=False, **kwargs)

    def get_value(self, value: dict[str, Any]) -> Any:
        """The stored bytes of either form."""
        text = value.get("S")
        if text is not None:
            return text.encode("utf-8")
        return super().get_value(value)


class StoreModel(Model):
    """Every model of the store: its DynamoDB client reads responses with ``fast_parse`` and
    counts its requests (config.instrument)."""

    # PynamoDB offers no public hook on a model's botocore client; this override is the one
    # private PynamoDB name the store relies on (tests/unit/test_store_records.py checks it).
    @classmethod
    def _get_connection(cls):  # type: ignore[no-untyped-def]
        table_connection = super()._get_connection()
        instrument(table_connection.connection.client)
        return table_connection


class DatabaseItem(StoreModel):
    """A database. Hash: ``region SEP catalog id``; range: database name (lowercase)."""

    class Meta(BaseMeta):
        table_name = table_name("databases")

    catalog = UnicodeAttribute(hash_key=True)
    name = UnicodeAttribute(range_key=True)
    uid = UnicodeAttribute()
    doc = BinaryAttribute(legacy_encoding=False)


class TableItem(StoreModel):
    """The current version of a table. Hash: the database uid; range: table name (lowercase)."""

    class Meta(BaseMeta):
        table_name = table_name("tables")

    db_uid = UnicodeAttribute(hash_key=True)
    name = UnicodeAttribute(range_key=True)
    uid = UnicodeAttribute()
    version = IntAttribute()
    doc = BinaryAttribute(legacy_encoding=False)
    # Partition-key types the partition sort keys were encoded with (fixed at creation).
    key_types = StrListAttribute(null=True)
    # Partition index definitions (JSON list), and a counter bumped whenever they change:
    # partition writes check it so none can miss an index created under them.
    indexes = UnicodeAttribute(null=True)
    index_epoch = IntAttribute(default=0)
    # Progress of CREATING indexes' backfills (JSON map by index uid: owner, lease, cursor,
    # errors so far). Kept apart from ``indexes`` so a heartbeat does not bump the epoch.
    backfills = UnicodeAttribute(null=True)
    # Per column (lowercase name): bumped when UpdateTable drops the column, so statistics
    # written before the drop are never shown for a column re-added later (JSON map).
    column_epochs = UnicodeAttribute(null=True)
    # Commit sequence number at which this version became current (every table write is a
    # commit: transactional, or one of its own). None: written before writes were stamped,
    # visible to every snapshot.
    changed_seq = IntAttribute(null=True)


class TableVersionItem(StoreModel):
    """An archived (non-current) table version. Hash: the table uid; range: the version number."""

    class Meta(BaseMeta):
        table_name = table_name("table_versions")

    table_uid = UnicodeAttribute(hash_key=True)
    version = IntAttribute(range_key=True)
    doc = BinaryAttribute(legacy_encoding=False)
    changed_seq = IntAttribute(null=True)  # when this version became current (TableItem)


class PartitionItem(StoreModel):
    """A partition. Hash: the table uid; range: ``partition_keys.partition_sort_key``."""

    class Meta(BaseMeta):
        table_name = table_name("partitions")

    table_uid = UnicodeAttribute(hash_key=True)
    key = UnicodeAttribute(range_key=True)
    values = StrListAttribute()
    doc = DocumentAttribute()
    segment = IntAttribute()
    revision = IntAttribute(default=0)
    # Identity of this partition's life (kept by updates): keys its column statistics, so a
    # partition deleted and re-created never shows statistics of its predecessor.
    uid = UnicodeAttribute(null=True)
    # Paimon partition statistics (store/paimon.py): added to by each commit's deltas, stamped
    # with the table's stats operation that last did (``p_seq``) so a roll-forward adds once.
    p_records = NumberAttribute(null=True)
    p_bytes = NumberAttribute(null=True)
    p_files = NumberAttribute(null=True)
    p_last = NumberAttribute(null=True)
    p_seq = NumberAttribute(null=True)


class IndexEntryItem(StoreModel):
    """A partition-index entry, a full copy of its partition so an indexed read is one item.

    Hash: the index uid; range: ``partition_keys.index_entry_key`` (typed indexed values, then
    the partition's identity).
    """

    class Meta(BaseMeta):
        table_name = table_name("partition_index_entries")

    index_uid = UnicodeAttribute(hash_key=True)
    key = UnicodeAttribute(range_key=True)
    partition_key = UnicodeAttribute()
    values = StrListAttribute()
    doc = DocumentAttribute()
    segment = IntAttribute()


class PartitionDigestItem(StoreModel):
    """A piece of a table's partition digest (store/digests.py): the values and segment bucket
    of partitions, column-packed (``domain.partition_digest``), which unindexed listings
    evaluate before fetching only the matching partitions.

    Hash: the table uid; range: a time-ordered id (``digests.new_key``). ``kind``: ``delta``
    (written in the transaction that created or changed those partitions) or ``base`` (chunk
    ``chunk`` of the ``chunks`` of set ``set_id``, written by a compaction or a rebuild).
    ``overflow``: a delta too large for one item, which holds no rows and sends the next reader
    to rebuild the digest from the partitions themselves.
    """

    class Meta(BaseMeta):
        table_name = table_name("partition_digests")

    table_uid = UnicodeAttribute(hash_key=True)
    key = UnicodeAttribute(range_key=True)
    kind = UnicodeAttribute()
    data = BinaryAttribute(legacy_encoding=False, null=True)
    set_id = UnicodeAttribute(null=True)
    chunk = IntAttribute(null=True)
    chunks = IntAttribute(null=True)
    overflow = IntAttribute(null=True)


class ColumnStatisticsItem(StoreModel):
    """Statistics of one column. Hash: the table uid; range: ``owner SEP column`` where owner
    is empty for the table's own statistics and the partition uid for a partition's. One Query
    (``begins_with owner SEP``) returns every column of a table or a partition."""

    class Meta(BaseMeta):
        table_name = table_name("column_statistics")

    table_uid = UnicodeAttribute(hash_key=True)
    key = UnicodeAttribute(range_key=True)
    doc = BinaryAttribute(legacy_encoding=False)
    column_epoch = IntAttribute(default=0)


class SearchPostingItem(StoreModel):
    """SearchTables' inverted index: one item per (token, table) or (token, database).

    Hash: ``region SEP catalog SEP kind SEP token`` (kind ``t`` = a table's own text, ``d`` = its
    database's text); range: ``database name SEP table name`` (just the database name for
    ``d``). Postings are a superset: every hit is re-checked against the current document.
    A range key that would exceed DynamoDB's 1,024 bytes (long non-Latin names) is replaced by
    ``SEP sha256(target)`` and the target kept in ``long_target`` (see ``store.search``).
    """

    class Meta(BaseMeta):
        table_name = table_name("search_postings")

    term = UnicodeAttribute(hash_key=True)
    target = UnicodeAttribute(range_key=True)
    uid = UnicodeAttribute()  # the database's uid (to fetch the table item without a lookup)
    long_target = UnicodeAttribute(null=True)


class TransactionItem(StoreModel):
    """A Lake Formation transaction. Hash: ``region SEP account``; range: transaction id
    (time-ordered, so ListTransactions pages in start order)."""

    class Meta(BaseMeta):
        table_name = table_name("lf_transactions")

    catalog = UnicodeAttribute(hash_key=True)
    transaction_id = UnicodeAttribute(range_key=True)
    kind = UnicodeAttribute()  # READ_AND_WRITE | READ_ONLY
    status = UnicodeAttribute()  # ACTIVE | COMMIT_IN_PROGRESS | COMMITTED | ABORTED
    start_time = NumberAttribute()
    end_time = NumberAttribute(null=True)
    last_activity = NumberAttribute()  # from COMMIT_IN_PROGRESS on: when the commit started
    snapshot_seq = IntAttribute()  # commits with seq <= this are visible to it
    commit_seq = IntAttribute(null=True)
    tables = StrListAttribute(null=True)  # uids of tables it wrote
    applied = IntAttribute(null=True)  # 1 once a COMMITTED transaction is fully applied
    # 1 once a commit went to a cleanup job before its commit point (its work budget ran out in
    # the conflict check): past its lease it is queued again, not aborted.
    handed_off = IntAttribute(null=True)


class PendingWriteItem(StoreModel):
    """A transaction's uncommitted write (its intent log). Hash: transaction id; range:
    ``table uid SEP object uri`` for an object (ops add | delete | replace), applied to the
    object tables after the commit point; ``meta SEP database uid SEP table name`` for a table
    definition (op ``table``: ``table`` holds what the transaction saw and what it makes,
    ``doc`` the new Table document, absent when the table is deleted), applied to ``tables``."""

    class Meta(BaseMeta):
        table_name = table_name("lf_pending_writes")

    transaction_id = UnicodeAttribute(hash_key=True)
    key = UnicodeAttribute(range_key=True)
    op = UnicodeAttribute()  # add | delete | replace | table
    uri = UnicodeAttribute()  # the object uri, or the table name
    etag = UnicodeAttribute(null=True)
    size = IntAttribute(null=True)
    values = StrListAttribute(null=True)
    partition_key = UnicodeAttribute(null=True)
    table = UnicodeAttribute(null=True)  # JSON, see chalicelib.store.pending_tables
    doc = BinaryAttribute(legacy_encoding=False, null=True)


class ObjectItem(StoreModel):
    """The latest committed state of one object of a governed table (tombstones included).
    Hash: table uid; range: object uri. Used for existence checks and commit conflicts."""

    class Meta(BaseMeta):
        table_name = table_name("lf_objects")

    table_uid = UnicodeAttribute(hash_key=True)
    uri = UnicodeAttribute(range_key=True)
    live = IntAttribute()  # 1 live, 0 deleted
    changed_seq = IntAttribute()
    version_key = UnicodeAttribute()
    etag = UnicodeAttribute(null=True)
    size = IntAttribute(null=True)
    values = StrListAttribute()


class ObjectVersionItem(StoreModel):
    """One life of an object: visible to snapshots ``added_seq <= S < removed_seq``.
    Hash: table uid; range: ``partition sort key SEP added_seq (20 digits) SEP uri``, so a
    partition predicate plus a snapshot is one key range per partition range."""

    class Meta(BaseMeta):
        table_name = table_name("lf_object_versions")

    table_uid = UnicodeAttribute(hash_key=True)
    key = UnicodeAttribute(range_key=True)
    uri = UnicodeAttribute()
    etag = UnicodeAttribute(null=True)
    size = IntAttribute(null=True)
    values = StrListAttribute()
    added_seq = IntAttribute()
    removed_seq = IntAttribute(null=True)


class ManifestPartitionItem(StoreModel):
    """A governed table's partition as its applied manifest holds it now: objects (files) and
    bytes, the commit that last changed it; ``files`` 0 once emptied (kept, so that a reader of an
    older snapshot knows to look back). Hash: table uid; range: partition sort key."""

    class Meta(BaseMeta):
        table_name = table_name("lf_partitions")

    table_uid = UnicodeAttribute(hash_key=True)
    key = UnicodeAttribute(range_key=True)
    values = StrListAttribute()
    files = IntAttribute()
    size = IntAttribute()
    created_seq = IntAttribute()  # the commit since which it holds objects without a gap
    changed_seq = IntAttribute()


class ManifestPartitionVersionItem(StoreModel):
    """One non-empty state of a manifest partition, visible to snapshots
    ``added_seq <= S < removed_seq``. Hash: table uid; range: ``partition sort key SEP
    added_seq (20 digits)``."""

    class Meta(BaseMeta):
        table_name = table_name("lf_partition_versions")

    table_uid = UnicodeAttribute(hash_key=True)
    key = UnicodeAttribute(range_key=True)
    values = StrListAttribute()
    files = IntAttribute()
    size = IntAttribute()
    created_seq = IntAttribute()
    added_seq = IntAttribute()
    removed_seq = IntAttribute(null=True)


class CommitStateItem(StoreModel):
    """Commit bookkeeping. ``lock SEP table uid``: which transaction is committing to a table;
    ``seq SEP region SEP account``: the catalog's last commit sequence number (microseconds)."""

    class Meta(BaseMeta):
        table_name = table_name("lf_commit_state")

    name = UnicodeAttribute(hash_key=True)
    transaction_id = UnicodeAttribute(null=True)
    since = NumberAttribute(null=True)
    seq = IntAttribute(null=True)


class PaimonItem(StoreModel):
    """Paimon-only state of a Paimon table (see docs/design.md, "The Paimon catalog").

    Hash: the Glue table's uid; range: ``schema SEP branch SEP id``, ``head SEP branch``,
    ``snap SEP branch SEP id``, ``tag SEP branch SEP name`` or ``branch SEP name`` (ids 20-digit).
    """

    class Meta(BaseMeta):
        table_name = table_name("paimon")

    table_uid = UnicodeAttribute(hash_key=True)
    key = UnicodeAttribute(range_key=True)
    doc = BinaryAttribute(legacy_encoding=False, null=True)  # schema / snapshot / tag JSON text
    snapshot_id = NumberAttribute(null=True)
    snapshot_uuid = UnicodeAttribute(null=True)
    records = NumberAttribute(null=True)  # table totals after the snapshot (head, snap)
    size = NumberAttribute(null=True)
    files = NumberAttribute(null=True)
    last_file = NumberAttribute(null=True)
    stats_seq = NumberAttribute(null=True)  # head: the last partition-stats operation decided
    pending = BinaryAttribute(legacy_encoding=False, null=True)  # head: its deltas, until applied
    published = NumberAttribute(null=True)  # head: the snapshot id LATEST was last written with
    unsaved = NumberAttribute(null=True)  # head: a committed snapshot whose snap item may be missing
    # head: "seq:count", the first ``count`` deltas of ``pending`` applied (a cursor for whoever
    # goes on; stale, and ignored, once stats_seq moved on)
    stats_done = UnicodeAttribute(null=True)
    # head: "seq:owner", who applies stats operation ``seq`` until ``stats_until`` (epoch
    # seconds): one applier at a time (store.paimon.take_stats_lease)
    stats_lease = UnicodeAttribute(null=True)
    stats_until = NumberAttribute(null=True)
    move_seq = NumberAttribute(null=True)  # snap: the head move (stats_seq) that wrote it
    # branch: when it was dropped (epoch ms); a tombstone until what it left is removed
    dropped = NumberAttribute(null=True)
    stats = BinaryAttribute(legacy_encoding=False, null=True)  # snap: the commit's deltas
    # tag, branch: creation time (ms); of a branch, also which branch of that name a job was for
    created = NumberAttribute(null=True)
    source = UnicodeAttribute(null=True)  # branch: what it was created from (JSON)
    # schema 0 of main: the directory the catalog created for a managed table (the only one a
    # drop may remove), or ``external`` True for a table whose path its creator chose
    directory = UnicodeAttribute(null=True)
    external = BooleanAttribute(null=True)


class CatalogEntryItem(StoreModel):
    """Catalog objects outside the database/table tree: Glue user-defined functions and
    connections (see docs/design.md, "User-defined functions and connections").

    Hash: ``region SEP catalog id SEP kind`` (kind ``udf`` or ``connection``); range: a
    function's ``database name SEP function name`` (both lowercase), a connection's name. So
    GetUserDefinedFunctions across every database is one Query of the catalog's functions, and
    one database's functions a ``begins_with`` Query. ``db_uid``: the database incarnation a
    function belongs to; an item whose database was deleted (and maybe re-created) has another
    uid and is invisible, however late its cleanup runs.
    """

    class Meta(BaseMeta):
        table_name = table_name("catalog_entries")

    scope = UnicodeAttribute(hash_key=True)
    key = UnicodeAttribute(range_key=True)
    db_uid = UnicodeAttribute(null=True)
    doc = BinaryAttribute(legacy_encoding=False)


class CleanupJobItem(StoreModel):
    """The contents of a deleted database or table, still to be deleted (store/cleanup.py).

    Written in the same DynamoDB transaction that unlinks the database or table, deleted when
    everything below it is gone. Hash: the queue name (one queue); range: ``created (ms, 15
    digits) SEP kind SEP uid`` (oldest first). ``owner`` / ``lease_until`` (epoch seconds): who
    works on it and until when; a job whose lease ran out is anyone's to take over.
    """

    class Meta(BaseMeta):
        table_name = table_name("cleanup_jobs")

    queue = UnicodeAttribute(hash_key=True)
    job = UnicodeAttribute(range_key=True)
    kind = UnicodeAttribute()  # table | database
    uid = UnicodeAttribute()  # the deleted table's or database's uid
    catalog = UnicodeAttribute(null=True)  # database: ``region SEP account`` (its postings)
    database = UnicodeAttribute(null=True)  # database: its name
    db_uid = UnicodeAttribute(null=True)  # table: its database's uid
    name = UnicodeAttribute(null=True)  # table: its name; paimon-branch / -orphans: the branch
    indexes = UnicodeAttribute(null=True)  # table: its partition index definitions (JSON)
    doc = BinaryAttribute(legacy_encoding=False, null=True)  # database: its definition (postings)
    # database: also remove its tables' managed directories (a drop through Paimon's protocol,
    # whose drops remove files; Glue's DeleteDatabase never does).
    drop_files = BooleanAttribute(null=True)
    # paimon-directory: the dropped table's directory and the SHA-256 of its schema-0 file (None:
    # not known), so a directory that became another table's is never removed.
    path = UnicodeAttribute(null=True)
    digest = UnicodeAttribute(null=True)
    # paimon-branch: the table of the dropped branch (``name``) whose directory is ``path``;
    # paimon-orphans: the table whose branch ``name`` was rolled back
    table_uid = UnicodeAttribute(null=True)
    # paimon-orphans: "target:old head:its stats_seq:the branch's creation (ms; 0 for main)", the
    # snapshot items the rollback orphaned
    snapshots = UnicodeAttribute(null=True)
    owner = UnicodeAttribute(null=True)
    lease_until = NumberAttribute()
    created = NumberAttribute()


class SettingItem(StoreModel):
    """Service-wide settings shared by every server instance (e.g. the NextToken signing key)."""

    class Meta(BaseMeta):
        table_name = table_name("settings")

    name = UnicodeAttribute(hash_key=True)
    value = BinaryAttribute(legacy_encoding=False)


class CatalogDocumentItem(StoreModel):
    """A catalog-level document (store/catalog_documents.py): a taggable resource's tags, the
    catalog's resource policy, encryption settings and import status. Hash: ``region SEP catalog
    id``; range: ``kind SEP ...`` (``tags SEP database SEP <database uid>``, ``policy SEP catalog
    SEP``, ``settings SEP encryption``...). Tags are keyed by the resource's uid, so a resource
    re-created under the same name never inherits them."""

    class Meta(BaseMeta):
        table_name = table_name("catalog_documents")

    catalog = UnicodeAttribute(hash_key=True)
    key = UnicodeAttribute(range_key=True)
    doc = BinaryAttribute(legacy_encoding=False)


class IdentityItem(StoreModel):
    """The service's own identities (see docs/design.md, "Authentication").

    Hash: ``principal`` or ``key``; range: the principal's ARN or the access key id. So verifying a
    request is one GetItem (``key``, access key id) and listing either kind one Query. A key item
    names its principal's ARN and holds its secret only envelope-encrypted (store/secret_box.py).
    """

    class Meta(BaseMeta):
        table_name = table_name("identities")

    kind = UnicodeAttribute(hash_key=True)
    name = UnicodeAttribute(range_key=True)
    principal = UnicodeAttribute(null=True)  # key: its principal's ARN
    status = UnicodeAttribute(null=True)  # key: Active | Inactive
    secret = BinaryAttribute(legacy_encoding=False, null=True)  # key: the sealed secret access key
    admin = IntAttribute(null=True)  # principal: 1 for an administrator (made by `admin bootstrap`)
    created = NumberAttribute()  # seconds since the epoch


ALL_MODELS: list[type[Model]] = [DatabaseItem, TableItem, TableVersionItem, PartitionItem,
                                 IndexEntryItem, PartitionDigestItem, ColumnStatisticsItem, SearchPostingItem, TransactionItem,
                                 PendingWriteItem, ObjectItem, ObjectVersionItem, ManifestPartitionItem,
                                 ManifestPartitionVersionItem, CommitStateItem, SettingItem, PaimonItem,
                                 CatalogEntryItem, CatalogDocumentItem, CleanupJobItem, IdentityItem]
