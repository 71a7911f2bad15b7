"""Partition indexes through boto3 over HTTP: definition, backfill, failures, the rules an
index imposes on partitions and UpdateTable, and that an indexed query reads few items."""

from __future__ import annotations

import itertools

import pytest
from botocore.exceptions import ClientError

from tests.integration.partition_helpers import (all_partitions, create_partitions, error_code,
                                                 items_read, partition_input, partitioned_table,
                                                 value_tuples)

KEYS = [("country", "string"), ("category", "string"), ("year", "int"), ("month", "int"),
        ("dt", "date"), ("score", "double")]
COUNTRIES = ["US", "UK", "DE", "FR", "JP", "BR", "IN", "CA"]
CATEGORIES = ["Books", "Shoes", "Toys", "Food", "Games"]


def index(name: str, *keys: str) -> dict:
    return {"IndexName": name, "Keys": list(keys)}


def indexes_of(glue, db: str, table: str) -> dict[str, dict]:
    found = glue.get_partition_indexes(DatabaseName=db, TableName=table)["PartitionIndexDescriptorList"]
    return {d["IndexName"]: d for d in found}


def row(country: str, category: str, year: int, month: int = 1, day: int = 1, score: str = "0.5") -> list[str]:
    return [country, category, str(year), str(month), f"{year:04d}-{month:02d}-{day:02d}", score]


def sample_rows() -> list[list[str]]:
    """400 partitions: 8 countries x 5 categories x 10 years."""
    return [row(c, k, y, 1 + (y % 12), 1 + (i % 28))
            for i, (c, k, y) in enumerate(itertools.product(COUNTRIES, CATEGORIES, range(2010, 2020)))]


# ------------------------------------------------------------------------------- definitions
def test_create_table_with_partition_indexes(glue, db):
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("sales", KEYS),
                      PartitionIndexes=[index("by_country", "country", "category", "year"),
                                        index("by_day", "dt"), index("by_year", "year", "month")])
    found = indexes_of(glue, db, "sales")
    assert set(found) == {"by_country", "by_day", "by_year"}
    assert found["by_country"]["Keys"] == [{"Name": "country", "Type": "string"},
                                           {"Name": "category", "Type": "string"},
                                           {"Name": "year", "Type": "int"}]
    assert found["by_day"]["Keys"] == [{"Name": "dt", "Type": "date"}]
    assert found["by_year"]["Keys"] == [{"Name": "year", "Type": "int"}, {"Name": "month", "Type": "int"}]
    assert {d["IndexStatus"] for d in found.values()} == {"ACTIVE"}
    assert all("BackfillErrors" not in d for d in found.values())


def test_create_table_with_four_indexes_is_refused(glue, db):
    with pytest.raises(ClientError) as caught:
        glue.create_table(DatabaseName=db, TableInput=partitioned_table("sales", KEYS),
                          PartitionIndexes=[index("i1", "country"), index("i2", "category"),
                                            index("i3", "year"), index("i4", "month")])
    assert error_code(caught) in ("ResourceNumberLimitExceededException", "InvalidInputException")
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_table(DatabaseName=db, Name="sales")


@pytest.mark.parametrize("bad", [
    index("on_double", "score"),
    index("on_unknown", "nope"),
    index("twice", "year", "year"),
    index("half_unknown", "country", "colour"),
])
def test_invalid_index_definitions(glue, db, bad):
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.create_table(DatabaseName=db, TableInput=partitioned_table("t1", KEYS), PartitionIndexes=[bad])
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("t2", KEYS))
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.create_partition_index(DatabaseName=db, TableName="t2", PartitionIndex=bad)
    assert indexes_of(glue, db, "t2") == {}


def test_index_on_non_indexable_types(glue, db):
    keys = [("d", "decimal(10,2)"), ("b", "boolean"), ("ts", "timestamp"), ("f", "float"), ("s", "varchar(10)"),
            ("n", "bigint")]
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("t", keys))
    for key in ("d", "b", "ts", "f"):
        with pytest.raises(glue.exceptions.InvalidInputException):
            glue.create_partition_index(DatabaseName=db, TableName="t", PartitionIndex=index(f"on_{key}", key))
    glue.create_partition_index(DatabaseName=db, TableName="t", PartitionIndex=index("ok", "s", "n"))
    assert indexes_of(glue, db, "t")["ok"]["Keys"] == [{"Name": "s", "Type": "varchar(10)"},
                                                       {"Name": "n", "Type": "bigint"}]


