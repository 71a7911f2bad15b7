"""Tables: create with a Schema, get, alter (SchemaChanges), rename, drop, details, data token, auth.

Every handler answers 501 (pypaimon: NotImplementedException) until its family is implemented.
"""

from __future__ import annotations

from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, not_implemented


def list_tables(request: PaimonRequest) -> PaimonResponse:
    """List tables."""
    raise not_implemented("List tables")


def list_table_details(request: PaimonRequest) -> PaimonResponse:
    """List table details."""
    raise not_implemented("List table details")


def list_tables_globally(request: PaimonRequest) -> PaimonResponse:
    """List tables globally."""
    raise not_implemented("List tables globally")


def create_table(request: PaimonRequest) -> PaimonResponse:
    """Create table."""
    raise not_implemented("Create table")


def get_table(request: PaimonRequest) -> PaimonResponse:
    """Get table."""
    raise not_implemented("Get table")


def alter_table(request: PaimonRequest) -> PaimonResponse:
    """Alter table."""
    raise not_implemented("Alter table")


def drop_table(request: PaimonRequest) -> PaimonResponse:
    """Drop table."""
    raise not_implemented("Drop table")


def rename_table(request: PaimonRequest) -> PaimonResponse:
    """Rename table."""
    raise not_implemented("Rename table")


def load_table_token(request: PaimonRequest) -> PaimonResponse:
    """Load table token."""
    raise not_implemented("Load table token")


def auth_table_query(request: PaimonRequest) -> PaimonResponse:
    """Auth table query."""
    raise not_implemented("Auth table query")
