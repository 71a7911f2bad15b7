"""Column statistics for tables and partitions, through boto3 over HTTP.

Covers the seven statistics types (exact round trips, type checks per entry), the limits,
per-entry errors, LastAnalyzedTime, and cleanup when a column, partition or table goes away.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from tests.integration.conftest import table_input

UTC = dt.timezone.utc
ANALYZED = dt.datetime(2024, 5, 17, 8, 30, 15, tzinfo=UTC)

# Every column type the tests use; each statistics type has exactly one natural column here.
COLUMNS = [
    {"Name": "flag", "Type": "boolean"},
    {"Name": "day", "Type": "date"},
    {"Name": "amount", "Type": "decimal(38,4)"},
    {"Name": "ratio", "Type": "double"},
    {"Name": "qty", "Type": "bigint"},
    {"Name": "label", "Type": "string"},
    {"Name": "payload", "Type": "binary"},
    {"Name": "code", "Type": "varchar(12)"},
    {"Name": "small", "Type": "int"},
]


def unscaled(number: int) -> bytes:
    """Big-endian two's-complement bytes of an integer, as Glue's DecimalNumber holds them."""
    length = max(1, (number + (number < 0)).bit_length() // 8 + 1)
    return number.to_bytes(length, "big", signed=True)


def stats(column: str, column_type: str, kind: str, data: dict[str, Any],
          analyzed: dt.datetime = ANALYZED) -> dict[str, Any]:
    """A ColumnStatistics entry."""
    member = {"BOOLEAN": "BooleanColumnStatisticsData", "DATE": "DateColumnStatisticsData",
              "DECIMAL": "DecimalColumnStatisticsData", "DOUBLE": "DoubleColumnStatisticsData",
              "LONG": "LongColumnStatisticsData", "STRING": "StringColumnStatisticsData",
              "BINARY": "BinaryColumnStatisticsData"}[kind]
    return {"ColumnName": column, "ColumnType": column_type, "AnalyzedTime": analyzed,
            "StatisticsData": {"Type": kind, member: data}}


# One valid entry per statistics type, for the column of the matching type.
SAMPLES = {
    "BOOLEAN": stats("flag", "boolean", "BOOLEAN",
                     {"NumberOfTrues": 12, "NumberOfFalses": 30, "NumberOfNulls": 2}),
    "DATE": stats("day", "date", "DATE",
                  {"MinimumValue": dt.datetime(1999, 12, 31, tzinfo=UTC),
                   "MaximumValue": dt.datetime(2038, 1, 19, tzinfo=UTC),
                   "NumberOfNulls": 0, "NumberOfDistinctValues": 3650}),
    "DECIMAL": stats("amount", "decimal(38,4)", "DECIMAL",
                     {"MinimumValue": {"UnscaledValue": unscaled(-123456789012345678901234567), "Scale": 4},
                      "MaximumValue": {"UnscaledValue": unscaled(98765432109876543210987654321), "Scale": 4},
                      "NumberOfNulls": 5, "NumberOfDistinctValues": 9001}),
    "DOUBLE": stats("ratio", "double", "DOUBLE",
                    {"MinimumValue": -0.1, "MaximumValue": 1.7976931348623157e308,
                     "NumberOfNulls": 1, "NumberOfDistinctValues": 77}),
    "LONG": stats("qty", "bigint", "LONG",
                  {"MinimumValue": -9223372036854775808, "MaximumValue": 9223372036854775807,
                   "NumberOfNulls": 0, "NumberOfDistinctValues": 123456789}),
    "STRING": stats("label", "string", "STRING",
                    {"MaximumLength": 255, "AverageLength": 17.25, "NumberOfNulls": 3,
                     "NumberOfDistinctValues": 40}),
    "BINARY": stats("payload", "binary", "BINARY",
                    {"MaximumLength": 4096, "AverageLength": 1024.5, "NumberOfNulls": 8}),
}

# For each statistics type, a column it must not describe.
INCOMPATIBLE = {"BOOLEAN": ("label", "string"), "DATE": ("qty", "bigint"),
                "DECIMAL": ("ratio", "double"), "DOUBLE": ("amount", "decimal(38,4)"),
                "LONG": ("label", "string"), "STRING": ("qty", "bigint"),
                "BINARY": ("label", "string")}


def items_read(response: dict[str, Any]) -> int:
    """DynamoDB items the request read, from the service's ``x-glue-items-read`` header."""
    return int(response["ResponseMetadata"]["HTTPHeaders"]["x-glue-items-read"])


