"""Databases (a Paimon database IS a Glue database item: options <-> Parameters).

Every handler answers 501 (pypaimon: NotImplementedException) until its family is implemented.
"""

from __future__ import annotations

from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, not_implemented


def list_databases(request: PaimonRequest) -> PaimonResponse:
    """List databases."""
    raise not_implemented("List databases")


def create_database(request: PaimonRequest) -> PaimonResponse:
    """Create database."""
    raise not_implemented("Create database")


def get_database(request: PaimonRequest) -> PaimonResponse:
    """Get database."""
    raise not_implemented("Get database")


def alter_database(request: PaimonRequest) -> PaimonResponse:
    """Alter database."""
    raise not_implemented("Alter database")


def drop_database(request: PaimonRequest) -> PaimonResponse:
    """Drop database."""
    raise not_implemented("Drop database")
