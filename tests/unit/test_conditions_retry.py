"""The one classifier of failed DynamoDB writes, the one retry policy, and what a throttled
write answers at the store boundary.

Errors are built in the shapes botocore and PynamoDB really raise (a ClientError with the
response DynamoDB sends, wrapped by PynamoDB the way its connection wraps it); throttling
cannot be produced against DynamoDB Local, so the store tests replace only the network.
"""

from __future__ import annotations

from typing import Any, Optional

import pytest
from botocore.exceptions import ClientError
from pynamodb.exceptions import (CancellationReason, PutError, TransactWriteError, UpdateError,
                                 VerboseClientError)

from chalicelib.errors import ConcurrentModificationException, ThrottlingException
from chalicelib.store import catalog
from chalicelib.store.dynamo import conditions, dynamo_json, fence
from chalicelib.store import partitions as partition_store
from chalicelib.store.dynamo.conditions import CONDITION_FAILED, CONFLICT, OTHER, THROTTLED, classify
from chalicelib.attempts import Policy, attempts
from chalicelib.store.dynamo.retry import conditional, retry


def client_error(code: str, reasons: Optional[list[Optional[str]]] = None,
                 operation: str = "TransactWriteItems") -> ClientError:
    """A ClientError as botocore raises it for a DynamoDB error response."""
    response: dict[str, Any] = {"Error": {"Code": code, "Message": "m"},
                                "ResponseMetadata": {"HTTPStatusCode": 400}}
    if reasons is not None:
        response["CancellationReasons"] = [{"Code": r or "None"} for r in reasons]
    return ClientError(response, operation)


def pynamo_transact_error(reasons: list[Optional[str]]) -> TransactWriteError:
    """A TransactWriteError as PynamoDB raises it for a cancelled TransactWriteItems."""
    response = {"Error": {"Code": "TransactionCanceledException", "Message": "m"}}
    cause = VerboseClientError(response, "TransactWriteItems",
                               cancellation_reasons=[CancellationReason(code=r) if r else None for r in reasons])
    return TransactWriteError("Failed to write transaction items", cause=cause)


def pynamo_error(kind: type, code: str) -> Exception:
    """A PutError / UpdateError / DeleteError wrapping a single-item DynamoDB error."""
    return kind("Failed", cause=VerboseClientError({"Error": {"Code": code, "Message": "m"}}, "PutItem"))


class FakeClock:
    """A clock whose sleeps only move it."""

    def __init__(self) -> None:
        self.time, self.sleeps = 100.0, []

    def monotonic(self) -> float:
        return self.time

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.time += seconds


# ------------------------------------------------------------------------------ classifier
@pytest.mark.parametrize("error, kind, failed", [
    (pynamo_error(PutError, "ConditionalCheckFailedException"), CONDITION_FAILED, (0,)),
    (pynamo_error(UpdateError, "ProvisionedThroughputExceededException"), THROTTLED, ()),
    (pynamo_error(UpdateError, "ThrottlingException"), THROTTLED, ()),
    (pynamo_error(UpdateError, "RequestLimitExceeded"), THROTTLED, ()),
    (pynamo_error(UpdateError, "TransactionConflictException"), CONFLICT, ()),
    (pynamo_error(UpdateError, "ValidationException"), OTHER, ()),
    (pynamo_transact_error([None, "ConditionalCheckFailed"]), CONDITION_FAILED, (1,)),
    (pynamo_transact_error(["TransactionConflict", None]), CONFLICT, ()),
    (pynamo_transact_error(["ThrottlingError", None]), THROTTLED, ()),
    (pynamo_transact_error([None, "ProvisionedThroughputExceeded"]), THROTTLED, ()),
    # A throttled action makes the whole transaction throttled: a condition that really
    # failed fails again once the retry gets through.
    (pynamo_transact_error(["ConditionalCheckFailed", "ThrottlingError"]), THROTTLED, ()),
    (pynamo_transact_error(["ConditionalCheckFailed", "TransactionConflict"]), CONDITION_FAILED, (0,)),
    (pynamo_transact_error(["ValidationError"]), OTHER, ()),
    # A cancelled transaction without reasons is not a lost condition.
    (TransactWriteError("x", cause=client_error("TransactionCanceledException")), OTHER, ()),
    (client_error("TransactionCanceledException", ["ThrottlingError", None]), THROTTLED, ()),
    (client_error("TransactionCanceledException", [None, None, "ConditionalCheckFailed"]), CONDITION_FAILED, (2,)),
    (client_error("ProvisionedThroughputExceededException"), THROTTLED, ()),
    (dynamo_json.TransactionCancelled(["ThrottlingError"]), THROTTLED, ()),
    (dynamo_json.TransactionCancelled([None, "ConditionalCheckFailed"]), CONDITION_FAILED, (1,)),
    (ValueError("not DynamoDB"), OTHER, ()),
])
def test_classify(error, kind, failed):
    outcome = classify(error)
    assert (outcome.kind, outcome.failed) == (kind, failed)


