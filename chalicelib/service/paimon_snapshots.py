"""Paimon commits, the latest snapshot, rollback, tags and partition statistics (protocol-free).

The protocol is docs/design.md, "The Paimon catalog": a commit is decided by one conditional
transaction on the branch head (table uid + base snapshot), then its partition statistics are
applied (``pending``: missing partitions are created through the ordinary Glue partition write
path, emptied ones deleted), then the ``snapshot-N`` / ``LATEST`` / ``EARLIEST`` files are
written and the head marked published. Whatever a crash leaves half done (pending statistics,
files behind the head) is rolled forward by the next call that reads the head (``settle``).

Statistics are applied within the request's work budget (a commit may name any number of
partitions: 10,000 took 10 s): what is left stays ``pending`` on the published head, and a
cleanup job (``STATS_JOB``) goes on with it, as does every move that settles the head, within
its own budget (reads leave them alone, see ``settle``). Until it is done the next commit
answers "not committed" (False), which Paimon's clients retry as after a lost race, and a
rollback or fast-forward is refused.

Every entry point takes the table by name (``TableRef``) and checks the caller's Lake Formation
permissions (``service.access``, the Paimon actions of ``domain.permissions.ACTIONS``) before it
reads anything: ``_open``. What a call then does to the table's Glue partitions (a commit's
statistics creating and deleting them, a partition registration's existence check) is covered
by that check, so it is done unchecked (``access.checked``); so is the roll-forward of what an
earlier, allowed move left undone, whichever call meets it.
"""

from __future__ import annotations

import logging
import uuid as uuid_module
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence

from chalicelib.domain.paimon.snapshots import (PartitionDelta, Snapshot, SnapshotFormatError, now_utc, parse_snapshot,
                                                iso_duration, parse_statistics, partition_json,
                                                sum_by_partition, table_snapshot_json, tag_text)
from chalicelib.domain.partition_keys import first_value_prefix_bounds, partition_sort_key
from chalicelib.errors import (AlreadyExistsException, ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException)
from chalicelib import clock, faults
from chalicelib.service import access, cleanup, lookups, paging, paimon_tag_files as tag_files
from chalicelib.service import partitions as glue_partitions
from chalicelib.service.paging import take_page
from chalicelib.service.paimon_partitions import is_done
from chalicelib.service.paimon_tables import is_paimon, split_branch
from chalicelib.service.table_ref import TableRef
from chalicelib.store import catalog
from chalicelib.store import paimon as store
from chalicelib.store import paimon_history as history
from chalicelib.store import warehouse
from chalicelib.store.demand import Demand
from chalicelib.store.records import Table

log = logging.getLogger(__name__)
# A commit saves its snap item and writes its files while it applies its statistics (threads:
# all wait on DynamoDB or the disk); two per commit.
_BACKGROUND = ThreadPoolExecutor(max_workers=8, thread_name_prefix="paimon-commit")

MAIN = store.MAIN
SNAPSHOT = "SNAPSHOT"
TAG = "TAG"
TABLE = "TABLE"
BRANCH = "BRANCH"


# ------------------------------------------------------------------------------ the table
@dataclass(frozen=True)
class TableBranch:
    """A Paimon table at one of its branches, as the calls here need it, read once per request."""

    ref: TableRef
    uid: str
    item: Table  # the Glue table as read (records.Table): the commit's table check
    path: str
    keys: list[str]  # partition key names, in Glue PartitionKeys order
    key_types: list[str]
    branch: str
    head: Optional[store.Head] = None  # the head as read with the table, when it was

    @property
    def uuid(self) -> str:
        """The Paimon table id: the Glue uid as a UUID."""
        return str(uuid_module.UUID(hex=self.uid))


def open_table(ref: TableRef, hinted: Optional[tuple[Any, Any, list[Any]]] = None) -> TableBranch:
    """The Paimon table (and branch) ``ref`` names; EntityNotFoundException (TABLE) when there is
    no such table or it is not a Paimon table, (BRANCH) when the branch does not exist.
    ``hinted``: ``lookups.hinted_from``'s answer, already read (``_open``)."""
    name, branch = split_branch(ref.table)
    ref = replace(ref, table=name)
    head: store.Head | None = None
    # The usual case, a table this process has read before: database, table and head in one
    # BatchGetItem (pypaimon asks for the latest snapshot several times per write and read).
    if hinted is None:
        hinted = lookups.read_hinted(ref.catalog_key, ref.database, name, lambda uid: [store.head_read(uid, branch)])
    if hinted is not None:
        view = glue_partitions.view_of(hinted[0], hinted[1])
        head = store.head_from(hinted[2][0])
    else:
        try:
            view = glue_partitions.read_partition_table(ref)
        except EntityNotFoundException as error:
            error.resource_type, error.resource_name = error.resource_type or TABLE, error.resource_name or name
            raise
        lookups.remember_table(ref.catalog_key, view.database, view.item)
    location = (view.doc.get("StorageDescriptor") or {}).get("Location")
    if not is_paimon(view.doc) or not location:
        raise EntityNotFoundException(f"Table {view.item.name} is not a Paimon table.", TABLE, name)
    table = TableBranch(ref, view.item.uid, view.item, location, [k for k, _ in view.keys], list(view.key_types),
                        branch, head)
    if branch != MAIN and not store.branch_exists(table.uid, branch):
        raise EntityNotFoundException(f"Branch {branch} does not exist.", BRANCH, branch)
    return table


def checked_open(action: str, ref: TableRef) -> TableBranch:
    """The table ``ref`` names (``open_table``), once the caller may do ``action`` on it (on the
    table itself for a branch ``t$branch_b``): AccessDeniedException before anything is read."""
    name, branch = split_branch(ref.table)
    # The usual case: the grants, the database, the table and the head in ONE BatchGetItem.
    planned = lookups.hinted_keys(ref.catalog_key, ref.database, name, lambda uid: [store.head_read(uid, branch)])
    raws = access.require_reading(action, ref.catalog_key, ref.database, name, planned[1] if planned else ())
    return open_table(ref, lookups.hinted_from(planned[0], raws) if planned else None)


