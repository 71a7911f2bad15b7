"""The changes views and functions share: Paimon's ViewChange and FunctionChange both have
``setOption``, ``removeOption`` and ``updateComment``, with the same JSON and meaning."""

from __future__ import annotations

from typing import Any, Optional, Protocol

from chalicelib.errors import InvalidInputException


class WithOptions(Protocol):
    """A view or function being changed."""

    options: dict[str, str]
    comment: Optional[str]


def apply_shared_change(target: WithOptions, change: dict[str, Any], where: str) -> bool:
    """Apply ``change`` to ``target`` if it is one of the shared kinds (False if not);
    InvalidInputException naming ``where`` for a malformed one."""
    action = change.get("action")
    if action == "setOption":
        key, value = change.get("key"), change.get("value")
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidInputException(f"{where}: setOption needs string key and value")
        target.options[key] = value
    elif action == "removeOption":
        key = change.get("key")
        if not isinstance(key, str):
            raise InvalidInputException(f"{where}: removeOption needs a string key")
        target.options.pop(key, None)
    elif action == "updateComment":
        comment = change.get("comment")
        if comment is not None and not isinstance(comment, str):
            raise InvalidInputException(f"{where}.comment must be a string or null")
        target.comment = comment
    else:
        return False
    return True
