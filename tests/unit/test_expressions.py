"""Unit tests for the partition predicate language (pure: no server, no DynamoDB)."""

from __future__ import annotations

import bisect
import datetime as dt
import random
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any, Optional

import pytest

from chalicelib.domain.expressions import (MAX_RANGES, TRUE, And, Between, Compare, Endpoint, In,
                                           IsNull, KeyRange, Like, Literal, Not, Or,
                                           bind, conjuncts, evaluate, matcher, parse_expression,
                                           parse_partition_predicate, parse_value, plan_ranges)
from chalicelib.domain.expressions import evaluation
from chalicelib.domain.keycodec import Timestamp, encode_key, merge_bounds, range_bounds
from chalicelib.errors import InvalidInputException

SEED = 1234

KEYS = [("country", "string"), ("category", "varchar(20)"), ("year", "int"), ("month", "tinyint"),
        ("creationDate", "date"), ("price", "decimal(10,2)"), ("ratio", "double"),
        ("ts", "timestamp"), ("flag", "boolean"), ("tags", "array<string>")]
ROW = ["US", "Shoes", "2019", "2", "2020-08-20", "0.30", "0.5", "2021-01-05 10:00:00.5", "true", "[a]"]


def lit(text: str, quoted: bool = False) -> Literal:
    return Literal(text, quoted)


def matches(expression: str, values: list[Optional[str]] = ROW, keys: list[tuple[str, str]] = KEYS) -> bool:
    return evaluate(bind(parse_expression(expression), keys), values)


def error_of(call: Any, *args: Any) -> str:
    with pytest.raises(InvalidInputException) as caught:
        call(*args)
    return caught.value.message


# ======================================================================================= grammar
@pytest.mark.parametrize("text, ast", [
    ("a = 1", Compare("a", "=", lit("1"))),
    ("a <> 'x'", Compare("a", "<>", lit("x", True))),
    ("a != 'x'", Compare("a", "<>", lit("x", True))),
    ("a<2", Compare("a", "<", lit("2"))),
    ("a >= -2.50", Compare("a", ">=", lit("-2.50"))),
    ("a <= +.5", Compare("a", "<=", lit("+.5"))),
    ("a > \"q\"", Compare("a", ">", lit("q", True))),
    ("2018 < year", Compare("year", ">", lit("2018"))),
    ("'x' = a", Compare("a", "=", lit("x", True))),
    ("a = 'it''s'", Compare("a", "=", lit("it's", True))),
    ('a = "say ""hi"""', Compare("a", "=", lit('say "hi"', True))),
    ("a = ''", Compare("a", "=", lit("", True))),
    ("a = 'a\\b'", Compare("a", "=", lit("a\\b", True))),
    ("a = TRUE", Compare("a", "=", lit("true"))),
    ("`my col` = 1", Compare("my col", "=", lit("1"))),
    ("`a``b` = 1", Compare("a`b", "=", lit("1"))),
    ("`and` = 1", Compare("and", "=", lit("1"))),
    ("a BETWEEN 1 AND '5'", Between("a", lit("1"), lit("5", True))),
    ("a not between 1 and 5", Between("a", lit("1"), lit("5"), True)),
    ("a IN (1, 'x', 2.5)", In("a", (lit("1"), lit("x", True), lit("2.5")))),
    ("a NOT IN ('x')", In("a", (lit("x", True),), True)),
    ("a LIKE 'x%_'", Like("a", "x%_")),
    ("a NOT LIKE \"x\"", Like("a", "x", True)),
    ("a IS NULL", IsNull("a")),
    ("a is not null", IsNull("a", True)),
    ("NOT a = 1", Not(Compare("a", "=", lit("1")))),
    ("not not a = 1", Not(Not(Compare("a", "=", lit("1"))))),
    ("((a = 1))", Compare("a", "=", lit("1"))),
    ("in_stock = 1 AND notes = 2 AND island = 3 AND orbit = 4",
     And((Compare("in_stock", "=", lit("1")), Compare("notes", "=", lit("2")),
          Compare("island", "=", lit("3")), Compare("orbit", "=", lit("4"))))),
    ("a = 1\n AND\tb = 2", And((Compare("a", "=", lit("1")), Compare("b", "=", lit("2"))))),
])
def test_parse(text: str, ast: Any) -> None:
    assert parse_expression(text) == ast


def test_keywords_are_case_insensitive() -> None:
    assert parse_expression("a bEtWeEn 1 AnD 2 oR b NoT iN (1) aNd c iS nOt NuLl") == \
        parse_expression("a BETWEEN 1 AND 2 OR b NOT IN (1) AND c IS NOT NULL")


