"""Lake Formation transactions through boto3: Start/Describe/List/Extend/Cancel/Commit, the
errors of a finished or unknown transaction, idle expiry, READ_ONLY transactions."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from tests.integration.lf_helpers import Governed, add, unvalidated

UNKNOWN = "00000000000000000000000000000000"


@pytest.fixture
def gov(endpoint) -> Governed:
    """A catalog of its own with one governed table ``objects``."""
    return Governed.create(endpoint)


def describe(lf, tx: str) -> dict:
    return lf.describe_transaction(TransactionId=tx)["TransactionDescription"]


def test_start_describe_commit_both_types(gov):
    lf = gov.lf
    before = datetime.now(timezone.utc) - timedelta(seconds=2)
    rw = lf.start_transaction()["TransactionId"]
    explicit = lf.start_transaction(TransactionType="READ_AND_WRITE")["TransactionId"]
    ro = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    assert len({rw, explicit, ro}) == 3
    for tx in (rw, explicit, ro):
        desc = describe(lf, tx)
        assert desc["TransactionId"] == tx
        assert desc["TransactionStatus"] == "ACTIVE"
        assert before <= desc["TransactionStartTime"] <= datetime.now(timezone.utc) + timedelta(seconds=2)
        assert "TransactionEndTime" not in desc
    assert lf.commit_transaction(TransactionId=ro)["TransactionStatus"] == "COMMITTED"
    gov.write(rw, [add("s3://lake/objects/a", ["2021", "us"])])
    assert lf.commit_transaction(TransactionId=rw)["TransactionStatus"] == "COMMITTED"
    lf.cancel_transaction(TransactionId=explicit)
    for tx, status in ((ro, "COMMITTED"), (rw, "COMMITTED"), (explicit, "ABORTED")):
        desc = describe(lf, tx)
        assert desc["TransactionStatus"] == status
        assert desc["TransactionStartTime"] <= desc["TransactionEndTime"]
    # Committing again reports the outcome rather than committing twice.
    assert lf.commit_transaction(TransactionId=rw)["TransactionStatus"] == "COMMITTED"


def test_invalid_transaction_type_is_rejected(gov):
    raw = unvalidated(gov.endpoint, "lakeformation", gov.account)
    with pytest.raises(raw.exceptions.InvalidInputException):
        raw.start_transaction(TransactionType="READ_WRITE")


def test_list_transactions_status_filter_and_paging(gov):
    lf = gov.lf
    committed = [lf.start_transaction()["TransactionId"] for _ in range(3)]
    aborted = [lf.start_transaction()["TransactionId"] for _ in range(2)]
    active = [lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"] for _ in range(2)]
    for tx in committed:
        lf.commit_transaction(TransactionId=tx)
    for tx in aborted:
        lf.cancel_transaction(TransactionId=tx)
    everything = committed + aborted + active

    def listed(**kwargs) -> list[dict]:
        pages, found = 0, []
        while True:
            response = lf.list_transactions(**kwargs)
            found += response["Transactions"]
            pages += 1
            if "MaxResults" in kwargs:
                assert len(response["Transactions"]) <= kwargs["MaxResults"]
            if not response.get("NextToken"):
                return found
            kwargs["NextToken"] = response["NextToken"]
            assert pages < 50

    def ids(items: list[dict]) -> list[str]:
        return [t["TransactionId"] for t in items]

    assert ids(listed()) == everything  # start order
    assert ids(listed(StatusFilter="ALL")) == everything
    assert ids(listed(StatusFilter="ACTIVE")) == active
    assert ids(listed(StatusFilter="COMMITTED")) == committed
    assert ids(listed(StatusFilter="ABORTED")) == aborted
    assert ids(listed(StatusFilter="COMPLETED")) == committed + aborted
    statuses = {t["TransactionId"]: t["TransactionStatus"] for t in listed()}
    assert statuses == {**{t: "COMMITTED" for t in committed}, **{t: "ABORTED" for t in aborted},
                        **{t: "ACTIVE" for t in active}}
    for size in (1, 2, 3, 7):
        assert ids(listed(MaxResults=size)) == everything
    assert ids(listed(StatusFilter="COMMITTED", MaxResults=1)) == committed
    assert ids(listed(StatusFilter="ACTIVE", MaxResults=1)) == active
    # Another account sees none of them.
    other = Governed.create(gov.endpoint, tables=())
    assert other.lf.list_transactions()["Transactions"] == []
    with pytest.raises(other.lf.exceptions.EntityNotFoundException):
        other.lf.describe_transaction(TransactionId=committed[0])


def test_extend_keeps_an_active_transaction(gov):
    lf = gov.lf
    tx = lf.start_transaction()["TransactionId"]
    lf.extend_transaction(TransactionId=tx)
    assert describe(lf, tx)["TransactionStatus"] == "ACTIVE"
    gov.write(tx, [add("s3://lake/objects/x", ["2020", "eu"])])
    lf.extend_transaction(TransactionId=tx)
    assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    assert set(gov.objects()) == {"s3://lake/objects/x"}


def test_committed_transaction_cannot_be_used(gov):
    lf = gov.lf
    tx = lf.start_transaction()["TransactionId"]
    gov.write(tx, [add("s3://lake/objects/c1", ["2021", "us"])])
    lf.commit_transaction(TransactionId=tx)
    errors = lf.exceptions.TransactionCommittedException
    with pytest.raises(errors):
        gov.write(tx, [add("s3://lake/objects/c2", ["2021", "us"])])
    with pytest.raises(errors):
        lf.extend_transaction(TransactionId=tx)
    with pytest.raises(errors):
        lf.cancel_transaction(TransactionId=tx)
    with pytest.raises(errors):
        lf.get_table_objects(DatabaseName=gov.db, TableName="objects", TransactionId=tx)
    assert describe(lf, tx)["TransactionStatus"] == "COMMITTED"
    assert set(gov.objects()) == {"s3://lake/objects/c1"}


def test_cancelled_transaction_cannot_be_used_and_its_writes_vanish(gov):
    lf = gov.lf
    tx = lf.start_transaction()["TransactionId"]
    gov.write(tx, [add(f"s3://lake/objects/k{i}", ["2021", "us"]) for i in range(5)])
    assert len(gov.objects(TransactionId=tx)) == 5
    lf.cancel_transaction(TransactionId=tx)
    errors = lf.exceptions.TransactionCanceledException
    with pytest.raises(errors):
        gov.write(tx, [add("s3://lake/objects/late", ["2021", "us"])])
    with pytest.raises(errors):
        lf.commit_transaction(TransactionId=tx)
    with pytest.raises(errors):
        lf.extend_transaction(TransactionId=tx)
    with pytest.raises(errors):
        lf.get_table_objects(DatabaseName=gov.db, TableName="objects", TransactionId=tx)
    assert describe(lf, tx)["TransactionStatus"] == "ABORTED"
    assert gov.objects() == {}
    # Nothing it wrote blocks others: the same objects can be added by a new transaction.
    gov.commit_ops([add(f"s3://lake/objects/k{i}", ["2021", "us"]) for i in range(5)])
    assert len(gov.objects()) == 5


def test_unknown_transaction_is_entity_not_found(gov):
    lf = gov.lf
    missing = lf.exceptions.EntityNotFoundException
    calls = [
        lambda: lf.describe_transaction(TransactionId=UNKNOWN),
        lambda: lf.commit_transaction(TransactionId=UNKNOWN),
        lambda: lf.cancel_transaction(TransactionId=UNKNOWN),
        lambda: lf.extend_transaction(TransactionId=UNKNOWN),
        lambda: gov.write(UNKNOWN, [add("s3://lake/objects/u", ["2021", "us"])]),
        lambda: lf.get_table_objects(DatabaseName=gov.db, TableName="objects", TransactionId=UNKNOWN),
    ]
    for call in calls:
        with pytest.raises(missing):
            call()


def test_read_only_transaction_reads_but_cannot_write(gov):
    lf = gov.lf
    gov.commit_ops([add("s3://lake/objects/r1", ["2021", "us"])])
    ro = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    assert set(gov.objects(TransactionId=ro)) == {"s3://lake/objects/r1"}
    with pytest.raises(lf.exceptions.InvalidInputException, match="READ_ONLY"):
        gov.write(ro, [add("s3://lake/objects/r2", ["2021", "us"])])
    assert describe(lf, ro)["TransactionStatus"] == "ACTIVE"
    assert lf.commit_transaction(TransactionId=ro)["TransactionStatus"] == "COMMITTED"
    assert set(gov.objects()) == {"s3://lake/objects/r1"}


def test_idle_transactions_are_aborted_and_extend_keeps_them_alive(gov, start_server, tmp_path):
    # The server's clock (chalicelib.clock) is moved, not waited for: 40 s steps against a
    # 100 s idle limit leave a minute of margin for a slow machine either way.
    offset_file, moved = tmp_path / "clock-offset", [0.0]

    def advance(seconds: float) -> None:
        moved[0] += seconds
        offset_file.write_text(str(moved[0]))
    server = start_server(GLUE_LF_IDLE_SECONDS="100", GLUE_CLOCK_OFFSET_FILE=str(offset_file))
    lf = gov.client(endpoint=server.endpoint)
    idle = lf.start_transaction()["TransactionId"]
    gov.write(idle, [add("s3://lake/objects/idle", ["2021", "us"])], lf=lf)
    kept = lf.start_transaction()["TransactionId"]
    gov.write(kept, [add("s3://lake/objects/kept", ["2021", "us"])], lf=lf)
    for _ in range(4):  # 4 x 40 s: past the idle limit, but never 100 s without activity
        advance(40)
        lf.extend_transaction(TransactionId=kept)
    desc = describe(lf, idle)
    assert desc["TransactionStatus"] == "ABORTED"
    assert "TransactionEndTime" in desc
    with pytest.raises(lf.exceptions.TransactionCanceledException):
        gov.write(idle, [add("s3://lake/objects/idle2", ["2021", "us"])], lf=lf)
    with pytest.raises(lf.exceptions.TransactionCanceledException):
        lf.commit_transaction(TransactionId=idle)
    with pytest.raises(lf.exceptions.TransactionCanceledException):
        lf.extend_transaction(TransactionId=idle)
    assert describe(lf, kept)["TransactionStatus"] == "ACTIVE"
    assert lf.commit_transaction(TransactionId=kept)["TransactionStatus"] == "COMMITTED"
    assert set(gov.objects(lf=lf)) == {"s3://lake/objects/kept"}
    # Reading in a transaction is activity too; a transaction nobody touches is listed ABORTED.
    reader = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    forgotten = lf.start_transaction()["TransactionId"]
    for _ in range(3):
        advance(40)
        gov.objects(lf=lf, TransactionId=reader)
    listed = {t["TransactionId"]: t["TransactionStatus"] for t in lf.list_transactions()["Transactions"]}
    assert listed[reader] == "ACTIVE"
    assert listed[forgotten] == "ABORTED"
    assert listed[idle] == "ABORTED"
