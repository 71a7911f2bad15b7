"""Paimon-only state in DynamoDB: schemas, snapshot heads, snapshots, tags, branches, and the
Paimon statistics on the Glue partition items. The design (what is where, the commit protocol,
costs) is docs/design.md, "The Paimon catalog". The only DynamoDB code for Paimon.

Every write that decides something is conditional and says whether it landed (True/False):
the service turns a lost condition into Paimon's answer (a failed commit, 409, a re-read).
Files are not written here (``store.warehouse``): the service writes them after a decision.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from chalicelib import clock, metrics
from chalicelib.domain.paimon.snapshots import PartitionDelta, Snapshot, Totals
from chalicelib.store.dynamo import dynamo_json as dj
from chalicelib.store.catalog import ExtraKey, delete_items, spend
from chalicelib.store.dynamo.conditions import CONDITION_FAILED, classify
from chalicelib.store.dynamo.config import connection
from chalicelib.store.documents import decode_document, encode_document
from chalicelib.store.dynamo.models import SEP, PaimonItem, PartitionItem, TableItem
from chalicelib.store.demand import Demand
from chalicelib.store.dynamo.ranges import query_key_range
from chalicelib.attempts import attempts
from chalicelib.store.dynamo.retry import conditional, given_up
from chalicelib.store.errors import CommitConflict  # noqa: F401  (callers reach them here too)
from chalicelib.store.records import Table

MAIN = "main"
_TABLE = PaimonItem.Meta.table_name
_PARTITIONS = PartitionItem.Meta.table_name
_TABLES = TableItem.Meta.table_name


# ------------------------------------------------------------------------------- keys
def _id(number: int) -> str:
    return f"{number:020d}"


def schema_key(schema_id: int, branch: str = MAIN) -> str:
    """Range key of a schema item."""
    return f"schema{SEP}{branch}{SEP}{_id(schema_id)}"


def head_key(branch: str = MAIN) -> str:
    """Range key of a branch's head."""
    return f"head{SEP}{branch}"


def snap_key(snapshot_id: int, branch: str = MAIN) -> str:
    """Range key of a snapshot item."""
    return f"snap{SEP}{branch}{SEP}{_id(snapshot_id)}"


def tag_key(name: str, branch: str = MAIN) -> str:
    """Range key of a tag item."""
    return f"tag{SEP}{branch}{SEP}{name}"


def branch_key(name: str) -> str:
    """Range key of a branch item."""
    return f"branch{SEP}{name}"


def _text(item: PaimonItem) -> str:
    return bytes(item.doc).decode("utf-8") if item.doc is not None else ""


def _get(table_uid: str, key: str) -> PaimonItem | None:
    metrics.count_read()
    try:
        return PaimonItem.get(table_uid, key, consistent_read=True)
    except PaimonItem.DoesNotExist:
        return None


def _now_ms() -> int:
    return int(time.time() * 1000)


# ------------------------------------------------------------------------------ schemas
def create_table_state(table_uid: str, schema_text: str, directory: str | None = None,
                       branch: str = MAIN) -> bool:
    """A new table's schema 0 and empty head, in one transaction; False if either exists
    (the uid is fresh, so only a retried request meets that). ``directory``: the directory the
    catalog created for a managed table, kept with schema 0 as the proof of what a drop may
    remove; None for an external table (marked so: its drop removes nothing)."""
    absent = {"ConditionExpression": "attribute_not_exists(#k)", "ExpressionAttributeNames": {"#k": "key"}}
    owner = {"directory": dj.s(directory)} if directory is not None else {"external": {"BOOL": True}}
    actions = [
        {"Put": {"TableName": _TABLE, "Item": {"table_uid": dj.s(table_uid), "key": dj.s(schema_key(0, branch)),
                                               "doc": dj.b(schema_text.encode("utf-8")), **owner}, **absent}},
        {"Put": {"TableName": _TABLE, "Item": {"table_uid": dj.s(table_uid), "key": dj.s(head_key(branch)),
                                               "stats_seq": dj.n(0), "records": dj.n(0), "size": dj.n(0),
                                               "files": dj.n(0), "last_file": dj.n(0)}, **absent}},
    ]
    return _transact(actions)


def append_schema(table_uid: str, schema_id: int, schema_text: str, branch: str = MAIN) -> bool:
    """Store schema ``schema_id`` (the latest read + 1). False: another alter created it first."""
    item = PaimonItem(table_uid, schema_key(schema_id, branch), doc=schema_text.encode("utf-8"))
    return conditional(lambda: item.save(condition=PaimonItem.key.does_not_exist()))


def schema_json(text: str) -> dict[str, Any]:
    """A stored TableSchema JSON text (``latest_schema``, ``list_schemas``) decoded."""
    return json.loads(text)


def latest_schema(table_uid: str, branch: str = MAIN) -> tuple[int, str] | None:
    """(id, TableSchema JSON text) of the newest schema: one Query, newest first, one item."""
    prefix = f"schema{SEP}{branch}{SEP}"
    for item in PaimonItem.query(table_uid, PaimonItem.key.startswith(prefix), scan_index_forward=False,
                                 limit=1, consistent_read=True):
        metrics.count_read()
        return int(item.key[len(prefix):]), _text(item)
    return None


def schema_read(table_uid: str, schema_id: int, branch: str = MAIN) -> ExtraKey:
    """A schema item's key, to read it along with the database and table (``catalog.get_path``)."""
    return ExtraKey(_TABLE, {"table_uid": dj.s(table_uid), "key": dj.s(schema_key(schema_id, branch))})


def schema_text_from(raw: dict[str, Any] | None) -> str | None:
    """The TableSchema JSON text of the item a ``schema_read`` key answered (None: no such item)."""
    return None if raw is None else _text(PaimonItem.from_raw_data(raw))


@dataclass(frozen=True)
class FirstSchema:
    """Schema 0 of a table's main branch: its text, and what the catalog recorded at creation
    about the table's directory (``directory`` it created, or ``external``; neither for tables
    created before 2026-12-01)."""

    text: str
    directory: str | None
    external: bool


def first_schema(table_uid: str) -> FirstSchema | None:
    """Schema 0 of main with its ownership record, or None (no Paimon state)."""
    item = _get(table_uid, schema_key(0, MAIN))
    if item is None:
        return None
    return FirstSchema(_text(item), item.directory, bool(item.external))


def get_schema(table_uid: str, schema_id: int, branch: str = MAIN) -> str | None:
    """A schema's JSON text, or None."""
    item = _get(table_uid, schema_key(schema_id, branch))
    return _text(item) if item else None


