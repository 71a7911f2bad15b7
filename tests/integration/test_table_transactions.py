"""Table definitions inside Lake Formation transactions, through boto3 over HTTP: pending
CreateTable / UpdateTable / DeleteTable / BatchDeleteTable, visible to their transaction only
until it commits, discarded on cancel, versioned at commit, first committer wins, snapshots
that never change, objects of a table created in the same transaction."""

from __future__ import annotations

import pytest

from tests.integration.conftest import columns, table_input
from tests.integration.lf_helpers import Governed, add, governed_input, unvalidated


@pytest.fixture
def gov(endpoint) -> Governed:
    """A catalog of its own with one governed table ``objects``."""
    return Governed.create(endpoint)


def names(glue, db: str, **kwargs) -> list[str]:
    return [t["Name"] for t in glue.get_tables(DatabaseName=db, **kwargs)["TableList"]]


def status(lf, tx: str) -> str:
    return lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionStatus"]


def test_create_is_visible_to_its_transaction_only_until_commit(gov):
    glue, lf = gov.glue, gov.lf
    tx = lf.start_transaction()["TransactionId"]
    other = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("fresh", Description="new"), TransactionId=tx)
    assert glue.get_table(DatabaseName=gov.db, Name="fresh", TransactionId=tx)["Table"]["Description"] == "new"
    assert names(glue, gov.db, TransactionId=tx) == ["fresh", "objects"]
    for reads in ({}, {"TransactionId": other}):
        with pytest.raises(glue.exceptions.EntityNotFoundException):
            glue.get_table(DatabaseName=gov.db, Name="fresh", **reads)
        assert names(glue, gov.db, **reads) == ["objects"]
    # Creating it again, in the transaction or outside it meanwhile, is refused.
    with pytest.raises(glue.exceptions.AlreadyExistsException):
        glue.create_table(DatabaseName=gov.db, TableInput=table_input("fresh"), TransactionId=tx)
    assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    table = glue.get_table(DatabaseName=gov.db, Name="fresh")["Table"]
    assert table["Description"] == "new" and table["VersionId"] == "0"
    assert names(glue, gov.db) == ["fresh", "objects"]
    assert names(glue, gov.db, TransactionId=other) == ["objects"]  # its snapshot predates the commit
    later = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    assert names(glue, gov.db, TransactionId=later) == ["fresh", "objects"]


def test_cancel_discards_every_table_change(gov):
    glue, lf = gov.glue, gov.lf
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("kept", Description="v0"))
    tx = lf.start_transaction()["TransactionId"]
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("temp"), TransactionId=tx)
    glue.update_table(DatabaseName=gov.db, TableInput=table_input("kept", Description="v1"), TransactionId=tx)
    glue.delete_table(DatabaseName=gov.db, Name="objects", TransactionId=tx)
    assert names(glue, gov.db, TransactionId=tx) == ["kept", "temp"]
    lf.cancel_transaction(TransactionId=tx)
    assert names(glue, gov.db) == ["kept", "objects"]
    kept = glue.get_table(DatabaseName=gov.db, Name="kept")["Table"]
    assert (kept["Description"], kept["VersionId"]) == ("v0", "0")
    for call in (lambda: glue.get_table(DatabaseName=gov.db, Name="kept", TransactionId=tx),
                 lambda: glue.create_table(DatabaseName=gov.db, TableInput=table_input("late"), TransactionId=tx)):
        with pytest.raises(glue.exceptions.ClientError) as raised:
            call()
        assert raised.value.response["Error"]["Code"] == "TransactionCanceledException"
    # Nothing it left blocks others.
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("temp"))
    glue.update_table(DatabaseName=gov.db, TableInput=table_input("kept", Description="v1"), VersionId="0")


