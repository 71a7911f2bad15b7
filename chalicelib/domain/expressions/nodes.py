"""The AST of the partition predicate language: what the grammar builds, ``bind`` types and
``evaluate`` / ``plan_ranges`` walk. Nodes are frozen dataclasses: the parse cache hands the
same tree to every caller, so no caller may change it, and trees compare by value."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, Union


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

# The column type of a leaf node: ``Compare[str]`` as parsed, ``Compare[KeyRef]`` once bound, so
# the evaluator can be typed for bound trees without a runtime check per partition. Covariant:
# nodes are frozen, and a bound leaf is a ``Node`` like any other.
C = TypeVar("C", bound=Column, covariant=True)


@dataclass(frozen=True)
class Compare(Generic[C]):
    """``column op literal``; op is one of ``= <> < <= > >=`` (``!=`` is read as ``<>``)."""

    column: C
    op: str
    literal: Any  # Literal before binding, a typed value after


@dataclass(frozen=True)
class Between(Generic[C]):
    """``column [NOT] BETWEEN low AND high`` (both ends inclusive)."""

    column: C
    low: Any
    high: Any
    negated: bool = False


@dataclass(frozen=True)
class In(Generic[C]):
    """``column [NOT] IN (v1, v2, ...)``."""

    column: C
    values: tuple[Any, ...]
    negated: bool = False


@dataclass(frozen=True)
class Like(Generic[C]):
    """``column [NOT] LIKE 'pattern'``."""

    column: C
    pattern: str
    negated: bool = False


@dataclass(frozen=True)
class IsNull(Generic[C]):
    """``column IS [NOT] NULL``."""

    column: C
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

Node = Union[Compare[Column], Between[Column], In[Column], Like[Column], IsNull[Column], And, Or, Not,
             TrueExpr]


def conjuncts(node: Node) -> tuple[Node, ...]:
    """The top-level AND items of an expression (``()`` for TRUE, ``(node,)`` otherwise)."""
    if isinstance(node, TrueExpr):
        return ()
    if isinstance(node, And):
        return node.items
    return (node,)
