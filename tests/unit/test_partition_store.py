"""How the partition store pairs DynamoDB's transaction cancellation reasons with its writes.

DynamoDB answers a cancelled TransactWriteItems with one reason per action, in the order the
actions were sent. The request here is the real one the store builds (store/dynamo/dynamo_json.py);
only the network is replaced, by a fake that fails the conditions a test names.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable

import pytest
from botocore.exceptions import ClientError
from chalicelib.store.dynamo import dynamo_json
from chalicelib.store import partitions as store
from chalicelib.store.dynamo.models import DatabaseItem, PartitionItem, TableItem

DATABASE = DatabaseItem("cat", "db", uid="db-uid", doc=b"J{}")


class FakeDynamoDB:
    """Answers TransactWriteItems: cancels it when ``fails(kind, key)`` holds for an action."""

    def __init__(self, fails: Callable[[str, str], bool]) -> None:
        self.fails = fails
        self.applied: list[list[tuple[str, str]]] = []

    def send(self, transact_items: list[dict[str, Any]]) -> None:
        actions = []
        for item in transact_items:
            if isinstance(item, str):  # dynamo_json.Rendered: the action as wire JSON text
                item = json.loads(item)
            (kind, body), = item.items()
            key = body["Key"] if "Key" in body else body["Item"]
            actions.append((kind, key["key"]["S"] if "key" in key else key["name"]["S"]))
        reasons = [{"Code": "ConditionalCheckFailed", "Message": "failed"} if self.fails(kind, key)
                   else {"Code": "None"} for kind, key in actions]
        if any(r["Code"] != "None" for r in reasons):
            raise ClientError({"Error": {"Code": "TransactionCanceledException", "Message": "cancelled"},
                               "CancellationReasons": reasons}, "TransactWriteItems")
        self.applied.append(actions)


@pytest.fixture
def dynamodb(monkeypatch):
    """``dynamodb(fails)`` makes the store's transactions go to a FakeDynamoDB."""
    def install(fails: Callable[[str, str], bool]) -> FakeDynamoDB:
        fake = FakeDynamoDB(fails)
        monkeypatch.setattr(dynamo_json, "_send", fake.send)
        return fake
    return install


def _partition(key: str) -> PartitionItem:
    return PartitionItem("table-uid", key, values=[key], doc=b"J{}", segment=0, revision=0)


def test_backfill_skips_exactly_the_changed_partitions(dynamodb):
    fake = dynamodb(lambda kind, key: kind == "ConditionCheck" and key in ("p3", "p5"))
    entries = [(_partition(f"p{i}"), "index-uid", f"e{i}") for i in range(7)]
    store.write_entries_checked("table-uid", entries)
    written = sorted(key for actions in fake.applied for kind, key in actions if kind == "Put")
    assert written == ["e0", "e1", "e2", "e4", "e6"]


def test_a_failed_write_in_a_batch_is_reported_as_itself(dynamodb):
    # Two moves, each with an index entry: the first lands on an existing partition.
    fake = dynamodb(lambda kind, key: kind == "Put" and key == "b")
    table = TableItem("db-uid", "t", uid="table-uid", index_epoch=0)
    writes = [
        store.PartitionWrite("replace", key=k_new, values=[k_new], doc=b"J{}", entries=[("i", "e" + k_new)],
                             old_key=k_old, old_revision=0, old_entries=[("i", "e" + k_old)])
        for k_old, k_new in (("a", "b"), ("c", "d"))
    ]
    assert store.apply_writes(DATABASE, table, writes) == {0: store.EXISTS}
    [applied] = fake.applied
    assert ("Put", "d") in applied and ("Delete", "c") in applied
    assert not any(key in ("a", "b", "ea", "eb") for _, key in applied)


def test_a_changed_partition_is_reported_as_changed(dynamodb):
    dynamodb(lambda kind, key: kind == "Delete" and key == "c")
    table = TableItem("db-uid", "t", uid="table-uid", index_epoch=0)
    writes = [
        store.PartitionWrite("create", key="x", values=["x"], doc=b"J{}", entries=[("i", "ex")]),
        store.PartitionWrite("delete", old_key="c", old_revision=3, old_entries=[("i", "ec")]),
        store.PartitionWrite("create", key="y", values=["y"], doc=b"J{}"),
    ]
    assert store.apply_writes(DATABASE, table, writes) == {1: store.CHANGED}



