"""The partition predicate language: GetPartitions ``Expression`` and Lake Formation's
``PartitionPredicate``, from text to a typed AST, its evaluation, and index range plans.

Flow: ``parse_expression`` / ``parse_partition_predicate`` (text -> AST with raw ``Literal``s)
-> ``bind`` (columns -> ``KeyRef``, literals -> values of the key's declared type)
-> ``evaluate`` (one partition's raw values -> bool) and ``plan_ranges`` (-> ``KeyRange``s that a
partition index can serve; the bound expression is re-applied to what they fetch).

Semantic choices (where Glue documents nothing more precise):

* Values compare as the partition key's declared type (``kind_of``): strings by code point
  (which is UTF-8 byte order, DynamoDB's key order); integers as Python ints, range-checked for
  their type (tinyint 8 bits ... bigint 64); decimals exactly with ``Decimal`` (precision and
  scale are not enforced: any finite decimal compares exactly); double/float as floats; dates
  ``yyyy-MM-dd`` (one-digit month/day accepted, as Java's ``yyyy-MM-dd`` parser does; years
  0001-9999); timestamps ``yyyy-MM-dd HH:mm:ss[.f{1,9}][Z|+hh:mm]`` with nanoseconds, offsets
  normalised to UTC; booleans ``true``/``false``. Unknown and complex types compare as strings.
  A literal that does not fit the key's type is an InvalidInputException.
* SQL three-valued logic. A key is NULL only when the partition has no value for it (the values
  list is shorter than the keys): Glue never stores null values and an empty string is a value.
  A stored value that does not convert to the key's type (``'abc'`` under an int key, possible
  on an unindexed table) is *unknown* like NULL: every comparison, BETWEEN, IN on it is unknown,
  so neither ``k = 1`` nor ``NOT k = 1`` matches it. Returning it would claim a typed comparison
  succeeded; raising would let one bad partition make the whole table unqueryable.
* LIKE matches the stored raw text (for every key type), case-sensitively, the whole value:
  ``%`` any run, ``_`` one character, everything else literal. It is matched without regex
  backtracking, so a pattern cannot make matching blow up.
* ``'literal' op column`` is accepted and turned around. Comparing two columns, arithmetic,
  ``= NULL``, and unquoted dates are InvalidInputExceptions with a hint.

The pyparsing grammar is built on first use, not at import (Lambda cold starts), and parsed
texts are cached.
"""

from __future__ import annotations

import datetime as _dt
import functools
import operator
import re
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Callable, Iterable, NamedTuple, Optional, Sequence, Union

from chalicelib.errors import InvalidInputException
from chalicelib.domain.keycodec import (BOOLEAN, DATE, DECIMAL, FLOAT, INT, STRING, TIMESTAMP,
                                       Timestamp, base_type, kind_of, successor)

__all__ = [
    "Literal", "KeyRef", "Compare", "Between", "In", "Like", "IsNull", "And", "Or", "Not",
    "TrueExpr", "TRUE", "Node", "Endpoint", "KeyRange",
    "parse_expression", "parse_partition_predicate", "bind", "parse_value", "evaluate",
    "conjuncts", "plan_ranges", "int_bits", "MAX_EXPRESSION_LENGTH", "MAX_PREDICATE_BYTES", "MAX_RANGES",
]

MAX_EXPRESSION_LENGTH = 2048  # characters, GetPartitions Expression
MAX_PREDICATE_BYTES = 2048  # UTF-8 bytes, Lake Formation PartitionPredicate
MAX_RANGES = 100  # more key ranges than this and a plan is not worth it: scan instead


# =========================================================================================== AST
@dataclass(frozen=True)
class Literal:
    """A literal as written, before binding: the text (quotes removed and unescaped) and
    whether it was quoted. ``pos`` (0-based character offset) is for error messages only."""

    text: str
    quoted: bool
    pos: int = field(default=-1, compare=False, repr=False)


@dataclass(frozen=True)
class KeyRef:
    """A bound column: the partition key's name (as declared), its position in the partition
    values, its declared Glue type and its comparison kind (``keycodec.kind_of``)."""

    name: str
    position: int
    glue_type: str
    kind: str


