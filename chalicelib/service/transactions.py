"""Lake Formation transactions and their commit protocol (see docs/design.md, "Transactions");
the Start/Commit/Cancel/Describe/List/ExtendTransaction actions call the functions here.

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
5. apply the pending writes (idempotent), release the locks, mark it applied.

A commit whose work budget runs out during step 2 (waiting for locks other committers hold)
or step 3 answers COMMIT_IN_PROGRESS (as Lake Formation may; clients poll DescribeTransaction)
and leaves the rest of steps 2-5 to a cleanup job, keeping the locks it took; one whose budget
runs out during step 5 answers COMMITTED and leaves the rest of the apply to it.

Every write of step 5 is fenced (``records.Fence``, see the store): it lands only while the
transaction still holds the scope's lock, so a committer that stalls past its lease while
someone else rolls its commit forward can never land a write after a later commit's.

Recovery needs no later traffic: reading a transaction (any action that loads it by id, or
ListTransactions) settles one whose commit has run past its lease (``COMMIT_LEASE_SECONDS``
from the start of the commit): a COMMIT_IN_PROGRESS one is aborted (its locks released) unless
it was handed to a job (then it is queued again), and a COMMITTED one not yet applied is rolled
forward. A committer waiting for a lock does the same for the lock's holder.

All of it within the request's work budget: a roll-forward that does not finish in it goes to
an APPLY_JOB, and the commit's lease restarts (readers leave the commit to the job meanwhile;
the job restarts it after every chunk); pending writes of an aborted transaction that are not
dropped in it go to a DROP_JOB. Aborted pending writes are never read again, so they may go
later.

A transaction's ``tables`` are its commit scopes: a governed table's uid for object writes, and
a database's metadata scope (``store.pending_tables.meta_scope``) for table definitions (``chalicelib.service.table_commit``); both kinds
go through every step above alike.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Iterable, Iterator, Optional

from chalicelib import clock, faults, settings
from chalicelib.context import RequestContext
from chalicelib.errors import (ConcurrentModificationException, InvalidInputException, ServiceError,
                               TransactionCanceledException, TransactionCommitInProgressException,
                               TransactionCommittedException, transaction_not_found)
from chalicelib.service import cleanup, table_commit
from chalicelib.service.paging import work_deadline
from chalicelib.store import catalog
from chalicelib.store import transactions as store
from chalicelib.store.errors import Fenced, OutOfTime
from chalicelib.store.records import CleanupJob, Transaction
from chalicelib.store.pending_tables import is_meta_scope
from chalicelib.attempts import Policy, attempts

# A transaction as the service hands it out (transaction_id, status, start_time, end_time, ...):
# the store's record (``records.Transaction``), which the adapters name through this module.

# The cleanup job kind that finishes a commit whose committer (or a reader rolling it forward)
# reached its work budget (uid: the transaction id; catalog: the transaction's): its conflict
# check and commit point if it is still COMMIT_IN_PROGRESS, then its apply.
APPLY_JOB = "commit-apply"
# The cleanup job kind that drops the pending writes an abort could not drop within its work
# budget (uid: the transaction id).
DROP_JOB = "pending-drop"
IDLE_SECONDS = settings.current().lf_idle_seconds
COMMIT_LEASE_SECONDS = settings.current().lf_commit_lease_seconds
# Waiting for a commit lock another committer holds (it lets go within its lease, or is
# cleared): for at most what is left of the request's work budget (``lock_wait``).
LOCK_WAIT = Policy(attempts=1000, base_delay=0.005, max_delay=0.2)
# The commit point loses only to another commit of the catalog landing first (snapshots and
# table writes meanwhile do not move the counter past it): retry at once-ish.
_COMMIT_POINT = Policy(attempts=64, base_delay=0.001, max_delay=0.05)


def lock_wait(deadline: float, policy: Policy = LOCK_WAIT) -> Policy:
    """``policy`` bounded to end at ``deadline`` (``clock.monotonic``); it still makes its
    first try when the deadline has passed."""
    return replace(policy, total_seconds=max(0.0, deadline - clock.monotonic()))


# ListTransactions' StatusFilter -> the statuses it lists (None: all).
STATUS_FILTERS: dict[str, Optional[set[str]]] = {
    "ALL": None, "COMPLETED": {"COMMITTED", "ABORTED"}, "ACTIVE": {"ACTIVE"},
    "COMMITTED": {"COMMITTED"}, "ABORTED": {"ABORTED"}}


def _catalog(ctx: RequestContext) -> str:
    return ctx.catalog_key({})


def _deadline(deadline: Optional[float]) -> float:
    """``deadline`` (``clock.monotonic``), or the work budget from now."""
    return deadline if deadline is not None else work_deadline()


def expire_if_idle(item: Transaction, deadline: Optional[float] = None) -> Transaction:
    """Abort an ACTIVE transaction idle for longer than IDLE_SECONDS (as AWS does)."""
    now = clock.now()
    if item.status == "ACTIVE" and now - item.last_activity > IDLE_SECONDS:
        if store.change_status(item, ["ACTIVE"], "ABORTED", end_time=now):
            _drop_pending(item, _deadline(deadline))
        fresh = store.get_transaction(item.catalog, item.transaction_id)
        return fresh or item
    return item


def past_lease(item: Transaction) -> bool:
    """Whether a commit has run longer than its lease (``last_activity`` is set when the
    commit starts): then whoever reads it may finish it (roll forward) or abort it."""
    return clock.now() - float(item.last_activity or 0) > COMMIT_LEASE_SECONDS


def resolve(item: Transaction, deadline: Optional[float] = None) -> Transaction:
    """Settle a transaction a stalled or crashed server left unfinished, and return its state:
    an idle ACTIVE one is aborted (as AWS does); past its commit lease, a COMMIT_IN_PROGRESS
    one is aborted (or, handed off to a job, queued again) and a COMMITTED one not fully
    applied is rolled forward. Costs nothing more
    for a transaction that needs none of this (its item tells). Within ``deadline`` (default:
    the work budget from now); what is left then goes to a cleanup job (module docstring)."""
    if item.status == "ACTIVE":
        return expire_if_idle(item, deadline)
    if item.status == "COMMIT_IN_PROGRESS" and past_lease(item):
        if item.handed_off:  # its job died or has not started: queue it again
            _hand_off(item, float(item.last_activity), "COMMIT_IN_PROGRESS")
            return item
        abort(item, ("COMMIT_IN_PROGRESS",), deadline)
        return store.get_transaction(item.catalog, item.transaction_id) or item
    if item.status == "COMMITTED" and not item.applied and past_lease(item):
        _finish_or_hand_off(item, _deadline(deadline))
    return item


def load_transaction(ctx: RequestContext, transaction_id: str) -> Transaction:
    """The caller's transaction (settled first, see :func:`resolve`), or EntityNotFoundException."""
    item = store.get_transaction(_catalog(ctx), transaction_id)
    if item is None:
        raise transaction_not_found(transaction_id)
    return resolve(item)