def test_update_commits_the_next_version_and_archives_the_previous(gov):
    glue, lf = gov.glue, gov.lf
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("t", Description="v0"))
    glue.update_table(DatabaseName=gov.db, TableInput=table_input("t", Description="v1"))
    tx = lf.start_transaction()["TransactionId"]
    with pytest.raises(glue.exceptions.ConcurrentModificationException):
        glue.update_table(DatabaseName=gov.db, TableInput=table_input("t", Description="x"), VersionId="0",
                          TransactionId=tx)
    glue.update_table(DatabaseName=gov.db, TableInput=table_input("t", Description="v2"), VersionId="1",
                      TransactionId=tx)
    mine = glue.get_table(DatabaseName=gov.db, Name="t", TransactionId=tx)["Table"]
    assert (mine["Description"], mine["VersionId"]) == ("v2", "2")
    # A second update in the same transaction replaces the pending definition: still one version.
    glue.update_table(DatabaseName=gov.db, TableInput=table_input("t", Description="v2b"), VersionId="2",
                      TransactionId=tx)
    latest = glue.get_table(DatabaseName=gov.db, Name="t")["Table"]
    assert (latest["Description"], latest["VersionId"]) == ("v1", "1")
    assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    end = lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionEndTime"]
    latest = glue.get_table(DatabaseName=gov.db, Name="t")["Table"]
    assert (latest["Description"], latest["VersionId"]) == ("v2b", "2")
    versions = glue.get_table_versions(DatabaseName=gov.db, TableName="t")["TableVersions"]
    assert [(v["VersionId"], v["Table"]["Description"]) for v in versions] == [("2", "v2b"), ("1", "v1"), ("0", "v0")]
    # Its UpdateTime is the commit's: QueryAsOfTime just before the commit shows version 1.
    assert abs(latest["UpdateTime"].timestamp() - end.timestamp()) < 0.002
    before = glue.get_table(DatabaseName=gov.db, Name="t", QueryAsOfTime=latest["UpdateTime"].timestamp() - 0.001)
    assert before["Table"]["VersionId"] == "1"
    # A non-transactional update goes on from there.
    glue.update_table(DatabaseName=gov.db, TableInput=table_input("t", Description="v3"), VersionId="2")
    assert glue.get_table(DatabaseName=gov.db, Name="t")["Table"]["VersionId"] == "3"


def test_delete_and_batch_delete_in_a_transaction(gov):
    glue, lf = gov.glue, gov.lf
    for name in ("a", "b", "c"):
        glue.create_table(DatabaseName=gov.db, TableInput=table_input(name))
    gov.commit_ops([add("s3://lake/objects/o1", ["2021", "us"])])
    tx = lf.start_transaction()["TransactionId"]
    glue.delete_table(DatabaseName=gov.db, Name="objects", TransactionId=tx)
    response = glue.batch_delete_table(DatabaseName=gov.db, TablesToDelete=["a", "missing", "b"], TransactionId=tx)
    assert [e["TableName"] for e in response["Errors"]] == ["missing"]
    assert response["Errors"][0]["ErrorDetail"]["ErrorCode"] == "EntityNotFoundException"
    assert names(glue, gov.db, TransactionId=tx) == ["c"]
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_table(DatabaseName=gov.db, Name="a", TransactionId=tx)
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.delete_table(DatabaseName=gov.db, Name="a", TransactionId=tx)
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.update_table(DatabaseName=gov.db, TableInput=table_input("a"), TransactionId=tx)
    assert names(glue, gov.db) == ["a", "b", "c", "objects"]
    assert set(gov.objects()) == {"s3://lake/objects/o1"}
    # Deleted then created again in the same transaction: a new, empty incarnation.
    glue.create_table(DatabaseName=gov.db, TableInput=governed_input("objects", Description="again"),
                      TransactionId=tx)
    assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    assert names(glue, gov.db) == ["c", "objects"]
    again = glue.get_table(DatabaseName=gov.db, Name="objects")["Table"]
    assert (again["Description"], again["VersionId"]) == ("again", "0")
    assert gov.objects() == {}


def test_two_transactions_updating_one_table_first_committer_wins(gov):
    glue, lf = gov.glue, gov.lf
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("shared", Description="v0"))
    first = lf.start_transaction()["TransactionId"]
    second = lf.start_transaction()["TransactionId"]
    glue.update_table(DatabaseName=gov.db, TableInput=table_input("shared", Description="first"), TransactionId=first)
    glue.update_table(DatabaseName=gov.db, TableInput=table_input("shared", Description="second"), TransactionId=second)
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("second_only"), TransactionId=second)
    gov.write(second, [add("s3://lake/objects/second", ["2021", "us"])])
    assert lf.commit_transaction(TransactionId=first)["TransactionStatus"] == "COMMITTED"
    with pytest.raises(lf.exceptions.ConcurrentModificationException):
        lf.commit_transaction(TransactionId=second)
    assert status(lf, second) == "ABORTED"
    # Nothing of the loser is applied: neither its table changes nor its objects.
    table = glue.get_table(DatabaseName=gov.db, Name="shared")["Table"]
    assert (table["Description"], table["VersionId"]) == ("first", "1")
    assert names(glue, gov.db) == ["objects", "shared"]
    assert gov.objects() == {}
    # A transaction whose snapshot predates a change cannot write that table any more.
    third = lf.start_transaction()["TransactionId"]
    glue.update_table(DatabaseName=gov.db, TableInput=table_input("shared", Description="outside"))
    with pytest.raises(glue.exceptions.ConcurrentModificationException):
        glue.update_table(DatabaseName=gov.db, TableInput=table_input("shared", Description="third"),
                          TransactionId=third)
    with pytest.raises(glue.exceptions.ConcurrentModificationException):
        glue.delete_table(DatabaseName=gov.db, Name="shared", TransactionId=third)


