"""Pure pieces of the pipelines: partition-key typing, Glue types, decimals, expressions,
retries of throttled BatchCreatePartition entries (a fake client, no service)."""

from __future__ import annotations

import decimal

import pytest

from pipelines import catalog, schema, stats
from pipelines.catalog import CatalogConfig

pytestmark = pytest.mark.slow  # imports pyspark


@pytest.mark.parametrize("values, expected", [
    (["2023", "2024", "05"], "int"),
    (["-3", "7"], "int"),
    (["1", "9999999999"], "bigint"),
    (["2024-05-01", "2024-12-31"], "date"),
    (["2024-02-30"], "string"),
    (["2024-05-01", "x"], "string"),
    (["US", "FR"], "string"),
    ([schema.HIVE_NULL, "4"], "int"),
    ([], "string"),
])
def test_partition_key_typing(values, expected):
    assert schema.infer_partition_type(values) == expected


def test_decimal_numbers_are_twos_complement():
    assert stats.decimal_number(decimal.Decimal("-1.00"), 2) == {"UnscaledValue": b"\x9c", "Scale": 2}
    assert stats.decimal_number(decimal.Decimal("1.27"), 2) == {"UnscaledValue": b"\x7f", "Scale": 2}
    assert stats.decimal_number(decimal.Decimal("1.28"), 2) == {"UnscaledValue": b"\x00\x80", "Scale": 2}
    assert stats.decimal_number(decimal.Decimal("-1.29"), 2) == {"UnscaledValue": b"\xff\x7f", "Scale": 2}
    assert stats.decimal_number(decimal.Decimal("0"), 2) == {"UnscaledValue": b"\x00", "Scale": 2}


def test_partition_spec_to_expression():
    keys = [{"Name": "country", "Type": "string"}, {"Name": "year", "Type": "int"}]
    assert stats.partition_expression("country=US,year=2024", keys) == "country = 'US' AND year = '2024'"
    assert stats.partition_expression("Year=2024", keys) == "year = '2024'"
    with pytest.raises(ValueError):
        stats.partition_expression("month=5", keys)


class FakeGlue:
    """Throttles the entries of each partition once, then accepts them."""

    def __init__(self, fail_codes):
        self.fail_codes, self.calls = dict(fail_codes), []

    def batch_create_partition(self, DatabaseName, TableName, PartitionInputList):
        self.calls.append([p["Values"][0] for p in PartitionInputList])
        errors = []
        for p in PartitionInputList:
            value = p["Values"][0]
            codes = self.fail_codes.get(value)
            if codes:
                errors.append({"PartitionValues": p["Values"], "ErrorDetail": {"ErrorCode": codes.pop(0),
                                                                               "ErrorMessage": "no"}})
        return {"Errors": errors}


def test_batch_create_retries_throttled_entries_and_collects_errors(monkeypatch):
    fake = FakeGlue({"b": ["ThrottlingException", "InternalServiceException"], "c": ["AlreadyExistsException"],
                     "d": ["InvalidInputException"]})
    monkeypatch.setattr(catalog, "client", lambda config, service="glue": fake)
    inputs = [{"Values": [v]} for v in "abcde"]
    outcome = catalog.batch_create_partitions(CatalogConfig(), "db", "t", inputs, sleep=lambda s: None)
    assert fake.calls == [list("abcde"), ["b"], ["b"]]
    assert (outcome.done, outcome.already, outcome.retries, outcome.calls) == (3, 1, 2, 3)
    assert outcome.failed == [{"Values": ["d"], "ErrorCode": "InvalidInputException", "ErrorMessage": "no"}]


def test_batch_create_gives_up_after_the_attempts(monkeypatch):
    fake = FakeGlue({"a": ["ThrottlingException"] * 10})
    monkeypatch.setattr(catalog, "client", lambda config, service="glue": fake)
    outcome = catalog.batch_create_partitions(CatalogConfig(), "db", "t", [{"Values": ["a"]}], attempts=3,
                                              sleep=lambda s: None)
    assert outcome.done == 0 and [f["ErrorCode"] for f in outcome.failed] == ["ThrottlingException"]
    assert len(fake.calls) == 3


def test_glue_types_from_spark():
    from pyspark.sql import types as T
    struct = T.StructType([T.StructField("a", T.IntegerType()), T.StructField("b", T.ArrayType(T.StringType()))])
    assert schema.glue_type(struct) == "struct<a:int,b:array<string>>"
    assert schema.glue_type(T.MapType(T.StringType(), T.LongType())) == "map<string,bigint>"
    assert schema.glue_type(T.DecimalType(12, 3)) == "decimal(12,3)"
    assert schema.glue_type(T.TimestampNTZType()) == "timestamp"


@pytest.mark.parametrize("command", ["sample", "register", "stats", "read"])
def test_every_subcommand_has_help(command, capsys):
    from pipelines import cli
    with pytest.raises(SystemExit) as exit_info:
        cli.main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert f"python -m pipelines {command}" in out
    if command != "sample":
        assert "--endpoint-url" in out and "--master" in out


class RefusingGlue:
    """Refuses a whole call (as request validation does) when it holds the value "bad"."""

    def __init__(self):
        self.calls = []

    def batch_create_partition(self, DatabaseName, TableName, PartitionInputList):
        from botocore.exceptions import ClientError
        values = [p["Values"][0] for p in PartitionInputList]
        self.calls.append(values)
        if "bad" in values:
            raise ClientError({"Error": {"Code": "InvalidInputException", "Message": "bad value"}},
                              "BatchCreatePartition")
        return {"Errors": []}


def test_a_refused_call_is_halved_until_the_bad_entry_stands_alone(monkeypatch):
    fake = RefusingGlue()
    monkeypatch.setattr(catalog, "client", lambda config, service="glue": fake)
    inputs = [{"Values": [v]} for v in ["a", "b", "c", "bad", "e", "f", "g", "h"]]
    outcome = catalog.batch_create_partitions(CatalogConfig(), "db", "t", inputs, sleep=lambda s: None)
    assert outcome.done == 7 and [f["Values"] for f in outcome.failed] == [["bad"]]
    assert outcome.failed[0]["ErrorCode"] == "InvalidInputException"
    assert len(fake.calls) == 7  # 8 -> 4+4 -> 2+2 -> 1+1


@pytest.mark.parametrize("rate, shown", [(14 / 33, "0.42"), (0.0, "0"), (3.14159, "3.1"), (9.96, "10"),
                                         (10.4, "10"), (12_345.6, "12,346")])
def test_rates_are_shown_with_their_digits(rate: float, shown: str) -> None:
    from pipelines.runtime import per_second

    assert per_second(rate) == shown
