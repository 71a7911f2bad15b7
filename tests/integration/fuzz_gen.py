"""Fuzz requests for the implemented operations, generated from botocore's input shapes.

A :class:`Generator` turns one operation's input shape into a request: mostly-valid parameters
(lengths, enums, patterns and ranges respected; names drawn from a :class:`Pool` of entities that
exist, so the request gets past validation into the actions and the store), then, for most
requests, one mutation: a wrong type, a missing required member, a boundary length, hostile
unicode, an extreme number or timestamp, unknown or deeply nested members, duplicate keys, or a
broken body (empty, not an object, malformed, truncated, not UTF-8). Everything is drawn from
one ``random.Random``, so a seed names a run.

The parameter tree may hold :class:`Raw` (JSON text sent verbatim: NaN, 400-digit numbers,
nesting deeper than Python's recursion limit) and :class:`Dup` (an object with repeated keys),
which only :func:`encode` understands; :func:`plain` says whether boto3 could send the tree.
"""

from __future__ import annotations

import base64
import copy
import json
import random
import re
import string
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Callable, Optional

import botocore.session
from botocore.model import OperationModel, Shape

AUTH = ("AWS4-HMAC-SHA256 Credential={key}/20260101/{region}/{service}/aws4_request, "
        "SignedHeaders=host;x-amz-date, Signature=0")
PARTITION_KEYS = ("year", "month")
COLUMNS = ("id", "value", "year", "month")

# Strings that have broken catalogs: CJK, emoji (outside the BMP), combining marks, bidi controls,
# NUL and the U+0001/U+0002 separators Glue forbids in indexed values, a lone surrogate, digits
# that are digits only to Unicode, glob and regex metacharacters, and a few injection classics.
NASTY_STRINGS = (
    "数据库表", "テーブル_名前", "🦄📦", "👩‍👩‍👧‍👦", "e\u0301\u0308\u0327", "\u202eabc\u202c", "مرحبا", "\u200f\u200e",
    "a\x00b", "\x00", "a\x01b", "a\x02b", "\x01\x02", "\ud800", "x\udfffy", "²", "١٢٣", "１２",
    "\ufeff", "\u2028\u2029", "\t", " ", "  lead", "trail  ", "*", "t*?", "(.*)+[", "a|b", "\\", "%00",
    "../../etc", "' OR 1=1 --", "${jndi:x}", "NaN", "-0", "1e400", "0x1F", "\uffff", "\U0010ffff",
    "A" * 256, "数" * 255, "🦄" * 128,
)
PARTITION_EXPRESSIONS = (
    "year = 2020", "year > 2019 AND month = '01'", "year IN (2020, 2021)", "month LIKE '0%'",
    "year BETWEEN 2019 AND 2022", "NOT year = 2020", "(year = 2020 OR year = 2021) AND month <> '13'",
    "year = ", "year IN ()", "(" * 200 + "year = 1" + ")" * 200, " AND ".join(["year = 1"] * 300),
    "year > 99999999999999999999999999", "month = '\x00'", "nosuchkey = 1", "year = 'abc'",
    "year = 2020 AND", "'unterminated", "month LIKE '%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%b'",
)
TABLE_EXPRESSIONS = ("t*", "*", "fz_.*", "tbl|gov", "(a+)+$", "[", "*" * 300, "a{1,99999}", "\\", "")


@dataclass(frozen=True)
class Raw:
    """JSON text sent as is."""

    text: str


@dataclass(frozen=True)
class Dup:
    """A JSON object whose keys may repeat (JSON allows it; ``json.loads`` keeps the last)."""

    pairs: tuple[tuple[str, Any], ...]


NUMBERS = (0, -1, 1, 2**31 - 1, 2**31, -2**31 - 1, 2**63 - 1, 2**63, -2**63 - 1, 2**64, 10**30,
           1.5, -0.0, 1e308, -1e308, 5e-324, Raw("1e400"), Raw("-1e400"), Raw("NaN"), Raw("Infinity"),
           Raw("-Infinity"), Raw("9" * 400), Raw("-" + "9" * 400), Raw("1" + "0" * 40 + ".5"))
TIMESTAMPS = (0, -1, -62135596800, -62135596801, 253402300799, 253402300800, 1e11, 1e15, 1e18,
              1e20, 2**63, -2**63, 1.7e9 + 0.123456789, Raw("9" * 400), Raw("1e400"), Raw("NaN"))

