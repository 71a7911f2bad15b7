"""Writes that know their own: a retry that meets the write it retries answers success, not
the condition's failure (issue #46).

When DynamoDB applies a conditional write but its answer is lost (a reset, a timeout, a body
cut short), the call is sent again (by botocore's retries, or by the direct transport handing
it to botocore) and the second attempt meets the first one's item: its condition fails, and a
CreateDatabase that had just created its database answered AlreadyExists. So every
conditional PutItem and every UpdateItem carries a write token, a random value unique to the
call (the same in every attempt of it), stored in the item as attribute ``_wt`` (16 bytes); its
condition also requires that the item not hold that token yet, and it asks DynamoDB for the item
when the condition fails (``ReturnValuesOnConditionCheckFailure``). An item holding the call's
own token is the call's own write, landed by an earlier attempt: the call succeeds (its
``ReturnValues`` taken from that item), and no attempt applies twice (an ``ADD`` counts once).
A conditional DeleteItem that was sent more than once and finds no item at all takes the
delete for its own (a tombstone would cost a write). TransactWriteItems needs none of this:
DynamoDB treats a repeated ``ClientRequestToken`` as the same transaction for ten minutes
(DynamoDB Local 3.3 too), and every attempt of a call carries the same one (set here, once per
call, when the caller gave none).

Idempotent so, a write is also sent again when botocore's own retries ran out on an answer that
never came whole (a reset, a timeout, a 5xx: it may have landed), up to ``RESENDS`` more times
(store.retry's backoff, bounded in time): a CommitTransaction whose commit point's answers were
lost then answers COMMITTED instead of a 500 once DynamoDB answers again. Unconditional puts,
deletes and batch writes are sent again as they are (idempotent by themselves); reads are not.

Cost: no call more on the fault-free path; 16 bytes stored per write that carries a token, about
80 more bytes of request, and the item in the answer of a failed condition. Installed on every
store client (``config.instrument``) around whichever transport sends, so the direct transport
and ``GLUE_DDB_TRANSPORT=botocore`` are alike. ``dynamo_json``'s prepared TransactWriteItems
bodies (the partition write path) carry their own ClientRequestToken and go to the transport
directly; ``dynamo_json`` sends each again through :func:`resend_lost` itself.
"""

from __future__ import annotations

import base64
import os
import re
import uuid
from typing import Any, Callable, Optional, TypeVar

from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from chalicelib.store.dynamo.conditions import error_code
from chalicelib.attempts import Policy, attempts

ATTRIBUTE = "_wt"
_NAME, _VALUE = "#glue_wt", ":glue_wt"
_NOT_YET = f"(attribute_not_exists({_NAME}) OR {_NAME} <> {_VALUE})"
_MARK = "_glue_write_tokens"
_SET = re.compile(r"(?<![\w#:.\[\]])SET\s+", re.IGNORECASE)
# What an UpdateItem asked back that its own landed write can answer from the item as it now is
# (an "old" image is gone: such a call keeps the condition's failure).
_NEW_IMAGES = ("ALL_NEW", "UPDATED_NEW")

T = TypeVar("T")
Call = Callable[[str, dict[str, Any]], dict[str, Any]]
# Sends of a write after botocore's retries gave up on its answer (each with botocore's own
# retries again).
RESENDS = 2
_SINGLE = frozenset({"PutItem", "UpdateItem", "DeleteItem"})
_IDEMPOTENT = frozenset({"PutItem", "DeleteItem", "BatchWriteItem"})  # as they are, unconditional
_RESEND = Policy(attempts=1 + RESENDS, base_delay=0.1, max_delay=0.5, total_seconds=5.0)


def new_token() -> str:
    """A write token: 96 random bits, 16 characters."""
    return base64.urlsafe_b64encode(os.urandom(12)).decode("ascii")


def with_token(operation: str, params: dict[str, Any], token: str) -> dict[str, Any]:
    """``params`` of a PutItem / UpdateItem that also store ``token``, hold only while the item
    does not carry it already (so no attempt after the first that landed applies again: an
    ``ADD`` counts once), and ask for the item when the condition fails; a DeleteItem's ask for
    it only (a copy; the caller's dicts are left as they are)."""
    params = dict(params)
    params.setdefault("ReturnValuesOnConditionCheckFailure", "ALL_OLD")
    if operation == "DeleteItem":
        return params
    if operation == "PutItem":
        params["Item"] = {**params["Item"], ATTRIBUTE: {"S": token}}
    else:
        params["UpdateExpression"] = _set_token(params.get("UpdateExpression") or "")
    condition = params.get("ConditionExpression")
    if condition:
        # DynamoDB refuses doubled parentheses ("redundant"): PynamoDB encloses an OR already.
        condition = condition if _enclosed(condition) else f"({condition})"
        params["ConditionExpression"] = f"{condition} AND {_NOT_YET}"
    else:
        params["ConditionExpression"] = _NOT_YET
    params["ExpressionAttributeNames"] = {**(params.get("ExpressionAttributeNames") or {}), _NAME: ATTRIBUTE}
    params["ExpressionAttributeValues"] = {**(params.get("ExpressionAttributeValues") or {}), _VALUE: {"S": token}}
    return params