def _require_still_active(item: Transaction) -> None:
    """After a write conditioned on ``item``'s status failed: raise what its stored status calls
    for (EntityNotFoundException if it is gone)."""
    fresh = store.get_transaction(item.catalog, item.transaction_id)
    if fresh is None:
        raise transaction_not_found(item.transaction_id)
    require_active(fresh)


def require_active(item: Transaction, write: bool = False) -> None:
    """Raise the exception AWS uses for a transaction that can no longer be used."""
    if item.status == "COMMITTED":
        raise TransactionCommittedException(f"Transaction {item.transaction_id} is already committed.")
    if item.status == "ABORTED":
        raise TransactionCanceledException(f"Transaction {item.transaction_id} was cancelled or aborted.")
    if item.status == "COMMIT_IN_PROGRESS":
        raise TransactionCommitInProgressException(f"Transaction {item.transaction_id} is being committed.")
    if write and item.kind != "READ_AND_WRITE":
        raise InvalidInputException(f"Transaction {item.transaction_id} is READ_ONLY and cannot write.")


def start(ctx: RequestContext, kind: str = "READ_AND_WRITE") -> Transaction:
    """Begin a transaction whose snapshot is the catalog's latest commit."""
    return store.create_transaction(_catalog(ctx), kind, clock.now())


