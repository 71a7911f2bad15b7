"""The GetPartitions Expression language through the API: errors, and typed matching.

One table for the module, partitioned by (id string, region string, year int,
price decimal(10,2), dt date, code string); ``id`` names each partition so expected results
read as sets of letters. No partition index: the int/decimal/date keys hold some values that do
not convert to their type (``g``'s year, ``i``'s price, ``g``'s date), which match no typed
comparison, not even under NOT.
"""

from __future__ import annotations

import uuid

import pytest

from tests.integration.partition_helpers import all_partitions, create_partitions, partitioned_table

KEYS = [("id", "string"), ("region", "string"), ("year", "int"), ("price", "decimal(10,2)"),
        ("dt", "date"), ("code", "string")]

ROWS = {
    #     region     year    price    dt            code
    "a": ("us",      "2017", "1.10",  "2017-01-05", "10"),
    "b": ("us",      "2018", "2.50",  "2018-06-30", "9"),
    "c": ("uk",      "2019", "10.00", "2019-12-31", "100"),
    "d": ("de",      "9",    "0.1",   "2020-02-29", "2"),
    "e": ("US",      "2020", "2.5",   "2020-03-01", "abc"),
    "f": ("u_s",     "007",  "3.33",  "2016-07-07", "07"),
    "g": ("it",      "abc",  "1.5",   "not-a-date", "x"),
    "h": ("o'neil",  "2021", "-1.25", "2021-1-5",   "%"),
    "i": ("us-east", "10",   "n/a",   "2019-12-31", "Z"),
}
ALL = set(ROWS)


@pytest.fixture(scope="module")
def table(glue):
    """(database, table) holding the partitions of ROWS; dropped after the module."""
    db = f"db_{uuid.uuid4().hex[:12]}"
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("sales", KEYS))
    create_partitions(glue, db, "sales", [[key, *row] for key, row in ROWS.items()])
    yield db, "sales"
    glue.delete_database(Name=db)


def matching(glue, table, expression: str) -> set[str]:
    db, name = table
    found = [p["Values"][0] for p in all_partitions(glue, db, name, Expression=expression)]
    assert len(found) == len(set(found)), f"duplicates for {expression!r}: {found}"
    return set(found)


# --------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("expression, mentions", [
    ("nope = 1", "nope"),
    ("year = 1 AND Colour = 'red'", "Colour"),
    ("id = 'a' OR missing_key IN (1, 2)", "missing_key"),
])
def test_unknown_column_is_named(glue, table, expression, mentions):
    db, name = table
    with pytest.raises(glue.exceptions.InvalidInputException, match=mentions):
        glue.get_partitions(DatabaseName=db, TableName=name, Expression=expression)


@pytest.mark.parametrize("expression", [
    "year =",
    "year >> 3",
    "(year = 1",
    "year = 1)",
    "year = 1 AND",
    "AND year = 1",
    "year = 1 year = 2",
    "year BETWEEN 1",
    "year IN ()",
    "region LIKE",
    "region = 'unterminated",
    "year = 1 OR OR year = 2",
    "region IS 'x'",
    "year = NULL",
    "year = id",
    "year + 1 = 2",
    "region = us",
])
def test_unparsable_expression(glue, table, expression):
    db, name = table
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.get_partitions(DatabaseName=db, TableName=name, Expression=expression)


@pytest.mark.parametrize("expression", [
    "year = 'abc'",
    "year > '20.5'",
    "year IN (1, 'two')",
    "year BETWEEN 1 AND 'z'",
    "year = 99999999999",  # outside int
    "price = 'cheap'",
    "dt = '2021-02-30'",
    "dt > 'yesterday'",
    "dt = 2021-01-01",  # unquoted date: not arithmetic
    "dt BETWEEN 2021-01-01 AND '2021-12-31'",
])
def test_literal_that_does_not_fit_the_key_type(glue, table, expression):
    db, name = table
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.get_partitions(DatabaseName=db, TableName=name, Expression=expression)


def test_expression_length_limit(glue, table):
    db, name = table
    at_limit = "id = '" + "x" * 2041 + "'"
    assert len(at_limit) == 2048
    assert glue.get_partitions(DatabaseName=db, TableName=name, Expression=at_limit)["Partitions"] == []
    over = "id = '" + "x" * 2042 + "'"
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.get_partitions(DatabaseName=db, TableName=name, Expression=over)


def test_errors_are_raised_even_on_an_empty_table(glue, table):
    db, _ = table
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("empty", KEYS))
    with pytest.raises(glue.exceptions.InvalidInputException, match="nope"):
        glue.get_partitions(DatabaseName=db, TableName="empty", Expression="nope = 1")
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.get_partitions(DatabaseName=db, TableName="empty", Expression="year = 'abc'")


