"""Background cleanup of deleted databases and tables (docs/design.md, "Deleting in the background").

DeleteDatabase and DeleteTable unlink the item and record a cleanup job in one DynamoDB
transaction, and answer; the contents (tables of a database, versions, partitions, index
entries, statistics, governed-table objects, Paimon items, search postings) are deleted here, a
bounded chunk at a time under a lease (store.cleanup). Who runs it:

- the local server: a background thread (``serve_forever``), woken when a delete enqueues a job;
- deployed: the scheduled function in app.py (``run`` for most of a Lambda's time);
- any process: create and delete requests of databases and tables take over jobs whose lease ran
  out (``help_with_expired``), at most one bounded share every ``HELP_INTERVAL`` seconds, so a
  job whose cleaner died still finishes when no scheduler runs.
"""

from __future__ import annotations

import importlib
import logging
import threading
from typing import Callable, Optional

from chalicelib import clock, faults, settings
from chalicelib.service import search_index, tags
from chalicelib.store import catalog, catalog_entries, purge
from chalicelib.store import cleanup as store
from chalicelib.store.documents import decode_document
from chalicelib.store.records import CleanupJob, Table

log = logging.getLogger(__name__)

# One chunk: at most this many deletions, and this many seconds (well inside the lease, which
# is renewed after every chunk).
CHUNK_ITEMS = settings.current().cleanup_chunk_items
CHUNK_SECONDS = min(2.0, store.LEASE_SECONDS / 4)
# Requests take over expired jobs at most once per this many seconds (per process), for at
# most HELP_SECONDS.
HELP_INTERVAL = settings.current().cleanup_help_interval
HELP_SECONDS = 0.5
# The local server's cleaner looks for jobs of other processes this often (seconds).
POLL_SECONDS = settings.current().cleanup_poll_seconds

# How long the cleaner lets a delete that woke it finish its answer first.
SETTLE_SECONDS = 0.2

_wake = threading.Event()
# Other background work that outlived its request and goes through the same queue, leases and
# cleaners: job kind -> work(job, deadline (clock.monotonic)) -> True when done. E.g. the
# backfill of a large partition index (service.partition_indexes registers ``backfill``).
_other_kinds: dict[str, Callable[[CleanupJob, float], bool]] = {}
# Kinds whose chunks may run longer than CHUNK_SECONDS (still well inside the lease): each
# chunk of theirs starts by reading what it needs afresh, so short chunks would mostly read.
_chunk_seconds: dict[str, float] = {}
# The modules that register those kinds. A cleaner may run in a process that has served no
# request, so has imported none of them (the deployed scheduled function; the local server's
# thread before its first request): they are imported before any job is looked at. (Not at this
# module's import: they import it.)
_KIND_MODULES = ("chalicelib.service.partition_indexes", "chalicelib.service.partition_digest",
                 "chalicelib.service.transactions", "chalicelib.service.paimon_tables",
                 "chalicelib.service.paimon_snapshots")
# The kinds this module purges itself: the contents of a deleted table or database.
_PURGES = ("table", "database")
# What removes a table's files when its database was dropped with ``drop_files`` (a Paimon
# drop): remover(table item, deadline) -> True when done. Registered by the modules above.
_files_removers: list[Callable[[Table, float], bool]] = []
_help_lock = threading.Lock()
_next_help = 0.0


def enqueued() -> None:
    """A delete of this process recorded a job: wake this process's cleaner (if it has one)."""
    _wake.set()


def register_kind(kind: str, work: Callable[[CleanupJob, float], bool],
                  chunk_seconds: Optional[float] = None) -> None:
    """Let the cleaners run jobs of ``kind`` with ``work`` (see ``_other_kinds``), each chunk
    for at most ``chunk_seconds`` (default CHUNK_SECONDS; at most a third of the lease)."""
    _other_kinds[kind] = work
    if chunk_seconds is not None:
        _chunk_seconds[kind] = min(chunk_seconds, store.LEASE_SECONDS / 3)


def register_deletion_kind(kind: str, delete: Callable[[CleanupJob], None]) -> None:
    """Let the cleaners run jobs of ``kind`` that delete what ``delete(job)`` deletes, a
    budgeted chunk at a time (``delete`` deletes through ``catalog.delete_all`` /
    ``delete_items``, which stop at the budget)."""
    def work(job: CleanupJob, deadline: float) -> bool:
        with catalog.purging(catalog.Budget(CHUNK_ITEMS, deadline)):
            try:
                delete(job)
            except catalog.BudgetSpent:
                return False
        return True
    register_kind(kind, work)


def register_files_remover(remove: Callable[[Table, float], bool]) -> None:
    """Let the purge of a database dropped with ``drop_files`` remove its tables' files with
    ``remove(table, deadline)`` (True when done; False: the deadline came first, call again), each
    table's before its items are purged (they say where its files are)."""
    _files_removers.append(remove)


def enqueue(job: CleanupJob) -> None:
    """Store ``job`` (built by ``catalog.cleanup_job``) and wake this process's cleaner."""
    store.enqueue(job)
    enqueued()


