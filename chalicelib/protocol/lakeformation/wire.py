"""The Lake Formation wire: REST-JSON (``POST /<Operation>``).

The operation is the path; decoding, validation against botocore's model and the call of the
route table's handler are the AWS JSON machinery's (``protocol/aws_json/wire.py``). Errors are
encoded here, once: ``{"__type", "Message"}`` plus the ``x-amzn-ErrorType`` header botocore's
REST-JSON parser reads.
"""

from __future__ import annotations

from typing import Collection, Sequence

from chalicelib.protocol.aws_json.model import LAKEFORMATION
from chalicelib.protocol.aws_json.wire import REST_JSON, dump, metric_headers, serve
from chalicelib.protocol.lakeformation.routes import ROUTES
from chalicelib.protocol.response import WireResponse


def handle(operation: str, headers: dict[str, str], raw_body: bytes | None, gateway_context: dict | None = None,
           query: Sequence[tuple[str, str]] = (), repeated: Collection[str] = ()) -> WireResponse:
    """Serve one Lake Formation request (``POST /<operation>``; ``query`` and ``repeated`` as for Glue)."""
    status, result, error = serve(LAKEFORMATION, operation, ROUTES, headers, raw_body, gateway_context,
                                  f"/{operation}", query, repeated)
    if error is not None:
        return WireResponse(status, dump({"__type": error.code, "Message": error.message}),
                            {"Content-Type": REST_JSON, "x-amzn-ErrorType": error.code})
    return WireResponse(status, dump(result), {"Content-Type": REST_JSON, **metric_headers()})
