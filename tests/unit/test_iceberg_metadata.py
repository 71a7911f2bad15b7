"""Iceberg metadata files and Glue columns (chalicelib.domain.iceberg), checked against
pyiceberg's own reader and its GlueCatalog's column mapping."""

from __future__ import annotations

import pytest
from pyiceberg.catalog.glue import _to_columns
from pyiceberg.table.metadata import TableMetadataUtil

from chalicelib import json_text
from chalicelib.domain.iceberg import metadata as md
from chalicelib.domain.iceberg.types import glue_columns, read_schema, schema_from_columns
from chalicelib.errors import InvalidInputException

FIELDS = [
    {"Id": 1, "Name": "id", "Type": "long", "Required": True},
    {"Id": 2, "Name": "ts", "Type": "timestamp", "Required": False},
    {"Id": 3, "Name": "point", "Required": False, "Type": {"type": "struct", "fields": [
        {"id": 4, "name": "x", "required": True, "type": "double"},
        {"id": 5, "name": "attrs", "required": False, "type": {
            "type": "map", "key-id": 6, "key": "string", "value-id": 7, "value": "fixed[4]",
            "value-required": False}}]}},
    {"Id": 8, "Name": "amount", "Type": "DECIMAL(9, 2)", "Required": False, "Doc": "money"},
]


def first(**extra) -> dict:
    schema = read_schema({"Fields": FIELDS, "IdentifierFieldIds": [1]}, "Schema")
    return md.new_table_metadata("file:///wh/t/", schema, extra.get("spec"), extra.get("order"), {"a": "b"},
                                 "9f4b7a62-8f2c-4a4e-9a43-4c1f5a1c2d3e", 1_700_000_000_000, "In")


def test_first_metadata_reads_in_pyiceberg() -> None:
    metadata = first(spec={"Fields": [{"SourceId": 2, "Transform": "month", "Name": "m"},
                                      {"SourceId": 1, "Transform": "bucket[16]", "Name": "b"}]},
                     order={"OrderId": 1, "Fields": [{"SourceId": 8, "Transform": "identity", "Direction": "desc",
                                                      "NullOrder": "nulls-last"}]})
    parsed = TableMetadataUtil.parse_raw(md.encode(metadata))
    assert parsed.format_version == 2 and parsed.location == "file:///wh/t"
    assert parsed.last_column_id == 8 and parsed.last_partition_id == 1001
    assert parsed.current_snapshot_id is None
    schema = parsed.schema()
    assert schema.identifier_field_ids == [1]
    assert str(schema.find_field(7).field_type) == "fixed[4]"
    assert str(schema.find_field("amount").field_type) == "decimal(9, 2)"
    assert [str(f.transform) for f in parsed.spec().fields] == ["month", "bucket[16]"]
    assert parsed.sort_order_by_id(1).fields[0].direction.value == "desc"


def test_glue_columns_match_pyicebergs() -> None:
    metadata = first()
    metadata = md.apply_updates(metadata, "file:///wh/t/metadata/00000-x.metadata.json", [
        {"Schema": {"Fields": [FIELDS[0], {"Id": 9, "Name": "new", "Type": "uuid", "Required": False}]},
         "Location": "file:///wh/t"}], 1_700_000_000_500, "Up")
    parsed = TableMetadataUtil.parse_raw(md.encode(metadata))
    assert glue_columns(metadata["schemas"], metadata["current-schema-id"]) == _to_columns(parsed)


def test_updates_add_specs_and_orders_and_log_the_previous_file() -> None:
    metadata = first()
    updated = md.apply_updates(metadata, "file:///wh/t/metadata/00000-x.metadata.json", [
        {"Schema": {"Fields": FIELDS, "IdentifierFieldIds": [1]}, "Location": "file:///wh/t2",
         "PartitionSpec": {"Fields": [{"SourceId": 2, "Transform": "day", "Name": "d"}]},
         "SortOrder": {"OrderId": 5, "Fields": [{"SourceId": 1, "Transform": "identity", "Direction": "asc",
                                                 "NullOrder": "nulls-first"}]}},
        {"Schema": {"Fields": FIELDS, "IdentifierFieldIds": [1]}, "Location": "file:///wh/t2", "Properties": {"a": ""},
         "Action": "remove-properties"}], 1_700_000_000_000, "Up")
    parsed = TableMetadataUtil.parse_raw(md.encode(updated))
    assert parsed.location == "file:///wh/t2" and len(parsed.schemas) == 1  # the same schema is not added again
    assert parsed.default_spec_id == 1 and parsed.spec().fields[0].field_id == 1000
    assert parsed.default_sort_order_id == 1 and parsed.properties == {}
    assert parsed.last_updated_ms == 1_700_000_000_001  # never before the previous file's
    assert [(e.metadata_file, e.timestamp_ms) for e in parsed.metadata_log] == [
        ("file:///wh/t/metadata/00000-x.metadata.json", 1_700_000_000_000)]
    assert metadata["schemas"] and metadata["default-spec-id"] == 0  # the input is not changed


