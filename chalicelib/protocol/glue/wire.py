"""The Glue wire: AWS JSON 1.1 (``POST /`` with ``X-Amz-Target: AWSGlue.<Operation>``).

The operation comes from the target header; decoding, validation against botocore's model and
the call of the route table's handler are the AWS JSON machinery's (``protocol/aws_json/wire.py``).
Errors are encoded here, once: ``{"__type", "Message"}``, as botocore maps them to
``client.exceptions.<Code>``.
"""

from __future__ import annotations

from typing import Any, Collection, Sequence

from chalicelib.context import RequestContext
from chalicelib.errors import AuthenticationError, UnknownOperationException
from chalicelib.protocol.aws_json.model import GLUE
from chalicelib.protocol.aws_json.wire import JSON_11, dump, metric_headers, serve
from chalicelib.protocol.glue.routes import ROUTES
from chalicelib.protocol.response import WireResponse

TARGET_PREFIX = "AWSGlue."
# Glue operations that write: a TransactionId they carry must be a READ_AND_WRITE transaction.
_WRITE_PREFIXES = ("Create", "Update", "Delete", "BatchCreate", "BatchUpdate", "BatchDelete")


def _check_transaction(ctx: RequestContext, operation: str, params: dict[str, Any]) -> None:
    """Once for every Glue operation: a TransactionId must name a usable transaction of the caller."""
    if params.get("TransactionId"):
        # Imported here, not at the top: the core pulls in the store (PynamoDB), which app
        # import leaves for the first request (as the route table does).
        from chalicelib.service.transactions import check_transaction_use
        check_transaction_use(ctx, params["TransactionId"], params.get("QueryAsOfTime"),
                              write=operation.startswith(_WRITE_PREFIXES))


def handle(headers: dict[str, str], raw_body: bytes | None, gateway_context: dict | None = None,
           query: Sequence[tuple[str, str]] = (), repeated: Collection[str] = ()) -> WireResponse:
    """Serve one Glue request (``query``: the decoded query parameters, signed too; ``repeated``:
    the lowercase names of the headers the request carried more than once)."""
    target = headers.get("x-amz-target", "")
    if not target.startswith(TARGET_PREFIX):
        unknown = UnknownOperationException(f"Missing or unknown X-Amz-Target header: {target!r}")
        return WireResponse(400, dump({"__type": unknown.code, "Message": unknown.message}),
                            {"Content-Type": JSON_11})
    status, result, error = serve(GLUE, target[len(TARGET_PREFIX):], ROUTES, headers, raw_body, gateway_context,
                                  "/", query, repeated, _check_transaction)
    if isinstance(error, AuthenticationError):
        status = 400  # Glue's JSON 1.1 front end answers authentication failures 400 (LF's REST one 403)
    if error is not None:
        return WireResponse(status, dump({"__type": error.code, "Message": error.message}),
                            {"Content-Type": JSON_11})
    return WireResponse(status, dump(result), {"Content-Type": JSON_11, **metric_headers()})
