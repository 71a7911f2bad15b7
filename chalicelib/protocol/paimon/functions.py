"""Functions: list (paged, ``functionNamePattern``), details, global list, create, get, alter, drop.

The contract is pypaimon 2.1.0's RESTApi (list_functions_paged, list_function_details_paged,
list_functions_paged_globally, get_function, create_function, drop_function, alter_function) and
its CreateFunctionRequest / AlterFunctionRequest / GetFunctionResponse / List*Response classes.
"""

from __future__ import annotations

from typing import Any

from chalicelib.domain.paimon.functions import check_name
from chalicelib.errors import EntityNotFoundException, InvalidInputException
from chalicelib.protocol.paimon.paging import make_token, max_results, read_token
from chalicelib.protocol.paimon.object_args import prefix_pattern
from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, bad_request
from chalicelib.service import paimon_functions as service

PATTERN = "functionNamePattern"
DATABASE_PATTERN = "databaseNamePattern"


def _catalog(request: PaimonRequest) -> str:
    return request.context.catalog_key({})


def _name(request: PaimonRequest) -> str:
    """The path's function name; one that no function can have is 404 (as pypaimon's get_function
    answers it client-side: NoSuchResourceException FUNCTION)."""
    name = request.path["function"]
    try:
        return check_name(name)
    except InvalidInputException:
        raise EntityNotFoundException(f"Invalid function name: {name[:100]}", "FUNCTION", name) from None


def _listing(request: PaimonRequest, render: Any) -> tuple[list[Any], Any]:
    pattern = request.query.get(PATTERN) or None
    after = read_token(request, request.path["database"], pattern)
    if after is not None and not isinstance(after, str):
        raise bad_request("pageToken is malformed")
    page, last = service.list_functions(_catalog(request), request.path["database"], prefix_pattern(request, PATTERN),
                                        after, max_results(request), render)
    return page, make_token(request, last, request.path["database"], pattern)


def list_functions(request: PaimonRequest) -> PaimonResponse:
    """ListFunctionsResponse: function names in order, paged."""
    names, token = _listing(request, lambda data: data["name"])
    return PaimonResponse({"functions": names, "nextPageToken": token})


def list_function_details(request: PaimonRequest) -> PaimonResponse:
    """ListFunctionDetailsResponse: GetFunctionResponse of each function, paged."""
    details, token = _listing(request, lambda data: data)
    return PaimonResponse({"functionDetails": details, "nextPageToken": token})


def list_functions_globally(request: PaimonRequest) -> PaimonResponse:
    """ListFunctionsGloballyResponse: identifiers of the functions of every database, paged."""
    filters = (request.query.get(DATABASE_PATTERN) or None, request.query.get(PATTERN) or None)
    after = read_token(request, *filters)
    if after is not None and not (isinstance(after, list) and len(after) == 2
                                  and all(isinstance(part, str) for part in after)):
        raise bad_request("pageToken is malformed")
    functions, last = service.list_functions_globally(_catalog(request), prefix_pattern(request, DATABASE_PATTERN),
                                                      prefix_pattern(request, PATTERN), after, max_results(request))
    return PaimonResponse({"functions": functions, "nextPageToken": make_token(request, last, *filters)})


def create_function(request: PaimonRequest) -> PaimonResponse:
    """CreateFunctionRequest (the body's ``name`` names the function)."""
    service.create_function(_catalog(request), request.path["database"], request.body, request.context.account_id)
    return PaimonResponse()


def get_function(request: PaimonRequest) -> PaimonResponse:
    """GetFunctionResponse."""
    return PaimonResponse(service.get_function(_catalog(request), request.path["database"], _name(request)))


def alter_function(request: PaimonRequest) -> PaimonResponse:
    """AlterFunctionRequest: FunctionChanges, applied all or none."""
    service.alter_function(_catalog(request), request.path["database"], _name(request),
                           request.require("changes", list), request.context.account_id)
    return PaimonResponse()


def drop_function(request: PaimonRequest) -> PaimonResponse:
    """Drop a function."""
    service.drop_function(_catalog(request), request.path["database"], _name(request))
    return PaimonResponse()