def _head(table: TableBranch, fresh: bool = False) -> store.Head:
    """The branch head: as read with the table (``open_table``), or ``fresh`` from the store."""
    head = table.head if table.head is not None and not fresh else store.get_head(table.uid, table.branch)
    if head is None:
        if table.branch != MAIN:
            raise EntityNotFoundException(f"Branch {table.branch} does not exist.", BRANCH, table.branch)
        raise EntityNotFoundException(f"Table {table.ref.table} has no Paimon state.", TABLE, table.ref.table)
    return head


def snapshot_of(table: TableBranch, number: int) -> Optional[store.StoredSnapshot]:
    """Snapshot ``number`` of the branch: its item, or, for a registered table's snapshot older
    than its items (``history.adopted_floor``: a register adopts only the latest), its file in
    the registered directory. None when neither holds it. The caller compares ``number`` with
    the head (an item above it is a rollback's leftover)."""
    stored = store.get_snapshot(table.uid, number, table.branch)
    if stored is not None or table.branch != MAIN:
        return stored
    floor = history.adopted_floor(table.uid)
    if floor is None or number >= floor:
        return None
    return history.read_snapshot_file(table.path, number)


# ----------------------------------------------------------------- settling the head
def settle(table: TableBranch, deadline: Optional[float] = None) -> store.Head:
    """The head, with whatever the last decision left undone finished first: a commit's snap
    item saved (``unsaved``), its partition statistics applied (``pending``) and its files
    written (``published`` behind the id); the head returned still has ``pending`` when some
    statistics are left.

    ``deadline``: a move's (or a stats job's) work deadline, statistics are applied until then.
    None, for a read: only what is left if it is one chunk at most (a crashed commit's, as a
    rule). More are the next move's and the job's to apply: a read must stay quick while a
    large commit's are applied (pypaimon reads the latest snapshot several times per scan), and
    a read that writes a crashed move's files queues the job when some are left."""
    head = _head(table)
    if deadline is not None:
        head = _wait_for_applier(table, head, deadline)
    unpublished = head.snapshot_id is not None and (head.published or 0) != head.snapshot_id
    if head.pending is None and head.unsaved is None and not unpublished:
        return head  # the usual case: the last move finished
    latest = head.latest_text if head.latest_text is not None and head.latest_id() == head.snapshot_id else None
    if head.unsaved is not None and head.unsaved == head.snapshot_id and latest is not None:
        store.save_snapshot(table.uid, head, latest)
    small = head.pending is not None and len(head.pending) - head.stats_done <= STATS_CHUNK
    # Someone else applying them holds the lease: leave them to it (see _apply_stats).
    busy = head.stats_lease_until is not None and head.stats_lease_until > clock.now()
    applied = head.pending is None or ((deadline is not None or small) and not busy and _apply_stats(
        table, head.stats_seq, head.pending, deadline, done=head.stats_done))
    if unpublished:
        assert head.snapshot_id is not None  # (unpublished says so)
        # and store.finish (which keeps ``pending`` while some is left)
        _publish(table, head, {} if latest is None else {head.snapshot_id: latest}, applied)
        if not applied and deadline is None:
            _finish_stats_later(table)
        return replace(head, pending=None if applied else head.pending, unsaved=None, published=head.snapshot_id)
    if head.pending is not None and applied:
        store.clear_pending(table.uid, head.stats_seq, table.branch)
        return replace(head, pending=None)
    return head


def _wait_for_applier(table: TableBranch, head: store.Head, deadline: float) -> store.Head:
    """The head once no one else holds the lease on its statistics (they are applied, or the
    holder let go and this call may go on with them), or as it is at ``deadline``. A move
    waits rather than answer at once: Paimon's clients retry a commit answered "not committed"
    a bounded number of times (pypaimon: 10, about 10 s of back-off in all), so each attempt
    spends its budget waiting for the statistics, as it spent it applying them before the
    lease, and goes on the moment they are done."""
    while head.pending is not None and head.stats_lease_until is not None:
        now = clock.now()
        left = deadline - clock.monotonic()
        if head.stats_lease_until <= now or left <= 0:
            break
        clock.sleep(min(head.stats_lease_until - now, left, _LEASE_POLL_SECONDS))
        head = _head(table, fresh=True)
    return head


def _values(table: TableBranch, spec: dict[str, str]) -> list[str]:
    return [spec[k] for k in table.keys]


def check_specs(table: TableBranch, specs: Sequence[dict[str, str]], where: str) -> None:
    """InvalidInputException unless each spec names exactly the partition keys."""
    wanted = set(table.keys)
    for n, spec in enumerate(specs):
        if set(spec) != wanted:
            raise InvalidInputException(
                f"{where}[{n}].spec must name exactly the partition keys ({', '.join(table.keys) or 'none'}), "
                f"not {sorted(spec)}")
        for key, value in spec.items():
            if not isinstance(value, str) or not value:
                raise InvalidInputException(f"{where}[{n}].spec.{key} must be a non-empty string")


# A stats operation is applied this many partitions at a time, the work deadline looked at
# between them (one such chunk of new partitions takes about half a second here).
STATS_CHUNK = 500
# An applier of more than one chunk holds the head's stats lease (store.take_stats_lease) for
# this long, renewed before each chunk: well above a chunk's time, and as short as can be, since
# a holder that died keeps the others waiting until it runs out.
STATS_LEASE_SECONDS = 10.0
# A move (or the paimon-stats job) waiting for another applier looks at the head this often.
_LEASE_POLL_SECONDS = 0.5


