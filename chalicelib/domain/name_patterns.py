"""Glue's table-name pattern (GetTables ``Expression``), which follows Hive's conventions.

``*`` is a wildcard for any run of characters (``.*`` works too), ``|`` separates alternatives,
and the rest is a small regular-expression language: literals, ``.``, classes (``[a-z_]``,
``[^0-9]``, ``\\d \\w \\s`` and their negations), groups ``( )`` / ``(?: )``, the quantifiers
``* + ?`` (``*`` quantifies only after ``.``, ``]`` or ``)``; after anything else it is Hive's
wildcard), and ``^`` / ``$``. A name matches when the whole of it matches, ignoring case.

Matching must never depend on backtracking: ``(a+)+b`` against a 26-letter name took seconds
with Python's ``re`` and held the GIL, stalling every other request. So a pattern is compiled
into a Thompson NFA and run as a set of states, one step per character of the name: time is
linear in the name's length times the pattern's size, whatever the pattern. The sets met are
cached as DFA transitions, so a step is usually one dictionary lookup. Anything outside the
language (backreferences, lookarounds, ``{m,n}``...) is refused rather than approximated, and
so is a pattern longer than ``MAX_EXPRESSION_CHARS``.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import Callable, Optional

from chalicelib.errors import InvalidInputException

MAX_EXPRESSION_CHARS = 512
_MAX_GROUP_DEPTH = 32
_MAX_CACHED_TRANSITIONS = 20_000

CharTest = Callable[[str], bool]

# NFA state kinds.
_CHAR, _SPLIT, _START, _END, _MATCH = range(5)

_CLASS_ESCAPES: dict[str, CharTest] = {
    "d": str.isdecimal,
    "w": lambda ch: ch.isalnum() or ch == "_",
    "s": str.isspace,
}
_CONTROL_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v"}


def _escape_test(letter: str) -> Optional[CharTest]:
    """The test for ``\\d \\w \\s \\D \\W \\S``; None for other letters."""
    test = _CLASS_ESCAPES.get(letter.lower())
    if test is None:
        return None
    if letter.isupper():
        return lambda ch: not test(ch)
    return test


def _literal(ch: str) -> CharTest:
    variants = frozenset((ch, ch.lower(), ch.upper()))
    return variants.__contains__


def _any(ch: str) -> bool:
    return True


class _Invalid(Exception):
    """Why a pattern is not in the supported language (becomes InvalidInputException)."""


# ----------------------------------------------------------------------------- syntax tree
# ("char", test) | ("cat", [nodes]) | ("alt", [nodes]) | ("star"|"plus"|"opt", node)
# | ("start",) | ("end",)
Node = tuple


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def take(self) -> str:
        ch = self.peek()
        self.pos += 1
        return ch

    def parse(self) -> Node:
        # Hive trims the top-level alternatives ("orders | customers").
        alternatives = [self.concatenation(top=True)]
        while self.peek() == "|":
            self.pos += 1
            alternatives.append(self.concatenation(top=True))
        if self.pos < len(self.text):
            raise _Invalid(f"unbalanced ')' at character {self.pos + 1}")
        return ("alt", alternatives)

    def alternation(self) -> Node:
        alternatives = [self.concatenation()]
        while self.peek() == "|":
            self.pos += 1
            alternatives.append(self.concatenation())
        return ("alt", alternatives)

    def concatenation(self, top: bool = False) -> Node:
        if top:  # Hive trims the top-level alternatives ("orders | customers")
            while self.peek() in (" ", "\t"):
                self.pos += 1
        items: list[Node] = []
        sources: list[str] = []  # each item's text, to trim trailing blanks
        quantified = False  # whether the last item ends with a quantifier
        while self.pos < len(self.text) and self.peek() not in "|)":
            start = self.pos
            ch = self.take()
            previous = self.text[start - 1] if start > 0 else ""
            if ch == "*" and items and not quantified and previous in ".])":
                items[-1], quantified = ("star", items[-1]), True
            elif ch == "*":
                items.append(("star", ("char", _any)))  # Hive's wildcard
                sources.append(ch)
                quantified = True
            elif ch == "?" and quantified and previous in "*+?":
                continue  # lazy: the same set of whole-name matches
            elif ch in "+?":
                if not items or quantified or items[-1][0] in ("start", "end"):
                    raise _Invalid(f"'{ch}' at character {start + 1} has nothing (or a quantifier) to repeat")
                items[-1], quantified = ("plus" if ch == "+" else "opt", items[-1]), True
            else:
                items.append(self.atom(ch, start))
                sources.append(self.text[start:self.pos])
                quantified = False
        if top:
            while sources and sources[-1] in (" ", "\t") and items[-1][0] == "char":
                items.pop()
                sources.pop()
        return ("cat", items)

    def atom(self, ch: str, start: int) -> Node:
        if ch == ".":
            return ("char", _any)
        if ch == "^":
            return ("start",)
        if ch == "$":
            return ("end",)
        if ch == "[":
            return ("char", self.char_class(start))
        if ch == "(":
            if self.peek() == "?":
                if self.text[self.pos:self.pos + 2] != "?:":
                    raise _Invalid(f"'(?' at character {start + 1}: only '(?:' groups are supported")
                self.pos += 2
            self.depth += 1
            if self.depth > _MAX_GROUP_DEPTH:
                raise _Invalid(f"groups nest more than {_MAX_GROUP_DEPTH} deep")
            inner = self.alternation()
            self.depth -= 1
            if self.take() != ")":
                raise _Invalid(f"missing ')' for the group opened at character {start + 1}")
            return inner
        if ch == "\\":
            return ("char", self.escape(start, in_class=False))
        if ch in "{}":
            raise _Invalid(f"'{ch}' at character {start + 1}: counted repetition is not supported")
        return ("char", _literal(ch))

    def escape(self, start: int, in_class: bool) -> CharTest:
        letter = self.take()
        if not letter:
            raise _Invalid("the pattern ends with an unfinished escape '\\'")
        test = _escape_test(letter)
        if test is not None:
            return test
        if letter in _CONTROL_ESCAPES:
            return _literal(_CONTROL_ESCAPES[letter])
        if letter.isalnum():
            raise _Invalid(f"'\\{letter}' at character {start + 1} is not supported")
        return _literal(letter)

    def char_class(self, start: int) -> CharTest:
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        tests: list[CharTest] = []
        chars: set[str] = set()
        ranges: list[tuple[str, str]] = []
        first = True
        while True:
            ch = self.take()
            if not ch:
                raise _Invalid(f"missing ']' for the class opened at character {start + 1}")
            if ch == "]" and not first:
                break
            first = False
            if ch == "[" and self.peek() in ":=.":
                raise _Invalid(f"POSIX classes ('[{self.peek()}') at character {self.pos} are not supported")
            if ch == "\\":
                letter = self.peek()
                escape = _escape_test(letter)
                if escape is not None:
                    self.pos += 1
                    tests.append(escape)
                    continue
                if not letter:
                    raise _Invalid(f"missing ']' for the class opened at character {start + 1}")
                if letter.isalnum() and letter not in _CONTROL_ESCAPES:
                    raise _Invalid(f"'\\{letter}' at character {self.pos} is not supported")
                self.pos += 1
                ch = _CONTROL_ESCAPES.get(letter, letter)
            if self.peek() == "-" and self.pos + 1 < len(self.text) and self.text[self.pos + 1] != "]":
                self.pos += 1
                high = self.take()
                if high == "\\":
                    high = self.take()
                    if high.isalnum() and high not in _CONTROL_ESCAPES:
                        raise _Invalid(f"'\\{high}' at character {self.pos - 1} cannot end a range")
                    high = _CONTROL_ESCAPES.get(high, high)
                if high < ch:
                    raise _Invalid(f"bad range '{ch}-{high}' at character {self.pos - 2}")
                ranges.append((ch, high))
            else:
                chars.add(ch)

        def member(ch: str) -> bool:
            return ch in chars or any(low <= ch <= high for low, high in ranges) or any(t(ch) for t in tests)

        def test(ch: str) -> bool:
            found = member(ch) or member(ch.lower()) or member(ch.upper())
            return found != negated
        return test


# ------------------------------------------------------------------------------------- NFA
def _no_char(ch: str) -> bool:
    """The test of a state that consumes no character (never called: only _CHAR states test)."""
    return False


@dataclass
class _State:
    kind: int
    test: CharTest = _no_char
    out: int = -1
    out2: int = -1


class _Builder:
    """Thompson's construction: every node becomes a fragment (start, dangling exits)."""

    def __init__(self) -> None:
        self.states: list[_State] = []

    def add(self, kind: int, test: CharTest = _no_char) -> int:
        self.states.append(_State(kind, test))
        return len(self.states) - 1

    def patch(self, exits: list[tuple[int, int]], target: int) -> None:
        for index, slot in exits:
            if slot == 1:
                self.states[index].out = target
            else:
                self.states[index].out2 = target

    def build(self, node: Node) -> tuple[int, list[tuple[int, int]]]:
        kind = node[0]
        if kind == "char":
            state = self.add(_CHAR, node[1])
            return state, [(state, 1)]
        if kind in ("start", "end"):
            state = self.add(_START if kind == "start" else _END)
            return state, [(state, 1)]
        if kind == "cat":
            if not node[1]:
                state = self.add(_SPLIT)  # an empty sequence: one epsilon step (out2 stays -1: none)
                return state, [(state, 1)]
            start, exits = self.build(node[1][0])
            for item in node[1][1:]:
                item_start, item_exits = self.build(item)
                self.patch(exits, item_start)
                exits = item_exits
            return start, exits
        if kind == "alt":
            start, exits = self.build(node[1][0])
            for item in node[1][1:]:
                item_start, item_exits = self.build(item)
                split = self.add(_SPLIT)
                self.states[split].out, self.states[split].out2 = start, item_start
                start, exits = split, exits + item_exits
            return start, exits
        inner_start, inner_exits = self.build(node[1])
        split = self.add(_SPLIT)
        self.states[split].out = inner_start
        if kind == "star":
            self.patch(inner_exits, split)
            return split, [(split, 2)]
        if kind == "plus":
            self.patch(inner_exits, split)
            return inner_start, [(split, 2)]
        return split, inner_exits + [(split, 2)]  # opt