def encode(value: Any, ensure_ascii: bool = True) -> str:
    """JSON text of a parameter tree that may hold :class:`Raw` and :class:`Dup`."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, (dict, Dup)):
        pairs = value.pairs if isinstance(value, Dup) else value.items()
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=ensure_ascii)}:{encode(v, ensure_ascii)}"
                              for k, v in pairs) + "}"
    if isinstance(value, list):
        return "[" + ",".join(encode(v, ensure_ascii) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ensure_ascii)


def plain(value: Any) -> bool:
    """True when the tree holds only what boto3 can serialise (no Raw, Dup, NaN)."""
    if isinstance(value, (Raw, Dup)):
        return False
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(plain(v) for v in value)
    if isinstance(value, float):
        return value == value and abs(value) != float("inf")
    return True


@cache
def service_model(service: str) -> Any:
    """botocore's model of ``service`` (one load per process)."""
    return botocore.session.get_session().get_service_model(service)


@cache
def _pattern(pattern: str) -> Optional[re.Pattern[str]]:
    # Java spells supplementary characters as a surrogate-pair range; Python has no \p{L}.
    try:
        return re.compile(pattern.replace("\\uD800\\uDC00-\\uDBFF\\uDFFF", "\\U00010000-\\U0010FFFF"),
                          re.DOTALL)
    except re.error:
        return None


@dataclass
class Target:
    """The entities one request is about (so its references agree with each other)."""

    db: str
    table: str
    governed: bool
    values: list[str]


@dataclass
class Pool:
    """Entities the fuzz test created before sending, that generated requests refer to."""

    account: str
    databases: list[str]
    tables: dict[str, list[str]]  # database -> plain tables
    governed: dict[str, list[str]]  # database -> governed tables
    values: list[list[str]]  # partition values that exist in every table
    indexes: list[str]
    transactions: list[str] = field(default_factory=list)

    def target(self, rng: random.Random, governed: bool) -> Target:
        """A random (database, table, partition) that exists."""
        db = rng.choice(self.databases)
        tables = self.governed[db] if governed else self.tables[db]
        return Target(db, rng.choice(tables), governed, list(rng.choice(self.values)))


@dataclass
class Slot:
    """One generated node: where it sits in the tree and the shape it was made from."""

    path: tuple[Any, ...]
    shape: Shape
    required: bool


@dataclass
class FuzzRequest:
    """One HTTP request to send, and how it was made."""

    service: str
    operation: str
    kind: str  # "valid" or the mutation applied
    params: Any  # the parameter tree (None when the body was built as bytes)
    body: bytes
    headers: dict[str, str]

    @property
    def path(self) -> str:
        """The URL path: Glue on ``/``, Lake Formation on ``/<Operation>``."""
        return "/" if self.service == "glue" else f"/{self.operation}"

    def with_params(self, params: Any) -> "FuzzRequest":
        """The same request carrying another parameter tree (for minimising)."""
        return FuzzRequest(self.service, self.operation, self.kind, params,
                           encode(params).encode("utf-8", "surrogatepass"), self.headers)


def request_headers(service: str, operation: str, key: str, region: str = "us-east-1") -> dict[str, str]:
    """Headers as botocore sends them (signature not checked locally; the key id is the account)."""
    headers = {"Authorization": AUTH.format(key=key, region=region, service=service),
               "X-Amz-Date": "20260101T000000Z"}
    if service == "glue":
        headers.update({"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": f"AWSGlue.{operation}"})
    else:
        headers["Content-Type"] = "application/json"
    return headers


def get_at(tree: Any, path: tuple[Any, ...]) -> Any:
    """The node at ``path`` (keys and list indexes)."""
    for step in path:
        tree = tree[step]
    return tree


def set_at(tree: Any, path: tuple[Any, ...], value: Any) -> None:
    """Replace the node at a non-empty ``path``."""
    get_at(tree, path[:-1])[path[-1]] = value


def delete_at(tree: Any, path: tuple[Any, ...]) -> None:
    """Remove the node at a non-empty ``path`` (a member or a list item)."""
    del get_at(tree, path[:-1])[path[-1]]