def test_create_partition_index_limits_and_names(glue, db):
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("t", KEYS),
                      PartitionIndexes=[index("i1", "country")])
    with pytest.raises(glue.exceptions.AlreadyExistsException):
        glue.create_partition_index(DatabaseName=db, TableName="t", PartitionIndex=index("i1", "year"))
    glue.create_partition_index(DatabaseName=db, TableName="t", PartitionIndex=index("i2", "year"))
    glue.create_partition_index(DatabaseName=db, TableName="t", PartitionIndex=index("i3", "dt"))
    with pytest.raises(glue.exceptions.ResourceNumberLimitExceededException):
        glue.create_partition_index(DatabaseName=db, TableName="t", PartitionIndex=index("i4", "month"))
    assert set(indexes_of(glue, db, "t")) == {"i1", "i2", "i3"}
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.create_partition_index(DatabaseName=db, TableName="missing", PartitionIndex=index("i", "year"))
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_partition_indexes(DatabaseName=db, TableName="missing")


# ---------------------------------------------------------------------------------- backfill
def test_create_partition_index_backfills_existing_partitions(glue, db):
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("sales", KEYS))
    rows = sample_rows()
    create_partitions(glue, db, "sales", rows)
    glue.create_partition_index(DatabaseName=db, TableName="sales",
                                PartitionIndex=index("by_category", "category", "year"))
    descriptor = indexes_of(glue, db, "sales")["by_category"]
    assert descriptor["IndexStatus"] == "ACTIVE"
    assert "BackfillErrors" not in descriptor
    resp = glue.get_partitions(DatabaseName=db, TableName="sales", Expression="category = 'Toys' AND year >= 2018")
    expected = sorted(tuple(r) for r in rows if r[1] == "Toys" and int(r[2]) >= 2018)
    assert sorted(value_tuples(resp["Partitions"])) == expected
    assert items_read(resp) <= 1.2 * len(expected) + 3, items_read(resp)


def test_backfill_failure_invalid_type(glue, db):
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("sales", KEYS))
    good = [row("US", "Books", 2020), row("UK", "Books", 2021)]
    bad = ["US", "Toys", "abc", "1", "2020-01-01", "0.5"]
    create_partitions(glue, db, "sales", good + [bad])
    glue.create_partition_index(DatabaseName=db, TableName="sales", PartitionIndex=index("by_year", "year"))
    descriptor = indexes_of(glue, db, "sales")["by_year"]
    assert descriptor["IndexStatus"] == "FAILED"
    assert descriptor["Keys"] == [{"Name": "year", "Type": "int"}]
    errors = descriptor["BackfillErrors"]
    assert [e["Code"] for e in errors] == ["INVALID_PARTITION_TYPE_DATA_ERROR"]
    assert errors[0]["Partitions"] == [{"Values": bad}]
    # A failed index neither serves queries nor constrains new partitions.
    assert sorted(value_tuples(all_partitions(glue, db, "sales", Expression="year >= 2020"))) == sorted(
        tuple(r) for r in good)
    glue.create_partition(DatabaseName=db, TableName="sales",
                          PartitionInput=partition_input(["FR", "Toys", "xyz", "1", "2020-01-01", "0.5"]))
    # It can be deleted like any other index.
    glue.delete_partition_index(DatabaseName=db, TableName="sales", IndexName="by_year")
    assert indexes_of(glue, db, "sales") == {}


