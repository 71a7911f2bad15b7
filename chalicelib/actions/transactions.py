"""Lake Formation transactions: Start/Commit/Cancel/Describe/List/ExtendTransaction, and the
commit protocol (see docs/design.md, "Transactions").

Snapshot isolation: a transaction reads the catalog as of the commit sequence number current
when it started, plus its own pending writes. Commit, for any number of writes:

1. ACTIVE -> COMMIT_IN_PROGRESS (conditional; fails if cancelled or expired meanwhile);
2. take each written table's commit lock (sorted order), clearing locks left by crashed
   committers on the way (roll a COMMITTED holder forward, abort a stale COMMIT_IN_PROGRESS);
3. conflict check: any object or table definition it writes that another writer changed after
   its snapshot aborts it with ConcurrentModificationException (nothing applied);
4. the commit point — one DynamoDB transaction advances the catalog's commit counter and marks
   the transaction COMMITTED with that sequence number; before it nothing is visible, after it
   everything is (readers overlay a committed-but-unapplied transaction's pending writes);
5. apply the pending writes (idempotent), release the locks.

A transaction's ``tables`` are its commit scopes: a governed table's uid for object writes, and
``meta SEP database uid`` for table definitions (``chalicelib.actions.table_commit``); both kinds
go through every step above alike.
"""

from __future__ import annotations

import os
import secrets
import time
from typing import Any, Optional

from chalicelib.actions import action, table_commit
from chalicelib.actions.common import make_token, read_token
from chalicelib.context import RequestContext
from chalicelib.errors import (ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException, TransactionCanceledException,
                               TransactionCommitInProgressException, TransactionCommittedException)
from chalicelib.store import transactions as store
from chalicelib.store.models import TransactionItem
from chalicelib.store.pending_tables import is_meta_scope

IDLE_SECONDS = float(os.environ.get("GLUE_LF_IDLE_SECONDS", "900"))
COMMIT_LEASE_SECONDS = float(os.environ.get("GLUE_LF_COMMIT_LEASE_SECONDS", "60"))
LOCK_WAIT_SECONDS = 20.0
# Test hook for the crash-consistency test: exit the process abruptly at a commit step.
_CRASH_AT = os.environ.get("GLUE_FAULT_CRASH_AT", "")
_STATUS_FILTERS = {"ALL": None, "COMPLETED": {"COMMITTED", "ABORTED"}, "ACTIVE": {"ACTIVE"},
                   "COMMITTED": {"COMMITTED"}, "ABORTED": {"ABORTED"}}


def _crash_point(name: str) -> None:
    if _CRASH_AT == name:
        os._exit(137)


def _catalog(ctx: RequestContext) -> str:
    return ctx.catalog_key({})


def _describe(item: TransactionItem) -> dict[str, Any]:
    description = {"TransactionId": item.transaction_id, "TransactionStatus": item.status,
                   "TransactionStartTime": item.start_time}
    if item.end_time is not None:
        description["TransactionEndTime"] = item.end_time
    return description


def expire_if_idle(item: TransactionItem) -> TransactionItem:
    """Abort an ACTIVE transaction idle for longer than IDLE_SECONDS (as AWS does)."""
    now = time.time()
    if item.status == "ACTIVE" and now - item.last_activity > IDLE_SECONDS:
        if store.change_status(item, ["ACTIVE"], "ABORTED", end_time=now):
            store.drop_pending(item.transaction_id)
        fresh = store.get_transaction(item.catalog, item.transaction_id)
        return fresh or item
    return item


def load_transaction(ctx: RequestContext, transaction_id: str) -> TransactionItem:
    """The caller's transaction (expired ones aborted first), or EntityNotFoundException."""
    item = store.get_transaction(_catalog(ctx), transaction_id)
    if item is None:
        raise EntityNotFoundException(f"Transaction {transaction_id} not found.")
    return expire_if_idle(item)


def require_active(item: TransactionItem, write: bool = False) -> None:
    """Raise the exception AWS uses for a transaction that can no longer be used."""
    if item.status == "COMMITTED":
        raise TransactionCommittedException(f"Transaction {item.transaction_id} is already committed.")
    if item.status == "ABORTED":
        raise TransactionCanceledException(f"Transaction {item.transaction_id} was cancelled or aborted.")
    if item.status == "COMMIT_IN_PROGRESS":
        raise TransactionCommitInProgressException(f"Transaction {item.transaction_id} is being committed.")
    if write and item.kind != "READ_AND_WRITE":
        raise InvalidInputException(f"Transaction {item.transaction_id} is READ_ONLY and cannot write.")