def list_schemas(table_uid: str, branch: str = MAIN) -> list[tuple[int, str]]:
    """Every schema of a branch, oldest first (the whole history)."""
    prefix = f"schema{SEP}{branch}{SEP}"
    return [(int(i.key[len(prefix):]), _text(i))
            for i in _counted(PaimonItem.query(table_uid, PaimonItem.key.startswith(prefix), consistent_read=True))]


# ----------------------------------------------------------------------------- snapshots
@dataclass(frozen=True)
class Head:
    """A branch's head as read: the latest snapshot (None before the first commit), the table
    totals after it, the stats operation last decided and its deltas if not yet applied."""

    branch: str
    snapshot_id: int | None
    snapshot_uuid: str | None
    totals: Totals
    stats_seq: int
    pending: list[PartitionDelta] | None
    published: int | None
    # The latest snapshot's JSON, kept on the head by every head move that knows it (commit,
    # rollback; fast-forward removes it), so that reading the latest snapshot (pypaimon asks
    # several times per write and read) is one GetItem, not two. Absent: read the snap item.
    latest_text: str | None = None
    # A commit's snapshot whose snap item may not be written yet (the commit decides with one
    # UpdateItem of the head, then saves the item): whoever settles the head saves it.
    unsaved: int | None = None
    # How many of ``pending``'s deltas, in order, are applied (``mark_stats_done``): whoever goes
    # on starts there instead of probing what is done again.
    stats_done: int = 0
    # When the lease of whoever applies ``pending`` runs out (epoch seconds; see
    # take_stats_lease), None when no one holds it.
    stats_lease_until: float | None = None

    def latest_snapshot(self) -> dict[str, Any] | None:
        """``latest_text`` decoded (None when the head keeps no copy)."""
        return None if self.latest_text is None else json.loads(self.latest_text)

    def latest_id(self) -> Any:
        """The ``id`` of the snapshot ``latest_text`` holds, None when it holds none (or no JSON
        object): whether that copy is the head's snapshot is for the caller to compare."""
        if self.latest_text is None:
            return None
        try:
            return json.loads(self.latest_text).get("id")
        except (ValueError, AttributeError):
            return None


@dataclass(frozen=True)
class StoredSnapshot:
    """A snapshot item: the JSON text as the client sent it, its uuid, totals and deltas."""

    snapshot_id: int
    uuid: str | None
    text: str
    totals: Totals
    deltas: list[PartitionDelta]

    def snapshot(self) -> dict[str, Any]:
        """The snapshot's JSON decoded (a fresh dict each call)."""
        return json.loads(self.text)


# A stats operation's deltas ride in one item (the head's ``pending``, a snap item's ``stats``),
# which holds 380 KB compressed (documents.MAX_DOCUMENT_BYTES). Stored by column when every
# spec has the same keys (a commit's always do): ~45% smaller compressed than a list of
# PartitionStatistics objects, so one commit may name ~48,000 partitions of three keys instead
# of ~27,000 (a larger one is refused with InvalidInputException naming the limit). Items
# written as lists before stay readable.
# Each stored column and the PartitionDelta field it holds, in the order of its fields after ``spec``.
_COLUMNS = (("recordCount", "record_count"), ("fileSizeInBytes", "file_size_in_bytes"), ("fileCount", "file_count"),
            ("lastFileCreationTime", "last_file_creation_time"), ("totalBuckets", "total_buckets"))


# The decoded ``pending`` of the last few large stats operations, by their stored bytes. While a
# large commit's statistics are applied, every call of the table reads the head: decoding tens
# of thousands of deltas each time took longer than the rest of such a call. Shared: not to be
# changed by those who read it (PartitionDelta is frozen).
_DECODED_MEMO_MIN = 500  # deltas; fewer decode quickly
_DECODED_MEMO_SIZE = 4
_decoded: dict[bytes, list[PartitionDelta]] = {}


def _pending_deltas(data: Any) -> list[PartitionDelta]:
    raw = bytes(data)
    found = _decoded.get(raw)
    if found is None:
        found = _deltas(raw)
        if len(found) >= _DECODED_MEMO_MIN:
            if len(_decoded) >= _DECODED_MEMO_SIZE:
                _decoded.clear()
            _decoded[raw] = found
    return found


def _deltas(data: Any) -> list[PartitionDelta]:
    if data is None:
        return []
    stored = decode_document(bytes(data))
    if isinstance(stored, dict):  # by column (_encode_deltas)
        keys = stored["keys"]
        return [PartitionDelta(dict(zip(keys, values)), *counts)
                for values, *counts in zip(stored["values"], *(stored[name] for name, _ in _COLUMNS))]
    return [PartitionDelta(d["spec"], d["recordCount"], d["fileSizeInBytes"], d["fileCount"],
                           d["lastFileCreationTime"], d.get("totalBuckets", 0))
            for d in stored]


def _encode_deltas(deltas: Sequence[PartitionDelta]) -> bytes:
    keys = sorted(deltas[0].spec) if deltas else []
    if not deltas or any(d.spec.keys() != deltas[0].spec.keys() for d in deltas):
        return encode_document([d.to_json() for d in deltas], "commit statistics")
    columns: dict[str, Any] = {"keys": keys, "values": [[d.spec[k] for k in keys] for d in deltas]}
    columns.update({name: [getattr(d, field) for d in deltas] for name, field in _COLUMNS})
    return encode_document(columns, "commit statistics")


def _totals(item: Any) -> Totals:
    return Totals(int(item.records or 0), int(item.size or 0), int(item.files or 0), int(item.last_file or 0))


def get_head(table_uid: str, branch: str = MAIN) -> Head | None:
    """A branch's head (one GetItem), or None when the table has no Paimon state (or branch)."""
    item = _get(table_uid, head_key(branch))
    return None if item is None else _head_of(item)


def head_read(table_uid: str, branch: str = MAIN) -> ExtraKey:
    """The head's key, to read it along with its database and table (``catalog.get_path``)."""
    return ExtraKey(_TABLE, {"table_uid": dj.s(table_uid), "key": dj.s(head_key(branch))})


def head_from(raw: dict[str, Any] | None) -> Head | None:
    """The head a ``head_read`` key answered (None: no Paimon state)."""
    return None if raw is None else _head_of(PaimonItem.from_raw_data(raw))