def test_backfill_failure_unsupported_character(glue, db):
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("sales", KEYS))
    bad = ["U\u0001S", "Books", "2020", "1", "2020-01-01", "0.5"]
    create_partitions(glue, db, "sales", [row("US", "Books", 2020), bad])
    # The odd partition is stored and found by an unindexed query.
    assert value_tuples(all_partitions(glue, db, "sales", Expression="country LIKE 'U_S'")) == [tuple(bad)]
    glue.create_partition_index(DatabaseName=db, TableName="sales", PartitionIndex=index("by_country", "country"))
    descriptor = indexes_of(glue, db, "sales")["by_country"]
    assert descriptor["IndexStatus"] == "FAILED"
    assert [e["Code"] for e in descriptor["BackfillErrors"]] == ["UNSUPPORTED_PARTITION_CHARACTER_ERROR"]
    assert descriptor["BackfillErrors"][0]["Partitions"] == [{"Values": bad}]
    # An index on other keys is unaffected by the odd country.
    glue.create_partition_index(DatabaseName=db, TableName="sales", PartitionIndex=index("by_year", "year"))
    assert indexes_of(glue, db, "sales")["by_year"]["IndexStatus"] == "ACTIVE"
    assert len(all_partitions(glue, db, "sales", Expression="year = 2020")) == 2


def test_delete_partition_index(glue, db):
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("sales", KEYS),
                      PartitionIndexes=[index("by_year", "year"), index("by_country", "country")])
    rows = [row(c, "Books", y) for c in COUNTRIES[:3] for y in (2019, 2020)]
    create_partitions(glue, db, "sales", rows)
    glue.delete_partition_index(DatabaseName=db, TableName="sales", IndexName="by_year")
    assert set(indexes_of(glue, db, "sales")) == {"by_country"}
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.delete_partition_index(DatabaseName=db, TableName="sales", IndexName="by_year")
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.delete_partition_index(DatabaseName=db, TableName="missing", IndexName="by_country")
    # Queries stay correct, and the deleted index no longer type-checks year.
    assert len(all_partitions(glue, db, "sales", Expression="year = 2020")) == 3
    glue.create_partition(DatabaseName=db, TableName="sales",
                          PartitionInput=partition_input(["US", "Toys", "abc", "1", "2020-01-01", "0.5"]))
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.create_partition(DatabaseName=db, TableName="sales",
                              PartitionInput=partition_input(["U\u0000S", "Toys", "1", "1", "2020-01-01", "0.5"]))
    # Re-creating an index of the same name starts from scratch (here: it fails on 'abc').
    glue.create_partition_index(DatabaseName=db, TableName="sales", PartitionIndex=index("by_year", "year"))
    assert indexes_of(glue, db, "sales")["by_year"]["IndexStatus"] == "FAILED"
    assert len(all_partitions(glue, db, "sales", Expression="year = 2020")) == 3


# -------------------------------------------------------------------- rules once indexed
@pytest.fixture
def indexed(glue, db) -> str:
    """A table with an index on (category, year) and a few partitions."""
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("sales", KEYS),
                      PartitionIndexes=[index("by_category", "category", "year")])
    create_partitions(glue, db, "sales", [row("US", "Books", 2020), row("UK", "Toys", 2021)])
    return "sales"


@pytest.mark.parametrize("values", [
    ["US", "Books", "abc", "1", "2020-01-01", "0.5"],  # year not an int
    ["US", "Books", "2020.0", "1", "2020-01-01", "0.5"],
    ["US", "Books", "99999999999", "1", "2020-01-01", "0.5"],  # outside int
    ["US", "Bo\u0000ks", "2020", "1", "2020-01-01", "0.5"],
    ["US", "Bo\u0001ks", "2020", "1", "2020-01-01", "0.5"],
    ["US", "Bo\u0002ks", "2020", "1", "2020-01-01", "0.5"],
])
def test_new_partitions_are_checked_on_indexed_keys(glue, db, indexed, values):
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.create_partition(DatabaseName=db, TableName=indexed, PartitionInput=partition_input(values))
    resp = glue.batch_create_partition(DatabaseName=db, TableName=indexed,
                                       PartitionInputList=[partition_input(values),
                                                           partition_input(row("FR", "Food", 2022))])
    assert [(e["PartitionValues"], e["ErrorDetail"]["ErrorCode"]) for e in resp["Errors"]] == [
        (values, "InvalidInputException")]
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.update_partition(DatabaseName=db, TableName=indexed, PartitionValueList=row("US", "Books", 2020),
                              PartitionInput=partition_input(values))
    assert sorted(value_tuples(all_partitions(glue, db, indexed))) == sorted(
        [tuple(row("US", "Books", 2020)), tuple(row("UK", "Toys", 2021)), tuple(row("FR", "Food", 2022))])


