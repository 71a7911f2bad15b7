"""Differential test of GetPartitions: random expressions against a brute-force evaluator.

Two tables share the partition keys (country string, category string, year int, month int,
day date). ``indexed`` has partition indexes on (category, year) and (day, country), so the
planner may pick either of them or the partitions table's own key order; its indexed keys hold
valid values only (``'7'``, ``'007'`` and ``'+7'`` are all 7), its unindexed ``month`` also
``'abc'`` and the like. ``plain`` has no index and holds values that do not convert to their
key's type on every typed key (``year = 'abc'``, ``day = '2021-02-30'``), ones that convert
unusually (``'+5'``, ``'2021-1-5'``) and control characters in strings.

The reference evaluator below is written from the documented semantics only (it shares no
code with chalicelib): values compare as the key's type; a stored value that does not convert
matches no comparison, BETWEEN or IN, not even under NOT (SQL three-valued logic); LIKE (on
string keys only: Glue refuses it on others) matches the raw text with ``%`` and ``_``.
Expressions are generated as trees, rendered to text, and evaluated on the trees. Every result
is also compared with ``chalicelib.domain.expressions`` (parse + bind + evaluate), to tell an
evaluator bug from a planner or store bug.
"""

from __future__ import annotations

import datetime as dt
import functools
import random
import re
import uuid
from typing import Any, Optional

import pytest
from botocore.exceptions import ClientError

from chalicelib.domain import expressions as service_expressions
from chalicelib.errors import InvalidInputException
from tests.integration.partition_helpers import (all_partitions, create_partitions, items_read,
                                                 partitioned_table)

SEED = 20240611
KEYS = [("country", "string"), ("category", "string"), ("year", "int"), ("month", "int"), ("day", "date")]
TYPES = dict(KEYS)
POSITION = {name: i for i, (name, _) in enumerate(KEYS)}
EXPRESSIONS_PER_TABLE = 130  # through the API, per table (a full scan costs ~60 ms)
IN_PROCESS_EXPRESSIONS = 300  # evaluated in-process only, per table

COUNTRIES = ["US", "UK", "DE", "FR", "JP", "us", "U_S", "a%b", "o'x", "É", "日本", "US ", "x\x01y", "Z", "0"]
CATEGORIES = ["Books", "Shoes", "Toys", "Food", "Games", "B", "books", "Books2", "Bo", "Shoes "]
GOOD_YEARS = [str(y) for y in range(2015, 2025)] + ["7", "007", "+7", "0", "-3", "2147483647", "-2147483648"]
GOOD_MONTHS = [str(m) for m in range(1, 13)]
ODD_INTS = ["abc", "007", "+5", "99999999999", "1e3", " 5", "5 ", "0x1F", "-0", "٣"]
ODD_DAYS = ["2021-02-30", "someday", "2021-1-5", "20210105", "2021-01-05 ", "0000-01-01", "2020-2-29"]


# ------------------------------------------------------------------------- reference semantics
class BadLiteral(Exception):
    """A literal that does not convert to its key's type: the service must refuse the expression."""


def convert(text: str, kind: str) -> Any:
    """Raw text -> typed value, or None when it does not convert."""
    if kind == "string":
        return text
    if kind == "int":
        if not re.fullmatch(r"[+-]?[0-9]+", text):
            return None
        value = int(text)
        return value if -2**31 <= value < 2**31 else None
    if kind == "date":
        match = re.fullmatch(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})", text)
        if not match:
            return None
        try:
            return dt.date(*map(int, match.groups()))
        except ValueError:
            return None
    raise AssertionError(kind)


@functools.lru_cache(maxsize=None)
def literal(text: str, kind: str) -> Any:
    value = convert(text, kind)
    if value is None:
        raise BadLiteral(text)
    return value


@functools.lru_cache(maxsize=None)
def like_regex(pattern: str) -> re.Pattern:
    return re.compile("".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern), re.DOTALL)


def like(pattern: str, text: str) -> bool:
    return like_regex(pattern).fullmatch(text) is not None


def kleene_and(results):
    results = list(results)
    if False in results:
        return False
    return None if None in results else True


def kleene_or(results):
    results = list(results)
    if True in results:
        return True
    return None if None in results else False