def test_precedence_not_and_or() -> None:
    a, b, c = (Compare(x, "=", lit("1")) for x in "abc")
    assert parse_expression("a = 1 OR b = 1 AND c = 1") == Or((a, And((b, c))))
    assert parse_expression("a = 1 AND b = 1 OR c = 1") == Or((And((a, b)), c))
    assert parse_expression("NOT a = 1 AND b = 1") == And((Not(a), b))
    assert parse_expression("NOT (a = 1 AND b = 1)") == Not(And((a, b)))
    assert parse_expression("(a = 1 OR b = 1) AND c = 1") == And((Or((a, b)), c))
    assert parse_expression("a = 1 AND (b = 1 AND c = 1)") == And((a, b, c))  # flattened
    assert parse_expression("a BETWEEN 1 AND 2 AND b = 1") == And((Between("a", lit("1"), lit("2")), b))


@pytest.mark.parametrize("text", [None, "", "   ", "\n\t "])
def test_empty_expression_matches_everything(text: Optional[str]) -> None:
    assert parse_expression(text) is TRUE
    assert evaluate(bind(parse_expression(text), KEYS), []) is True
    assert conjuncts(TRUE) == ()


def test_parsed_expressions_are_cached() -> None:
    assert parse_expression("year = 2018 AND month = 1") is parse_expression("year = 2018 AND month = 1")


def test_length_limit() -> None:
    padding = " " * (2048 - len("a = 1"))
    assert parse_expression("a = 1" + padding) == Compare("a", "=", lit("1"))
    assert "2,048" in error_of(parse_expression, "a = 1 " + padding) or \
        "2048" in error_of(parse_expression, "a = 1 " + padding)


@pytest.mark.parametrize("text, ast", [
    ("(year) = 2020", Compare("year", "=", lit("2020"))),
    ("year = (2020)", Compare("year", "=", lit("2020"))),
    ("((year)) = 2020", Compare("year", "=", lit("2020"))),
    ("( ( year ) ) = ( ( 2020 ) )", Compare("year", "=", lit("2020"))),
    ("(year = 2020)", Compare("year", "=", lit("2020"))),
    ("((year) = (2020))", Compare("year", "=", lit("2020"))),
    ("(2020) < (year)", Compare("year", ">", lit("2020"))),
    ("year IN ((2020), 2021)", In("year", (lit("2020"), lit("2021")))),
    ("(year) NOT IN (((2020)))", In("year", (lit("2020"),), True)),
    ("(year) BETWEEN (1) AND ((2))", Between("year", lit("1"), lit("2"))),
    ("(a) LIKE ('x%')", Like("a", "x%")),
    ("(a) IS NOT NULL", IsNull("a", True)),
    ("(`a b`) = ('x')", Compare("a b", "=", lit("x", True))),
    ("NOT (year) = 1 AND (m) = 2", And((Not(Compare("year", "=", lit("1"))), Compare("m", "=", lit("2"))))),
    ("year = 3e14", Compare("year", "=", lit("3e14"))),
    ("year = 1E+3", Compare("year", "=", lit("1E+3"))),
    ("year = -2.5e-3", Compare("year", "=", lit("-2.5e-3"))),
    ("year IN (.5E1, 5e0)", In("year", (lit(".5E1"), lit("5e0")))),
])
def test_parenthesised_operands_and_exponent_literals(text: str, ast: Any) -> None:
    assert parse_expression(text) == ast


@pytest.mark.parametrize("text, fragments", [
    ("(year = 2020", ["character 13", "Expected ')'"]),
    ("year = (2020", ["character 13", "Expected ')'"]),
    ("((year) = 1", ["Expected ')'"]),
    ("year = ((1)", ["Expected ')'"]),
    ("(year) = ", ["Expected literal"]),
    ("year IN ((1, 2))", ["Expected ')'"]),
    ("(a = 1) = 1", ["near '= 1'"]),
    ("(year)) = 1", ["Syntax error"]),
    ("year = 1e", ["near '1e'", "Expected literal"]),
    ("year = 1e3x", ["Expected literal"]),
    ("year = (US)", ["Unquoted value US"]),
])
def test_parenthesised_operand_errors(text: str, fragments: list[str]) -> None:
    message = error_of(parse_expression, text)
    for fragment in fragments:
        assert fragment in message, message


def _parse_steps(monkeypatch: pytest.MonkeyPatch, text: str) -> int:
    """How many pyparsing element matches parsing ``text`` takes (work counted, not timed)."""
    from pyparsing import ParserElement
    calls = [0]
    original = ParserElement._parse

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(ParserElement, "_parse", counting)
        parse_expression(text)
    return calls[0]


def test_parenthesised_operands_parse_in_linear_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Was quadratic in the depth with a recursive rule: doubling the depth must about double the
    # work, not quadruple it.
    # (Depths stay low: the counting wrapper adds a stack frame per match, and the parser turns
    # a too-deep stack into "nested too deeply".)
    shallow = _parse_steps(monkeypatch, "(" * 10 + "year = 1" + ")" * 10)
    deep = _parse_steps(monkeypatch, "(" * 20 + "year = 2" + ")" * 20)
    assert deep < 3 * shallow, (shallow, deep)
    shallow = _parse_steps(monkeypatch, " AND ".join("(" * 5 + f"(k{i}) = ((1))" + ")" * 5 for i in range(20)))
    deep = _parse_steps(monkeypatch, " AND ".join("(" * 10 + f"(k{i}) = ((2))" + ")" * 10 for i in range(20)))
    assert deep < 3 * shallow, (shallow, deep)


