"""The response-shape checker the test harness runs on every Glue / Lake Formation response."""

from __future__ import annotations

import json

import botocore.session

from tests import shape_check

GLUE = botocore.session.get_session().get_service_model("glue")
LF = botocore.session.get_session().get_service_model("lakeformation")


def check(operation: str, body: object, status: int = 200, model=GLUE) -> list[str]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return shape_check.check_response(model.operation_model(operation), status, raw)


def test_a_valid_response_passes():
    body = {"Database": {"Name": "d", "CreateTime": 1700000000.5, "Parameters": {"k": "v"},
                         "CatalogId": "123456789012"}}
    assert check("GetDatabase", body) == []


def test_missing_required_member():
    (found,) = check("GetDatabase", {"Database": {"CreateTime": 1}})
    assert "Database.Name" in found and "required" in found


def test_null_required_member():
    (found,) = check("GetDatabase", {"Database": {"Name": None}})
    assert "Database.Name" in found and "required" in found


def test_null_optional_member():
    (found,) = check("GetDatabase", {"Database": {"Name": "d", "Description": None}})
    assert "Database.Description" in found and "null" in found


def test_unknown_member_is_reported():
    (found,) = check("GetDatabase", {"Database": {"Name": "d", "Descripton": "typo"}})
    assert "Database.Descripton" in found and "not a member" in found


def test_wrong_types():
    body = {"Table": {"Name": "t", "Retention": "7", "IsRegisteredWithLakeFormation": "true",
                      "CreateTime": "2024-01-01", "PartitionKeys": {"Name": "p"}}}
    found = check("GetTable", body)
    assert len(found) == 4
    joined = "\n".join(found)
    for member in ("Retention", "IsRegisteredWithLakeFormation", "CreateTime", "PartitionKeys"):
        assert f"Table.{member}" in joined


def test_booleans_are_not_integers():
    (found,) = check("GetTable", {"Table": {"Name": "t", "Retention": True}})
    assert "Table.Retention" in found


def test_enum_values():
    (found,) = check("GetTable", {"Table": {"Name": "t", "TableType": "x",
                                             "PartitionKeys": [{"Name": "p", "Type": "int"}],
                                             "ViewDefinition": {"Representations": [
                                                 {"Dialect": "NOSQL"}]}}})
    assert "Dialect" in found and "NOSQL" in found


def test_nested_list_and_map_paths():
    body = {"Partitions": [{"Values": ["1"]}, {"Values": [1], "Parameters": {"k": 2}}]}
    found = check("GetPartitions", body)
    assert sorted(found) == sorted([
        "GetPartitions: Partitions[1].Values[0]: expected a string (ValueString), got int",
        "GetPartitions: Partitions[1].Parameters['k']: expected a string (ParametersMapValue), got int",
    ])


def test_blob_must_be_base64():
    body = {"ColumnStatisticsList": [{"ColumnName": "c", "ColumnType": "t", "AnalyzedTime": 1,
                                      "StatisticsData": {"Type": "BINARY", "BinaryColumnStatisticsData": {
                                          "MaximumLength": 1, "AverageLength": 1.0, "NumberOfNulls": 0}}}]}
    assert check("GetColumnStatisticsForTable", body) == []
    # A blob member: DecimalNumber.UnscaledValue.
    body["ColumnStatisticsList"][0]["StatisticsData"] = {"Type": "DECIMAL", "DecimalColumnStatisticsData": {
        "NumberOfNulls": 0, "NumberOfDistinctValues": 1,
        "MaximumValue": {"UnscaledValue": "not base64!", "Scale": 0}}}
    (found,) = check("GetColumnStatisticsForTable", body)
    assert "UnscaledValue" in found and "base64" in found


def test_operation_without_output_accepts_empty_object():
    assert check("DeleteTable", {}) == []  # DeleteTableResponse has no members
    assert check("DeleteTable", {"Deleted": True}) != []


def test_body_that_is_not_json():
    (found,) = check("GetDatabase", b"<html>")
    assert "not JSON" in found


def test_error_bodies_need_type_and_message():
    assert check("GetDatabase", {"__type": "EntityNotFoundException", "Message": "x"}, 400) == []
    assert len(check("GetDatabase", {"Code": "EntityNotFoundException"}, 400)) == 2
    assert check("GetTableObjects", {"__type": "EntityNotFoundException", "Message": "x"}, 400, LF) == []


def test_rest_json_output():
    body = {"TransactionId": "a" * 32}
    assert check("StartTransaction", body, model=LF) == []
    (found,) = check("CommitTransaction", {"TransactionStatus": "DONE"}, model=LF)
    assert "DONE" in found