# ---------------------------------------------------------------------------------- commit
def _apply_order(scopes: list[str]) -> list[str]:
    # Table definitions first: a table created with objects exists before its objects land.
    return sorted(scopes, key=lambda scope: (not is_meta_scope(scope), scope))


def _apply(item: Transaction, scope: str, writes: list, current: Optional[dict], seq: int,
           deadline: Optional[float]) -> None:
    """Apply one scope under the transaction's fence. Fenced: the transaction no longer holds
    the scope's lock, which it loses only once the scope is fully applied, so nothing is left.
    OutOfTime: ``deadline`` passed between two of an object scope's DynamoDB transactions."""
    fence = store.fence_of(scope, item.transaction_id)
    try:
        if is_meta_scope(scope):
            table_commit.apply(item, scope, writes, seq, fence)
        else:
            store.apply_writes(fence, scope, writes, seq, current, deadline)
    except Fenced:
        pass


# A commit scope, its pending writes, and its objects' states before the commit (None for a
# table-definition scope, and for an object scope resumed past its applied prefix).
Scope = tuple[str, list, Optional[dict]]


def _apply_scopes(item: Transaction, seq: int, scopes: Iterable[Scope], deadline: Optional[float]) -> bool:
    """Apply each scope and release its lock, then drop the pending writes and mark the
    transaction applied. False when ``deadline`` (``clock.monotonic``) passed first: what was
    applied stays (applying is idempotent, and a scope's lock goes only once it is whole), the
    rest is for a roll-forward. At least one scope is worked on per call, so a chain of short
    deadlines still finishes."""
    try:
        for number, (scope, writes, current) in enumerate(scopes):
            if number and deadline is not None and clock.monotonic() >= deadline:
                return False
            _apply(item, scope, writes, current, seq, deadline)
            store.release_lock(scope, item.transaction_id)
        if deadline is None:
            store.drop_pending(item.transaction_id)
        else:
            with catalog.purging(catalog.Budget(_NO_ITEM_LIMIT, deadline)):
                store.drop_pending(item.transaction_id)
    except (OutOfTime, catalog.BudgetSpent):
        return False
    store.mark_applied(item)
    return True


_NO_ITEM_LIMIT = 1 << 62  # a purge budget bounded by its deadline only


def _still_held(item: Transaction) -> Iterator[Scope]:
    """The scopes whose lock the transaction still holds, read as an applier needs them: an
    object scope whose apply has begun (a prefix of its writes is applied, and its partition
    summaries are) resumes after that prefix, reading objects only as it goes, so each chunk
    of a large commit's roll-forward costs about what it applies, not a read of every object."""
    for scope in _apply_order(list(item.tables or [])):
        lock = store.get_lock(scope)
        if lock is None or lock.transaction_id != item.transaction_id:
            continue  # released, so applied in full (a COMMITTED holder releases only then)
        writes = list(store.pending_of(item.transaction_id, scope))
        if is_meta_scope(scope):
            yield scope, writes, None
            continue
        applied = store.applied_prefix(scope, writes, item.seq)
        if applied:
            yield scope, writes[applied:], None  # summaries go before any object: applied
        else:
            yield scope, writes, store.get_objects(scope, [w.uri for w in writes])


