"""The validator's own limits: how much work an invalid request can cost, and thread safety."""

from __future__ import annotations

import threading

import botocore.session
import pytest

from chalicelib.errors import InvalidInputException
from chalicelib.protocol import validate

GLUE = botocore.session.get_session().get_service_model("glue")


def test_walker_stops_after_the_errors_it_reports() -> None:
    # 200k bad values: every one used to be worded (seconds of CPU, hundreds of MB of strings).
    params = {"DatabaseInput": {"Name": "x", "Parameters": {f"k{i}": i for i in range(200_000)}}}
    with pytest.raises(InvalidInputException) as raised:
        validate.validate_input(GLUE.operation_model("CreateDatabase").input_shape, params)
    message = raised.value.message
    assert message.startswith("More than 10 validation errors detected")
    assert message.count("failed to satisfy constraint") == 10
    assert "databaseInput.parameters.k0" in message and "databaseInput.parameters.k9'" in message


def test_exact_count_when_few_errors() -> None:
    params = {"DatabaseInput": {"Name": "x", "Parameters": {"a": 1, "b": 2}}}
    with pytest.raises(InvalidInputException, match="^2 validation errors detected"):
        validate.validate_input(GLUE.operation_model("CreateDatabase").input_shape, params)


def test_huge_value_is_shown_shortened() -> None:
    values = [{"Values": [1]}] * 100_000
    params = {"DatabaseName": "d", "TableName": "t", "PartitionInputList": values}
    with pytest.raises(InvalidInputException) as raised:
        validate.validate_input(GLUE.operation_model("BatchCreatePartition").input_shape, params)
    shown = raised.value.message.split("Value '", 1)[1].split("' at ", 1)[0]
    assert len(shown) <= 64


def test_concurrent_first_use_of_a_recursive_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    # The first request for an operation compiles its checks; requests arriving meanwhile used to
    # find a recursive shape's placeholder and fail with an IndexError (a 500).
    monkeypatch.setattr(validate, "_compiled", {})
    shape = GLUE.operation_model("CreateTable").input_shape
    params = {"DatabaseName": "d", "TableInput": {"Name": "t", "StorageDescriptor": {
        "Columns": [{"Name": "c", "Type": "int"}], "SchemaReference": {"SchemaVersionNumber": 1}}}}
    barrier = threading.Barrier(8)
    failures: list[BaseException] = []

    def first_use() -> None:
        barrier.wait()
        try:
            validate.validate_input(shape, params)
        except BaseException as error:  # noqa: BLE001 - any failure is the finding
            failures.append(error)

    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