def make_table(glue, db: str, name: str = "facts", columns=None) -> str:
    glue.create_table(DatabaseName=db, TableInput=table_input(
        name, StorageDescriptor={"Columns": columns or COLUMNS, "Location": f"s3://bucket/{name}/"}))
    return name


def add_partition(glue, db: str, table: str, year: str, columns=None) -> None:
    glue.create_partition(DatabaseName=db, TableName=table, PartitionInput={
        "Values": [year],
        "StorageDescriptor": {"Columns": columns or COLUMNS, "Location": f"s3://bucket/{table}/year={year}/"}})


def table_stats(glue, db: str, table: str, names: list[str]) -> tuple[dict[str, dict], dict[str, dict]]:
    """({column: statistics}, {column: error}) from GetColumnStatisticsForTable."""
    got = glue.get_column_statistics_for_table(DatabaseName=db, TableName=table, ColumnNames=names)
    return ({s["ColumnName"]: s for s in got["ColumnStatisticsList"]},
            {e["ColumnName"]: e["Error"] for e in got["Errors"]})


def partition_stats(glue, db: str, table: str, year: str, names: list[str]) -> tuple[dict, dict]:
    got = glue.get_column_statistics_for_partition(DatabaseName=db, TableName=table, PartitionValues=[year],
                                                   ColumnNames=names)
    return ({s["ColumnName"]: s for s in got["ColumnStatisticsList"]},
            {e["ColumnName"]: e["Error"] for e in got["Errors"]})


@pytest.fixture
def table(glue, db) -> str:
    return make_table(glue, db)


# ------------------------------------------------------------------------------ round trips
def test_every_statistics_type_round_trips_exactly(glue, db, table):
    entries = list(SAMPLES.values()) + [
        stats("code", "varchar(12)", "STRING", {"MaximumLength": 12, "AverageLength": 11.5,
                                                "NumberOfNulls": 0, "NumberOfDistinctValues": 10}),
        stats("small", "int", "LONG", {"MinimumValue": 0, "MaximumValue": 0, "NumberOfNulls": 0,
                                       "NumberOfDistinctValues": 1}),
    ]
    answer = glue.update_column_statistics_for_table(DatabaseName=db, TableName=table,
                                                     ColumnStatisticsList=entries)
    assert answer["Errors"] == []
    found, errors = table_stats(glue, db, table, [e["ColumnName"] for e in entries])
    assert errors == {}
    for entry in entries:
        assert found[entry["ColumnName"]] == entry, entry["ColumnName"]
    decimal = found["amount"]["StatisticsData"]["DecimalColumnStatisticsData"]
    assert decimal["MinimumValue"]["UnscaledValue"] == unscaled(-123456789012345678901234567)
    assert decimal["MaximumValue"] == {"UnscaledValue": unscaled(98765432109876543210987654321), "Scale": 4}


def test_decimal_values_are_kept_as_given(glue, db, table):
    # Same numeric value written two ways: the stored bytes and scale are not normalised.
    entry = stats("amount", "decimal(38,4)", "DECIMAL",
                  {"MinimumValue": {"UnscaledValue": b"\x00\x00\x01", "Scale": 0},
                   "MaximumValue": {"UnscaledValue": b"\x03\xe8", "Scale": 3},
                   "NumberOfNulls": 0, "NumberOfDistinctValues": 1})
    assert glue.update_column_statistics_for_table(DatabaseName=db, TableName=table,
                                                   ColumnStatisticsList=[entry])["Errors"] == []
    found, _ = table_stats(glue, db, table, ["amount"])
    assert found["amount"] == entry


def test_update_replaces_and_names_are_case_insensitive(glue, db, table):
    first = SAMPLES["LONG"]
    second = stats("QTY", "BIGINT", "LONG", {"MinimumValue": 1, "MaximumValue": 2, "NumberOfNulls": 0,
                                              "NumberOfDistinctValues": 2},
                   analyzed=ANALYZED + dt.timedelta(days=1))
    glue.update_column_statistics_for_table(DatabaseName=db, TableName=table, ColumnStatisticsList=[first])
    glue.update_column_statistics_for_table(DatabaseName=db, TableName=table, ColumnStatisticsList=[second])
    got = glue.get_column_statistics_for_table(DatabaseName=db, TableName=table, ColumnNames=["Qty"])
    assert got["Errors"] == []
    [only] = got["ColumnStatisticsList"]
    assert only["StatisticsData"] == second["StatisticsData"]


