"""Paimon's partition predicate JSON (``ListPartitionsByFilterRequest.filter``) as the expression
tree GetPartitions' Expression binds to, so the same planner, index ranges, digest and evaluator
serve it (docs/design.md, "The Java client's partition calls").

The JSON is Paimon's ``JsonSerdeUtil.toFlatJson(predicate)`` (paimon-common
``org.apache.paimon.predicate``): ``{"kind": "COMPOUND", "function": "AND"|"OR", "children": [...]}``
or ``{"kind": "LEAF", "transform": {"name": "FIELD_REF", "fieldRef": {"index", "name", "type"}},
"function": "EQUAL", "literals": [...]}``. Literals are Jackson's rendering of the Java values:
numbers, strings, booleans, ``LocalDate`` as ``[y, m, d]``, ``LocalDateTime`` as
``[y, m, d, h, mi(, s(, ns))]`` (JavaTimeModule's defaults; the ISO texts are accepted too).

The answer may be a superset: Paimon's clients re-evaluate the predicate on what the server
returns (RESTApi.listPartitionsByFilterPaged), and Paimon's reference server counts what it
cannot restore as true. So a leaf this catalog cannot express exactly (a transform other than
FIELD_REF, a function Glue's language lacks, a column that is no partition key, a literal that
does not fit the key's type, IS_NULL on a typed key) becomes TRUE. That keeps the answer a
superset whatever surrounds it: Paimon's predicates have no NOT node (negation is a function of
its own, NOT_EQUAL, NOT_IN, NOT_BETWEEN), so a TRUE leaf only ever widens the AND or OR above
it. What is not a predicate at all (not JSON, an unknown ``kind``, a compound without children)
is a PredicateError, which the protocol answers 400.
"""

from __future__ import annotations

import json
from typing import Any, Optional, Sequence

from chalicelib.domain import expressions
from chalicelib.domain.expressions import (TRUE, And, Between, Compare, In, Like, Literal, Node, Or,
                                           TrueExpr)
from chalicelib.domain.keycodec import STRING, kind_of
from chalicelib.errors import InvalidInputException

# Paimon writes a null partition value as this name (CoreOptions.PARTITION_DEFAULT_NAME's default);
# Glue stores it as that text.
DEFAULT_PARTITION_NAME = "__DEFAULT_PARTITION__"
MAX_DEPTH = 64  # deeper nesting is refused: the walk recurses
MAX_LEAVES = 4096

_COMPARE = {"EQUAL": "=", "NOT_EQUAL": "<>", "LESS_THAN": "<", "LESS_OR_EQUAL": "<=", "GREATER_THAN": ">",
            "GREATER_OR_EQUAL": ">="}


class PredicateError(ValueError):
    """The filter is not a Paimon predicate JSON."""


class _False:
    """ALWAYS FALSE, while translating: folded away by the AND or OR above it."""

    def __repr__(self) -> str:
        return "FALSE"


FALSE = _False()


def translate(text: Any, keys: Sequence[tuple[str, str]]) -> Optional[Node]:
    """The bound expression tree (``expressions`` nodes, ``KeyRef`` columns, typed literals) of
    the predicate JSON ``text`` over the partition keys ``[(name, glue_type), ...]``; None when
    nothing can match. A superset of the predicate where it cannot be exact (module docstring)."""
    if not isinstance(text, str) or not text.strip():
        raise PredicateError("filter is required: the JSON of a Paimon predicate over the partition columns")
    try:
        tree = json.loads(text)
    except ValueError as why:
        raise PredicateError(f"filter is not JSON: {why}") from None
    node = _node(tree, list(keys), 0, [0])
    return None if isinstance(node, _False) else node


def _node(tree: Any, keys: list[tuple[str, str]], depth: int, counter: list[int]) -> Node | _False:
    if depth > MAX_DEPTH:
        raise PredicateError(f"filter nests deeper than {MAX_DEPTH} levels")
    if not isinstance(tree, dict):
        raise PredicateError("a predicate must be a JSON object")
    kind = tree.get("kind")
    if kind == "COMPOUND":
        function, children = tree.get("function"), tree.get("children")
        if function not in ("AND", "OR"):
            raise PredicateError(f"Could not resolve compound predicate function '{function}'")
        if not isinstance(children, list) or not children:
            raise PredicateError("a compound predicate needs children")
        items = [_node(child, keys, depth + 1, counter) for child in children]
        return _and(items) if function == "AND" else _or(items)
    if kind == "LEAF":
        counter[0] += 1
        if counter[0] > MAX_LEAVES:
            raise PredicateError(f"filter has more than {MAX_LEAVES} leaves")
        return _leaf(tree, keys)
    raise PredicateError(f"Could not resolve type id '{kind}'")


def _and(items: list[Node | _False]) -> Node | _False:
    if any(item is FALSE for item in items):
        return FALSE
    kept: list[Node] = []
    for item in items:
        assert not isinstance(item, _False)
        if isinstance(item, And):
            kept.extend(item.items)
        elif not isinstance(item, TrueExpr):
            kept.append(item)
    return TRUE if not kept else kept[0] if len(kept) == 1 else And(tuple(kept))