def roll_forward(item: Transaction, deadline: Optional[float] = None) -> bool:
    """Finish applying a COMMITTED transaction's writes, release its locks and mark it applied
    (idempotent, and safe alongside its own committer or another roll-forward: fenced). With a
    ``deadline``, False when it came first (see ``_apply_scopes``)."""
    return _apply_scopes(item, item.seq, _still_held(item), deadline)


def _hand_off(item: Transaction, read_as: Optional[float] = None, status: str = "COMMITTED") -> None:
    """Leave the rest of a commit (``status``: COMMITTED, its apply; COMMIT_IN_PROGRESS, from its
    conflict check on) to an APPLY_JOB, restarting its commit lease so that readers leave it to
    the job (``read_as``: see ``store.renew_commit_lease``; a reader that loses that race leaves
    the commit to whoever won)."""
    if store.renew_commit_lease(item, clock.now(), read_as, status) or read_as is None:
        _queue_apply(item)


def _hand_off_checks(item: Transaction) -> None:
    """Leave steps 2-5 of a commit its committer began (and whose locks it may hold part of) to
    an APPLY_JOB, marked handed off so that readers past its lease queue it again instead of
    aborting it. TransactionStateChanged if it was aborted meanwhile."""
    if not store.renew_commit_lease(item, clock.now(), status="COMMIT_IN_PROGRESS"):
        raise store.TransactionStateChanged()
    _queue_apply(item)


def _queue_apply(item: Transaction) -> None:
    cleanup.enqueue(catalog.cleanup_job(APPLY_JOB, item.transaction_id, catalog=item.catalog))


def _finish_or_hand_off(item: Transaction, deadline: float) -> bool:
    """Roll a COMMITTED transaction forward within ``deadline``; True when it is applied.
    Otherwise the rest goes to an APPLY_JOB (``_hand_off``)."""
    if clock.monotonic() < deadline and roll_forward(item, deadline):
        return True
    _hand_off(item, float(item.last_activity))
    return False


def _apply_job(job: CleanupJob, deadline: float) -> bool:
    """An APPLY_JOB's share of work: finish its commit's checks and commit point if they are
    still to do, then roll it forward until ``deadline``; when it is not done by then, restart
    the commit's lease (this job is still at it)."""
    item = store.get_transaction(job.member("catalog"), job.uid)
    if item is not None and item.status == "COMMIT_IN_PROGRESS":
        return _finish_checks(item, deadline)
    if item is None or item.status != "COMMITTED" or item.applied:
        return True
    if roll_forward(item, deadline):
        return True
    store.renew_commit_lease(item, clock.now())
    return False


def _finish_checks(item: Transaction, deadline: float) -> bool:
    """Steps 2-5 of a commit its committer handed off while it waited for locks (those it took
    stay its own) or during step 3 (it holds them all). Locks still held by others are waited
    for until ``deadline``, then left to the job's next chunk. The check reads everything again,
    whatever the deadline: it cannot be resumed part way."""
    if not store.renew_commit_lease(item, clock.now(), status="COMMIT_IN_PROGRESS"):
        return False  # aborted (its lease ran out) or committed meanwhile: the next chunk sees which
    try:
        if not _lock_tables(item, deadline):
            if not store.renew_commit_lease(item, clock.now(), status="COMMIT_IN_PROGRESS"):
                raise store.TransactionStateChanged()  # aborted while it waited
            return False  # the next chunk waits on
        work = _check_conflicts(item)
        seq = _commit_point(item)
    except store.TransactionStateChanged:
        # Aborted meanwhile (the abort released its locks): locks taken after it go too.
        _release_locks(item)
        return True
    except ConcurrentModificationException:
        abort(item, ("COMMIT_IN_PROGRESS",), deadline)
        return True
    if _apply_scopes(item, seq, _scopes(work), deadline):
        return True
    store.renew_commit_lease(item, clock.now())
    return False