# ------------------------------------------------------------------------------ validation
@pytest.mark.parametrize("kind", sorted(INCOMPATIBLE))
def test_incompatible_column_type_is_an_error_for_that_entry_only(glue, db, table, kind):
    column, column_type = INCOMPATIBLE[kind]
    sample = SAMPLES[kind]
    wrong = {**sample, "ColumnName": column, "ColumnType": column_type}
    good_kind = "BOOLEAN" if kind != "BOOLEAN" else "DOUBLE"
    good = SAMPLES[good_kind]
    answer = glue.update_column_statistics_for_table(DatabaseName=db, TableName=table,
                                                     ColumnStatisticsList=[wrong, good])
    [error] = answer["Errors"]
    assert error["ColumnStatistics"]["ColumnName"] == column
    assert error["Error"]["ErrorCode"] == "InvalidInputException"
    found, errors = table_stats(glue, db, table, [column, good["ColumnName"]])
    assert found == {good["ColumnName"]: good}
    assert set(errors) == {column}


def test_column_type_must_match_the_declared_type(glue, db, table):
    lying = {**SAMPLES["LONG"], "ColumnType": "int"}  # qty is bigint
    mismatched_member = {**SAMPLES["LONG"], "StatisticsData": {
        "Type": "LONG", "DoubleColumnStatisticsData": {"NumberOfNulls": 0, "NumberOfDistinctValues": 0}}}
    for entry in (lying, mismatched_member):
        answer = glue.update_column_statistics_for_table(DatabaseName=db, TableName=table,
                                                         ColumnStatisticsList=[entry])
        assert [e["Error"]["ErrorCode"] for e in answer["Errors"]] == ["InvalidInputException"]
    assert table_stats(glue, db, table, ["qty"])[0] == {}


def test_unknown_column_is_reported_per_entry(glue, db, table):
    ghost = {**SAMPLES["STRING"], "ColumnName": "no_such_column"}
    answer = glue.update_column_statistics_for_table(DatabaseName=db, TableName=table,
                                                     ColumnStatisticsList=[ghost, SAMPLES["STRING"]])
    [error] = answer["Errors"]
    assert error["ColumnStatistics"]["ColumnName"] == "no_such_column"
    assert error["Error"]["ErrorCode"] in ("EntityNotFoundException", "InvalidInputException")
    assert table_stats(glue, db, table, ["label"])[0] == {"label": SAMPLES["STRING"]}


@pytest.mark.parametrize("kind,low,high", [
    ("LONG", 10, 9),
    ("DOUBLE", 0.5, -0.5),
    ("DATE", dt.datetime(2024, 1, 2, tzinfo=UTC), dt.datetime(2024, 1, 1, tzinfo=UTC)),
    ("DECIMAL", {"UnscaledValue": unscaled(1001), "Scale": 2}, {"UnscaledValue": unscaled(10), "Scale": 0}),
])
def test_minimum_above_maximum_is_rejected(glue, db, table, kind, low, high):
    sample = SAMPLES[kind]
    member = next(k for k in sample["StatisticsData"] if k != "Type")
    data = {**sample["StatisticsData"][member], "MinimumValue": low, "MaximumValue": high}
    bad = {**sample, "StatisticsData": {"Type": kind, member: data}}
    answer = glue.update_column_statistics_for_table(DatabaseName=db, TableName=table,
                                                     ColumnStatisticsList=[bad])
    assert [e["Error"]["ErrorCode"] for e in answer["Errors"]] == ["InvalidInputException"]
    assert table_stats(glue, db, table, [sample["ColumnName"]])[0] == {}


def test_limits_on_entries_and_names(glue, db, table):
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.update_column_statistics_for_table(DatabaseName=db, TableName=table,
                                                ColumnStatisticsList=[SAMPLES["LONG"]] * 26)
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.get_column_statistics_for_table(DatabaseName=db, TableName=table,
                                             ColumnNames=[f"c{i}" for i in range(101)])
    add_partition(glue, db, table, "2024")
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.update_column_statistics_for_partition(DatabaseName=db, TableName=table, PartitionValues=["2024"],
                                                    ColumnStatisticsList=[SAMPLES["LONG"]] * 26)
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.get_column_statistics_for_partition(DatabaseName=db, TableName=table, PartitionValues=["2024"],
                                                 ColumnNames=[f"c{i}" for i in range(101)])
    assert table_stats(glue, db, table, ["qty"])[0] == {}