@pytest.mark.parametrize("text, fragments", [
    ("a = ", ["character 5", "at the end", "Expected literal"]),
    ("a = 1 AND", ["character 10", "Expected condition"]),
    ("a = 1 OR (b = 2", ["Expected ')'"]),
    ("a = 1)", ["character 6", "near ')'"]),
    ("a == 1", ["character 4", "Expected literal"]),
    ("a IN ()", ["character 7", "Expected literal"]),
    ("a LIKE 5", ["Expected quoted pattern"]),
    ("a IS 5", ["Expected NULL"]),
    ("a NOT = 1", ["Expected BETWEEN, IN or LIKE"]),
    ("a", ["Expected operator"]),
    ("a = 1 b = 2", ["character 7", "near 'b = 2'"]),
    ("and = 1", ["character 1", "Expected condition"]),
    ("a = 'unterminated", ["character 5"]),
    ("a = 1.2.3", ["character 5"]),
    ("dt = 2021-01-01", ["2021-01-01", "character 6", "quote", "'2021-01-01'"]),
    ("year = 2020 - 1", ["Syntax error"]),
    ("year = 2020-1", ["arithmetic"]),
    ("a = NULL", ["IS NULL", "character 5"]),
    ("a = b", ["Unquoted value b", "quote string literals", "two columns"]),
    ("a = US", ["'US'"]),
    ("'x' = 'y'", ["Expected column name"]),
])
def test_syntax_errors_name_the_problem(text: str, fragments: list[str]) -> None:
    message = error_of(parse_expression, text)
    for fragment in fragments:
        assert fragment in message, message


def test_deep_nesting_is_an_input_error_not_a_crash() -> None:
    assert parse_expression("(" * 20 + "a = 1" + ")" * 20) == Compare("a", "=", lit("1"))
    assert "nested too deeply" in error_of(parse_expression, "(" * 900 + "a = 1" + ")" * 900)
    assert "nested too deeply" in error_of(parse_expression, "NOT " * 500 + "a = 1")


def test_grammar_is_not_built_at_import() -> None:
    code = "import sys, chalicelib.domain.expressions; print('pyparsing' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "False"


# ======================================================================================= binding
def test_unknown_column_names_it_and_lists_the_keys() -> None:
    message = error_of(lambda: bind(parse_expression("color = 'red'"), KEYS))
    assert "'color'" in message and "country, category, year" in message
    assert "not partitioned" in error_of(lambda: bind(parse_expression("a = 1"), []))


def test_columns_match_case_insensitively() -> None:
    bound = bind(parse_expression("COUNTRY = 'US' AND creationdate = '2020-08-20'"), KEYS)
    assert [item.column.name for item in conjuncts(bound)] == ["country", "creationDate"]
    assert evaluate(bound, ROW)


@pytest.mark.parametrize("expression, fragments", [
    ("year = 'abc'", ["'abc'", "character 8", "int", "'year'"]),
    ("year = 1.5", ["1.5", "int", "expected an integer"]),
    ("year = 2.5e-3", ["2.5e-3", "expected an integer"]),
    ("year = '1e3'", ["'1e3'", "expected an integer"]),  # quoted: converted from text, digits only
    ("year = 3e14", ["out of range for int"]),
    ("year = 1e999999999", ["out of range for int"]),
    ("year = 1e-999999999", ["expected an integer"]),
    ("price = 1e9999999999", ["expected a decimal number"]),  # beyond Decimal's exponents: no 500
    ("price = '1e-9999999999'", ["expected a decimal number"]),
    ("ratio = 1e400", ["out of range for double"]),
    ("creationDate = 3e14", ["yyyy-MM-dd"]),
    ("year = 2147483648", ["out of range for int"]),
    ("month = 128", ["out of range for tinyint"]),
    ("year IN (1, 'x')", ["'x'"]),
    ("year BETWEEN 1 AND 'z'", ["'z'"]),
    ("creationDate = '2021-13-01'", ["yyyy-MM-dd", "creationDate"]),
    ("creationDate = '20210101'", ["yyyy-MM-dd"]),
    ("creationDate = 20210101", ["yyyy-MM-dd"]),
    ("price = 'cheap'", ["decimal(10,2)"]),
    ("ratio = 'NaN'", ["double"]),
    ("ts = '2021-01-01'", ["HH:mm:ss"]),
    ("ts = '2021-01-01 10:00:00.1234567890'", ["HH:mm:ss"]),
    ("flag = 'yes'", ["true or false"]),
])
def test_literals_must_fit_the_key_type(expression: str, fragments: list[str]) -> None:
    message = error_of(lambda: bind(parse_expression(expression), KEYS))
    for fragment in fragments:
        assert fragment in message, message


