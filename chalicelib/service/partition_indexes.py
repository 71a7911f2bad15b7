"""Partition indexes: their definitions, the rules other calls follow (CreateTable's
PartitionIndexes, UpdateTable's key checks, which indexes a partition write maintains), and the
resumable backfill of a new index. Protocol-free: callers name the table with a TableRef.

Definitions live on the table item as JSON: ``[{uid, name, keys, status, backfill_errors}]``.
Entries are keyed by the index *uid*, so entries of a deleted index can never reappear under a
re-created index of the same name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from chalicelib import clock, faults, settings, work_budget
from chalicelib.service import access
from chalicelib.domain import keycodec
from chalicelib.domain.partition_keys import IndexSpec, IndexValueError, index_entry_key
from chalicelib.errors import (ConcurrentModificationException, InvalidInputException,
                               ResourceNumberLimitExceededException, partition_index_already_exists,
                               partition_index_not_found)
from chalicelib.service import cleanup
from chalicelib.service.lookups import require_database, require_table
from chalicelib.service.table_ref import TableRef
from chalicelib.store import catalog
from chalicelib.store import partitions as store
from chalicelib.store.records import CleanupJob, Table
from chalicelib.attempts import Policy, attempts

MAX_INDEXES = 3
MAX_FAILED_KEPT = 10  # Glue keeps the last 10 failed indexes of a table
INDEXABLE_TYPES = {"string", "char", "varchar", "int", "integer", "bigint", "long", "tinyint",
                   "smallint", "date"}
LIVE = ("CREATING", "ACTIVE")
_BACKFILL_CHUNK = 500
# The cleanup queue's job kind (service.cleanup) of a backfill that outlived its request.
BACKFILL_JOB = "backfill"
# The owner of a backfill handed to that job (its lease is live, so requests leave it alone).
QUEUED = "queued"
_ERROR_PARTITIONS_SHOWN = 100


def partition_keys_of(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """The table's partition keys as (name, type)."""
    return [(key["Name"], key.get("Type", "string")) for key in doc.get("PartitionKeys") or []]


def key_types_of(table: Table) -> list[str]:
    """The Glue types of the table's partition keys as its partition sort keys encode them (a
    copy)."""
    return list(table.key_types or [])


def load_indexes(table: Table) -> list[dict[str, Any]]:
    """The table's index definitions."""
    return table.index_definitions()


def index_specs(table: Table, partition_keys: Sequence[tuple[str, str]],
                statuses: Sequence[str] = LIVE) -> list[IndexSpec]:
    """Indexes in the given statuses, resolved against the current partition keys."""
    positions = {name.lower(): (i, glue_type) for i, (name, glue_type) in enumerate(partition_keys)}
    specs = []
    for index in load_indexes(table):
        if index["status"] in statuses:
            found = [positions[k.lower()] for k in index["keys"]]
            specs.append(IndexSpec(index["uid"], index["name"], tuple(index["keys"]),
                                   tuple(t for _, t in found), tuple(p for p, _ in found)))
    return specs


def new_index_definition(index_input: dict[str, Any], partition_keys: Sequence[tuple[str, str]],
                         existing: Sequence[dict[str, Any]], status: str) -> dict[str, Any]:
    """Validate a PartitionIndex input against the table; the definition to store."""
    name = index_input["IndexName"]
    keys = index_input["Keys"]
    if any(i["name"] == name for i in existing if i["status"] != "FAILED"):
        raise partition_index_already_exists(name)
    if sum(1 for i in existing if i["status"] != "FAILED") >= MAX_INDEXES:
        raise ResourceNumberLimitExceededException(f"A table can have at most {MAX_INDEXES} partition indexes")
    types = {n.lower(): (n, t) for n, t in partition_keys}
    if len({k.lower() for k in keys}) != len(keys):
        raise InvalidInputException(f"Partition index {name} lists a key twice: {keys}")
    canonical = []
    for key in keys:
        if key.lower() not in types:
            raise InvalidInputException(
                f"Partition index {name}: '{key}' is not a partition key of the table "
                f"(partition keys: {', '.join(n for n, _ in partition_keys) or 'none'})")
        key_name, glue_type = types[key.lower()]
        if keycodec.base_type(glue_type) not in INDEXABLE_TYPES:
            raise InvalidInputException(
                f"Partition index {name}: key '{key_name}' has type {glue_type}; indexes support "
                "string, char, varchar, int, bigint, long, smallint, tinyint and date keys")
        canonical.append(key_name)
    return {"uid": catalog.new_uid(), "name": name, "keys": canonical, "status": status,
            "backfill_errors": []}