def test_same_column_twice_in_one_update_is_not_a_server_fault(glue, db, table):
    later = stats("qty", "bigint", "LONG", {"MinimumValue": 5, "MaximumValue": 6, "NumberOfNulls": 0,
                                            "NumberOfDistinctValues": 2})
    answer = glue.update_column_statistics_for_table(DatabaseName=db, TableName=table,
                                                     ColumnStatisticsList=[SAMPLES["LONG"], later])
    found, _ = table_stats(glue, db, table, ["qty"])
    if answer["Errors"]:
        assert len(answer["Errors"]) == 1
    else:
        assert found["qty"] == later  # applied in order: the last entry wins


def test_missing_table_or_database(glue, db):
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_column_statistics_for_table(DatabaseName=db, TableName="nope", ColumnNames=["a"])
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.update_column_statistics_for_table(DatabaseName="no_such_db_x", TableName="t",
                                                ColumnStatisticsList=[SAMPLES["LONG"]])


# ------------------------------------------------------------------------------ get / delete
def test_get_reports_unknown_columns_and_columns_without_statistics(glue, db, table):
    glue.update_column_statistics_for_table(DatabaseName=db, TableName=table,
                                            ColumnStatisticsList=[SAMPLES["BOOLEAN"]])
    found, errors = table_stats(glue, db, table, ["flag", "label", "Nope"])
    assert found == {"flag": SAMPLES["BOOLEAN"]}
    assert set(errors) == {"label", "Nope"}
    assert all(e["ErrorCode"] == "EntityNotFoundException" for e in errors.values())
    assert glue.get_column_statistics_for_table(DatabaseName=db, TableName=table, ColumnNames=[]) \
        ["ColumnStatisticsList"] == []


def test_delete_table_statistics(glue, db, table):
    glue.update_column_statistics_for_table(DatabaseName=db, TableName=table,
                                            ColumnStatisticsList=[SAMPLES["LONG"], SAMPLES["STRING"]])
    glue.delete_column_statistics_for_table(DatabaseName=db, TableName=table, ColumnName="qty")
    found, errors = table_stats(glue, db, table, ["qty", "label"])
    assert set(found) == {"label"} and set(errors) == {"qty"}
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.delete_column_statistics_for_table(DatabaseName=db, TableName=table, ColumnName="qty")
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.delete_column_statistics_for_table(DatabaseName=db, TableName=table, ColumnName="no_such_column")


def test_last_analyzed_time_moves_without_a_new_version(glue, db, table):
    before = glue.get_table(DatabaseName=db, Name=table)["Table"]
    versions = len(glue.get_table_versions(DatabaseName=db, TableName=table)["TableVersions"])
    newer = {**SAMPLES["STRING"], "AnalyzedTime": ANALYZED + dt.timedelta(hours=3)}
    glue.update_column_statistics_for_table(DatabaseName=db, TableName=table,
                                            ColumnStatisticsList=[SAMPLES["LONG"], newer])
    after = glue.get_table(DatabaseName=db, Name=table)["Table"]
    assert after["LastAnalyzedTime"] == ANALYZED + dt.timedelta(hours=3)
    assert after["VersionId"] == before["VersionId"]
    assert after["UpdateTime"] == before["UpdateTime"]
    assert len(glue.get_table_versions(DatabaseName=db, TableName=table)["TableVersions"]) == versions
    # An older analysis does not move it back.
    glue.update_column_statistics_for_table(DatabaseName=db, TableName=table,
                                            ColumnStatisticsList=[SAMPLES["BOOLEAN"]])
    assert glue.get_table(DatabaseName=db, Name=table)["Table"]["LastAnalyzedTime"] == \
        ANALYZED + dt.timedelta(hours=3)
    # VersionId-guarded updates still work after statistics were written.
    glue.update_table(DatabaseName=db, TableInput=table_input(
        table, StorageDescriptor={"Columns": COLUMNS, "Location": "s3://bucket/x/"}),
        VersionId=after["VersionId"])