def _purge_database(job: CleanupJob) -> None:
    # Tables first, each one's contents before its item (the item names what to purge), then
    # the database's own Paimon functions and postings. Every step deletes what is still there.
    for table in catalog.tables_of_unlinked_database(job.uid, page_size=25):
        if job.drop_files:
            _remove_files(table)
        purge.purge_table(table.uid, table.index_uids())
        doc = catalog.load(table)
        # A database job always names its catalog and database (catalog.delete_database_item).
        search_index.drop_unlinked_table(job.member("catalog"), job.member("database"), job.uid, doc)
        catalog.delete_unlinked_table_item(table)
    purge.purge_database(job.uid)
    if job.catalog is not None and job.database is not None:
        # Glue functions are keyed by database name and carry the uid; tags by the uid.
        catalog_entries.purge_database_functions(job.catalog, job.database, job.uid)
        tags.forget_resource(job.catalog, "database", job.uid)
    if job.doc is not None:
        search_index.drop_unlinked_database(job.member("catalog"), job.member("database"), job.uid,
                                            decode_document(job.doc))


def _remove_files(table: Table) -> None:
    deadline = catalog.purge_deadline()
    assert deadline is not None  # a purge runs within its chunk's budget (``work``)
    for remove in _files_removers:
        if not remove(table, deadline):
            raise catalog.BudgetSpent()


def _register_all_kinds() -> None:
    for module in _KIND_MODULES:
        importlib.import_module(module)


def known(kind: str) -> bool:
    """Whether this process can run jobs of ``kind``."""
    _register_all_kinds()
    return kind in _PURGES or kind in _other_kinds


def work(job: CleanupJob, budget: catalog.Budget) -> bool:
    """Delete what is left of a job's contents, within ``budget``; True when nothing is left.
    A job of a kind this process does not know (see ``known``) is never run: every kind but the
    purges names a live table, which must never be taken for a deleted one."""
    if not known(job.kind):
        return False
    other = _other_kinds.get(job.kind)
    if other is not None:
        return other(job, budget.deadline)
    with catalog.purging(budget):
        try:
            if job.kind == "database":
                _purge_database(job)
            else:
                purge.purge_table(job.uid, job.index_uids())
        except catalog.BudgetSpent:
            return False
    return True


def run(max_seconds: float, only_expired: bool = False, chunk_items: Optional[int] = None) -> int:
    """Take jobs and clean them up for about ``max_seconds`` (a chunk may end a little later),
    renewing each job's lease after every chunk; a job unfinished at the end is released for the
    next cleaner. ``only_expired``: take only jobs whose lease ran out (a request helping).
    Returns the number of jobs taken (0: none was free)."""
    owner = catalog.new_uid()
    deadline = clock.monotonic() + max_seconds
    taken = 0
    while clock.monotonic() < deadline:
        job = store.next_job(owner, only_expired)
        if job is None:
            break
        if not known(job.kind):
            # Written by a newer version of the service, say: keep the lease, so that no cleaner
            # takes it again before it runs out (perhaps one that knows the kind by then).
            log.error("cleanup job %s is of a kind this version does not know (%r): left for later", job.job, job.kind)
            continue
        taken += 1
        while True:
            chunk_deadline = min(deadline, clock.monotonic() + _chunk_seconds.get(job.kind, CHUNK_SECONDS))
            if work(job, catalog.Budget(chunk_items or CHUNK_ITEMS, chunk_deadline)):
                store.finish(job)
                break
            faults.crash_point("cleanup-after-chunk")
            if clock.monotonic() >= deadline:
                store.renew(job, release=True)
                return taken
            if not store.renew(job):
                break  # our lease ran out and another cleaner took the job over
    return taken


def help_with_expired() -> None:
    """Called by create and delete requests of databases and tables: take over jobs whose lease
    ran out, for at most HELP_SECONDS, at most once per HELP_INTERVAL in this process. A failure
    here is logged, never the request's."""
    global _next_help
    now = clock.monotonic()
    with _help_lock:
        if now < _next_help:
            return
        _next_help = now + HELP_INTERVAL
    try:
        run(HELP_SECONDS, only_expired=True)
    except Exception:  # noqa: BLE001 - the request's own work is done; the job stays for later
        log.exception("cleanup of deleted databases/tables failed; it will be retried")


def serve_forever(stop: threading.Event, poll_seconds: float = POLL_SECONDS) -> None:
    """A cleaner thread's loop (the local server's): run jobs until none is left, then wait for
    a delete of this process (``enqueued``) or ``poll_seconds`` (jobs of other processes,
    leases that ran out), until ``stop`` is set."""
    while not stop.is_set():
        try:
            while run(30.0) and not stop.is_set():
                pass
        except Exception:  # noqa: BLE001 - a store error must not end the cleaner; retried next round
            log.exception("cleanup of deleted databases/tables failed; it will be retried")
        if _wake.wait(poll_seconds):
            # Woken by a delete of this process: let that request answer before the cleaner
            # competes with it for the interpreter (its answer must not depend on the contents).
            stop.wait(SETTLE_SECONDS)
        _wake.clear()
