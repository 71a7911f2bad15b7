"""Iceberg view metadata as pure data (chalicelib.domain.iceberg.view_metadata): create, the
CommitViewRequest's requirements and updates with Iceberg Java's ViewMetadata.Builder semantics,
metadata files, and the Glue table form both ways."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

import pytest

from chalicelib.domain.iceberg import view_metadata as vm
from chalicelib.errors import ConcurrentModificationException, InvalidInputException

UUID = "0d2c4c0a-3f4e-4f57-9d0c-1f7b0c4b5a11"


def schema(*names: str, schema_id: int = 0) -> dict[str, Any]:
    return {"type": "struct", "schema-id": schema_id,
            "fields": [{"id": i + 1, "name": n, "required": False, "type": "string"} for i, n in enumerate(names)]}


def version(sql: str, dialect: str = "spark", version_id: int = 1, schema_id: int = 0, ts: int = 5,
            **summary: str) -> dict[str, Any]:
    return {"version-id": version_id, "timestamp-ms": ts, "schema-id": schema_id, "summary": dict(summary),
            "representations": [{"type": "sql", "sql": sql, "dialect": dialect}], "default-namespace": ["ns"]}


def created(**properties: str) -> dict[str, Any]:
    request = {"name": "v", "schema": schema("a", schema_id=7), "view-version": version("select a from t", version_id=9),
               "properties": properties}
    return vm.new_view_metadata(request, "file:///w/v", UUID, 1000)


def replace(sql: str, *columns: str, dialect: str = "spark") -> list[dict[str, Any]]:
    """What a client's replace sends: the schema, a version on it, made current."""
    return [{"action": "add-schema", "schema": schema(*columns)},
            {"action": "add-view-version", "view-version": version(sql, dialect, version_id=0, schema_id=-1, ts=77)},
            {"action": "set-current-view-version", "view-version-id": -1}]


def test_create_numbers_the_schema_0_and_the_version_1_created_now():
    metadata = created(owner="me")
    assert metadata["format-version"] == 1 and metadata["view-uuid"] == UUID
    assert [s["schema-id"] for s in metadata["schemas"]] == [0]
    assert metadata["current-version-id"] == 1
    assert metadata["versions"][0] | {} == {**version("select a from t"), "timestamp-ms": 1000}
    assert metadata["version-log"] == [{"timestamp-ms": 1000, "version-id": 1}]
    assert metadata["properties"] == {"owner": "me"}


@pytest.mark.parametrize("change, message", [
    ({"view-version": {**version("x"), "representations": []}}, "without specifying a query"),
    ({"view-version": {**version("x"), "representations": [{"type": "java", "sql": "x", "dialect": "d"}]}},
     "unsupported view representations"),
    ({"view-version": {**version("x"), "representations": [{"type": "sql", "sql": "x", "dialect": "Spark"},
                                                           {"type": "sql", "sql": "y", "dialect": "spark"}]}},
     "multiple queries for dialect spark"),
    ({"schema": {"type": "struct", "fields": [{"id": 1, "name": "a", "required": False, "type": "nope"}]}}, "nope"),
    ({"properties": {"metadata_location": "x"}}, "reserved"),
])
def test_create_refuses_what_iceberg_refuses(change, message):
    request = {"name": "v", "schema": schema("a"), "view-version": version("x"), **change}
    with pytest.raises(InvalidInputException, match=message):
        vm.new_view_metadata(request, "file:///w/v", UUID, 1000)


def test_assert_view_uuid_fails_as_commit_failed():
    metadata = created()
    vm.check_requirements(metadata, [{"type": "assert-view-uuid", "uuid": UUID.upper()}])
    with pytest.raises(ConcurrentModificationException, match="view UUID does not match"):
        vm.check_requirements(metadata, [{"type": "assert-view-uuid", "uuid": "other"}])
    with pytest.raises(InvalidInputException):
        vm.check_requirements(metadata, [{"type": "assert-table-uuid", "uuid": UUID}])


def test_a_replace_adds_schema_1_and_version_2_and_logs_it():
    base = created()
    updated = vm.apply_updates(base, replace("select a, b from t", "a", "b"), 2000)
    assert [s["schema-id"] for s in updated["schemas"]] == [0, 1]
    assert updated["current-version-id"] == 2
    assert vm.current_version(updated)["schema-id"] == 1
    assert vm.current_version(updated)["timestamp-ms"] == 77  # a version added now keeps its own time
    assert updated["version-log"] == [*base["version-log"], {"timestamp-ms": 77, "version-id": 2}]
    assert base["current-version-id"] == 1  # the base is untouched