Column = Union[str, KeyRef]  # str before binding, KeyRef after


@dataclass(frozen=True)
class Compare:
    """``column op literal``; op is one of ``= <> < <= > >=`` (``!=`` is read as ``<>``)."""

    column: Column
    op: str
    literal: Any  # Literal before binding, a typed value after


@dataclass(frozen=True)
class Between:
    """``column [NOT] BETWEEN low AND high`` (both ends inclusive)."""

    column: Column
    low: Any
    high: Any
    negated: bool = False


@dataclass(frozen=True)
class In:
    """``column [NOT] IN (v1, v2, ...)``."""

    column: Column
    values: tuple[Any, ...]
    negated: bool = False


@dataclass(frozen=True)
class Like:
    """``column [NOT] LIKE 'pattern'``."""

    column: Column
    pattern: str
    negated: bool = False


@dataclass(frozen=True)
class IsNull:
    """``column IS [NOT] NULL``."""

    column: Column
    negated: bool = False


@dataclass(frozen=True)
class And:
    """Conjunction of two or more items (nested ANDs are flattened)."""

    items: tuple["Node", ...]


@dataclass(frozen=True)
class Or:
    """Disjunction of two or more items (nested ORs are flattened)."""

    items: tuple["Node", ...]


@dataclass(frozen=True)
class Not:
    """``NOT item``."""

    item: "Node"


@dataclass(frozen=True)
class TrueExpr:
    """The empty expression: every partition matches."""


TRUE = TrueExpr()

Node = Union[Compare, Between, In, Like, IsNull, And, Or, Not, TrueExpr]

# ======================================================================================= parsing
_KEYWORDS = ("AND", "OR", "NOT", "BETWEEN", "IN", "LIKE", "IS", "NULL", "TRUE", "FALSE")


def parse_expression(text: Optional[str]) -> Node:
    """Parse a GetPartitions Expression into an unbound AST.

    None, empty or whitespace-only text is ``TRUE`` (every partition). InvalidInputException for
    text over 2,048 characters or a syntax error (the message gives the character position).
    """
    if text is None:
        return TRUE
    if not isinstance(text, str):
        raise InvalidInputException("Expression must be a string")
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise InvalidInputException(
            f"Expression is {len(text)} characters long; the limit is {MAX_EXPRESSION_LENGTH}")
    return _parse_cached(text)


def parse_partition_predicate(text: Optional[str]) -> Node:
    """Parse a Lake Formation PartitionPredicate: only ``= > < >= <=`` comparisons joined by
    AND (parentheses allowed). InvalidInputException names any other construct."""
    if text is None:
        return TRUE
    if not isinstance(text, str):
        raise InvalidInputException("PartitionPredicate must be a string")
    size = len(text.encode("utf-8", errors="replace"))
    if size > MAX_PREDICATE_BYTES:
        raise InvalidInputException(
            f"PartitionPredicate is {size} bytes long; the limit is {MAX_PREDICATE_BYTES}")
    node = _parse_cached(text)
    _check_predicate_subset(node)
    return node


_PREDICATE_OPS = frozenset(("=", "<", "<=", ">", ">="))


def _check_predicate_subset(node: Node) -> None:
    if isinstance(node, TrueExpr):
        return
    if isinstance(node, And):
        for item in node.items:
            _check_predicate_subset(item)
        return
    if isinstance(node, Compare) and node.op in _PREDICATE_OPS:
        return
    raise InvalidInputException(
        f"{_construct_name(node)} is not allowed in PartitionPredicate: only comparisons with "
        "=, >, <, >=, <= joined by AND are supported")


def _construct_name(node: Node) -> str:
    neg = "NOT " if getattr(node, "negated", False) else ""
    if isinstance(node, Compare):
        return "The operator <> (!=)"
    if isinstance(node, IsNull):
        return "IS NOT NULL" if node.negated else "IS NULL"
    names = {Or: "OR", Not: "NOT", Between: "BETWEEN", In: "IN", Like: "LIKE"}
    return neg + names.get(type(node), type(node).__name__)


