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
* LIKE matches the stored raw text, case-sensitively, the whole value: ``%`` any run, ``_`` one
  character, everything else literal. It is matched without regex backtracking, so a pattern
  cannot make matching blow up. As in Glue, LIKE on an integer, decimal, double/float, date or
  timestamp key is an InvalidInputException ("Integral data type doesn't support operation
  'LIKE'", "Decimal data type ...", ...).
* Number literals follow JSQLParser: integers, decimals and exponent notation (``3e14``,
  ``1E+3``, ``-2.5e-3``). Unquoted, under a numeric key, a number compares by its value (an
  integer key takes any whole value: ``1E+3`` is 1000). Quoted literals and stored values are
  converted from their text: decimals and doubles accept exponent notation (as Java's
  BigDecimal and Double do), integers digits only (as Long.parseLong). Under a string key a
  number compares as the text it was written as, less a leading '+' (``code = 05`` matches
  ``'05'``, not ``'5'``).
* Operands may be parenthesised (``(year) = (2020)``, ``year IN ((2020), 2021)``), as
  JSQLParser reads them.
* ``'literal' op column`` is accepted and turned around. Comparing two columns, arithmetic,
  ``= NULL``, and unquoted dates are InvalidInputExceptions with a hint.

Modules: ``nodes`` (the AST), ``grammar`` (text -> AST; the pyparsing grammar is built on first
use, not at import, for Lambda cold starts), ``binding`` (AST -> typed AST, Glue type conversion),
``evaluation`` (one partition -> bool) and ``ranges`` (bound AST -> ``KeyRange``s for the
planner). This package re-exports their public names.
"""

from __future__ import annotations

from chalicelib.domain.expressions.binding import bind, int_bits, parse_value
from chalicelib.domain.expressions.evaluation import evaluate, evaluate3, matcher
from chalicelib.domain.expressions.grammar import (MAX_EXPRESSION_LENGTH, MAX_PREDICATE_BYTES,
                                                   parse_expression, parse_partition_predicate)
from chalicelib.domain.expressions.nodes import (TRUE, And, Between, Compare, In, IsNull, KeyRef, Like,
                                                 Literal, Node, Not, Or, TrueExpr, conjuncts)
from chalicelib.domain.expressions.ranges import MAX_RANGES, Endpoint, KeyRange, plan_ranges

__all__ = [
    "Literal", "KeyRef", "Compare", "Between", "In", "Like", "IsNull", "And", "Or", "Not",
    "TrueExpr", "TRUE", "Node", "Endpoint", "KeyRange",
    "parse_expression", "parse_partition_predicate", "bind", "parse_value", "evaluate", "evaluate3", "matcher",
    "conjuncts", "plan_ranges", "int_bits", "MAX_EXPRESSION_LENGTH", "MAX_PREDICATE_BYTES", "MAX_RANGES",
]
