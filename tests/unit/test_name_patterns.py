"""GetTables' Expression language: Hive's conventions on a linear-time matcher."""

from __future__ import annotations

import random

import pytest

from chalicelib.domain.name_patterns import MAX_EXPRESSION_CHARS, compile_name_pattern
from chalicelib.errors import InvalidInputException

NAMES = ["sales_00", "sales_01", "sales_02", "sales_11", "orders", "order_items", "customers",
         "x.y", "x*y", "t1", "data-2024", "ab", "aab", "a"]


def matching(expression: str) -> list[str]:
    pattern = compile_name_pattern(expression)
    return [name for name in NAMES if pattern.matches(name)]


@pytest.mark.parametrize("expression, expected", [
    ("sales*", ["sales_00", "sales_01", "sales_02", "sales_11"]),  # Hive's wildcard
    ("*items", ["order_items"]),
    ("s*_0*", ["sales_00", "sales_01", "sales_02"]),
    ("orders|customers", ["orders", "customers"]),
    (" orders | customers ", ["orders", "customers"]),  # top-level alternatives are trimmed
    ("ORD.*S", ["orders", "order_items"]),  # case is ignored
    ("sales_0[0-2]", ["sales_00", "sales_01", "sales_02"]),
    ("[A-Z]+_\\d+", ["sales_00", "sales_01", "sales_02", "sales_11"]),
    ("s.*_(0|1)[12]", ["sales_01", "sales_02", "sales_11"]),  # '|' inside a group stays there
    ("(?:orders|customers)", ["orders", "customers"]),
    ("^sales_1.$", ["sales_11"]),
    ("[^s].*", ["orders", "order_items", "customers", "x.y", "x*y", "t1", "data-2024", "ab", "aab", "a"]),
    ("x\\.y", ["x.y"]),
    ("x\\*y", ["x*y"]),
    ("t\\d", ["t1"]),
    ("data-\\d+", ["data-2024"]),
    ("a?b", ["ab"]),
    ("(a)*b", ["ab", "aab"]),
    ("a.*?", ["ab", "aab", "a"]),  # a lazy quantifier matches the same whole names
    ("nomatch", []),
])
def test_expressions_select_whole_names(expression, expected):
    assert matching(expression) == expected


@pytest.mark.parametrize("expression, why", [
    ("sales[", "missing ']'"),
    ("(a", "missing ')'"),
    ("a)", "unbalanced ')'"),
    ("a{2}", "counted repetition"),
    ("(a)\\1", "'\\1'"),
    ("(?=a)", "'(?:'"),
    ("[[:alpha:]]", "POSIX"),
    ("+a", "nothing"),
    ("a++", "nothing"),
    ("(" * 40 + ")" * 40, "nest"),
])
def test_unsupported_syntax_is_refused_naming_the_expression(expression, why):
    with pytest.raises(InvalidInputException, match="Expression") as caught:
        compile_name_pattern(expression)
    assert why in caught.value.message


def test_expression_length_is_bounded():
    compile_name_pattern("a" * MAX_EXPRESSION_CHARS)
    with pytest.raises(InvalidInputException, match="Expression"):
        compile_name_pattern("a" * (MAX_EXPRESSION_CHARS + 1))


@pytest.mark.parametrize("expression", ["(a+)+b", "(a|a)*b", "(.*)*b", "(a|aa)+$", "(a*)*(a*)*(a*)*c",
                                        "*" * 300, ".*a" + "." * 20])
def test_matching_work_is_linear_in_the_name(expression):
    """Catastrophic-backtracking shapes cost a bounded number of NFA steps per character.

    Python's re needs seconds for (a+)+b against 26 letters, and doubles with each one more.
    """
    pattern = compile_name_pattern(expression)
    states = len(pattern._states)
    for length in (26, 1_000, 10_000):
        pattern.steps = 0
        pattern.matches("a" * length)
        # At most every NFA state once per character, plus one cached step per character.
        assert pattern.steps <= (states + 1) * (length + 2)
    # With the DFA cache warm, a character costs one step.
    pattern.steps = 0
    pattern.matches("a" * 10_000)
    assert pattern.steps <= 10_000 + 2 * states + 2


def test_a_pattern_gives_the_same_answers_after_its_cache_is_reset():
    """'a' 15th from the end has 2**15 DFA states: the transition cache fills and is reset."""
    pattern = compile_name_pattern(".*a" + "." * 14)
    rng = random.Random(7)
    names = ["".join(rng.choice("ab") for _ in range(40)) for _ in range(3000)]
    expected = [n[-15] == "a" for n in names]
    assert [pattern.matches(n) for n in names] == expected
