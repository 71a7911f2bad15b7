"""GetPartitions Expression semantics where JSQLParser-based Glue differs from a naive reading
(issue #14 item 6), through boto3, on the indexed and the unindexed paths.

* Exponent notation (``3e14``, ``1E+3``, ``-2.5e-3``) as literals and as stored decimal and
  double values compares by value; integer keys take whole-valued number literals.
* LIKE on integer, decimal, double, date and timestamp keys is Glue's InvalidInputException.
* Parenthesised operands parse: ``(year) = 2020``, ``year = (2020)``, ``year IN ((2020), 2021)``.
* A number against a string key compares as the text written; a non-number against a numeric
  key is an InvalidInputException naming the key, its type and the literal.

The same rows sit in two tables: ``keyed`` is partitioned by the decimal key first, so the
planner serves decimal comparisons from the partitions table's sort key (whose exponent-notation
decimals sit in the key's invalid region: the plan must read it too); ``plain`` puts a string
key first, so they are full scans. Both must give the same answer. ``by_big`` has a partition
index on a bigint key, queried with exponent and parenthesised literals.
"""

from __future__ import annotations

import re
import uuid

import pytest

from tests.integration.partition_helpers import (all_partitions, create_partitions, error_code, items_read,
                                                 partition_input, partitioned_table)

TYPED = [("amount", "decimal(20,4)"), ("big", "bigint"), ("ratio", "double"), ("code", "string"),
         ("dt", "date"), ("ts", "timestamp")]
ROWS = {
    #     amount              big     ratio      code    dt            ts
    "a": ("3e14",            "1000",  "1E+3",    "5",    "2020-01-01", "2020-01-01 00:00:00"),
    "b": ("300000000000000", "1E+3",  "1000",    "05",   "2020-01-02", "2020-01-02 00:00:00"),
    "c": ("2.5",             "2500",  "2.5e0",   "5.0",  "2020-01-03", "2020-01-03 00:00:00"),
    "d": ("-2.5e-3",         "-3",    "-0.0025", "1E+3", "2020-01-04", "2020-01-04 00:00:00"),
    "e": ("0.5",             "7",     "5E-1",    "x",    "2020-01-05", "2020-01-05 00:00:00"),
    "f": ("1.5E2",           "150",   "150",     "x",    "2020-01-06", "2020-01-06 00:00:00"),
    "g": ("abc",             "abc",   "abc",     "x",    "2020-01-07", "2020-01-07 00:00:00"),
    "h": ("1e",              "0",     "1e",      "x",    "2020-01-08", "2020-01-08 00:00:00"),
    "i": ("7.25",            "10",    "7.25",    "x",    "2020-01-09", "2020-01-09 00:00:00"),
    "j": ("-1E+2",           "-100",  "-1e2",    "x",    "2020-01-10", "2020-01-10 00:00:00"),
}
ALL = set(ROWS)
KEYED = TYPED + [("id", "string")]  # decimal first: the partitions table's sort key orders by it
PLAIN = [("id", "string")] + TYPED  # string first: typed comparisons are full scans


@pytest.fixture(scope="module")
def tables(glue):
    """The database holding ``keyed``, ``plain`` and ``by_big``; dropped after the module."""
    db = f"db_{uuid.uuid4().hex[:12]}"
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("keyed", KEYED))
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("plain", PLAIN))
    create_partitions(glue, db, "keyed", [[*row, key] for key, row in ROWS.items()])
    create_partitions(glue, db, "plain", [[key, *row] for key, row in ROWS.items()])
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("by_big", [("id", "string"), ("big", "bigint")]),
                      PartitionIndexes=[{"IndexName": "big_first", "Keys": ["big"]}])
    create_partitions(glue, db, "by_big", [[str(n), str(n * 50)] for n in range(40)])
    yield db
    glue.delete_database(Name=db)


def ids(glue, db: str, table: str, expression: str) -> tuple[set[str], int]:
    """The ids of the matching partitions and the DynamoDB items the requests read."""
    position = 0 if table in ("plain", "by_big") else len(KEYED) - 1
    pages = list(glue.get_paginator("get_partitions").paginate(
        DatabaseName=db, TableName=table, Expression=expression, ExcludeColumnSchema=True))
    found = [p["Values"][position] for page in pages for p in page["Partitions"]]
    assert len(found) == len(set(found)), f"duplicates for {expression!r}: {found}"
    return set(found), sum(items_read(page) for page in pages)


