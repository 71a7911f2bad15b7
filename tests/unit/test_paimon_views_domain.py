"""Pure pieces of Paimon views and functions: prefix patterns, the view <-> Glue mapping, changes."""

from __future__ import annotations

import json

import pytest

from chalicelib.domain.paimon.functions import Function, apply_changes as apply_function_changes, check_name
from chalicelib.domain.paimon.like_patterns import PrefixPattern
from chalicelib.domain.paimon.types import to_json
from chalicelib.domain.paimon.views import STATE_PARAMETER, ViewSchema, apply_changes, from_glue, to_glue
from chalicelib.errors import AlreadyExistsException, EntityNotFoundException, InvalidInputException

VIEW = {"fields": [{"id": 0, "name": "Id", "type": "INT NOT NULL"},
                   {"id": 1, "name": "r", "type": {"type": "ROW", "fields": [{"id": 2, "name": "x", "type": "STRING"}]}}],
        "query": "SELECT 1", "dialects": {"spark": "SELECT 2", "flink": "SELECT 3"}, "options": {"a": "b"}}


def test_prefix_patterns_match() -> None:
    assert PrefixPattern("ab", True).matches("ab") and not PrefixPattern("ab", True).matches("abc")
    assert PrefixPattern("ab", False).matches("abc") and not PrefixPattern("ab", False).matches("a")
    assert PrefixPattern("", False).matches("anything")


def test_view_round_trips_through_its_glue_form_exactly() -> None:
    view = ViewSchema.from_json(VIEW)
    table = to_glue("v", view)
    assert table["TableType"] == "VIRTUAL_VIEW"
    assert table["StorageDescriptor"]["Columns"] == [{"Name": "id", "Type": "int"},
                                                     {"Name": "r", "Type": "struct<x:string>"}]
    assert table["ViewDefinition"]["Representations"] == [
        {"Dialect": "SPARK", "ViewOriginalText": "SELECT 2", "ViewExpandedText": "SELECT 2"}]
    assert from_glue(table).to_json() == VIEW


def test_glue_changes_win_where_they_differ() -> None:
    table = to_glue("v", ViewSchema.from_json(VIEW))
    table["ViewDefinition"]["Representations"] = [{"Dialect": "ATHENA", "ViewOriginalText": "SELECT 4"}]
    table["StorageDescriptor"]["Columns"] = [{"Name": "id", "Type": "bigint"}]
    read = from_glue(table)
    assert read.dialects == {"flink": "SELECT 3", "athena": "SELECT 4"}
    assert read.to_json()["fields"] == [{"id": 0, "name": "id", "type": "BIGINT"}]


def test_a_view_without_paimon_state_or_with_garbage_reads() -> None:
    table = {"TableType": "VIRTUAL_VIEW", "Parameters": {STATE_PARAMETER: "{not json"},
             "StorageDescriptor": {"Columns": [{"Name": "c", "Type": "weird<<"}]}}
    read = from_glue(table)
    assert read.query == "" and read.options == {} and to_json(read.fields[0].type) == "STRING"
    assert json.loads(json.dumps(read.to_json()))


@pytest.mark.parametrize("glue, paimon", [
    ("int", "INT"), ("varchar(7)", "VARCHAR(7)"), ("decimal(5)", "DECIMAL(5, 0)"), ("decimal", "DECIMAL(10, 0)"),
    ("timestamp", "TIMESTAMP(6)"),
    ("array<map<string,int>>", {"type": "ARRAY", "element": {"type": "MAP", "key": "STRING", "value": "INT",
                                                             "nullable": True}, "nullable": True}),
    ("geometry", "STRING"), ("varchar", "STRING"), ("struct<a:uniontype<int>>", "STRING"),
])
def test_glue_types_read_as_paimon_types(glue: str, paimon: object) -> None:
    table = {"TableType": "VIRTUAL_VIEW", "StorageDescriptor": {"Columns": [{"Name": "c", "Type": glue}]}}
    assert to_json(from_glue(table).fields[0].type) == paimon


def test_glue_view_columns_number_nested_fields_per_row() -> None:
    # As Paimon's HiveCatalog reads a view (RowType.builder): each ROW numbers its fields from 0.
    table = {"TableType": "VIRTUAL_VIEW", "StorageDescriptor": {"Columns": [
        {"Name": "s", "Type": "struct<x:int,y:struct<p:string>>"}, {"Name": "d", "Type": "date"}]}}
    fields = from_glue(table).to_json()["fields"]
    assert [(f["id"], f["name"]) for f in fields] == [(0, "s"), (1, "d")]
    row = fields[0]["type"]
    assert [(f["id"], f["name"]) for f in row["fields"]] == [(0, "x"), (1, "y")]
    assert [(f["id"], f["name"]) for f in row["fields"][1]["type"]["fields"]] == [(0, "p")]


def test_view_changes_are_all_or_none() -> None:
    view = ViewSchema.from_json(VIEW)
    with pytest.raises(AlreadyExistsException) as error:
        apply_changes(view, [{"action": "setOption", "key": "k", "value": "v"},
                             {"action": "addDialect", "dialect": "flink", "query": "q"}], "db.v")
    assert (error.value.resource_type, error.value.resource_name) == ("DIALECT", "flink")
    assert view.options == {"a": "b"}
    with pytest.raises(EntityNotFoundException):
        apply_changes(view, [{"action": "dropDialect", "dialect": "hive"}], "db.v")
    with pytest.raises(InvalidInputException, match=STATE_PARAMETER):
        apply_changes(view, [{"action": "setOption", "key": STATE_PARAMETER, "value": "x"}], "db.v")


def test_function_names_and_changes() -> None:
    assert check_name("my.fn-1") == "my.fn-1"
    for bad in ("123", "", "a b", None):
        with pytest.raises(InvalidInputException):
            check_name(bad)
    function = Function.from_request({"name": "f", "definitions": {"s": {"type": "sql", "definition": "1"}}})
    with pytest.raises(AlreadyExistsException) as error:
        apply_function_changes(function, [{"action": "addDefinition", "name": "s",
                                           "definition": {"type": "sql", "definition": "2"}}])
    assert error.value.resource_type == "DEFINITION"
    changed = apply_function_changes(function, [{"action": "dropDefinition", "name": "s"}])
    assert changed.definitions == {} and function.definitions != {}
