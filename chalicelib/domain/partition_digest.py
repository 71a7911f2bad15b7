"""The partition digest's chunks: a table's partition values stored column by column, and a
bound expression evaluated over a whole chunk at once (see docs/design.md, "Partitions and
indexes").

A chunk holds rows ``(values, segment bucket)``. Each partition-key position is a column: its
distinct texts (``None``: the row has no value there) and one code per row into them, packed as
an ``array`` of the narrowest width. An expression's leaves each test one column (binding makes
them so), so a leaf is evaluated once per *distinct* text, not per row, and rows are combined
as bytes (one byte per row, 0 or 1) held in Python ints, where AND / OR run in C. SQL's three
values are kept as two such masks, true and false (neither: unknown), so NOT stays exact and
the rows found are exactly those ``expressions.evaluate`` accepts.
"""

from __future__ import annotations

import json
import sys
import zlib
from array import array
from dataclasses import dataclass
from operator import itemgetter
from typing import Optional, Sequence

from chalicelib.domain import expressions
from chalicelib.domain.expressions import And, Between, Compare, In, IsNull, Like, Not, Or, TrueExpr
from chalicelib.domain.partition_keys import SEGMENT_MODULUS

Row = tuple[tuple[str, ...], int]  # (partition values, segment bucket)
# A leaf's outcome (True, False, None: unknown) by text, per leaf (by id: the bound expression
# outlives the evaluation that holds them).
Outcomes = dict[int, dict[Optional[str], Optional[bool]]]

_FORMAT = 1
_LITTLE = sys.byteorder == "little"
# A chunk's encoded size before compression is kept under this; compressed it is far smaller,
# and a chunk whose compressed form still exceeds MAX_CHUNK_BYTES is split in two.
_RAW_BUDGET = 2_000_000
MAX_CHUNK_BYTES = 350_000  # of DynamoDB's 400 KB item limit, leaving room for the key


def _width(distinct: int) -> str:
    return "B" if distinct <= 0xFF else "H" if distinct <= 0xFFFF else "I"


def _packed(codes: Sequence[int], typecode: str) -> bytes:
    packed = array(typecode, codes)
    if not _LITTLE:
        packed.byteswap()
    return packed.tobytes()


def _unpacked(data: bytes, typecode: str) -> array:
    unpacked = array(typecode)
    unpacked.frombytes(data)
    if not _LITTLE:
        unpacked.byteswap()
    return unpacked


def encode(rows: Sequence[Row]) -> bytes:
    """One chunk holding ``rows`` (zlib-compressed)."""
    lengths = set(map(len, map(itemgetter(0), rows)))
    width = max(lengths, default=0)
    uniform = len(lengths) <= 1
    header: dict = {"f": _FORMAT, "n": len(rows), "cols": []}
    body: list[bytes] = []
    for position in range(width):
        if uniform:  # the common case, in C: every row has a value at every position
            texts: list[Optional[str]] = list(map(itemgetter(position), map(itemgetter(0), rows)))
        else:
            texts = [values[position] if position < len(values) else None for values, _ in rows]
        codes = {text: code for code, text in enumerate(dict.fromkeys(texts))}
        typecode = _width(len(codes))
        header["cols"].append({"v": list(codes), "t": typecode})
        body.append(_packed(list(map(codes.__getitem__, texts)), typecode))
    body.append(_packed(list(map(itemgetter(1), rows)), "H"))
    head = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")
    return zlib.compress(len(head).to_bytes(4, "little") + head + b"".join(body), 6)


_BLOCK = 4096  # rows sized at once by encode_chunks


def encode_chunks(rows: Sequence[Row]) -> list[bytes]:
    """``rows`` as chunks of at most MAX_CHUNK_BYTES each (an empty list: one empty chunk)."""
    chunks: list[bytes] = []
    start = 0
    while True:
        # The raw size of rows[start:end]: per row its codes and segment, per distinct text its
        # bytes, counted a block at a time (a chunk may pass _RAW_BUDGET by one block).
        end, size = start, 0
        seen: list[set[str]] = []
        while end < len(rows) and (size < _RAW_BUDGET or end == start):
            block = [values for values, _ in rows[end:end + _BLOCK]]
            lengths = list(map(len, block))
            size += 2 * len(block) + 4 * sum(lengths)
            shortest = min(lengths)
            for position in range(max(lengths)):
                if position >= len(seen):
                    seen.append(set())
                texts = set(map(itemgetter(position), block)) if position < shortest else \
                    {values[position] for values in block if len(values) > position}
                texts -= seen[position]
                size += sum(len(text.encode("utf-8", "surrogatepass")) + 4 for text in texts)
                seen[position] |= texts
            end += len(block)
        chunks.extend(_fitting(rows[start:end]))
        start = end
        if start >= len(rows):
            return chunks


def _fitting(rows: Sequence[Row]) -> list[bytes]:
    encoded = encode(rows)
    if len(encoded) <= MAX_CHUNK_BYTES or len(rows) <= 1:
        return [encoded]
    half = len(rows) // 2
    return _fitting(rows[:half]) + _fitting(rows[half:])