def _head_of(item: PaimonItem) -> Head:
    branch = item.key.split(SEP, 1)[1]  # head_key: "head" SEP branch
    return Head(branch, None if item.snapshot_id is None else int(item.snapshot_id), item.snapshot_uuid,
                _totals(item), int(item.stats_seq or 0),
                _pending_deltas(item.pending) if item.pending is not None else None,
                None if item.published is None else int(item.published),
                item.doc.decode("utf-8") if item.doc is not None else None,
                None if item.unsaved is None else int(item.unsaved), _stats_done(item), _lease_until(item))


def _stats_done(item: PaimonItem) -> int:
    seq, _, count = (item.stats_done or "").partition(":")
    return int(count) if seq and int(seq) == int(item.stats_seq or 0) else 0


def _lease_until(item: PaimonItem) -> float | None:
    if item.stats_until is None or item.pending is None \
            or not (item.stats_lease or "").startswith(f"{int(item.stats_seq or 0)}:"):
        return None
    return float(item.stats_until)


def commit_snapshot(base: Head, table_uid: str, snapshot: Snapshot, deltas: Sequence[PartitionDelta]) -> bool:
    """Make ``snapshot`` the branch's latest if the head is still ``base``: ONE conditional
    UpdateItem of the head, which keeps the snapshot's JSON (``doc``), its deltas (``pending``)
    and marks it ``unsaved``. True: this commit won (the caller then saves the snap item,
    applies ``pending``, writes the files and finishes); False: another commit (or a rollback)
    moved the head first, nothing written. The caller has checked ``snapshot.id ==
    (base.snapshot_id or 0) + 1`` and settled the head (no ``pending``, nothing ``unsaved``).

    No check of the Glue table item rides along (that took a transaction, about 4x the time of
    the update on DynamoDB Local): the head is keyed by the table's uid, so a commit landing on
    a table dropped meanwhile changes a head nobody reaches again and is purged with it."""
    totals = base.totals.plus(deltas)
    names = {"#u": "snapshot_uuid", "#i": "snapshot_id", "#p": "pending", "#un": "unsaved"}
    sets, removes, values = _head_move(snapshot.id, snapshot.uuid, totals, base.stats_seq + 1, deltas)
    values[":doc"] = dj.b(snapshot.text().encode("utf-8"))  # see Head.latest_text
    sets += ", doc = :doc, #un = :id"
    if base.snapshot_id is None:
        condition = "attribute_exists(stats_seq) AND attribute_not_exists(#i) AND attribute_not_exists(#p)"
    else:
        values[":base"] = dj.n(base.snapshot_id)
        condition = "#i = :base AND attribute_not_exists(#p)"
        if base.snapshot_uuid is not None:
            values[":baseuuid"] = dj.s(base.snapshot_uuid)
            condition += " AND #u = :baseuuid"
        else:
            condition += " AND attribute_not_exists(#u)"
    values[":sq"] = dj.n(base.stats_seq)
    condition += " AND stats_seq = :sq AND attribute_not_exists(#un)"
    key = {"table_uid": dj.s(table_uid), "key": dj.s(head_key(base.branch))}
    return conditional(lambda: dj.update(_TABLE, key, _update_expression(sets, removes), condition, names, values))


def save_snapshot(table_uid: str, head: Head, text: str) -> None:
    """Write the snap item of the commit ``head`` is at (its JSON ``text``, the head's totals
    and ``pending`` deltas), unless a later head move already wrote that snapshot id: the
    item carries the move's ``stats_seq`` and a stale writer's is lower. Idempotent."""
    assert head.snapshot_id is not None
    item = _snap_item(table_uid, head.branch, head.snapshot_id, head.snapshot_uuid, text, head.totals,
                      head.pending or [], head.stats_seq)
    condition = "attribute_not_exists(#k) OR attribute_not_exists(move_seq) OR move_seq <= :seq"
    conditional(lambda: dj.put_item(_TABLE, item, condition, {"#k": "key"}, {":seq": dj.n(head.stats_seq)}))


def _head_move(snapshot_id: int, snapshot_uuid: str | None, totals: Totals, seq: int,
               deltas: Sequence[PartitionDelta]) -> tuple[str, list[str], dict[str, Any]]:
    """SET clauses, REMOVE names and values that move a head to a snapshot (commit and
    fast-forward): its id and uuid, the table totals after it, the next stats operation and
    its deltas as ``pending``. Names used: #i, #u, #p."""
    values: dict[str, Any] = {":id": dj.n(snapshot_id), ":r": dj.n(totals.record_count),
                              ":s": dj.n(totals.file_size_in_bytes), ":f": dj.n(totals.file_count),
                              ":l": dj.n(totals.last_file_creation_time), ":q": dj.n(seq)}
    sets = "#i = :id, records = :r, size = :s, files = :f, last_file = :l, stats_seq = :q"
    removes: list[str] = []
    if snapshot_uuid is not None:
        values[":uuid"] = dj.s(snapshot_uuid)
        sets += ", #u = :uuid"
    else:
        removes.append("#u")
    if deltas:
        values[":pend"] = dj.b(_encode_deltas(deltas))
        sets += ", #p = :pend"
    return sets, removes, values


def _update_expression(sets: str, removes: Sequence[str]) -> str:
    return "SET " + sets + (" REMOVE " + ", ".join(removes) if removes else "")


def _snap_item(table_uid: str, branch: str, snapshot_id: int, snapshot_uuid: str | None, text: str,
               totals: Totals, deltas: Sequence[PartitionDelta], move_seq: int) -> dict[str, Any]:
    """A snapshot item in wire form: the JSON as the client sent it, the totals after it and
    the commit's deltas (what a rollback undoes)."""
    item: dict[str, Any] = {"table_uid": dj.s(table_uid), "key": dj.s(snap_key(snapshot_id, branch)),
                            "doc": dj.b(text.encode("utf-8")), "snapshot_id": dj.n(snapshot_id),
                            "records": dj.n(totals.record_count), "size": dj.n(totals.file_size_in_bytes),
                            "files": dj.n(totals.file_count), "last_file": dj.n(totals.last_file_creation_time),
                            "move_seq": dj.n(move_seq)}
    if snapshot_uuid is not None:
        item["snapshot_uuid"] = dj.s(snapshot_uuid)
    if deltas:
        item["stats"] = dj.b(_encode_deltas(deltas))
    return item


def _table_check(table: Table) -> dict[str, Any]:
    """A transaction's check that the Glue table still has this uid (not dropped or replaced)."""
    return dj.check(_TABLES, {"db_uid": dj.s(table.db_uid), "name": dj.s(table.name)}, "#uid = :tuid",
                    {"#uid": "uid"}, {":tuid": dj.s(table.uid)})