def test_a_known_schema_and_version_are_reused_and_an_old_version_made_current_is_logged_now():
    base = vm.apply_updates(created(), replace("select 2", "a", "b"), 2000)
    again = vm.apply_updates(base, [{"action": "add-schema", "schema": schema("a", schema_id=42)},
                                    {"action": "add-view-version",
                                     "view-version": version("select a from t", version_id=5, ts=1)},
                                    {"action": "set-current-view-version", "view-version-id": 1}], 3000)
    assert len(again["schemas"]) == 2 and len(again["versions"]) == 2
    assert again["current-version-id"] == 1
    assert again["version-log"][-1] == {"timestamp-ms": 3000, "version-id": 1}


def test_last_added_needs_something_added():
    with pytest.raises(InvalidInputException, match="no current version id has been set"):
        vm.apply_updates(created(), [{"action": "set-current-view-version", "view-version-id": -1}], 1)
    with pytest.raises(InvalidInputException, match="no schema has been added"):
        vm.apply_updates(created(), [{"action": "add-view-version",
                                      "view-version": version("x", version_id=3, schema_id=-1)}], 1)
    with pytest.raises(InvalidInputException, match="unknown schema: 4"):
        vm.apply_updates(created(), [{"action": "add-view-version", "view-version": version("x", schema_id=4)}], 1)
    with pytest.raises(InvalidInputException, match="unknown version: 8"):
        vm.apply_updates(created(), [{"action": "set-current-view-version", "view-version-id": 8}], 1)


def test_properties_location_uuid_and_format_version():
    base = created(a="1", b="2")
    updated = vm.apply_updates(base, [{"action": "set-properties", "updates": {"c": "3"}},
                                      {"action": "remove-properties", "removals": ["a", "absent"]},
                                      {"action": "set-location", "location": "file:///w/elsewhere/"},
                                      {"action": "assign-uuid", "uuid": UUID},
                                      {"action": "upgrade-format-version", "format-version": 1}], 1)
    assert updated["properties"] == {"b": "2", "c": "3"}
    assert updated["location"] == "file:///w/elsewhere"
    assert updated["version-log"] == base["version-log"]  # no version change: no log entry
    for update, message in (({"action": "assign-uuid", "uuid": "x"}, "Cannot reassign uuid"),
                            ({"action": "upgrade-format-version", "format-version": 2}, "Unsupported format version"),
                            ({"action": "upgrade-format-version", "format-version": 0}, "Cannot downgrade"),
                            ({"action": "add-snapshot"}, "cannot apply update 'add-snapshot' to a view")):
        with pytest.raises(InvalidInputException, match=message):
            vm.apply_updates(base, [update], 1)


def test_a_replace_may_not_drop_a_dialect_unless_allowed():
    with pytest.raises(InvalidInputException, match="loss of view dialects"):
        vm.apply_updates(created(), replace("select 1", "a", "c", dialect="trino"), 1)
    allowed = vm.apply_updates(created(**{vm.REPLACE_DROP_DIALECT_ALLOWED: "true"}),
                               replace("select 1", "a", "c", dialect="trino"), 1)
    assert vm.current_version(allowed)["representations"][0]["dialect"] == "trino"


def test_old_versions_expire_past_the_history_size_and_the_log_with_them():
    metadata = created(**{vm.VERSION_HISTORY_SIZE: "2"})
    for n in range(2, 6):
        metadata = vm.apply_updates(metadata, replace(f"select {n}", "a", f"c{n}"), n)
    assert [v["version-id"] for v in metadata["versions"]] == [4, 5]
    assert [e["version-id"] for e in metadata["version-log"]] == [4, 5]
    with pytest.raises(InvalidInputException, match="must be positive"):
        vm.apply_updates(metadata, [{"action": "set-properties", "updates": {vm.VERSION_HISTORY_SIZE: "0"}}], 1)