# A chunk reads the commit's pending writes afresh before it applies any (and, before the commit
# point, every object too): let it run long enough to apply far more than it reads (the
# cleaners cap it at a third of the lease).
cleanup.register_kind(APPLY_JOB, _apply_job, chunk_seconds=20.0)


def _drop_pending(item: Transaction, deadline: float) -> None:
    """Drop an aborted transaction's pending writes until ``deadline``; the rest to a DROP_JOB."""
    try:
        with catalog.purging(catalog.Budget(_NO_ITEM_LIMIT, deadline)):
            store.drop_pending(item.transaction_id)
    except catalog.BudgetSpent:
        cleanup.enqueue(catalog.cleanup_job(DROP_JOB, item.transaction_id, catalog=item.catalog))


cleanup.register_deletion_kind(DROP_JOB, lambda job: store.drop_pending(job.uid))


def abort(item: Transaction, expected: tuple[str, ...] = ("ACTIVE", "COMMIT_IN_PROGRESS"),
          deadline: Optional[float] = None) -> bool:
    """Abort a transaction that has not reached its commit point; release its locks. Its
    pending writes are dropped within ``deadline`` (default: the work budget from now), the
    rest by a DROP_JOB."""
    aborted = store.change_status(item, list(expected), "ABORTED", end_time=clock.now())
    if aborted is None:
        return False
    _release_locks(aborted)
    _drop_pending(aborted, _deadline(deadline))
    return True


def _release_locks(item: Transaction) -> None:
    for scope in item.tables or []:
        store.release_lock(scope, item.transaction_id)


def clear_lock(table_uid: str, catalog: str, deadline: Optional[float] = None) -> bool:
    """Resolve a lock left by another transaction if it is finished or stale; True if the lock
    is now free (or was), False if a live committer still holds it, or a roll-forward of its
    holder did not finish within ``deadline`` (default: the work budget from now)."""
    lock = store.get_lock(table_uid)
    if lock is None:
        return True
    holder = store.get_transaction(catalog, lock.transaction_id)
    if holder is None or holder.status in ("ACTIVE", "ABORTED"):
        store.release_lock(table_uid, lock.transaction_id)
        return True
    # A live committer is left to finish (within its lease). Rolling forward alongside it would
    # be safe (fenced), only wasted; meanwhile readers see the commit through the overlay.
    if not past_lease(holder):
        return False
    if holder.status == "COMMITTED":
        return _finish_or_hand_off(holder, _deadline(deadline))
    if holder.handed_off:
        _hand_off(holder, float(holder.last_activity), "COMMIT_IN_PROGRESS")
        return False
    # Aborting releases its locks; it fails if the holder reached its commit point meanwhile,
    # and then the lock must stay until the commit is applied (the caller looks again).
    return abort(holder, ("COMMIT_IN_PROGRESS",), deadline)


def _lock_tables(item: Transaction, deadline: float) -> bool:
    """Take the transaction's locks in sorted order, waiting for the ones other committers hold
    (clearing stale ones, with rolls-forward bounded by the same ``deadline``) until
    ``deadline``; True once all are held. False when the deadline came first: the locks taken
    so far stay taken (sorted order: a later taker of them waits behind this one, never in a
    cycle), for whoever goes on with the commit (an APPLY_JOB)."""
    for table_uid in sorted(item.tables or []):
        for _ in attempts(lock_wait(deadline)):
            if store.acquire_lock(table_uid, item.transaction_id, clock.now()):
                break
            clear_lock(table_uid, item.catalog, deadline)
        else:
            return False
    return True


class _PastBudget(Exception):
    """A commit's conflict check reached the work budget: the rest goes to an APPLY_JOB."""


_CHECK_CHUNK = 1000  # pending writes checked between two looks at the clock


def _in_time(deadline: Optional[float]) -> None:
    if deadline is not None and clock.monotonic() >= deadline:
        raise _PastBudget()