def _apply_stats(table: TableBranch, seq: int, deltas: Sequence[PartitionDelta],
                 deadline: Optional[float] = None, done: int = 0) -> bool:
    """Add a decided stats operation to the partition items, once (``p_seq``); create the
    partitions it adds files to, delete the ones it empties (ordinary Glue partition writes).
    ``done``: how many of the deltas (in order) an earlier call applied (Head.stats_done).
    True when all of it is applied; False when ``deadline`` came first (after one chunk at
    least, so every call goes on): what is applied stays, stamped, the head records how far it
    got, and a call again goes on from there. A chunk is not begun when the one before, taking
    as long again, would end past the deadline: the answer comes near the budget, not a chunk
    (about a second) after it.

    More than one chunk left: applied under the head's stats lease. While another applier
    holds it (it took the lease first, or this one lost it in a chunk that outlasted it): False
    at once without a ``deadline``; with one, wait for that applier (``_wait_for_applier``) and
    go on from where it got (the head's ``stats_done``), or True if it applied them all. Moves
    and the job take the lease at any moment, so a move with budget to spare must not answer
    "not committed" for having met one between two chunks."""
    if table.branch != MAIN or not table.keys:
        return True  # partitions are the main branch's; an unpartitioned table has only totals
    pairs = _keyed(table, seq, deltas)
    # One chunk at most is applied without the lease: two appliers of it cost little.
    owner = catalog.new_uid() if len(pairs) - done > STATS_CHUNK else None
    last_chunk = 0.0  # seconds the chunk before took
    chunks = 0  # applied by this call: after one, no chunk is begun that would end past the deadline
    start = done
    while start < len(pairs):
        began = clock.monotonic()
        if chunks and deadline is not None and began + last_chunk >= deadline:
            store.mark_stats_done(table.uid, seq, start, table.branch, owner)  # and lets the lease go
            return False
        if owner is not None and not store.take_stats_lease(table.uid, seq, owner, STATS_LEASE_SECONDS, table.branch):
            if deadline is None:
                return False
            head = _wait_for_applier(table, _head(table, fresh=True), deadline)
            if head.pending is None or head.stats_seq != seq:
                return True  # the other applier finished them
            if clock.monotonic() >= deadline:
                return False  # (still held, or just let go): left to its holder, or the next call
            start, last_chunk = head.stats_done, 0.0
            continue
        _apply_stats_chunk(table, seq, dict(pairs[start:start + STATS_CHUNK]))
        chunks += 1
        start += STATS_CHUNK
        last_chunk = clock.monotonic() - began
    return True


# The partition keys of the last few large stats operations' deltas: computed once, not by every
# call that goes on with them (for tens of thousands of deltas, longer than a chunk's probe).
_KEYED_MEMO_SIZE = 4
_keyed_memo: dict[tuple, tuple[Sequence[PartitionDelta], list[tuple[str, PartitionDelta]]]] = {}


def _keyed(table: TableBranch, seq: int, deltas: Sequence[PartitionDelta]) -> list[tuple[str, PartitionDelta]]:
    """(partition sort key, delta) of each delta naming exactly the partition keys, in order,
    the last delta of a partition winning. Remembered for the same ``deltas`` (the store hands a
    large ``pending`` out as one list while it is unchanged)."""
    memo_key = (table.uid, seq, tuple(table.keys), tuple(table.key_types))
    found = _keyed_memo.get(memo_key)
    if found is not None and found[0] is deltas:
        return found[1]
    by_key: dict[str, PartitionDelta] = {}
    wanted = set(table.keys)
    for delta in deltas:
        if set(delta.spec) == wanted:
            by_key[partition_sort_key(_values(table, delta.spec), table.key_types)] = delta
    pairs = list(by_key.items())
    if len(pairs) > STATS_CHUNK:
        if len(_keyed_memo) >= _KEYED_MEMO_SIZE:
            _keyed_memo.clear()
        _keyed_memo[memo_key] = (deltas, pairs)
    return pairs


def _apply_stats_chunk(table: TableBranch, seq: int, by_key: dict[str, PartitionDelta]) -> None:
    result = store.apply_partition_deltas(table.uid, seq, list(by_key.items()))
    # A missing partition is created only when the delta adds files: a removal meeting no
    # partition (emptied and deleted by a concurrent roll-forward) must not resurrect it. It is
    # born with the delta's statistics, stamped with ``seq``, in the same write.
    create = [key for key in result.missing if by_key[key].file_count > 0]
    emptied = list(result.emptied)
    if create:
        inputs = [{"Values": _values(table, by_key[key].spec),
                   "StorageDescriptor": {"Location": _partition_path(table, by_key[key].spec)}} for key in create]
        with access.checked():  # a decided move's (the module docstring)
            errors = glue_partitions.create_partitions(
                table.ref, inputs, [store.stats_attributes(seq, by_key[key]) for key in create])
        raced = []  # created by someone else meanwhile: add the delta to theirs
        for position, error in errors.items():
            if isinstance(error, AlreadyExistsException):
                raced.append(create[position])
            else:
                # A value the Glue partition cannot hold (e.g. unfit for a partition index) loses
                # that partition's statistics; raising would leave ``pending`` to fail every
                # later call of the table the same way.
                log.warning("Paimon statistics of partition %s of %s not kept: %s", inputs[position]["Values"],
                            table.ref.table, error)
        if raced:
            emptied += store.apply_partition_deltas(table.uid, seq, [(key, by_key[key]) for key in raced]).emptied
    if emptied:
        with access.checked():
            glue_partitions.delete_partitions(table.ref, [_values(table, by_key[key].spec) for key in emptied])


def _partition_path(table: TableBranch, spec: dict[str, str]) -> str:
    return table.path.rstrip("/") + "/" + "/".join(f"{k}={spec[k]}" for k in table.keys)


def _publish(table: TableBranch, head: store.Head, known: dict[int, str], stats_applied: bool = True) -> None:
    """Write the snapshot files the head has and the directory may lack (from ``known`` texts,
    else the items), then LATEST (and EARLIEST on the first publish), then mark published (and
    the statistics applied, unless not ``stats_applied``)."""
    _finish_publish(table, head, _publish_files(table, head, known), stats_applied)


def _publish_files(table: TableBranch, head: store.Head, known: dict[int, str]) -> tuple[list[int], bool]:
    """:func:`_publish` up to LATEST: the snapshot files, then LATEST if this move still holds
    the head. The ids written, and whether LATEST was (False: a later move holds the head and
    publishes itself)."""
    assert head.snapshot_id is not None
    written = _write_snapshot_files(table, head, known)
    return written, _write_latest(table, head.snapshot_id, head.stats_seq)


def _finish_publish(table: TableBranch, head: store.Head, files: tuple[list[int], bool], stats_applied: bool) -> None:
    """:func:`_publish` after LATEST: the update that marks the move published (and its
    statistics applied; not tried when a later move holds the head: there is nothing to mark),
    LATEST again if the head moved meanwhile, and EARLIEST on the first publish."""
    assert head.snapshot_id is not None
    written, wrote_latest = files
    if wrote_latest and not store.finish(table.uid, head.snapshot_id, head.stats_seq, table.branch, stats_applied):
        _republish(table)
    if head.published is None and written:
        warehouse.put(warehouse.earliest_file(table.path, table.branch), str(written[0]))