def get_snapshot(table_uid: str, snapshot_id: int, branch: str = MAIN) -> StoredSnapshot | None:
    """One snapshot item, or None. (A snapshot above the head, left by a rollback, is the
    caller's to ignore: compare with the head.)"""
    item = _get(table_uid, snap_key(snapshot_id, branch))
    return _stored(item) if item else None


def _stored(item: Any) -> StoredSnapshot:
    return StoredSnapshot(int(item.snapshot_id), item.snapshot_uuid, _text(item), _totals(item), _deltas(item.stats))


def snapshots_between(table_uid: str, low: int, high: int, branch: str = MAIN,
                      limit: int | None = None) -> list[StoredSnapshot]:
    """Snapshot items with low < id <= high, oldest first (one Query; at most ``limit``)."""
    if high <= low:
        return []
    query = PaimonItem.query(table_uid, PaimonItem.key.between(snap_key(low + 1, branch), snap_key(high, branch)),
                             consistent_read=True, limit=limit)
    return [_stored(item) for item in _counted(query)]


def finish(table_uid: str, snapshot_id: int, seq: int, branch: str = MAIN, stats_applied: bool = True) -> bool:
    """Record that head move ``seq`` to ``snapshot_id`` is complete: its snap item saved
    (``unsaved`` removed), its statistics applied (``pending`` removed; kept when not
    ``stats_applied``, for whoever settles the head next to go on with) and LATEST and the files
    up to it written (``published``), in one UpdateItem, if the head is still that move. False:
    the head moved meanwhile (a later move finishes itself; an earlier mover must not clear a
    later move's ``pending``)."""
    item = PaimonItem(table_uid, head_key(branch))
    actions: list[Any] = [PaimonItem.published.set(snapshot_id), PaimonItem.unsaved.remove()]
    if stats_applied:
        actions += [PaimonItem.pending.remove(), *_lease_removal()]
    return conditional(lambda: item.update(
        actions=actions, condition=(PaimonItem.snapshot_id == snapshot_id) & (PaimonItem.stats_seq == seq)))


def holds_head(table_uid: str, snapshot_id: int, seq: int, branch: str = MAIN) -> bool:
    """Whether the branch's head is still head move ``seq`` to ``snapshot_id`` (one consistent
    GetItem of two attributes): only that move's publisher may write LATEST (see the service's
    ``_write_latest``)."""
    metrics.count_read()
    try:
        item = PaimonItem.get(table_uid, head_key(branch), consistent_read=True,
                              attributes_to_get=["snapshot_id", "stats_seq"])
    except PaimonItem.DoesNotExist:
        return False
    return item.snapshot_id is not None and int(item.snapshot_id) == snapshot_id and int(item.stats_seq or 0) == seq


def rollback(table_uid: str, head: Head, target: StoredSnapshot,
             undone: Sequence[PartitionDelta]) -> bool:
    """Move the head back to ``target`` if it is still ``head``; ``undone`` (the negated sum of
    the rolled-back snapshots' deltas, ``snapshots_between``) becomes the pending statistics
    operation. The caller has rolled ``head.pending`` forward first. False: the head moved."""
    item = PaimonItem(table_uid, head_key(head.branch))
    actions: list[Any] = [PaimonItem.snapshot_id.set(target.snapshot_id),
                          PaimonItem.records.set(target.totals.record_count),
                          PaimonItem.size.set(target.totals.file_size_in_bytes),
                          PaimonItem.files.set(target.totals.file_count),
                          PaimonItem.last_file.set(target.totals.last_file_creation_time),
                          PaimonItem.stats_seq.set(head.stats_seq + 1),
                          PaimonItem.doc.set(target.text.encode("utf-8"))]
    actions.append(PaimonItem.snapshot_uuid.set(target.uuid) if target.uuid is not None
                   else PaimonItem.snapshot_uuid.remove())
    if undone:
        actions.append(PaimonItem.pending.set(_encode_deltas(undone)))
    condition = (PaimonItem.snapshot_id == head.snapshot_id) & (PaimonItem.stats_seq == head.stats_seq) \
        & PaimonItem.pending.does_not_exist()
    return conditional(lambda: item.update(actions=actions, condition=condition))


def delete_rolled_back(table_uid: str, snapshot_id: int, upto: int, seq: int, branch: str = MAIN) -> None:
    """Remove the snapshot items a rollback to ``snapshot_id`` orphaned (snapshot_id < id <= upto),
    within the current purge budget (``catalog.purging``; BudgetSpent: call again, what is gone
    stays gone). Each delete is conditional on the item being written by a head move up to
    ``seq`` (the rolled-back head's): a commit after the rollback writes those ids again, with a
    later ``move_seq``, and its items stay. Until removed, an orphan is harmless: every reader
    compares snapshot ids with the head, and a commit of that id overwrites it."""
    found = PaimonItem.query(table_uid, PaimonItem.key.between(snap_key(snapshot_id + 1, branch), snap_key(upto, branch)),
                             attributes_to_get=["table_uid", "key", "move_seq"], consistent_read=True, page_size=100)
    orphaned = "attribute_not_exists(move_seq) OR move_seq <= :seq"
    chunk: list[dict[str, Any]] = []
    for item in _counted(found):
        if item.move_seq is None or item.move_seq <= seq:
            chunk.append(dj.delete(_TABLE, {"table_uid": dj.s(table_uid), "key": dj.s(item.key)}, orphaned, None,
                                   {":seq": dj.n(seq)}))
        if len(chunk) == _ORPHANS_AT_ONCE:
            _delete_orphans(chunk)
            chunk = []
    if chunk:
        _delete_orphans(chunk)


# Conditional deletes can't ride in a BatchWriteItem: up to this many go in one transaction
# (DynamoDB's limit): one round trip instead of a hundred (on DynamoDB Local about twice as many
# deleted a second as with one DeleteItem each).
_ORPHANS_AT_ONCE = 100


def _delete_orphans(deletes: list[dict[str, Any]]) -> None:
    spend(len(deletes))
    if not _transact(deletes):  # a commit reused one of the ids meanwhile: one at a time
        for delete in deletes:
            _transact([delete])


# ------------------------------------------------------------------ partition statistics
@dataclass(frozen=True)
class StatsResult:
    """What applying a stats operation found: partitions that do not exist (create them, then
    apply again), and partitions left with no files (delete them)."""

    missing: list[str]
    emptied: list[str]