def test_add_schema_action_keeps_the_current_schema() -> None:
    updated = md.apply_updates(first(), "m", [
        {"Schema": {"Fields": FIELDS[:1]}, "Location": "file:///wh/t", "Action": "add-schema"}], 1, "Up")
    assert updated["current-schema-id"] == 0 and [s["schema-id"] for s in updated["schemas"]] == [0, 1]
    again = md.apply_updates(updated, "m", [
        {"Schema": {"SchemaId": 1, "Fields": FIELDS[:1]}, "Location": "file:///wh/t",
         "Action": "set-current-schema"}], 2, "Up")
    assert again["current-schema-id"] == 1


@pytest.mark.parametrize("fields, member", [
    ([{"Id": 1, "Name": "a", "Type": "int", "Required": True},
      {"Id": 2, "Name": "b", "Required": True, "Type": {"type": "struct", "fields": [
          {"id": 1, "name": "c", "required": True, "type": "int"}]}}], "Schema.Fields[1].Type.Fields[0].Id"),
    ([{"Id": 1, "Name": "a", "Type": "decimal(39,2)", "Required": True}], "Schema.Fields[0].Type"),
    ([{"Id": 1, "Name": "a", "Type": "timestamp_ns", "Required": True}], "Schema.Fields[0].Type"),
    ([{"Id": 1, "Name": "a", "Type": {"type": "variant"}, "Required": True}], "Schema.Fields[0].Type.type"),
    ([{"Id": 1, "Name": "a", "Type": "int", "Required": "yes"}], "Schema.Fields[0].Required"),
])
def test_bad_schemas(fields, member) -> None:
    with pytest.raises(InvalidInputException) as raised:
        read_schema({"Fields": fields}, "Schema")
    assert raised.value.message.startswith(member + ":")


def test_identifier_fields_must_be_required_primitives() -> None:
    with pytest.raises(InvalidInputException, match=r"IdentifierFieldIds\[0\]"):
        read_schema({"Fields": FIELDS, "IdentifierFieldIds": [2]}, "Schema")


def test_hive_columns() -> None:
    schema = schema_from_columns([{"Name": "a", "Type": "struct<x:tinyint,y:array<char(3)>>"},
                                  {"Name": "b", "Type": "decimal"}], "Columns")
    assert schema["fields"] == [
        {"id": 1, "name": "a", "required": False, "type": {"type": "struct", "fields": [
            {"id": 2, "name": "x", "required": False, "type": "int"},
            {"id": 3, "name": "y", "required": False, "type": {
                "type": "list", "element-id": 4, "element": "string", "element-required": False}}]}},
        {"id": 5, "name": "b", "required": False, "type": "decimal(10, 0)"}]
    for bad in ("uniontype<int,string>", "array<int", "decimal(50,1)"):
        with pytest.raises(InvalidInputException, match=r"Columns\[0\]\.Type"):
            schema_from_columns([{"Name": "a", "Type": bad}], "Columns")


def test_metadata_numbers() -> None:
    assert md.metadata_number("s3://b/t/metadata/00012-abc.metadata.json") == 12
    assert md.metadata_number("s3://b/t/metadata/v3.metadata.json") == -1
    assert md.metadata_file("s3://b/t/", 3, "u") == "s3://b/t/metadata/00003-u.metadata.json"


def test_deeply_nested_hive_types_are_refused_not_recursed() -> None:
    with pytest.raises(InvalidInputException, match="nests deeper"):
        schema_from_columns([{"Name": "a", "Type": "array<" * 5000 + "int" + ">" * 5000}], "Columns")


@pytest.mark.parametrize("change, allowed", [
    ({"Id": 8, "Name": "amount", "Type": "decimal(12,2)", "Required": False}, True),
    ({"Id": 8, "Name": "amount", "Type": "decimal(12,3)", "Required": False}, False),
    ({"Id": 8, "Name": "amount", "Type": "decimal(9,2)", "Required": True}, False),
    ({"Id": 2, "Name": "ts", "Type": "string", "Required": False}, False),
    ({"Id": 3, "Name": "point", "Type": "string", "Required": False}, False),
])
def test_schema_evolution_keeps_old_data_readable(change, allowed) -> None:
    fields = [f if f["Id"] != change["Id"] else change for f in FIELDS]
    update = [{"Schema": {"Fields": fields, "IdentifierFieldIds": [1]}, "Location": "file:///wh/t"}]
    if allowed:
        assert md.apply_updates(first(), "m", update, 1, "Up")["current-schema-id"] == 1
    else:
        with pytest.raises(InvalidInputException, match=r"Up\.Updates\[0\]\.Schema\.Fields: field"):
            md.apply_updates(first(), "m", update, 1, "Up")


