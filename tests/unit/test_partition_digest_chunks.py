"""The partition digest's chunk format and its column-wise evaluation, against the row-wise
evaluator on random partitions and expressions."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from chalicelib.domain import expressions
from chalicelib.domain import partition_digest as digest

KEYS = [("region", "string"), ("year", "int"), ("score", "double"), ("dt", "date")]
EXPRESSIONS = [
    "", "region = 'eu'", "year > 2015", "NOT (year > 2015)", "score BETWEEN 0.5 AND 2",
    "region LIKE 'e%' OR year IN (2011, 2013)", "NOT (region = 'us' AND score < 1)",
    "dt IS NULL", "dt IS NOT NULL AND dt > '2020-01-05'", "NOT (dt > '2020-01-05')",
    "year <> 2012 AND NOT (score >= 1.5 OR region IN ('ap', 'x'))", "year = 7 OR region = 'ap'",
]


def random_rows(count: int, seed: int) -> list[digest.Row]:
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        values = [rng.choice(["eu", "us", "ap", "e\x01x", ""]), rng.choice(["2010", "2011", "2012", "2013", "2016",
                                                                           "abc", "07"]),
                  rng.choice(["0.5", "1", "1.5", "2.25", "nan", "x"]),
                  rng.choice(["2020-01-01", "2020-01-09", "bad"])]
        rows.append((tuple(values[:rng.choice([2, 3, 4, 4, 4])]), rng.randrange(2520)))
    return rows


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_columns_match_exactly_what_rows_match(text: str) -> None:
    rows = random_rows(700, hash(text) % 1000)
    bound = expressions.bind(expressions.parse_expression(text), KEYS)
    chunk = digest.decode(digest.encode(rows))
    assert chunk.rows() == rows
    found = chunk.matching(bound, None)
    assert found == [i for i, (values, _) in enumerate(rows) if expressions.evaluate(bound, values)]
    in_segment = chunk.matching(bound, (100, 900))
    assert in_segment == [i for i in found if 100 <= rows[i][1] <= 900]
    matches, total = digest.matching_rows([chunk], bound, (100, 900))
    assert total == len(rows) and matches == {rows[i][0] for i in in_segment}


def test_wide_columns_and_empty_chunks() -> None:
    rows = [((f"v{i}", str(i % 3)), i % 2520) for i in range(70_000)]  # > 65,535 distinct: 4-byte codes
    chunk = digest.decode(digest.encode(rows))
    bound = expressions.bind(expressions.parse_expression("a = 'v69999' OR (a LIKE 'v1%' AND b = '2')"),
                             [("a", "string"), ("b", "string")])
    assert [rows[i][0] for i in chunk.matching(bound, None)] == \
        [values for values, _ in rows if expressions.evaluate(bound, values)]
    empty = digest.decode(digest.encode([]))
    assert empty.rows() == [] and empty.matching(bound, None) == []


def test_chunks_stay_under_the_item_limit() -> None:
    rng = random.Random(7)
    rows = [(tuple("".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(900))
                   for _ in range(3)), i) for i in range(600)]
    chunks = digest.encode_chunks(rows)
    assert len(chunks) > 1 and all(len(c) <= digest.MAX_CHUNK_BYTES for c in chunks)
    assert [row for c in chunks for row in digest.decode(c).rows()] == rows
    assert len(digest.encode_chunks([])) == 1


def test_a_listing_s_pages_reuse_its_candidates_while_the_digest_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """DigestSource remembers a listing's sorted candidate keys by the digest items read (each
    written once under a fresh key): the next page bisects them instead of evaluating again,
    and a digest with other items (a new delta) is evaluated afresh."""
    from chalicelib.domain.partition_keys import partition_sort_key
    from chalicelib.service import partition_digest as source_module
    from chalicelib.store import digests
    from chalicelib.store.dynamo.models import TableItem

    rows = random_rows(400, 7)
    pieces = [digests.Piece("0001", digests.BASE, digest.encode(rows), "set", 0, 1, False)]
    monkeypatch.setattr(digests, "read", lambda table_uid, deadline=None, rows=True, pages=None: list(pieces))
    monkeypatch.setattr(source_module, "_remembered", {})
    monkeypatch.setattr(source_module, "_chunks", {})  # decoded chunks by item key: these fakes reuse keys
    evaluated: list[int] = []

    class Counted(digest.Matches):
        def __init__(self, *args: Any) -> None:
            evaluated.append(1)
            super().__init__(*args)
    monkeypatch.setattr(digest, "Matches", Counted)
    table = TableItem("db", "t")
    table.uid = "uid"
    types = [t for _, t in KEYS]
    bound = expressions.bind(expressions.parse_expression("region = 'eu'"), KEYS)
    expected = sorted({partition_sort_key(v, types) for v, _ in rows if expressions.evaluate(bound, v)})
    first = source_module.DigestSource(table, types).matching_keys(bound, (0, 1259), None)
    after = first[3]
    later = source_module.DigestSource(table, types).matching_keys(bound, (0, 1259), after)
    assert len(evaluated) == 1 and later == first[4:]
    assert set(first) <= set(expected)
    pieces.append(digests.Piece("0002", digests.DELTA, digest.encode([(("eu", "2010"), 5)]), None, None, None, False))
    fresh = source_module.DigestSource(table, types).matching_keys(bound, (0, 1259), None)
    assert len(evaluated) == 2 and partition_sort_key(("eu", "2010"), types) in fresh


def test_many_small_chunks_match_as_one_with_shared_outcomes() -> None:
    """A digest of many small deltas (a bulk load's) is evaluated chunk by chunk, each leaf's
    outcome per text reused across chunks: exactly the rows the row-wise evaluator accepts."""
    rows = random_rows(3_000, 11)
    chunks = [digest.decode(digest.encode(rows[start:start + 50])) for start in range(0, len(rows), 50)]
    for text in EXPRESSIONS:
        bound = expressions.bind(expressions.parse_expression(text), KEYS)
        found, total = digest.matching_rows(chunks, bound, (100, 2000))
        assert total == len(rows)
        assert found == {values for values, segment in rows
                         if 100 <= segment <= 2000 and expressions.evaluate(bound, values)}, text


def test_encode_chunks_of_uniform_and_ragged_rows_round_trip() -> None:
    uniform = [((f"r{i // 392:05d}", str(1 + i // 14 % 28), str(i % 14)), i % 2520) for i in range(30_000)]
    ragged = random_rows(5_000, 3)
    for rows in (uniform, ragged):
        chunks = digest.encode_chunks(rows)
        assert [row for c in chunks for row in digest.decode(c).rows()] == rows


def test_a_remembered_listing_reads_only_the_digest_outline_and_skips_evaluating_what_matched(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A digest evaluated before is read as its outline first, its rows only when its candidates
    are not remembered (a delta came since); the value tuples that matched are known
    afterwards, so the listing evaluates only partitions whose values
    differ from their digest row (an int key folds ``017`` and ``17`` into one key)."""
    from chalicelib.service import partition_digest as source_module
    from chalicelib.store import digests
    from chalicelib.store.dynamo.models import TableItem

    rows = [(("eu", "2017"), 3), (("us", "2017"), 4), (("eu", "2018"), 5)] + [((f"r{n}", "2017"), n) for n in range(6)]
    pieces = [digests.Piece("0001", digests.BASE, digest.encode(rows), "set", 0, 1, False)]
    reads: list[bool] = []

    def read(table_uid: str, deadline: Any = None, rows: bool = True, pages: Any = None) -> list[Any]:
        reads.append(rows)
        return [piece if rows else replace(piece, data=None) for piece in pieces]
    monkeypatch.setattr(digests, "read", read)
    monkeypatch.setattr(source_module, "_remembered", {})
    monkeypatch.setattr(source_module, "_chunks", {})  # decoded chunks by item key: these fakes reuse keys
    monkeypatch.setattr(source_module, "_evaluated_pieces", {})
    table = TableItem("db", "t")
    table.uid = "uid"
    types = [t for _, t in KEYS]
    bound = expressions.bind(expressions.parse_expression("region = 'eu'"), KEYS)
    first = source_module.DigestSource(table, types)
    assert len(first.matching_keys(bound, (0, 1259), None)) == 2
    assert reads == [True]  # a table not evaluated before: its digest read whole at once
    later = source_module.DigestSource(table, types)
    assert later.matching_keys(bound, (0, 1259), None) == first.matching_keys(bound, (0, 1259), None)
    assert reads == [True, False]
    assert later.evaluated(["eu", "2017"]) and not later.evaluated(["us", "2017"])
    assert not later.evaluated(["eu", "02017"])  # the same key's other spelling: evaluated again
    pieces.append(digests.Piece("0002", digests.DELTA, digest.encode([(("eu", "2019"), 6)]), None, None, None, False))
    changed = source_module.DigestSource(table, types)
    assert len(changed.matching_keys(bound, (0, 1259), None)) == 3 and reads == [True, False, False, True]


def test_another_predicate_on_an_unchanged_digest_reads_only_its_outline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The chunks decoded for one listing serve the next one's other literals: its outline names
    the same items (never changed under one key), so their rows are neither read nor decoded."""
    from chalicelib.service import partition_digest as source_module
    from chalicelib.store import digests
    from chalicelib.store.dynamo.models import TableItem

    rows = [(("eu", "2017"), 3), (("us", "2017"), 4), (("eu", "2018"), 5)] + [((f"r{n}", "2016"), n) for n in range(6)]
    pieces = [digests.Piece("0001", digests.BASE, digest.encode(rows), "set", 0, 1, False)]
    reads: list[bool] = []

    def read(table_uid: str, deadline: Any = None, rows: bool = True, pages: Any = None) -> list[Any]:
        reads.append(rows)
        return [piece if rows else replace(piece, data=None) for piece in pieces]
    monkeypatch.setattr(digests, "read", read)
    monkeypatch.setattr(source_module, "_remembered", {})
    monkeypatch.setattr(source_module, "_evaluated_pieces", {})
    monkeypatch.setattr(source_module, "_chunks", {})
    decoded: list[bytes] = []
    real_decode = digest.decode
    monkeypatch.setattr(digest, "decode", lambda data: decoded.append(data) or real_decode(data))
    table = TableItem("db", "t")
    table.uid = "uid"
    types = [t for _, t in KEYS]
    eu = expressions.bind(expressions.parse_expression("region = 'eu'"), KEYS)
    us = expressions.bind(expressions.parse_expression("region = 'us'"), KEYS)
    assert len(source_module.DigestSource(table, types).matching_keys(eu, None, None)) == 2
    assert len(source_module.DigestSource(table, types).matching_keys(us, None, None)) == 1
    assert reads == [True, False] and len(decoded) == 1
    source_module._chunks.clear()  # pushed out by other tables' chunks: the rows are read again
    assert len(source_module.DigestSource(table, types).matching_keys(
        expressions.bind(expressions.parse_expression("year = 2018"), KEYS), None, None)) == 1
    assert reads == [True, False, False, True] and len(decoded) == 2