def start(ctx: RequestContext, kind: str = "READ_AND_WRITE") -> TransactionItem:
    """Begin a transaction whose snapshot is the catalog's latest commit."""
    now = time.time()
    catalog = _catalog(ctx)
    item = TransactionItem(catalog, f"{store.now_micros():016x}{secrets.token_hex(8)}", kind=kind,
                           status="ACTIVE", start_time=now, last_activity=now,
                           snapshot_seq=store.last_commit_seq(catalog), tables=[])
    store.create_transaction(item)
    return item


# ---------------------------------------------------------------------------------- commit
def _apply_order(scopes: list[str]) -> list[str]:
    # Table definitions first: a table created with objects exists before its objects land.
    return sorted(scopes, key=lambda scope: (not is_meta_scope(scope), scope))


def _apply(item: TransactionItem, scope: str, writes: list, current: Optional[dict], seq: int) -> None:
    if is_meta_scope(scope):
        table_commit.apply(item, scope, writes, seq)
    else:
        store.apply_writes(scope, writes, seq, current)


def roll_forward(item: TransactionItem) -> None:
    """Finish applying a COMMITTED transaction's writes and release its locks (idempotent)."""
    for scope in _apply_order(list(item.tables or [])):
        writes = list(store.pending_of(item.transaction_id, scope))
        current = None if is_meta_scope(scope) else store.get_objects(scope, [w.uri for w in writes])
        _apply(item, scope, writes, current, int(item.commit_seq))
        store.release_lock(scope, item.transaction_id)
    store.drop_pending(item.transaction_id)


def abort(item: TransactionItem, expected: tuple[str, ...] = ("ACTIVE", "COMMIT_IN_PROGRESS")) -> bool:
    """Abort a transaction that has not reached its commit point; release its locks."""
    if not store.change_status(item, list(expected), "ABORTED", end_time=time.time()):
        return False
    for table_uid in item.tables or []:
        store.release_lock(table_uid, item.transaction_id)
    store.drop_pending(item.transaction_id)
    return True


def clear_lock(table_uid: str, catalog: str) -> bool:
    """Resolve a lock left by another transaction if it is finished or stale; True if the lock
    is now free (or was), False if a live committer still holds it."""
    lock = store.get_lock(table_uid)
    if lock is None:
        return True
    holder = store.get_transaction(catalog, lock.transaction_id)
    if holder is None or holder.status in ("ACTIVE", "ABORTED"):
        store.release_lock(table_uid, lock.transaction_id)
        return True
    stale = time.time() - (lock.since or 0) > COMMIT_LEASE_SECONDS
    if holder.status == "COMMITTED":
        # Its committer may still be applying: rolling forward alongside it could let its late
        # writes land after ours. Only a committer gone past its lease is finished for it
        # (meanwhile readers already see the commit, by overlaying its pending writes).
        if not stale:
            return False
        roll_forward(holder)
        return True
    if stale:
        abort(holder, ("COMMIT_IN_PROGRESS",))
        store.release_lock(table_uid, lock.transaction_id)
        return True
    return False


def _lock_tables(item: TransactionItem) -> None:
    deadline = time.time() + LOCK_WAIT_SECONDS
    for table_uid in sorted(item.tables or []):
        delay = 0.005
        while not store.acquire_lock(table_uid, item.transaction_id, time.time()):
            if not clear_lock(table_uid, item.catalog):
                if time.time() > deadline:
                    raise ConcurrentModificationException(
                        "Another transaction is committing to the same table; retry")
                time.sleep(delay)
                delay = min(delay * 2, 0.2)


def _check_conflicts(item: TransactionItem) -> dict[str, tuple[list, Optional[dict]]]:
    """Pending writes and current objects per scope; ConcurrentModificationException if any
    object or table definition was changed by another writer after this one's snapshot."""
    work: dict[str, tuple[list, Optional[dict]]] = {}
    for table_uid in item.tables or []:
        writes = list(store.pending_of(item.transaction_id, table_uid))
        if is_meta_scope(table_uid):
            table_commit.check(item, table_uid, writes)
            work[table_uid] = (writes, None)
            continue
        current = store.get_objects(table_uid, [w.uri for w in writes])
        for write in writes:
            state = current.get(write.uri)
            if state is not None and state.changed_seq > item.snapshot_seq:
                raise ConcurrentModificationException(
                    f"Object {write.uri} was changed by a transaction committed after this one started")
            live = state is not None and state.live
            if (write.op == "add" and live) or (write.op != "add" and not live):
                raise ConcurrentModificationException(f"Object {write.uri} changed concurrently")
        work[table_uid] = (writes, current)
    return work