def _write_snapshot_files(table: TableBranch, head: store.Head, known: dict[int, str]) -> list[int]:
    """The ``snapshot-N`` files between what was published and the head (a rollback's above it
    deleted first); the ids written."""
    assert head.snapshot_id is not None
    if (head.published or 0) > head.snapshot_id:  # a rollback stopped before its own clean-up
        _unpublish_above(table, head.snapshot_id, head.published or 0)
    low = 0 if head.published is None else min(head.published, head.snapshot_id)
    wanted = range(low + 1, head.snapshot_id + 1)
    texts = dict(known)
    if any(n not in texts for n in wanted):
        texts.update({s.snapshot_id: s.text for s in store.snapshots_between(table.uid, low, head.snapshot_id,
                                                                               table.branch)})
    written = [n for n in wanted if n in texts]
    for number in written:
        warehouse.put(warehouse.snapshot_file(table.path, number, table.branch), texts[number])
    return written


# A publisher that finds the head moved on after its LATEST write re-publishes the newer head;
# each round needs yet another move landing within it, so a few rounds are plenty.
_LATEST_ROUNDS = 8


def _write_latest(table: TableBranch, snapshot_id: int, seq: int) -> bool:
    """LATEST = ``snapshot_id`` for head move ``seq``; False, and nothing written, when a later
    move holds the head. Only the head's holder writes LATEST, so it never goes back to an older
    move's id (a rollback's is the newest move): a publisher that finds the head moved on before
    its write leaves LATEST to the later move; one that stopped between that check and its write
    (a paused process) and finds the head moved after it, when its finishing update fails, may
    have overwritten the later move's LATEST, so it writes the head's again (``_republish``)."""
    faults.fault_point(STOP_BEFORE_LATEST)
    if not store.holds_head(table.uid, snapshot_id, seq, table.branch):
        return False
    faults.fault_point(STOP_WRITING_LATEST)
    warehouse.put(warehouse.latest_file(table.path, table.branch), str(snapshot_id))
    return True


def _republish(table: TableBranch) -> None:
    """After a LATEST write that may have landed over a later move's: LATEST = the head's id
    again (its snapshot files first, the snap item's text or the head's copy), until the head
    stays put across the write. The head's own publisher still marks it published."""
    for _ in range(_LATEST_ROUNDS):
        head = _head(table, fresh=True)
        if head.snapshot_id is None:
            return
        known = {} if head.latest_text is None or head.latest_id() != head.snapshot_id \
            else {head.snapshot_id: head.latest_text}
        _write_snapshot_files(table, head, known)
        warehouse.put(warehouse.latest_file(table.path, table.branch), str(head.snapshot_id))
        if store.holds_head(table.uid, head.snapshot_id, head.stats_seq, table.branch):
            return
    log.warning("LATEST of table %s branch %s was rewritten %d times while the head kept moving", table.uid,
                table.branch, _LATEST_ROUNDS)


# Fault points (chalicelib.faults) of a publisher: its snapshot files written, before it checks
# that it holds the head; and after that check, LATEST not yet written.
STOP_BEFORE_LATEST = "paimon-before-latest"
STOP_WRITING_LATEST = "paimon-writing-latest"


# ------------------------------------------------------------------------------ commit
def commit(ref: TableRef, table_id: Optional[str], base_uuid: Optional[str], snapshot_obj: Any,
           statistics_obj: Any) -> bool:
    """Commit a snapshot on ``base_uuid``. True: it is the branch's latest now (statistics
    applied, files written); False: the base is stale (another commit or a rollback won)."""
    table = checked_open("PaimonCommit", ref)
    try:
        snapshot = parse_snapshot(snapshot_obj)
        deltas = parse_statistics(statistics_obj)
    except SnapshotFormatError as error:
        raise InvalidInputException(str(error)) from None
    if table_id is not None and _uuid_hex(table_id) != table.uid:
        raise EntityNotFoundException(f"Table {table.ref.table} with id {table_id} does not exist.", TABLE,
                                      table.ref.table)
    if table.keys:
        check_specs(table, [d.spec for d in deltas], "statistics")
    return commit_on(table, base_uuid, snapshot, deltas)


def commit_on(table: TableBranch, base_uuid: Optional[str], snapshot: Snapshot,
              deltas: Sequence[PartitionDelta]) -> bool:
    """``commit`` of a validated snapshot on a table already opened (and the caller's
    permission checked): the client's commits and the catalog's own (a replace's truncation,
    ``paimon_truncate``) take this one path, the same head condition deciding them."""
    deadline = paging.work_deadline()
    head = settle(table, deadline)
    if head.pending is not None:
        return False  # the last move's statistics are not all applied yet: retried as a lost race
    if head.snapshot_uuid != base_uuid:
        return False
    expected = (head.snapshot_id or 0) + 1
    if snapshot.id != expected:
        raise InvalidInputException(f"snapshot.id must be {expected} (the base snapshot's id + 1), not {snapshot.id}")
    if not store.commit_snapshot(head, table.uid, snapshot, deltas):
        return False
    won = store.Head(table.branch, snapshot.id, snapshot.uuid, head.totals.plus(deltas), head.stats_seq + 1,
                     list(deltas) or None, head.published, snapshot.text(), snapshot.id)
    # The snap item, the statistics and the files (snapshot-N, then LATEST) depend on the
    # decision only, not on each other: all three go at once, and the finishing update, which
    # marks the statistics applied and the move published, waits for all three. A crash
    # anywhere among them leaves the head unfinished, which the next call settles as before.
    saving = _BACKGROUND.submit(store.save_snapshot, table.uid, won, snapshot.text())
    writing = _BACKGROUND.submit(_publish_files, table, won, {snapshot.id: snapshot.text()})
    applied = not deltas or _apply_stats(table, won.stats_seq, deltas, deadline)
    saving.result()
    _finish_publish(table, won, writing.result(), applied)
    if not applied:
        _finish_stats_later(table)
    return True


def _uuid_hex(text: str) -> str:
    try:
        return uuid_module.UUID(text).hex
    except (ValueError, AttributeError, TypeError):
        raise InvalidInputException(f"tableId must be a UUID, not {text!r}") from None