def indexes_for_new_table(indexes_input: Sequence[dict[str, Any]] | None,
                          partition_keys: Sequence[tuple[str, str]]) -> str | None:
    """CreateTable's PartitionIndexes as stored JSON (ACTIVE at once: nothing to backfill)."""
    if not indexes_input:
        return None
    defined: list[dict[str, Any]] = []
    for index_input in indexes_input:
        defined.append(new_index_definition(index_input, partition_keys, defined, "ACTIVE"))
    return json.dumps(defined)


def check_partition_key_change(table: Table, old_keys: Sequence[tuple[str, str]],
                               new_keys: Sequence[tuple[str, str]]) -> None:
    """Once a table has an index, existing partition keys keep their names, and indexed keys
    keep their type and position (Glue's rule for UpdateTable)."""
    live = [i for i in load_indexes(table) if i["status"] != "FAILED"]
    if not live:
        return
    for position, (name, _) in enumerate(old_keys):
        if position >= len(new_keys) or new_keys[position][0].lower() != name.lower():
            raise InvalidInputException(
                f"Partition key '{name}' cannot be renamed, removed or reordered: the table has partition indexes")
    indexed = {k.lower() for i in live for k in i["keys"]}
    for position, (name, glue_type) in enumerate(old_keys):
        if name.lower() in indexed and keycodec.base_type(new_keys[position][1]) != keycodec.base_type(glue_type):
            raise InvalidInputException(
                f"The type of indexed partition key '{name}' cannot change from {glue_type} to {new_keys[position][1]}")


# ---------------------------------------------------------------------------------- backfill
# A backfill is resumable by anyone: its progress record (``Table.backfills_json``, by index
# uid) names the owner, the owner's lease, the last partition key done and the errors so far.
# The owner renews the lease after every chunk; a request that finds a CREATING index whose
# lease ran out (its owner died) takes it over from the cursor. Entries are idempotent and
# each is written only if its partition is unchanged since read, so a stale owner still
# writing beside the new one does no harm; only the record's owner may finish the index.
LEASE_SECONDS = settings.current().backfill_lease_seconds
# A request taking over does at most this many chunks, then lets go for the next request.
_RESUME_CHUNKS = settings.current().backfill_resume_chunks
_PROGRESS_POLICY = Policy(attempts=8)  # lost a race on the table item: re-read, retry
# Crash points (chalicelib.faults) of the backfill crash test.
CRASH_CREATING, CRASH_MID_BACKFILL, CRASH_SCANNED = "index-creating", "mid-backfill", "backfill-scanned"


def _progress(table: Table) -> dict[str, dict[str, Any]]:
    return table.backfill_progress()


def _creating(table: Table) -> set[str]:
    return {index["uid"] for index in load_indexes(table) if index["status"] == "CREATING"}


def _live_progress(table: Table, leaving_out: str | None = None) -> dict[str, dict[str, Any]]:
    """Progress records of CREATING indexes (records of finished or deleted ones are dropped)."""
    creating = _creating(table)
    return {uid: record for uid, record in _progress(table).items() if uid in creating and uid != leaving_out}


def _lease(owner: str, after: str | None, errors: dict[str, list[list[str]]],
           until: float | None = None) -> dict[str, Any]:
    """A progress record: ``owner`` holds the backfill until ``until`` (default: a lease from now)."""
    return {"owner": owner, "until": clock.now() + LEASE_SECONDS if until is None else until,
            "after": after, "errors": errors}