# ------------------------------------------------------------------------------ partitions
def test_partition_statistics_lifecycle(glue, db, table):
    add_partition(glue, db, table, "2023")
    add_partition(glue, db, table, "2024")
    kw = {"DatabaseName": db, "TableName": table}
    answer = glue.update_column_statistics_for_partition(
        **kw, PartitionValues=["2024"],
        ColumnStatisticsList=[SAMPLES["DECIMAL"], SAMPLES["DATE"], {**SAMPLES["LONG"], "ColumnName": "label"}])
    assert [e["ColumnStatistics"]["ColumnName"] for e in answer["Errors"]] == ["label"]
    found, errors = partition_stats(glue, db, table, "2024", ["amount", "day", "label", "ghost"])
    assert found == {"amount": SAMPLES["DECIMAL"], "day": SAMPLES["DATE"]}
    assert set(errors) == {"label", "ghost"}
    # Per partition, and apart from the table's own statistics.
    assert partition_stats(glue, db, table, "2023", ["amount"])[0] == {}
    assert table_stats(glue, db, table, ["amount"])[0] == {}
    partition = glue.get_partition(**kw, PartitionValues=["2024"])["Partition"]
    assert partition["LastAnalyzedTime"] == ANALYZED
    assert "LastAnalyzedTime" not in glue.get_partition(**kw, PartitionValues=["2023"])["Partition"]

    # An UpdatePartition that keeps the columns keeps the statistics.
    glue.update_partition(**kw, PartitionValueList=["2024"], PartitionInput={
        "Values": ["2024"], "Parameters": {"rows": "10"},
        "StorageDescriptor": {"Columns": COLUMNS, "Location": "s3://bucket/moved/"}})
    assert partition_stats(glue, db, table, "2024", ["amount", "day"])[0] == \
        {"amount": SAMPLES["DECIMAL"], "day": SAMPLES["DATE"]}

    glue.delete_column_statistics_for_partition(**kw, PartitionValues=["2024"], ColumnName="day")
    assert set(partition_stats(glue, db, table, "2024", ["amount", "day"])[0]) == {"amount"}
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.delete_column_statistics_for_partition(**kw, PartitionValues=["2024"], ColumnName="day")

    # Gone with the partition: a re-created partition starts without statistics.
    glue.delete_partition(**kw, PartitionValues=["2024"])
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_column_statistics_for_partition(**kw, PartitionValues=["2024"], ColumnNames=["amount"])
    add_partition(glue, db, table, "2024")
    found, errors = partition_stats(glue, db, table, "2024", ["amount"])
    assert found == {} and set(errors) == {"amount"}
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.delete_column_statistics_for_partition(**kw, PartitionValues=["2024"], ColumnName="amount")


def test_partition_statistics_follow_the_partition_columns(glue, db, table):
    # A partition with its own (narrower) schema: statistics are checked against it.
    add_partition(glue, db, table, "2022", columns=[{"Name": "qty", "Type": "string"}])
    answer = glue.update_column_statistics_for_partition(
        DatabaseName=db, TableName=table, PartitionValues=["2022"],
        ColumnStatisticsList=[SAMPLES["LONG"], {**SAMPLES["STRING"], "ColumnName": "qty"}, SAMPLES["BOOLEAN"]])
    assert sorted(e["ColumnStatistics"]["StatisticsData"]["Type"] for e in answer["Errors"]) == ["BOOLEAN", "LONG"]
    found, _ = partition_stats(glue, db, table, "2022", ["qty"])
    assert found["qty"]["StatisticsData"]["Type"] == "STRING"
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.update_column_statistics_for_partition(DatabaseName=db, TableName=table, PartitionValues=["1999"],
                                                    ColumnStatisticsList=[SAMPLES["LONG"]])


def test_statistics_go_with_the_table(glue, db, table):
    add_partition(glue, db, table, "2024")
    glue.update_column_statistics_for_table(DatabaseName=db, TableName=table,
                                            ColumnStatisticsList=[SAMPLES["LONG"]])
    glue.update_column_statistics_for_partition(DatabaseName=db, TableName=table, PartitionValues=["2024"],
                                                ColumnStatisticsList=[SAMPLES["LONG"]])
    glue.delete_table(DatabaseName=db, Name=table)
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_column_statistics_for_table(DatabaseName=db, TableName=table, ColumnNames=["qty"])
    make_table(glue, db, table)
    add_partition(glue, db, table, "2024")
    found, errors = table_stats(glue, db, table, ["qty"])
    assert found == {} and set(errors) == {"qty"}
    assert partition_stats(glue, db, table, "2024", ["qty"])[0] == {}
    assert "LastAnalyzedTime" not in glue.get_table(DatabaseName=db, Name=table)["Table"]