def commit(item: TransactionItem) -> str:
    """Commit an ACTIVE transaction atomically (see the module docstring); its final status."""
    if not item.tables or item.kind == "READ_ONLY":
        if store.change_status(item, ["ACTIVE"], "COMMITTED", end_time=time.time()):
            return "COMMITTED"
        fresh = store.get_transaction(item.catalog, item.transaction_id)
        require_active(fresh)
        raise ConcurrentModificationException("Transaction changed concurrently; retry")
    if not store.change_status(item, ["ACTIVE"], "COMMIT_IN_PROGRESS"):
        fresh = store.get_transaction(item.catalog, item.transaction_id)
        require_active(fresh)
        raise ConcurrentModificationException("Transaction changed concurrently; retry")
    try:
        _lock_tables(item)
        work = _check_conflicts(item)
        _crash_point("before-commit-point")
        while True:
            previous = store.last_commit_seq(item.catalog)
            seq = max(store.now_micros(), previous + 1)
            if store.commit_point(item.catalog, item, previous, seq, seq / 1_000_000):
                break
    except store.TransactionStateChanged:
        raise TransactionCanceledException(
            f"Transaction {item.transaction_id} was aborted while committing (its commit stalled)") from None
    except BaseException:
        abort(item, ("COMMIT_IN_PROGRESS",))
        raise
    _crash_point("after-commit-point")
    for scope in _apply_order(list(work)):
        writes, current = work[scope]
        _apply(item, scope, writes, current, seq)
        _crash_point("mid-apply")
        store.release_lock(scope, item.transaction_id)
    store.drop_pending(item.transaction_id)
    return "COMMITTED"


# --------------------------------------------------------------------------------- actions
@action("lakeformation", "StartTransaction")
def start_transaction(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Start a READ_AND_WRITE (default) or READ_ONLY transaction."""
    return {"TransactionId": start(ctx, params.get("TransactionType") or "READ_AND_WRITE").transaction_id}


@action("lakeformation", "CommitTransaction")
def commit_transaction(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Commit a transaction: all of its writes become visible at once, or none."""
    item = load_transaction(ctx, params["TransactionId"])
    if item.status in ("COMMITTED", "COMMIT_IN_PROGRESS"):
        return {"TransactionStatus": item.status}
    if item.status == "ABORTED":
        raise TransactionCanceledException(f"Transaction {item.transaction_id} was cancelled or aborted.")
    return {"TransactionStatus": commit(item)}


@action("lakeformation", "CancelTransaction")
def cancel_transaction(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Abort an ACTIVE transaction; its writes are discarded."""
    item = load_transaction(ctx, params["TransactionId"])
    if item.status == "ABORTED":
        return {}
    require_active(item)
    if not abort(item, ("ACTIVE",)):
        require_active(store.get_transaction(item.catalog, item.transaction_id))
    return {}


@action("lakeformation", "DescribeTransaction")
def describe_transaction(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Status and start/end times of a transaction."""
    return {"TransactionDescription": _describe(load_transaction(ctx, params["TransactionId"]))}


@action("lakeformation", "ExtendTransaction")
def extend_transaction(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Keep an ACTIVE transaction from being aborted as idle."""
    if not params.get("TransactionId"):
        raise InvalidInputException("TransactionId is required")
    item = load_transaction(ctx, params["TransactionId"])
    require_active(item)
    if not store.touch(item, time.time()):
        require_active(store.get_transaction(item.catalog, item.transaction_id))
    return {}


@action("lakeformation", "ListTransactions")
def list_transactions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """The caller's transactions in start order, filtered by status, paged."""
    catalog = ctx.catalog_key(params)
    wanted = _STATUS_FILTERS[params.get("StatusFilter") or "ALL"]
    scope = (catalog, params.get("StatusFilter") or "ALL")
    after: Optional[str] = read_token(ctx, params, *scope)
    limit = params.get("MaxResults") or 100
    found, last, more = [], None, False
    for item in store.list_transactions(catalog, after):
        item = expire_if_idle(item)
        if wanted is not None and item.status not in wanted:
            last = item.transaction_id
            continue
        if len(found) == limit:
            more = True
            break
        found.append(_describe(item))
        last = item.transaction_id
    token = make_token(ctx, last if more else None, *scope)
    return {"Transactions": found, **({"NextToken": token} if token else {})}