COMPARE = {"=": lambda a, b: a == b, "<>": lambda a, b: a != b, "!=": lambda a, b: a != b,
           "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


class Row:
    """A partition's raw values and, per key, the typed value (None: does not convert)."""

    def __init__(self, values: list[str]) -> None:
        self.raw = tuple(values)
        self.typed = tuple(convert(v, kind) for v, (_, kind) in zip(values, KEYS))


def reference(node: tuple, row: Row) -> Optional[bool]:
    """Three-valued evaluation of a generated expression tree on one partition's values."""
    op = node[0]
    if op == "and":
        return kleene_and(reference(item, row) for item in node[1])
    if op == "or":
        return kleene_or(reference(item, row) for item in node[1])
    if op == "not":
        inner = reference(node[1], row)
        return None if inner is None else not inner
    key = node[1]
    kind = TYPES[key]
    if op == "isnull":
        return node[2]  # every partition has every value: IS NULL false, IS NOT NULL true
    if op == "like":
        return like(node[2], row.raw[POSITION[key]]) != node[3]
    value = row.typed[POSITION[key]]
    if op == "cmp":
        right = literal(node[3][0], kind)
        return None if value is None else COMPARE[node[2]](value, right)
    if op == "between":
        low, high = literal(node[2][0], kind), literal(node[3][0], kind)
        return None if value is None else (low <= value <= high) != node[4]
    if op == "in":
        options = [literal(text, kind) for text, _ in node[2]]
        return None if value is None else (value in options) != node[3]
    raise AssertionError(node)


# ------------------------------------------------------------------------------- generation
def quote(text: str, rng: random.Random) -> str:
    if rng.random() < 0.2 and '"' not in text:
        return '"' + text + '"'
    return "'" + text.replace("'", "''") + "'"


def render_literal(lit: tuple[str, bool], rng: random.Random) -> str:
    text, quoted = lit
    return quote(text, rng) if quoted else text


def render(node: tuple, rng: random.Random) -> str:
    op = node[0]
    if op in ("and", "or"):
        joiner = rng.choice([" AND ", " and ", " And "]) if op == "and" else rng.choice([" OR ", " or "])
        return joiner.join("(" + render(item, rng) + ")" if item[0] in ("and", "or") else render(item, rng)
                           for item in node[1])
    if op == "not":
        inner = render(node[1], rng)
        return ("NOT (" + inner + ")") if node[1][0] != "not" else "NOT " + inner
    key = node[1]
    column = key.upper() if rng.random() < 0.1 else key
    if op == "isnull":
        return f"{column} IS {'NOT ' if node[2] else ''}NULL"
    if op == "like":
        return f"{column} {'NOT ' if node[3] else ''}LIKE {quote(node[2], rng)}"
    if op == "cmp":
        if node[2] not in ("<>", "!=") and rng.random() < 0.1:  # literal first, operator turned around
            flipped = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}[node[2]]
            return f"{render_literal(node[3], rng)} {flipped} {column}"
        return f"{column} {node[2]} {render_literal(node[3], rng)}"
    if op == "between":
        return (f"{column} {'NOT ' if node[4] else ''}BETWEEN {render_literal(node[2], rng)} "
                f"AND {render_literal(node[3], rng)}")
    if op == "in":
        return f"{column} {'NOT ' if node[3] else ''}IN ({', '.join(render_literal(v, rng) for v in node[2])})"
    raise AssertionError(node)