def test_non_transactional_write_after_the_snapshot_conflicts(gov):
    glue, lf = gov.glue, gov.lf
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("t", Description="v0"))
    tx = lf.start_transaction()["TransactionId"]
    glue.update_table(DatabaseName=gov.db, TableInput=table_input("t", Description="tx"), TransactionId=tx)
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("racing"), TransactionId=tx)
    glue.update_table(DatabaseName=gov.db, TableInput=table_input("t", Description="outside"))
    with pytest.raises(lf.exceptions.ConcurrentModificationException):
        lf.commit_transaction(TransactionId=tx)
    assert glue.get_table(DatabaseName=gov.db, Name="t")["Table"]["Description"] == "outside"
    assert names(glue, gov.db) == ["objects", "t"]
    # Creating a name somebody else creates first: the commit fails too.
    tx = lf.start_transaction()["TransactionId"]
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("racing", Description="tx"), TransactionId=tx)
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("racing", Description="outside"))
    with pytest.raises(lf.exceptions.ConcurrentModificationException):
        lf.commit_transaction(TransactionId=tx)
    assert glue.get_table(DatabaseName=gov.db, Name="racing")["Table"]["Description"] == "outside"
    # A table created after the snapshot is not visible to the transaction, and it cannot
    # create one of that name either.
    tx = lf.start_transaction()["TransactionId"]
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("later"))
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_table(DatabaseName=gov.db, Name="later", TransactionId=tx)
    with pytest.raises(glue.exceptions.ConcurrentModificationException):
        glue.create_table(DatabaseName=gov.db, TableInput=table_input("later"), TransactionId=tx)


def test_reader_snapshot_never_changes(gov):
    glue, lf = gov.glue, gov.lf
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("t", Description="v0"))
    reader = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    seen = glue.get_table(DatabaseName=gov.db, Name="t", TransactionId=reader)["Table"]
    listed = glue.get_tables(DatabaseName=gov.db, TransactionId=reader)["TableList"]
    for step in range(3):
        tx = lf.start_transaction()["TransactionId"]
        glue.update_table(DatabaseName=gov.db, TableInput=table_input("t", Description=f"tx{step}"), TransactionId=tx)
        glue.create_table(DatabaseName=gov.db, TableInput=table_input(f"new{step}"), TransactionId=tx)
        lf.commit_transaction(TransactionId=tx)
        glue.update_table(DatabaseName=gov.db, TableInput=table_input("t", Description=f"plain{step}"))
        assert glue.get_table(DatabaseName=gov.db, Name="t", TransactionId=reader)["Table"] == seen
        assert glue.get_tables(DatabaseName=gov.db, TransactionId=reader)["TableList"] == listed
        assert glue.get_tables(DatabaseName=gov.db, TransactionId=reader, MaxResults=1)["TableList"] == listed[:1]
    assert glue.get_table(DatabaseName=gov.db, Name="t")["Table"]["VersionId"] == "6"
    assert names(glue, gov.db) == ["new0", "new1", "new2", "objects", "t"]


def test_objects_of_a_table_created_in_the_same_transaction(gov):
    glue, lf = gov.glue, gov.lf
    tx = lf.start_transaction()["TransactionId"]
    glue.create_table(DatabaseName=gov.db, TableInput=governed_input("born"), TransactionId=tx)
    gov.write(tx, [add("s3://lake/born/x", ["2021", "us"]), add("s3://lake/born/y", ["2022", "eu"])], table="born")
    assert set(gov.objects("born", TransactionId=tx)) == {"s3://lake/born/x", "s3://lake/born/y"}
    with pytest.raises(lf.exceptions.EntityNotFoundException):
        lf.get_table_objects(DatabaseName=gov.db, TableName="born")
    assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    assert set(gov.objects("born")) == {"s3://lake/born/x", "s3://lake/born/y"}
    assert glue.get_table(DatabaseName=gov.db, Name="born")["Table"]["TableType"] == "GOVERNED"


