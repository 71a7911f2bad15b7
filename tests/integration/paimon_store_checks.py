"""Scenarios for test_paimon_store.py, run in a child process on the session's DynamoDB Local
(the store reads its endpoint and table prefix at import). Each prints a JSON result."""

from __future__ import annotations

import json
import sys
import threading
import uuid

from chalicelib.domain.paimon.snapshots import PartitionDelta, parse_snapshot
from chalicelib.store import catalog, paimon
from chalicelib.store.dynamo.models import PartitionItem, TableItem

SCHEMA = '{"version":3,"id":0,"fields":[],"partitionKeys":["dt"],"primaryKeys":[],"options":{}}'


def _snapshot(number: int) -> object:
    return parse_snapshot({"version": 3, "id": number, "schemaId": 0, "baseManifestList": "b",
                           "deltaManifestList": "d", "totalRecordCount": 0, "deltaRecordCount": 0,
                           "commitUser": "u", "commitIdentifier": number, "commitKind": "APPEND",
                           "timeMillis": 1, "uuid": str(uuid.uuid4())})


def _table() -> TableItem:
    item = TableItem(uuid.uuid4().hex, "t" + uuid.uuid4().hex[:8], uid=catalog.new_uid(), version=0, doc=b"J{}")
    item.save()
    assert paimon.create_table_state(item.uid, SCHEMA)
    return item


def _commit(table: TableItem, base: paimon.Head, number: int, deltas: list) -> bool:
    """A whole commit at the store level: the decision, then the snap item and the finish mark
    (what the service does around applying the statistics and writing the files)."""
    snapshot = _snapshot(number)
    if not paimon.commit_snapshot(base, table.uid, snapshot, deltas):
        return False
    head = paimon.get_head(table.uid)
    assert head.unsaved == number and head.latest_text == snapshot.text()
    paimon.save_snapshot(table.uid, head, snapshot.text())
    return paimon.finish(table.uid, number, head.stats_seq)