class Generator:
    """Requests for any implemented operation, drawn from ``rng``."""

    def __init__(self, rng: random.Random, pool: Pool, valid_share: float = 0.4):
        self.rng = rng
        self.pool = pool
        self.valid_share = valid_share
        self._names = 0
        self.slots: list[Slot] = []
        self.target = pool.target(rng, False)
        self.operation = ""

    # -- public ----------------------------------------------------------------------------

    def request(self, service: str, operation: str) -> FuzzRequest:
        """One request: valid, or valid and then mutated once."""
        rng = self.rng
        model: OperationModel = service_model(service).operation_model(operation)
        governed = service == "lakeformation" or rng.random() < 0.2
        self.target = self.pool.target(rng, governed)
        self.operation = operation
        self.slots = []
        params = self._value(model.input_shape, "", model.input_shape.name, (), 0) if model.input_shape else {}
        headers = request_headers(service, operation, self.pool.account)
        if rng.random() < self.valid_share:
            return FuzzRequest(service, operation, "valid", params, encode(params).encode(), headers)
        mutation = rng.choices(_MUTATIONS, weights=[w for _, w in _MUTATIONS_WEIGHTED])[0]
        return mutation(self, service, operation, params, headers)

    def new_name(self) -> str:
        """A name nothing in the pool has."""
        self._names += 1
        return f"fz_{self._names:x}_{self.rng.choice(string.ascii_lowercase)}"

    # -- valid values ----------------------------------------------------------------------

    def _value(self, shape: Shape, name: str, parent: str, path: tuple[Any, ...], depth: int) -> Any:
        hinted = self._hint(shape, name, parent)
        if hinted is not _NO_HINT:
            if isinstance(hinted, list) and shape.type_name == "list":
                # Items of a hinted list (partition values above all) are mutation targets too.
                self.slots.extend(Slot(path + (i,), shape.member, False) for i in range(len(hinted)))
            return hinted
        kind, meta, rng = shape.type_name, shape.metadata, self.rng
        if kind == "structure":
            return self._structure(shape, path, depth)
        if kind == "list":
            low = meta.get("min", 0)
            high = min(meta.get("max", low + 3), low + 3)
            out: list[Any] = []
            for i in range(rng.randint(low, high)):
                self.slots.append(Slot(path + (i,), shape.member, False))
                out.append(self._value(shape.member, name, parent, path + (i,), depth + 1))
            return out
        if kind == "map":
            out_map: dict[str, Any] = {}
            for _ in range(rng.randint(meta.get("min", 0), min(meta.get("max", 3), 3))):
                key = self._string(shape.key)
                self.slots.append(Slot(path + (key,), shape.value, False))
                out_map[key] = self._value(shape.value, "", "", path + (key,), depth + 1)
            return out_map
        if kind == "string":
            return self._string(shape)
        if kind in ("integer", "long"):
            low, high = meta.get("min", 0), meta.get("max", 1000 if kind == "integer" else 10**6)
            return rng.randint(int(low), int(min(high, low + 10**6)))
        if kind in ("double", "float"):
            return round(rng.uniform(meta.get("min", -1e6), meta.get("max", 1e6)), rng.randint(0, 6))
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "timestamp":
            when = rng.randint(1_500_000_000, 1_800_000_000)
            return when + rng.choice((0, 0.5, 0.123))
        if kind == "blob":
            return base64.b64encode(rng.randbytes(rng.randint(1, 8))).decode()
        return None

    def _structure(self, shape: Shape, path: tuple[Any, ...], depth: int) -> dict[str, Any]:
        rng, out = self.rng, {}
        members = dict(shape.members)
        if shape.name == "ColumnStatisticsData":
            # Type says which one of the data members is present.
            kind = rng.choice(shape.members["Type"].enum)
            members = {"Type": shape.members["Type"],
                       f"{kind.title()}ColumnStatisticsData": shape.members[f"{kind.title()}ColumnStatisticsData"]}
            chosen = list(members)
            out["Type"] = kind
        elif shape.metadata.get("union") or shape.name == "WriteOperation":
            chosen = [rng.choice(list(members))]
        else:
            required = set(shape.required_members)
            # An LF transaction call is about its TransactionId, optional as the model makes it.
            about = {"TransactionId": 0.9} if "Transaction" in self.operation else {}
            chosen = [m for m in members if m in required
                      or (depth < 6 and rng.random() < about.get(m, _OPTIONAL_SHARE.get(m, 0.35)))]
        for member in chosen:
            if member in out:
                continue
            self.slots.append(Slot(path + (member,), members[member], member in shape.required_members))
            out[member] = self._value(members[member], member, shape.name, path + (member,), depth + 1)
        return out

    def _string(self, shape: Shape) -> str:
        rng, meta = self.rng, shape.metadata
        if shape.enum:
            return rng.choice(shape.enum)
        low, high = meta.get("min", 0), meta.get("max", 40)
        length = rng.randint(max(low, 1 if low else 0), max(min(high, 16), low))
        alphabet = string.ascii_lowercase + string.digits + "_"
        text = "".join(rng.choice(alphabet) for _ in range(length))
        if rng.random() < 0.15 and length:
            text = text[:-1] + rng.choice("é数🦄ñ")  # plain non-ASCII that every name pattern allows
        pattern = _pattern(meta["pattern"]) if meta.get("pattern") else None
        if pattern is not None and not pattern.fullmatch(text):
            for fallback in ("a" * max(low, 1), "00000000-0000-0000-0000-000000000000",
                             "arn:aws:glue:us-east-1:123456789012:schema/r/s"):
                if pattern.fullmatch(fallback):
                    return fallback
        return text

    def _hint(self, shape: Shape, name: str, parent: str) -> Any:
        """A value that refers to the pool (or agrees with the rest of the request), if ``name``
        is a member whose meaning the generic rules cannot guess."""
        rng, t, pool, op = self.rng, self.target, self.pool, self.operation
        # Reads and updates mostly name what exists; deletes less often, or the pool would be
        # gone (and a cascading DeleteDatabase is slow) before most requests are sent.
        hit = rng.random() < (0.8 if op.startswith(("Update", "Get", "BatchGet")) else
                              0.1 if op == "DeleteDatabase" else 0.25 if "Delete" in op else 0.4)
        if name == "CatalogId":
            return pool.account
        if name == "DatabaseName":
            return t.db if rng.random() < 0.9 else self.new_name()
        if name == "TableName":
            return t.table if rng.random() < 0.85 else self.new_name()
        if name == "Name" and parent == "DatabaseInput" or name == "Name" and parent.endswith("Request") and "Database" in op:
            return t.db if hit else self.new_name()
        if name == "Name" and (parent == "TableInput" or parent.endswith("Request")):
            return t.table if hit else self.new_name()
        if name == "Name" and parent == "Column" or name == "ColumnName":
            return rng.choice(COLUMNS)
        if name == "ColumnNames" and shape.type_name == "list":
            return rng.sample(COLUMNS, rng.randint(1, 3))
        if name == "Type" and parent == "Column":
            return rng.choice(("int", "string", "bigint", "double", "date", "array<string>"))
        if name == "PartitionKeys" and shape.type_name == "list":
            return [{"Name": k, "Type": "int" if k == "year" else "string"} for k in PARTITION_KEYS]
        if name in ("Values", "PartitionValues", "PartitionValueList") and shape.type_name == "list" \
                and shape.member.type_name == "string":
            if rng.random() < 0.6:
                return list(t.values)
            return [str(rng.randint(2000, 2030)), f"{rng.randint(1, 12):02d}"]
        if name == "Keys" and parent == "PartitionIndex":
            return rng.choice((["year"], ["year", "month"], ["month"]))
        if name == "IndexName":
            return rng.choice(pool.indexes) if hit else self.new_name()
        if name == "TransactionId":
            return rng.choice(pool.transactions) if pool.transactions and rng.random() < 0.9 else "0" * 32
        if name == "VersionId":
            return rng.choice(("1", "2", "3", "0", "-1", "99"))
        if name == "VersionIds" and shape.type_name == "list":
            return rng.sample(("1", "2", "3", "4"), rng.randint(1, 3))
        if name == "Expression":
            choices = TABLE_EXPRESSIONS if op in ("GetTables", "SearchTables") else PARTITION_EXPRESSIONS
            return rng.choice(choices[:7]) if rng.random() < 0.7 else rng.choice(choices)
        if name == "PartitionPredicate":
            return rng.choice(PARTITION_EXPRESSIONS[:7]) if rng.random() < 0.7 else rng.choice(PARTITION_EXPRESSIONS)
        if name in ("Location", "Uri", "LocationUri"):
            return f"s3://fuzz-bucket/{t.db}/{t.table}/{rng.randint(0, 99)}"
        if name == "TableType":
            return rng.choice(("EXTERNAL_TABLE", "EXTERNAL_TABLE", "GOVERNED", "VIRTUAL_VIEW"))
        if name == "AttributesToGet" and shape.type_name == "list":
            return rng.choice((["NAME"], ["NAME", "TABLE_TYPE"], ["TABLE_TYPE"], []))
        if name == "Key" and parent == "PropertyPredicate":
            return rng.choice(("DatabaseName", "Name", "TableType", "Owner", "Description", "location"))
        if name == "FieldName" and parent == "SortCriterion":
            return rng.choice(("Name", "DatabaseName", "CreateTime", "UpdateTime", "Owner"))
        if name == "NextToken":
            return rng.choice(("", "garbage", "eyJ4IjoxfQ==", "A" * 2048, "é"))
        return _NO_HINT


