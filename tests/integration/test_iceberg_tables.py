"""Iceberg tables through Glue's OpenTableFormatInput (CreateTable) and UpdateOpenTableFormatInput
(UpdateTable), driven by boto3, then read and written by pyiceberg's GlueCatalog on the same
service: the catalog writes the metadata files, pyiceberg appends data and commits through
UpdateTable as it does against AWS."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pytest
from pyiceberg.catalog.glue import GlueCatalog

from infra.local.stack import REGION
from infra.local.stack import client as stack_client
from tests.integration import test_paimon_s3_warehouse as paimon_s3
from tests.integration.lf_helpers import Governed
from tests.integration.test_paimon_s3_warehouse import BUCKET, body, keys

# The moto S3 server and a stack whose S3 client goes to it (AWS_ENDPOINT_URL_S3), as the Paimon
# S3 tests start them: pytest finds fixtures bound to names of a test module.
moto_url = paimon_s3.moto_url
s3 = paimon_s3.s3
s3_stack = paimon_s3.s3_stack

ICEBERG_FIELDS = [
    {"Id": 1, "Name": "id", "Type": "long", "Required": True, "Doc": "the key"},
    {"Id": 2, "Name": "name", "Type": "string", "Required": False},
    {"Id": 3, "Name": "ts", "Type": "timestamptz", "Required": False},
    {"Id": 4, "Name": "tags", "Required": False,
     "Type": {"type": "list", "element-id": 5, "element": "string", "element-required": False}},
    {"Id": 6, "Name": "price", "Type": "decimal(10,2)", "Required": False},
]


def iceberg_input(location: str, fields: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    """An OpenTableFormatInput creating an Iceberg table at ``location``."""
    create = {"Location": location, "Schema": {"Fields": fields or ICEBERG_FIELDS}, **extra}
    return {"IcebergInput": {"MetadataOperation": "CREATE", "Version": "2", "CreateIcebergTableInput": create}}


def local_path(uri: str) -> Path:
    return Path(urlsplit(uri).path)


def read_metadata(uri: str) -> dict[str, Any]:
    return json.loads(local_path(uri).read_text())


@pytest.fixture
def location(tmp_path: Path) -> str:
    return (tmp_path / "orders").as_uri()


@pytest.fixture
def catalog(glue) -> GlueCatalog:
    """pyiceberg's Glue catalog on the test service (the boto3 client it is handed)."""
    return GlueCatalog("test", client=glue)


def test_create_writes_the_first_metadata_file_and_points_the_table_at_it(glue, db, location):
    glue.create_table(DatabaseName=db, Name="orders", OpenTableFormatInput=iceberg_input(
        location, PartitionSpec={"Fields": [{"SourceId": 3, "Transform": "day", "Name": "ts_day"}]},
        WriteOrder={"OrderId": 1, "Fields": [{"SourceId": 1, "Transform": "identity", "Direction": "asc",
                                               "NullOrder": "nulls-first"}]},
        Properties={"write.format.default": "parquet"}))
    table = glue.get_table(DatabaseName=db, Name="orders")["Table"]
    parameters = table["Parameters"]
    assert parameters["table_type"] == "ICEBERG"
    metadata_location = parameters["metadata_location"]
    assert metadata_location.startswith(f"{location}/metadata/00000-")
    assert metadata_location.endswith(".metadata.json")
    assert table["TableType"] == "EXTERNAL_TABLE"
    assert table["StorageDescriptor"]["Location"] == location
    columns = table["StorageDescriptor"]["Columns"]
    assert [(c["Name"], c["Type"]) for c in columns] == [
        ("id", "bigint"), ("name", "string"), ("ts", "timestamp"), ("tags", "array<string>"),
        ("price", "decimal(10,2)")]
    assert columns[0]["Parameters"] == {"iceberg.field.id": "1", "iceberg.field.optional": "false",
                                        "iceberg.field.current": "true"}
    assert columns[0]["Comment"] == "the key"

    metadata = read_metadata(metadata_location)
    assert metadata["format-version"] == 2
    assert metadata["location"] == location
    uuid.UUID(metadata["table-uuid"])
    assert metadata["current-schema-id"] == 0 and metadata["last-column-id"] == 6
    assert metadata["schemas"][0]["fields"][3]["type"] == {"type": "list", "element-id": 5, "element": "string",
                                                            "element-required": False}
    assert metadata["partition-specs"] == [{"spec-id": 0, "fields": [
        {"source-id": 3, "field-id": 1000, "name": "ts_day", "transform": "day"}]}]
    assert metadata["last-partition-id"] == 1000
    assert metadata["default-sort-order-id"] == 1
    assert metadata["properties"] == {"write.format.default": "parquet"}
    assert metadata["snapshots"] == [] and metadata["metadata-log"] == []