def test_bound_literals_are_typed() -> None:
    bound = bind(parse_expression(
        "year = '2018' AND price = 1.50 AND creationDate = '2023-9-01' AND ratio = 1 AND flag = TRUE "
        "AND ts = '2021-01-01T10:00:00+01:00' AND country = 5 AND tags = 'x'"), KEYS)
    assert [c.literal for c in conjuncts(bound)] == [
        2018, Decimal("1.50"), dt.date(2023, 9, 1), 1.0, True,
        Timestamp.from_parts(dt.datetime(2021, 1, 1, 9, 0, 0)), "5", "x"]


@pytest.mark.parametrize("expression, key, value", [
    ("year = 1E+3", "int", 1000),
    ("year = 2020.0", "int", 2020),
    ("year = 3e14", "bigint", 300_000_000_000_000),
    ("year = -2E2", "smallint", -200),
    ("year = 0e99", "int", 0),
    ("year = 1e999999999", "decimal", Decimal("1e999999999")),
    ("year = 3e14", "decimal(20,2)", Decimal("3e14")),
    ("year = -2.5e-3", "decimal", Decimal("-0.0025")),
    ("year = '1E+3'", "decimal", Decimal(1000)),
    ("year = 1E+3", "double", 1000.0),
    ("year = '-2.5e-3'", "float", -0.0025),
    ("year = 1E+3", "string", "1E+3"),  # a number on a string key compares as written
    ("year = 05", "string", "05"),
    ("year = +5", "string", "5"),  # JSQLParser drops a leading '+' from the number's text
    ("year = -5", "string", "-5"),
    ("year = '+5'", "string", "+5"),
])
def test_exponent_and_decimal_literals_bind_by_value(expression: str, key: str, value: Any) -> None:
    (bound,) = conjuncts(bind(parse_expression(expression), [("year", key)]))
    assert bound.literal == value and type(bound.literal) is type(value)


@pytest.mark.parametrize("stored, glue_type, expression, expected", [
    ("3e14", "decimal", "year = 300000000000000", True),
    ("3E+14", "decimal", "year BETWEEN 2.9e14 AND 3.1E14", True),
    ("3e14", "decimal", "year > 3e14", False),
    ("-2.5e-3", "decimal", "year = -0.0025", True),
    ("1.5E2", "decimal(5,1)", "year IN (150, 151)", True),
    ("1E+3", "double", "year = 1000", True),
    ("2.5e-3", "float", "year < 0.003 AND year > 0.002", True),
    ("1e3", "bigint", "year = 1000", False),  # not an integer as stored text (Long.parseLong)
    ("1e3", "bigint", "NOT year = 1000", False),
])
def test_stored_exponent_values_compare_by_value(stored: str, glue_type: str, expression: str,
                                                 expected: bool) -> None:
    assert matches(expression, [stored], [("year", glue_type)]) is expected


def test_parse_value() -> None:
    assert parse_value("0042", "bigint") == 42
    assert parse_value("-0.0", "double") == 0.0
    assert parse_value("2021-01-05 10:00:00.000000001", "timestamp").epoch_nanos % 10 == 1
    assert "not a valid int" in error_of(parse_value, "foo", "int")


# ==================================================================================== evaluation
@pytest.mark.parametrize("expression, expected", [
    ("country = 'US'", True),
    ("country = 'us'", False),
    ("country <> 'US'", False),
    ("year > '2018'", True),  # numbers, not strings
    ("year > 2018 AND year < 2020", True),
    ("year >= 2019 AND year <= 2019", True),
    ("year BETWEEN 2020 AND 2018", False),
    ("year NOT BETWEEN 2020 AND 2030", True),
    ("year IN (2017, '2019')", True),
    ("year NOT IN (2017, 2019)", False),
    ("month = 2", True),
    ("creationDate > '2020-08-15'", True),
    ("creationDate BETWEEN '2020-8-20' AND '2020-08-20'", True),
    ("price = 0.3", True),
    ("price = '0.300000'", True),
    ("price < 0.30000000000000000000000000001", True),
    ("price > 0.29999999999999999999999999999", True),
    ("ratio = 0.5 AND ratio > 0.49", True),
    ("ts > '2021-01-05 10:00:00.499999999'", True),
    ("ts < '2021-01-05 10:00:00.500000001'", True),
    ("ts = '2021-01-05 11:00:00.5+01:00'", True),
    ("flag = true AND flag <> FALSE", True),
    ("tags = '[a]'", True),
    ("country = 'US' AND category = 'Shoes' AND (year = 2017 OR year = '2018')", False),
    ("country = 'US' AND category = 'Shoes' OR year > '2020'", True),
    ("NOT (country = 'US' AND year = 2019)", False),
    ("NOT country = 'CA' AND NOT year = 2018", True),
    ("country IS NULL OR year IS NOT NULL", True),
])
def test_typed_evaluation(expression: str, expected: bool) -> None:
    assert matches(expression) is expected


