"""The queue of cleanup jobs: contents of deleted databases and tables, still to be deleted.

A job is written in the DynamoDB transaction that unlinks its database or table
(``catalog.delete_table_item`` / ``delete_database_item``), so a delete that answered has its
job, whatever happens next. Cleaners take jobs with a lease (``owner``, ``lease_until``), renew
it after every bounded chunk, and delete the job when nothing is left; a job whose lease ran out
(its cleaner died) is anyone's to take over. The purge itself is idempotent, so a stale owner
still deleting beside the new one does no harm; only the owner may delete the job.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import islice
from typing import Iterator, Optional

from pynamodb.expressions.update import Action

from chalicelib import clock, settings
from chalicelib.store.catalog import CLEANUP_QUEUE, as_cleanup_job, cleanup_item
from chalicelib.store.dynamo.models import CleanupJobItem
from chalicelib.store.records import CleanupJob
from chalicelib.store.dynamo.retry import conditional

LEASE_SECONDS = settings.current().cleanup_lease_seconds


# How many jobs a request helping with expired ones looks at, at most (two Query pages): the
# oldest come first and a job's lease runs out oldest first too, so expired jobs are at the
# front; those further back are the background cleaner's, or the next request's once the front
# is done. A request never walks a long queue.
HELP_SCAN_JOBS = 50
_PAGE = 25


def jobs(page_size: int = _PAGE, limit: Optional[int] = None) -> Iterator[CleanupJob]:
    """Every job (with ``limit``: the first that many), oldest first (strongly consistent)."""
    items = CleanupJobItem.query(CLEANUP_QUEUE, consistent_read=True, page_size=page_size, limit=limit)
    return map(as_cleanup_job, islice(items, limit) if limit is not None else iter(items))


def enqueue(job: CleanupJob) -> None:
    """Store a job written outside a delete's transaction (e.g. an index backfill that outlived
    its request)."""
    cleanup_item(job).save()


def claimable(job: CleanupJob, now: float, only_expired: bool) -> bool:
    """Whether a cleaner may take ``job`` now: its lease ran out, or (unless ``only_expired``)
    no one has taken it yet."""
    return job.lease_until < now or (not only_expired and job.owner is None)


def claim(job: CleanupJob, owner: str) -> Optional[CleanupJob]:
    """Take ``job`` for ``owner`` under a fresh lease, provided it is still as read (no one took
    it or renewed its lease meanwhile): the job as taken. None: someone else has it, or it is done."""
    condition = CleanupJobItem.lease_until == job.lease_until
    condition &= CleanupJobItem.owner == job.owner if job.owner else CleanupJobItem.owner.does_not_exist()
    until = clock.now() + LEASE_SECONDS
    item = cleanup_item(job)
    if conditional(lambda: item.update(actions=[CleanupJobItem.owner.set(owner), CleanupJobItem.lease_until.set(until)],
                                       condition=condition)):
        return replace(job, owner=owner, lease_until=until)
    return None


def next_job(owner: str, only_expired: bool) -> Optional[CleanupJob]:
    """Claim the oldest job that may be taken now (see ``claimable``); None if there is none
    (``only_expired``, a request helping: among the first ``HELP_SCAN_JOBS`` jobs only)."""
    now = clock.now()
    for job in jobs(limit=HELP_SCAN_JOBS if only_expired else None):
        if claimable(job, now, only_expired):
            claimed = claim(job, owner)
            if claimed is not None:
                return claimed
    return None


def renew(job: CleanupJob, release: bool = False) -> bool:
    """Extend the lease of a job we own (or, ``release``, let it go: anyone may take it at once).
    False if it is no longer ours (taken over after our lease ran out)."""
    until = clock.now() + (0.0 if release else LEASE_SECONDS)
    actions: list[Action] = [CleanupJobItem.lease_until.set(until)]
    if release:
        actions.append(CleanupJobItem.owner.remove())
    item = CleanupJobItem(job.queue, job.job)
    return conditional(lambda: item.update(actions=actions, condition=CleanupJobItem.owner == job.owner))


def finish(job: CleanupJob) -> bool:
    """Delete a job we own, its contents all gone; False if it is no longer ours."""
    item = CleanupJobItem(job.queue, job.job)
    return conditional(lambda: item.delete(condition=CleanupJobItem.owner == job.owner))
