"""Rendered partitions of warm unindexed listings (issue #46): the response JSON text of the
partitions an unindexed GetPartitions fetched by key through the table's digest, kept in this
process so the next listing of them need not fetch them (4 BatchGetItems, ~28 ms for 364 keys)
nor render them again (~11 ms).

Validated on every request, by what the request reads anyway: the keys of the table's digest
items (``DigestSource.identity``, read strongly consistent at the start of every page). Every
partition transaction puts a digest item under a fresh key (store/partitions.py), compaction and
rebuilds write fresh keys too, and keys are never reused, so a set of digest keys seen once is
never seen again after any partition write, from any process: an entry is served only to a
reader that read the very digest keys it was stored under. What is stored was fetched after those
keys were read, so it is at least as new as they are.

An entry is a partition's values and segment (the listing still checks them) and its rendered
text for one flavour (the names the answer carries and ExcludeColumnSchema), or a key found
missing (a stale digest row: still counted as a miss, for pruning). Only the Glue rendering is
cached: it reads nothing of the item but its document, which only a partition transaction
changes (Paimon's statistics, updated without a digest item, are not in it). A byte-bounded LRU
(``GLUE_PARTITION_CACHE_BYTES``, 0: off); entries of outdated digest keys are dropped when met,
or age out.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Optional, Sequence

from chalicelib import settings

LIMIT_BYTES = settings.current().partition_cache_bytes
_ENTRY_OVERHEAD = 240  # the tuple, the key and the dict slot, roughly


class Cached:
    """A partition served from the cache: what a listing reads of a stored partition, and its
    rendered text (None: the key was missing)."""

    __slots__ = ("key", "values", "segment", "text", "size")

    def __init__(self, key: str, values: Optional[tuple[str, ...]], segment: int,
                 text: Optional[str], size: int) -> None:
        self.key, self.values, self.segment, self.text, self.size = key, values, segment, text, size


_entries: OrderedDict[tuple[str, str], tuple[tuple, tuple, Cached, int]] = OrderedDict()
_bytes = 0
_lock = threading.Lock()


def enabled() -> bool:
    return LIMIT_BYTES > 0


def lookup(table_uid: str, identity: tuple, flavour: tuple, keys: Sequence[str]) -> dict[str, Cached]:
    """The entries of ``keys`` stored under exactly this digest ``identity`` and ``flavour``."""
    found: dict[str, Cached] = {}
    if not enabled():
        return found
    global _bytes
    with _lock:
        for key in keys:
            slot = (table_uid, key)
            entry = _entries.get(slot)
            if entry is None:
                continue
            if entry[0] is not identity and entry[0] != identity:
                del _entries[slot]  # stored before a write: never valid again
                _bytes -= entry[3]
                continue
            if entry[1] != flavour:
                continue
            _entries.move_to_end(slot)
            found[key] = entry[2]
    return found


def store(table_uid: str, identity: tuple, flavour: tuple, item: Cached) -> None:
    """Keep ``item`` for readers of this digest ``identity`` and ``flavour``."""
    if not enabled():
        return
    global _bytes
    cost = _ENTRY_OVERHEAD + len(item.key) + (item.size if item.text is not None else 0) \
        + sum(len(v) for v in item.values or ())
    if cost > LIMIT_BYTES // 8:
        return  # one huge partition must not flush everything else
    slot = (table_uid, item.key)
    with _lock:
        old = _entries.pop(slot, None)
        if old is not None:
            _bytes -= old[3]
        _entries[slot] = (identity, flavour, item, cost)
        _bytes += cost
        while _bytes > LIMIT_BYTES and _entries:
            _, dropped = _entries.popitem(last=False)
            _bytes -= dropped[3]


def clear() -> None:
    """Forget everything (tests, benchmarks)."""
    global _bytes
    with _lock:
        _entries.clear()
        _bytes = 0


def held_bytes() -> int:
    return _bytes
