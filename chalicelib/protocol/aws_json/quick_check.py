"""The quick yes/no check of a request against its botocore input shape, generated as Python.

Valid requests (nearly all) pay only for this; ``validate``'s walker runs just to word the
errors of an invalid one. A BatchCreatePartition of 100 partitions has ~100k nodes, so the
check is written out as source, one function per structure, list and map shape, with the
checks of strings, numbers and booleans inlined where they are used: a function call per leaf
(the closures this replaced) cost twice the time (14 -> 6 µs a partition, ~8% of the server's
CPU per partition written; ``bench.bench_write_cpu``).

True means valid, and more: that the value holds nothing a fast decoder may have read otherwise
than ``json`` (no float of 2**63 or more, where an integer beyond 64 bits would be one), so the
request may go on with that decoding. Hence False, and the walker, for what is not walked
here: members the model lacks, documents holding more than text, and containers that are not
exactly ``dict`` / ``list`` (decoded JSON never is anything else). False never refuses
anything by itself: the walker then decides.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any, Callable

from botocore.model import Shape

from chalicelib import timestamps
from chalicelib.protocol.aws_json.shape_rules import INTEGER_RANGES, compiled_pattern, finite

Check = Callable[[Any], bool]

# orjson (wire._decode_body's fast decoder) reads an integer beyond 64 bits as a float, and
# every such float is at least this large.
_FAST_DECODER_EXACT = 2.0 ** 63
_MEMO_SIZE = 4096

# Within one request, a list or map equal to the last one that passed at the same place (member
# of the same structure shape) is not walked again: the 100 partitions of a BatchCreatePartition
# nearly always share their Columns and SerDe parameters, and ``==`` compares them in C. Only for
# shapes holding nothing but text: 1 == 1.0 == True, so an equal list of numbers or booleans
# could still hold a value of the wrong type. Per thread, and dropped when the request is
# checked (it holds parts of the request).
_recent = threading.local()


def text_only(shape: Shape, seen: frozenset[str] = frozenset()) -> bool:
    """Whether every value ``shape`` admits is text (strings, and lists, maps and structures of
    them); a recursive shape is not, to keep this finite."""
    kind = shape.type_name
    if kind == "string":
        return True
    if shape.name in seen or shape.metadata.get("document"):
        return False
    seen = seen | {shape.name}
    if kind == "structure":
        return all(text_only(member, seen) for member in shape.members.values())
    if kind == "list":
        return text_only(shape.member, seen)
    if kind == "map":
        return text_only(shape.key, seen) and text_only(shape.value, seen)
    return False


def _bounds(expression: str, low: Any, high: Any) -> str:
    """The source of ``low <= expression <= high`` for the bounds the model gives ('' for none)."""
    if low is not None and high is not None:
        return f"{low!r} <= {expression} <= {high!r}"
    if low is not None:
        return f"{expression} >= {low!r}"
    if high is not None:
        return f"{expression} <= {high!r}"
    return ""


def _fails(*conditions: str) -> str:
    return " or ".join(c for c in conditions if c)


def _container(shape: Shape) -> bool:
    return shape.type_name in ("list", "map") or (
        shape.type_name == "structure" and not shape.metadata.get("document"))


# The writers of a check's source: each function's constants go to the shared namespace
# (``_namespace``), in which every check is compiled.
def _constant(value: Any, stem: str) -> str:
    name = f"_{stem}{next(_serial)}"
    _namespace[name] = value
    return name


def _function_of(shape: Shape) -> str:
    """The name of the function checking a container shape. A new one starts as a stub
    that writes and compiles it at its first call: a request reaches a few of the shapes
    its operation's input reaches (a CreateTable's TableInput reaches ~100; compiling
    them all at once cost ~25 ms of the first request, ~0.3 ms a function)."""
    # The resolver itself in the key, not its id(): the key keeps it alive, so no other
    # resolver (tests build their own) can be mistaken for it.
    key = (shape._shape_resolver, shape.name)
    name = _names.get(key)
    if name is None:
        stem = "".join(c if c.isalnum() else "_" for c in shape.name)
        name = f"check_{next(_serial)}_{stem}"
        _names[key] = name
        _unwritten[name] = shape
        _namespace[name] = lambda *args: _written(name)(*args)
    return name


def _source_of(name: str, shape: Shape) -> list[str]:
    if shape.type_name == "structure":
        return _structure_source(name, shape)
    remembered = text_only(shape)
    # A remembered shape's function is told where it is called from (``place``): an equal
    # value at the same place passed already. SerdeInfo.Parameters and a partition's
    # Parameters share a shape but not their values.
    lines = [f"def {name}(value{', place' if remembered else ''}):"]
    size = _bounds("len(value)", shape.metadata.get("min"), shape.metadata.get("max"))
    kind = "list" if shape.type_name == "list" else "dict"
    lines.append(f"    if {_fails(f'type(value) is not {kind}', size and f'not ({size})')}: return False")
    if remembered:
        lines += ["    passed = _recent.passed",
                  "    if passed is not None and passed.get(place) == value: return True"]
    if shape.type_name == "list":
        lines += ["    for item in value:",
                  "        if item is None: return False",
                  *_inline(shape.member, "item", "        ")]
    else:
        lines += ["    for key, item in value.items():",
                  *_inline(shape.key, "key", "        "),
                  "        if item is None: return False",
                  *_inline(shape.value, "item", "        ")]
    if remembered:
        lines.append("    if passed is not None: passed[place] = value")
    return lines + ["    return True"]


def _structure_source(name: str, shape: Shape) -> list[str]:
    lines = [f"def {name}(value):", "    if type(value) is not dict: return False"]
    required = [f"value.get({member!r}) is None" for member in shape.required_members]
    if required:
        lines.append(f"    if {_fails(*required)}: return False")
    # The members sent, not every member the shape has: a PartitionInput's StorageDescriptor
    # has 14 members in the model and about 5 in a request.
    lines += ["    for name, item in value.items():", "        if item is None: continue"]
    keyword = "if"
    for member_name, member in shape.members.items():
        lines.append(f"        {keyword} name == {member_name!r}:")
        lines.extend(_inline(member, "item", "            ", place=f"{shape.name}.{member_name}"))
        keyword = "elif"
    # A member the model lacks: not walked here (see the module docstring).
    lines.append("        else: return False" if shape.members else "        return False")
    return lines + ["    return True"]


def _inline(shape: Shape, var: str, pad: str, place: str = "") -> list[str]:
    """Lines that return False unless ``var`` (not None) passes ``shape``."""
    kind, meta = shape.type_name, shape.metadata
    if _container(shape):
        remembered = shape.type_name != "structure" and text_only(shape)
        call = f"{_function_of(shape)}({var}{f', {place or shape.name!r}' if remembered else ''})"
        return [f"{pad}if not {call}: return False"]
    low, high = meta.get("min"), meta.get("max")
    if kind == "structure":  # a document: any JSON value; only text and booleans are vouched for
        return [f"{pad}if type({var}) is not str and type({var}) is not bool: return False"]
    if kind == "string":
        size = _bounds(f"len({var})", low, high)
        enum = f"{var} not in {_constant(frozenset(shape.enum), 'enum')}" if shape.enum else ""
        lines = [f"{pad}if {_fails(f'type({var}) is not str', size and f'not ({size})', enum)}: return False"]
        pattern = compiled_pattern(meta["pattern"]) if meta.get("pattern") else None
        if pattern is not None:
            # Strings repeat across a request and across requests (column names and types,
            # formats, SerDe classes): one that matched is remembered (a bounded set, emptied
            # when full) instead of matched again. The regex was most of a batch's check.
            matched = _constant(set(), "matched")
            fullmatch = _constant(pattern.fullmatch, "fullmatch")
            lines += [f"{pad}if {var} not in {matched}:",
                      f"{pad}    if {fullmatch}({var}) is None: return False",
                      f"{pad}    if len({matched}) >= {_MEMO_SIZE}: {matched}.clear()",
                      f"{pad}    {matched}.add({var})"]
        return lines
    if kind in ("integer", "long"):
        smallest, largest = INTEGER_RANGES[kind]
        size = _bounds(var, low, high)
        return [f"{pad}if {_fails(f'type({var}) is not int', f'not ({smallest} <= {var} <= {largest})', size and f'not ({size})')}: return False"]  # noqa: E501
    if kind in ("double", "float"):
        size = _bounds(var, low, high)
        # Not a float of 2**63 or more: it may have been an integer beyond 64 bits.
        exact = f"(type({var}) is float and abs({var}) >= {_FAST_DECODER_EXACT!r})"
        return [f"{pad}if {_fails(f'not _finite({var})', size and f'not ({size})', exact)}: return False"]
    if kind == "boolean":
        return [f"{pad}if type({var}) is not bool: return False"]
    if kind == "timestamp":
        return [f"{pad}if not _readable({var}): return False"]
    if kind == "blob":
        return [f"{pad}if type({var}) is not str: return False"]
    return []


_namespace: dict[str, Any] = {"_recent": _recent, "_finite": finite, "_readable": timestamps.readable}
_names: dict[tuple[Any, str], str] = {}  # (resolver, shape name) -> its function in _namespace
_unwritten: dict[str, Shape] = {}  # functions that are still stubs, by name
_checks: dict[tuple[Any, str], Check] = {}  # the checks of the shapes asked for
_serial = itertools.count()
_lock = threading.RLock()  # re-entrant: writing a function names (stubs) the ones it calls


def _written(name: str) -> Callable[..., bool]:
    """Function ``name``, written and compiled if it is still a stub."""
    with _lock:
        shape = _unwritten.get(name)
        if shape is not None:
            source = "\n".join(_source_of(name, shape)) + "\n"
            exec(compile(source, f"<quick check of {shape.name}>", "exec"), _namespace)  # noqa: S102 - from the model
            del _unwritten[name]
        return _namespace[name]


def compile_check(shape: Shape) -> Check:
    """The check of ``shape``, written and compiled at its first use."""
    key = (shape._shape_resolver, shape.name)
    found = _checks.get(key)
    if found is not None:
        return found
    with _lock:
        found = _checks.get(key)
        if found is not None:
            return found
        # An operation's input is always a structure; anything else is left to the walker.
        check: Check = _written(_function_of(shape)) if shape.type_name == "structure" \
            and not shape.metadata.get("document") else _refer_to_walker
        _checks[key] = check
        return check


def _refer_to_walker(value: Any) -> bool:
    return False


def passes_quickly(shape: Shape | None, params: Any) -> bool:
    """Whether ``params`` is valid and holds nothing a fast decoder reads otherwise than
    ``json`` (see the module docstring); False: decode it exactly and run the walker."""
    if shape is None:
        return params in ({}, None)
    try:
        _recent.passed = {}
        try:
            return compile_check(shape)(params)
        finally:
            _recent.passed = None
    except RecursionError:
        return False