def test_unindexed_keys_stay_unchecked(glue, db, indexed):
    odd = ["U\u0001S", "Books", "2020", "zero", "someday", "NaN-ish"]
    glue.create_partition(DatabaseName=db, TableName=indexed, PartitionInput=partition_input(odd))
    assert tuple(odd) in value_tuples(all_partitions(glue, db, indexed, Expression="category = 'Books'"))
    assert value_tuples(all_partitions(glue, db, indexed, Expression="month = 0 OR month > 0 AND category = 'Books'")) \
        == [tuple(row("US", "Books", 2020))]


def test_index_follows_updates_and_deletes(glue, db, indexed):
    books = row("US", "Books", 2020)
    moved = row("US", "Games", 2020)
    glue.update_partition(DatabaseName=db, TableName=indexed, PartitionValueList=books,
                          PartitionInput=partition_input(moved, Parameters={"v": "2"}))
    assert all_partitions(glue, db, indexed, Expression="category = 'Books'") == []
    [got] = all_partitions(glue, db, indexed, Expression="category = 'Games' AND year = 2020")
    assert got["Values"] == moved and got["Parameters"] == {"v": "2"}
    # An update in place refreshes what the index returns.
    glue.update_partition(DatabaseName=db, TableName=indexed, PartitionValueList=moved,
                          PartitionInput=partition_input(moved, Parameters={"v": "3"}))
    [got] = all_partitions(glue, db, indexed, Expression="category = 'Games'")
    assert got["Parameters"] == {"v": "3"}
    glue.delete_partition(DatabaseName=db, TableName=indexed, PartitionValues=moved)
    assert all_partitions(glue, db, indexed, Expression="category = 'Games'") == []
    glue.batch_delete_partition(DatabaseName=db, TableName=indexed,
                                PartitionsToDelete=[{"Values": row("UK", "Toys", 2021)}])
    assert all_partitions(glue, db, indexed, Expression="category >= 'A'") == []


def test_deleting_the_table_drops_its_indexes(glue, db, indexed):
    glue.delete_table(DatabaseName=db, Name=indexed)
    glue.create_table(DatabaseName=db, TableInput=partitioned_table(indexed, KEYS),
                      PartitionIndexes=[index("by_category", "category", "year")])
    assert all_partitions(glue, db, indexed, Expression="category = 'Books'") == []
    assert all_partitions(glue, db, indexed) == []


# ---------------------------------------------------------------------------- UpdateTable
def _keys_changed(keys: list[tuple[str, str]], **changes) -> list[tuple[str, str]]:
    return [(changes.get(name, (name, kind))[0], changes.get(name, (name, kind))[1]) for name, kind in keys]


@pytest.mark.parametrize("new_keys", [
    _keys_changed(KEYS, year=("yr", "int")),  # rename an indexed key
    _keys_changed(KEYS, country=("nation", "string")),  # rename an unindexed key
    _keys_changed(KEYS, year=("year", "bigint")),  # retype an indexed key
    _keys_changed(KEYS, category=("category", "varchar(20)")),
    [KEYS[1], KEYS[0]] + KEYS[2:],  # reorder
    KEYS[:2] + [KEYS[3], KEYS[2]] + KEYS[4:],
    KEYS[:3],  # drop keys
])
def test_update_table_cannot_change_indexed_keys(glue, db, indexed, new_keys):
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.update_table(DatabaseName=db, TableInput=partitioned_table(indexed, new_keys))
    table = glue.get_table(DatabaseName=db, Name=indexed)["Table"]
    assert [(k["Name"], k["Type"]) for k in table["PartitionKeys"]] == KEYS