_NO_HINT = object()
# Members that are rarely present in real calls (or conflict with each other).
_OPTIONAL_SHARE = {"TransactionId": 0.15, "QueryAsOfTime": 0.1, "NextToken": 0.1, "CatalogId": 0.3,
                   "Expression": 0.5, "Segment": 0.1, "TableInput": 0.95, "PartitionInput": 0.95,
                   "Values": 0.95, "Name": 0.5, "OpenTableFormatInput": 0.05, "FederatedTable": 0.05,
                   "ViewDefinition": 0.05, "TargetTable": 0.1, "TargetDatabase": 0.1}


# -- mutations ---------------------------------------------------------------------------------

Mutation = Callable[[Generator, str, str, Any, dict[str, str]], FuzzRequest]


def _slot(gen: Generator, want: Callable[[Slot], bool]) -> Optional[Slot]:
    slots = [s for s in gen.slots if want(s)]
    return gen.rng.choice(slots) if slots else None


def _done(kind: str, service: str, operation: str, params: Any, headers: dict[str, str],
          ensure_ascii: bool = True) -> FuzzRequest:
    body = encode(params, ensure_ascii).encode("utf-8", "surrogatepass")
    return FuzzRequest(service, operation, kind, params, body, headers)


def _where(slot: Optional[Slot]) -> str:
    return ".".join(str(p) for p in slot.path) if slot else "<root>"


