"""Views (ViewSchema with several dialects; Glue ViewDefinition.Representations).

Every handler answers 501 (pypaimon: NotImplementedException) until its family is implemented.
"""

from __future__ import annotations

from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, not_implemented


def list_views(request: PaimonRequest) -> PaimonResponse:
    """List views."""
    raise not_implemented("List views")


def list_view_details(request: PaimonRequest) -> PaimonResponse:
    """List view details."""
    raise not_implemented("List view details")


def list_views_globally(request: PaimonRequest) -> PaimonResponse:
    """List views globally."""
    raise not_implemented("List views globally")


def create_view(request: PaimonRequest) -> PaimonResponse:
    """Create view."""
    raise not_implemented("Create view")


def get_view(request: PaimonRequest) -> PaimonResponse:
    """Get view."""
    raise not_implemented("Get view")


def alter_view(request: PaimonRequest) -> PaimonResponse:
    """Alter view."""
    raise not_implemented("Alter view")


def drop_view(request: PaimonRequest) -> PaimonResponse:
    """Drop view."""
    raise not_implemented("Drop view")


def rename_view(request: PaimonRequest) -> PaimonResponse:
    """Rename view."""
    raise not_implemented("Rename view")