def test_dropping_a_column_drops_its_statistics(glue, db, table):
    add_partition(glue, db, table, "2024")
    kw = {"DatabaseName": db, "TableName": table}
    glue.update_column_statistics_for_table(**kw, ColumnStatisticsList=[SAMPLES["LONG"], SAMPLES["STRING"]])
    glue.update_column_statistics_for_partition(**kw, PartitionValues=["2024"],
                                                ColumnStatisticsList=[SAMPLES["LONG"], SAMPLES["STRING"]])
    without_qty = [c for c in COLUMNS if c["Name"] != "qty"]
    glue.update_table(DatabaseName=db, TableInput=table_input(
        table, StorageDescriptor={"Columns": without_qty, "Location": "s3://bucket/x/"}))
    found, errors = table_stats(glue, db, table, ["qty", "label"])
    assert set(found) == {"label"} and set(errors) == {"qty"}
    assert set(partition_stats(glue, db, table, "2024", ["qty", "label"])[0]) == {"label"}

    # The column comes back: its old statistics do not.
    glue.update_table(DatabaseName=db, TableInput=table_input(
        table, StorageDescriptor={"Columns": COLUMNS, "Location": "s3://bucket/x/"}))
    found, errors = table_stats(glue, db, table, ["qty", "label"])
    assert set(found) == {"label"} and set(errors) == {"qty"}
    assert set(partition_stats(glue, db, table, "2024", ["qty", "label"])[0]) == {"label"}
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.delete_column_statistics_for_table(**kw, ColumnName="qty")
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.delete_column_statistics_for_partition(**kw, PartitionValues=["2024"], ColumnName="qty")
    # ... and new ones can be written for it.
    glue.update_column_statistics_for_table(**kw, ColumnStatisticsList=[SAMPLES["LONG"]])
    glue.update_column_statistics_for_partition(**kw, PartitionValues=["2024"], ColumnStatisticsList=[SAMPLES["LONG"]])
    assert table_stats(glue, db, table, ["qty"])[0] == {"qty": SAMPLES["LONG"]}
    assert partition_stats(glue, db, table, "2024", ["qty"])[0] == {"qty": SAMPLES["LONG"]}


def test_changing_a_column_type_hides_statistics_of_the_old_type(glue, db, table):
    glue.update_column_statistics_for_table(DatabaseName=db, TableName=table,
                                            ColumnStatisticsList=[SAMPLES["LONG"]])
    retyped = [{**c, "Type": "string"} if c["Name"] == "qty" else c for c in COLUMNS]
    glue.update_table(DatabaseName=db, TableInput=table_input(
        table, StorageDescriptor={"Columns": retyped, "Location": "s3://bucket/x/"}))
    found, errors = table_stats(glue, db, table, ["qty"])
    assert found == {} and set(errors) == {"qty"}


# ------------------------------------------------------------------------------ cost
def test_hundred_columns_are_read_in_one_store_round_trip(glue, db):
    columns = [{"Name": f"c{i:03d}", "Type": "bigint"} for i in range(100)]
    table = make_table(glue, db, "wide", columns)
    entries = [stats(c["Name"], "bigint", "LONG", {"MinimumValue": -i, "MaximumValue": i, "NumberOfNulls": i,
                                                    "NumberOfDistinctValues": i + 1})
               for i, c in enumerate(columns)]
    for start in range(0, 100, 25):
        answer = glue.update_column_statistics_for_table(DatabaseName=db, TableName=table,
                                                         ColumnStatisticsList=entries[start:start + 25])
        assert answer["Errors"] == []
    got = glue.get_column_statistics_for_table(DatabaseName=db, TableName=table,
                                               ColumnNames=[c["Name"] for c in columns])
    assert got["Errors"] == []
    assert sorted(got["ColumnStatisticsList"], key=lambda s: s["ColumnName"]) == entries
    # database + table + the 100 statistics items of one Query (never one GetItem per column)
    assert items_read(got) <= 100 + 3