class Generator:
    """Random expression trees over the stored values (plus some values nobody stored)."""

    def __init__(self, rng: random.Random, stored: list[list[str]], bad_literals: bool) -> None:
        self.rng = rng
        self.bad_literals = bad_literals
        self.pool = {name: sorted({row[POSITION[name]] for row in stored}) for name in TYPES}

    def literal(self, key: str) -> tuple[str, bool]:
        rng, kind = self.rng, TYPES[key]
        if self.bad_literals and rng.random() < 0.01:
            return (rng.choice(["abc", "2021-02-30", "1.5"]) if kind != "string" else "x", True)
        if kind == "string":
            text = rng.choice(self.pool[key]) if rng.random() < 0.8 else rng.choice(["A", "Bz", "", "V", "\u00ff"])
            text = text.replace("\x01", "_")  # control characters cannot travel in an expression
            if rng.random() < 0.1 and text.isdigit():
                return (text, False)
            return (text, True)
        if kind == "int":
            valid = [v for v in self.pool[key] if convert(v, "int") is not None]
            text = rng.choice(valid) if valid and rng.random() < 0.7 else str(rng.randint(-5, 2030))
            if rng.random() < 0.1:
                text = str(rng.choice([2014, 2025, 6, 13, -2147483648, 2147483647]))
            return (text, rng.random() < 0.3)
        valid = [v for v in self.pool[key] if convert(v, "date") is not None]
        if valid and rng.random() < 0.7:
            text = rng.choice(valid)
        else:
            day = dt.date(2019, 6, 1) + dt.timedelta(days=rng.randint(0, 2200))
            text = day.isoformat() if rng.random() < 0.8 else f"{day.year}-{day.month}-{day.day}"
        return (text, True)

    def pattern(self, key: str) -> str:
        rng = self.rng
        text = rng.choice(self.pool[key]).replace("\x01", "_")
        shape = rng.randrange(6)
        if shape == 0:
            return text[:rng.randint(0, len(text))] + "%"
        if shape == 1:
            return "%" + text[rng.randint(0, len(text)):]
        if shape == 2:
            return "".join("_" if rng.random() < 0.3 else c for c in text)
        if shape == 3:
            return "%" + text[1:-1] + "%" if len(text) > 2 else "%"
        if shape == 4:
            return text
        return rng.choice(["%", "_", "__", "%_%", "2%", "%1", "B%s", "%o%"])

    def predicate(self) -> tuple:
        rng = self.rng
        key = rng.choice(list(TYPES))
        roll = rng.random()
        if roll < 0.45:
            return ("cmp", key, rng.choice(list(COMPARE)), self.literal(key))
        if roll < 0.6:
            return ("between", key, self.literal(key), self.literal(key), rng.random() < 0.25)
        if roll < 0.78:
            return ("in", key, [self.literal(key) for _ in range(rng.randint(1, 4))], rng.random() < 0.25)
        if roll < 0.95:
            # LIKE on an int or date key is an InvalidInputException, as in Glue: string keys only
            key = rng.choice([name for name, kind in KEYS if kind == "string"])
            return ("like", key, self.pattern(key), rng.random() < 0.2)
        return ("isnull", key, rng.random() < 0.5)

    def index_shaped(self) -> tuple:
        """Equalities on a prefix of some key order the planner can use (an index's keys or
        the partition keys' own order), a range on the next key, and maybe more."""
        rng = self.rng
        order = rng.choice([[k for k, _ in KEYS], ["category", "year"], ["day", "country"]])
        fixed = rng.randint(0, len(order) - 1)
        items = [("cmp", key, "=", self.literal(key)) for key in order[:fixed]]
        key = order[fixed]
        roll = rng.random()
        if roll < 0.4:
            items.append(("cmp", key, rng.choice(["<", "<=", ">", ">="]), self.literal(key)))
        elif roll < 0.6:
            items.append(("between", key, self.literal(key), self.literal(key), False))
        elif roll < 0.75:
            items.append(("in", key, [self.literal(key) for _ in range(rng.randint(1, 3))], False))
        elif roll < 0.85 and TYPES[key] == "string":
            items.append(("like", key, self.pattern(key), False))
        else:
            items.append(("or", [("cmp", key, "=", self.literal(key)) for _ in range(rng.randint(2, 3))]))
        if rng.random() < 0.3:
            items.append(self.expression(2))
        return ("and", items) if len(items) > 1 else items[0]

    def expression(self, depth: int = 0) -> tuple:
        rng = self.rng
        if depth == 0 and rng.random() < 0.35:
            return self.index_shaped()
        roll = rng.random()
        if depth >= 3 or roll < 0.35:
            return self.predicate()
        if roll < 0.75:
            # AND-heavy: the shape indexes serve (equality prefix + range), with equalities likely
            items = [self.expression(depth + 1) for _ in range(rng.randint(2, 4))]
            if rng.random() < 0.5:
                key = rng.choice(["category", "country", "day", "year"])
                items.insert(0, ("cmp", key, "=", self.literal(key)))
            return ("and", items)
        if roll < 0.9:
            return ("or", [self.expression(depth + 1) for _ in range(rng.randint(2, 3))])
        return ("not", self.expression(depth + 1))