def test_pyiceberg_loads_appends_and_scans(glue, db, location, catalog):
    glue.create_table(DatabaseName=db, Name="events", OpenTableFormatInput=iceberg_input(
        location, fields=[{"Id": 1, "Name": "id", "Type": "long", "Required": True},
                          {"Id": 2, "Name": "name", "Type": "string", "Required": False}]))
    table = catalog.load_table((db, "events"))
    assert [f.name for f in table.schema().fields] == ["id", "name"]
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])
    table.append(pa.Table.from_pylist([{"id": 1, "name": "a"}, {"id": 2, "name": "b"}], schema=schema))

    again = catalog.load_table((db, "events"))
    assert sorted(again.scan().to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    parameters = glue.get_table(DatabaseName=db, Name="events")["Table"]["Parameters"]
    assert parameters["metadata_location"].startswith(f"{location}/metadata/00001-")
    assert parameters["previous_metadata_location"].startswith(f"{location}/metadata/00000-")


def test_update_adds_a_column_that_pyiceberg_sees(glue, db, location, catalog):
    fields = [{"Id": 1, "Name": "id", "Type": "long", "Required": True}]
    glue.create_table(DatabaseName=db, Name="t", OpenTableFormatInput=iceberg_input(location, fields=fields))
    before = glue.get_table(DatabaseName=db, Name="t")["Table"]
    first = before["Parameters"]["metadata_location"]

    glue.update_table(DatabaseName=db, Name="t", VersionId=before["VersionId"], UpdateOpenTableFormatInput={
        "UpdateIcebergInput": {"UpdateIcebergTableInput": {"Updates": [{
            "Schema": {"Fields": [*fields, {"Id": 2, "Name": "note", "Type": "string", "Required": False}]},
            "Location": location, "Properties": {"owner": "analytics"}}]}}})

    after = glue.get_table(DatabaseName=db, Name="t")["Table"]
    assert int(after["VersionId"]) == int(before["VersionId"]) + 1
    assert after["Parameters"]["previous_metadata_location"] == first
    second = after["Parameters"]["metadata_location"]
    assert second.startswith(f"{location}/metadata/00001-")
    assert [c["Name"] for c in after["StorageDescriptor"]["Columns"]] == ["id", "note"]
    metadata = read_metadata(second)
    assert metadata["current-schema-id"] == 1 and len(metadata["schemas"]) == 2
    assert metadata["last-column-id"] == 2
    assert metadata["properties"] == {"owner": "analytics"}
    assert metadata["metadata-log"] == [{"metadata-file": first,
                                         "timestamp-ms": read_metadata(first)["last-updated-ms"]}]
    assert read_metadata(first)["current-schema-id"] == 0  # files are never rewritten

    table = catalog.load_table((db, "t"))
    assert [f.name for f in table.schema().fields] == ["id", "note"]
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("note", pa.string())])
    table.append(pa.Table.from_pylist([{"id": 7, "note": "x"}], schema=schema))
    assert catalog.load_table((db, "t")).scan().to_arrow().to_pylist() == [{"id": 7, "note": "x"}]


def test_update_under_a_stale_version_id_moves_nothing(glue, db, location):
    glue.create_table(DatabaseName=db, Name="t", OpenTableFormatInput=iceberg_input(location))
    before = glue.get_table(DatabaseName=db, Name="t")["Table"]
    update = {"UpdateIcebergInput": {"UpdateIcebergTableInput": {"Updates": [{
        "Schema": {"Fields": ICEBERG_FIELDS}, "Location": location, "Properties": {"k": "v"}}]}}}
    glue.update_table(DatabaseName=db, Name="t", VersionId=before["VersionId"], UpdateOpenTableFormatInput=update)
    with pytest.raises(glue.exceptions.ConcurrentModificationException):
        glue.update_table(DatabaseName=db, Name="t", VersionId=before["VersionId"], UpdateOpenTableFormatInput=update)
    assert len(list(local_path(location).joinpath("metadata").iterdir())) == 2