def test_no_writes_send_no_transaction(dynamodb):
    fake = dynamodb(lambda kind, key: False)
    table = TableItem("db-uid", "t", uid="table-uid", index_epoch=0)
    assert store.apply_writes(DATABASE, table, []) == {}
    assert fake.applied == []


def test_writes_over_several_transactions_report_failures_by_position(dynamodb, monkeypatch):
    # 150 creates take two transactions: the first runs on the calling thread, the second on
    # the pool; a failure in either is reported at its write's position.
    threads: list[str] = []
    fake = dynamodb(lambda kind, key: kind == "Put" and key in ("p3", "p140"))
    send = fake.send

    def recording(transact_items: list[Any]) -> None:
        threads.append(threading.current_thread().name)
        send(transact_items)
    monkeypatch.setattr(dynamo_json, "_send", recording)
    table = TableItem("db-uid", "t", uid="table-uid", index_epoch=0)
    writes = [store.PartitionWrite("create", key=f"p{i}", values=[f"p{i}"], doc=b"J{}") for i in range(150)]
    assert store.apply_writes(DATABASE, table, writes) == {3: store.EXISTS, 140: store.EXISTS}
    written = {key for actions in fake.applied for kind, key in actions if kind == "Put" and key.startswith("p")}
    assert written == {f"p{i}" for i in range(150)} - {"p3", "p140"}  # (the other Puts: digest deltas)
    assert threading.current_thread().name in threads and len(set(threads)) == 2

class TableChangesAfter(FakeDynamoDB):
    """The table item changes once ``landed`` transactions have landed: every later one fails
    its table check (a new table version, a new index)."""

    def __init__(self, landed: int) -> None:
        super().__init__(lambda kind, key: False)
        self.landed, self.lock = landed, threading.Lock()

    def send(self, transact_items: list[Any]) -> None:
        with self.lock:  # the transactions of one call are sent from several threads
            if len(self.applied) >= self.landed:
                self.fails = lambda kind, key: kind == "ConditionCheck" and key == "t"
            super().send(transact_items)


def test_a_transaction_that_did_not_land_is_reported_stale_and_the_others_applied(monkeypatch):
    # Issue #46: 150 creates are two transactions; the table changes after the first lands.
    # The second's writes are STALE (to be rebuilt and sent again), the first's applied: no
    # TableChanged for the whole call, which would have the caller send the first ones again.
    fake = TableChangesAfter(1)
    monkeypatch.setattr(dynamo_json, "_send", fake.send)
    table = TableItem("db-uid", "t", uid="table-uid", index_epoch=0)
    writes = [store.PartitionWrite("create", key=f"p{i}", values=[f"p{i}"], doc=b"J{}") for i in range(150)]
    failed = store.apply_writes(DATABASE, table, writes)
    [first] = fake.applied
    landed = {key for kind, key in first if kind == "Put" and key.startswith("p")}
    assert len(landed) == 75 and set(failed) == {i for i in range(150) if f"p{i}" not in landed}
    assert set(failed.values()) == {store.STALE}


def test_a_call_of_which_nothing_landed_raises_table_changed(monkeypatch):
    monkeypatch.setattr(dynamo_json, "_send", TableChangesAfter(0).send)
    table = TableItem("db-uid", "t", uid="table-uid", index_epoch=0)
    writes = [store.PartitionWrite("create", key=f"p{i}", values=[f"p{i}"], doc=b"J{}") for i in range(150)]
    with pytest.raises(store.TableChanged):
        store.apply_writes(DATABASE, table, writes)


class OneMoreTakenEachTime(FakeDynamoDB):
    """Racing creators: each transaction meets one more partition that someone else created
    since the one before."""

    def __init__(self, rounds: int) -> None:
        super().__init__(lambda kind, key: kind == "Put" and key in self.taken)
        self.rounds, self.taken = rounds, set()

    def send(self, transact_items: list[Any]) -> None:
        if len(self.taken) < self.rounds:
            self.taken.add(f"p{len(self.taken)}")
        super().send(transact_items)