def test_a_new_spec_recycles_field_ids_of_the_same_source_and_transform() -> None:
    metadata = first(spec={"Fields": [{"SourceId": 2, "Transform": "day", "Name": "d"}]})
    updated = md.apply_updates(metadata, "m", [{
        "Schema": {"Fields": FIELDS, "IdentifierFieldIds": [1]}, "Location": "file:///wh/t",
        "PartitionSpec": {"Fields": [{"SourceId": 1, "Transform": "bucket[4]", "Name": "b"},
                                     {"SourceId": 2, "Transform": "day", "Name": "d"}]}}], 1, "Up")
    assert [f["field-id"] for f in updated["partition-specs"][1]["fields"]] == [1001, 1000]
    assert updated["last-partition-id"] == 1001 and updated["default-spec-id"] == 1
    TableMetadataUtil.parse_raw(md.encode(updated))


def test_decode_reads_back_what_encode_wrote() -> None:
    metadata = first(spec={"Fields": [{"SourceId": 2, "Transform": "day", "Name": "d"}]})
    assert md.decode(md.encode(metadata).encode(), "m") == metadata


def test_decode_defaults_the_optional_properties_and_metadata_log() -> None:
    metadata = first()
    del metadata["properties"], metadata["metadata-log"]
    decoded = md.decode(md.encode(metadata).encode(), "m")
    assert decoded["properties"] == {} and decoded["metadata-log"] == []
    updated = md.apply_updates(decoded, "m", [{"Schema": {"Fields": FIELDS, "IdentifierFieldIds": [1]},
                                               "Location": "file:///wh/t", "Properties": {"k": "v"}}], 1, "Up")
    assert updated["properties"] == {"k": "v"}


@pytest.mark.parametrize("change, named", [
    (lambda m: m.pop("schemas"), "schemas is required"),
    (lambda m: m.pop("current-schema-id"), "current-schema-id is required"),
    (lambda m: m.pop("partition-specs"), "partition-specs is required"),
    (lambda m: m.pop("sort-orders"), "sort-orders is required"),
    (lambda m: m.pop("last-column-id"), "last-column-id is required"),
    (lambda m: m.pop("location"), "location is required"),
    (lambda m: m.update({"last-partition-id": True}), "last-partition-id is required and must be an integer"),
    (lambda m: m.update({"current-schema-id": 7}), "current-schema-id 7 names no entry"),
    (lambda m: m.update({"default-spec-id": 7}), "default-spec-id 7 names no entry"),
    (lambda m: m.update({"properties": {"a": 1}}), "properties must be an object of strings"),
    (lambda m: m.update({"schemas": [5]}), r"schemas\[0\]\.schema-id is required"),
    (lambda m: m["schemas"][0].pop("fields"), r"schemas\[0\]\.fields is required"),
    (lambda m: m["schemas"][0]["fields"][0].pop("type"), r"schemas\[0\]\.Fields\[0\]\.Type"),
    (lambda m: m["partition-specs"][0].update({"fields": [{"source-id": 1}]}),
     r"partition-specs\[0\]\.fields\[0\]\.field-id is required"),
    (lambda m: m["sort-orders"][0].update({"fields": [{}]}), r"sort-orders\[0\]\.fields\[0\]\.source-id"),
])
def test_decode_refuses_a_file_lacking_what_format_version_2_requires(change, named) -> None:
    metadata = first()
    change(metadata)
    with pytest.raises(InvalidInputException, match=f"metadata file m is not valid Iceberg .*{named}"):
        md.decode(md.encode(metadata).encode(), "m")


def test_decode_refuses_types_nested_too_deeply() -> None:
    text = '{"format-version": 2, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(InvalidInputException, match="not Iceberg format version 2"):
        md.decode(text.encode(), "m")


# ------------------------------------------------------- a new schema must keep the table writable
PARTITIONED = {"spec": {"Fields": [{"SourceId": 2, "Transform": "day", "Name": "ts_day"}]},
               "order": {"OrderId": 1, "Fields": [{"SourceId": 8, "Transform": "identity", "Direction": "asc",
                                                   "NullOrder": "nulls-first"}]}}


def _without(field_id: int) -> list[dict]:
    return [f for f in FIELDS if f["Id"] != field_id]