def wrong_type(gen: Generator, service: str, operation: str, params: Any, headers: dict[str, str]) -> FuzzRequest:
    """Any node replaced by a value of another JSON type."""
    slot = _slot(gen, lambda s: True)
    wrong = {"string": [5, True, [], {}, None, 1.5], "integer": ["5", 1.5, True, [], None],
             "long": ["5", 2.5, {}], "double": ["1.0", True, []], "boolean": ["true", 1, 0, None],
             "timestamp": ["2020-01-01T00:00:00Z", "yesterday", True, {}], "structure": ["x", [], 3, None],
             "list": ["x", {}, 3, [None], None], "map": ["x", [], 3, {"k": None}, {"k": 5}], "blob": [5, []]}
    if slot is None:
        return _done("wrong_type<root>", service, operation, gen.rng.choice([[], "x", 3]), headers)
    set_at(params, slot.path, gen.rng.choice(wrong.get(slot.shape.type_name, [None])))
    return _done(f"wrong_type {_where(slot)}", service, operation, params, headers)


def drop_required(gen: Generator, service: str, operation: str, params: Any, headers: dict[str, str]) -> FuzzRequest:
    """A required member removed (or sent as null)."""
    slot = _slot(gen, lambda s: s.required)
    if slot is None:
        return wrong_type(gen, service, operation, params, headers)
    if gen.rng.random() < 0.7:
        delete_at(params, slot.path)
    else:
        set_at(params, slot.path, None)
    return _done(f"drop_required {_where(slot)}", service, operation, params, headers)


def null_member(gen: Generator, service: str, operation: str, params: Any, headers: dict[str, str]) -> FuzzRequest:
    """A member or map value sent as JSON null (AWS's JSON protocols read null as absent)."""
    slot = _slot(gen, lambda s: isinstance(s.path[-1], str))
    if slot is None:
        return wrong_type(gen, service, operation, params, headers)
    set_at(params, slot.path, None)
    return _done(f"null_member {_where(slot)}", service, operation, params, headers)


