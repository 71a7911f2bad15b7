"""Conditional writes that know their own: a retry that meets the write it retries answers
success, not the condition's failure (issue #46).

When DynamoDB applies a conditional write but its answer is lost (a reset, a timeout, a body
cut short), the call is sent again (by botocore's retries, or by the direct transport handing
it to botocore) and the second attempt meets the first one's item: its condition fails, and a
CreateDatabase that had just created its database answered AlreadyExists. So every
conditional PutItem and UpdateItem carries a write token, a random value unique to the call
(the same in every attempt of it) stored in the item as attribute ``_wt`` (16 bytes), and asks
DynamoDB for the item when the condition fails (``ReturnValuesOnConditionCheckFailure``): an
item holding the call's own token is the call's own write, landed by an earlier attempt, and the
call succeeds (its ``ReturnValues`` taken from that item). A conditional DeleteItem that was
sent more than once and finds no item at all took it as its own delete. TransactWriteItems
needs none of this: DynamoDB treats a repeated ``ClientRequestToken`` as the same transaction
for ten minutes (DynamoDB Local 3.3 too), and every attempt of a call carries the same one
(set here, once per call, when the caller gave none).

Cost: nothing more is sent or read on the fault-free path but 16 bytes per conditional write
and an item in the answer of a failed condition. Installed on every store client
(``config.instrument``), outside the transport, so it covers the direct transport and
``GLUE_DDB_TRANSPORT=botocore`` alike.
"""

from __future__ import annotations

import base64
import os
import re
import uuid
from typing import Any, Callable, Optional

from chalicelib.store.conditions import error_code

ATTRIBUTE = "_wt"
_NAME, _VALUE = "#glue_wt", ":glue_wt"
_MARK = "_glue_write_tokens"
_SET = re.compile(r"(?<![\w#:.\[\]])SET\s+", re.IGNORECASE)
# What an UpdateItem asked back that its own landed write can answer from the item as it now is
# (an "old" image is gone: such a call keeps the condition's failure).
_NEW_IMAGES = ("ALL_NEW", "UPDATED_NEW")

Call = Callable[[str, dict[str, Any]], dict[str, Any]]


def new_token() -> str:
    """A write token: 96 random bits, 16 characters."""
    return base64.urlsafe_b64encode(os.urandom(12)).decode("ascii")


def with_token(operation: str, params: dict[str, Any], token: str) -> dict[str, Any]:
    """``params`` of a conditional PutItem / UpdateItem that also store ``token`` and ask for the
    item when the condition fails; a DeleteItem's ask for it only (a copy; the caller's dicts
    are left as they are)."""
    params = dict(params)
    params.setdefault("ReturnValuesOnConditionCheckFailure", "ALL_OLD")
    if operation == "PutItem":
        params["Item"] = {**params["Item"], ATTRIBUTE: {"S": token}}
    elif operation == "UpdateItem":
        params["UpdateExpression"] = _set_token(params.get("UpdateExpression") or "")
        params["ExpressionAttributeNames"] = {**(params.get("ExpressionAttributeNames") or {}), _NAME: ATTRIBUTE}
        params["ExpressionAttributeValues"] = {**(params.get("ExpressionAttributeValues") or {}),
                                               _VALUE: {"S": token}}
    return params


def _set_token(expression: str) -> str:
    """``expression`` with ``#glue_wt = :glue_wt`` in its SET clause (one added if it has none:
    a clause keyword may appear only once)."""
    found = _SET.search(expression)
    if found is None:
        return f"{expression} SET {_NAME} = {_VALUE}".lstrip()
    return f"{expression[:found.end()]}{_NAME} = {_VALUE}, {expression[found.end():]}"


def own_write(operation: str, params: dict[str, Any], error: BaseException, token: str) -> Optional[dict[str, Any]]:
    """The answer for a call whose condition failed because its own earlier attempt landed
    (``params`` as sent, with the token), or None when the failure is real."""
    if error_code(error) != "ConditionalCheckFailedException":
        return None
    response = getattr(error, "response", None) or {}
    item = response.get("Item")
    if operation == "DeleteItem":
        # Nothing to find a token on: an item that is gone after a delete was sent more than once
        # is taken for that delete's doing (a concurrent delete of the same item would have
        # left the same state).
        if item is None and _attempts_before(response) > 0:
            return {}
        return None
    if not isinstance(item, dict) or item.get(ATTRIBUTE) != {"S": token}:
        return None
    if operation == "UpdateItem":
        wanted = params.get("ReturnValues") or "NONE"
        if wanted in _NEW_IMAGES:
            return {"Attributes": {k: v for k, v in item.items() if k != ATTRIBUTE}}
        if wanted != "NONE":
            return None
    return {}


def _attempts_before(response: dict[str, Any]) -> int:
    """How many attempts of this call went before the one answered (botocore's count; the
    direct transport adds its own, see ``dynamo_http.DirectCaller``)."""
    try:
        return int((response.get("ResponseMetadata") or {}).get("RetryAttempts") or 0)
    except (TypeError, ValueError):
        return 0


class TokenCaller:
    """Stands in for a botocore DynamoDB client's ``_make_api_call`` (whatever sends it:
    ``inner``), giving conditional single-item writes a write token and every
    TransactWriteItems one ClientRequestToken for all its attempts."""

    def __init__(self, inner: Call) -> None:
        self.inner = inner

    def __call__(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        if operation == "TransactWriteItems" and "ClientRequestToken" not in params:
            return self.inner(operation, {**params, "ClientRequestToken": str(uuid.uuid4())})
        if operation not in ("PutItem", "UpdateItem", "DeleteItem") or not params.get("ConditionExpression"):
            return self.inner(operation, params)
        token = new_token()
        sent = with_token(operation, params, token)
        try:
            return self.inner(operation, sent)
        except Exception as error:
            answer = own_write(operation, sent, error, token)
            if answer is None:
                raise
            return answer


def install(client: Any) -> None:
    """Wrap ``client``'s call (once; after the transport is installed)."""
    if getattr(client, _MARK, False):
        return
    client._make_api_call = TokenCaller(client._make_api_call)
    setattr(client, _MARK, True)
