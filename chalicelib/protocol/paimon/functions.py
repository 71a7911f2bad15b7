"""Functions.

Every handler answers 501 (pypaimon: NotImplementedException) until its family is implemented.
"""

from __future__ import annotations

from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, not_implemented


def list_functions(request: PaimonRequest) -> PaimonResponse:
    """List functions."""
    raise not_implemented("List functions")


def list_function_details(request: PaimonRequest) -> PaimonResponse:
    """List function details."""
    raise not_implemented("List function details")


def list_functions_globally(request: PaimonRequest) -> PaimonResponse:
    """List functions globally."""
    raise not_implemented("List functions globally")


def create_function(request: PaimonRequest) -> PaimonResponse:
    """Create function."""
    raise not_implemented("Create function")


def get_function(request: PaimonRequest) -> PaimonResponse:
    """Get function."""
    raise not_implemented("Get function")


def alter_function(request: PaimonRequest) -> PaimonResponse:
    """Alter function."""
    raise not_implemented("Alter function")


def drop_function(request: PaimonRequest) -> PaimonResponse:
    """Drop function."""
    raise not_implemented("Drop function")
