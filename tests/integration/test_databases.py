"""Database API through boto3 over HTTP."""

from __future__ import annotations

import datetime

import pytest

from tests.integration.conftest import table_input


def test_create_get_round_trip_folds_name_and_reports_defaults(fresh_glue):
    fresh_glue.create_database(DatabaseInput={
        "Name": "Sales_DB", "Description": "sales", "LocationUri": "s3://bucket/sales/",
        "Parameters": {"owner": "team-a"}})
    database = fresh_glue.get_database(Name="SALES_db")["Database"]
    assert database["Name"] == "sales_db"
    assert database["Description"] == "sales"
    assert database["LocationUri"] == "s3://bucket/sales/"
    assert database["Parameters"] == {"owner": "team-a"}
    assert isinstance(database["CreateTime"], datetime.datetime)
    assert database["CatalogId"].isdigit() and len(database["CatalogId"]) == 12
    assert database["CreateTableDefaultPermissions"][0]["Permissions"] == ["ALL"]


def test_duplicate_create_is_already_exists(fresh_glue):
    fresh_glue.create_database(DatabaseInput={"Name": "dup"})
    with pytest.raises(fresh_glue.exceptions.AlreadyExistsException, match="already exists"):
        fresh_glue.create_database(DatabaseInput={"Name": "DUP"})


def test_missing_database_is_entity_not_found(fresh_glue):
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException, match="nothere"):
        fresh_glue.get_database(Name="nothere")
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.delete_database(Name="nothere")
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.update_database(Name="nothere", DatabaseInput={"Name": "nothere"})


def test_update_replaces_definition_keeps_create_time(fresh_glue):
    fresh_glue.create_database(DatabaseInput={"Name": "upd", "Description": "old", "Parameters": {"a": "1"}})
    before = fresh_glue.get_database(Name="upd")["Database"]
    fresh_glue.update_database(Name="upd", DatabaseInput={"Name": "upd", "Description": "new"})
    after = fresh_glue.get_database(Name="upd")["Database"]
    assert after["Description"] == "new"
    assert "Parameters" not in after
    assert after["CreateTime"] == before["CreateTime"]


def test_update_cannot_rename(fresh_glue):
    fresh_glue.create_database(DatabaseInput={"Name": "keep"})
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="renamed"):
        fresh_glue.update_database(Name="keep", DatabaseInput={"Name": "other"})


def test_get_databases_pages_through_every_database_once(fresh_glue):
    names = sorted(f"db{i:02d}" for i in range(23))
    for name in names:
        fresh_glue.create_database(DatabaseInput={"Name": name})
    seen, token, pages = [], None, 0
    while True:
        kwargs = {"MaxResults": 5, **({"NextToken": token} if token else {})}
        response = fresh_glue.get_databases(**kwargs)
        assert len(response["DatabaseList"]) <= 5
        seen += [d["Name"] for d in response["DatabaseList"]]
        pages += 1
        token = response.get("NextToken")
        if not token:
            break
    assert seen == names
    assert pages == 5
    paginated = [d["Name"] for page in fresh_glue.get_paginator("get_databases").paginate(
        PaginationConfig={"PageSize": 7}) for d in page["DatabaseList"]]
    assert paginated == names


def test_get_databases_names_only(fresh_glue):
    fresh_glue.create_database(DatabaseInput={"Name": "only", "Description": "x"})
    listed = fresh_glue.get_databases(AttributesToGet=["NAME"])["DatabaseList"]
    assert listed == [{"Name": "only"}]


def test_delete_database_cascades_to_tables_and_versions(fresh_glue):
    fresh_glue.create_database(DatabaseInput={"Name": "cascade"})
    fresh_glue.create_table(DatabaseName="cascade", TableInput=table_input("t1"))
    fresh_glue.update_table(DatabaseName="cascade", TableInput=table_input("t1", Description="v1"))
    fresh_glue.delete_database(Name="cascade")
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_tables(DatabaseName="cascade")
    # Re-created under the same name, the database starts empty: nothing was orphaned into it.
    fresh_glue.create_database(DatabaseInput={"Name": "cascade"})
    assert fresh_glue.get_tables(DatabaseName="cascade")["TableList"] == []
    fresh_glue.create_table(DatabaseName="cascade", TableInput=table_input("t1"))
    versions = fresh_glue.get_table_versions(DatabaseName="cascade", TableName="t1")["TableVersions"]
    assert [v["VersionId"] for v in versions] == ["0"]
