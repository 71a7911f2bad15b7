"""Parsing: GetPartitions ``Expression`` and Lake Formation ``PartitionPredicate`` text to an
unbound AST (columns as names, literals as written).

The pyparsing grammar is built on first use, not at import (Lambda cold starts), and parsed
texts are cached.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterable, Optional

from chalicelib.domain.expressions.nodes import (TRUE, And, Between, Compare, In, IsNull, Like,
                                                 Literal, Node, Not, Or, TrueExpr)
from chalicelib.errors import InvalidInputException

MAX_EXPRESSION_LENGTH = 2048  # characters, GetPartitions Expression
MAX_PREDICATE_BYTES = 2048  # UTF-8 bytes, Lake Formation PartitionPredicate

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
    column = _parenthesised((quoted_name.set_name("column name") | plain_name.copy().set_name("column name")
                             ).set_name("column name"))

    def quoted(quote: str) -> Any:
        element = pp.Regex(f"{quote}(?:[^{quote}]|{quote}{quote})*{quote}").set_name("quoted string")
        return element.set_parse_action(
            lambda s, loc, t: Literal(t[0][1:-1].replace(quote * 2, quote), True, loc))

    string = (quoted("'") | quoted('"')).set_name("quoted string")
    # JSQLParser's number tokens: integers, decimals and exponent notation (``3e14``, ``1E+3``).
    number = pp.Regex(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?(?![\w.])").set_parse_action(
        lambda s, loc, t: Literal(t[0], False, loc))
    boolean = (kw["TRUE"] | kw["FALSE"]).set_parse_action(
        lambda s, loc, t: Literal(t[0].lower(), False, loc))
    # Alternatives that exist only to explain a common mistake better than "Expected literal".
    bare_date = pp.Regex(r"[+-]?[0-9]+(?:-[0-9]+)+").set_parse_action(_reject_bare_date)
    null = kw["NULL"].copy().set_parse_action(_reject_null)
    bare_word = plain_name.copy().set_parse_action(_reject_bare_word)
    for leaf in (string, number, boolean, bare_date, null, bare_word):
        leaf.set_name("literal")  # whichever alternative reports the failure, it reads the same
    literal = _parenthesised((string | bare_date | number | boolean | null).set_name("literal"))
    value = (literal | _parenthesised(bare_word)).set_name("literal")

    pattern = _parenthesised((quoted("'") | quoted('"')).set_name("quoted pattern"))
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


def _parenthesised(element: Any) -> Any:
    """``element`` optionally wrapped in any number of parentheses: JSQLParser reads
    ``(year) = (2020)`` and ``year IN ((2020), 2021)`` as the bare operands.

    Counted rather than a recursive ``lpar + wrapped + rpar``: a ``(`` that opens a condition
    (``(year = 2020)``) is tried as an operand first, and with recursion every nesting level
    would re-descend all the levels inside it (quadratic pyparsing work: 50 levels took 0.16 s).
    Counting reads ahead once per attempt. A failure before the operand's last ``)`` is an
    ordinary (backtracking) ParseException, so the condition alternative still gets its turn and
    real syntax errors keep their messages."""
    import pyparsing as pp

    class Parenthesised(pp.ParseElementEnhance):
        def parseImpl(self, instring: str, loc: int, do_actions: bool = True) -> Any:
            depth = 0
            while True:
                loc = _skip_space(instring, loc)
                if not instring.startswith("(", loc):
                    break
                depth, loc = depth + 1, loc + 1
            loc, tokens = self.expr._parse(instring, loc, do_actions)
            for _ in range(depth):
                loc = _skip_space(instring, loc)
                if not instring.startswith(")", loc):
                    raise pp.ParseException(instring, loc, "Expected ')'", self)
                loc += 1
            return loc, tokens

    return Parenthesised(element).set_name(element.customName)


def _skip_space(text: str, loc: int) -> int:
    while loc < len(text) and text[loc] in " \t\r\n":
        loc += 1
    return loc


_FLIPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _canonical_op(op: str) -> str:
    return "<>" if op == "!=" else op


def _flatten(kind: type[And] | type[Or], tokens: Iterable[Node]) -> Node:
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