def _or(items: list[Node | _False]) -> Node | _False:
    kept: list[Node] = []
    for item in items:
        if isinstance(item, _False):
            continue
        if isinstance(item, TrueExpr):
            return TRUE
        kept.extend(item.items if isinstance(item, Or) else (item,))
    return FALSE if not kept else kept[0] if len(kept) == 1 else Or(tuple(kept))


def _leaf(tree: dict[str, Any], keys: list[tuple[str, str]]) -> Node | _False:
    function = tree.get("function")
    if not isinstance(function, str):
        raise PredicateError("a leaf predicate needs a function")
    if function == "TRUE":
        return TRUE
    if function == "FALSE":
        return FALSE
    transform = tree.get("transform")
    if not isinstance(transform, dict):
        raise PredicateError("a leaf predicate needs a transform")
    literals = tree.get("literals")
    if literals is None:
        literals = []
    if not isinstance(literals, list):
        raise PredicateError("literals must be a list")
    if transform.get("name") != "FIELD_REF" or not isinstance(transform.get("fieldRef"), dict):
        return TRUE  # UPPER(...), CAST(...), CONCAT(...): not in Glue's language
    name = transform["fieldRef"].get("name")
    if not isinstance(name, str):
        raise PredicateError("fieldRef.name must be a string")
    key = next(((k, t) for k, t in keys if k.lower() == name.lower()), None)
    if key is None:
        return TRUE  # not a partition key: the reference server counts it as true too
    try:
        return _bound(function, key, keys, literals)
    except (InvalidInputException, _Unsupported):
        return TRUE


class _Unsupported(Exception):
    """This leaf has no exact form here: it counts as TRUE."""


def _bound(function: str, key: tuple[str, str], keys: list[tuple[str, str]], literals: list[Any]) -> Node | _False:
    name, glue_type = key
    string_key = kind_of(glue_type) == STRING

    def bind(node: Node) -> Node:
        return expressions.bind(node, keys)

    if function in _COMPARE:
        value = _one(literals)
        if value is None:
            return FALSE  # a comparison with NULL is never true
        return bind(Compare(name, _COMPARE[function], _literal(value, glue_type)))
    if function in ("IS_NULL", "IS_NOT_NULL"):
        if not string_key:
            raise _Unsupported()  # a typed key's null partition is a text that does not convert
        op = "=" if function == "IS_NULL" else "<>"
        return bind(Compare(name, op, Literal(DEFAULT_PARTITION_NAME, True)))
    if function in ("IN", "NOT_IN"):
        values = [v for v in literals if v is not None]
        if function == "NOT_IN" and len(values) < len(literals):
            return FALSE  # x NOT IN (..., NULL) is never true
        if not values:
            return FALSE if function == "IN" else TRUE
        return bind(In(name, tuple(_literal(v, glue_type) for v in values), function == "NOT_IN"))
    if function in ("BETWEEN", "NOT_BETWEEN"):
        if len(literals) != 2:
            raise PredicateError(f"{function} takes two literals")
        if literals[0] is None or literals[1] is None:
            return FALSE
        return bind(Between(name, _literal(literals[0], glue_type), _literal(literals[1], glue_type),
                            function == "NOT_BETWEEN"))
    if function in ("STARTS_WITH", "ENDS_WITH", "CONTAINS", "LIKE"):
        value = _one(literals)
        if value is None:
            return FALSE
        if not string_key or not isinstance(value, str):
            raise _Unsupported()
        if function == "LIKE":
            if "\\" in value:
                raise _Unsupported()  # Glue's LIKE has no escape character
            pattern = value
        else:
            # '%' and '_' in the text are wildcards to Glue's LIKE: a superset of the exact test.
            pattern = {"STARTS_WITH": value + "%", "ENDS_WITH": "%" + value, "CONTAINS": "%" + value + "%"}[function]
        return bind(Like(name, pattern))
    raise _Unsupported()  # ARRAY_CONTAINS, ... or a function of a later Paimon


def _one(literals: list[Any]) -> Any:
    if len(literals) != 1:
        raise PredicateError("this function takes one literal")
    return literals[0]


def _literal(value: Any, glue_type: str) -> Literal:
    """A Jackson-rendered Java literal as the literal Glue's grammar would have read."""
    if isinstance(value, bool):
        return Literal("true" if value else "false", True)
    if isinstance(value, int):
        return Literal(str(value), kind_of(glue_type) == STRING)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise _Unsupported()
        return Literal(repr(value), kind_of(glue_type) == STRING)
    if isinstance(value, str):
        return Literal(value, True)
    if isinstance(value, list) and 3 <= len(value) <= 7 and all(isinstance(v, int) and not isinstance(v, bool)
                                                              for v in value):
        return Literal(_java_time(value), True)
    raise _Unsupported()


def _java_time(parts: list[int]) -> str:
    """``[y, m, d]`` (LocalDate) or ``[y, m, d, h, mi(, s(, ns))]`` (LocalDateTime) as ISO text."""
    date = f"{parts[0]:04d}-{parts[1]:02d}-{parts[2]:02d}"
    if len(parts) == 3:
        return date
    if len(parts) == 4:
        raise _Unsupported()
    hour, minute = parts[3], parts[4]
    second = parts[5] if len(parts) > 5 else 0
    nanos = parts[6] if len(parts) > 6 else 0
    text = f"{date} {hour:02d}:{minute:02d}:{second:02d}"
    return text + (f".{nanos:09d}" if nanos else "")