def test_update_table_may_change_everything_else(glue, db, indexed):
    new_keys = _keys_changed(KEYS, month=("month", "bigint"))  # unindexed: may be retyped
    glue.update_table(DatabaseName=db, TableInput=partitioned_table(
        indexed, new_keys, Description="now described", Parameters={"classification": "parquet"},
        StorageDescriptor={"Columns": [{"Name": "x", "Type": "string"}], "Location": "s3://elsewhere/"}))
    table = glue.get_table(DatabaseName=db, Name=indexed)["Table"]
    assert table["Description"] == "now described"
    assert [(k["Name"], k["Type"]) for k in table["PartitionKeys"]] == new_keys
    assert indexes_of(glue, db, indexed)["by_category"]["IndexStatus"] == "ACTIVE"
    assert len(all_partitions(glue, db, indexed, Expression="category = 'Books' AND month = 1")) == 1


def test_update_table_without_indexes_may_rename_keys(glue, db):
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("plain", KEYS))
    glue.update_table(DatabaseName=db, TableInput=partitioned_table("plain", _keys_changed(KEYS, year=("yr", "int"))))
    assert glue.get_table(DatabaseName=db, Name="plain")["Table"]["PartitionKeys"][2]["Name"] == "yr"


# ---------------------------------------------------------------------------------- cost
def test_selective_indexed_queries_read_few_items(glue, db):
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("sales", KEYS),
                      PartitionIndexes=[index("by_category", "category", "country", "year"),
                                        index("by_day", "dt")])
    rows = sample_rows()
    create_partitions(glue, db, "sales", rows)

    def check(expression: str, wanted) -> None:
        resp = glue.get_partitions(DatabaseName=db, TableName="sales", Expression=expression)
        expected = sorted(tuple(r) for r in rows if wanted(r))
        assert sorted(value_tuples(resp["Partitions"])) == expected, expression
        assert items_read(resp) <= 1.2 * len(expected) + 3, (expression, items_read(resp), len(expected))

    check("category = 'Shoes'", lambda r: r[1] == "Shoes")
    check("category = 'Shoes' AND country = 'JP'", lambda r: r[1] == "Shoes" and r[0] == "JP")
    check("category = 'Shoes' AND country = 'JP' AND year > '2015'",
          lambda r: r[1] == "Shoes" and r[0] == "JP" and int(r[2]) > 2015)
    # A residual filter on an unindexed key: 5 fetched, 4 returned.
    check("category = 'Toys' AND country = 'US' AND year BETWEEN 2012 AND 2016 AND month >= 9",
          lambda r: r[1] == "Toys" and r[0] == "US" and 2012 <= int(r[2]) <= 2016 and int(r[3]) >= 9)
    check("category IN ('Food', 'Games') AND country = 'DE'", lambda r: r[1] in ("Food", "Games") and r[0] == "DE")
    check("dt = '2015-04-03'", lambda r: r[4] == "2015-04-03")
    check("country = 'BR'", lambda r: r[0] == "BR")  # the partition keys' own order serves this
    check("category = 'Nothing'", lambda r: False)
    # Unselective or unplannable expressions still give the right answer.
    resp = glue.get_partitions(DatabaseName=db, TableName="sales",
                               Expression="year = 2011 OR month = 3 AND score = 0.5")
    assert sorted(value_tuples(resp["Partitions"])) == sorted(
        tuple(r) for r in rows if r[2] == "2011" or r[3] == "3")