# Partition updates of one stats operation are independent items: up to this many in flight
# at once, so a commit touching many partitions costs a few round trips, not one per partition.
_STATS_WORKERS = 8
# A few deltas (the usual commit) are applied on one pool of the process, its threads started
# once (a pool per commit started up to 8 threads on every commit), with room for a few such
# commits at once; more deltas get a pool of their own as before, so a large commit's hundreds
# of updates never queue ahead of small ones. Nothing running on it waits on it in turn.
_SMALL_POOL = ThreadPoolExecutor(max_workers=2 * _STATS_WORKERS, thread_name_prefix="paimon-stats")
# At most this many deltas (one wave of updates) are applied without the probe: each update then
# says what it met (ReturnValuesOnConditionCheckFailure), so a commit of a few partitions, the
# usual one, costs one round trip for its statistics instead of two. Above it the probe's
# BatchGetItems (100 keys each) are cheaper than a failed update per new partition.
_UNPROBED_MAX = _STATS_WORKERS


def apply_partition_deltas(table_uid: str, seq: int, deltas: Sequence[tuple[str, PartitionDelta]]) -> StatsResult:
    """Add each (partition sort key, delta) to its partition item once: an UpdateItem
    conditional on the partition existing and ``p_seq`` < ``seq``, which stamps ``p_seq``.
    Idempotent: a partition already stamped with ``seq`` is skipped (only its file count read).

    A few deltas (``_UNPROBED_MAX``): the updates go out at once, each returning the item it
    met when its condition fails (``_apply_one``), so no probe is needed. More: what
    each partition holds is read first (``_probe``: BatchGetItems of 100 keys, three small
    attributes each), so a partition that does not exist costs no failed update (the caller
    creates it with its statistics: ``stats_attributes``), one stamped already costs nothing
    more, and the update fits what the item has (its ``p_last``). A commit adding 1,000 new
    partitions made 3 requests per partition this way before (two failing updates and a read).
    The probes and the updates run concurrently (``_STATS_WORKERS``)."""
    if not deltas:
        return StatsResult([], [])
    files_of: dict[str, int] = {}
    to_update: list[tuple[str, PartitionDelta, bool]] = []

    def update(pool: ThreadPoolExecutor) -> list[tuple[int | None, int]]:
        return list(pool.map(lambda job: _apply_one(table_uid, job[0], seq, job[1], job[2]), to_update))

    if len(deltas) <= _UNPROBED_MAX:
        to_update = [(key, delta, True) for key, delta in deltas]
        outcomes = update(_SMALL_POOL)
    else:
        keys = [key for key, _ in deltas]
        chunks = [keys[start:start + _PROBE_KEYS] for start in range(0, len(keys), _PROBE_KEYS)]
        with ThreadPoolExecutor(max_workers=_STATS_WORKERS) as pool:
            probed: dict[str, dict[str, Any]] = {}
            for found in pool.map(lambda chunk: _probe(table_uid, chunk), chunks):
                probed.update(found)
            metrics.count_read(len(keys))
            for key, delta in deltas:
                item = probed.get(key)
                if item is None:
                    continue
                stamped = _number(item.get("p_seq"))
                if stamped is not None and stamped >= seq:
                    files_of[key] = _number(item.get("p_files")) or 0
                else:
                    last = _number(item.get("p_last"))
                    to_update.append((key, delta, last is None or last < delta.last_file_creation_time))
            outcomes = update(pool)
    for (key, _delta, _later), (files, reads) in zip(to_update, outcomes):
        # Counted here: the request's counter is thread-local, and workers are other threads.
        metrics.count_read(reads)
        if files is not None:
            files_of[key] = files
    missing = [key for key, _ in deltas if key not in files_of]
    emptied = [key for key, _ in deltas if files_of.get(key, 1) <= 0]
    return StatsResult(missing, emptied)


_PROBE_KEYS = 100  # BatchGetItem's most keys


def _number(value: Any) -> int | None:
    return None if value is None else int(value["N"])


