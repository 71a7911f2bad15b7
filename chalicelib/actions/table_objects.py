"""Governed-table objects: UpdateTableObjects, GetTableObjects, DeleteObjectsOnCancel.

Reads at snapshot S see object versions with ``added_seq <= S < removed_seq``, plus the
pending writes of a transaction that is COMMITTED but not yet fully applied (when its sequence
number is <= S), plus the reader's own pending writes. The PartitionPredicate is planned like a
GetPartitions expression over the version keys, which start with the partition sort key.
"""

from __future__ import annotations

import heapq
from chalicelib import clock
from typing import Any, Iterator, Optional

from chalicelib.actions import action
from chalicelib.actions.common import fold, make_token, read_token, require_database
from chalicelib.actions.partition_indexes import partition_keys_of
from chalicelib.context import RequestContext
from chalicelib.domain import expressions, planner
from chalicelib.domain.keycodec import MAX_SORT_KEY_BYTES
from chalicelib.domain.partition_keys import partition_sort_key
from chalicelib.errors import (ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException, TransactionCommitInProgressException, table_not_found)
from chalicelib.service.snapshots import database_snapshot
from chalicelib.service.transactions import commit, load_transaction, require_active, start
from chalicelib.store import transactions as store
from chalicelib.store.models import ObjectItem, PendingWriteItem, TableItem

LATEST = 10 ** 19  # a snapshot after every commit
OWN = 10 ** 20 - 1  # own pending writes sort after every committed version of a partition


def _governed_table(ctx: RequestContext, params: dict[str, Any]) -> tuple[TableItem, dict[str, Any]]:
    # As the request sees it: a table the transaction created (not committed yet) is there.
    database = require_database(ctx, params, params["DatabaseName"])
    name = fold(params["TableName"])
    found = database_snapshot(ctx, params.get("TransactionId"), database, name).get(name)
    if found is None:
        raise table_not_found(name)
    table, doc, _ = found
    if (doc.get("TableType") or "").upper() != "GOVERNED":
        raise InvalidInputException(f"Table {table.name} is not a governed table (TableType GOVERNED)")
    return table, doc


def _partition_values(table: TableItem, keys: list[tuple[str, str]], given: Optional[list[str]], uri: str) -> list[str]:
    values = list(given or [])
    if len(values) != len(keys):
        raise InvalidInputException(
            f"Object {uri}: PartitionValues has {len(values)} value(s) but table {table.name} has "
            f"{len(keys)} partition key(s)")
    for value, (name, glue_type) in zip(values, keys):
        try:
            expressions.parse_value(value, glue_type)
        except InvalidInputException:
            raise InvalidInputException(
                f"Object {uri}: partition value '{value}' is not a valid {glue_type} for key '{name}'") from None
    return values


def _check_key_size(table: TableItem, uri: str, partition_key: Optional[str] = None) -> None:
    """Refuse an object whose store keys DynamoDB would refuse (over 1,024 bytes).

    Checked before anything is written: a key refused while a commit is applied, after its
    commit point, would fail that commit's roll-forward for ever and wedge the table.
    """
    keys = [store.pending_key(table.uid, uri)]
    if partition_key is not None:
        keys.append(store.version_key(partition_key, 0, uri))
    size = max(len(key.encode("utf-8", errors="surrogatepass")) for key in keys)
    if size > MAX_SORT_KEY_BYTES:
        raise InvalidInputException(
            f"Object {uri if len(uri) <= 64 else uri[:61] + '...'}: its Uri and PartitionValues need a {size}-byte key; this service "
            f"indexes objects by keys of at most {MAX_SORT_KEY_BYTES} bytes (shorten the Uri or the values)")