def test_failed_conditions_do_not_use_up_the_tries(monkeypatch):
    # Ten resends (more than the retry policy's eight tries): still the rest is applied, and
    # each taken partition reported as existing, not the whole call as TableChanged.
    fake = OneMoreTakenEachTime(10)
    monkeypatch.setattr(dynamo_json, "_send", fake.send)
    table = TableItem("db-uid", "t", uid="table-uid", index_epoch=0)
    writes = [store.PartitionWrite("create", key=f"p{i}", values=[f"p{i}"], doc=b"J{}") for i in range(20)]
    assert store.apply_writes(DATABASE, table, writes) == {i: store.EXISTS for i in range(10)}
    [applied] = fake.applied
    assert {key for kind, key in applied if kind == "Put" and key.startswith("p")} == {f"p{i}" for i in range(10, 20)}


# ------------------------------------------------------------- rendered actions = the dicts
_AWKWARD = "é\u2028\x00\x01\x02\"\\/\n\U0001F600"


def _as_dicts(table_uid: str, write: store.PartitionWrite) -> list[dict[str, Any]]:
    """The actions of a create or replace in dict form, as the store built them before it
    rendered its puts as text (dj.put of _partition_item / _entry_item)."""
    key, values, doc = write.key, write.values, write.doc
    assert key is not None and values is not None and doc is not None
    actions: list[dict[str, Any]] = []
    if write.kind == "replace" and write.old_key != write.key:
        actions.append(dynamo_json.delete(store._PARTITIONS, {"table_uid": dynamo_json.s(table_uid),
                                                               "key": dynamo_json.s(write.old_key or "")},
                                          **store._revision_is(write.old_revision)))
    revision = (write.old_revision or 0) + 1 if write.kind == "replace" else 0
    item = store._partition_item(table_uid, write, revision)
    if write.kind == "replace" and write.old_key == write.key:
        actions.append(dynamo_json.put(store._PARTITIONS, item, **store._revision_is(write.old_revision)))
    else:
        actions.append(dynamo_json.put(store._PARTITIONS, item, "attribute_not_exists(#k)", {"#k": "key"}))
    new_entries = set(write.entries)
    for index_uid, entry_key in write.old_entries:
        if (index_uid, entry_key) not in new_entries:
            actions.append(dynamo_json.delete(store._ENTRIES, {"index_uid": dynamo_json.s(index_uid),
                                                               "key": dynamo_json.s(entry_key)}))
    for index_uid, entry_key in write.entries:
        actions.append(dynamo_json.put(store._ENTRIES, store._entry_item(index_uid, entry_key, key, values, doc,
                                                                         write.segment)))
    return actions


@pytest.mark.parametrize("write", [
    store.PartitionWrite("create", key="2024\x01", values=["2024"], doc=b"J{}", segment=7),
    store.PartitionWrite("create", key=_AWKWARD, values=[_AWKWARD, "", "x"], doc=bytes(range(256)) * 5,
                         segment=2519, entries=[("i1", "e\x01" + _AWKWARD), ("i2", "f")], uid="u-1"),
    store.PartitionWrite("replace", key="k", values=["k"], doc=b"Z\x00", segment=0, entries=[("i", "ek")],
                         old_key="k", old_revision=41, old_entries=[("i", "ek"), ("j", "old")], uid="u",
                         carry={"p_records": 12, "p_bytes": -3}),
    store.PartitionWrite("replace", key="new", values=["new"], doc=b"J[]", segment=1, entries=[("i", "en")],
                         old_key="old", old_revision=None, old_entries=[("i", "eo")], uid="u"),
    store.PartitionWrite("create", key="k", values=["k"], doc='J{"Comment":"é\\u2028\\"\u2028"}'.encode(), segment=3,
                         entries=[("i", "ek")]),
], ids=["create", "create with entries and awkward text", "replace in place", "replace moved",
        "create with a non-ASCII document"])
def test_rendered_actions_are_the_dicts_json_byte_for_byte(write: store.PartitionWrite) -> None:
    actions: list[Any] = []
    store._add_write(actions, "table-" + _AWKWARD, write)
    expected = _as_dicts("table-" + _AWKWARD, write)
    rendered = [a if isinstance(a, str) else dynamo_json.render(a) for a in actions]
    assert [json.loads(a) for a in rendered] == expected
    if write.doc is not None and write.doc.isascii():
        # Byte for byte, but for a plain-JSON document's non-ASCII characters, which
        # dynamo_json.document_json leaves unescaped (the same JSON).
        assert rendered == [dynamo_json.render(a) for a in expected]
    # ... and so is the whole request body (but for its fresh idempotency token).
    sent = json.loads(dynamo_json._body(actions))
    assert len(sent.pop("ClientRequestToken")) == 36
    assert sent == {"TransactItems": expected}