def _check_conflicts(item: Transaction, deadline: Optional[float] = None
                     ) -> dict[str, tuple[list, Optional[dict]]]:
    """Pending writes and current objects per scope; ConcurrentModificationException if any
    object or table definition was changed by another writer after this one's snapshot.
    _PastBudget once ``deadline`` has passed (looked at every _CHECK_CHUNK writes)."""
    work: dict[str, tuple[list, Optional[dict]]] = {}
    for table_uid in item.tables or []:
        _in_time(deadline)
        if is_meta_scope(table_uid):
            writes = list(store.pending_of(item.transaction_id, table_uid))
            table_commit.check(item, table_uid, writes)
            work[table_uid] = (writes, None)
            continue
        writes, current = [], {}
        pending = store.pending_of(item.transaction_id, table_uid)
        while chunk := list(itertools.islice(pending, _CHECK_CHUNK)):
            states = store.get_objects(table_uid, [w.uri for w in chunk])
            for write in chunk:
                state = states.get(write.uri)
                if state is not None and state.changed_seq > item.snapshot_seq:
                    raise ConcurrentModificationException(
                        f"Object {write.uri} was changed by a transaction committed after this one started")
                live = state is not None and state.live
                if (write.op == "add" and live) or (write.op != "add" and not live):
                    raise ConcurrentModificationException(f"Object {write.uri} changed concurrently")
            writes += chunk
            current.update(states)
            _in_time(deadline)
        work[table_uid] = (writes, current)
    return work


def _commit_point(item: Transaction) -> int:
    """Step 4: the commit's seq once it is COMMITTED. ConcurrentModificationException when other
    commits kept moving the counter; TransactionStateChanged when it was aborted meanwhile."""
    for _ in attempts(_COMMIT_POINT):
        previous = store.last_commit_seq(item.catalog)
        seq = store.next_commit_seq(previous)
        if store.commit_point(item.catalog, item, previous, seq, seq / 1_000_000):
            return seq
    raise ConcurrentModificationException("Other commits kept moving the catalog's commit counter; retry")


def _commit_point_or_landed(item: Transaction) -> int:
    """:func:`_commit_point`; when the store gave up on its answer (a store error that is no
    refusal: the answer was lost, and DynamoDB may have applied it) the transaction is read
    back: COMMITTED with a seq means the commit point landed, and the commit goes on with it
    instead of answering a 500 for a committed transaction."""
    try:
        return _commit_point(item)
    except (store.TransactionStateChanged, ServiceError):
        raise
    except Exception:
        landed = store.get_transaction(item.catalog, item.transaction_id)
        if landed is not None and landed.status == "COMMITTED" and landed.commit_seq:
            return int(landed.commit_seq)
        raise


def _scopes(work: dict[str, tuple[list, Optional[dict]]]) -> Iterator[Scope]:
    for scope in _apply_order(list(work)):
        yield (scope, *work[scope])
        faults.fault_point("mid-apply")  # one scope applied and released, the others not yet