def boundary(gen: Generator, service: str, operation: str, params: Any, headers: dict[str, str]) -> FuzzRequest:
    """A string at length 0, max and max+1; a list or map at size min-1, max and max+1."""
    rng = gen.rng
    slot = _slot(gen, lambda s: s.shape.type_name in ("string", "list", "map") and not getattr(s.shape, "enum", None))
    if slot is None:
        return wrong_type(gen, service, operation, params, headers)
    meta, kind = slot.shape.metadata, slot.shape.type_name
    high = meta.get("max", 2048 if kind == "string" else 120)
    size = rng.choice([0, high, high + 1, max(meta.get("min", 0) - 1, 0)])
    current = get_at(params, slot.path)
    if kind == "string":
        fill = rng.choice(("a", "数", "🦄", "é"))
        value: Any = (fill * size)[:size] if fill != "🦄" else fill * size
    elif kind == "list":
        item = current[0] if isinstance(current, list) and current else "x"
        value = [copy.deepcopy(item) for _ in range(min(size, 1001))]
    else:
        value = {f"k{i}": "v" for i in range(min(size, 1001))}
    set_at(params, slot.path, value)
    return _done(f"boundary {kind}[{size}] {_where(slot)}", service, operation, params, headers)


def nasty_string(gen: Generator, service: str, operation: str, params: Any, headers: dict[str, str]) -> FuzzRequest:
    """A string replaced by (or spiked with) hostile unicode or metacharacters."""
    rng = gen.rng
    slot = _slot(gen, lambda s: s.shape.type_name == "string")
    if slot is None:
        return wrong_type(gen, service, operation, params, headers)
    nasty = rng.choice(NASTY_STRINGS)
    current = get_at(params, slot.path)
    if isinstance(current, str) and rng.random() < 0.5:
        nasty = current[: rng.randint(0, len(current))] + nasty + current[rng.randint(0, len(current)):]
    set_at(params, slot.path, nasty)
    return _done(f"nasty_string {_where(slot)}", service, operation, params, headers,
                 ensure_ascii=rng.random() < 0.7)


def nasty_number(gen: Generator, service: str, operation: str, params: Any, headers: dict[str, str]) -> FuzzRequest:
    """A number or timestamp at an extreme: huge, negative, fractional, NaN, 400 digits."""
    slot = _slot(gen, lambda s: s.shape.type_name in ("integer", "long", "double", "float", "timestamp"))
    if slot is None:
        return nasty_string(gen, service, operation, params, headers)
    pool = TIMESTAMPS if slot.shape.type_name == "timestamp" else NUMBERS
    set_at(params, slot.path, gen.rng.choice(pool))
    return _done(f"nasty_number {slot.shape.type_name} {_where(slot)}", service, operation, params, headers)


def unknown_members(gen: Generator, service: str, operation: str, params: Any, headers: dict[str, str]) -> FuzzRequest:
    """Unknown members (which must be ignored), some deeply nested, in any structure."""
    rng = gen.rng
    structs = [s.path for s in gen.slots if s.shape.type_name == "structure" and isinstance(get_at(params, s.path), dict)]
    path = rng.choice(structs + [()])
    depth = rng.choice((1, 3, 30, 200, 900, 5000))
    nested = Raw('{"a":' * depth + "1" + "}" * depth) if rng.random() < 0.5 else Raw("[" * depth + "]" * depth)
    get_at(params, path)[rng.choice(("Unknown", "x", "__type", "SomethingNew"))] = nested
    return _done(f"unknown_member depth {depth} {path}", service, operation, params, headers)


def duplicate_keys(gen: Generator, service: str, operation: str, params: Any, headers: dict[str, str]) -> FuzzRequest:
    """An object with a member repeated, the second time with another (possibly invalid) value."""
    rng = gen.rng
    structs = [s.path for s in gen.slots if s.shape.type_name == "structure" and isinstance(get_at(params, s.path), dict)]
    path = rng.choice(structs + [()])
    obj = get_at(params, path)
    if not obj:
        return unknown_members(gen, service, operation, params, headers)
    key = rng.choice(list(obj))
    second = rng.choice((None, 5, "other", [], {}, obj[key]))
    dup = Dup(tuple(obj.items()) + ((key, second),))
    if path:
        set_at(params, path, dup)
    else:
        params = dup
    return _done(f"duplicate_key {'.'.join(map(str, path + (key,)))}", service, operation, params, headers)