@dataclass
class Chunk:
    """A decoded chunk: per column its distinct texts and codes, and the rows' segments."""

    size: int
    columns: list[tuple[list[Optional[str]], array]]
    segments: array

    def rows(self) -> list[Row]:
        """Every row, in stored order."""
        return [self.row(i) for i in range(self.size)]

    def row(self, i: int) -> Row:
        """Row ``i``: its values (the texts present) and segment."""
        values = []
        for texts, codes in self.columns:
            text = texts[codes[i]]
            if text is None:
                break
            values.append(text)
        return tuple(values), self.segments[i]

    def matching(self, bound: expressions.Node, buckets: Optional[tuple[int, int]],
                 outcomes: Optional[Outcomes] = None) -> list[int]:
        """Positions of the rows ``bound`` is true for (and, with ``buckets``, whose segment is
        in that inclusive range). ``outcomes``: the leaves' outcomes by text, shared by the
        chunks of one evaluation (a digest of many small deltas repeats most texts)."""
        if not self.size:
            return []
        true, _ = self._masks(bound, {} if outcomes is None else outcomes)
        if buckets is not None:
            low, high = buckets
            lut = bytes(1 if low <= s <= high else 0 for s in range(SEGMENT_MODULUS))
            true &= int.from_bytes(bytes(map(lut.__getitem__, self.segments)), "little")
        if not true:
            return []
        found = true.to_bytes(self.size, "little")
        positions = []
        at = found.find(1)
        while at >= 0:
            positions.append(at)
            at = found.find(1, at + 1)
        return positions

    def _all(self) -> int:
        return int.from_bytes(b"\x01" * self.size, "little")

    def _masks(self, node: expressions.Node, outcomes: Outcomes) -> tuple[int, int]:
        """(rows where ``node`` is true, rows where it is false)."""
        kind = type(node)
        if kind is TrueExpr:
            return self._all(), 0
        if kind is Not:
            true, false = self._masks(node.item, outcomes)  # type: ignore[union-attr]
            return false, true
        if kind is And or kind is Or:
            parts = [self._masks(item, outcomes) for item in node.items]  # type: ignore[union-attr]
            true, false = parts[0]
            for t, f in parts[1:]:
                if kind is And:
                    true, false = true & t, false | f
                else:
                    true, false = true | t, false & f
            return true, false
        if kind in (Compare, Between, In, Like, IsNull):
            return self._leaf(node, outcomes)
        raise TypeError(f"not a bound expression node: {kind.__name__}")

    def _leaf(self, node: expressions.Node, outcomes: Outcomes) -> tuple[int, int]:
        position = node.column.position  # type: ignore[union-attr]
        if position >= len(self.columns):
            # No row has a value there: one evaluation with the value absent decides every row.
            outcome = expressions.evaluate3(node, [])
            return (self._all(), 0) if outcome is True else (0, self._all()) if outcome is False else (0, 0)
        texts, codes = self.columns[position]
        true_lut, false_lut = bytearray(len(texts)), bytearray(len(texts))
        known = outcomes.setdefault(id(node), {})
        for code, text in enumerate(texts):
            try:
                outcome = known[text]
            except KeyError:
                outcome = known[text] = expressions.evaluate3(node, [] if text is None else [None] * position + [text])
            true_lut[code], false_lut[code] = outcome is True, outcome is False
        return self._spread(bytes(true_lut), codes), self._spread(bytes(false_lut), codes)

    def _spread(self, lut: bytes, codes: array) -> int:
        """The per-row mask of a per-code table."""
        if not any(lut):
            return 0
        if codes.typecode == "B":
            return int.from_bytes(codes.tobytes().translate(lut.ljust(256, b"\x00")), "little")
        return int.from_bytes(bytes(map(lut.__getitem__, codes)), "little")


def decode(data: bytes) -> Chunk:
    """The chunk ``encode`` made."""
    raw = zlib.decompress(data)
    head_size = int.from_bytes(raw[:4], "little")
    header = json.loads(raw[4:4 + head_size].decode("utf-8", "surrogatepass"))
    if header.get("f") != _FORMAT:
        raise ValueError(f"unknown partition digest format {header.get('f')!r}")
    size = header["n"]
    at = 4 + head_size
    columns = []
    for column in header["cols"]:
        typecode = column["t"]
        length = size * array(typecode).itemsize
        columns.append((column["v"], _unpacked(raw[at:at + length], typecode)))
        at += length
    segments = _unpacked(raw[at:at + 2 * size], "H")
    return Chunk(size, columns, segments)


class Matches:
    """The distinct value tuples of the matching rows of chunks added one at a time (a caller
    may stop between chunks), and how many rows were examined."""

    def __init__(self, bound: expressions.Node, buckets: Optional[tuple[int, int]]) -> None:
        self.bound, self.buckets = bound, buckets
        self.found: set[tuple[str, ...]] = set()
        self.total = 0
        self._outcomes: Outcomes = {}

    def add(self, chunk: Chunk) -> None:
        """Evaluate one more chunk."""
        self.total += chunk.size
        positions = chunk.matching(self.bound, self.buckets, self._outcomes)
        if not positions:
            return
        columns = [[texts[code] for code in map(codes.__getitem__, positions)] for texts, codes in chunk.columns]
        for values in zip(*columns):
            if None in values:  # a shorter row: its values end at the first absent one
                values = values[:values.index(None)]
            self.found.add(values)  # type: ignore[arg-type]


def matching_rows(chunks: Sequence[Chunk], bound: expressions.Node,
                  buckets: Optional[tuple[int, int]]) -> tuple[set[tuple[str, ...]], int]:
    """The distinct value tuples of the rows of ``chunks`` that match, and how many rows there
    were in all."""
    matches = Matches(bound, buckets)
    for chunk in chunks:
        matches.add(chunk)
    return matches.found, matches.total