# ------------------------------------------------------------------------------ edge values
def test_long_values_on_indexed_keys(glue, db):
    keys = [("a", "string"), ("b", "string"), ("n", "int")]
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("t", keys),
                      PartitionIndexes=[index("by_b", "b", "n")])
    long_b = "日" * 1024  # 3,072 UTF-8 bytes: more than a DynamoDB sort key holds
    rows = [["x", long_b, "1"], ["y", long_b, "2"], ["x", long_b[:-1] + "本", "1"], ["x", "B" * 1024, "3"],
            ["x", "B" * 1023 + "C", "3"], ["x", "short", "1"]]
    resp = glue.batch_create_partition(DatabaseName=db, TableName="t",
                                       PartitionInputList=[partition_input(r) for r in rows])
    assert resp["Errors"] == []
    assert sorted(value_tuples(all_partitions(glue, db, "t", Expression="b = '" + long_b + "'"))) == [
        ("x", long_b, "1"), ("y", long_b, "2")]
    assert value_tuples(all_partitions(glue, db, "t", Expression="b = '" + long_b + "' AND n > 1")) == [
        ("y", long_b, "2")]
    assert set(value_tuples(all_partitions(glue, db, "t", Expression="b >= '" + "B" * 1000 + "' AND b < 'C'"))) == {
        ("x", "B" * 1024, "3"), ("x", "B" * 1023 + "C", "3")}
    # The same values backfill into an index created later.
    glue.create_partition_index(DatabaseName=db, TableName="t", PartitionIndex=index("by_n_b", "n", "b"))
    assert indexes_of(glue, db, "t")["by_n_b"]["IndexStatus"] == "ACTIVE"
    assert sorted(value_tuples(all_partitions(glue, db, "t", Expression="n = 1 AND b > 'short'"))) == sorted(
        [("x", long_b, "1"), ("x", long_b[:-1] + "本", "1")])


def test_missing_partition_value_backfill_error(glue, db):
    keys = [("a", "string"), ("b", "int")]
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("t", keys),
                      PartitionIndexes=[index("by_a", "a")])
    create_partitions(glue, db, "t", [["x", "1"], ["y", "2"]])
    # Adding a partition key at the end is allowed with an index; old partitions lack its value.
    glue.update_table(DatabaseName=db, TableInput=partitioned_table("t", keys + [("c", "string")]))
    create_partitions(glue, db, "t", [["z", "3", "new"]])
    glue.create_partition_index(DatabaseName=db, TableName="t", PartitionIndex=index("by_c", "c"))
    descriptor = indexes_of(glue, db, "t")["by_c"]
    assert descriptor["IndexStatus"] == "FAILED"
    assert [e["Code"] for e in descriptor["BackfillErrors"]] == ["MISSING_PARTITION_VALUE_ERROR"]
    assert sorted(p["Values"] for p in descriptor["BackfillErrors"][0]["Partitions"]) == [["x", "1"], ["y", "2"]]
    assert sorted(value_tuples(all_partitions(glue, db, "t", Expression="c IS NULL"))) == [("x", "1"), ("y", "2")]
    assert value_tuples(all_partitions(glue, db, "t", Expression="c IS NOT NULL")) == [("z", "3", "new")]
    assert value_tuples(all_partitions(glue, db, "t", Expression="NOT c = 'x'")) == [("z", "3", "new")]
    assert value_tuples(all_partitions(glue, db, "t", Expression="a = 'y'")) == [("y", "2")]


def test_moving_onto_an_existing_partition_is_refused_with_an_index(glue, db, indexed):
    books, toys = row("US", "Books", 2020), row("UK", "Toys", 2021)
    with pytest.raises(glue.exceptions.AlreadyExistsException):
        glue.update_partition(DatabaseName=db, TableName=indexed, PartitionValueList=books,
                              PartitionInput=partition_input(toys))
    food, games = row("FR", "Food", 2022), row("JP", "Games", 2023)
    create_partitions(glue, db, indexed, [food])
    errors = glue.batch_update_partition(DatabaseName=db, TableName=indexed, Entries=[
        {"PartitionValueList": books, "PartitionInput": partition_input(toys)},
        {"PartitionValueList": food, "PartitionInput": partition_input(games)},
    ])["Errors"]
    assert [(e["PartitionValueList"], e["ErrorDetail"]["ErrorCode"]) for e in errors] == [
        (books, "AlreadyExistsException")]
    assert sorted(value_tuples(all_partitions(glue, db, indexed))) == sorted(map(tuple, [books, toys, games]))
    assert value_tuples(all_partitions(glue, db, indexed, Expression="category = 'Games'")) == [tuple(games)]
    assert all_partitions(glue, db, indexed, Expression="category = 'Food'") == []
    assert value_tuples(all_partitions(glue, db, indexed, Expression="category = 'Books'")) == [tuple(books)]
