"""GetPartitions served by an index reads its page ahead, under the table as the server last
read it (chalicelib/service/prefetch.py), while it reads the table afresh. Whatever changed in
between, the answer must be exactly that of the fresh read: these tests first warm the server's
guess with a query, change the table underneath, and ask again."""

from __future__ import annotations

import itertools

from infra.local.stack import client
from tests.integration.partition_helpers import (all_partitions, create_partitions, partitioned_table,
                                                 value_tuples)

KEYS = [("country", "string"), ("year", "int"), ("month", "int")]
BY_COUNTRY_YEAR = {"IndexName": "by_country_year", "Keys": ["country", "year"]}
QUERY = "country = 'US' AND year = 2021"


def rows(countries=("US", "UK"), years=(2020, 2021), months=(1, 2, 3)) -> list[list[str]]:
    return [[c, str(y), str(m)] for c, y, m in itertools.product(countries, years, months)]


def make_table(glue, db: str, name: str, value_rows, indexes=(BY_COUNTRY_YEAR,)) -> None:
    glue.create_table(DatabaseName=db, TableInput=partitioned_table(name, KEYS), PartitionIndexes=list(indexes))
    create_partitions(glue, db, name, value_rows)


def answer(glue, db: str, name: str, expression: str = QUERY, **kwargs) -> list[tuple[str, ...]]:
    return sorted(value_tuples(all_partitions(glue, db, name, Expression=expression, **kwargs)))


def test_warm_query_reads_in_two_requests(glue, db):
    make_table(glue, db, "sales", rows())
    answer(glue, db, "sales")  # teaches the server the table
    response = glue.get_partitions(DatabaseName=db, TableName="sales", Expression=QUERY)
    assert sorted(value_tuples(response["Partitions"])) == [("US", "2021", "1"), ("US", "2021", "2"),
                                                            ("US", "2021", "3")]
    headers = response["ResponseMetadata"]["HTTPHeaders"]
    # The permission check in one BatchGetItem (IAM_ALLOWED_PRINCIPALS' grants on the database
    # and the table, the database's grant version and every database's), the database and the
    # table in one more, the index entries in one Query.
    assert headers["x-glue-ddb-requests"] == "3"
    assert headers["x-glue-items-read"] == str(2 + 3)
    assert headers["x-glue-permission-items-read"] == str(2 + 2)


def test_recreated_table_never_shows_old_partitions(glue, db):
    make_table(glue, db, "sales", rows())
    assert len(answer(glue, db, "sales")) == 3
    glue.delete_table(DatabaseName=db, Name="sales")
    make_table(glue, db, "sales", [["US", "2021", "7"]])
    assert answer(glue, db, "sales") == [("US", "2021", "7")]
    # And without any partition at all.
    glue.delete_table(DatabaseName=db, Name="sales")
    make_table(glue, db, "sales", [])
    assert answer(glue, db, "sales") == []


def test_recreated_database_never_shows_old_partitions(glue):
    name = "db_read_ahead_recreated"
    for attempt, months in enumerate(((1, 2, 3), (9,))):
        if attempt:
            glue.delete_database(Name=name)
        glue.create_database(DatabaseInput={"Name": name})
        make_table(glue, name, "sales", rows(months=months))
        assert answer(glue, name, "sales") == [("US", "2021", str(m)) for m in months]
    glue.delete_database(Name=name)


def test_deleted_table_is_not_found(glue, db):
    make_table(glue, db, "sales", rows())
    answer(glue, db, "sales")
    glue.delete_table(DatabaseName=db, Name="sales")
    try:
        glue.get_partitions(DatabaseName=db, TableName="sales", Expression=QUERY)
    except glue.exceptions.EntityNotFoundException:
        pass
    else:
        raise AssertionError("a deleted table's partitions were listed")


def test_deleted_index_is_not_read(glue, db):
    make_table(glue, db, "sales", rows())
    assert len(answer(glue, db, "sales")) == 3
    glue.delete_partition_index(DatabaseName=db, TableName="sales", IndexName="by_country_year")
    # Partition writes no longer maintain the deleted index's entries: a read of them would
    # still see this partition, and miss the new one.
    glue.delete_partition(DatabaseName=db, TableName="sales", PartitionValues=["US", "2021", "1"])
    create_partitions(glue, db, "sales", [["US", "2021", "12"]])
    assert answer(glue, db, "sales") == [("US", "2021", "12"), ("US", "2021", "2"), ("US", "2021", "3")]