def test_metadata_files_read_back_plain_or_gzip_and_refuse_others():
    metadata = created()
    text = vm.encode(metadata).encode()
    assert vm.decode(text, "f") == metadata
    assert vm.decode(gzip.compress(text), "f") == metadata
    for bad in (b"{}", b"not json", json.dumps({**metadata, "current-version-id": 9}).encode(),
                json.dumps({**metadata, "format-version": 2}).encode()):
        with pytest.raises(InvalidInputException):
            vm.decode(bad, "f")


def test_the_glue_form_holds_the_glue_dialects_columns_and_properties():
    metadata = vm.apply_updates(created(keep="1", comment="the view"), [
        {"action": "add-view-version", "view-version": {
            **version("select a from t", "trino", version_id=2), "summary": {"engine-name": "spark", "engine-version": "3.5"},
            "representations": [{"type": "sql", "sql": "select a from t", "dialect": "trino"},
                                {"type": "sql", "sql": "SELECT a FROM t", "dialect": "spark"}]}},
        {"action": "set-current-view-version", "view-version-id": -1}], 1)
    base = {"Name": "v", "Parameters": {"keep": "old", "glue": "mine", "paimon.view": "{}"}, "Owner": "o"}
    table = vm.glue_view_input(base, "v", metadata, "file:///w/v/metadata/00001-x.metadata.json",
                               "file:///w/v/metadata/00000-x.metadata.json", {"keep": "old"})
    assert table["TableType"] == "VIRTUAL_VIEW" and table["Owner"] == "o"
    assert table["ViewOriginalText"] == table["ViewExpandedText"] == "select a from t"
    assert table["ViewDefinition"]["Representations"] == [
        {"Dialect": "SPARK", "ViewOriginalText": "SELECT a FROM t", "ViewExpandedText": "SELECT a FROM t",
         "DialectVersion": "3.5"}]
    assert table["Parameters"] == {"glue": "mine", "keep": "1", "comment": "the view", "table_type": "ICEBERG-VIEW",
                                   "metadata_location": "file:///w/v/metadata/00001-x.metadata.json",
                                   "previous_metadata_location": "file:///w/v/metadata/00000-x.metadata.json"}
    assert table["Description"] == "the view"
    assert [(c["Name"], c["Type"]) for c in table["StorageDescriptor"]["Columns"]] == [("a", "string")]
    assert table["StorageDescriptor"]["Location"] == "file:///w/v"
    assert vm.is_iceberg_view(table)


def test_a_glue_view_reads_as_one_version_of_its_definition():
    doc = {"Name": "g", "TableType": "VIRTUAL_VIEW", "UpdateTime": 12.5, "Description": "d",
           "StorageDescriptor": {"Columns": [{"Name": "a", "Type": "bigint"}, {"Name": "b", "Type": "geometry"}]},
           "ViewOriginalText": "select 1", "Parameters": {"x": "y", "paimon.view": "{}"},
           "ViewDefinition": {"Representations": [{"Dialect": "ATHENA", "ViewOriginalText": "select 1 as a"}]}}
    metadata = vm.from_glue(doc, "ns", UUID, 3)
    assert metadata["current-version-id"] == 4
    assert vm.current_version(metadata)["representations"] == [{"type": "sql", "sql": "select 1 as a",
                                                                "dialect": "athena"}]
    assert vm.current_version(metadata)["timestamp-ms"] == 12500
    assert [(f["name"], f["type"]) for f in vm.current_schema(metadata)["fields"]] == [("a", "long"), ("b", "string")]
    assert metadata["properties"] == {"x": "y", "comment": "d"}
    assert not vm.is_iceberg_view(doc)
    vm.decode(vm.encode(metadata).encode(), "built")  # what it builds is valid view metadata


def test_a_presto_view_reads_as_trino_sql_and_plain_text_as_hive():
    encoded = base64.b64encode(json.dumps({"originalSql": "SELECT 1", "catalog": "awsdatacatalog"}).encode()).decode()
    presto = vm.from_glue({"ViewOriginalText": f"/* Presto View: {encoded} */"}, "ns", UUID, 0)
    assert vm.current_version(presto)["representations"] == [{"type": "sql", "sql": "SELECT 1", "dialect": "trino"}]
    plain = vm.from_glue({"ViewOriginalText": "select 2"}, "ns", UUID, 0)
    assert vm.current_version(plain)["representations"] == [{"type": "sql", "sql": "select 2", "dialect": "hive"}]
