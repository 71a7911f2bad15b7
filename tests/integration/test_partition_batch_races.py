"""Racing batch partition writes, through boto3 from 16 threads: every partition's outcome is
reported to the call that caused it, and to no other (issue #46).

Each round, 16 callers send one batch call each, at the same moment, over overlapping
partitions (each caller a window of the round's 300 partitions, in its own order), while
another thread changes the table twice (a new table version: every partition transaction in
flight then fails its table check and must be built again). A batch is several DynamoDB
transactions run in parallel, so some of a call's transactions land while others fail: what
landed must be reported as this call's success, never sent again into an AlreadyExists or
EntityNotFound of its own making.

- Create: a partition is created by exactly one call (its Parameters name it); that call, and
  only that one, has no error for it; every other call is told AlreadyExistsException.
- Update: every update a call reports is one write of the partition (its stored revision counts
  them: the updates reported add up to exactly the revisions gained) and the last one stored is
  one a call reported; errors only where the call changed nothing (EntityNotFoundException for
  a partition deleted before the round, ConcurrentModificationException for one changed meanwhile).
- Delete: exactly one call reports each partition deleted; the others get EntityNotFoundException.

A call may also end in ConcurrentModificationException, whole or for some partitions (the
table kept changing past its retries: possible on a loaded machine): that call changed none of
those partitions, and the accounting above holds it to that.
"""

from __future__ import annotations

import itertools
import random
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional

import pytest
from botocore.exceptions import ClientError

from tests.integration.partition_helpers import create_partitions, partition_input, partitioned_table
from tests.integration.store_helpers import Store, decode

CALLERS = 16
ROUNDS = 3
PARTITIONS = 300
PER_CALL = 100  # BatchCreatePartition's and BatchUpdatePartition's limit
PER_DELETE = 25  # BatchDeletePartition's limit
KEYS = [("day", "string"), ("n", "int")]
# When the table changes during a round: once the first call, then the eighth, has answered
# (the other calls are in flight then, some of their transactions landed, others not yet).
CHANGE_AFTER = (1, 8)
BUSY = "ConcurrentModificationException"
VALUES = tuple[str, ...]

pytestmark = pytest.mark.slow


@dataclass
class Raced:
    """The raced table: its name, one client per caller, and a client to change it with."""

    db: str
    name: str
    clients: list[Any]
    changer: Any
    store: Store
    uid: str
    changes: Any = None

    def change(self) -> None:
        """A new table version (partition keys and indexes unchanged)."""
        self.changer.update_table(DatabaseName=self.db, TableInput=partitioned_table(
            self.name, KEYS, Parameters={"change": str(next(self.changes))}))

    def stored(self) -> dict[VALUES, tuple[int, dict[str, str]]]:
        """The stored partitions by values: (revision, Parameters)."""
        found = {}
        for item in _query_all(self.store, self.uid):
            values = tuple(v["S"] for v in item["values"]["L"])
            found[values] = (int(item["revision"]["N"]), _document(item).get("Parameters", {}))
        return found


@pytest.fixture
def raced(make_client, glue, db, stack) -> Callable[[int], Raced]:
    """``raced(indexes)``: a fresh table partitioned by (day, n) with that many partition indexes
    (each makes a partition one item more: a batch of them more transactions)."""
    def make(indexes: int) -> Raced:
        glue.create_table(DatabaseName=db, TableInput=partitioned_table("raced", KEYS), PartitionIndexes=[
            {"IndexName": "by_n", "Keys": ["n"]}, {"IndexName": "by_day", "Keys": ["day"]},
            {"IndexName": "by_n_day", "Keys": ["n", "day"]}][:indexes])
        store = Store(stack)
        return Raced(db, "raced", [make_client("glue") for _ in range(CALLERS)], make_client("glue"), store,
                     store.table_item(db, "raced")["uid"]["S"], itertools.count())
    return make


def _document(item: dict[str, Any]) -> dict[str, Any]:
    stored = item["doc"]  # a plain-JSON document is a string (models.DocumentAttribute)
    return decode(stored["B"] if "B" in stored else stored["S"].encode("utf-8"))