def racing() -> dict:
    table = _table()
    winners = []
    for number in range(1, 4):
        base = paimon.get_head(table.uid)
        results: list[bool] = []
        threads = [threading.Thread(target=lambda: results.append(
            _commit(table, base, number, []))) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        winners.append(sum(results))
    head = paimon.get_head(table.uid)
    stale = paimon.commit_snapshot(paimon.Head("main", 1, "nope", head.totals, head.stats_seq, None, None),
                                   table.uid, _snapshot(2), [])
    return {"winners": winners, "head": head.snapshot_id, "stale": stale,
            "stored": paimon.get_snapshot(table.uid, 3).snapshot_id}


def schemas() -> dict:
    table = _table()
    results: list[bool] = []
    threads = [threading.Thread(target=lambda: results.append(paimon.append_schema(table.uid, 1, SCHEMA)))
               for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"won": sum(results), "latest": paimon.latest_schema(table.uid)[0],
            "history": [i for i, _ in paimon.list_schemas(table.uid)]}


def tags() -> dict:
    table = _table()
    first = paimon.create_tag(table.uid, "v1", 1, "{}")
    again = paimon.create_tag(table.uid, "v1", 2, "{}")
    paimon.create_tag(table.uid, "v2", 1, "{}")
    listed = [t.name for t in paimon.list_tags(table.uid)]
    after = [t.name for t in paimon.list_tags(table.uid, after="v1")]
    got = paimon.get_tag(table.uid, "v1").snapshot_id
    deleted, deleted_again = paimon.delete_tag(table.uid, "v1"), paimon.delete_tag(table.uid, "v1")
    return {"first": first, "again": again, "listed": listed, "after": after, "got": got,
            "deleted": [deleted, deleted_again], "gone": paimon.get_tag(table.uid, "v1") is None}


def stats() -> dict:
    table = _table()
    key_a, key_b = "a\x01", "b\x01"
    PartitionItem(table.uid, key_a, values=["a"], doc=b"J{}", segment=0).save()
    d1 = [(key_a, PartitionDelta({"dt": "a"}, 10, 100, 2, 5)), (key_b, PartitionDelta({"dt": "b"}, 1, 1, 1, 1))]
    first = paimon.apply_partition_deltas(table.uid, 1, d1)
    PartitionItem(table.uid, key_b, values=["b"], doc=b"J{}", segment=0).save()
    retried = paimon.apply_partition_deltas(table.uid, 1, d1)  # a roll-forward: a counted once
    d2 = [(key_a, PartitionDelta({"dt": "a"}, -4, -40, -1, 3))]
    paimon.apply_partition_deltas(table.uid, 2, d2)
    d3 = [(key_b, PartitionDelta({"dt": "b"}, -1, -1, -1, 9))]
    emptied = paimon.apply_partition_deltas(table.uid, 3, d3)
    rows = {r.key: [r.p_records, r.p_bytes, r.p_files, r.p_last, r.p_seq] for r in paimon.partition_stats(table.uid)}
    return {"first": [first.missing, first.emptied], "retried": [retried.missing, retried.emptied],
            "emptied": emptied.emptied, "rows": rows}


def stats_lease() -> dict:
    """One applier of a stats operation at a time: taken, refused, renewed, let go with the
    cursor, taken over once run out, gone with ``pending``."""
    table = _table()
    base = paimon.get_head(table.uid)
    assert paimon.commit_snapshot(base, table.uid, _snapshot(1), [PartitionDelta({"dt": "a"}, 1, 1, 1, 1)])
    seq = paimon.get_head(table.uid).stats_seq
    taken = [paimon.take_stats_lease(table.uid, seq, "A", 10), paimon.take_stats_lease(table.uid, seq, "B", 10),
             paimon.take_stats_lease(table.uid, seq, "A", 10), paimon.take_stats_lease(table.uid, seq + 1, "B", 10)]
    held = paimon.get_head(table.uid).stats_lease_until is not None
    marked = [paimon.mark_stats_done(table.uid, seq, 1, owner="B"), paimon.mark_stats_done(table.uid, seq, 1, owner="A")]
    after_release = [paimon.get_head(table.uid).stats_lease_until, paimon.take_stats_lease(table.uid, seq, "B", -1),
                     paimon.take_stats_lease(table.uid, seq, "C", 10)]  # B's ran out at once: C takes it
    paimon.clear_pending(table.uid, seq)
    cleared = [paimon.get_head(table.uid).stats_lease_until, paimon.take_stats_lease(table.uid, seq, "D", 10)]
    return {"taken": taken, "held": held, "marked": marked, "cursor": paimon.get_head(table.uid).stats_done,
            "after_release": after_release, "cleared": cleared}


def ranges() -> dict:
    table = _table()
    for value in ("a", "ba", "bb", "c"):
        PartitionItem(table.uid, value + "\x01", values=[value], doc=b"J{}", segment=0).save()

    def keys(**kw: object) -> list[str]:
        return [r.key for r in paimon.partition_stats(table.uid, **kw)]
    return {"range": keys(low="b", high="c"), "resumed": keys(low="b", high="c", after="ba\x01"),
            "past": keys(low="b", high="c", after="c\x01")}  # a position past the range: nothing


def commit_and_rollback() -> dict:
    table = _table()
    for number in (1, 2, 3):
        base = paimon.get_head(table.uid)
        deltas = [PartitionDelta({"dt": "a"}, number, number * 10, 1, number)]
        snapshot = _snapshot(number)
        assert paimon.commit_snapshot(base, table.uid, snapshot, deltas)
        head = paimon.get_head(table.uid)
        assert head.pending is not None
        paimon.save_snapshot(table.uid, head, snapshot.text())
        assert paimon.finish(table.uid, number, head.stats_seq)
    head = paimon.get_head(table.uid)
    target = paimon.get_snapshot(table.uid, 1)
    undone = [d.negated() for s in paimon.snapshots_between(table.uid, 1, 3) for d in s.deltas]
    rolled = paimon.rollback(table.uid, head, target, undone)
    again = paimon.rollback(table.uid, head, target, undone)
    after = paimon.get_head(table.uid)
    return {"totals_before": list(vars(head.totals).values()), "rolled": [rolled, again],
            "head": after.snapshot_id, "uuid_ok": after.snapshot_uuid == target.uuid,
            "totals": list(vars(after.totals).values()),
            "pending": [(d.record_count, d.file_count) for d in after.pending or []]}


if __name__ == "__main__":
    print(json.dumps(globals()[sys.argv[1]]()))