def test_dynamo_json_cancellation_is_classified_like_pynamodb(monkeypatch):
    def send(actions):
        raise client_error("TransactionCanceledException", ["ThrottlingError", None])
    monkeypatch.setattr(dynamo_json, "_send", send)
    with pytest.raises(dynamo_json.TransactionCancelled) as caught:
        dynamo_json.transact_write([{}, {}])
    assert classify(caught.value).kind == THROTTLED
    assert conditions.reason_codes(caught.value) == ["ThrottlingError", None]


# ------------------------------------------------------------------------------ retry policy
def test_attempts_are_bounded_in_number_and_back_off_with_jitter():
    clock = FakeClock()
    tries = list(attempts(Policy(attempts=6, base_delay=0.01, max_delay=0.04, total_seconds=60), clock))
    assert tries == [0, 1, 2, 3, 4, 5]
    assert len(clock.sleeps) == 5
    ceilings = [0.01, 0.02, 0.04, 0.04, 0.04]
    assert all(c / 2 <= s <= c for s, c in zip(clock.sleeps, ceilings))


def test_attempts_are_bounded_in_time():
    clock = FakeClock()
    tries = list(attempts(Policy(attempts=1000, base_delay=1.0, max_delay=1.0, total_seconds=5.0), clock))
    assert clock.time - 100.0 <= 5.0
    assert 5 <= len(tries) <= 11


def test_zero_delay_policy_retries_at_once():
    clock = FakeClock()
    assert list(attempts(Policy(attempts=3, base_delay=0.0), clock)) == [0, 1, 2]
    assert clock.sleeps == []


def test_retry_gives_up_on_throttling_with_throttling_exception():
    clock, calls = FakeClock(), []

    def throttled():
        calls.append(1)
        raise pynamo_transact_error(["ThrottlingError"])
    with pytest.raises(ThrottlingException):
        retry(throttled, Policy(attempts=4), clock)
    assert len(calls) == 4


def test_retry_succeeds_after_a_throttle_and_raises_other_errors_at_once():
    clock = FakeClock()
    outcomes = [pynamo_error(UpdateError, "ProvisionedThroughputExceededException"), None]

    def flaky():
        error = outcomes.pop(0)
        if error:
            raise error
        return "done"
    assert retry(flaky, Policy(attempts=3), clock) == "done"
    failed = pynamo_error(PutError, "ConditionalCheckFailedException")
    with pytest.raises(PutError):
        retry(lambda: (_ for _ in ()).throw(failed), Policy(attempts=3), clock)
    assert len(clock.sleeps) == 1


def test_conditional_write_answers():
    clock = FakeClock()
    assert conditional(lambda: None, clock=clock) is True
    lost = pynamo_error(PutError, "ConditionalCheckFailedException")
    assert conditional(lambda: (_ for _ in ()).throw(lost), clock=clock) is False
    conflict = pynamo_error(PutError, "TransactionConflictException")
    with pytest.raises(ConcurrentModificationException):
        conditional(lambda: (_ for _ in ()).throw(conflict), Policy(attempts=2), clock)
    throttled = pynamo_error(PutError, "ProvisionedThroughputExceededException")
    with pytest.raises(ThrottlingException):
        conditional(lambda: (_ for _ in ()).throw(throttled), Policy(attempts=2), clock)


