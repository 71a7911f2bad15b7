"""Paimon functions as pure data: CreateFunctionRequest, FunctionChanges, GetFunctionResponse.

JSON keys follow pypaimon 2.1.0 (api/api_request.py CreateFunctionRequest, api/api_response.py
GetFunctionResponse, function/function_change.py, function/function_definition.py) and
paimon-api's Java classes of the same names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from chalicelib.domain.paimon.object_changes import apply_shared_change
from chalicelib.domain.paimon import names
from chalicelib.domain.paimon.types import parse_field
from chalicelib.errors import AlreadyExistsException, EntityNotFoundException, InvalidInputException

# RESTFunctionValidator / RESTApi._FUNCTION_NAME_PATTERN: letters, digits, '.', '_', '-', one letter at least.
FUNCTION_NAME = re.compile(r"(?=.*[A-Za-z])[A-Za-z0-9._-]+")
FUNCTION_NAME_CHARS = re.compile(r"[A-Za-z0-9._-]*")
MAX_NAME_CHARS = names.MAX_NAME_CHARS
RESOURCE_FUNCTION = "FUNCTION"
RESOURCE_DEFINITION = "DEFINITION"
# FunctionDefinition kinds and the string members each carries (function_definition.py).
_DEFINITION_MEMBERS = {"file": ("language", "className", "functionName"), "sql": ("definition",),
                       "lambda": ("definition", "language")}


def _bad(message: str) -> InvalidInputException:
    return InvalidInputException(message)


def check_name(name: Any, where: str = "name") -> str:
    """A valid function name, or 400 naming the rule."""
    if not isinstance(name, str) or not FUNCTION_NAME.fullmatch(name) or len(name) > MAX_NAME_CHARS:
        raise _bad(f"Invalid function name: {str(name)[:100]!r} ({where} must be 1 to {MAX_NAME_CHARS} letters, "
                   "digits, '.', '_' or '-', with at least one letter)")
    return name


def _params(value: Any, where: str) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise _bad(f"{where} must be a list of fields")
    parsed = [parse_field(item, f"{where}[{i}]") for i, item in enumerate(value)]
    return [f.to_json() for f in parsed]


def check_definition(value: Any, where: str) -> dict[str, Any]:
    """A FunctionDefinition JSON (``type`` file / sql / lambda with its members), as sent."""
    if not isinstance(value, dict):
        raise _bad(f"{where} must be an object")
    kind = value.get("type")
    if kind not in _DEFINITION_MEMBERS:
        raise _bad(f"{where}.type must be one of file, sql, lambda, not {str(kind)[:64]!r}")
    for member in _DEFINITION_MEMBERS[kind]:
        if value.get(member) is not None and not isinstance(value[member], str):
            raise _bad(f"{where}.{member} must be a string")
    if kind in ("sql", "lambda") and not isinstance(value.get("definition"), str):
        raise _bad(f"{where}.definition is required for a {kind} definition")
    resources = value.get("fileResources")
    if resources is not None:
        if not isinstance(resources, list) or not all(
                isinstance(r, dict) and all(isinstance(r.get(k), (str, type(None))) for k in ("resourceType", "uri"))
                for r in resources):
            raise _bad(f"{where}.fileResources must be a list of {{resourceType, uri}} objects")
    return dict(value)


def _definitions(value: Any, where: str) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _bad(f"{where} must be an object of definitions by name")
    return {name: check_definition(d, f"{where}[{name}]") for name, d in value.items()}


def _options(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _bad(f"{where} must be an object of string values")
    return dict(value)


@dataclass
class Function:
    """A function's definition (what CreateFunctionRequest sends; GetFunctionResponse adds uuid
    and audit fields)."""

    name: str
    input_params: list[dict[str, Any]] | None = None
    return_params: list[dict[str, Any]] | None = None
    deterministic: bool = False
    definitions: dict[str, dict[str, Any]] = field(default_factory=dict)
    comment: str | None = None
    options: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_request(cls, body: dict[str, Any]) -> "Function":
        """Parse a CreateFunctionRequest body (400 naming the member)."""
        deterministic = body.get("deterministic", False)
        if deterministic is None:
            deterministic = False
        if not isinstance(deterministic, bool):
            raise _bad("deterministic must be a boolean")
        comment = body.get("comment")
        if comment is not None and not isinstance(comment, str):
            raise _bad("comment must be a string")
        return cls(check_name(body.get("name")), _params(body.get("inputParams"), "inputParams"),
                   _params(body.get("returnParams"), "returnParams"), deterministic,
                   _definitions(body.get("definitions"), "definitions"), comment,
                   _options(body.get("options"), "options"))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Function":
        """A stored function (its GetFunctionResponse members; trusted, written by us)."""
        return cls(data["name"], data.get("inputParams"), data.get("returnParams"), bool(data.get("deterministic")),
                   dict(data.get("definitions") or {}), data.get("comment"), dict(data.get("options") or {}))

    def to_json(self) -> dict[str, Any]:
        """The definition members of GetFunctionResponse, in pypaimon's key order."""
        return {"name": self.name, "inputParams": self.input_params, "returnParams": self.return_params,
                "deterministic": self.deterministic, "definitions": self.definitions, "comment": self.comment,
                "options": self.options}


def apply_changes(function: Function, changes: Any) -> Function:
    """The function after ``changes`` (AlterFunctionRequest.changes), in order, as Paimon's servers
    apply them; one invalid change and none is applied (the caller stores only the result).
    400 for a malformed change, 409 adding a definition that exists, 404 updating or dropping
    one that does not (resource type DEFINITION)."""
    if not isinstance(changes, list):
        raise _bad("changes is required and must be a list")
    result = Function(function.name, function.input_params, function.return_params, function.deterministic,
                      dict(function.definitions), function.comment, dict(function.options))
    for i, change in enumerate(changes):
        where = f"changes[{i}]"
        if not isinstance(change, dict):
            raise _bad(f"{where} must be an object")
        action = change.get("action")
        if apply_shared_change(result, change, where):
            continue
        if action in ("addDefinition", "updateDefinition", "dropDefinition"):
            name = change.get("name")
            if not isinstance(name, str) or not name:
                raise _bad(f"{where}.name must be a non-empty string")
            if action == "addDefinition" and name in result.definitions:
                raise AlreadyExistsException(f"Definition {name} in function {function.name} already exists.",
                                             RESOURCE_DEFINITION, name)
            if action != "addDefinition" and name not in result.definitions:
                raise EntityNotFoundException(f"Definition {name} in function {function.name} does not exist.",
                                              RESOURCE_DEFINITION, name)
            if action == "dropDefinition":
                del result.definitions[name]
            else:
                result.definitions[name] = check_definition(change.get("definition"), f"{where}.definition")
        else:
            raise _bad(f"{where}.action must be one of setOption, removeOption, updateComment, addDefinition, "
                       f"updateDefinition, dropDefinition, not {str(action)[:64]!r}")
    return result