@functools.lru_cache(maxsize=512)
def _parse_cached(text: str) -> Node:
    if not text.strip():
        return TRUE
    grammar = _grammar()
    import pyparsing as pp  # already loaded by _grammar()

    try:
        return grammar.parse_string(text, parse_all=True)[0]
    except pp.ParseBaseException as error:
        raise InvalidInputException(_syntax_message(text, error)) from None
    except RecursionError:
        raise InvalidInputException("Expression is nested too deeply") from None


def _syntax_message(text: str, error: Any) -> str:
    loc = min(error.loc, len(text))
    near = text[loc:loc + 20].split("\n")[0]
    where = f"near '{near}'" if near.strip() else "at the end"
    return f"Syntax error in expression at character {loc + 1} ({where}): {error.msg}"


@functools.lru_cache(maxsize=None)
def _grammar() -> Any:
    """Build the pyparsing grammar (once; importing pyparsing is deferred to here)."""
    import pyparsing as pp

    kw = {name: pp.CaselessKeyword(name).set_name(name) for name in _KEYWORDS}
    lpar, rpar = pp.Suppress("(").set_name("'('"), pp.Suppress(")").set_name("')'")

    # Single regexes (not `~keyword + name`) so that each yields exactly one token.
    not_keyword = "(?!(?i:" + "|".join(_KEYWORDS) + r")(?![A-Za-z0-9_]))"
    plain_name = pp.Regex(not_keyword + r"[A-Za-z_][A-Za-z0-9_]*")
    quoted_name = pp.Regex(r"`(?:[^`]|``)+`").set_parse_action(lambda t: t[0][1:-1].replace("``", "`"))
    column = (quoted_name.set_name("column name") | plain_name.copy().set_name("column name")
              ).set_name("column name")

    def quoted(quote: str) -> Any:
        element = pp.Regex(f"{quote}(?:[^{quote}]|{quote}{quote})*{quote}").set_name("quoted string")
        return element.set_parse_action(
            lambda s, loc, t: Literal(t[0][1:-1].replace(quote * 2, quote), True, loc))

    string = (quoted("'") | quoted('"')).set_name("quoted string")
    number = pp.Regex(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?![\w.])").set_parse_action(
        lambda s, loc, t: Literal(t[0], False, loc))
    boolean = (kw["TRUE"] | kw["FALSE"]).set_parse_action(
        lambda s, loc, t: Literal(t[0].lower(), False, loc))
    # Alternatives that exist only to explain a common mistake better than "Expected literal".
    bare_date = pp.Regex(r"[+-]?[0-9]+(?:-[0-9]+)+").set_parse_action(_reject_bare_date)
    null = kw["NULL"].copy().set_parse_action(_reject_null)
    bare_word = plain_name.copy().set_parse_action(_reject_bare_word)
    for leaf in (string, number, boolean, bare_date, null, bare_word):
        leaf.set_name("literal")  # whichever alternative reports the failure, it reads the same
    literal = (string | bare_date | number | boolean | null).set_name("literal")
    value = (literal | bare_word).set_name("literal")

    pattern = (quoted("'") | quoted('"')).set_name("quoted pattern")
    cmp_op = pp.one_of("= <> != <= >= < >").set_name("comparison operator")

    # After the column comes a "tail" whose parse action returns build(column, negated) -> node;
    # one shared column prefix keeps error positions and messages precise.
    def tail(element: Any, build: Callable[..., Node]) -> Any:
        return element.set_parse_action(lambda t: functools.partial(build, t))

    between = tail(kw["BETWEEN"] - value("low") + kw["AND"] - value("high"),
                   lambda t, col, neg: Between(col, t["low"], t["high"], neg))
    in_list = tail(kw["IN"] - lpar - pp.Group(pp.DelimitedList(value))("values") - rpar,
                   lambda t, col, neg: In(col, tuple(t["values"]), neg))
    like = tail(kw["LIKE"] - pattern("pattern"), lambda t, col, neg: Like(col, t["pattern"].text, neg))
    negatable = (between | in_list | like).set_name("BETWEEN, IN or LIKE")
    negated = tail(pp.Suppress(kw["NOT"]) - negatable, lambda t, col, neg: t[0](col, not neg))
    is_null = tail(kw["IS"] - pp.Opt(kw["NOT"])("negated") - kw["NULL"],
                   lambda t, col, neg: IsNull(col, "negated" in t))
    compare = tail(cmp_op("op") - value("literal"),
                   lambda t, col, neg: Compare(col, _canonical_op(t["op"]), t["literal"]))
    operation = (negatable | negated | is_null | compare).set_name(
        "operator (=, <>, <, <=, >, >=, BETWEEN, IN, LIKE, IS)")
    column_first = (column + operation).set_parse_action(lambda t: t[1](t[0], False))
    literal_first = (literal("literal") + cmp_op("op") - column("column")).set_parse_action(
        lambda t: Compare(t["column"], _FLIPPED[_canonical_op(t["op"])], t["literal"]))
    predicate = (column_first | literal_first).set_name("condition")

    # NOT binds tighter than AND, which binds tighter than OR. Hand-written levels rather than
    # infix_notation, which backtracks exponentially on nested parentheses without packrat.
    expression = pp.Forward().set_name("expression")
    atom = (predicate | lpar - expression - rpar).set_name("condition")
    negation = pp.Forward().set_name("condition")
    negation <<= ((pp.Suppress(kw["NOT"]) - negation).set_parse_action(lambda t: Not(t[0]))
                  | atom).set_name("condition")
    conjunction = (negation + pp.ZeroOrMore(pp.Suppress(kw["AND"]) - negation)).set_parse_action(
        lambda t: _flatten(And, t))
    expression <<= (conjunction + pp.ZeroOrMore(pp.Suppress(kw["OR"]) - conjunction)).set_parse_action(
        lambda t: _flatten(Or, t))
    return expression


_FLIPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _canonical_op(op: str) -> str:
    return "<>" if op == "!=" else op


def _flatten(kind: type, tokens: Iterable[Node]) -> Node:
    items: list[Node] = []
    for item in tokens:
        items.extend(item.items if isinstance(item, kind) else (item,))
    return items[0] if len(items) == 1 else kind(tuple(items))


def _reject_bare_date(text: str, loc: int, tokens: Any) -> None:
    raise InvalidInputException(
        f"Unquoted value {tokens[0]} at character {loc + 1}: arithmetic is not supported; "
        f"quote dates as string literals, e.g. '{tokens[0].lstrip('+')}'")


def _reject_null(text: str, loc: int, tokens: Any) -> None:
    raise InvalidInputException(
        f"NULL at character {loc + 1} cannot be compared; use IS NULL or IS NOT NULL")


def _reject_bare_word(text: str, loc: int, tokens: Any) -> None:
    raise InvalidInputException(
        f"Unquoted value {tokens[0]} at character {loc + 1}: quote string literals "
        f"('{tokens[0]}'); comparing two columns is not supported")


# ============================================================================ binding and typing
def bind(node: Node, partition_keys: Sequence[tuple[str, str]]) -> Node:
    """Resolve columns against the table's partition keys ``[(name, glue_type), ...]`` (in
    partition-value order) and convert literals to the keys' types.

    Column names match case-insensitively. InvalidInputException for a column that is not a
    partition key (the message lists the keys) or a literal that does not fit its key's type.
    """
    keys: dict[str, KeyRef] = {}
    for position, (name, glue_type) in enumerate(partition_keys):
        keys.setdefault(name.lower(), KeyRef(name, position, glue_type, kind_of(glue_type)))
    return _bind(node, keys)


def _bind(node: Node, keys: dict[str, KeyRef]) -> Node:
    if isinstance(node, TrueExpr):
        return node
    if isinstance(node, (And, Or)):
        return type(node)(tuple(_bind(item, keys) for item in node.items))
    if isinstance(node, Not):
        return Not(_bind(node.item, keys))
    ref = _resolve(node.column, keys)
    if isinstance(node, Compare):
        return Compare(ref, node.op, _typed_literal(node.literal, ref))
    if isinstance(node, Between):
        return Between(ref, _typed_literal(node.low, ref), _typed_literal(node.high, ref), node.negated)
    if isinstance(node, In):
        return In(ref, tuple(_typed_literal(v, ref) for v in node.values), node.negated)
    return replace(node, column=ref)  # Like, IsNull: nothing to convert