def test_every_node_kind_evaluates_nested() -> None:
    # evaluate dispatches on each node's class at every level: one tree with every kind.
    assert evaluate(TRUE, ROW) is True and matches("") is True
    assert matches("(country LIKE 'U%' AND year IN (2018, 2019)) AND NOT (ts IS NULL "
                   "OR month BETWEEN 3 AND 12 OR flag <> true)")
    assert not matches("(country LIKE 'U%' AND year IN (2018, 2019)) AND NOT (ts IS NULL "
                       "OR month BETWEEN 2 AND 12 OR flag <> true)")
    assert not evaluate(bind(Or(()), KEYS), ROW)  # an empty OR matches nothing


def test_strings_compare_lexically_and_ints_numerically() -> None:
    keys = [("s", "string"), ("i", "int")]
    assert matches("s > '10'", ["9", "9"], keys) is True
    assert matches("i > '10'", ["9", "9"], keys) is False
    assert matches("s > 10", ["9", "9"], keys) is True  # an unquoted number on a string key


def test_string_order_is_code_point_order() -> None:
    keys = [("s", "string")]
    assert matches("s > '\uffff'", ["\U0001F600"], keys)  # UTF-16 order would say the opposite


def test_missing_values_are_null() -> None:
    assert matches("ts IS NULL", ROW[:3]) and matches("ts IS NOT NULL", ROW)
    assert not matches("ts IS NULL", ROW) and not matches("ts IS NOT NULL", ROW[:3])
    assert not matches("year = 2019", ROW[:2]) and not matches("NOT year = 2019", ROW[:2])
    assert not matches("country LIKE '%'", []) and matches("country = ''", [""] + ROW[1:])


def test_unconvertible_stored_values_match_no_comparison() -> None:
    bad = ["US", "Shoes", "abc"] + ROW[3:]
    for expression in ("year = 1", "NOT year = 1", "year <> 1", "year BETWEEN 1 AND 9999",
                       "year NOT BETWEEN 1 AND 2", "year IN (1)", "year NOT IN (1)"):
        assert not matches(expression, bad), expression
    assert matches("year IS NOT NULL", bad)  # present, though it does not convert
    assert matches("year = 1 OR country = 'US'", bad)  # unknown OR true is true
    assert not matches("NOT (year = 1 AND country = 'US')", bad)  # NOT unknown is unknown


@pytest.mark.parametrize("pattern, value, expected", [
    ("U%", "US", True), ("U%", "U", True), ("%S", "US", True), ("U_", "US", True),
    ("U_", "USA", False), ("_", "", False), ("%", "", True), ("%%", "x", True),
    ("a.c", "abc", False), ("a.c", "a.c", True), ("a*", "aaa", False), ("a*", "a*", True),
    ("(x)", "(x)", True), ("[ab]", "a", False), ("[ab]", "[ab]", True), ("a\\d", "a\\d", True),
    ("a\\d", "a1", False), ("^a$", "^a$", True), ("a+?{2}|b", "a+?{2}|b", True),
    ("x%y%z", "x-y-z", True), ("x%y%z", "xzy", False), ("%ab%ab%", "abab", True),
    ("%ab%ab%", "aba", False), ("a%", "a\nb", True), ("_", "\n", True), ("_", "\U0001F600", True),
    ("us", "US", False), ("%_%", "", False), ("a_%_", "ab", False), ("a_%_", "abc", True),
])
def test_like(pattern: str, value: str, expected: bool) -> None:
    quoted = pattern.replace("'", "''")
    assert matches(f"country LIKE '{quoted}'", [value], [("country", "string")]) is expected
    assert matches(f"country NOT LIKE '{quoted}'", [value], [("country", "string")]) is (not expected)


def test_like_does_not_backtrack(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each piece between two % is searched for once, at its leftmost place: no backtracking
    # (work counted, not timed).
    from chalicelib.domain.expressions import evaluation
    searches = [0]
    compile_ = evaluation.re.compile

    class Counting:
        def __init__(self, pattern: Any) -> None:
            self.pattern = pattern

        def search(self, *args: Any) -> Any:
            searches[0] += 1
            return self.pattern.search(*args)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.pattern, name)

    monkeypatch.setattr(evaluation.re, "compile", lambda *args: Counting(compile_(*args)))
    # Ends right, so every middle piece is looked for: 40 'a's, then 'c', which is not there.
    assert not matches("country LIKE '" + "%a" * 40 + "%c%b'", ["a" * 5000 + "b"], [("country", "string")])
    assert 0 < searches[0] <= 41, searches[0]