def latest(ref: TableRef) -> dict[str, Any]:
    """TableSnapshot JSON of the branch's latest snapshot; EntityNotFoundException (SNAPSHOT)
    before the first commit."""
    table = checked_open("PaimonLoadSnapshot", ref)
    head = settle(table)
    if head.snapshot_id is None:
        raise EntityNotFoundException(f"Table {table.ref.table} has no snapshot.", SNAPSHOT, table.ref.table)
    if head.latest_text is not None:
        # The head's copy of the latest snapshot, when it is the head's snapshot (see store.Head).
        snapshot = head.latest_snapshot()
        if snapshot is not None and snapshot.get("id") == head.snapshot_id:
            return table_snapshot_json(snapshot, head.totals)
    stored = store.get_snapshot(table.uid, head.snapshot_id, table.branch)
    if stored is None:
        raise EntityNotFoundException(f"Snapshot {head.snapshot_id} is missing.", SNAPSHOT, str(head.snapshot_id))
    return table_snapshot_json(stored.snapshot(), head.totals)


# ---------------------------------------------------------- statistics left past the budget
STATS_JOB = "paimon-stats"


def _settled(table: TableBranch, deadline: float) -> store.Head:
    """The head settled within ``deadline``; ConcurrentModificationException while statistics of
    the last move are still left: a move decided now would apply its own before them."""
    head = settle(table, deadline)
    if head.pending is not None:
        raise ConcurrentModificationException(
            "The last commit's partition statistics are still being applied; retry in a few seconds")
    return head


def _finish_stats_later(table: TableBranch) -> None:
    """Have a cleaner go on with the statistics a move left ``pending`` past its work budget."""
    ref = table.ref
    cleanup.enqueue(catalog.cleanup_job(STATS_JOB, table.uid, catalog=ref.catalog_key, database=ref.database,
                                        name=ref.table))


def _stats_job(job: Any, deadline: float) -> bool:
    """A ``STATS_JOB`` chunk: settle the table's head until ``deadline``; True when nothing is
    pending any more (or the table is gone or renamed: its purge, or its next call, sees to it)."""
    try:
        table = open_table(TableRef(job.catalog, "", job.database, job.name))
    except EntityNotFoundException:
        return True
    if table.uid != job.uid:
        return True
    return settle(table, deadline).pending is None  # (waiting while another applier holds them)


cleanup.register_kind(STATS_JOB, _stats_job)


# ------------------------------------------------------------------------------ rollback
_UNCOUNTED = 1 << 60  # a removal within a request is bounded by its deadline, not by a count of items


def rollback(ref: TableRef, snapshot_id: Optional[int], tag: Optional[str],
             from_snapshot: Optional[int]) -> None:
    """Move the branch back to a snapshot (or a tag's), with its partition statistics; the
    snapshots above it and their files are removed."""
    table = checked_open("PaimonRollback", ref)
    deadline = paging.work_deadline()
    head = _settled(table, deadline)
    if tag is not None:
        found = tag_files.find_tag(table.uid, table.path, tag, table.branch)
        if found is None:
            raise EntityNotFoundException(f"Tag {tag} does not exist.", TAG, tag)
        snapshot_id = found.snapshot_id
    assert snapshot_id is not None
    if head.snapshot_id is None or not 0 < snapshot_id <= head.snapshot_id:
        raise EntityNotFoundException(f"Snapshot {snapshot_id} does not exist.", SNAPSHOT, str(snapshot_id))
    if from_snapshot is not None and from_snapshot != head.snapshot_id:
        raise ConcurrentModificationException(f"Latest snapshot {head.snapshot_id} is not {from_snapshot}")
    target = snapshot_of(table, snapshot_id)
    if target is None:
        raise EntityNotFoundException(f"Snapshot {snapshot_id} does not exist.", SNAPSHOT, str(snapshot_id))
    if snapshot_id == head.snapshot_id:
        return
    rolled = store.snapshots_between(table.uid, snapshot_id, head.snapshot_id, table.branch)
    undone = [d.negated() for d in sum_by_partition(d for s in rolled for d in s.deltas)]
    if not store.rollback(table.uid, head, target, undone):
        raise ConcurrentModificationException("The table was committed to meanwhile; the rollback was not applied")
    seq = head.stats_seq + 1
    applied = not undone or _apply_stats(table, seq, undone, deadline)
    if applied:
        store.clear_pending(table.uid, seq, table.branch)
    _unpublish_above(table, snapshot_id, head.snapshot_id)
    if _write_latest(table, snapshot_id, seq) and not store.finish(table.uid, snapshot_id, seq, table.branch, applied):
        _republish(table)
    if not applied:
        _finish_stats_later(table)
    tag_files.clean_tags_above(table.uid, table.path, snapshot_id, table.branch)
    created = 0 if table.branch == MAIN else store.branch_created(table.uid, table.branch)
    if created is None:
        return  # the branch was dropped meanwhile, and its snapshot items with it
    orphans = f"{snapshot_id}:{head.snapshot_id}:{head.stats_seq}:{created}"
    if not remove_orphans(table.uid, table.branch, orphans, deadline):
        cleanup.enqueue(catalog.cleanup_job(ORPHANS_JOB, catalog.new_uid(), table_uid=table.uid, name=table.branch,
                                            snapshots=orphans))


def remove_orphans(table_uid: str, branch: str, orphans: str, deadline: float) -> bool:
    """Delete the snapshot items a rollback orphaned (``orphans``: "target:old head:its
    stats_seq:the branch's creation", see ``store.delete_rolled_back``) until ``deadline``; True
    when done, or when the branch is no longer the one rolled back (dropped, perhaps created
    again: a drop removes every item of its branch, and a new one's must stay). Their files went
    in the rollback's request: a file-system reader takes the highest snapshot file as the
    latest, so none may outlive the rollback, while an orphaned item is harmless."""
    target, upto, seq, created = (int(part) for part in orphans.split(":"))
    if branch != MAIN and store.branch_created(table_uid, branch) != created:
        return True
    with catalog.purging(catalog.Budget(_UNCOUNTED, deadline)):
        try:
            store.delete_rolled_back(table_uid, target, upto, seq, branch)
        except catalog.BudgetSpent:
            return False
    return True