def _fresh(table: Table) -> Table | None:
    """The table re-read, or None if it was deleted (or re-created) meanwhile."""
    item = catalog.get_table(table.db_uid, table.name)
    return item if item is not None and item.uid == table.uid else None


def _change_progress(table: Table, uid: str,
                     change: Callable[[dict[str, Any] | None], dict[str, Any] | None]) -> Table | None:
    """Replace the index's progress record with ``change(record)``, retrying from a fresh read
    when the table's index state changed meanwhile. Returns the table as stored after, or
    None when ``change`` declined (returned None) or the index is no longer CREATING."""
    current: Table | None = table
    for _ in attempts(_PROGRESS_POLICY):
        if current is None or uid not in _creating(current):
            return None
        record = change(_progress(current).get(uid))
        if record is None:
            return None
        progress = _live_progress(current, leaving_out=uid)
        progress[uid] = record
        stored = store.update_backfills(current, progress)
        if stored is not None:
            return stored
        current = _fresh(current)
    return None


def _renew(table: Table, uid: str, owner: str, after: str | None, errors: dict[str, list[list[str]]],
           release: bool) -> Table | None:
    """Record progress and renew the lease (or, ``release``, let it go for the next request);
    None if the lease is no longer ours."""
    def renew(record: dict[str, Any] | None) -> dict[str, Any] | None:
        if record is None or record["owner"] != owner:
            return None
        return _lease(owner, after, errors, until=0.0 if release else None)
    return _change_progress(table, uid, renew)


def _take_over(table: Table, uid: str, owner: str, queued_too: bool = False) -> Table | None:
    """Claim an index whose lease ran out (keeping its cursor and errors), or (``queued_too``:
    the backfill job) one handed to the background; None if someone holds it now."""
    def claim(record: dict[str, Any] | None) -> dict[str, Any] | None:
        if record is not None and record["until"] >= clock.now() and not (queued_too and record["owner"] == QUEUED):
            return None
        record = record or {}
        return _lease(owner, record.get("after"), record.get("errors") or {})
    return _change_progress(table, uid, claim)