# ----------------------------------------------------------------------------------- data
def indexed_rows(rng: random.Random, count: int) -> list[list[str]]:
    """Valid values on the indexed keys (category, year, day, country); odd ones on month."""
    rows: dict[tuple, list[str]] = {}
    while len(rows) < count:
        day = dt.date(2020, 1, 1) + dt.timedelta(days=rng.randint(0, 60))
        day_text = day.isoformat() if rng.random() < 0.9 else f"{day.year}-{day.month}-{day.day}"
        row = [rng.choice([c for c in COUNTRIES if "\x01" not in c]), rng.choice(CATEGORIES),
               rng.choice(GOOD_YEARS), rng.choice(GOOD_MONTHS) if rng.random() < 0.9 else rng.choice(ODD_INTS),
               day_text]
        rows[tuple(row)] = row
    return list(rows.values())


def plain_rows(rng: random.Random, count: int) -> list[list[str]]:
    """Anything goes: values that do not convert on int and date keys, control characters."""
    rows: dict[tuple, list[str]] = {}
    while len(rows) < count:
        day = dt.date(2020, 1, 1) + dt.timedelta(days=rng.randint(0, 60))
        row = [rng.choice(COUNTRIES), rng.choice(CATEGORIES),
               rng.choice(GOOD_YEARS) if rng.random() < 0.8 else rng.choice(ODD_INTS),
               rng.choice(GOOD_MONTHS) if rng.random() < 0.8 else rng.choice(ODD_INTS),
               day.isoformat() if rng.random() < 0.85 else rng.choice(ODD_DAYS)]
        rows[tuple(row)] = row
    return list(rows.values())


@pytest.fixture(scope="module")
def tables(glue):
    """{"indexed": rows, "plain": rows} created in a database of the module's own."""
    rng = random.Random(SEED)
    db = f"db_{uuid.uuid4().hex[:12]}"
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("indexed", KEYS),
                      PartitionIndexes=[{"IndexName": "by_category", "Keys": ["category", "year"]},
                                        {"IndexName": "by_day", "Keys": ["day", "country"]}])
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("plain", KEYS))
    rows = {"indexed": indexed_rows(rng, 300), "plain": plain_rows(rng, 200)}
    for name, table_rows in rows.items():
        create_partitions(glue, db, name, table_rows)
    yield db, rows
    glue.delete_database(Name=db)


# ----------------------------------------------------------------------------------- tests
def expected_matches(tree: tuple, rows: list[Row]) -> set[tuple[str, ...]]:
    """The reference's answer (BadLiteral when a literal does not fit its key)."""
    return {row.raw for row in rows if reference(tree, row) is True}


def service_evaluation(text: str, rows: list[Row]) -> set[tuple[str, ...]]:
    """chalicelib's own parse + bind + evaluate, in-process (no planner, no store)."""
    node = service_expressions.bind(service_expressions.parse_expression(text), KEYS)
    return {row.raw for row in rows if service_expressions.evaluate(node, list(row.raw))}


def fetch(glue, db: str, table: str, text: str, page_size: Optional[int] = None,
          **kwargs: Any) -> tuple[list[tuple[str, ...]], int]:
    """The partitions GetPartitions returns (all pages) and the items the requests read."""
    config = {"PageSize": page_size} if page_size else {}
    pages = list(glue.get_paginator("get_partitions").paginate(
        DatabaseName=db, TableName=table, Expression=text, ExcludeColumnSchema=True,
        PaginationConfig=config, **kwargs))
    return ([tuple(p["Values"]) for page in pages for p in page["Partitions"]],
            sum(items_read(page) for page in pages))