# The items of the snapshots a rollback removed: any number, so deleted within its work budget
# and by a job of this kind after it (a table dropped meanwhile is purged whole: nothing left).
ORPHANS_JOB = "paimon-orphans"
cleanup.register_kind(ORPHANS_JOB, lambda job, deadline: remove_orphans(job.member("table_uid"), job.member("name"),
                                                                        job.member("snapshots"), deadline))


def _unpublish_above(table: TableBranch, snapshot_id: int, upto: int) -> None:
    """Delete the files of rolled-back snapshots, newest first: a file-system reader takes
    ``snapshot-(LATEST+1)`` or the highest file listed as the latest, so none may outlive the
    rollback (their item is harmless: the next commit of that id overwrites it)."""
    warehouse.delete_many([warehouse.snapshot_file(table.path, number, table.branch)
                           for number in range(upto, snapshot_id, -1)])


# ------------------------------------------------------------------------------ tags
def _duration_seconds(text: str) -> float:
    """Paimon's duration text (``TimeUtils.parseDuration``: a number and a unit, ms if none)."""
    units = {("ns", "nano", "nanosecond", "nanoseconds"): 1e-9, ("µs", "micro", "microsecond", "microseconds"): 1e-6,
             ("", "ms", "milli", "millisecond", "milliseconds"): 1e-3, ("s", "sec", "second", "seconds"): 1.0,
             ("m", "min", "minute", "minutes"): 60.0, ("h", "hour", "hours"): 3600.0, ("d", "day", "days"): 86400.0}
    trimmed = text.strip().lower()
    digits = len(trimmed) - len(trimmed.lstrip("0123456789"))
    number, unit = trimmed[:digits], trimmed[digits:].strip()
    if number:
        for names, scale in units.items():
            if unit in names:
                return int(number) * scale
    raise InvalidInputException(f"timeRetained must be a duration such as '1 d', '12h' or '30 min', not {text!r}")


def create_tag(ref: TableRef, name: str, snapshot_id: Optional[int], time_retained: Optional[str]) -> None:
    """Tag a snapshot (the latest when ``snapshot_id`` is None): its item, then ``tag/tag-NAME``."""
    table = checked_open("PaimonWriteTags", ref)
    _check_tag_name(name)
    retained = _duration_seconds(time_retained) if time_retained is not None else None
    head = settle(table)
    number = head.snapshot_id if snapshot_id is None else snapshot_id
    if number is None or head.snapshot_id is None or not 0 < number <= head.snapshot_id:
        raise EntityNotFoundException(f"Snapshot {number} does not exist.", SNAPSHOT, str(number))
    stored = snapshot_of(table, number)
    if stored is None:
        raise EntityNotFoundException(f"Snapshot {number} does not exist.", SNAPSHOT, str(number))
    text = tag_text(stored.snapshot(), now_utc(), retained)
    if warehouse.exists(warehouse.tag_file(table.path, name, table.branch)) or \
            not store.create_tag(table.uid, name, number, text, table.branch):
        raise AlreadyExistsException(f"Tag {name} already exists.", TAG, name)
    warehouse.put(warehouse.tag_file(table.path, name, table.branch), text)


def _check_tag_name(name: str) -> None:
    """Paimon's TagManager check (not blank), plus what a file name cannot hold: the tag is the
    file ``tag/tag-NAME``, and a ``/`` would put it in (or above) another directory."""
    if not name.strip():
        raise InvalidInputException("Tag name is blank.")
    if "/" in name or "\\" in name or any(ord(c) < 32 for c in name):
        raise InvalidInputException(f"Tag name {name[:200]!r} must not contain '/', '\\' or control characters.")


def get_tag(ref: TableRef, name: str) -> dict[str, Any]:
    """GetTagResponse JSON."""
    table = checked_open("PaimonReadTags", ref)
    found = tag_files.find_tag(table.uid, table.path, name, table.branch)
    if found is None:
        raise EntityNotFoundException(f"Tag {name} does not exist.", TAG, name)
    raw = found.tagged()
    retained = raw.pop("tagTimeRetained", None)
    raw.pop("tagCreateTime", None)
    # ISO-8601 as Paimon's servers answer (Java Duration); the file keeps decimal seconds.
    return {"tagName": found.name, "snapshot": raw, "tagCreateTime": found.created,
            "tagTimeRetained": None if retained is None else iso_duration(retained)}


def list_tags(ref: TableRef, after: Optional[str], limit: int, prefix: Optional[str]) -> tuple[list[str], Optional[str]]:
    """A page of tag names in name order (those starting with ``prefix``), and the last name
    when more may follow."""
    table = checked_open("PaimonReadTags", ref)
    return tag_files.list_tag_names(table.uid, table.path, after, limit, prefix, table.branch)


def delete_tag(ref: TableRef, name: str) -> None:
    """Remove a tag: its item, then its file."""
    table = checked_open("PaimonWriteTags", ref)
    if not store.delete_tag(table.uid, name, table.branch) and \
            tag_files.find_tag(table.uid, table.path, name, table.branch) is None:  # nor a client's tag file
        raise EntityNotFoundException(f"Tag {name} does not exist.", TAG, name)
    warehouse.delete(warehouse.tag_file(table.path, name, table.branch))


# ------------------------------------------------------------------------------ partitions
def partition_name(table: TableBranch, values: Sequence[str]) -> str:
    """Paimon's partition name: ``k1=v1/k2=v2``."""
    return "/".join(f"{k}={v}" for k, v in zip(table.keys, values))


def list_partitions(ref: TableRef, after: Optional[str], limit: int, prefix: str = "",
                    exact: Optional[str] = None) -> tuple[list[dict[str, Any]], Optional[str]]:
    """A page of Partition JSON in partition order (pending statistics rolled forward first),
    and the resume position (a partition sort key) when more follow. Only partitions whose name
    (``k1=v1/k2=v2``) is ``exact``, or else starts with ``prefix``."""
    table = checked_open("PaimonListPartitions", ref)

    def matches(name: str) -> bool:
        return name == exact if exact is not None else name.startswith(prefix)

    settle(table)
    if not table.keys:
        return [], None
    bounds = _name_bounds(table, exact if exact is not None else prefix)
    if bounds is None:
        return [], None
    low, high = bounds
    demand = Demand(limit + 1)

    def render(record: Any) -> Optional[dict[str, Any]]:
        values = list(record.values)
        if not matches(partition_name(table, values)):
            return None
        demand.keep()
        return partition_json(dict(zip(table.keys, values)), int(record.p_records or 0),
                              int(record.p_bytes or 0), int(record.p_files or 0), int(record.p_last or 0),
                              done=is_done(record.doc))

    # Within the response's byte and work budgets: a long run of partitions whose names do not
    # match ends the call with a token after the last one examined.
    return take_page(store.partition_stats(table.uid, low=low, high=high, after=after, demand=demand),
                     limit, render, lambda record: record.key)