def commit(item: Transaction) -> str:
    """Commit an ACTIVE transaction atomically (see the module docstring); its status. The
    work budget (from when the locks are held) ends the conflict check (COMMIT_IN_PROGRESS) or
    the apply (COMMITTED); a cleanup job (APPLY_JOB) then does the rest."""
    deadline = work_deadline()
    if not item.tables or item.kind == "READ_ONLY":
        if store.change_status(item, ["ACTIVE"], "COMMITTED", end_time=clock.now(), applied=1):
            return "COMMITTED"
        _require_still_active(item)
        raise ConcurrentModificationException("Transaction changed concurrently; retry")
    # The commit's lease runs from here: past it, anyone reading the transaction settles it.
    moved = store.change_status(item, ["ACTIVE"], "COMMIT_IN_PROGRESS", last_activity=clock.now())
    if moved is None:
        _require_still_active(item)
        raise ConcurrentModificationException("Transaction changed concurrently; retry")
    item = moved  # as stored when it stopped taking writes: every table it wrote
    faults.fault_point("before-locks")
    try:
        if not _lock_tables(item, deadline):
            # Queued behind other committers for a whole work budget: the job takes the rest
            # of the locks (keeping those taken), checks and commits.
            _hand_off_checks(item)
            return "COMMIT_IN_PROGRESS"
        # The check's budget starts once the locks are held: a commit that queued behind others
        # for part of a budget is not handed off for having queued.
        deadline = work_deadline()
        try:
            work = _check_conflicts(item, deadline)
        except _PastBudget:
            _hand_off_checks(item)  # nothing is visible yet; the job checks again and commits
            return "COMMIT_IN_PROGRESS"
        faults.fault_point("before-commit-point")
        seq = _commit_point_or_landed(item)  # a failure is aborted below: nothing of it is visible
    except store.TransactionStateChanged:
        # Aborted by recovery while we stalled; locks we took after it released them go too.
        _release_locks(item)
        raise TransactionCanceledException(
            f"Transaction {item.transaction_id} was aborted while committing (its commit stalled)") from None
    except BaseException:
        abort(item, ("COMMIT_IN_PROGRESS",), deadline)
        raise
    faults.fault_point("after-commit-point")
    if not _apply_scopes(item, seq, _scopes(work), deadline):
        # Committed, and visible (readers overlay the pending writes of a COMMITTED transaction
        # that holds a table's lock): the rest of the apply is the cleaners', so the answer
        # comes within the work budget however many writes the transaction made.
        _hand_off(item)
    return "COMMITTED"


# ------------------------------------------------------------------- what the actions call
def commit_transaction(ctx: RequestContext, transaction_id: str) -> str:
    """Commit the caller's transaction (all of its writes become visible at once, or none);
    its status. One already committed or being committed answers its status as it is."""
    item = load_transaction(ctx, transaction_id)
    if item.status in ("COMMITTED", "COMMIT_IN_PROGRESS"):
        return item.status
    if item.status == "ABORTED":
        raise TransactionCanceledException(f"Transaction {item.transaction_id} was cancelled or aborted.")
    return commit(item)


def cancel_transaction(ctx: RequestContext, transaction_id: str) -> None:
    """Abort the caller's ACTIVE transaction (its writes are discarded); one aborted already is left."""
    item = load_transaction(ctx, transaction_id)
    if item.status == "ABORTED":
        return
    require_active(item)
    if not abort(item, ("ACTIVE",)):
        _require_still_active(item)


def extend_transaction(ctx: RequestContext, transaction_id: str) -> None:
    """Keep the caller's ACTIVE transaction from being aborted as idle."""
    item = load_transaction(ctx, transaction_id)
    require_active(item)
    if not store.touch(item, clock.now()):
        _require_still_active(item)


def list_transactions(catalog: str, status_filter: str, after: Optional[str], deadline: float
                      ) -> Iterator[tuple[Transaction, bool]]:
    """The catalog's transactions in start order after ``after``, each settled (see
    :func:`resolve`, all within ``deadline``), with whether ``status_filter`` (a key of
    STATUS_FILTERS) lists it."""
    wanted = STATUS_FILTERS[status_filter]
    for item in store.list_transactions(catalog, after):
        item = resolve(item, deadline)
        yield item, wanted is None or item.status in wanted


def check_transaction_use(ctx: RequestContext, transaction_id: Optional[str], query_as_of_time: Optional[float],
                          write: bool) -> None:
    """A catalog request made in a transaction: it must be one of the caller's transactions
    and still usable (ACTIVE; READ_AND_WRITE for a ``write``), with the exceptions Lake
    Formation uses. A transaction and a QueryAsOfTime exclude each other."""
    if transaction_id and query_as_of_time is not None:
        raise InvalidInputException("TransactionId and QueryAsOfTime cannot both be specified")
    if transaction_id:
        require_active(load_transaction(ctx, transaction_id), write=write)