@pytest.mark.parametrize("key, message", [
    ("year", "Integral data type doesn't support operation 'LIKE'"),
    ("month", "Integral data type doesn't support operation 'LIKE'"),
    ("price", "Decimal data type doesn't support operation 'LIKE'"),
    ("ratio", "Double data type doesn't support operation 'LIKE'"),
    ("creationDate", "Date data type doesn't support operation 'LIKE'"),
    ("ts", "Timestamp data type doesn't support operation 'LIKE'"),
])
def test_like_on_a_numeric_or_time_key_is_refused_as_glue_does(key: str, message: str) -> None:
    for expression in (f"{key} LIKE '2%'", f"{key} NOT LIKE '2%'", f"country = 'US' OR ({key}) LIKE '%'"):
        assert error_of(lambda: bind(parse_expression(expression), KEYS)) == message
    assert error_of(lambda: bind(parse_expression("r LIKE '1'"), [("r", "float")])) == \
        "Float data type doesn't support operation 'LIKE'"
    for glue_type in ("bigint", "smallint", "tinyint", "integer"):
        assert error_of(lambda: bind(parse_expression("k LIKE '1'"), [("k", glue_type)])).startswith("Integral")


def test_like_on_string_like_keys_still_matches_the_text() -> None:
    assert matches("category LIKE 'Sh%' AND tags LIKE '[%]' AND flag LIKE 't%'")


# ========================================================================= PartitionPredicate
@pytest.mark.parametrize("text", [
    "", "year = 2019", "year > 2018 AND month <= 2", "(country = 'US') AND (year >= '2019')",
    "2018 < year AND creationDate < '2021-01-01' AND price >= 0.1",
])
def test_partition_predicate_accepts_its_subset(text: str) -> None:
    assert evaluate(bind(parse_partition_predicate(text), KEYS), ROW)


@pytest.mark.parametrize("text, construct", [
    ("year = 2019 OR month = 2", "OR"),
    ("NOT year = 2019", "NOT"),
    ("year <> 2018", "<>"),
    ("year != 2018", "<>"),
    ("year BETWEEN 1 AND 3000", "BETWEEN"),
    ("year NOT BETWEEN 1 AND 3", "NOT BETWEEN"),
    ("year IN (2019)", "IN"),
    ("country LIKE 'U%'", "LIKE"),
    ("country IS NULL", "IS NULL"),
    ("year = 1 AND (country IS NOT NULL)", "IS NOT NULL"),
])
def test_partition_predicate_rejects_the_rest(text: str, construct: str) -> None:
    message = error_of(parse_partition_predicate, text)
    named, _, rest = message.partition(" is not allowed in PartitionPredicate")
    assert construct in named and rest, message
    parse_expression(text)  # fine as a GetPartitions Expression


def test_partition_predicate_limit_is_in_bytes() -> None:
    text = "country = '" + "é" * 1020 + "'"
    parse_expression(text)
    assert "bytes" in error_of(parse_partition_predicate, text)


# ===================================================================================== planning
SALES = [("country", "string"), ("category", "string"), ("year", "int"), ("month", "int"),
         ("creationDate", "date")]
INDEX = ["country", "category", "year"]


def plan(expression: str, index: list[str] = INDEX) -> Optional[list[KeyRange]]:
    return plan_ranges(bind(parse_expression(expression), SALES), index)


def incl(value: Any) -> Endpoint:
    return Endpoint(value, True)


def excl(value: Any) -> Endpoint:
    return Endpoint(value, False)