def test_create_from_table_input_columns_at_the_database_location(glue, tmp_path, catalog):
    db = f"db_{uuid.uuid4().hex[:12]}"
    glue.create_database(DatabaseInput={"Name": db, "LocationUri": (tmp_path / "wh").as_uri()})
    glue.create_table(DatabaseName=db, TableInput={
        "Name": "Legacy", "StorageDescriptor": {"Columns": [
            {"Name": "id", "Type": "bigint"}, {"Name": "attrs", "Type": "map<string,array<int>>"},
            {"Name": "amount", "Type": "decimal(12,3)"}]},
        "PartitionKeys": [{"Name": "region", "Type": "varchar(10)"}]},
        OpenTableFormatInput={"IcebergInput": {"MetadataOperation": "CREATE", "Version": "2"}})
    table = glue.get_table(DatabaseName=db, Name="legacy")["Table"]
    assert table["StorageDescriptor"]["Location"] == f"{(tmp_path / 'wh').as_uri()}/legacy"
    assert table.get("PartitionKeys", []) == []
    metadata = read_metadata(table["Parameters"]["metadata_location"])
    assert [f["name"] for f in metadata["schemas"][0]["fields"]] == ["id", "attrs", "amount", "region"]
    assert metadata["partition-specs"][0]["fields"] == [
        {"source-id": metadata["schemas"][0]["fields"][3]["id"], "field-id": 1000, "name": "region",
         "transform": "identity"}]
    loaded = catalog.load_table((db, "legacy"))
    assert str(loaded.schema().find_field("attrs").field_type) == "map<string, list<int>>"


@pytest.mark.parametrize("change, member", [
    ({"Fields": [{"Id": 1, "Name": "x", "Type": "varchar", "Required": True}]}, "Schema.Fields[0].Type"),
    ({"Fields": [{"Id": 1, "Name": "x", "Type": "long", "Required": True},
                 {"Id": 1, "Name": "y", "Type": "long", "Required": True}]}, "Schema.Fields[1].Id"),
    ({"Fields": [{"Id": 1, "Name": "x", "Required": True,
                  "Type": {"type": "list", "element-id": 1, "element": "int", "element-required": True}}]},
     "Schema.Fields[0].Type.element-id"),
    ({"Fields": [{"Id": 1, "Name": "x", "Type": "long", "Required": True},
                 {"Id": 2, "Name": "X", "Type": "long", "Required": True}]}, "Schema.Fields[1].Name"),
])
def test_bad_schemas_are_refused_naming_the_member(glue, db, location, change, member):
    with pytest.raises(glue.exceptions.InvalidInputException) as raised:
        glue.create_table(DatabaseName=db, Name="bad", OpenTableFormatInput=iceberg_input(
            location, fields=change["Fields"]))
    assert f"CreateIcebergTableInput.{member}" in raised.value.response["Error"]["Message"]
    assert not local_path(location).exists()
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_table(DatabaseName=db, Name="bad")


def test_bad_partition_spec_and_sort_order(glue, db, location):
    for extra, member in (
            ({"PartitionSpec": {"Fields": [{"SourceId": 9, "Transform": "identity", "Name": "p"}]}},
             "PartitionSpec.Fields[0].SourceId"),
            ({"PartitionSpec": {"Fields": [{"SourceId": 2, "Transform": "day", "Name": "p"}]}},
             "PartitionSpec.Fields[0].Transform"),
            ({"PartitionSpec": {"Fields": [{"SourceId": 1, "Transform": "bucket[0]", "Name": "p"}]}},
             "PartitionSpec.Fields[0].Transform"),
            ({"WriteOrder": {"OrderId": 0, "Fields": [{"SourceId": 1, "Transform": "identity", "Direction": "asc",
                                                       "NullOrder": "nulls-last"}]}}, "WriteOrder.OrderId")):
        with pytest.raises(glue.exceptions.InvalidInputException) as raised:
            glue.create_table(DatabaseName=db, Name="bad", OpenTableFormatInput=iceberg_input(location, **extra))
        assert member in raised.value.response["Error"]["Message"]
    assert not local_path(location).exists()


