"""chalicelib.domain.paimon against pypaimon 2.1.0's own classes.

Types, Schema and TableSchema: built with pypaimon, serialized with pypaimon's JSON, parsed with
ours, re-serialized: the JSON must be identical. Schema changes: pypaimon's JSON for each change,
applied by ours and by pypaimon's SchemaManager to the same schema: the results must be identical
(timeMillis aside), and invalid changes must fail in both.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pypaimon.catalog.catalog_exception import ColumnAlreadyExistException, ColumnNotExistException
from pypaimon.common.json_util import JSON
from pypaimon.schema import data_types as pt
from pypaimon.schema.schema import Schema as PSchema
from pypaimon.schema.schema_change import Move as PMove
from pypaimon.schema.schema_change import SchemaChange as PChange
from pypaimon.schema.schema_manager import SchemaManager
from pypaimon.schema.table_schema import TableSchema as PTableSchema

from chalicelib.domain.paimon import types
from chalicelib.domain.paimon.schema import Schema, TableSchema
from chalicelib.domain.paimon.schema_changes import apply_changes, parse_change, parse_changes
from chalicelib.errors import AlreadyExistsException, EntityNotFoundException, InvalidInputException

ATOMICS = ["BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL(10, 2)", "DECIMAL(38, 0)",
           "CHAR(1)", "VARCHAR(20)", "STRING", "BINARY(4)", "VARBINARY(8)", "BYTES", "DATE", "TIME(3)",
           "TIMESTAMP(6)", "TIMESTAMP(3)", "TIMESTAMP(6) WITH LOCAL TIME ZONE", "TIMESTAMP_LTZ(6)", "VARIANT", "BLOB"]


def pjson(obj: Any) -> Any:
    """pypaimon's own JSON for one of its objects.

    pypaimon 2.1.0's JSON.to_json cannot encode a Move's MoveType enum (so its client cannot send
    an addColumn with a move, nor updateColumnPosition); the enum's value is what Paimon's Java
    client sends, so that is what the encoder gets here.
    """
    if isinstance(obj, pt.DataType):
        return obj.to_dict()
    return json.loads(JSON.to_json(obj, default=lambda value: value.value))


def nested_type() -> pt.DataType:
    inner = pt.RowType(True, [pt.DataField(10, "x", pt.AtomicType("INT")),
                              pt.DataField(11, "y", pt.ArrayType(False, pt.AtomicType("STRING", False)), "why")])
    return pt.MapType(True, pt.AtomicType("STRING", False),
                      pt.ArrayType(True, pt.MultisetType(False, inner)))


@pytest.mark.parametrize("text", ATOMICS)
@pytest.mark.parametrize("nullable", [True, False])
def test_atomic_types_round_trip(text: str, nullable: bool) -> None:
    theirs = pjson(pt.AtomicType(text, nullable))
    assert types.parse_type(theirs).to_json() == theirs


@pytest.mark.parametrize("build", [
    lambda: pt.ArrayType(True, pt.AtomicType("INT")),
    lambda: pt.ArrayType(False, pt.AtomicType("DECIMAL(10, 2)", False)),
    lambda: pt.MultisetType(True, pt.AtomicType("VARCHAR(20)")),
    lambda: pt.MapType(False, pt.AtomicType("STRING", False), pt.AtomicType("BIGINT")),
    lambda: pt.RowType(False, [pt.DataField(1, "a", pt.AtomicType("INT"), "comment a", "7")]),
    lambda: pt.VectorType(True, pt.AtomicType("FLOAT"), 3),
    nested_type,
])
def test_nested_types_round_trip(build: Any) -> None:
    theirs = pjson(build())
    ours = types.parse_type(theirs)
    assert ours.to_json() == theirs
    # and pypaimon reads ours back as the same type
    assert pt.DataTypeParser.parse_data_type(ours.to_json()) == build()


def test_lowercase_and_spacing_normalize() -> None:
    for text in ["int not null", "TIMESTAMP(6)  NOT NULL", "bigint"]:
        theirs = pt.DataTypeParser.parse_data_type(text).to_dict()
        assert types.parse_type(text).to_json() == theirs
    # pypaimon keeps "DECIMAL(10,2)" as typed; ours writes Paimon's Java form, which both read.
    for text, canonical in [("decimal(10,2)", "DECIMAL(10, 2)"), ("Varchar( 5 ) not null", "VARCHAR(5) NOT NULL")]:
        assert types.parse_type(text).to_json() == canonical
        assert pt.DataTypeParser.parse_data_type(canonical).to_dict() == canonical


@pytest.mark.parametrize("bad", ["", "NOPE", "INT(", "DECIMAL(a)", 5, None, [], {"type": 3},
                                 {"type": "ARRAY"}, {"type": "MAP", "key": "INT"},
                                 {"type": "ROW", "fields": [{"name": "a", "type": "INT"}]},
                                 {"type": "ROW", "fields": "x"}, {"type": "VECTOR", "element": "INT", "length": 0}])
def test_bad_types_are_invalid_input(bad: Any) -> None:
    with pytest.raises(InvalidInputException):
        types.parse_type(bad)


def test_deep_nesting_is_refused_not_a_recursion_error() -> None:
    data: Any = "INT"
    for _ in range(500):
        data = {"type": "ARRAY", "element": data}
    with pytest.raises(InvalidInputException, match="nest"):
        types.parse_type(data)


@pytest.mark.parametrize("paimon, glue", [
    ("BIGINT", "bigint"), ("INT NOT NULL", "int"), ("VARCHAR(20)", "varchar(20)"), ("STRING", "string"),
    ("CHAR(3)", "char(3)"), ("DECIMAL(10, 2)", "decimal(10,2)"), ("TIMESTAMP(6)", "timestamp"), ("DATE", "date"),
    ("BYTES", "binary"), ("BOOLEAN", "boolean"), ("DOUBLE", "double"),
    ({"type": "ARRAY", "element": "INT"}, "array<int>"),
    ({"type": "MULTISET", "element": "STRING"}, "map<string,int>"),
    ({"type": "MAP", "key": "STRING", "value": {"type": "ARRAY", "element": "BIGINT"}}, "map<string,array<bigint>>"),
    ({"type": "ROW", "fields": [{"id": 1, "name": "a", "type": "INT"}, {"id": 2, "name": "b", "type": "STRING"}]},
     "struct<a:int,b:string>"),
])
def test_glue_types(paimon: Any, glue: str) -> None:
    assert types.glue_type(types.parse_type(paimon)) == glue


# -- Schema and TableSchema ----------------------------------------------------------------------

def p_schema(**options: str) -> PSchema:
    fields = [pt.DataField(0, "id", pt.AtomicType("BIGINT")), pt.DataField(1, "dt", pt.AtomicType("STRING")),
              pt.DataField(2, "v", pt.AtomicType("INT"), "value"),
              pt.DataField(3, "r", pt.RowType(True, [pt.DataField(4, "a", pt.AtomicType("INT")),
                                                    pt.DataField(5, "b", pt.AtomicType("STRING"))])),
              pt.DataField(6, "m", pt.MapType(True, pt.AtomicType("STRING", False), pt.AtomicType("DOUBLE"))),
              pt.DataField(7, "tags", pt.ArrayType(True, pt.AtomicType("STRING")))]
    return PSchema(fields=fields, partition_keys=["dt"], primary_keys=["id", "dt"],
                   options={"bucket": "2", **options}, comment="a table")


def test_schema_round_trip() -> None:
    theirs = pjson(p_schema())
    assert Schema.from_json(theirs).to_json() == theirs


def test_table_schema_round_trip_and_from_schema() -> None:
    p_table = PTableSchema.from_schema(0, p_schema())
    theirs = pjson(p_table)
    assert list(theirs) == list(TableSchema.from_json(theirs).to_json())
    assert TableSchema.from_json(theirs).to_json() == theirs
    ours = TableSchema.from_schema(0, Schema.from_json(pjson(p_schema())), theirs["timeMillis"])
    assert ours.to_json() == theirs


def test_primary_keys_become_not_null() -> None:
    schema = Schema.from_json({"fields": [{"id": 0, "name": "k", "type": "INT"}], "primaryKeys": ["k"]})
    assert TableSchema.from_schema(0, schema, 1).fields[0].type.to_json() == "INT NOT NULL"


@pytest.mark.parametrize("bad, field", [
    ({"fields": [{"id": 0, "name": "a", "type": "INT"}, {"id": 1, "name": "a", "type": "INT"}]}, "unique"),
    ({"fields": [{"id": 0, "name": "a", "type": "INT"}], "partitionKeys": ["b"]}, "partitionKeys"),
    ({"fields": [{"id": 0, "name": "a", "type": "INT"}], "primaryKeys": ["a", "a"]}, "primaryKeys"),
    ({"fields": {"a": 1}}, "fields"), ({"options": {"a": 1}}, "options"), ({"comment": 3}, "comment"),
    ({"fields": [{"id": "0", "name": "a", "type": "INT"}]}, "id"), ([], "schema"),
])
def test_bad_schemas_name_the_field(bad: Any, field: str) -> None:
    with pytest.raises(InvalidInputException, match=field):
        Schema.from_json(bad)


# -- schema changes against pypaimon's SchemaManager ------------------------------------------------

def their_apply(old: PTableSchema, changes: list[Any]) -> PTableSchema:
    manager = SchemaManager.__new__(SchemaManager)  # no files: only option changes on immutable keys read them
    manager.file_io, manager.table_path, manager.branch = None, "/nowhere", "main"
    return manager._generate_table_schema(old, changes)


def both(changes: list[Any], **options: str) -> tuple[dict[str, Any], dict[str, Any]]:
    p_old = PTableSchema.from_schema(0, p_schema(**options))
    ours_old = TableSchema.from_json(pjson(p_old))
    parsed = parse_changes([pjson(c) for c in changes])
    ours = apply_changes(ours_old, parsed, 0).to_json()
    theirs = pjson(their_apply(p_old, changes))
    ours.pop("timeMillis")
    theirs.pop("timeMillis")
    return ours, theirs


VALID = {
    "setOption": [PChange.set_option("snapshot.num-retained.max", "5")],
    "removeOption": [PChange.remove_option("bucket")],
    "updateComment": [PChange.update_comment("new comment")],
    "updateComment null": [PChange.update_comment(None)],
    "addColumn last": [PChange.add_column("c", pt.AtomicType("INT"), "cee")],
    "addColumn first": [PChange.add_column("c", pt.AtomicType("INT"), None, PMove.first("c"))],
    "addColumn after": [PChange.add_column("c", pt.AtomicType("INT"), None, PMove.after("c", "id"))],
    "addColumn before": [PChange.add_column("c", pt.AtomicType("INT"), None, PMove.before("c", "v"))],
    "addColumn row": [PChange.add_column("c", pt.RowType(True, [pt.DataField(0, "q", pt.AtomicType("INT"))]))],
    "addColumn nested": [PChange.add_column(["r", "c"], pt.AtomicType("STRING"))],
    "renameColumn": [PChange.rename_column("v", "w")],
    "renameColumn pk": [PChange.rename_column("id", "ident")],
    "renameColumn nested": [PChange.rename_column(["r", "a"], "aa")],
    "dropColumn": [PChange.drop_column("v")],
    "dropColumn nested": [PChange.drop_column(["r", "a"])],
    "updateColumnComment": [PChange.update_column_comment("v", "new")],
    "updateColumnType widen": [PChange.update_column_type("v", pt.AtomicType("BIGINT"))],
    "updateColumnType to string": [PChange.update_column_type("v", pt.AtomicType("STRING"))],
    "updateColumnType nested": [PChange.update_column_type(["r", "a"], pt.AtomicType("BIGINT"))],
    "updateColumnType keep": [PChange.update_column_type("v", pt.AtomicType("BIGINT", False), True)],
    "updateColumnNullability": [PChange.update_column_nullability("id", False)],
    "updateColumnPosition first": [PChange.update_column_position(PMove.first("v"))],
    "updateColumnPosition last": [PChange.update_column_position(PMove.last("id"))],
    "updateColumnPosition after": [PChange.update_column_position(PMove.after("id", "m"))],
    "updateColumnPosition before": [PChange.update_column_position(PMove.before("tags", "id"))],
    "several": [PChange.add_column("c", pt.AtomicType("INT")), PChange.rename_column("c", "d"),
                PChange.update_column_type("d", pt.AtomicType("DOUBLE")), PChange.drop_column("m"),
                PChange.set_option("a", "1"), PChange.set_option("a", "2")],
}


@pytest.mark.parametrize("name", list(VALID))
def test_changes_match_pypaimon(name: str) -> None:
    ours, theirs = both(VALID[name])
    assert ours == theirs
    assert ours["id"] == 1


def test_add_column_before_partition_option() -> None:
    ours, theirs = both([PChange.add_column("c", pt.AtomicType("INT"))], **{"add-column-before-partition": "true"})
    assert ours == theirs
    assert [f["name"] for f in ours["fields"]].index("c") == 1


def test_null_to_not_null_allowed_by_option() -> None:
    ours, theirs = both([PChange.update_column_nullability("v", False)],
                        **{"alter-column-null-to-not-null.disabled": "false"})
    assert ours == theirs


INVALID = {
    "drop partition key": ([PChange.drop_column("dt")], InvalidInputException),
    "drop primary key": ([PChange.drop_column("id")], InvalidInputException),
    "rename partition key": ([PChange.rename_column("dt", "day")], InvalidInputException),
    "update partition key type": ([PChange.update_column_type("dt", pt.AtomicType("INT"))], InvalidInputException),
    "update primary key type": ([PChange.update_column_type("id", pt.AtomicType("STRING"))], InvalidInputException),
    "primary key nullable": ([PChange.update_column_nullability("id", True)], InvalidInputException),
    "null to not null": ([PChange.update_column_nullability("v", False)], InvalidInputException),
    "add NOT NULL": ([PChange.add_column("c", pt.AtomicType("INT", False))], InvalidInputException),
    "incompatible type": ([PChange.update_column_type("v", pt.AtomicType("DATE"))], InvalidInputException),
    "row to int": ([PChange.update_column_type("r", pt.AtomicType("INT"))], InvalidInputException),
    "change type option": ([PChange.set_option("type", "format-table")], InvalidInputException),
    "unknown column drop": ([PChange.drop_column("nope")], EntityNotFoundException),
    "unknown column rename": ([PChange.rename_column("nope", "x")], EntityNotFoundException),
    "unknown nested": ([PChange.update_column_comment(["r", "nope"], "c")], EntityNotFoundException),
    "unknown move reference": ([PChange.update_column_position(PMove.after("v", "nope"))], EntityNotFoundException),
    "unknown type column": ([PChange.update_column_type("nope", pt.AtomicType("INT"))], EntityNotFoundException),
    "add existing": ([PChange.add_column("v", pt.AtomicType("INT"))], AlreadyExistsException),
    "rename onto existing": ([PChange.rename_column("v", "m")], AlreadyExistsException),
}


@pytest.mark.parametrize("name", list(INVALID))
def test_invalid_changes_fail_like_pypaimon(name: str) -> None:
    changes, error = INVALID[name]
    with pytest.raises(error) as raised:
        both(changes)
    p_old = PTableSchema.from_schema(0, p_schema())
    # pypaimon: ValueError for what Paimon calls IllegalArgument, its catalog exceptions otherwise.
    with pytest.raises((ValueError, ColumnNotExistException, ColumnAlreadyExistException)):
        their_apply(p_old, changes)
    if error is not InvalidInputException:
        assert raised.value.resource_type == "COLUMN"


def test_a_failed_change_leaves_the_old_schema_untouched() -> None:
    old = TableSchema.from_json(pjson(PTableSchema.from_schema(0, p_schema())))
    before = old.to_json()
    with pytest.raises(EntityNotFoundException):
        apply_changes(old, parse_changes([{"action": "addColumn", "fieldNames": ["c"], "dataType": "INT"},
                                          {"action": "dropColumn", "fieldNames": ["nope"]}]), 0)
    assert old.to_json() == before


@pytest.mark.parametrize("bad, field", [
    ({}, "action"), ({"action": "explode"}, "action"), ({"action": "setOption", "key": "a"}, "value"),
    ({"action": "setOption", "key": 1, "value": "b"}, "key"), ({"action": "dropColumn", "fieldNames": []}, "fieldNames"),
    ({"action": "dropColumn", "fieldNames": "a"}, "fieldNames"),
    ({"action": "addColumn", "fieldNames": ["a"], "dataType": "NOPE"}, "dataType"),
    ({"action": "updateColumnNullability", "fieldNames": ["a"], "newNullability": "yes"}, "newNullability"),
    ({"action": "updateColumnPosition", "move": {"fieldName": "a", "type": "AFTER"}}, "referenceFieldName"),
    ({"action": "updateColumnPosition", "move": {"fieldName": "a", "type": "SIDEWAYS"}}, "type"),
    ({"action": "renameColumn", "fieldNames": ["a"]}, "newName"), ("x", "change"),
])
def test_bad_changes_name_the_field(bad: Any, field: str) -> None:
    with pytest.raises(InvalidInputException, match=field):
        parse_change(bad)


def test_immutable_options_are_locked_once_the_table_has_snapshots() -> None:
    old = TableSchema.from_json(pjson(PTableSchema.from_schema(0, p_schema())))
    change = parse_changes([{"action": "setOption", "key": "merge-engine", "value": "partial-update"}])
    assert apply_changes(old, change, 0).options["merge-engine"] == "partial-update"
    with pytest.raises(InvalidInputException, match="merge-engine"):
        apply_changes(old, change, 0, has_snapshots=True)
    assert apply_changes(old, parse_changes([{"action": "setOption", "key": "bucket", "value": "2"}]), 0,
                         has_snapshots=True).options["bucket"] == "2"


def test_drop_primary_key_as_flink_sends_it() -> None:
    # SchemaChange.DropPrimaryKey: {"action": "dropPrimaryKey"}, refused once the table has data.
    old = TableSchema.from_json(pjson(PTableSchema.from_schema(0, p_schema())))
    assert old.primary_keys
    changed = apply_changes(old, parse_changes([{"action": "dropPrimaryKey"}]), 0)
    assert changed.primary_keys == [] and changed.id == old.id + 1
    assert [f.name for f in changed.fields] == [f.name for f in old.fields]
    with pytest.raises(InvalidInputException, match="non-empty"):
        apply_changes(old, parse_changes([{"action": "dropPrimaryKey"}]), 0, has_snapshots=True)
