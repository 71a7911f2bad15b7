"""GET /v1/config: the defaults every later call builds on."""

from __future__ import annotations

from urllib.parse import unquote_plus

from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, bad_request

MAX_WAREHOUSE_LENGTH = 255


def get_config(request: PaimonRequest) -> PaimonResponse:
    """ConfigResponse for ``?warehouse=<name>``: ``defaults.prefix`` is the warehouse name.

    Why the warehouse name: pypaimon puts the prefix into every later path
    (``/v1/<prefix>/databases/...``), so each request names its warehouse without a lookup, as
    DLF's and Paimon's own servers tie the prefix to the warehouse. The catalog (databases, tables)
    is the caller's account and region whatever the warehouse is called; the warehouse is where a
    new table's files go.
    """
    # pypaimon (like Paimon's Java client) form-encodes the name before the query string encodes
    # it again (RESTApi: RESTUtil.encode_string(warehouse)), so one more decode gives the name.
    warehouse = unquote_plus(request.query.get("warehouse", ""))
    if not warehouse.strip():
        raise bad_request("warehouse is required: GET /v1/config?warehouse=<name>")
    if len(warehouse) > MAX_WAREHOUSE_LENGTH or any(ord(c) < 32 for c in warehouse):
        raise bad_request(f"warehouse must be 1 to {MAX_WAREHOUSE_LENGTH} printable characters")
    return PaimonResponse({"defaults": {"prefix": warehouse}, "overrides": {}})
