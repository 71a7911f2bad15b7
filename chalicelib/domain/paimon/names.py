"""How long a Paimon name may be, for every route: the one place the limits live.

Databases, tables, views and functions are Glue names (1 to 255 characters). Tags and branches
are file and directory names in the table's directory (``tag/tag-NAME``,
``branch/branch-NAME``), which a file system caps at 255 bytes, so 248 bytes of UTF-8 (and they
sit in DynamoDB sort keys, tag and branch together, far below the 1,024 bytes allowed).

A name past its limit names nothing: read, it is not found (``existing``: 404, as Paimon's
servers answer for a name they do not hold), and created, it is a bad request (``new``: 400).
Either way it never reaches the store, whose key values it could overflow (a 500 that
pypaimon retries).
"""

from __future__ import annotations

from typing import Optional

from chalicelib.errors import EntityNotFoundException, InvalidInputException

MAX_NAME_CHARS = 255  # a Glue database, table (or view) and function name
MAX_REF_BYTES = 255 - len("branch-")  # a tag or branch name, in UTF-8 bytes

# Path parameter (and kind of name) -> ErrorResponse.resourceType.
RESOURCE_TYPES = {"database": "DATABASE", "table": "TABLE", "view": "VIEW", "function": "FUNCTION",
                  "tag": "TAG", "branch": "BRANCH"}
BRANCH_SUFFIX = "$branch_"  # a table path segment ``t$branch_b`` addresses branch b of t


def too_long(kind: str, name: str) -> Optional[str]:
    """Why ``name`` is too long for a ``kind`` (a RESOURCE_TYPES key), or None when it fits."""
    if kind in ("tag", "branch"):
        size = len(name.encode("utf-8", "surrogatepass"))
        return f"at most {MAX_REF_BYTES} bytes of UTF-8, not {size}" if size > MAX_REF_BYTES else None
    return f"at most {MAX_NAME_CHARS} characters, not {len(name)}" if len(name) > MAX_NAME_CHARS else None


def _shown(name: str) -> str:
    return name if len(name) <= 64 else name[:60] + "..."


def existing(kind: str, name: str) -> str:
    """``name`` as a reference to a ``kind`` that must exist: EntityNotFoundException (404) when
    no such object can exist because the name is too long."""
    if too_long(kind, name) is not None:
        raise EntityNotFoundException(f"{kind.capitalize()} {_shown(name)} does not exist (the name is longer than "
                                      f"any {kind} name can be).", RESOURCE_TYPES[kind], name)
    return name


def new(kind: str, name: str, where: str) -> str:
    """``name`` for a ``kind`` being created (or renamed to), given as ``where``:
    InvalidInputException (400) naming the limit when it is too long."""
    reason = too_long(kind, name)
    if reason is not None:
        raise InvalidInputException(f"{where} must be {reason}")
    return name


def check_path(path: dict[str, str]) -> None:
    """Every name a request path carries (``{database}``, ``{table}`` with its ``$branch_``
    part, ``{tag}``, ``{branch}``, ``{view}``, ``{function}``) as a reference to an existing
    object: 404 for one too long to exist."""
    for parameter, value in path.items():
        if parameter == "table" and BRANCH_SUFFIX in value:
            table, branch = value.split(BRANCH_SUFFIX, 1)
            existing("table", table)
            existing("branch", branch)
        elif parameter in RESOURCE_TYPES:
            existing(parameter, value)