def _probe(table_uid: str, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The existing partitions among ``keys``: their ``p_seq``, ``p_last`` and ``p_files``
    (wire form; absent where never counted), by sort key."""
    wanted = {_PARTITIONS: [{"table_uid": dj.s(table_uid), "key": dj.s(key)} for key in keys]}
    found = dj.batch_get(wanted, attributes=("key", "p_seq", "p_last", "p_files"))
    return {item["key"]["S"]: item for item in found[_PARTITIONS]}


def stats_attributes(seq: int, delta: PartitionDelta) -> dict[str, int]:
    """The Paimon statistics a partition created for stats operation ``seq`` is born with
    (what ``apply_partition_deltas`` would add to it, already stamped)."""
    return {"p_seq": seq, "p_records": delta.record_count, "p_bytes": delta.file_size_in_bytes,
            "p_files": delta.file_count, "p_last": delta.last_file_creation_time}


def _apply_one(table_uid: str, key: str, seq: int, delta: PartitionDelta,
               later: bool = True) -> tuple[int | None, int]:
    """(the partition's file count after the update, or None if it is missing; items read).
    ``later``: the delta's creation time may be later than the item's (so set it too, on the
    condition that the item's is not later). A failed condition returns the item it met (``ALL_OLD``): absent is
    missing, stamped with ``seq`` or later is applied already (its file count as it is), else
    only the creation time's part failed and the update goes again without it."""
    client = connection().client
    item_key = {"table_uid": {"S": table_uid}, "key": {"S": key}}
    base = "attribute_exists(#k) AND (attribute_not_exists(p_seq) OR p_seq < :q)"
    values = {":q": {"N": str(seq)}, ":r": {"N": str(delta.record_count)},
              ":b": {"N": str(delta.file_size_in_bytes)}, ":f": {"N": str(delta.file_count)}, ":one": {"N": "1"}}
    # ``revision`` too: a Glue UpdatePartition that read the item before this update (and
    # carries its statistics) then fails its revision condition instead of undoing this one.
    update = "SET p_seq = :q ADD p_records :r, p_bytes :b, p_files :f, revision :one"
    # With the creation time too unless the item's is later (max: Paimon's rule; an equal one
    # is set again, as pypaimon's times are whole seconds and commits within one second are the
    # rule in a loop); a failure of that part alone (the item has a later one) is retried
    # without it.
    with_time = dict(values, **{":t": {"N": str(delta.last_file_creation_time)}})
    tries = [(update.replace("SET p_seq = :q", "SET p_seq = :q, p_last = :t"),
              base + " AND (attribute_not_exists(p_last) OR p_last <= :t)", with_time)] if later else []
    tries.append((update, base, values))
    reads = 0
    for expression, condition, vals in tries:
        reads += 1
        try:
            answer = _retrying(lambda: client.update_item(
                TableName=_PARTITIONS, Key=item_key, UpdateExpression=expression, ConditionExpression=condition,
                ExpressionAttributeNames={"#k": "key"}, ExpressionAttributeValues=vals,
                ReturnValues="UPDATED_NEW", ReturnValuesOnConditionCheckFailure="ALL_OLD"))
            return int(answer["Attributes"]["p_files"]["N"]), reads
        except Exception as error:  # noqa: BLE001 - classified; only a lost condition is handled
            if classify(error).kind != CONDITION_FAILED:
                raise
            met = (getattr(error, "response", None) or {}).get("Item")
        if met is None:
            return None, reads  # no such partition
        stamped = _number(met.get("p_seq"))
        if stamped is not None and stamped >= seq:
            return _number(met.get("p_files")) or 0, reads  # applied already (a roll-forward's)
    # Failed without the creation time too, on an item neither absent nor stamped when read:
    # it changed between the two tries (deleted, or stamped by a concurrent applier).
    reads += 1
    found = client.get_item(TableName=_PARTITIONS, Key=item_key, ConsistentRead=True,
                            ProjectionExpression="p_files").get("Item")
    if found is None:
        return None, reads
    return int(found.get("p_files", {}).get("N", "0")), reads


def _retrying(call: Any) -> Any:
    retried: Exception | None = None
    for _ in attempts():
        try:
            return call()
        except Exception as error:  # noqa: BLE001 - classified, re-raised unless retryable
            if not classify(error).retryable:
                raise
            retried = error
    assert retried is not None
    raise given_up(retried, retried)


def mark_stats_done(table_uid: str, seq: int, count: int, branch: str = MAIN, owner: str | None = None) -> bool:
    """Record that the first ``count`` deltas of stats operation ``seq`` are applied (a cursor,
    see Head.stats_done); with ``owner``, only while it holds the lease (``take_stats_lease``),
    which this lets go. False: the head moved on (the cursor would be stale anyway), or the
    lease is someone else's now (who goes on from the cursor it found)."""
    item = PaimonItem(table_uid, head_key(branch))
    condition = PaimonItem.stats_seq == seq
    actions: list[Any] = [PaimonItem.stats_done.set(f"{seq}:{count}")]
    if owner is not None:
        condition &= PaimonItem.stats_lease == _lease(seq, owner)
        actions += _lease_removal()
    return conditional(lambda: item.update(actions=actions, condition=condition))


def clear_pending(table_uid: str, seq: int, branch: str = MAIN) -> bool:
    """Mark stats operation ``seq`` applied (remove ``pending``, and the lease of whoever
    applied it). False: not the head's."""
    item = PaimonItem(table_uid, head_key(branch))
    return conditional(lambda: item.update(actions=[PaimonItem.pending.remove(), *_lease_removal()],
                                           condition=PaimonItem.stats_seq == seq))


# One applier of a stats operation at a time: the commit that decided it, a move or read
# settling the head, the ``paimon-stats`` job. Applying is idempotent (``p_seq`` stamps), so the
# lease is no lock anything's correctness rests on; it keeps two appliers from probing and
# writing the same partitions at once, which on a busy store roughly halved the rate at which
# a large commit's statistics got applied.
def _lease(seq: int, owner: str) -> str:
    return f"{seq}:{owner}"


def _lease_removal() -> list[Any]:
    return [PaimonItem.stats_lease.remove(), PaimonItem.stats_until.remove()]


def take_stats_lease(table_uid: str, seq: int, owner: str, seconds: float, branch: str = MAIN) -> bool:
    """Take, or renew, the right to apply stats operation ``seq`` (still pending) for
    ``seconds``: free when no one holds it, its holder's time ran out, or it is for another
    operation. False: another applier holds it (or ``seq`` is applied or no longer the head's)."""
    now = clock.now()
    mine = _lease(seq, owner)
    item = PaimonItem(table_uid, head_key(branch))
    free = (PaimonItem.stats_until.does_not_exist() | (PaimonItem.stats_until < now)
            | (PaimonItem.stats_lease == mine) | ~PaimonItem.stats_lease.startswith(f"{seq}:"))
    condition = (PaimonItem.stats_seq == seq) & PaimonItem.pending.exists() & free
    return conditional(lambda: item.update(
        actions=[PaimonItem.stats_lease.set(mine), PaimonItem.stats_until.set(now + seconds)], condition=condition))


def partition_stats(table_uid: str, low: str | None = None, high: str | None = None, after: str | None = None,
                    demand: Demand | None = None) -> Iterator[Any]:
    """The table's partition items in sort-key order (records with ``key``, ``values`` and
    ``p_records``, ``p_bytes``, ``p_files``, ``p_last``; None where never counted); DynamoDB
    pages sized by ``demand`` (store.demand.Demand)."""
    return query_key_range(PartitionItem, table_uid, low, high, after, None, demand)


# ----------------------------------------------------------------------------------- tags
@dataclass(frozen=True)
class StoredTag:
    """A tag: its name, snapshot id, the tag file's text and creation time (ms)."""

    name: str
    snapshot_id: int
    text: str
    created: int

    def tagged(self) -> dict[str, Any]:
        """The tag file's JSON decoded (a fresh dict each call)."""
        return json.loads(self.text)


def create_tag(table_uid: str, name: str, snapshot_id: int, tag_text: str, branch: str = MAIN) -> bool:
    """Store a tag; False if one of that name exists."""
    item = PaimonItem(table_uid, tag_key(name, branch), snapshot_id=snapshot_id,
                      doc=tag_text.encode("utf-8"), created=_now_ms())
    return conditional(lambda: item.save(condition=PaimonItem.key.does_not_exist()))


def get_tag(table_uid: str, name: str, branch: str = MAIN) -> StoredTag | None:
    """A tag, or None."""
    item = _get(table_uid, tag_key(name, branch))
    return _tag(item, f"tag{SEP}{branch}{SEP}") if item else None


def _tag(item: Any, prefix: str) -> StoredTag:
    return StoredTag(item.key[len(prefix):], int(item.snapshot_id), _text(item), int(item.created or 0))


def list_tags(table_uid: str, after: str | None = None, limit: int = 100, branch: str = MAIN) -> list[StoredTag]:
    """Tags in name order, after ``after`` (a name), at most ``limit`` (one Query)."""
    prefix = f"tag{SEP}{branch}{SEP}"
    condition = PaimonItem.key.startswith(prefix)
    query = PaimonItem.query(table_uid, condition, consistent_read=True, limit=limit,
                             last_evaluated_key={"table_uid": {"S": table_uid}, "key": {"S": prefix + after}}
                             if after is not None else None)
    return [_tag(item, prefix) for item in _counted(query)]


def delete_tag(table_uid: str, name: str, branch: str = MAIN) -> bool:
    """Remove a tag; False if there is none."""
    item = PaimonItem(table_uid, tag_key(name, branch))
    return conditional(lambda: item.delete(condition=PaimonItem.key.exists()))


# ------------------------------------------------------------------------------- branches
def create_branch(table_uid: str, name: str, source: dict[str, Any], schema: tuple[int, str],
                  start: StoredSnapshot | None) -> bool:
    """A branch: its item (conditional: False if it exists), its copy of the source schema and,
    when created from a tag, that snapshot as its first snapshot and head. One transaction."""
    uid = dj.s(table_uid)
    absent = {"ConditionExpression": "attribute_not_exists(#k)", "ExpressionAttributeNames": {"#k": "key"}}
    head: dict[str, Any] = {"table_uid": uid, "key": dj.s(head_key(name)), "stats_seq": dj.n(0),
                            "records": dj.n(0), "size": dj.n(0), "files": dj.n(0), "last_file": dj.n(0)}
    actions: list[dict[str, Any]] = [
        {"Put": {"TableName": _TABLE, "Item": {"table_uid": uid, "key": dj.s(branch_key(name)),
                                               "created": dj.n(_now_ms()), "source": dj.s(json.dumps(source))},
                 **absent}},
        dj.put(_TABLE, {"table_uid": uid, "key": dj.s(schema_key(schema[0], name)),
                        "doc": dj.b(schema[1].encode("utf-8"))}),
    ]
    if start is not None:
        totals = start.totals
        head.update({"snapshot_id": dj.n(start.snapshot_id), "records": dj.n(totals.record_count),
                     "size": dj.n(totals.file_size_in_bytes), "files": dj.n(totals.file_count),
                     "last_file": dj.n(totals.last_file_creation_time)})
        if start.uuid is not None:
            head["snapshot_uuid"] = dj.s(start.uuid)
        snap = {"table_uid": uid, "key": dj.s(snap_key(start.snapshot_id, name)),
                "doc": dj.b(start.text.encode("utf-8")), "snapshot_id": dj.n(start.snapshot_id),
                "records": dj.n(totals.record_count), "size": dj.n(totals.file_size_in_bytes),
                "files": dj.n(totals.file_count), "last_file": dj.n(totals.last_file_creation_time)}
        if start.uuid is not None:
            snap["snapshot_uuid"] = dj.s(start.uuid)
        actions.append(dj.put(_TABLE, snap))
    actions.append(dj.put(_TABLE, head))
    return _transact(actions)


def list_branches(table_uid: str) -> list[str]:
    """Branch names, in order (one Query); branches being dropped are none."""
    prefix = f"branch{SEP}"
    return [item.key[len(prefix):] for item in _counted(
        PaimonItem.query(table_uid, PaimonItem.key.startswith(prefix), consistent_read=True))
        if item.dropped is None]


def branch_exists(table_uid: str, name: str) -> bool:
    """Whether the branch exists (one being dropped does not)."""
    return branch_state(table_uid, name) == "live"


def branch_created(table_uid: str, name: str) -> int | None:
    """When the live branch ``name`` was created (epoch ms): tells it from an earlier branch of
    that name. None: no such branch, or it is being dropped."""
    item = _get(table_uid, branch_key(name))
    return None if item is None or item.dropped is not None else int(item.created or 0)


def branch_state(table_uid: str, name: str) -> str | None:
    """"live", "dropped" (its tombstone: the name stays taken while what the branch left is
    removed, see ``drop_branch``) or None (no such branch)."""
    item = _get(table_uid, branch_key(name))
    if item is None:
        return None
    return "live" if item.dropped is None else "dropped"


# A dropped branch can hold any number of snapshots, so its removal is budgeted: ``drop_branch``
# turns its item into a tombstone (the branch is gone for every reader and writer at once, and
# its name stays taken), then ``remove_branch_items`` deletes its items a budget at a time, the
# service its directory, and ``forget_branch`` the tombstone last. Nothing of a new branch of
# that name can be written meanwhile, so nothing of one is ever removed.
def drop_branch(table_uid: str, name: str) -> bool:
    """Mark the branch dropped (conditional: False if there is none, or it is being dropped)."""
    item = PaimonItem(table_uid, branch_key(name))
    return conditional(lambda: item.update(actions=[PaimonItem.dropped.set(_now_ms())],
                                           condition=PaimonItem.key.exists() & PaimonItem.dropped.does_not_exist()))


def remove_branch_items(table_uid: str, name: str) -> None:
    """Delete a dropped branch's items within the current purge budget (``catalog.purging``;
    BudgetSpent when it runs out: call again). The head first: every move of a branch is
    conditional on its head, so none lands after it (a commit begun before the drop fails)."""
    delete_items(PaimonItem, [PaimonItem(table_uid, head_key(name))])
    for kind in ("snap", "schema", "tag"):
        delete_items(PaimonItem, PaimonItem.query(table_uid, PaimonItem.key.startswith(f"{kind}{SEP}{name}{SEP}"),
                                                  attributes_to_get=["table_uid", "key"], page_size=100))


def forget_branch(table_uid: str, name: str) -> None:
    """Delete a dropped branch's tombstone (its removal is done); nothing if it is gone already."""
    item = PaimonItem(table_uid, branch_key(name))
    conditional(lambda: item.delete(condition=PaimonItem.dropped.exists()))


MAX_FAST_FORWARD_ITEMS = 96  # TransactWriteItems takes 100 actions: the head, the table check, and these


def fast_forward(table: Table, main: Head, branch: Head, snapshots: Sequence[StoredSnapshot],
                 drop_snapshots: Sequence[int], schemas: Sequence[tuple[int, str]], drop_schemas: Sequence[int],
                 deltas: Sequence[PartitionDelta]) -> bool:
    """Make main's head the branch's head, in one transaction: main's snapshot items from the
    branch's first on replaced by the branch's (``snapshots``), the ones above the branch's head
    removed (``drop_snapshots``), the same for schemas; ``deltas`` (main's rolled-back statistics
    negated plus the branch's) become main's pending statistics. Conditional on main's head as
    read and the table still ``table``; False if either moved. ``published`` is removed, so a
    crash before the files are written has the next settle rewrite them all. The caller keeps
    the item count within MAX_FAST_FORWARD_ITEMS."""
    uid = dj.s(table.uid)
    names = {"#u": "snapshot_uuid", "#i": "snapshot_id", "#p": "pending", "#pub": "published"}
    sets, removes, values = _head_move(branch.snapshot_id or 0, branch.snapshot_uuid, branch.totals,
                                       main.stats_seq + 1, deltas)
    removes += ["#pub", "doc"]  # the branch's head doc is not carried: main reads its snap item
    values[":sq"] = dj.n(main.stats_seq)
    if main.snapshot_id is None:
        condition = "attribute_not_exists(#i)"
    else:
        values[":base"] = dj.n(main.snapshot_id)
        condition = "#i = :base"
    condition += " AND stats_seq = :sq AND attribute_not_exists(#p)"
    actions: list[dict[str, Any]] = [
        _table_check(table),
        {"Update": {"TableName": _TABLE, "Key": {"table_uid": uid, "key": dj.s(head_key(main.branch))},
                    "UpdateExpression": _update_expression(sets, removes),
                    "ConditionExpression": condition, "ExpressionAttributeNames": names,
                    "ExpressionAttributeValues": values}},
    ]
    actions += [dj.put(_TABLE, _snap_item(table.uid, main.branch, snap.snapshot_id, snap.uuid, snap.text, snap.totals,
                                          snap.deltas, main.stats_seq + 1)) for snap in snapshots]
    actions += [dj.delete(_TABLE, {"table_uid": uid, "key": dj.s(snap_key(n, main.branch))}) for n in drop_snapshots]
    actions += [dj.put(_TABLE, {"table_uid": uid, "key": dj.s(schema_key(n, main.branch)),
                                "doc": dj.b(text.encode("utf-8"))}) for n, text in schemas]
    actions += [dj.delete(_TABLE, {"table_uid": uid, "key": dj.s(schema_key(n, main.branch))}) for n in drop_schemas]
    return _transact(actions)


def _wire(item: Any) -> Any:
    """An item as botocore returned it (binary values as bytes) in the form dynamo_json sends
    (the flat attributes of Paimon items: S, N and B)."""
    if item is None:
        return None
    return {name: dj.b(value["B"]) if "B" in value else value for name, value in item.items()}


MAX_RENAMED_ITEMS = 48  # each item is a put and a delete, with the branch item's two: <= 100 actions


def rename_branch(table_uid: str, old: str, new: str) -> str | None:
    """Move a branch's items (the branch item, schemas, head, snapshots, tags) to a new name in
    one transaction. None when done; otherwise why not: "missing" (no branch ``old``), "exists"
    (``new`` is taken), "dropped" (``new`` is a dropped branch's, still being removed) or
    "too_many" (more than MAX_RENAMED_ITEMS items to move)."""
    client = connection().client
    branch = _wire(client.get_item(TableName=_TABLE, Key={"table_uid": {"S": table_uid},
                                                          "key": {"S": branch_key(old)}},
                                   ConsistentRead=True).get("Item"))
    head = _wire(client.get_item(TableName=_TABLE, Key={"table_uid": {"S": table_uid}, "key": {"S": head_key(old)}},
                                 ConsistentRead=True).get("Item"))
    metrics.count_read(2)
    if branch is None or "dropped" in branch:
        return "missing"
    children: list[dict[str, Any]] = []
    for prefix in (f"schema{SEP}{old}{SEP}", f"snap{SEP}{old}{SEP}", f"tag{SEP}{old}{SEP}"):
        for page in client.get_paginator("query").paginate(
                TableName=_TABLE, ConsistentRead=True, KeyConditionExpression="table_uid = :u AND begins_with(#k, :p)",
                ExpressionAttributeNames={"#k": "key"},
                ExpressionAttributeValues={":u": {"S": table_uid}, ":p": {"S": prefix}},
                PaginationConfig={"PageSize": MAX_RENAMED_ITEMS + 1}):
            for item in map(_wire, page.get("Items", [])):
                metrics.count_read()
                renamed = dict(item, key={"S": prefix.replace(f"{SEP}{old}{SEP}", f"{SEP}{new}{SEP}")
                                          + item["key"]["S"][len(prefix):]})
                children.append({"old": item["key"]["S"], "item": renamed})
            if len(children) > MAX_RENAMED_ITEMS:
                return "too_many"  # known without reading the rest (a branch may hold any number)
    if head is not None:
        children.append({"old": head_key(old), "item": dict(head, key={"S": head_key(new)})})
    if len(children) > MAX_RENAMED_ITEMS:
        return "too_many"
    absent = ("attribute_not_exists(#k)", {"#k": "key"})
    actions = [dj.put(_TABLE, dict(branch, key={"S": branch_key(new)}), absent[0], absent[1]),
               dj.delete(_TABLE, {"table_uid": {"S": table_uid}, "key": {"S": branch_key(old)}},
                         "attribute_exists(#k) AND attribute_not_exists(dropped)", {"#k": "key"})]
    for child in children:
        actions.append(dj.put(_TABLE, child["item"]))
        actions.append(dj.delete(_TABLE, {"table_uid": {"S": table_uid}, "key": {"S": child["old"]}}))
    if _transact(actions):
        return None
    taken = branch_state(table_uid, new)
    return "missing" if taken is None else "exists" if taken == "live" else "dropped"


# ------------------------------------------------------------------------------- helpers
def _counted(items: Any) -> Iterator[Any]:
    for item in items:
        metrics.count_read()
        yield item


def _transact(actions: list[dict[str, Any]]) -> bool:
    """One transaction: True if applied, False if a condition failed; conflicts are retried,
    then CommitConflict."""
    retried: Exception | None = None
    for _ in attempts():
        try:
            dj.transact_write(actions)
            return True
        except Exception as error:  # noqa: BLE001 - classified; anything but a known outcome is re-raised
            outcome = classify(error)
            if outcome.kind == CONDITION_FAILED:
                return False
            if not outcome.retryable:
                raise
            retried = error
    raise given_up(retried, CommitConflict()) if retried is not None else CommitConflict()