@pytest.mark.parametrize("expression, ranges", [
    # The examples of the Glue partition-index guide.
    ("country = 'US'", [KeyRange(("US",))]),
    ("Country = 'US' and Category = 'Shoes'", [KeyRange(("US", "Shoes"))]),
    ("Category = 'Shoes'", None),
    ("Country = 'US' and Category = 'Shoes' and Year > '2018'",
     [KeyRange(("US", "Shoes"), excl(2018))]),
    ("Country = 'US' and Category = 'Shoes' and Year > '2018' and month = 2",
     [KeyRange(("US", "Shoes"), excl(2018))]),
    ("Country = 'US' AND Category = 'Shoes' OR Year > '2018'", None),
    ("Country = 'US' AND Category = 'Shoes' AND (Year = 2017 OR Year = '2018')",
     [KeyRange(("US", "Shoes", 2017)), KeyRange(("US", "Shoes", 2018))]),
    ("Country in ('US', 'UK') AND Category = 'Shoes'",
     [KeyRange(("US", "Shoes")), KeyRange(("UK", "Shoes"))]),
    ("Country = 'US' AND Category in ('Shoes', 'Books')",
     [KeyRange(("US", "Shoes")), KeyRange(("US", "Books"))]),
    # More.
    ("", None),
    ("year = 2019", None),
    ("country <> 'US'", None),
    ("country > 'M' AND country <= 'T'", [KeyRange((), excl("M"), incl("T"))]),
    ("'M' < country", [KeyRange((), excl("M"))]),
    ("country BETWEEN 'A' AND 'C' AND year = 1", [KeyRange((), incl("A"), incl("C"))]),
    ("country = 'US' AND year = 2019", [KeyRange(("US",))]),  # category unconstrained
    ("country = 'US' AND country = 'UK'", []),
    ("country = 'US' AND year > 5 AND year < 3", []),
    ("country BETWEEN 'B' AND 'A'", []),
    ("country < ''", []),
    ("country = 'US' AND country >= 'UK'", [KeyRange(("US",))]),
    ("country >= 'US' AND country <= 'US'", [KeyRange(("US",))]),
    ("country > 'US' AND country <= 'US'", []),
    ("country LIKE 'U%' AND category = 'x'", [KeyRange((), incl("U"), excl("V"))]),
    ("country LIKE 'US'", [KeyRange(("US",))]),
    ("country LIKE '%S'", None),
    ("country NOT LIKE 'U%'", None),
    ("NOT country <> 'US'", [KeyRange(("US",))]),
    ("NOT (country < 'M' OR country > 'T')", [KeyRange((), incl("M"), incl("T"))]),
    ("NOT country IN ('US')", None),
    ("country IS NOT NULL", None),
    ("country = 'US' OR country = 'US'", [KeyRange(("US",))]),
    ("country IN ('US', 'UK') OR year = 1", None),
    ("(country = 'US' AND category = 'a') OR (country = 'UK' AND year = 1)",
     [KeyRange(("US", "a")), KeyRange(("UK",))]),
    ("country = 'US' AND category = 'a' AND year BETWEEN 2000 AND 2010 AND year <> 2005",
     [KeyRange(("US", "a"), incl(2000), incl(2010))]),
])
def test_plan_ranges(expression: str, ranges: Optional[list[KeyRange]]) -> None:
    assert plan(expression) == ranges


def test_plan_ranges_on_other_index_orders() -> None:
    assert plan("year = 2019 AND country = 'US'", ["year", "country"]) == [KeyRange((2019, "US"))]
    assert plan("creationDate > '2023-9-01' AND country = 'US'", ["country", "creationDate"]) == \
        [KeyRange(("US",), excl(dt.date(2023, 9, 1)))]
    assert plan("CATEGORY = 'a'", ["Category"]) == [KeyRange(("a",))]


def test_plan_ranges_is_bounded() -> None:
    values = [f"'{i}'" for i in range(MAX_RANGES + 1)]
    assert plan(f"country IN ({', '.join(values)})") is None
    assert len(plan(f"country IN ({', '.join(values[:-1])})")) == MAX_RANGES
    # 10 x 20 combinations: the second IN is left to the residual filter.
    tens = ", ".join(f"'{i}'" for i in range(10))
    twenties = ", ".join(f"'{i}'" for i in range(20))
    ranges = plan(f"country IN ({tens}) AND category IN ({twenties})")
    assert ranges is not None and len(ranges) == 10 and all(len(r.equals) == 1 for r in ranges)


# ------------------------------------------------------------------- randomized differential test
R_KEYS = [("region", "string"), ("year", "int"), ("dt", "date"), ("price", "decimal(6,2)")]
R_DOMAINS: dict[str, list[Any]] = {
    "region": ["", "U", "US", "USA", "UK", "ca", "é", "\U0001F600", "it's"],
    "year": [-5, 0, 2015, 2016, 2017, 2018, 2019, 2020],
    "dt": [dt.date(2021, 1, d) for d in (1, 2, 3, 5, 8, 13)],
    "price": [Decimal(v) for v in ("-1.50", "-1", "0", "0.5", "1.25", "10", "100.01")],
}
R_EXTRA: dict[str, list[Any]] = {  # literals just outside or between stored values
    "region": ["A", "V", "zz", "US ", "u"],
    "year": [-6, 1, 2014, 2021, 3000],
    "dt": [dt.date(2020, 12, 31), dt.date(2021, 1, 4), dt.date(2022, 1, 1)],
    "price": [Decimal(v) for v in ("-2", "-1.49", "0.50", "1.2", "1000")],
}
R_INDEXES = [["region"], ["region", "year"], ["year", "region", "dt"], ["dt", "price"],
             ["price", "region", "year", "dt"]]


def _raw(name: str, value: Any) -> str:
    return value.isoformat() if isinstance(value, dt.date) else str(value)


def _literal_text(name: str, value: Any, rng: random.Random) -> str:
    if name == "region" or name == "dt" or rng.random() < 0.2:
        return "'" + _raw(name, value).replace("'", "''") + "'"
    return _raw(name, value)