def broken_body(gen: Generator, service: str, operation: str, params: Any, headers: dict[str, str]) -> FuzzRequest:
    """A body that is not one JSON object: empty, another JSON value, malformed, truncated, not UTF-8."""
    rng = gen.rng
    text = encode(params).encode()
    choices = {
        "empty": b"", "whitespace": b" \r\n\t", "null": b"null", "array": b"[]", "string": b'"x"',
        "number": b"1", "true": b"true", "nested_array": b"[" * 5000 + b"]" * 5000,
        "malformed": b'{"a":', "trailing": text + b"x", "two_objects": text + text,
        "truncated": text[: rng.randint(0, max(len(text) - 1, 0))], "bom": b"\xef\xbb\xbf" + text,
        "latin1": text.replace(b"}", b',"x":"\xe9"}', 1), "utf16": encode(params).encode("utf-16"),
        "nul": b"\x00" * 8, "comment": b"/* c */" + text, "single_quotes": text.replace(b'"', b"'"),
        "deep_object": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    }
    kind = rng.choice(sorted(choices))
    return FuzzRequest(service, operation, f"broken_body {kind}", None, choices[kind], headers)


def odd_headers(gen: Generator, service: str, operation: str, params: Any, headers: dict[str, str]) -> FuzzRequest:
    """Valid body, unusual caller: no or garbled credentials, another account or region, other
    content types."""
    rng = gen.rng
    headers = dict(headers)
    choice = rng.choice(("no_auth", "garbage_auth", "other_account", "other_region", "long_region",
                         "unicode_key", "content_type", "target_case", "catalog_other"))
    if choice == "no_auth":
        del headers["Authorization"]
    elif choice == "garbage_auth":
        headers["Authorization"] = rng.choice(("x", "AWS4-HMAC-SHA256 Credential=", "Credential=a/1/b/"))
    elif choice == "other_account":
        headers["Authorization"] = AUTH.format(key="000000000000", region="us-east-1", service=service)
    elif choice == "other_region":
        headers["Authorization"] = AUTH.format(key=gen.pool.account, region=rng.choice(("eu-west-1", "x", "us-east-1 ")), service=service)
    elif choice == "long_region":
        headers["Authorization"] = AUTH.format(key=gen.pool.account, region="r" * rng.choice((64, 300, 3000)), service=service)
    elif choice == "unicode_key":
        headers["Authorization"] = AUTH.format(key="ключ", region="us-east-1", service=service)
    elif choice == "content_type":
        headers["Content-Type"] = rng.choice(("application/json", "text/plain", "application/x-amz-json-1.0",
                                              "application/octet-stream"))
    elif choice == "target_case" and service == "glue":
        headers["X-Amz-Target"] = rng.choice((f"awsglue.{operation}", f"AWSGlue.{operation.lower()}", "AWSGlue."))
    elif isinstance(params, dict):
        params["CatalogId"] = rng.choice(("000000000000", "", "x" * 300, "数"))
    body = encode(params).encode("utf-8", "surrogatepass")
    return FuzzRequest(service, operation, f"odd_headers {choice}", params, body, headers)


_MUTATIONS_WEIGHTED: list[tuple[Mutation, int]] = [
    (wrong_type, 12), (drop_required, 10), (null_member, 6), (boundary, 14), (nasty_string, 22), (nasty_number, 12),
    (unknown_members, 7), (duplicate_keys, 5), (broken_body, 8), (odd_headers, 6),
]
_MUTATIONS = [m for m, _ in _MUTATIONS_WEIGHTED]


def to_boto(shape: Optional[Shape], value: Any) -> Any:
    """The tree as boto3 takes it: blobs as bytes (the wire form is base64 text)."""
    if shape is None or value is None:
        return value
    kind = shape.type_name
    if kind == "structure" and isinstance(value, dict):
        return {k: to_boto(shape.members.get(k), v) for k, v in value.items()}
    if kind == "list" and isinstance(value, list):
        return [to_boto(shape.member, v) for v in value]
    if kind == "map" and isinstance(value, dict):
        return {k: to_boto(shape.value, v) for k, v in value.items()}
    if kind == "blob" and isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except ValueError:
            return value.encode("utf-8", "surrogatepass")
    return value
