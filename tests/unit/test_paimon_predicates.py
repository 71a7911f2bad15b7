"""Paimon's predicate JSON (ListPartitionsByFilterRequest.filter) translated into the bound tree
Glue's Expression binds to: the same tree for the same condition, a superset (TRUE) where Glue's
language has no exact form, None where nothing can match, PredicateError for what is no
predicate. JSON texts as paimon-common's PredicateJsonSerdeTest shows them."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

from chalicelib.domain import expressions
from chalicelib.domain.paimon.predicates import PredicateError, translate

KEYS = [("dt", "string"), ("hr", "int"), ("day", "date"), ("at", "timestamp")]


def leaf(function: str, name: str, literals: list[Any], kind: str = "STRING") -> dict[str, Any]:
    return {"kind": "LEAF", "transform": {"name": "FIELD_REF", "fieldRef": {"index": 0, "name": name, "type": kind}},
            "function": function, "literals": literals}


def both(predicate: Any, expression: str) -> None:
    """The predicate translates to what the Glue Expression binds to."""
    text = predicate if isinstance(predicate, str) else json.dumps(predicate)
    assert translate(text, KEYS) == expressions.bind(expressions.parse_expression(expression), KEYS)


@pytest.mark.parametrize("function, op", [("EQUAL", "="), ("NOT_EQUAL", "<>"), ("LESS_THAN", "<"),
                                          ("LESS_OR_EQUAL", "<="), ("GREATER_THAN", ">"),
                                          ("GREATER_OR_EQUAL", ">=")])
def test_comparisons(function: str, op: str) -> None:
    both(leaf(function, "hr", [5], "INT"), f"hr {op} 5")
    both(leaf(function, "dt", ["2024-01-01"]), f"dt {op} '2024-01-01'")


def test_the_flat_json_of_in_and_not_in_and_compounds() -> None:
    # PredicateBuilder.in(0, [1, 2, 3]) as toFlatJson writes it: nested ORs of EQUALs.
    text = ('{"kind":"COMPOUND","function":"OR","children":[{"kind":"LEAF","transform":{"name":"FIELD_REF",'
            '"fieldRef":{"index":0,"name":"hr","type":"INT"}},"function":"EQUAL","literals":[1]},{"kind":"COMPOUND",'
            '"function":"OR","children":[{"kind":"LEAF","transform":{"name":"FIELD_REF","fieldRef":{"index":0,'
            '"name":"hr","type":"INT"}},"function":"EQUAL","literals":[2]},{"kind":"LEAF","transform":{"name":'
            '"FIELD_REF","fieldRef":{"index":0,"name":"hr","type":"INT"}},"function":"EQUAL","literals":[3]}]}]}')
    both(text, "hr = 1 OR hr = 2 OR hr = 3")
    both(leaf("IN", "hr", [1, 2, 3], "INT"), "hr IN (1, 2, 3)")
    both(leaf("NOT_IN", "dt", ["a", "b"]), "dt NOT IN ('a', 'b')")
    both({"kind": "COMPOUND", "function": "AND", "children": [
        leaf("EQUAL", "dt", ["x"]), {"kind": "COMPOUND", "function": "AND", "children": [
            leaf("BETWEEN", "hr", [3, 7], "INT"), leaf("NOT_BETWEEN", "hr", [4, 5], "INT")]}]},
         "dt = 'x' AND hr BETWEEN 3 AND 7 AND hr NOT BETWEEN 4 AND 5")


def test_string_functions_are_likes() -> None:
    both(leaf("STARTS_WITH", "dt", ["2024-"]), "dt LIKE '2024-%'")
    both(leaf("ENDS_WITH", "dt", ["-01"]), "dt LIKE '%-01'")
    both(leaf("CONTAINS", "dt", ["01"]), "dt LIKE '%01%'")
    both(leaf("LIKE", "dt", ["%a_b%"]), "dt LIKE '%a_b%'")


def test_null_is_paimons_default_partition_name_on_string_keys() -> None:
    both(leaf("IS_NULL", "dt", []), "dt = '__DEFAULT_PARTITION__'")
    both(leaf("IS_NOT_NULL", "dt", []), "dt <> '__DEFAULT_PARTITION__'")
    assert translate(json.dumps(leaf("IS_NULL", "hr", [], "INT")), KEYS) == expressions.TRUE


def test_java_time_literals() -> None:
    both(leaf("GREATER_OR_EQUAL", "day", [[2024, 1, 5]], "DATE"), "day >= '2024-01-05'")
    both(leaf("EQUAL", "day", ["2024-01-05"], "DATE"), "day = '2024-01-05'")
    both(leaf("LESS_THAN", "at", [[2024, 1, 5, 10, 30]], "TIMESTAMP(6)"), "at < '2024-01-05 10:30:00'")
    both(leaf("LESS_THAN", "at", [[2024, 1, 5, 10, 30, 1, 500]], "TIMESTAMP(9)"),
         "at < '2024-01-05 10:30:01.000000500'")
    bound = translate(json.dumps(leaf("EQUAL", "day", [[2024, 2, 29]], "DATE")), KEYS)
    assert isinstance(bound, expressions.Compare) and bound.literal == datetime.date(2024, 2, 29)


def test_what_glue_cannot_express_is_true_and_keeps_a_superset() -> None:
    upper = {"kind": "LEAF", "transform": {"name": "UPPER", "inputs": [{"index": 0, "name": "dt", "type": "STRING"}]},
             "function": "EQUAL", "literals": ["X"]}
    for unsupported in (upper, leaf("EQUAL", "n", [1], "BIGINT"), leaf("ARRAY_CONTAINS", "dt", ["x"]),
                        leaf("EQUAL", "hr", ["not a number"], "INT"), leaf("STARTS_WITH", "hr", ["1"], "INT"),
                        leaf("LIKE", "dt", ["a\\%"])):
        assert translate(json.dumps(unsupported), KEYS) == expressions.TRUE
        # Inside an AND it widens only its own part; inside an OR the OR.
        both({"kind": "COMPOUND", "function": "AND", "children": [unsupported, leaf("EQUAL", "hr", [1], "INT")]},
             "hr = 1")
        assert translate(json.dumps({"kind": "COMPOUND", "function": "OR", "children": [
            unsupported, leaf("EQUAL", "hr", [1], "INT")]}), KEYS) == expressions.TRUE


def test_what_matches_nothing_is_none() -> None:
    false = {"kind": "LEAF", "transform": {"name": "NULL"}, "function": "FALSE", "literals": []}
    true = {"kind": "LEAF", "transform": {"name": "NULL"}, "function": "TRUE", "literals": []}
    assert translate(json.dumps(false), KEYS) is None
    assert translate(json.dumps(true), KEYS) == expressions.TRUE
    assert translate(json.dumps(leaf("IN", "hr", [None], "INT")), KEYS) is None
    assert translate(json.dumps(leaf("NOT_IN", "hr", [1, None], "INT")), KEYS) is None
    assert translate(json.dumps(leaf("EQUAL", "hr", [None], "INT")), KEYS) is None
    assert translate(json.dumps({"kind": "COMPOUND", "function": "AND", "children": [
        false, leaf("EQUAL", "hr", [1], "INT")]}), KEYS) is None
    both({"kind": "COMPOUND", "function": "OR", "children": [false, leaf("EQUAL", "hr", [1], "INT")]}, "hr = 1")
    both(leaf("IN", "hr", [1, None], "INT"), "hr IN (1)")


@pytest.mark.parametrize("text", ["", "  ", "not json", "[]", '{"kind":"invalid"}', '{"kind":"LEAF"}',
                                  '{"kind":"COMPOUND","function":"XOR","children":[]}',
                                  '{"kind":"COMPOUND","function":"AND","children":[]}',
                                  json.dumps(leaf("BETWEEN", "hr", [1], "INT")),
                                  json.dumps(leaf("EQUAL", "hr", [1, 2], "INT"))])
def test_what_is_no_predicate_is_an_error(text: str) -> None:
    with pytest.raises(PredicateError):
        translate(text, KEYS)


def test_nesting_is_bounded() -> None:
    tree: dict[str, Any] = leaf("EQUAL", "hr", [1], "INT")
    for _ in range(100):
        tree = {"kind": "COMPOUND", "function": "AND", "children": [tree]}
    with pytest.raises(PredicateError):
        translate(json.dumps(tree), KEYS)