@pytest.mark.parametrize("name", ["indexed", "plain"])
def test_get_partitions_matches_brute_force(glue, tables, name):
    db, all_rows = tables
    rows = [Row(r) for r in all_rows[name]]
    rng = random.Random(f"{SEED}-{name}")
    generator = Generator(rng, all_rows[name], bad_literals=True)
    failures, checked, refused, narrowed = [], 0, 0, 0
    for number in range(EXPRESSIONS_PER_TABLE):
        tree = generator.expression()
        text = render(tree, rng)
        try:
            expected = expected_matches(tree, rows)
        except BadLiteral:
            expected = None
        paging = {}
        if number % 8 == 0 and expected:
            paging = {"page_size": max(1, len(expected) // rng.choice([3, 5]))}  # several small pages
        try:
            got_list, read = fetch(glue, db, name, text, **paging)
        except ClientError as error:
            if expected is None and error.response["Error"]["Code"] == "InvalidInputException":
                refused += 1
                continue
            failures.append(f"#{number} {text!r}: service raised {error} (expected {expected and len(expected)})")
            continue
        if expected is None:
            failures.append(f"#{number} {text!r}: accepted a literal that does not fit its key")
            continue
        got = set(got_list)
        checked += 1
        narrowed += not paging and read < len(rows)  # served by key ranges, not a full scan
        problems = []
        if len(got) != len(got_list):
            problems.append(f"{len(got_list) - len(got)} duplicate(s) across pages {paging}")
        if got != expected:
            try:
                in_process = service_evaluation(text, rows)
                where = ("expressions.evaluate agrees with the reference: planner/store bug"
                         if in_process == expected else
                         "expressions.evaluate disagrees with the reference: evaluator bug")
            except InvalidInputException as error:
                where = f"expressions.bind refused it: {error}"
            problems.append(f"missing {sorted(expected - got)[:5]} extra {sorted(got - expected)[:5]} ({where})")
        if problems:
            failures.append(f"#{number} {text!r}: " + "; ".join(problems))
    assert not failures, f"{len(failures)} of {EXPRESSIONS_PER_TABLE} expressions wrong:\n" + "\n".join(failures[:15])
    assert checked >= EXPRESSIONS_PER_TABLE * 0.8
    assert refused >= 1  # some generated literals do not fit their key type
    assert narrowed >= EXPRESSIONS_PER_TABLE * 0.25, narrowed  # the planner's ranges were exercised


@pytest.mark.parametrize("name", ["indexed", "plain"])
def test_in_process_evaluator_matches_reference(tables, name):
    """More expressions, evaluated in-process only: cheap, and it pins evaluator bugs down."""
    _, all_rows = tables
    rows = [Row(r) for r in all_rows[name]]
    rng = random.Random(f"{SEED}-local-{name}")
    generator = Generator(rng, all_rows[name], bad_literals=False)
    failures = []
    for _ in range(IN_PROCESS_EXPRESSIONS):
        tree = generator.expression()
        text = render(tree, rng)
        expected = expected_matches(tree, rows)
        got = service_evaluation(text, rows)
        if got != expected:
            failures.append(f"{text!r}: missing {sorted(expected - got)[:3]} extra {sorted(got - expected)[:3]}")
    assert not failures, f"{len(failures)} wrong:\n" + "\n".join(failures[:15])


@pytest.mark.parametrize("name", ["indexed", "plain"])
def test_segments_with_random_expressions(glue, tables, name):
    db, all_rows = tables
    rows = [Row(r) for r in all_rows[name]]
    rng = random.Random(f"{SEED}-segments-{name}")
    generator = Generator(rng, all_rows[name], bad_literals=False)
    for _ in range(4):
        tree = generator.expression()
        text = render(tree, rng)
        expected = expected_matches(tree, rows)
        total = rng.randint(2, 5)
        union: list[tuple[str, ...]] = []
        for number in range(total):
            union += fetch(glue, db, name, text, page_size=rng.choice([5, 100]),
                           Segment={"SegmentNumber": number, "TotalSegments": total})[0]
        assert len(union) == len(set(union)), text
        assert set(union) == expected, text


def test_every_partition_is_returned_once_without_expression(glue, tables):
    db, all_rows = tables
    for name, rows in all_rows.items():
        got = [tuple(p["Values"]) for p in all_partitions(glue, db, name, page_size=64, ExcludeColumnSchema=True)]
        assert len(got) == len(rows)
        assert set(got) == {tuple(r) for r in rows}