def _random_atom(rng: random.Random) -> str:
    name = rng.choice(list(R_DOMAINS))
    pool = R_DOMAINS[name] + R_EXTRA[name]
    pick = lambda: _literal_text(name, rng.choice(pool), rng)  # noqa: E731
    column = name.upper() if rng.random() < 0.1 else name
    shape = rng.random()
    if shape < 0.45:
        return f"{column} {rng.choice(['=', '<>', '!=', '<', '<=', '>', '>=', '='])} {pick()}"
    if shape < 0.6:
        return f"{column} {rng.choice(['', 'NOT '])}BETWEEN {pick()} AND {pick()}"
    if shape < 0.8:
        values = ", ".join(pick() for _ in range(rng.randint(1, 4)))
        return f"{column} {rng.choice(['', '', 'NOT '])}IN ({values})"
    if shape < 0.93 and name == "region":
        stem = rng.choice(R_DOMAINS["region"])[: rng.randint(0, 2)].replace("'", "''")
        return f"region {rng.choice(['', 'NOT '])}LIKE '{stem}{rng.choice(['%', '_', '', '%S'])}'"
    if shape < 0.96:
        return f"{column} IS {rng.choice(['', 'NOT '])}NULL"
    return f"{pick()} {rng.choice(['<', '>=', '='])} {column}"


def _random_expression(rng: random.Random, depth: int = 0) -> str:
    if depth >= 3 or rng.random() < 0.35:
        return _random_atom(rng)
    if rng.random() < 0.1:
        return f"NOT ({_random_expression(rng, depth + 1)})"
    joiner = " AND " if rng.random() < 0.65 else " OR "
    items = [_random_expression(rng, depth + 1) for _ in range(rng.randint(2, 4))]
    return "(" + joiner.join(items) + ")"


def _random_partitions(rng: random.Random, count: int) -> list[list[str]]:
    rows = {tuple(_raw(name, rng.choice(domain)) for name, domain in R_DOMAINS.items())
            for _ in range(count)}
    return [list(row) for row in sorted(rows)]


def test_plan_ranges_differential() -> None:
    """Fetching through the plan's key ranges and re-filtering must give exactly what filtering
    every partition gives, never fetch a partition twice, and fetch every match."""
    rng = random.Random(SEED)
    partitions = _random_partitions(rng, 400)
    types = dict(R_KEYS)
    positions = {name: i for i, (name, _) in enumerate(R_KEYS)}
    planned = useful = total = 0
    for index in R_INDEXES:
        index_types = [types[k] for k in index]
        # Sort keys as the store would write them (encoded index values + a uniqueness suffix),
        # in DynamoDB's order (UTF-8 bytes); a range query is a bisection.
        keys = sorted((encode_key([parse_value(row[positions[k]], types[k]) for k in index],
                                  index_types) + f"#{i}").encode() + b"\xff" + str(i).encode()
                      for i, row in enumerate(partitions))
        for _ in range(200):
            text = _random_expression(rng)
            bound = bind(parse_expression(text), R_KEYS)
            expected = {i for i, row in enumerate(partitions) if evaluate(bound, row)}
            ranges = plan_ranges(bound, index)
            total += 1
            if ranges is None:
                continue
            planned += 1
            useful += bool(ranges)
            assert len(ranges) <= MAX_RANGES
            fetched = []
            for low, high in merge_bounds(range_bounds(r, index_types) for r in ranges):
                start = 0 if low is None else bisect.bisect_left(keys, low.encode())
                stop = len(keys) if high is None else bisect.bisect_right(keys, high.encode())
                fetched += [int(key.rsplit(b"\xff", 1)[1]) for key in keys[start:stop]]
            assert len(fetched) == len(set(fetched)), text
            assert expected <= set(fetched), (text, index, ranges)
            assert {i for i in fetched if evaluate(bound, partitions[i])} == expected
    assert useful > total * 0.1  # the test exercises real plans, not just fallbacks


def test_matcher_agrees_with_evaluate() -> None:
    """A listing's matcher remembers answers by the values of the keys an expression names: it
    must answer exactly as evaluate does, for every partition, short rows (NULLs) included, and
    after its memory of answers has been cleared."""
    rng = random.Random(SEED + 1)
    partitions = _random_partitions(rng, 300)
    partitions += [row[:cut] for row in partitions[:40] for cut in (0, 1, 3)]
    for _ in range(300):
        bound = bind(parse_expression(_random_expression(rng)), R_KEYS)
        matches_row = matcher(bound)
        for row in partitions + partitions[::-1]:  # the second pass answers from memory
            assert matches_row(row) is evaluate(bound, row), row
    assert matcher(TRUE)([]) is True


def test_matcher_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evaluation, "_MAX_REMEMBERED", 3)
    bound = bind(parse_expression("year > 2017"), R_KEYS)
    matches_row = matcher(bound)
    answers = [matches_row(["US", str(year)]) for year in range(2010, 2030)] * 2
    assert answers == [year > 2017 for year in range(2010, 2030)] * 2