def _resolve(column: Column, keys: dict[str, KeyRef]) -> KeyRef:
    name = column.name if isinstance(column, KeyRef) else column
    ref = keys.get(name.lower())
    if ref is None:
        known = ", ".join(k.name for k in keys.values()) or "none: the table is not partitioned"
        raise InvalidInputException(
            f"Column '{name}' in the expression is not a partition key; partition keys: {known}")
    return ref


def _typed_literal(literal: Literal, ref: KeyRef) -> Any:
    if ref.kind == STRING:
        return literal.text  # an unquoted number on a string key compares as its text
    try:
        return _convert(literal.text, ref.kind, ref.glue_type)
    except ValueError as why:
        shown = f"'{literal.text}'" if literal.quoted else literal.text
        where = f" at character {literal.pos + 1}" if literal.pos >= 0 else ""
        raise InvalidInputException(
            f"Literal {shown}{where} is not a valid {ref.glue_type} value for partition key "
            f"'{ref.name}': {why}") from None


def parse_value(text: str, glue_type: str) -> Any:
    """A raw partition value (as stored by Glue) as a value of the Glue type, the same way
    expression literals are converted; InvalidInputException if it does not fit (use it to
    validate indexed partition values before ``keycodec.encode_key``)."""
    try:
        return _convert(text, kind_of(glue_type), glue_type)
    except ValueError as why:
        raise InvalidInputException(f"Partition value '{text}' is not a valid {glue_type}: {why}") from None


_INT_RE = re.compile(r"[+-]?[0-9]{1,30}")
_DECIMAL_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_FLOAT_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DATE_RE = re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})")
_TIMESTAMP_RE = re.compile(
    r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})[ T]([0-9]{1,2}):([0-9]{2}):([0-9]{2})"
    r"(?:\.([0-9]{1,9}))?\s*(Z|[+-][0-9]{2}:?[0-9]{2})?")
_INT_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "integer": 32}  # others: 64


def int_bits(glue_type: str) -> int:
    """The width of an integer Glue type: tinyint 8, smallint 16, int 32, bigint/long 64."""
    return _INT_BITS.get(base_type(glue_type), 64)


def _convert(text: str, kind: str, glue_type: str) -> Any:
    """Raw text -> typed value; ValueError (with a reason) when it does not fit."""
    if kind == STRING:
        return text
    if kind == INT:
        return _to_int(text, glue_type)
    if kind == DECIMAL:
        if not _DECIMAL_RE.fullmatch(text):
            raise ValueError("expected a decimal number")
        return Decimal(text)
    if kind == FLOAT:
        return _to_float(text)
    if kind == DATE:
        return _to_date(text)
    if kind == TIMESTAMP:
        return _to_timestamp(text)
    if kind == BOOLEAN:
        if text.lower() not in ("true", "false"):
            raise ValueError("expected true or false")
        return text.lower() == "true"
    raise ValueError(f"unsupported kind {kind}")


def _to_int(text: str, glue_type: str) -> int:
    if not _INT_RE.fullmatch(text):
        raise ValueError("expected an integer")
    value = int(text)
    bits = int_bits(glue_type)
    if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
        raise ValueError(f"out of range for {base_type(glue_type)}")
    return value


def _to_float(text: str) -> float:
    if not _FLOAT_RE.fullmatch(text):
        raise ValueError("expected a number")
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError("out of range for double")
    return value + 0.0  # -0.0 -> 0.0: equal values must look alike (index keys)


def _to_date(text: str) -> _dt.date:
    match = _DATE_RE.fullmatch(text)
    if not match:
        raise ValueError("expected yyyy-MM-dd")
    try:
        return _dt.date(*map(int, match.groups()))
    except ValueError as why:
        raise ValueError(f"expected yyyy-MM-dd ({why})") from None