@action("lakeformation", "UpdateTableObjects")
def update_table_objects(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Add or delete up to 100 objects of a governed table within a transaction (without
    TransactionId: in a transaction of its own, committed at once)."""
    table, doc = _governed_table(ctx, params)
    keys = partition_keys_of(doc)
    own_transaction = not params.get("TransactionId")
    item = start(ctx) if own_transaction else load_transaction(ctx, params["TransactionId"])
    require_active(item, write=True)
    operations = params["WriteOperations"]
    uris = []
    for operation in operations:
        chosen = [k for k in ("AddObject", "DeleteObject") if operation.get(k) is not None]
        if len(chosen) != 1:
            raise InvalidInputException("Each WriteOperation must hold exactly one of AddObject or DeleteObject")
        uris.append(operation[chosen[0]]["Uri"])
        _check_key_size(table, uris[-1])
    if len(set(uris)) != len(uris):
        raise InvalidInputException("WriteOperations name the same object Uri more than once")
    committed = store.get_objects(table.uid, uris)
    # A committed transaction whose writes are not applied yet (its committer is applying them,
    # or crashed): its writes are the objects' latest committed state.
    unapplied = overlay_of(table, item.catalog, LATEST, None)
    pending = store.get_pending(item.transaction_id, [store.pending_key(table.uid, u) for u in uris])
    puts, removed = [], []
    for operation, uri in zip(operations, uris):
        state = committed.get(uri)
        if uri in unapplied:
            op, write, seq = unapplied[uri]
            state = ObjectItem(table.uid, uri, live=int(op != "delete"), changed_seq=seq, etag=write.etag,
                               values=list(write.values))
        if state is not None and state.changed_seq > item.snapshot_seq:
            raise ConcurrentModificationException(
                f"Object {uri} was changed by a transaction committed after this one started")
        mine = pending.get(store.pending_key(table.uid, uri))
        live = (mine.op != "delete") if mine else bool(state and state.live)
        if "AddObject" in operation and operation["AddObject"] is not None:
            add = operation["AddObject"]
            if live:
                raise InvalidInputException(f"Object {uri} already exists in table {table.name}")
            values = _partition_values(table, keys, add.get("PartitionValues"), uri)
            partition_key = partition_sort_key(values, list(table.key_types or []))
            _check_key_size(table, uri, partition_key)
            op = "replace" if mine and mine.op == "delete" else "add"
            puts.append(PendingWriteItem(item.transaction_id, store.pending_key(table.uid, uri), op=op, uri=uri,
                                         etag=add["ETag"], size=add["Size"], values=values,
                                         partition_key=partition_key))
        else:
            delete = operation["DeleteObject"]
            if not live:
                raise EntityNotFoundException(f"Object {uri} does not exist in table {table.name}")
            current_etag = mine.etag if mine else state.etag
            if delete.get("ETag") and delete["ETag"] != current_etag:
                raise InvalidInputException(f"Object {uri}: ETag {delete['ETag']} does not match {current_etag}")
            if mine and mine.op == "add":
                removed.append(mine)  # added and deleted in this transaction: nothing to do
            else:
                puts.append(PendingWriteItem(item.transaction_id, store.pending_key(table.uid, uri), op="delete",
                                             uri=uri, values=list(state.values),
                                             partition_key=partition_sort_key(list(state.values), list(table.key_types or []))))
    if not store.save_pending(item, clock.now(), table.uid, puts, removed):
        fresh = load_transaction(ctx, item.transaction_id)
        require_active(fresh, write=True)
        raise TransactionCommitInProgressException("Transaction changed while writing; retry")
    if own_transaction:
        commit(store.get_transaction(item.catalog, item.transaction_id))
    return {}


@action("lakeformation", "DeleteObjectsOnCancel")
def delete_objects_on_cancel(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Accepted and validated; this service never deletes S3 objects itself."""
    _governed_table(ctx, params)
    require_active(load_transaction(ctx, params["TransactionId"]), write=True)
    return {}


def snapshot_of(ctx: RequestContext, params: dict[str, Any]) -> tuple[int, Optional[Any]]:
    """The snapshot sequence number to read at, and the reading transaction (if any)."""
    if params.get("TransactionId") and params.get("QueryAsOfTime") is not None:
        raise InvalidInputException("TransactionId and QueryAsOfTime cannot both be specified")
    if params.get("TransactionId"):
        item = load_transaction(ctx, params["TransactionId"])
        require_active(item)
        store.touch(item, clock.now())
        return int(item.snapshot_seq), item
    # Never past the last commit point: a commit that lands while this request reads is being
    # applied, and must stay invisible rather than show half applied.
    last = store.last_commit_seq(ctx.catalog_key(params))
    if params.get("QueryAsOfTime") is not None:
        return min(round(params["QueryAsOfTime"] * 1_000_000), last), None
    return last, None


def overlay_of(table: TableItem, catalog_key: str, snapshot: int, reader: Optional[Any]) -> dict[str, tuple[str, Any, int]]:
    """uri -> (op, pending write, seq) of writes the snapshot sees but the versions lack yet."""
    changes: dict[str, tuple[str, Any, int]] = {}
    lock = store.get_lock(table.uid)
    if lock is not None and (reader is None or lock.transaction_id != reader.transaction_id):
        holder = store.get_transaction(catalog_key, lock.transaction_id)
        if holder is not None and holder.status == "COMMITTED" and holder.commit_seq <= snapshot:
            for write in store.pending_of(holder.transaction_id, table.uid):
                changes[write.uri] = (write.op, write, int(holder.commit_seq))
    if reader is not None:
        for write in store.pending_of(reader.transaction_id, table.uid):
            changes[write.uri] = (write.op, write, OWN)
    return changes


def visible_objects(table: TableItem, snapshot: int, bound, overlay, low, high, after,
                    seek: bool = False) -> Iterator[tuple[str, list[str], dict]]:
    """(version key, partition values, TableObject) visible in one key range, in key order;
    ``seek``: skip each partition's versions added after the snapshot instead of reading them."""
    def committed() -> Iterator[tuple[str, list[str], dict]]:
        versions = (store.versions_as_of(table.uid, snapshot, low, high, after) if seek
                    else store.versions_in(table.uid, low, high, after))
        for version in versions:
            if version.added_seq > snapshot or (version.removed_seq is not None and version.removed_seq <= snapshot):
                continue
            if version.uri in overlay or not expressions.evaluate(bound, version.values):
                continue
            yield version.key, list(version.values), {"Uri": version.uri, "ETag": version.etag, "Size": int(version.size)}

    extra = []
    for uri, (op, write, seq) in overlay.items():
        if op == "delete":
            continue
        key = store.version_key(write.partition_key, seq, uri)
        if (low is not None and key < low) or (high is not None and key > high) or (after is not None and key <= after):
            continue
        if expressions.evaluate(bound, write.values):
            extra.append((key, list(write.values), {"Uri": uri, "ETag": write.etag, "Size": int(write.size)}))
    extra.sort(key=lambda entry: entry[0])
    return heapq.merge(committed(), extra, key=lambda entry: entry[0])


def can_seek(bound: expressions.Node, keys: list[tuple[str, str]], reading_past: bool) -> bool:
    """Reading the past (as of a time, or a transaction's snapshot) from a few whole partitions:
    seek past their later history rather than read it (see store.versions_as_of)."""
    ranges = expressions.plan_ranges(bound, [name for name, _ in keys]) if keys else None
    return reading_past and bool(ranges) and all(len(r.equals) == len(keys) for r in ranges)


@action("lakeformation", "GetTableObjects")
def get_table_objects(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Objects of a governed table at a transaction's snapshot, a time, or the latest commit,
    optionally filtered by PartitionPredicate, grouped by partition, paged."""
    table, doc = _governed_table(ctx, params)
    snapshot, reader = snapshot_of(ctx, params)
    keys = partition_keys_of(doc)
    bound = expressions.bind(expressions.parse_partition_predicate(params.get("PartitionPredicate")), keys)
    plan = planner.choose_plan(bound, keys, list(table.key_types or []), [])
    as_of = params.get("QueryAsOfTime")
    scope = (table.uid, round(as_of * 1_000_000) if as_of is not None else None,
             params.get("TransactionId"), params.get("PartitionPredicate"))
    position = read_token(ctx, params, *scope)
    start_range, after = position[:2] if position else (0, None)
    if position and reader is None:
        snapshot = position[2]  # later pages of a read without a transaction: the first page's snapshot
    overlay = overlay_of(table, ctx.catalog_key(params), snapshot, reader)
    seek = can_seek(bound, keys, reader is not None or as_of is not None)
    limit = params.get("MaxResults") or 1000
    groups: list[dict[str, Any]] = []
    count, last, more = 0, None, False
    for number in range(start_range, len(plan.bounds)):
        low, high = plan.bounds[number]
        for key, values, obj in visible_objects(table, snapshot, bound, overlay, low, high,
                                         after if number == start_range else None, seek):
            if count == limit:
                more = True
                break
            if groups and groups[-1]["PartitionValues"] == values:
                groups[-1]["Objects"].append(obj)
            else:
                groups.append({"PartitionValues": values, "Objects": [obj]})
            count += 1
            last = [number, key, snapshot]
        if more:
            break
    token = make_token(ctx, last if more else None, *scope)
    return {"Objects": groups, **({"NextToken": token} if token else {})}
