"""What Paimon's Java RESTCatalog reads of a table's history and its readers' progress
(protocol-free): a snapshot by version, the snapshot list, consumers and their reset.

As Paimon's REST server (``RESTCatalogServer``): a version is ``EARLIEST``, ``LATEST``, a
snapshot id or a tag name (a tag's snapshot, its tag fields cut); snapshots list newest first
from the latest to the earliest the table keeps (``snapshot/EARLIEST``, which clients' snapshot
expiry moves); consumers are the ``consumer/consumer-ID`` files (``{"nextSnapshot": N}``) a
streaming reader writes, and a reset writes one (a next snapshot that exists) or removes it.
"""

from __future__ import annotations

from typing import Any, Optional

from chalicelib.errors import EntityNotFoundException, InvalidInputException
from chalicelib.service import paimon_snapshots as snapshots
from chalicelib.service import paimon_tag_files as tag_files
from chalicelib.service.table_ref import TableRef
from chalicelib.store import paimon as store
from chalicelib.store import paimon_history as files

SNAPSHOT = "SNAPSHOT"
_TAG_FIELDS = ("tagCreateTime", "tagTimeRetained")
# A page of the list reads at most this many snapshot files below a registered table's items
# (missing ones, expired by a client, are passed over) before it answers with what it found.
_FILE_PROBES_PER_PAGE = 200
MAX_CONSUMER_ID_BYTES = 248  # the file name is consumer-ID: a file system caps it at 255 bytes


def _open(action: str, ref: TableRef) -> snapshots.TableBranch:
    return snapshots.checked_open(action, ref)


def _earliest(table: snapshots.TableBranch) -> int:
    return max(1, files.earliest_hint(table.path, table.branch) or 1)


def _missing(version: str) -> EntityNotFoundException:
    return EntityNotFoundException(f"Snapshot {version[:200]} does not exist.", SNAPSHOT, version[:200])


def snapshot_at(ref: TableRef, version: str) -> dict[str, Any]:
    """The Snapshot JSON ``version`` names; EntityNotFoundException (SNAPSHOT) when none."""
    table = _open("PaimonLoadSnapshot", ref)
    head = snapshots.settle(table)
    latest = head.snapshot_id
    if version in ("EARLIEST", "LATEST") or version.isdigit():
        if latest is None:
            raise _missing(version)
        if version == "LATEST":
            number = latest
        elif version == "EARLIEST":
            earliest = _earliest(table)
            first = snapshots.snapshot_of(table, earliest) if earliest <= latest else None
            if first is not None:
                return first.snapshot()
            found = store.snapshots_between(table.uid, earliest - 1, latest, table.branch, limit=1)
            number = found[0].snapshot_id if found else latest
        else:
            number = int(version)
            if not _earliest(table) <= number <= latest:
                raise _missing(version)
        stored = snapshots.snapshot_of(table, number)
        if stored is None:
            raise _missing(version)
        return stored.snapshot()
    tag = tag_files.find_tag(table.uid, table.path, version, table.branch)
    if tag is None:
        raise _missing(version)
    raw = tag.tagged()
    for name in _TAG_FIELDS:
        raw.pop(name, None)
    return raw


def list_snapshots(ref: TableRef, before: Optional[int], limit: int) -> tuple[list[dict[str, Any]], Optional[int]]:
    """A page of the Snapshot JSONs, newest first, below ``before`` (a snapshot id, from the
    previous page); and the last id when more may follow."""
    table = _open("PaimonLoadSnapshot", ref)
    head = snapshots.settle(table)
    if head.snapshot_id is None:
        return [], None
    high = head.snapshot_id if before is None else min(before - 1, head.snapshot_id)
    low = _earliest(table)
    found = files.snapshots_below(table.uid, high, low, limit + 1, table.branch)
    floor = files.adopted_floor(table.uid) if len(found) <= limit and table.branch == snapshots.MAIN else None
    if floor is None:
        page = found[:limit]
        return [s.snapshot() for s in page], (page[-1].snapshot_id if len(found) > limit and page else None)
    # A registered table: below its items (which are contiguous down from the head), the
    # directory's files, read a few at a time, until the page is full or the probes are spent.
    page = found
    below = min(high, floor - 1, found[-1].snapshot_id - 1 if found else high)
    probed = 0
    while len(page) < limit and below >= low and probed < _FILE_PROBES_PER_PAGE:
        ids = list(range(below, max(low, below - min(limit - len(page), 16)) - 1, -1))
        read = files.read_snapshot_files(table.path, ids)
        page += [read[n] for n in ids if n in read]
        probed += len(ids)
        below = ids[-1] - 1
    page = page[:limit]
    if below < low:
        return [s.snapshot() for s in page], None
    # More may follow: the next page begins below the last id looked at.
    return [s.snapshot() for s in page], (page[-1].snapshot_id if len(page) == limit else below + 1)


def check_consumer_id(consumer_id: str) -> None:
    """A consumer id becomes the file name ``consumer-ID``: not blank, no directory parts."""
    if not consumer_id.strip() or consumer_id in (".", "..") or "/" in consumer_id or "\\" in consumer_id \
            or any(ord(c) < 32 for c in consumer_id):
        raise InvalidInputException(f"consumerId {consumer_id[:200]!r} must be non-blank, without '/', '\\' "
                                    "or control characters")
    if len(consumer_id.encode("utf-8")) > MAX_CONSUMER_ID_BYTES:
        raise InvalidInputException(f"consumerId must be at most {MAX_CONSUMER_ID_BYTES} bytes of UTF-8")


def list_consumers(ref: TableRef, after: Optional[str], limit: int) -> tuple[list[tuple[str, int]], Optional[str]]:
    """A page of (consumer id, next snapshot) in id order after ``after``; the last id when
    more follow."""
    table = _open("PaimonReadConsumers", ref)
    found = sorted(files.consumers(table.path, table.branch).items())
    found = [(name, next_id) for name, next_id in found if after is None or name > after]
    if len(found) > limit:
        return found[:limit], found[limit - 1][0]
    return found, None


def reset_consumer(ref: TableRef, consumer_id: str, next_snapshot: Optional[int]) -> None:
    """Set a consumer's next snapshot (which must exist: 404 SNAPSHOT), or remove the consumer
    when ``next_snapshot`` is None, as Paimon's ConsumerManager does."""
    table = _open("PaimonWriteConsumers", ref)
    check_consumer_id(consumer_id)
    if next_snapshot is None:
        files.delete_consumer(table.path, consumer_id, table.branch)
        return
    head = snapshots.settle(table)
    if head.snapshot_id is None or not _earliest(table) <= next_snapshot <= head.snapshot_id \
            or snapshots.snapshot_of(table, next_snapshot) is None:
        raise _missing(str(next_snapshot))
    files.write_consumer(table.path, consumer_id, next_snapshot, table.branch)