def test_refusals_without_a_location_or_with_another_version(glue, db, location):
    with pytest.raises(glue.exceptions.InvalidInputException) as raised:
        glue.create_table(DatabaseName=db, TableInput={"Name": "t", "StorageDescriptor": {"Columns": [
            {"Name": "id", "Type": "bigint"}]}},
            OpenTableFormatInput={"IcebergInput": {"MetadataOperation": "CREATE"}})
    assert "TableInput.StorageDescriptor.Location is required" in raised.value.response["Error"]["Message"]

    with pytest.raises(glue.exceptions.InvalidInputException) as raised:
        glue.create_table(DatabaseName=db, Name="t", OpenTableFormatInput={"IcebergInput": {
            **iceberg_input(location)["IcebergInput"], "Version": "3"}})
    assert "IcebergInput.Version" in raised.value.response["Error"]["Message"]

    with pytest.raises(glue.exceptions.InvalidInputException) as raised:  # the model's enum: CREATE only
        glue.create_table(DatabaseName=db, Name="t", OpenTableFormatInput={"IcebergInput": {
            **iceberg_input(location)["IcebergInput"], "MetadataOperation": "DROP"}})
    assert "icebergInput.metadataOperation" in raised.value.response["Error"]["Message"]

    with pytest.raises(glue.exceptions.InvalidInputException) as raised:
        glue.create_table(DatabaseName=db, Name="t", OpenTableFormatInput=iceberg_input("ftp://host/x"))
    assert "CreateIcebergTableInput.Location" in raised.value.response["Error"]["Message"]


@pytest.mark.parametrize("bad", ["file:/tmp/x", "s3:bucket", "s3://", "file://"])
def test_a_location_without_a_usable_authority_is_refused_naming_the_member(glue, db, location, bad):
    with pytest.raises(glue.exceptions.InvalidInputException) as raised:
        glue.create_table(DatabaseName=db, Name="t", OpenTableFormatInput=iceberg_input(bad))
    assert "CreateIcebergTableInput.Location" in raised.value.response["Error"]["Message"]
    with pytest.raises(glue.exceptions.InvalidInputException) as raised:
        glue.create_table(DatabaseName=db, TableInput={"Name": "t", "StorageDescriptor": {
            "Location": bad, "Columns": [{"Name": "id", "Type": "bigint"}]}},
            OpenTableFormatInput={"IcebergInput": {"MetadataOperation": "CREATE"}})
    assert "TableInput.StorageDescriptor.Location" in raised.value.response["Error"]["Message"]

    glue.create_table(DatabaseName=db, Name="ice", OpenTableFormatInput=iceberg_input(location))
    with pytest.raises(glue.exceptions.InvalidInputException) as raised:
        glue.update_table(DatabaseName=db, Name="ice", UpdateOpenTableFormatInput={"UpdateIcebergInput": {
            "UpdateIcebergTableInput": {"Updates": [{"Schema": {"Fields": ICEBERG_FIELDS}, "Location": bad}]}}})
    assert "Updates.Location" in raised.value.response["Error"]["Message"]
    assert glue.get_table(DatabaseName=db, Name="ice")["Table"]["VersionId"] == "0"


def test_create_on_a_taken_name_writes_no_file(glue, db, location, tmp_path):
    glue.create_table(DatabaseName=db, Name="t", OpenTableFormatInput=iceberg_input(location))
    other = (tmp_path / "other").as_uri()
    with pytest.raises(glue.exceptions.AlreadyExistsException):
        glue.create_table(DatabaseName=db, Name="t", OpenTableFormatInput=iceberg_input(other))
    assert not local_path(other).exists()


def test_update_errors(glue, db, location):
    glue.create_table(DatabaseName=db, TableInput={"Name": "plain"})
    update = {"UpdateIcebergInput": {"UpdateIcebergTableInput": {"Updates": [{
        "Schema": {"Fields": ICEBERG_FIELDS}, "Location": location}]}}}
    with pytest.raises(glue.exceptions.InvalidInputException) as raised:
        glue.update_table(DatabaseName=db, Name="plain", UpdateOpenTableFormatInput=update)
    assert "not an Iceberg table" in raised.value.response["Error"]["Message"]

    glue.create_table(DatabaseName=db, Name="ice", OpenTableFormatInput=iceberg_input(location))
    for updates, member in (
            ([{"Schema": {"Fields": [{"Id": 1, "Name": "id", "Type": "nope", "Required": True}]},
               "Location": location}], "Updates[0].Schema.Fields[0].Type"),
            ([{"Schema": {"Fields": ICEBERG_FIELDS}, "Location": location, "Action": "set-current-schema"}],
             "Updates[0].Schema.SchemaId"),
            ([{"Schema": {"Fields": ICEBERG_FIELDS}, "Location": location, "Action": "add-encryption-key"}],
             "Updates[0].Action")):
        with pytest.raises(glue.exceptions.InvalidInputException) as raised:
            glue.update_table(DatabaseName=db, Name="ice", UpdateOpenTableFormatInput={
                "UpdateIcebergInput": {"UpdateIcebergTableInput": {"Updates": updates}}})
        assert member in raised.value.response["Error"]["Message"]
    assert len(list(local_path(location).joinpath("metadata").iterdir())) == 1
    assert glue.get_table(DatabaseName=db, Name="ice")["Table"]["VersionId"] == "0"