# ----------------------------------------------------------------------- exponent notation
@pytest.mark.parametrize("expression, expected", [
    ("amount = 3e14", {"a", "b"}),
    ("amount = 300000000000000", {"a", "b"}),
    ("amount = '3E+14'", {"a", "b"}),
    ("amount > 100", {"a", "b", "f"}),
    ("amount >= 1.5e2 AND amount < 3E14", {"f"}),
    ("amount BETWEEN -0.01 AND 1", {"d", "e"}),
    ("amount < 0", {"d", "j"}),
    ("amount = -100", {"j"}),
    ("amount IN (150, 2.5, 7.25e0)", {"c", "f", "i"}),
    ("amount = -2.5E-3", {"d"}),
    ("amount = -0.0025 OR amount = 3e14", {"a", "b", "d"}),
    ("NOT amount = 3e14", ALL - {"a", "b", "g", "h"}),  # 'abc' and '1e' are not decimals
    ("amount <> 0.5", ALL - {"e", "g", "h"}),
    ("big = 1E+3", {"a"}),  # b's '1E+3' is not an integer as stored text (Long.parseLong)
    ("big = 1000", {"a"}),
    ("big = 2500.0", {"c"}),
    ("big >= 1.5e2", {"a", "c", "f"}),
    ("big BETWEEN -1e2 AND 1E1", {"d", "e", "h", "i", "j"}),
    ("ratio = 1000", {"a", "b"}),
    ("ratio = 1e3", {"a", "b"}),
    ("ratio = 2.5", {"c"}),
    ("ratio = 0.5", {"e"}),
    ("ratio < 0", {"d", "j"}),
    ("ratio = '-1E2'", {"j"}),
])
def test_exponent_notation_compares_by_value(glue, tables, expression, expected):
    keyed, _ = ids(glue, tables, "keyed", expression)
    plain, _ = ids(glue, tables, "plain", expression)
    assert plain == expected
    assert keyed == expected


@pytest.mark.parametrize("expression", ["amount = 3e14", "amount > 100", "amount IN (150, 2.5)",
                                        "amount BETWEEN -0.01 AND 1"])
def test_decimal_ranges_on_the_partitions_table_are_narrowed(glue, tables, expression):
    found, read = ids(glue, tables, "keyed", expression)
    assert read < len(ROWS)  # served by sort-key ranges, including the invalid region, not a scan
    assert found == ids(glue, tables, "plain", expression)[0]


def test_partitions_with_exponent_decimals_stay_addressable(glue, tables):
    # GetPartition recomputes the sort key from the values: it must be the one stored.
    for table, values in (("keyed", [*ROWS["a"], "a"]), ("plain", ["d", *ROWS["d"]])):
        got = glue.get_partition(DatabaseName=tables, TableName=table, PartitionValues=values)
        assert got["Partition"]["Values"] == values
    with pytest.raises(glue.exceptions.AlreadyExistsException):
        glue.create_partition(DatabaseName=tables, TableName="keyed", PartitionInput=partition_input([*ROWS["f"], "f"]))


@pytest.mark.parametrize("expression, expected", [
    ("big = 1E+3", {"20"}),
    ("big = (1e3)", {"20"}),
    ("(big) BETWEEN 1e2 AND 2.5E2", {"2", "3", "4", "5"}),
    ("big IN ((5E1), 1.5e2)", {"1", "3"}),
])
def test_exponent_literals_use_a_partition_index(glue, tables, expression, expected):
    found, read = ids(glue, tables, "by_big", expression)
    assert found == expected
    assert read < 40


# ---------------------------------------------------------------------------------- LIKE
@pytest.mark.parametrize("expression, message", [
    ("big LIKE '1%'", "Integral data type doesn't support operation 'LIKE'"),
    ("big NOT LIKE '1%'", "Integral data type doesn't support operation 'LIKE'"),
    ("amount LIKE '3%'", "Decimal data type doesn't support operation 'LIKE'"),
    ("ratio LIKE '1%'", "Double data type doesn't support operation 'LIKE'"),
    ("dt LIKE '2020-%'", "Date data type doesn't support operation 'LIKE'"),
    ("ts LIKE '2020-%'", "Timestamp data type doesn't support operation 'LIKE'"),
    ("code = 'x' OR (big) LIKE '%'", "Integral data type doesn't support operation 'LIKE'"),
])
def test_like_on_a_non_string_key_is_refused(glue, tables, expression, message):
    for table in ("keyed", "plain"):
        with pytest.raises(glue.exceptions.InvalidInputException) as caught:
            glue.get_partitions(DatabaseName=tables, TableName=table, Expression=expression)
        assert caught.value.response["Error"]["Message"] == message


