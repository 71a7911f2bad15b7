"""Databases (a Paimon database IS a Glue database item: options <-> Parameters, ``comment`` <->
Description, ``location`` <-> LocationUri; ``service.paimon_databases``)."""

from __future__ import annotations

from typing import Any

from chalicelib.domain.paimon import names
from chalicelib.protocol.paimon import paging
from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, bad_request
from chalicelib.service import paimon_databases
from chalicelib.service.paimon_databases import PaimonDatabase

MAX_NAME_LENGTH = names.MAX_NAME_CHARS  # a Glue database (or table) name


def catalog_key(request: PaimonRequest) -> str:
    """The request's catalog: the caller's account in its region (the token names both)."""
    return request.context.catalog_key({})


def check_name(name: Any, what: str = "name") -> str:
    """A database or table name the Glue catalog can hold (400 naming ``what`` otherwise)."""
    if not isinstance(name, str):
        raise bad_request(f"{what} must be a string")
    if not name.strip():
        raise bad_request(f"{what} must not be empty")
    if len(name) > MAX_NAME_LENGTH:
        raise bad_request(f"{what} must be at most {MAX_NAME_LENGTH} characters, not {len(name)}")
    if any(ord(c) < 32 and c != "\t" for c in name):
        raise bad_request(f"{what} must not contain control characters")
    return name


def string_map(value: Any, what: str) -> dict[str, str]:
    """An object of string values (None: empty)."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise bad_request(f"{what} must be an object of string values")
    return dict(value)


# What the Glue database can hold (botocore's limits on DatabaseInput): options become its members.
_OPTION_LIMITS = {"comment": ("Description", 2048), "location": ("LocationUri", 1024)}
_MAX_KEY, _MAX_VALUE = 255, 512000


def check_options(options: dict[str, str], what: str) -> dict[str, str]:
    """Options the Glue database can hold (400 naming the option otherwise)."""
    for key, value in options.items():
        if not key or len(key) > _MAX_KEY:
            raise bad_request(f"{what}: option names must be 1 to {_MAX_KEY} characters, not {len(key)}")
        member, limit = _OPTION_LIMITS.get(key, ("Parameters", _MAX_VALUE))
        if len(value) > limit:
            raise bad_request(f"{what}.{key} must be at most {limit} characters (it is the Glue {member})")
    return options


def _response(database: PaimonDatabase) -> dict[str, Any]:
    return {"id": database.id, "name": database.name, "location": database.location, "options": database.options,
            "owner": database.owner, "createdAt": database.created_at, "createdBy": database.owner,
            "updatedAt": database.created_at, "updatedBy": database.owner}


def list_databases(request: PaimonRequest) -> PaimonResponse:
    """ListDatabasesResponse: names in order, paged, filtered by ``databaseNamePattern``."""
    pattern = paging.name_pattern(request, "databaseNamePattern")
    scope = (pattern.prefix, pattern.exact)
    after = paging.read_token(request, *scope)
    names, last = paimon_databases.list_databases(catalog_key(request), after, paging.max_results(request),
                                                  pattern.prefix, pattern.exact)
    return PaimonResponse({"databases": names, "nextPageToken": paging.make_token(request, last, *scope)})


def create_database(request: PaimonRequest) -> PaimonResponse:
    """CreateDatabaseRequest ``{name, options}``; 409 if the name is taken."""
    name = check_name(request.require("name"))
    options = check_options(string_map(request.body.get("options"), "options"), "options")
    paimon_databases.create_database(catalog_key(request), name, options)
    return PaimonResponse()


def get_database(request: PaimonRequest) -> PaimonResponse:
    """GetDatabaseResponse."""
    return PaimonResponse(_response(paimon_databases.get_database(catalog_key(request), request.path["database"])))


def alter_database(request: PaimonRequest) -> PaimonResponse:
    """AlterDatabaseRequest ``{removals, updates}``: a partial update of the options."""
    removals = request.body.get("removals") or []
    if not isinstance(removals, list) or not all(isinstance(k, str) for k in removals):
        raise bad_request("removals must be a list of strings")
    updates = check_options(string_map(request.body.get("updates"), "updates"), "updates")
    both = sorted(set(removals) & set(updates))
    if both:
        raise bad_request(f"updates and removals must not name the same option: {both}")
    database = request.path["database"]
    paimon_databases.alter_database(catalog_key(request), database, updates, removals)
    # AlterDatabaseResponse, as the reference server answers (pypaimon ignores the body).
    return PaimonResponse({"removed": removals, "updated": sorted(updates), "missing": []})


def drop_database(request: PaimonRequest) -> PaimonResponse:
    """Drop a database with everything in it (the client checks emptiness unless cascading)."""
    paimon_databases.drop_database(catalog_key(request), request.path["database"])
    return PaimonResponse()