def _batches(items: Iterator[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _backfill(table: Table, uid: str, owner: str, max_chunks: int | None = None,
              deadline: float | None = None) -> bool:
    """Enter partitions into a CREATING index from its cursor on, renewing the lease after each
    chunk, then make it ACTIVE, or FAILED with the partitions that cannot be indexed (by
    BackfillErrorCode). With ``max_chunks`` or a ``deadline`` (``clock.monotonic``), stop after
    that many chunks or once it passed, and let the lease go. True: paused with work left."""
    spec = next((s for s in index_specs(table, partition_keys_of(catalog.load(table)), ("CREATING",))
                 if s.uid == uid), None)
    record = _progress(table).get(uid)
    if spec is None or record is None:
        return False
    after, errors = record["after"], record["errors"]
    current = table
    try:
        for number, chunk in enumerate(_batches(store.scan_range(table.uid, None, None, after), _BACKFILL_CHUNK), 1):
            entries = []
            for item in chunk:
                try:
                    entries.append((item, uid, index_entry_key(item.values, spec)))
                except IndexValueError as error:
                    shown = errors.setdefault(error.code, [])
                    if len(shown) < _ERROR_PARTITIONS_SHOWN:
                        shown.append(list(item.values))
            if not errors:  # a failing index gets no more entries: they would only be deleted
                store.write_entries_checked(table.uid, entries)
            after = chunk[-1].key
            handed_off = deadline is not None and clock.monotonic() >= deadline
            pause = handed_off or (max_chunks is not None and number >= max_chunks)
            if handed_off:
                # To the background cleaner's backfill job, under a live lease: requests reading
                # the table (resume_backfills) leave it alone unless that lease runs out.
                renewed = _change_progress(current, uid, lambda record: None if record is None or
                                           record["owner"] != owner else _lease(QUEUED, after, errors))
            else:
                renewed = _renew(current, uid, owner, after, errors, release=pause)
            if renewed is None:
                _clear_if_deleted(table, uid)
                return False
            current = renewed
            faults.crash_point(CRASH_MID_BACKFILL)
            if pause:
                return True
    except store.TableChanged:
        errors = {"INTERNAL_ERROR": []}
    faults.crash_point(CRASH_SCANNED)
    _finish(current, uid, owner, errors)
    return False


def _finish(table: Table, uid: str, owner: str, errors: dict[str, list[list[str]]]) -> None:
    """Mark the index ACTIVE or FAILED (keeping the last 10 FAILED) if its lease is still ours."""
    current: Table | None = table
    for _ in attempts(_PROGRESS_POLICY):
        if current is None:
            break
        record = _progress(current).get(uid)
        if uid not in _creating(current) or record is None or record["owner"] != owner:
            break  # deleted, or taken over (the new owner finishes)
        indexes = load_indexes(current)
        for index in indexes:
            if index["uid"] == uid:
                index["status"] = "FAILED" if errors else "ACTIVE"
                index["backfill_errors"] = [{"Code": code, "Partitions": [{"Values": v} for v in values]}
                                            for code, values in errors.items()]
        failed = [i for i in indexes if i["status"] == "FAILED"]
        indexes = [i for i in indexes if i["status"] != "FAILED"] + failed[-MAX_FAILED_KEPT:]
        if store.save_index_state(current, indexes, _live_progress(current, leaving_out=uid)) is not None:
            if errors:
                _forget_entries(uid)
            return
        current = _fresh(current)
    _clear_if_deleted(table, uid)


def _clear_if_deleted(table: Table, uid: str) -> None:
    """An index deleted (or its table) while we backfilled it may have got entries after its
    deleter removed them: remove them again."""
    fresh = _fresh(table)
    if fresh is None or all(index["uid"] != uid for index in load_indexes(fresh)):
        _forget_entries(uid)


def resume_backfills(table: Table) -> Table:
    """Take over the backfill of any CREATING index whose owner's lease ran out (the request
    that created it died, or the one that last took it over), doing a bounded share of the
    work; returns the table as it is now. Costs nothing without a CREATING index."""
    if not table.may_have_creating_index():
        return table
    progress = _progress(table)
    now = clock.now()
    stale = [uid for uid in _creating(table) if (progress.get(uid) or {}).get("until", 0.0) < now]
    if not stale:
        return table
    for uid in stale:
        owner = catalog.new_uid()
        claimed = _take_over(table, uid, owner)
        if claimed is not None:
            _backfill(claimed, uid, owner, max_chunks=_RESUME_CHUNKS)
    return _fresh(table) or table


def create_partition_index(ref: TableRef, index_input: dict[str, Any]) -> None:
    """Add the index ``index_input`` (a PartitionIndex: IndexName, Keys) and backfill it:
    CREATING, then ACTIVE, or FAILED with BackfillErrors. Raises InvalidInputException,
    AlreadyExistsException or ResourceNumberLimitExceededException for an index the table
    cannot have, EntityNotFoundException for a missing table.

    The definition and the creator's lease are stored together; the backfill then runs in this
    call. If the caller dies, a later call resumes it (``resume_backfills``)."""
    access.require("CreatePartitionIndex", ref.catalog_key, ref.database, ref.table)
    database = require_database(ref.catalog_key, ref.database)
    table = resume_backfills(require_table(database, ref.table))
    owner = catalog.new_uid()
    for _ in attempts(_PROGRESS_POLICY):
        indexes = load_indexes(table)
        definition = new_index_definition(index_input, partition_keys_of(catalog.load(table)), indexes, "CREATING")
        progress = _live_progress(table)
        progress[definition["uid"]] = _lease(owner, None, {})
        stored = store.save_index_state(table, indexes + [definition], progress)
        if stored is not None:
            table = stored  # as stored now: the backfill's lease is in it
            break
        table = require_table(database, ref.table)
    else:
        raise ConcurrentModificationException("The table's partition indexes changed concurrently; retry")
    faults.crash_point(CRASH_CREATING)
    # Within the request's work budget (API Gateway cuts a request at 29 s); what is left is the
    # background cleaner's (a ``backfill`` job), as Glue too answers while the index is CREATING.
    if _backfill(table, definition["uid"], owner, deadline=clock.monotonic() + work_budget.seconds()):
        cleanup.enqueue(catalog.cleanup_job(BACKFILL_JOB, table.uid, db_uid=table.db_uid, name=table.name))


def continue_backfills(db_uid: str, name: str, table_uid: str, deadline: float) -> bool:
    """A ``backfill`` job's share of work (the background cleaner's): take over the table's
    CREATING indexes whose lease is free and backfill them until ``deadline``. True when none is
    left (finished, failed, deleted, or the table is gone); False: run again later."""
    table = catalog.get_table(db_uid, name)
    if table is None or table.uid != table_uid:
        return True
    for uid in _creating(table):
        owner = catalog.new_uid()
        claimed = _take_over(table, uid, owner, queued_too=True)
        if claimed is not None and _backfill(claimed, uid, owner, deadline=deadline):
            return False
    table = _fresh(table)
    return table is None or not _creating(table)


def _backfill_job(job: CleanupJob, deadline: float) -> bool:
    done = continue_backfills(job.member("db_uid"), job.member("name"), job.uid, deadline)
    if not done:
        clock.sleep(0.2)  # another owner holds a lease: let it work rather than re-read at once
    return done


cleanup.register_kind(BACKFILL_JOB, _backfill_job)


def delete_partition_index(ref: TableRef, index_name: str) -> None:
    """Remove the index named ``index_name`` (EntityNotFoundException if there is none). Its
    entries become unreachable at once; a cleanup job, written in the same DynamoDB transaction
    as the definitions, deletes them in the background, so the answer does not wait for one
    delete per partition of the table."""
    access.require("DeletePartitionIndex", ref.catalog_key, ref.database, ref.table)
    table = require_table(require_database(ref.catalog_key, ref.database), ref.table)
    indexes = load_indexes(table)
    doomed = next((i for i in indexes if i["name"] == index_name), None)
    if doomed is None:
        raise partition_index_not_found(index_name)
    try:
        store.drop_index(table, [i for i in indexes if i is not doomed], doomed["uid"])
    except store.TableChanged:
        raise ConcurrentModificationException("The table's partition indexes changed concurrently; retry") from None
    cleanup.enqueued()


def _forget_entries(index_uid: str) -> None:
    """Have the cleaners delete the entries of an index no definition names any more."""
    cleanup.enqueue(store.index_entries_job(index_uid))


# An ``index-entries`` job deletes the entries of its index (uid).
cleanup.register_deletion_kind(store.INDEX_ENTRIES_JOB, lambda job: store.delete_index_entries(job.uid))


@dataclass
class IndexDescription:
    """One index as GetPartitionIndexes describes it."""

    name: str
    keys: list[tuple[str, str]]  # (name, type), named as the table's partition keys are
    status: str  # CREATING, ACTIVE or FAILED
    backfill_errors: list[dict[str, Any]]  # [{Code, Partitions: [{Values}]}]: why it FAILED


def describe_partition_indexes(ref: TableRef) -> list[IndexDescription]:
    """Every index of the table in definition order. An abandoned backfill is taken over first,
    so that an index is never shown CREATING for ever."""
    access.require("GetPartitionIndexes", ref.catalog_key, ref.database, ref.table)
    table = require_table(require_database(ref.catalog_key, ref.database), ref.table)
    table = resume_backfills(table)
    types = {n.lower(): (n, t) for n, t in partition_keys_of(catalog.load(table))}
    return [IndexDescription(index["name"],
                             [(types.get(k.lower(), (k, ""))[0], types.get(k.lower(), (k, "string"))[1])
                              for k in index["keys"]],
                             index["status"], index.get("backfill_errors") or [])
            for index in load_indexes(table)]
