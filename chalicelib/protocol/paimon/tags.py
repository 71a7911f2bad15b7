"""Tags.

Every handler answers 501 (pypaimon: NotImplementedException) until its family is implemented.
"""

from __future__ import annotations

from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, not_implemented


def list_tags(request: PaimonRequest) -> PaimonResponse:
    """List tags."""
    raise not_implemented("List tags")


def create_tag(request: PaimonRequest) -> PaimonResponse:
    """Create tag."""
    raise not_implemented("Create tag")


def get_tag(request: PaimonRequest) -> PaimonResponse:
    """Get tag."""
    raise not_implemented("Get tag")


def delete_tag(request: PaimonRequest) -> PaimonResponse:
    """Delete tag."""
    raise not_implemented("Delete tag")