def _to_timestamp(text: str) -> Timestamp:
    match = _TIMESTAMP_RE.fullmatch(text)
    if not match:
        raise ValueError("expected yyyy-MM-dd HH:mm:ss[.fffffffff]")
    *fields, fraction, offset = match.groups()
    zone = None
    if offset:
        zone = _dt.timezone.utc
        if offset != "Z":
            sign = -1 if offset[0] == "-" else 1
            digits = offset[1:].replace(":", "")
            zone = _dt.timezone(sign * _dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
    try:
        moment = _dt.datetime(*map(int, fields), tzinfo=zone)
        return Timestamp.from_parts(moment, int((fraction or "0").ljust(9, "0")))
    except (ValueError, OverflowError) as why:
        raise ValueError(f"expected yyyy-MM-dd HH:mm:ss[.fffffffff] ({why})") from None


# ==================================================================================== evaluation
_NULL = object()  # the partition has no value for the key
_INVALID = object()  # the stored value does not convert to the key's type

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq, "<>": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


class _Row:
    """One partition's raw values, converting each key at most once per evaluation."""

    __slots__ = ("raw", "typed")

    def __init__(self, raw: Sequence[Optional[str]]) -> None:
        self.raw = raw
        self.typed: dict[int, Any] = {}

    def text(self, ref: KeyRef) -> Optional[str]:
        return self.raw[ref.position] if ref.position < len(self.raw) else None

    def value(self, ref: KeyRef) -> Any:
        try:
            return self.typed[ref.position]
        except KeyError:
            pass
        text = self.text(ref)
        if text is None:
            value = _NULL
        else:
            try:
                value = _convert(text, ref.kind, ref.glue_type)
            except ValueError:
                value = _INVALID
        self.typed[ref.position] = value
        return value


def evaluate(node: Node, values: Sequence[Optional[str]]) -> bool:
    """Whether a partition matches a bound expression; ``values`` are its raw values in
    partition-key order. Unknown (NULL or unconvertible operands) counts as no match."""
    return _eval(node, _Row(values)) is True


def _eval(node: Node, row: _Row) -> Optional[bool]:
    """Three-valued: True, False or None (unknown)."""
    kind = type(node)
    if kind is And:
        result: Optional[bool] = True
        for item in node.items:
            outcome = _eval(item, row)
            if outcome is False:
                return False
            if outcome is None:
                result = None
        return result
    if kind is Or:
        result = False
        for item in node.items:
            outcome = _eval(item, row)
            if outcome is True:
                return True
            if outcome is None:
                result = None
        return result
    if kind is Not:
        outcome = _eval(node.item, row)
        return None if outcome is None else not outcome
    if kind is TrueExpr:
        return True
    if kind is IsNull:
        return (row.text(node.column) is None) != node.negated
    if kind is Like:
        text = row.text(node.column)
        return None if text is None else _like_matcher(node.pattern)(text) != node.negated
    value = row.value(node.column)
    if value is _NULL or value is _INVALID:
        return None
    if kind is Compare:
        return _OPS[node.op](value, node.literal)
    if kind is Between:
        return (node.low <= value <= node.high) != node.negated
    if kind is In:
        return (value in node.values) != node.negated
    raise TypeError(f"not an expression node: {node!r}")


@functools.lru_cache(maxsize=256)
def _like_matcher(pattern: str) -> Callable[[str], bool]:
    """A matcher for a LIKE pattern. Split at ``%``: the first piece must match at the start,
    the last at the end, and each middle piece at its leftmost place in between (leftmost is
    always the best choice, so there is no backtracking). Pieces are fixed-length regexes
    (escaped characters, ``_`` as ``.``)."""
    pieces = [re.compile("".join("." if c == "_" else re.escape(c) for c in piece), re.DOTALL)
              for piece in pattern.split("%")]
    widths = [len(piece) for piece in pattern.split("%")]
    if len(pieces) == 1:
        return lambda text: pieces[0].fullmatch(text) is not None

    def match(text: str) -> bool:
        start, end = widths[0], len(text) - widths[-1]
        if end < start or not pieces[0].match(text) or not pieces[-1].fullmatch(text, end):
            return False
        for piece in pieces[1:-1]:
            found = piece.search(text, start, end)
            if found is None:
                return False
            start = found.end()
        return True

    return match


# ===================================================================================== planning
def conjuncts(node: Node) -> tuple[Node, ...]:
    """The top-level AND items of an expression (``()`` for TRUE, ``(node,)`` otherwise)."""
    if isinstance(node, TrueExpr):
        return ()
    if isinstance(node, And):
        return node.items
    return (node,)


class Endpoint(NamedTuple):
    """One end of a key range: a typed value and whether it is included."""

    value: Any
    inclusive: bool


@dataclass(frozen=True)
class KeyRange:
    """Index keys ``k1..kn`` with ``k1..kp = equals`` and, when set, ``low``/``high`` bounding
    ``k(p+1)``. Later keys are unconstrained. See ``keycodec.range_bounds`` for sort keys."""

    equals: tuple[Any, ...] = ()
    low: Optional[Endpoint] = None
    high: Optional[Endpoint] = None


_Interval = tuple[Optional[Endpoint], Optional[Endpoint]]
_Box = dict[str, _Interval]  # index key name (lowercase) -> interval; absent = unconstrained


def plan_ranges(node: Node, index_keys: Sequence[str]) -> Optional[list[KeyRange]]:
    """Key ranges of a partition index that together hold every partition the bound expression
    can match (a superset: always re-apply ``evaluate`` to what they fetch).

    ``index_keys`` are the index's key names in index order. Returns None when the index cannot
    narrow the search (some alternative leaves the first index key unconstrained, or more than
    ``MAX_RANGES`` ranges would be needed): scan instead. Returns ``[]`` when no partition can
    match. Ranges are distinct but may overlap: merge their sort-key bounds
    (``keycodec.merge_bounds``) before querying so no partition is fetched twice.

    Uses ``= < <= > >= BETWEEN`` on index keys, IN and ORs of those (expanded into several
    ranges), ``LIKE 'prefix%'`` on string keys, and NOT (pushed down to the comparisons).
    """
    names = [name.lower() for name in index_keys]
    ranges: list[KeyRange] = []
    for box in _boxes(node, frozenset(names)):
        key_range = _to_key_range(box, names)
        if key_range is None:
            return None
        if key_range not in ranges:
            ranges.append(key_range)
    return ranges if len(ranges) <= MAX_RANGES else None


def _everything() -> list[_Box]:
    return [{}]


def _boxes(node: Node, index: frozenset[str]) -> list[_Box]:
    """Boxes (a constraint per index key) whose union holds every match of node."""
    if isinstance(node, And):
        return _and_boxes(node.items, index)
    if isinstance(node, Or):
        return _or_boxes(node.items, index)
    if isinstance(node, Not):
        return _boxes(_negate(node.item), index)
    if isinstance(node, (TrueExpr, IsNull)) or node.column.name.lower() not in index:
        return _everything()
    name = node.column.name.lower()
    if isinstance(node, Compare):
        return _compare_boxes(name, node)
    if node.negated:
        return _everything()  # NOT BETWEEN / NOT IN / NOT LIKE: no single range helps
    if isinstance(node, Between):
        interval = _intersect_intervals((Endpoint(node.low, True), None), (None, Endpoint(node.high, True)))
        return [] if interval is None else [{name: interval}]
    if isinstance(node, In):
        boxes = _dedupe({name: _point(v)} for v in node.values)
        return boxes if len(boxes) <= MAX_RANGES else _everything()
    if isinstance(node, Like) and node.column.kind == STRING:
        return _like_boxes(name, node.pattern)
    return _everything()


def _compare_boxes(name: str, node: Compare) -> list[_Box]:
    value = node.literal
    if node.op == "<" and node.column.kind == STRING and value == "":
        return []  # nothing sorts below the empty string
    intervals: dict[str, _Interval] = {
        "=": _point(value),
        "<": (None, Endpoint(value, False)), "<=": (None, Endpoint(value, True)),
        ">": (Endpoint(value, False), None), ">=": (Endpoint(value, True), None),
    }
    interval = intervals.get(node.op)
    return _everything() if interval is None else [{name: interval}]  # <> is not a range


def _like_boxes(name: str, pattern: str) -> list[_Box]:
    prefix = re.split("[%_]", pattern, maxsplit=1)[0]
    if prefix == pattern:
        return [{name: _point(pattern)}]
    if not prefix:
        return _everything()
    above = successor(prefix)
    return [{name: (Endpoint(prefix, True), None if above is None else Endpoint(above, False))}]


def _and_boxes(items: Sequence[Node], index: frozenset[str]) -> list[_Box]:
    result = _everything()
    for boxes in sorted((_boxes(item, index) for item in items), key=len):
        if len(result) * len(boxes) > MAX_RANGES:
            continue  # too many combinations: leave this item to the residual filter
        result = _dedupe(merged for a in result for b in boxes
                         if (merged := _intersect_boxes(a, b)) is not None)
        if not result:
            return []
    return result


def _or_boxes(items: Sequence[Node], index: frozenset[str]) -> list[_Box]:
    result: list[_Box] = []
    for item in items:
        boxes = _boxes(item, index)
        if any(not box for box in boxes):
            return _everything()
        result.extend(boxes)
    result = _dedupe(result)
    return result if len(result) <= MAX_RANGES else _everything()


_NEGATED_OPS = {"=": "<>", "<>": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def _negate(node: Node) -> Node:
    """NOT node, pushed inwards. Exact under three-valued logic: NOT x is true exactly when x is
    false, and a comparison is false only on a present, convertible value."""
    if isinstance(node, Compare):
        return Compare(node.column, _NEGATED_OPS[node.op], node.literal)
    if isinstance(node, (Between, In, Like, IsNull)):
        return replace(node, negated=not node.negated)
    if isinstance(node, And):
        return Or(tuple(_negate(item) for item in node.items))
    if isinstance(node, Or):
        return And(tuple(_negate(item) for item in node.items))
    if isinstance(node, Not):
        return node.item
    return Or(())  # NOT TRUE: an empty OR, which nothing matches


def _point(value: Any) -> _Interval:
    return (Endpoint(value, True), Endpoint(value, True))


def _intersect_boxes(a: _Box, b: _Box) -> Optional[_Box]:
    merged = dict(a)
    for name, interval in b.items():
        if name in merged:
            interval = _intersect_intervals(merged[name], interval)
            if interval is None:
                return None
        merged[name] = interval
    return merged


def _intersect_intervals(x: _Interval, y: _Interval) -> Optional[_Interval]:
    """The intersection, or None if it is empty."""
    low = _tighter(x[0], y[0], operator.gt)
    high = _tighter(x[1], y[1], operator.lt)
    if low is not None and high is not None:
        if low.value > high.value or (low.value == high.value and not (low.inclusive and high.inclusive)):
            return None
    return (low, high)


def _tighter(a: Optional[Endpoint], b: Optional[Endpoint], beyond: Callable[[Any, Any], bool]
             ) -> Optional[Endpoint]:
    if a is None or b is None:
        return a if b is None else b
    if beyond(a.value, b.value):
        return a
    if beyond(b.value, a.value):
        return b
    return Endpoint(a.value, a.inclusive and b.inclusive)


def _dedupe(boxes: Iterable[_Box]) -> list[_Box]:
    seen: dict[tuple[Any, ...], _Box] = {}
    for box in boxes:
        seen.setdefault(tuple(sorted(box.items())), box)
    return list(seen.values())


def _to_key_range(box: _Box, index_keys: Sequence[str]) -> Optional[KeyRange]:
    """The box's equality prefix plus the range on the next key; None if the first index key
    is unconstrained (the index does not help)."""
    equals: list[Any] = []
    for name in index_keys:
        interval = box.get(name)
        if interval is None:
            break
        low, high = interval
        if low is not None and high is not None and low.inclusive and high.inclusive \
                and low.value == high.value:
            equals.append(low.value)
            continue
        return KeyRange(tuple(equals), low, high)
    return KeyRange(tuple(equals)) if equals else None