def _update(glue: Any, db: str, name: str, **update: Any) -> Any:
    return glue.update_table(DatabaseName=db, Name=name, UpdateOpenTableFormatInput={
        "UpdateIcebergInput": {"UpdateIcebergTableInput": {"Updates": [update]}}})


def test_a_schema_the_table_could_not_be_written_with_is_refused(glue, db, location, catalog):
    """Partitioned by day(ts), sorted by name, keyed by id: a new schema dropping a partition or
    sort source, or breaking Iceberg's identifier-field rules, is InvalidInputException naming
    the field, and the table is as it was (pyiceberg and Iceberg Java refuse such schemas; once
    one was accepted, pyiceberg's appends failed: 'Cannot find source column for partition
    field'). Dropping the source along with a spec that no longer uses it is fine."""
    glue.create_table(DatabaseName=db, Name="t", OpenTableFormatInput=iceberg_input(
        location, PartitionSpec={"Fields": [{"SourceId": 3, "Transform": "day", "Name": "ts_day"}]},
        WriteOrder={"OrderId": 1, "Fields": [{"SourceId": 2, "Transform": "identity", "Direction": "asc",
                                              "NullOrder": "nulls-first"}]},
        Schema={"Fields": ICEBERG_FIELDS, "IdentifierFieldIds": [1]}))
    before = glue.get_table(DatabaseName=db, Name="t")["Table"]
    without = {field_id: [f for f in ICEBERG_FIELDS if f["Id"] != field_id] for field_id in (2, 3)}
    score = {"Id": 7, "Name": "score", "Type": "double", "Required": True}
    refused = [
        ({"Fields": without[3], "IdentifierFieldIds": [1]}, "partition field 'ts_day' is built on column 'ts'"),
        ({"Fields": without[2], "IdentifierFieldIds": [1]}, "sort field is built on column 'name'"),
        ({"Fields": [*ICEBERG_FIELDS, score], "IdentifierFieldIds": [7]},
         "identifier field 7 ('score') must not be a float or double field"),
        ({"Fields": [{**ICEBERG_FIELDS[0], "Type": "int"}, *ICEBERG_FIELDS[1:]], "IdentifierFieldIds": [1]},
         "field 'id' (id 1) cannot change type from long to int"),
        ({"Fields": [ICEBERG_FIELDS[0], {**ICEBERG_FIELDS[1], "Required": True}, *ICEBERG_FIELDS[2:]],
          "IdentifierFieldIds": [1]}, "field 'name' (id 2) is optional and cannot become required"),
    ]
    for schema, named in refused:
        with pytest.raises(glue.exceptions.InvalidInputException) as raised:
            _update(glue, db, "t", Schema=schema, Location=location)
        message = raised.value.response["Error"]["Message"]
        assert "UpdateIcebergTableInput.Updates[0].Schema" in message and named in message, message
        after = glue.get_table(DatabaseName=db, Name="t")["Table"]
        assert (after["VersionId"], after["Parameters"]["metadata_location"]) == \
            (before["VersionId"], before["Parameters"]["metadata_location"])
    assert len(list(local_path(location).joinpath("metadata").iterdir())) == 1

    # Along with a spec and an order that do not use the dropped column: accepted, and writable.
    _update(glue, db, "t", Schema={"Fields": without[3], "IdentifierFieldIds": [1]}, Location=location,
            PartitionSpec={"Fields": [{"SourceId": 1, "Transform": "identity", "Name": "id_part"}]})
    table = catalog.load_table((db, "t"))
    assert [f.name for f in table.schema().fields] == ["id", "name", "tags", "price"]
    table.append(pa.Table.from_pylist([{"id": 1, "name": "a", "tags": ["x"], "price": None}],
                                      schema=table.schema().as_arrow()))
    assert [r["id"] for r in catalog.load_table((db, "t")).scan().to_arrow().to_pylist()] == [1]


