"""Glue (Hive) column types as Paimon types (chalicelib.domain.paimon.hive_types), against
pypaimon's own parser of the resulting JSON."""

from __future__ import annotations

import pytest
from pypaimon.schema.data_types import DataTypeParser

from chalicelib.domain.paimon.hive_types import fields_from_columns


@pytest.mark.parametrize("hive, paimon", [
    ("int", "INT"), ("integer", "INT"), ("bigint", "BIGINT"), ("string", "STRING"), ("binary", "BYTES"),
    ("decimal", "DECIMAL(10, 0)"), ("decimal(12,3)", "DECIMAL(12, 3)"), ("varchar(20)", "VARCHAR(20)"),
    ("char(2)", "CHAR(2)"), ("timestamp", "TIMESTAMP(6)"), ("date", "DATE"), ("BOOLEAN", "BOOLEAN"),
])
def test_atomic_types(hive: str, paimon: str) -> None:
    (field,) = fields_from_columns([{"Name": "c", "Type": hive}])
    assert field.type.to_json() == paimon


def test_nested_types_get_ids_as_paimons_schema_builder() -> None:
    fields = fields_from_columns([
        {"Name": "a", "Type": "struct<x:int,y:array<struct<p:string,q:map<string,double>>>>", "Comment": "c"},
        {"Name": "b", "Type": "map<string, array<int>>"},
    ])
    assert [f.id for f in fields] == [0, 5]
    assert fields[0].description == "c"
    row = fields[0].type
    assert [(f.id, f.name) for f in row.fields] == [(1, "x"), (2, "y")]
    assert [(f.id, f.name) for f in row.fields[1].type.element.fields] == [(3, "p"), (4, "q")]
    for f in fields:  # pypaimon reads every one of them
        DataTypeParser.parse_data_type(f.type.to_json())


@pytest.mark.parametrize("bad", ["uniontype<int,string>", "interval_day_time", "array<int", "map<int>",
                                 "struct<a int>", "varchar", "", "int extra", "decimal(39,0)", "decimal(5,6)",
                                 "decimal(5,1,1)"])
def test_types_without_a_paimon_counterpart(bad: str) -> None:
    with pytest.raises(ValueError):
        fields_from_columns([{"Name": "c", "Type": bad}])


def test_a_deeply_nested_type_is_refused_not_a_stack_overflow() -> None:
    # Glue allows 131,072 characters of type: far deeper than Python's stack, unchecked.
    with pytest.raises(ValueError, match="nests"):
        fields_from_columns([{"Name": "c", "Type": "array<" * 20000 + "int" + ">" * 20000}])
