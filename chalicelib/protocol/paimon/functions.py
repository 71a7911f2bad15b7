"""Functions: list (paged, ``functionNamePattern``), details, global list, create, get, alter, drop.

The contract is pypaimon 2.1.0's RESTApi (list_functions_paged, list_function_details_paged,
list_functions_paged_globally, get_function, create_function, drop_function, alter_function) and
its CreateFunctionRequest / AlterFunctionRequest / GetFunctionResponse / List*Response classes.
"""

from __future__ import annotations

from chalicelib.domain.paimon.functions import check_name
from chalicelib.errors import EntityNotFoundException, InvalidInputException
from chalicelib.protocol.paimon.databases import catalog_key
from chalicelib.protocol.paimon.object_args import global_listing, object_listing
from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse
from chalicelib.service import paimon_functions as service

PATTERN = "functionNamePattern"


def _name(request: PaimonRequest) -> str:
    """The path's function name; one that no function can have is 404 (as pypaimon's get_function
    answers it client-side: NoSuchResourceException FUNCTION)."""
    name = request.path["function"]
    try:
        return check_name(name)
    except InvalidInputException:
        raise EntityNotFoundException(f"Invalid function name: {name[:100]}", "FUNCTION", name) from None


def list_functions(request: PaimonRequest) -> PaimonResponse:
    """ListFunctionsResponse: function names in order, paged."""
    names, token = object_listing(request, PATTERN, service.list_functions, lambda data: data["name"])
    return PaimonResponse({"functions": names, "nextPageToken": token})


def list_function_details(request: PaimonRequest) -> PaimonResponse:
    """ListFunctionDetailsResponse: GetFunctionResponse of each function, paged."""
    details, token = object_listing(request, PATTERN, service.list_functions, lambda data: data)
    return PaimonResponse({"functionDetails": details, "nextPageToken": token})


def list_functions_globally(request: PaimonRequest) -> PaimonResponse:
    """ListFunctionsGloballyResponse: identifiers of the functions of every database, paged."""
    functions, token = global_listing(request, PATTERN, service.list_functions_globally)
    return PaimonResponse({"functions": functions, "nextPageToken": token})


def create_function(request: PaimonRequest) -> PaimonResponse:
    """CreateFunctionRequest (the body's ``name`` names the function)."""
    service.create_function(catalog_key(request), request.path["database"], request.body, request.context.account_id)
    return PaimonResponse()


def get_function(request: PaimonRequest) -> PaimonResponse:
    """GetFunctionResponse."""
    return PaimonResponse(service.get_function(catalog_key(request), request.path["database"], _name(request)))


def alter_function(request: PaimonRequest) -> PaimonResponse:
    """AlterFunctionRequest: FunctionChanges, applied all or none."""
    service.alter_function(catalog_key(request), request.path["database"], _name(request),
                           request.require("changes", list), request.context.account_id)
    return PaimonResponse()


def drop_function(request: PaimonRequest) -> PaimonResponse:
    """Drop a function."""
    service.drop_function(catalog_key(request), request.path["database"], _name(request))
    return PaimonResponse()