@pytest.mark.parametrize("updates, named", [
    # the partition source dropped (pyiceberg: 'Cannot find source column for partition field')
    ([{"Schema": {"Fields": _without(2), "IdentifierFieldIds": [1]}, "Location": "file:///wh/t"}],
     r"Up\.Updates\[0\]\.Schema: the partition field 'ts_day' is built on column 'ts' \(id 2\)"),
    # the sort source dropped
    ([{"Schema": {"Fields": _without(8), "IdentifierFieldIds": [1]}, "Location": "file:///wh/t"}],
     r"Up\.Updates\[0\]\.Schema: the sort field is built on column 'amount' \(id 8\)"),
    # add-schema alone is allowed to drop it; making that schema current is not
    ([{"Action": "add-schema", "Schema": {"Fields": _without(2)}, "Location": "file:///wh/t"},
      {"Action": "set-current-schema", "Schema": {"SchemaId": 1}, "Location": "file:///wh/t"}],
     r"Up\.Updates\[1\]\.Schema: the partition field 'ts_day'"),
    # identifier fields: Iceberg's rules
    ([{"Schema": {"Fields": FIELDS, "IdentifierFieldIds": [4]}, "Location": "file:///wh/t"}],
     r"IdentifierFieldIds\[0\]: identifier field 4 \('x'\) must not be a float or double field"),
    ([{"Schema": {"Fields": [*FIELDS, {"Id": 9, "Name": "s", "Required": False, "Type": {
        "type": "struct", "fields": [{"id": 10, "name": "k", "required": True, "type": "long"}]}}],
                  "IdentifierFieldIds": [10]}, "Location": "file:///wh/t"}],
     r"identifier field 10 \('k'\) must not be nested in optional field 's'"),
    ([{"Schema": {"Fields": [*FIELDS, {"Id": 9, "Name": "l", "Required": True, "Type": {
        "type": "list", "element-id": 10, "element-required": True, "element": {
            "type": "struct", "fields": [{"id": 11, "name": "k", "required": True, "type": "long"}]}}}],
                  "IdentifierFieldIds": [11]}, "Location": "file:///wh/t"}],
     r"identifier field 11 \('k'\) must not be nested in list field 'l'"),
])
def test_a_schema_the_table_cannot_be_written_with_is_refused(updates, named) -> None:
    metadata = first(**PARTITIONED)
    with pytest.raises(InvalidInputException, match=named):
        md.apply_updates(metadata, "m", updates, 1, "Up")


def test_a_schema_may_drop_a_partition_source_with_a_spec_that_no_longer_uses_it() -> None:
    metadata = first(**PARTITIONED)
    updated = md.apply_updates(metadata, "m", [{
        "Schema": {"Fields": _without(2), "IdentifierFieldIds": [1]}, "Location": "file:///wh/t",
        "PartitionSpec": {"Fields": []}}], 1, "Up")
    assert updated["default-spec-id"] == 1 and updated["current-schema-id"] == 1
    # Older specs may keep naming it (Iceberg checks only the current one, as pyiceberg).
    assert updated["partition-specs"][0]["fields"][0]["source-id"] == 2
    parsed = TableMetadataUtil.parse_raw(md.encode(updated))
    parsed.spec().check_compatible(parsed.schema())
    # A void partition field needs no source (format version 1's way of dropping one).
    void = first(spec={"Fields": [{"SourceId": 2, "Transform": "void", "Name": "gone"}]})
    md.apply_updates(void, "m", [{"Schema": {"Fields": _without(2), "IdentifierFieldIds": [1]},
                                  "Location": "file:///wh/t"}], 1, "Up")


def test_a_partition_source_in_a_list_is_refused_at_create() -> None:
    schema = read_schema({"Fields": [{"Id": 1, "Name": "l", "Required": False, "Type": {
        "type": "list", "element-id": 2, "element-required": True, "element": {
            "type": "struct", "fields": [{"id": 3, "name": "k", "required": True, "type": "long"}]}}}]}, "Schema")
    with pytest.raises(InvalidInputException, match="In: the partition field 'p'.*nested in a list or map"):
        md.new_table_metadata("file:///wh/t", schema, {"Fields": [{"SourceId": 3, "Transform": "identity",
                                                                    "Name": "p"}]},
                              None, {}, "9f4b7a62-8f2c-4a4e-9a43-4c1f5a1c2d3e", 1, "In")


def test_snapshot_texts_written_before_give_the_same_file() -> None:
    memo = md.SnapshotTexts(60)
    snapshots = [{"snapshot-id": n, "sequence-number": n, "summary": {"operation": "append", "k": None},
                  "manifest-list": f"s3://b/m{n}.avro", "big": 2 ** 70 if n == 7 else n} for n in range(40)]
    for count in (3, 20, 21, 40, 25):  # growing, then a table whose older snapshots were removed
        metadata = {"format-version": 2, "snapshots": snapshots[:count], "refs": {}, "properties": {"p": 1.5}}
        assert md.encode_bytes(metadata, memo) == json_text.compact_lenient(metadata)
        assert json_text.loads(md.encode_bytes(metadata, memo)) == json_text.loads(json_text.compact_lenient(metadata))