def test_bad_input_in_a_transaction(gov):
    glue, lf = gov.glue, gov.lf
    raw = unvalidated(gov.endpoint, "glue", gov.account)
    tx = lf.start_transaction()["TransactionId"]
    with pytest.raises(glue.exceptions.InvalidInputException):
        raw.update_table(DatabaseName=gov.db, TableInput=table_input("objects"), VersionId="x1", TransactionId=tx)
    with pytest.raises(glue.exceptions.InvalidInputException):
        raw.update_table(DatabaseName=gov.db, Name="other", TableInput=table_input("objects"), TransactionId=tx)
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.create_table(DatabaseName="no_such_db", TableInput=table_input("t"), TransactionId=tx)
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.create_table(DatabaseName=gov.db, TableInput=table_input("t"), TransactionId="0" * 32)
    ro = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    with pytest.raises(glue.exceptions.InvalidInputException, match="READ_ONLY"):
        glue.create_table(DatabaseName=gov.db, TableInput=table_input("t"), TransactionId=ro)
    lf.commit_transaction(TransactionId=tx)
    with pytest.raises(glue.exceptions.ClientError) as raised:
        glue.create_table(DatabaseName=gov.db, TableInput=table_input("t"), TransactionId=tx)
    assert raised.value.response["Error"]["Code"] == "TransactionCommittedException"
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_get_partitions_sees_the_table_as_its_reader_does(gov):
    glue, lf = gov.glue, gov.lf
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("sales"))
    glue.create_partition(DatabaseName=gov.db, TableName="sales", PartitionInput={"Values": ["2024"]})
    tx = lf.start_transaction()["TransactionId"]
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("fresh"), TransactionId=tx)
    glue.delete_table(DatabaseName=gov.db, Name="sales", TransactionId=tx)

    def values(table: str, **reads) -> list[list[str]]:
        return [p["Values"] for p in glue.get_partitions(DatabaseName=gov.db, TableName=table, **reads)["Partitions"]]

    assert values("fresh", TransactionId=tx) == []  # exists for its creator only, with no partitions yet
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        values("fresh")
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        values("sales", TransactionId=tx)  # deleted in the transaction
    assert values("sales") == [["2024"]]  # others still see it
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        values("sales", QueryAsOfTime=0)  # before the table existed
    lf.cancel_transaction(TransactionId=tx)


def test_a_column_dropped_in_a_transaction_loses_its_statistics_at_commit(gov):
    """The commit's apply hides (column epoch) and deletes the dropped column's statistics,
    under the commit's fence; the column coming back later does not bring them back."""
    glue, lf = gov.glue, gov.lf
    kw = {"DatabaseName": gov.db, "TableName": "objects"}
    entry = {"ColumnName": "value", "ColumnType": "string", "AnalyzedTime": 1_700_000_000,
             "StatisticsData": {"Type": "STRING", "StringColumnStatisticsData": {
                 "MaximumLength": 9, "AverageLength": 4.5, "NumberOfNulls": 0, "NumberOfDistinctValues": 3}}}
    glue.update_column_statistics_for_table(**kw, ColumnStatisticsList=[entry])
    tx = lf.start_transaction()["TransactionId"]
    only_id = {"Columns": columns("id"), "Location": "s3://lake/objects/"}
    glue.update_table(DatabaseName=gov.db, TableInput=governed_input("objects", StorageDescriptor=only_id),
                      TransactionId=tx)
    assert glue.get_column_statistics_for_table(**kw, ColumnNames=["value"])["ColumnStatisticsList"]
    assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    got = glue.get_column_statistics_for_table(**kw, ColumnNames=["value"])
    assert (got["ColumnStatisticsList"], [e["ColumnName"] for e in got["Errors"]]) == ([], ["value"])
    glue.update_table(DatabaseName=gov.db, TableInput=governed_input("objects"))
    got = glue.get_column_statistics_for_table(**kw, ColumnNames=["value"])
    assert (got["ColumnStatisticsList"], [e["ColumnName"] for e in got["Errors"]]) == ([], ["value"])