# ------------------------------------------------------------------- the store boundary
@pytest.fixture
def no_sleep(monkeypatch):
    from chalicelib import clock
    monkeypatch.setattr(clock, "sleep", lambda seconds: None)


def test_throttled_create_database_is_throttling_not_already_exists(monkeypatch, no_sleep):
    from chalicelib.store.dynamo.models import DatabaseItem
    calls = []

    def save(self, *args, **kwargs):
        calls.append(1)
        raise pynamo_error(PutError, "ProvisionedThroughputExceededException")
    monkeypatch.setattr(DatabaseItem, "save", save)
    with pytest.raises(ThrottlingException):
        catalog.create_database("cat", "db", {"Name": "db"}, "uid")
    assert len(calls) > 1


def test_throttled_create_table_transaction_is_throttling_not_already_exists(monkeypatch, no_sleep):
    """The reported bug: a cancelled CreateTable transaction whose reason is throttling came
    back as a lost condition (AlreadyExistsException)."""
    from chalicelib.store.dynamo.models import DatabaseItem

    class ThrottledTransaction:
        def __init__(self, *args, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            if exc[0] is None:
                raise pynamo_transact_error([None, "ThrottlingError"])

        def __getattr__(self, name):
            return lambda *args, **kwargs: None
    monkeypatch.setattr(fence, "TransactWrite", ThrottledTransaction)
    database = DatabaseItem("cat", "db", uid="db-uid", doc=b"J{}")
    with pytest.raises(ThrottlingException):
        catalog.create_table(database, "t", {"Name": "t"})


def test_throttled_partition_transaction_is_throttling_not_a_failed_partition(monkeypatch, no_sleep):
    from chalicelib.store.dynamo.models import DatabaseItem, PartitionItem, TableItem
    sent = []

    def send(actions):
        sent.append(actions)
        raise client_error("TransactionCanceledException", [None, None, "ThrottlingError"] + [None] * (len(actions) - 3))
    monkeypatch.setattr(dynamo_json, "_send", send)
    table = TableItem("db-uid", "t", uid="table-uid", index_epoch=0)
    write = partition_store.PartitionWrite("create", key="k1", values=["1"], doc=b"J{}", segment=0, entries=[],
                                           uid="p-uid")
    with pytest.raises(ThrottlingException):
        partition_store.apply_writes(DatabaseItem("cat", "db", uid="db-uid", doc=b"J{}"), table, [write])
    assert len(sent) > 1
    entries = [(PartitionItem("table-uid", "k1", values=["1"], doc=b"J{}", segment=0, revision=0), "ix", "e1")]
    with pytest.raises(ThrottlingException):
        partition_store.write_entries_checked("table-uid", entries)


def test_a_failed_stamp_check_is_told_by_the_cancellation_reasons(monkeypatch):
    """A table write's stamp checks are its first condition checks (after a fence's), which
    PynamoDB sends first: the cancellation reasons tell a failed stamp (StampConflict: retry with
    a fresh stamp) from a failed condition of the write itself (ConditionFailed) without reading
    the counter or the locks. Only without reasons are they read."""
    stamp = catalog.Stamp("seq", 4, 5, ("lock",))
    reads: list[tuple[Any, ...]] = []
    monkeypatch.setattr(catalog, "_get", lambda *key: reads.append(key))  # nothing stored
    # CreateTable's five actions as sent: counter check, lock check, database check, table put, digest put.
    for fenced, failed in ((False, 0), (False, 1), (True, 1), (True, 2)):
        reasons: list[Optional[str]] = [None] * (5 + fenced)
        reasons[failed] = "ConditionalCheckFailed"
        for error in (pynamo_transact_error(reasons), client_error("TransactionCanceledException", reasons)):
            assert isinstance(catalog._stamped_write_failed(error, stamp, fenced), catalog.StampConflict)
    own = pynamo_transact_error([None, None, None, "ConditionalCheckFailed", None])
    assert isinstance(catalog._stamped_write_failed(own, stamp), catalog.ConditionFailed)
    assert reads == []
    plain = client_error("ConditionalCheckFailedException", operation="PutItem")
    assert isinstance(catalog._stamped_write_failed(plain, stamp), catalog.ConditionFailed)
    assert len(reads) == 2  # the counter and the lock, read to rule out a stamp failure