def test_like_on_a_string_key_still_matches(glue, tables):
    assert ids(glue, tables, "plain", "code LIKE '5%'")[0] == {"a", "c"}
    assert ids(glue, tables, "keyed", "(code) LIKE ('_E%')")[0] == {"d"}


# ---------------------------------------------------------------------- parenthesised operands
@pytest.mark.parametrize("expression, expected", [
    ("(big) = 2500", {"c"}),
    ("big = (2500)", {"c"}),
    ("((big)) = 2500", {"c"}),
    ("(big) = ((2500))", {"c"}),
    ("big IN ((7), 10)", {"e", "i"}),
    ("(amount) = (3e14)", {"a", "b"}),
    ("((code)) = ('05')", {"b"}),
    ("(ratio) BETWEEN (0) AND ((1))", {"e"}),
    ("(2500) = big", {"c"}),
    ("((big) = 7 OR (big) = (10)) AND NOT (code) = 'y'", {"e", "i"}),
    ("(dt) > ('2020-01-08')", {"i", "j"}),
    ("(big) IS NOT NULL AND (id) = 'a'", {"a"}),
])
def test_parenthesised_operands(glue, tables, expression, expected):
    assert ids(glue, tables, "keyed", expression)[0] == expected
    assert ids(glue, tables, "plain", expression)[0] == expected


@pytest.mark.parametrize("expression, fragment", [
    ("(big = 7", "Expected ')'"),
    ("big = (7", "Expected ')'"),
    ("big IN ((7, 10))", "Expected ')'"),
    ("(big) = ", "Expected literal"),
    ("(big = 7) = 7", "Syntax error"),
])
def test_unbalanced_parentheses_are_syntax_errors(glue, tables, expression, fragment):
    with pytest.raises(glue.exceptions.InvalidInputException, match=re.escape(fragment)):
        glue.get_partitions(DatabaseName=tables, TableName="plain", Expression=expression)


# -------------------------------------------------------------- numbers and strings, crossed
@pytest.mark.parametrize("expression, expected", [
    ("code = 5", {"a"}),  # the text as written: '5', not '05' or '5.0'
    ("code = '5'", {"a"}),
    ("code = 05", {"b"}),
    ("code = 5.0", {"c"}),
    ("code = 1E+3", {"d"}),
    ("code IN (5, 1E+3)", {"a", "d"}),
    ("code > 4", ALL - {"b", "d"}),  # text order: '05' and '1E+3' sort below '4'
])
def test_a_number_against_a_string_key_compares_as_written(glue, tables, expression, expected):
    assert ids(glue, tables, "plain", expression)[0] == expected
    assert ids(glue, tables, "keyed", expression)[0] == expected


@pytest.mark.parametrize("expression, fragments", [
    ("big = 'abc'", ["'abc'", "bigint", "'big'"]),
    ("amount = 'cheap'", ["'cheap'", "decimal(20,4)", "'amount'"]),
    ("ratio IN (1, 'x')", ["'x'", "double", "'ratio'"]),
    ("big = 2.5e-3", ["2.5e-3", "bigint", "'big'", "expected an integer"]),
    ("big = '1e3'", ["'1e3'", "bigint", "expected an integer"]),
    ("dt = 3e14", ["3e14", "date", "'dt'"]),
    ("amount = 1e9999999999", ["1e9999999999", "expected a decimal number"]),  # no 500 from Decimal
])
def test_a_non_number_against_a_numeric_key_is_refused(glue, tables, expression, fragments):
    for table in ("keyed", "plain"):
        with pytest.raises(glue.exceptions.InvalidInputException) as caught:
            glue.get_partitions(DatabaseName=tables, TableName=table, Expression=expression)
        assert error_code(caught) == "InvalidInputException"
        message = caught.value.response["Error"]["Message"]
        for fragment in fragments:
            assert fragment in message, message


def test_every_partition_is_listed_without_an_expression(glue, tables):
    for table in ("keyed", "plain"):
        assert len(all_partitions(glue, tables, table, ExcludeColumnSchema=True)) == len(ROWS)