# ------------------------------------------------------------------------------ on S3 (moto)
def test_s3_location_through_the_s3_endpoint(s3_stack, moto_url, s3):
    """A server whose S3 client goes to moto (AWS_ENDPOINT_URL_S3): the metadata files land in the
    bucket, and pyiceberg reads and writes the table there."""
    glue = stack_client(s3_stack.endpoint, "glue")
    db = f"db_{uuid.uuid4().hex[:12]}"
    glue.create_database(DatabaseInput={"Name": db})
    location = f"s3://{BUCKET}/iceberg/{db}/orders"
    fields = [{"Id": 1, "Name": "id", "Type": "long", "Required": True}]
    glue.create_table(DatabaseName=db, Name="orders", OpenTableFormatInput=iceberg_input(location, fields=fields))
    first = glue.get_table(DatabaseName=db, Name="orders")["Table"]["Parameters"]["metadata_location"]
    key = first[len(f"s3://{BUCKET}/"):]
    assert key.startswith(f"iceberg/{db}/orders/metadata/00000-")
    assert json.loads(body(s3, key))["location"] == location

    glue.update_table(DatabaseName=db, Name="orders", UpdateOpenTableFormatInput={"UpdateIcebergInput": {
        "UpdateIcebergTableInput": {"Updates": [{"Schema": {"Fields": [
            *fields, {"Id": 2, "Name": "note", "Type": "string", "Required": False}]}, "Location": location}]}}})
    assert len(keys(s3, f"iceberg/{db}/orders/metadata/")) == 2

    catalog = GlueCatalog("s3", client=glue, **{"s3.endpoint": moto_url, "s3.access-key-id": "local",
                                                "s3.secret-access-key": "local", "s3.region": REGION})
    table = catalog.load_table((db, "orders"))
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("note", pa.string())])
    table.append(pa.Table.from_pylist([{"id": 1, "note": "s3"}], schema=schema))
    assert catalog.load_table((db, "orders")).scan().to_arrow().to_pylist() == [{"id": 1, "note": "s3"}]

    with pytest.raises(glue.exceptions.InvalidInputException) as raised:
        glue.create_table(DatabaseName=db, Name="nowhere", OpenTableFormatInput=iceberg_input(
            "s3://no-such-bucket-here/t", fields=fields))
    assert "no-such-bucket-here/t" in raised.value.response["Error"]["Message"]
    assert "NoSuchBucket" in raised.value.response["Error"]["Message"]
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_table(DatabaseName=db, Name="nowhere")


def test_in_a_transaction_the_table_appears_at_commit(endpoint, location):
    gov = Governed.create(endpoint, tables=())
    glue, lf = gov.glue, gov.lf
    tx = lf.start_transaction()["TransactionId"]
    glue.create_table(DatabaseName=gov.db, Name="t", OpenTableFormatInput=iceberg_input(location), TransactionId=tx)
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_table(DatabaseName=gov.db, Name="t")
    seen = glue.get_table(DatabaseName=gov.db, Name="t", TransactionId=tx)["Table"]["Parameters"]
    glue.update_table(DatabaseName=gov.db, Name="t", TransactionId=tx, UpdateOpenTableFormatInput={
        "UpdateIcebergInput": {"UpdateIcebergTableInput": {"Updates": [{
            "Schema": {"Fields": ICEBERG_FIELDS[:2]}, "Location": location}]}}})
    lf.commit_transaction(TransactionId=tx)
    committed = glue.get_table(DatabaseName=gov.db, Name="t")["Table"]["Parameters"]
    assert committed["previous_metadata_location"] == seen["metadata_location"]
    assert read_metadata(committed["metadata_location"])["current-schema-id"] == 1


def test_update_after_pyiceberg_commits_keeps_its_snapshots(glue, db, location, catalog):
    fields = [{"Id": 1, "Name": "id", "Type": "int", "Required": True}]
    glue.create_table(DatabaseName=db, Name="t", OpenTableFormatInput=iceberg_input(location, fields=fields))
    schema = pa.schema([pa.field("id", pa.int32(), nullable=False)])
    catalog.load_table((db, "t")).append(pa.Table.from_pylist([{"id": 1}], schema=schema))

    glue.update_table(DatabaseName=db, Name="t", UpdateOpenTableFormatInput={"UpdateIcebergInput": {
        "UpdateIcebergTableInput": {"Updates": [{"Schema": {"Fields": [
            {"Id": 1, "Name": "id", "Type": "long", "Required": True},  # a promotion: old files still read
            {"Id": 2, "Name": "note", "Type": "string", "Required": False}]}, "Location": location}]}}})
    table = catalog.load_table((db, "t"))
    assert table.metadata.format_version == 2 and len(table.metadata.snapshots) == 1
    assert len(table.metadata.metadata_log) == 2
    assert table.scan().to_arrow().to_pylist() == [{"id": 1, "note": None}]