def _query_all(store: Store, table_uid: str) -> list[dict[str, Any]]:
    items, start = [], None
    while True:
        page = store.client.query(TableName=store.prefix + "partitions", ConsistentRead=True,
                                  KeyConditionExpression="#h = :h", ExpressionAttributeNames={"#h": "table_uid"},
                                  ExpressionAttributeValues={":h": {"S": table_uid}},
                                  **({"ExclusiveStartKey": start} if start else {}))
        items += page["Items"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


def _values(round_number: int, number: int) -> VALUES:
    return (f"r{round_number}", str(number))


def _wanted(caller: int, rng: random.Random, count: int) -> list[int]:
    """The partitions a caller asks for: a window of the 300 overlapping its neighbours',
    shuffled (so racing transactions meet in every order)."""
    start = caller * PARTITIONS // CALLERS
    numbers = [(start + i) % PARTITIONS for i in range(PER_CALL)]
    rng.shuffle(numbers)
    return numbers[:count]


def _race(table: Raced, call: Callable[[Any, int], dict[str, Any]],
          member: str) -> list[Optional[dict[VALUES, str]]]:
    """``call(client, caller)`` from one thread per caller, released together, while another
    thread changes the table; per caller, its answer's Errors as {values: error code} (each
    partition at most once), or None for a call that ended in ConcurrentModificationException."""
    barrier = threading.Barrier(len(table.clients))
    answers: list[Optional[dict[VALUES, str]]] = [None] * len(table.clients)
    failures: list[BaseException] = []
    answered = threading.Condition()
    count = [0]

    def run(caller: int) -> None:
        try:
            barrier.wait(30)
            try:
                errors = call(table.clients[caller], caller)["Errors"]
            except ClientError as error:
                if error.response["Error"]["Code"] != BUSY:
                    raise
                errors = None
            if errors is not None:
                told = {tuple(e[member]): e["ErrorDetail"]["ErrorCode"] for e in errors}
                assert len(told) == len(errors), errors
                answers[caller] = told
        except BaseException as error:  # reported by the test's thread
            failures.append(error)
        finally:
            with answered:
                count[0] += 1
                answered.notify_all()

    def interfere() -> None:
        try:
            for after in CHANGE_AFTER:
                with answered:
                    answered.wait_for(lambda: count[0] >= after, 120)
                table.change()
        except BaseException as error:  # reported by the test's thread
            failures.append(error)

    threads = [threading.Thread(target=run, args=(n,), daemon=True) for n in range(len(table.clients))]
    threads.append(threading.Thread(target=interfere, daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not failures, failures[0]
    return answers


def _told(errors: Optional[dict[VALUES, str]], values: VALUES) -> Optional[str]:
    """The error code a call answered for a partition (None: success)."""
    return BUSY if errors is None else errors.get(values)


def test_racing_batch_creates_report_each_partition_created_to_its_creator(glue, raced):
    table = raced(0)  # 100 partitions: two transactions
    reported = 0
    for round_number in range(ROUNDS):
        rng = random.Random(round_number)
        asked = {caller: _wanted(caller, rng, PER_CALL) for caller in range(CALLERS)}

        def create(client: Any, caller: int) -> Any:
            inputs = [partition_input(_values(round_number, n), Parameters={"by": str(caller)})
                      for n in asked[caller]]
            return client.batch_create_partition(DatabaseName=table.db, TableName=table.name,
                                                 PartitionInputList=inputs)

        answers = _race(table, create, "PartitionValues")
        created_by = {values: int(parameters["by"]) for values, (_, parameters) in table.stored().items()
                      if values[0] == f"r{round_number}"}
        creators: dict[VALUES, list[int]] = {}
        wrong = []
        for caller, errors in enumerate(answers):
            for number in asked[caller]:
                values = _values(round_number, number)
                told = _told(errors, values)
                if told is None:
                    creators.setdefault(values, []).append(caller)
                elif told not in ("AlreadyExistsException", BUSY):
                    wrong.append((caller, values, told))
                elif told == "AlreadyExistsException" and values not in created_by:
                    wrong.append((caller, values, "told AlreadyExists of a partition nobody created"))
        for number in range(PARTITIONS):
            values = _values(round_number, number)
            if creators.get(values, []) != ([created_by[values]] if values in created_by else []):
                wrong.append((values, f"created by {created_by.get(values)}, reported by {creators.get(values)}"))
        assert not wrong, f"round {round_number}: {len(wrong)} partitions misreported, e.g. {wrong[:5]}"
        reported += len(creators)
    assert reported > PARTITIONS, "hardly any call got through: the race tested nothing"


def test_racing_batch_updates_report_exactly_the_updates_made(glue, raced):
    table = raced(1)  # 100 updates in place (a put of the partition and of its entry): two transactions
    reported_in_all = 0
    for round_number in range(ROUNDS):
        rng = random.Random(100 + round_number)
        create_partitions(glue, table.db, table.name, [_values(round_number, n) for n in range(PARTITIONS)])
        gone = set(rng.sample(range(PARTITIONS), 30))  # deleted before the round: EntityNotFound for all
        for start in range(0, len(gone), PER_DELETE):
            glue.batch_delete_partition(DatabaseName=table.db, TableName=table.name, PartitionsToDelete=[
                {"Values": list(_values(round_number, n))} for n in sorted(gone)[start:start + PER_DELETE]])
        before = table.stored()
        asked = {caller: _wanted(caller, rng, PER_CALL) for caller in range(CALLERS)}

        def update(client: Any, caller: int) -> Any:
            entries = [{"PartitionValueList": list(_values(round_number, n)),
                        "PartitionInput": partition_input(_values(round_number, n), Parameters={"by": str(caller)})}
                       for n in asked[caller]]
            return client.batch_update_partition(DatabaseName=table.db, TableName=table.name, Entries=entries)

        answers = _race(table, update, "PartitionValueList")
        after = table.stored()
        reporters: dict[VALUES, list[int]] = {}
        wrong = []
        for caller, errors in enumerate(answers):
            for number in asked[caller]:
                values = _values(round_number, number)
                told = _told(errors, values)
                if number in gone:
                    if told not in ("EntityNotFoundException", BUSY):
                        wrong.append((caller, values, "deleted before", told))
                elif told is None:
                    reporters.setdefault(values, []).append(caller)
                elif told != BUSY:
                    wrong.append((caller, values, "exists", told))
        for number in range(PARTITIONS):
            values = _values(round_number, number)
            if number in gone:
                assert values not in after
                continue
            gained, told = after[values][0] - before[values][0], reporters.get(values, [])
            if gained != len(told):
                wrong.append((values, f"{gained} writes, {len(told)} reported"))
            by = after[values][1].get("by")
            if told and int(by) not in told:
                wrong.append((values, f"stored by {by}, reported by {told}"))
        assert not wrong, f"round {round_number}: {len(wrong)} partitions misreported, e.g. {wrong[:5]}"
        reported_in_all += len(reporters)
    assert reported_in_all > PARTITIONS, "hardly any call got through: the race tested nothing"


def test_racing_batch_deletes_report_each_partition_deleted_once(glue, raced):
    table = raced(3)  # 25 deletes of four items each: two transactions
    reported = 0
    for round_number in range(ROUNDS):
        rng = random.Random(200 + round_number)
        create_partitions(glue, table.db, table.name, [_values(round_number, n) for n in range(PARTITIONS)])
        asked = {caller: _wanted(caller, rng, PER_DELETE) for caller in range(CALLERS)}

        def delete(client: Any, caller: int) -> Any:
            return client.batch_delete_partition(DatabaseName=table.db, TableName=table.name, PartitionsToDelete=[
                {"Values": list(_values(round_number, n))} for n in asked[caller]])

        answers = _race(table, delete, "PartitionValues")
        left = set(table.stored())
        deleters: dict[VALUES, list[int]] = {}
        wrong = []
        for caller, errors in enumerate(answers):
            for number in asked[caller]:
                values = _values(round_number, number)
                told = _told(errors, values)
                if told is None:
                    deleters.setdefault(values, []).append(caller)
                elif told not in ("EntityNotFoundException", BUSY):
                    wrong.append((caller, values, told))
                elif told == "EntityNotFoundException" and values in left:
                    wrong.append((caller, values, "told EntityNotFound of a partition still there"))
        for number in range(PARTITIONS):
            values = _values(round_number, number)
            told = deleters.get(values, [])
            if len(told) != (values not in left):
                wrong.append((values, f"deleted by {told}, {'still there' if values in left else 'gone'}"))
        assert not wrong, f"round {round_number}: {len(wrong)} partitions misreported, e.g. {wrong[:5]}"
        reported += len(deleters)
    assert reported > PARTITIONS // 2, "hardly any call got through: the race tested nothing"