class NamePattern:
    """A compiled GetTables Expression; ``matches(name)`` runs in time linear in the name."""

    def __init__(self, expression: str, tree: Node) -> None:
        self.expression = expression
        builder = _Builder()
        start, exits = builder.build(tree)
        match = builder.add(_MATCH)
        builder.patch(exits, match)
        self._states = builder.states
        self._start = start
        self.steps = 0  # NFA states visited (and cached steps taken): lets tests check the work
        # The lazily built DFA: each set of NFA states met gets an id (comparing ids, not sets,
        # keeps a cached step O(1) however many states the set holds).
        self._sets: list[frozenset[int]] = []
        self._ids: dict[frozenset[int], int] = {}
        self._transitions: dict[tuple[int, str], int] = {}
        self._accepting: dict[int, bool] = {}
        self._lock = threading.Lock()

    def _id(self, states: frozenset[int]) -> int:
        found = self._ids.get(states)
        if found is None:
            found = self._ids[states] = len(self._sets)
            self._sets.append(states)
        return found

    def _closure(self, seeds: list[int], at_start: bool, at_end: bool) -> frozenset[int]:
        """Every state reachable from ``seeds`` without consuming a character."""
        seen: set[int] = set()
        stack = list(seeds)
        while stack:
            index = stack.pop()
            if index < 0 or index in seen:
                continue
            seen.add(index)
            self.steps += 1
            state = self._states[index]
            if state.kind == _SPLIT:
                stack.append(state.out)
                stack.append(state.out2)
            elif (state.kind == _START and at_start) or (state.kind == _END and at_end):
                stack.append(state.out)
        return frozenset(seen)

    def _step(self, current: int, ch: str) -> int:
        key = (current, ch)
        found = self._transitions.get(key)
        self.steps += 1
        if found is None:
            seeds = []
            for index in self._sets[current]:
                state = self._states[index]
                self.steps += 1
                if state.kind == _CHAR and state.test(ch):
                    seeds.append(state.out)
            found = self._transitions[key] = self._id(self._closure(seeds, at_start=False, at_end=False))
        return found

    def _accepts(self, current: int) -> bool:
        found = self._accepting.get(current)
        if found is None:
            # At the end of the name '$' may still be passed.
            ends = self._closure(list(self._sets[current]), at_start=False, at_end=True)
            found = self._accepting[current] = any(self._states[i].kind == _MATCH for i in ends)
        return found

    def matches(self, name: str) -> bool:
        """Whether the whole of ``name`` matches, ignoring case."""
        if not name:
            ends = self._closure([self._start], at_start=True, at_end=True)
            return any(self._states[i].kind == _MATCH for i in ends)
        # Compiled patterns are shared (cached) across the server's threads, and so is their DFA.
        with self._lock:
            if len(self._transitions) > _MAX_CACHED_TRANSITIONS:
                # A bound on memory; each name adds at most one transition per character, and
                # matching stays linear without the cache.
                self._sets, self._ids, self._transitions, self._accepting = [], {}, {}, {}
            if not self._sets:
                self._id(self._closure([self._start], at_start=True, at_end=False))  # id 0
                self._id(frozenset())  # id 1: no state left, the name cannot match
            current, dead = 0, 1
            for ch in name:
                current = self._step(current, ch)
                if current == dead:
                    return False
            return self._accepts(current)


@functools.lru_cache(maxsize=256)
def compile_name_pattern(expression: str, field: str = "Expression") -> NamePattern:
    """Compile a GetTables Expression (or another member in the same language, such as
    GetUserDefinedFunctions' Pattern: ``field`` names it in errors); InvalidInputException if it
    is not a supported pattern."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise InvalidInputException(
            f"{field} is {len(expression)} characters long; at most {MAX_EXPRESSION_CHARS} are supported")
    try:
        tree = _Parser(expression).parse()
    except _Invalid as error:
        raise InvalidInputException(f"{field} '{expression}' is not a valid pattern: {error}") from None
    return NamePattern(expression, tree)


def matches(pattern: NamePattern, name: str) -> bool:
    """Whether a table name matches a compiled pattern."""
    return pattern.matches(name)
