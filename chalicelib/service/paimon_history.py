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
MAX_ADOPTED_SNAPSHOTS = 1000  # a register adopts the latest this many snapshot files as items
MAX_CONSUMER_ID_BYTES = 248  # the file name is consumer-ID: a file system caps it at 255 bytes


def _open(action: str, ref: TableRef) -> snapshots.TableBranch:
    return snapshots.checked_open(action, ref)


def _earliest(table: snapshots.TableBranch) -> int:
    return max(1, files.earliest_hint(table.path, table.branch) or 1)


def _not_held(table: snapshots.TableBranch, number: int, latest: int) -> Optional[EntityNotFoundException]:
    """Of a snapshot the directory's EARLIEST still names but no item holds: the register's
    limit, in words, when the table's items begin above it (a register adopts the latest
    MAX_ADOPTED_SNAPSHOTS files; older ones stay files only)."""
    lowest = store.snapshots_between(table.uid, number, latest, table.branch, limit=1)
    if not lowest or lowest[0].snapshot_id <= number:
        return None
    return EntityNotFoundException(
        f"Snapshot {number} is older than the snapshots this catalog holds for the table (from "
        f"{lowest[0].snapshot_id}): a registered table's history begins at the latest {MAX_ADOPTED_SNAPSHOTS:,} "
        "snapshots of its directory; older ones are in its files only.", SNAPSHOT, str(number))


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
            found = store.snapshots_between(table.uid, _earliest(table) - 1, latest, table.branch, limit=1)
            number = found[0].snapshot_id if found else latest
        else:
            number = int(version)
            if not _earliest(table) <= number <= latest:
                raise _missing(version)
        stored = store.get_snapshot(table.uid, number, table.branch)
        if stored is None:
            raise _not_held(table, number, latest) or _missing(version)
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
    found = files.snapshots_below(table.uid, high, _earliest(table), limit + 1, table.branch)
    page = found[:limit]
    more = len(found) > limit
    return [s.snapshot() for s in page], (page[-1].snapshot_id if more and page else None)


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
            or store.get_snapshot(table.uid, next_snapshot, table.branch) is None:
        raise _missing(str(next_snapshot))
    files.write_consumer(table.path, consumer_id, next_snapshot, table.branch)