def _enclosed(expression: str) -> bool:
    """Whether ``expression`` is one parenthesized whole, ``(...)``."""
    depth = 0
    for at, char in enumerate(expression):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return at == len(expression) - 1
    return False


def _set_token(expression: str) -> str:
    """``expression`` with ``#glue_wt = :glue_wt`` in its SET clause (one added if it has none:
    a clause keyword may appear only once)."""
    found = _SET.search(expression)
    if found is None:
        return f"{expression} SET {_NAME} = {_VALUE}".lstrip()
    return f"{expression[:found.end()]}{_NAME} = {_VALUE}, {expression[found.end():]}"


def _answer_lost(error: BaseException) -> bool:
    """Whether botocore gave up on an answer that may hide a landed write: the connection
    failed or timed out, DynamoDB answered a 5xx, or an error answer could not be read (botocore
    then names the HTTP status as the code: a body cut short, measured with 400s; it checks
    neither the length nor the CRC32 of an error's body)."""
    if isinstance(error, (BotocoreConnectionError, HTTPClientError)):
        return True
    if isinstance(error, ClientError):
        status = (error.response.get("ResponseMetadata") or {}).get("HTTPStatusCode") or 0
        return int(status) >= 500 or str(error_code(error) or "").isdigit()
    return False


def own_write(operation: str, params: dict[str, Any], error: BaseException, token: str,
              resent: bool = False) -> Optional[dict[str, Any]]:
    """The answer for a call whose condition failed because its own earlier attempt landed
    (``params`` as sent, with the token; ``resent``: the failure came after a send of our own
    beyond botocore's), or None when the failure is real."""
    if error_code(error) != "ConditionalCheckFailedException":
        return None
    response = getattr(error, "response", None) or {}
    item = response.get("Item")
    if operation == "DeleteItem":
        # Nothing to find a token on: an item that is gone after a delete was sent more than once
        # is taken for that delete's doing (a concurrent delete of the same item would have
        # left the same state).
        if item is None and (resent or _attempts_before(response) > 0):
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
        token: Optional[str] = None
        if operation == "TransactWriteItems":
            if "ClientRequestToken" not in params:
                params = {**params, "ClientRequestToken": str(uuid.uuid4())}
        elif operation == "UpdateItem" or (operation in _SINGLE and params.get("ConditionExpression")):
            token = new_token()
            params = with_token(operation, params, token)
        elif operation not in _IDEMPOTENT:
            return self.inner(operation, params)
        answer, error, resent = self._send(operation, params)
        if error is None:
            return answer
        if token is not None:
            own = own_write(operation, params, error, token, resent)
            if own is not None:
                return own
        raise error

    def _send(self, operation: str, params: dict[str, Any]
              ) -> tuple[dict[str, Any], Optional[BaseException], bool]:
        """``inner(operation, params)`` through :func:`resend_lost`: (its answer, None, whether
        it was sent again) or ({}, the error, whether it was sent again)."""
        sends = 0

        def send() -> dict[str, Any]:
            nonlocal sends
            sends += 1
            return self.inner(operation, params)
        try:
            return resend_lost(send), None, sends > 1
        except Exception as error:  # noqa: BLE001 - handed back to be read as our own write or raised
            return {}, error, sends > 1


def resend_lost(send: Callable[[], T]) -> T:
    """``send()``, called again while its answer is lost (see ``_answer_lost``; up to
    ``RESENDS`` more times, bounded in time). Only for a send that is idempotent (a write with
    its token, a TransactWriteItems with its ClientRequestToken, an unconditional put or delete)."""
    lost: Optional[BaseException] = None
    for _ in attempts(_RESEND):
        try:
            return send()
        except Exception as error:  # noqa: BLE001 - only a lost answer is sent again
            if not _answer_lost(error):
                raise
            lost = error
    assert lost is not None
    raise lost


def install(client: Any) -> None:
    """Wrap ``client``'s call (once; after the transport is installed)."""
    if getattr(client, _MARK, False):
        return
    client._make_api_call = TokenCaller(client._make_api_call)
    setattr(client, _MARK, True)
