"""The validator's own limits: how much work an invalid request can cost, and thread safety."""

from __future__ import annotations

import threading

import botocore.session
import pytest

from chalicelib.errors import InvalidInputException
from chalicelib.protocol.aws_json import quick_check, validate

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
    monkeypatch.setattr(quick_check, "_checks", {})
    monkeypatch.setattr(quick_check, "_names", {})
    monkeypatch.setattr(quick_check, "_unwritten", {})
    monkeypatch.setattr(quick_check, "_namespace", dict(quick_check._namespace))
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


def _batch(partitions: list[dict]) -> dict:
    return {"DatabaseName": "d", "TableName": "t", "PartitionInputList": partitions}


def _partition(values: list, columns: list) -> dict:
    return {"Values": values, "StorageDescriptor": {"Columns": columns}}


def test_an_equal_list_is_accepted_without_a_second_walk_but_a_different_one_is_checked() -> None:
    shape = GLUE.operation_model("BatchCreatePartition").input_shape
    columns = [{"Name": "a", "Type": "int"}, {"Name": "b", "Type": "string"}]
    validate.validate_input(shape, _batch([_partition(["1"], columns), _partition(["2"], [dict(c) for c in columns])]))
    bad = [{"Name": "a", "Type": "int"}, {"Name": "b" * 300, "Type": "string"}]
    with pytest.raises(InvalidInputException, match="partitionInputList.3.member.storageDescriptor.columns.2.member.name"):
        validate.validate_input(shape, _batch([_partition(["1"], columns), _partition(["2"], columns),
                                               _partition(["3"], bad)]))


def test_only_lists_of_text_are_remembered_since_equal_numbers_may_differ_in_type() -> None:
    # [1] == [True]: a list of integers that passed must not let an equal list of booleans through.
    from botocore.model import ShapeResolver
    resolver = ShapeResolver({
        "Input": {"type": "structure", "members": {"Lists": {"shape": "Lists"}}},
        "Lists": {"type": "list", "member": {"shape": "Numbers"}},
        "Numbers": {"type": "list", "member": {"shape": "Number"}},
        "Number": {"type": "integer"},
    })
    shape = resolver.get_shape_by_name("Input")
    assert not quick_check.text_only(resolver.get_shape_by_name("Numbers"))
    assert quick_check.text_only(GLUE.shape_for("ColumnList"))
    validate.validate_input(shape, {"Lists": [[1], [1]]})
    with pytest.raises(InvalidInputException, match="lists.2.member.1.member"):
        validate.validate_input(shape, {"Lists": [[1], [True]]})


def test_nothing_of_a_request_is_kept_after_it_is_validated() -> None:
    shape = GLUE.operation_model("BatchCreatePartition").input_shape
    validate.validate_input(shape, _batch([_partition(["1"], [{"Name": "a", "Type": "int"}])]))
    assert getattr(quick_check._recent, "passed", None) is None


def test_the_quick_check_vouches_only_for_what_a_fast_decoder_reads_as_json_does() -> None:
    """passes_quickly is True only when an orjson decoding equals json's (protocol/aws_json/wire.py):
    never with a float of 2**63 or more (an integer beyond 64 bits read as a float), nor with
    what it does not walk (members the model lacks, documents holding more than text). Each of
    those is valid all the same: validate_input accepts it."""
    from botocore.model import ShapeResolver
    resolver = ShapeResolver({
        "Input": {"type": "structure", "members": {"D": {"shape": "Double"}, "Doc": {"shape": "Doc"}}},
        "Double": {"type": "double"},
        "Doc": {"type": "structure", "members": {}, "document": True},
    })
    shape = resolver.get_shape_by_name("Input")
    for vouched in ({"D": 1.5}, {"D": 2.0 ** 63 - 1024}, {"D": 2 ** 64}, {"Doc": "text"}, {"Doc": True}, {}):
        assert quick_check.passes_quickly(shape, vouched), vouched
    for not_vouched in ({"D": 2.0 ** 63}, {"D": -1.8e19}, {"Doc": {"n": 1}}, {"Doc": [1]}, {"Doc": 1},
                        {"Future": 1}):
        assert not quick_check.passes_quickly(shape, not_vouched), not_vouched
        validate.validate_input(shape, not_vouched)
    assert not quick_check.passes_quickly(shape, {"D": "x"})
    assert quick_check.passes_quickly(None, {}) and not quick_check.passes_quickly(None, {"A": 1})