# ---------------------------------------------------------------------------------- matching
@pytest.mark.parametrize("expression, expected", [
    # empty means everything
    ("", ALL),
    ("   ", ALL),
    # int keys compare numerically, whatever the literal's quoting
    ("year > '2018'", {"c", "e", "h"}),
    ("year > 2018", {"c", "e", "h"}),
    ("year > 9", {"a", "b", "c", "e", "h", "i"}),
    ("year < 10", {"d", "f"}),
    ("year = 7", {"f"}),
    ("year = '007'", {"f"}),
    ("year >= 10 AND year <= 2017", {"a", "i"}),
    ("2018 < year", {"c", "e", "h"}),
    ("YEAR = 2017", {"a"}),
    # string keys compare lexically, numbers included
    ("code > '9'", {"e", "g", "i"}),
    ("code < '2'", {"a", "c", "f", "h"}),
    ("code = 10", {"a"}),
    ("code = '07'", {"f"}),
    # decimals compare exactly
    ("price = 2.5", {"b", "e"}),
    ("price = '2.50'", {"b", "e"}),
    ("price > 2.4999999999999999999", {"b", "c", "e", "f"}),
    ("price < 2.5000000000000000001 AND price > 2.4999999999999999999", {"b", "e"}),
    ("price < 0", {"h"}),
    ("price BETWEEN 1.1 AND 1.5", {"a", "g"}),
    ("price >= 10", {"c"}),
    # dates compare as dates (one-digit month and day parse too)
    ("dt = '2019-12-31'", {"c", "i"}),
    ("dt > '2020-01-01'", {"d", "e", "h"}),
    ("dt < '2017-01-06'", {"a", "f"}),
    ("dt = '2021-01-05'", {"h"}),
    ("dt BETWEEN '2018-01-01' AND '2019-12-31'", {"b", "c", "i"}),
    # LIKE: whole raw value, case-sensitive, % and _
    ("region LIKE 'us%'", {"a", "b", "i"}),
    ("region LIKE 'u_s'", {"f"}),
    ("region LIKE 'u%s'", {"a", "b", "f"}),
    ("region LIKE '%'", ALL),
    ("region LIKE 'US'", {"e"}),
    ("region LIKE '%e%'", {"d", "h", "i"}),
    ("region NOT LIKE 'u%'", {"d", "e", "g", "h"}),
    ("code LIKE '0%'", {"f"}),
    # IN / NOT IN
    ("region IN ('us', 'uk')", {"a", "b", "c"}),
    ("year IN (9, 10, '2017')", {"a", "d", "i"}),
    ("year NOT IN (2017, 2018)", {"c", "d", "e", "f", "h", "i"}),
    ("region NOT IN ('us', 'uk', 'de', 'US')", {"f", "g", "h", "i"}),
    # BETWEEN / NOT BETWEEN (inclusive)
    ("year BETWEEN 2017 AND 2019", {"a", "b", "c"}),
    ("year NOT BETWEEN 10 AND 2019", {"d", "e", "f", "h"}),
    ("year BETWEEN 2019 AND 2017", set()),
    # NULL tests: every partition has a value for every key
    ("region IS NULL", set()),
    ("region IS NOT NULL", ALL),
    ("year IS NOT NULL", ALL),
    # NOT, <>, != skip values that do not convert
    ("NOT year = 2017", {"b", "c", "d", "e", "f", "h", "i"}),
    ("NOT (year > 2000)", {"d", "f", "i"}),
    ("year <> 2017", {"b", "c", "d", "e", "f", "h", "i"}),
    ("year != 2017", {"b", "c", "d", "e", "f", "h", "i"}),
    ("region <> 'us'", ALL - {"a", "b"}),
    ("region != 'us'", ALL - {"a", "b"}),
    ("NOT NOT region = 'us'", {"a", "b"}),
    ("NOT (year = 1 OR NOT year > 2019)", {"e", "h"}),
    ("price <> 2.5", {"a", "c", "d", "f", "g", "h"}),
    ("NOT dt < '2019-01-01'", {"c", "d", "e", "h", "i"}),
    # keywords and strings
    ("year between 2017 and 2018 AnD region in ('us') oR id = 'h'", {"a", "b", "h"}),
    ("region = \"o'neil\"", {"h"}),
    ("region = 'o''neil'", {"h"}),
    ("region = \"us\" or code = \"%\"", {"a", "b", "h"}),
    ("code LIKE \"1%\"", {"a", "c"}),
    # precedence: NOT > AND > OR
    ("region = 'us' OR region = 'uk' AND year = 2017", {"a", "b"}),
    ("(region = 'us' OR region = 'uk') AND year = 2019", {"c"}),
    ("(region = 'us' OR region = 'uk') AND NOT year = 2017", {"b", "c"}),
    ("id = 'a' OR id = 'b' OR id = 'c' AND NOT id = 'c'", {"a", "b"}),
])
def test_matching(glue, table, expression, expected):
    assert matching(glue, table, expression) == expected


def test_matching_with_small_pages(glue, table):
    db, name = table
    found = [p["Values"][0] for p in all_partitions(glue, db, name, page_size=1, Expression="year > 9")]
    assert sorted(found) == ["a", "b", "c", "e", "h", "i"]