def test_index_replaced_under_the_same_name(glue, db):
    make_table(glue, db, "sales", rows())
    answer(glue, db, "sales")
    glue.delete_partition_index(DatabaseName=db, TableName="sales", IndexName="by_country_year")
    glue.create_partition_index(DatabaseName=db, TableName="sales",
                                PartitionIndex={"IndexName": "by_country_year", "Keys": ["country"]})
    glue.delete_partition(DatabaseName=db, TableName="sales", PartitionValues=["US", "2021", "2"])
    assert answer(glue, db, "sales") == [("US", "2021", "1"), ("US", "2021", "3")]
    assert answer(glue, db, "sales", "country = 'UK'") == [
        ("UK", y, m) for y in ("2020", "2021") for m in ("1", "2", "3")]


def test_pages_follow_the_read_ahead(glue, db):
    make_table(glue, db, "sales", rows(months=range(1, 13)))
    everything = [("US", "2021", str(m)) for m in range(1, 13)]
    assert answer(glue, db, "sales") == sorted(everything)
    # Page by page: only the first page of each request is read ahead, at the token's position.
    assert answer(glue, db, "sales", page_size=5) == sorted(everything)
    assert answer(glue, db, "sales", page_size=1) == sorted(everything)


def test_other_expression_and_segment_on_a_warm_table(glue, db):
    make_table(glue, db, "sales", rows(years=(2020, 2021, 2022)))
    answer(glue, db, "sales")
    assert answer(glue, db, "sales", "country = 'UK' AND year BETWEEN 2021 AND 2022") == [
        ("UK", y, m) for y in ("2021", "2022") for m in ("1", "2", "3")]
    segments = [answer(glue, db, "sales", "country = 'US' AND year = 2020",
                       Segment={"SegmentNumber": n, "TotalSegments": 3}) for n in range(3)]
    assert sorted(itertools.chain.from_iterable(segments)) == [("US", "2020", m) for m in ("1", "2", "3")]


def test_changes_made_by_another_server(glue, db, start_server):
    """Another server (another Lambda) changes the table: this server's guess is stale each
    time, since only its own reads and writes refresh it."""
    other = client(start_server().endpoint, "glue")
    make_table(other, db, "sales", rows())
    assert answer(glue, db, "sales") == [("US", "2021", m) for m in ("1", "2", "3")]
    # Re-created with other partitions.
    other.delete_table(DatabaseName=db, Name="sales")
    make_table(other, db, "sales", [["US", "2021", "7"]])
    assert answer(glue, db, "sales") == [("US", "2021", "7")]
    # Its index deleted: writes no longer maintain the index's entries, which still exist.
    other.delete_partition_index(DatabaseName=db, TableName="sales", IndexName="by_country_year")
    other.delete_partition(DatabaseName=db, TableName="sales", PartitionValues=["US", "2021", "7"])
    create_partitions(other, db, "sales", [["US", "2021", "8"]])
    assert answer(glue, db, "sales") == [("US", "2021", "8")]
    # An index of the same name on other keys (a new uid; its entries are backfilled).
    other.create_partition_index(DatabaseName=db, TableName="sales",
                                 PartitionIndex={"IndexName": "by_country_year", "Keys": ["country"]})
    assert answer(glue, db, "sales") == [("US", "2021", "8")]
    other.create_partition_index(DatabaseName=db, TableName="sales",
                                 PartitionIndex={"IndexName": "by_year", "Keys": ["year"]})
    assert answer(glue, db, "sales", "year = 2021") == [("US", "2021", "8")]
    other.delete_partition_index(DatabaseName=db, TableName="sales", IndexName="by_year")
    other.delete_partition(DatabaseName=db, TableName="sales", PartitionValues=["US", "2021", "8"])
    assert answer(glue, db, "sales", "year = 2021") == []
    # The database re-created, with a table of the same name.
    other.delete_database(Name=db)
    other.create_database(DatabaseInput={"Name": db})
    make_table(other, db, "sales", [["US", "2021", "9"]])
    assert answer(glue, db, "sales") == [("US", "2021", "9")]
    other.delete_database(Name=db)
    try:
        glue.get_partitions(DatabaseName=db, TableName="sales", Expression=QUERY)
    except glue.exceptions.EntityNotFoundException:
        pass
    else:
        raise AssertionError("a deleted database's partitions were listed")