def _name_bounds(table: TableBranch, name_prefix: str) -> Optional[tuple[Optional[str], Optional[str]]]:
    """Inclusive sort-key bounds (None: unbounded) holding every partition whose name starts
    with ``name_prefix`` (``k1=v1...``, as Paimon's ``dt=2024%``): a prefix on the first key's
    value is a key range, so a listing reads the matches only. None if no name can start so."""
    head = f"{table.keys[0]}="
    if not name_prefix.startswith(head):
        return (None, None) if head.startswith(name_prefix) else None
    # The first value runs to the next "/" at the earliest (a value may hold "/" itself, so the
    # text before the first "/" is a prefix of it, perhaps all of it).
    value_prefix = name_prefix[len(head):].split("/", 1)[0]
    return first_value_prefix_bounds(value_prefix, table.key_types) or (None, None)


def create_partitions(ref: TableRef, specs: Sequence[dict[str, str]],
                      ignore_if_exists: bool) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Register partitions (no data): (created, existed). With ``ignore_if_exists`` false and
    any existing, AlreadyExistsException and nothing is created."""
    table = checked_open("PaimonCreatePartitions", ref)
    check_specs(table, specs, "partitionSpecs")
    if table.branch != MAIN:
        raise InvalidInputException("partitions belong to the main branch")
    with access.checked():  # PaimonCreatePartitions covers the existence check
        found, _ = glue_partitions.batch_get_partitions(table.ref, [_values(table, s) for s in specs])
    present = {tuple(p["Values"]) for p in found}
    existed = [s for s in specs if tuple(_values(table, s)) in present]
    if existed and not ignore_if_exists:
        raise AlreadyExistsException(f"Partition already exists: {partition_name(table, _values(table, existed[0]))}")
    todo, seen = [], set()
    for spec in specs:
        values = tuple(_values(table, spec))
        if values in present or values in seen:
            continue
        seen.add(values)
        todo.append(spec)
    with access.checked():
        errors = glue_partitions.create_partitions(table.ref, [
            {"Values": _values(table, s), "StorageDescriptor": {"Location": _partition_path(table, s)}}
            for s in todo])
    created = [s for n, s in enumerate(todo) if n not in errors]
    for n, error in errors.items():
        if not isinstance(error, AlreadyExistsException):
            raise error
        existed.append(todo[n])
    return created, existed


# ------------------------------------------------------------------------------ branches
def _check_branch_name(name: str) -> None:
    """Paimon's BranchManager.validateBranch, plus what a path segment cannot hold."""
    if name == MAIN:
        raise InvalidInputException(f"Branch name '{name}' is the default branch and cannot be used.")
    if not name.strip():
        raise InvalidInputException("Branch name is blank.")
    if name.isdigit():
        raise InvalidInputException(f"Branch name cannot be pure numeric string but is '{name}'.")
    if "/" in name or "$" in name or "\\" in name or any(ord(c) < 32 for c in name):
        raise InvalidInputException(f"Branch name {name[:200]!r} must not contain '/', '$', '\\' or control "
                                    "characters.")


def list_branches(ref: TableRef) -> list[str]:
    """The table's branch names, in order (main not included, as Paimon lists them)."""
    table = checked_open("PaimonReadBranches", ref)
    return store.list_branches(table.uid)


def create_branch(ref: TableRef, name: str, from_tag: Optional[str]) -> None:
    """A branch from the latest schema (empty), or from a tag: that snapshot as its first, with
    the schemas up to the snapshot's (Paimon's FileSystemBranchManager copies the same files)."""
    table = checked_open("PaimonWriteBranches", ref)
    _check_branch_name(name)
    start = None
    tag = None
    if from_tag is not None:
        tag = tag_files.find_tag(table.uid, table.path, from_tag, table.branch)
        if tag is None:
            raise EntityNotFoundException(f"Tag {from_tag} does not exist.", TAG, from_tag)
        start = snapshot_of(table, tag.snapshot_id)
        if start is None:
            raise EntityNotFoundException(f"Snapshot {tag.snapshot_id} of tag {from_tag} does not exist.", SNAPSHOT,
                                          str(tag.snapshot_id))
    schemas = store.list_schemas(table.uid, table.branch)
    schema_id = start.snapshot()["schemaId"] if start is not None else schemas[-1][0]
    schemas = [(n, text) for n, text in schemas if n <= schema_id]
    source = {"tag": from_tag, "snapshotId": start.snapshot_id} if start is not None else {"branch": table.branch}
    if not store.create_branch(table.uid, name, source, schemas[-1], start):
        if store.branch_state(table.uid, name) != "dropped":
            raise AlreadyExistsException(f"Branch {name} already exists.", BRANCH, name)
        _finish_drop(table, name)
        if not store.create_branch(table.uid, name, source, schemas[-1], start):
            raise AlreadyExistsException(f"Branch {name} already exists.", BRANCH, name)
    for number, text in schemas:
        warehouse.put(warehouse.schema_file(table.path, number, name), text)
    if start is not None and tag is not None and from_tag is not None:
        store.create_tag(table.uid, from_tag, start.snapshot_id, tag.text, name)
        warehouse.put(warehouse.tag_file(table.path, from_tag, name), tag.text)
        settle(replace(table, branch=name, head=None))


def drop_branch(ref: TableRef, name: str) -> None:
    """Remove a branch: gone at once (its item becomes a tombstone), then what it left (items,
    directory: any number of snapshots) within the work budget, the rest by a cleanup job."""
    table = checked_open("PaimonWriteBranches", ref)
    deadline = paging.work_deadline()
    if name == MAIN or not store.drop_branch(table.uid, name):
        raise EntityNotFoundException(f"Branch {name} does not exist.", BRANCH, name)
    root = warehouse.branch_root(table.path, name)
    if not remove_dropped_branch(table.uid, name, root, deadline):
        cleanup.enqueue(catalog.cleanup_job(BRANCH_JOB, catalog.new_uid(), table_uid=table.uid, name=name,
                                            path=root))


