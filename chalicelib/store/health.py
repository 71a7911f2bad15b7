"""The store's answer to a health probe: one GetItem of an item that never exists."""

from __future__ import annotations

from chalicelib.store.dynamo.models import IdentityItem

# A kind no identity has ("principal" and "key" are the kinds): the read finds nothing and costs
# one read capacity unit, whatever the catalog holds.
_PROBE_KIND = "health-probe"


def probe() -> None:
    """Read one (absent) item from the identities table; raises whatever the store raises."""
    try:
        IdentityItem.get(_PROBE_KIND, "probe")
    except IdentityItem.DoesNotExist:
        pass