def remove_dropped_branch(table_uid: str, name: str, root: str, deadline: float) -> bool:
    """Remove what a dropped branch left until ``deadline``: its items, then its directory
    ``root``, then its tombstone, which kept the name (and so the directory) from a new branch
    meanwhile. True when done; False: call again (idempotent)."""
    with catalog.purging(catalog.Budget(_UNCOUNTED, deadline)):
        try:
            store.remove_branch_items(table_uid, name)
        except catalog.BudgetSpent:
            return False
    if not warehouse.delete_tree(root, deadline):
        return False
    store.forget_branch(table_uid, name)
    return True


BRANCH_JOB = "paimon-branch"
cleanup.register_kind(BRANCH_JOB, lambda job, deadline: remove_dropped_branch(job.member("table_uid"), job.member("name"),
                                                                              job.member("path"), deadline))


def _finish_drop(table: TableBranch, name: str) -> None:
    """Before taking ``name`` for a branch, held by a dropped branch still being removed: finish
    the removal within this request's budget, or AlreadyExistsException (409) while it goes on."""
    if not remove_dropped_branch(table.uid, name, warehouse.branch_root(table.path, name), paging.work_deadline()):
        raise _still_dropping(name)


def _still_dropping(name: str) -> AlreadyExistsException:
    return AlreadyExistsException(f"Branch {name} was dropped and is still being removed; try again shortly.",
                                  BRANCH, name)


def fast_forward(ref: TableRef, name: str) -> None:
    """Main takes the branch's state (Paimon's fastForward): main's snapshots from the branch's
    first on become the branch's, schemas likewise, partition statistics follow (main's undone,
    the branch's applied), then the files. One transaction decides it (so a branch with more
    than MAX_FAST_FORWARD_ITEMS snapshots and schemas to copy is refused)."""
    table = checked_open("PaimonWriteBranches", ref)
    if name == MAIN or not store.branch_exists(table.uid, name):
        raise EntityNotFoundException(f"Branch {name} does not exist.", BRANCH, name)
    deadline = paging.work_deadline()
    source = replace(table, branch=name, head=None)
    branch = settle(source)
    main = _settled(replace(table, branch=MAIN, head=None), deadline)
    if branch.snapshot_id is None:
        raise InvalidInputException(f"Branch {name} has no snapshot to fast-forward main to.")
    # A branch past the limit is refused below: reading one more than the limit tells (a branch
    # may hold any number of snapshots, which the request would read only to refuse them).
    copied = store.snapshots_between(table.uid, 0, branch.snapshot_id, name, limit=store.MAX_FAST_FORWARD_ITEMS + 1)
    first = copied[0].snapshot_id
    schemas = store.list_schemas(table.uid, name)
    first_schema = copied[0].snapshot()["schemaId"]
    schemas = [(n, text) for n, text in schemas if n >= first_schema]
    main_schemas = [n for n, _ in store.list_schemas(table.uid, MAIN)]
    drop_snapshots = list(range(branch.snapshot_id + 1, (main.snapshot_id or 0) + 1))
    drop_schemas = [n for n in main_schemas if n > schemas[-1][0]]
    if len(copied) + len(drop_snapshots) + len(schemas) + len(drop_schemas) > store.MAX_FAST_FORWARD_ITEMS:
        raise InvalidInputException(
            f"Branch {name} has too many snapshots and schemas to fast-forward in one step "
            f"(at most {store.MAX_FAST_FORWARD_ITEMS})")
    undone = [d.negated() for s in store.snapshots_between(table.uid, first, main.snapshot_id or 0)
              for d in s.deltas]
    deltas = sum_by_partition(undone + [d for s in copied for d in s.deltas])
    main_table = replace(table, branch=MAIN, head=None)
    if not store.fast_forward(table.item, main, branch, copied, drop_snapshots, schemas, drop_schemas, deltas):
        raise ConcurrentModificationException("Main was committed to meanwhile; the fast-forward was not applied")
    seq = main.stats_seq + 1
    applied = not deltas or _apply_stats(main_table, seq, deltas, deadline)
    if applied:
        store.clear_pending(table.uid, seq, MAIN)
    _unpublish_above(main_table, branch.snapshot_id, max(drop_snapshots, default=branch.snapshot_id))
    for number in drop_schemas:
        warehouse.delete(warehouse.schema_file(table.path, number))
    for number, text in schemas:
        warehouse.put(warehouse.schema_file(table.path, number), text)
    _publish(main_table, store.Head(MAIN, branch.snapshot_id, branch.snapshot_uuid, branch.totals, seq, None,
                                    first - 1), {s.snapshot_id: s.text for s in copied}, applied)
    if not applied:
        _finish_stats_later(main_table)


def rename_branch(ref: TableRef, old: str, new: str) -> None:
    """Rename a branch: its items move in one transaction, then its directory is copied to the
    new name and the old one removed (a reader of the old name finds no branch from the decision
    on; one of the new name may briefly find files missing, as while a branch is being created)."""
    table = checked_open("PaimonWriteBranches", ref)
    _check_branch_name(new)
    if old == MAIN:
        raise InvalidInputException("The main branch cannot be renamed.")
    outcome = store.rename_branch(table.uid, old, new)
    if outcome == "dropped":
        _finish_drop(table, new)
        outcome = store.rename_branch(table.uid, old, new)
    if outcome == "dropped":  # dropped again meanwhile
        raise _still_dropping(new)
    if outcome == "missing":
        raise EntityNotFoundException(f"Branch {old} does not exist.", BRANCH, old)
    if outcome == "exists":
        raise AlreadyExistsException(f"Branch {new} already exists.", BRANCH, new)
    if outcome == "too_many":
        raise InvalidInputException(f"Branch {old} has too many snapshots, schemas and tags to rename in one step "
                                    f"(at most {store.MAX_RENAMED_ITEMS})")
    source, target = warehouse.branch_root(table.path, old), warehouse.branch_root(table.path, new)
    for uri in warehouse.list_prefix(source):
        data = warehouse.get(uri)
        if data is not None:
            warehouse.put(target + uri[len(source):], data)
    warehouse.delete_tree(source)
