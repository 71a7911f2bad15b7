"""The one reading of a failed DynamoDB write: did a condition fail (and which action's), did
it meet another transaction (retry), was it throttled (retry, then ThrottlingException), or
something else (a bug or an outage: let it propagate).

Every store write that interprets an error asks :func:`classify`, whether the error came from
PynamoDB (``PutError``, ``UpdateError``, ``DeleteError``, ``TransactWriteError``), straight from
botocore (``ClientError``), or from ``dynamo_json`` (``TransactionCancelled``). A cancelled
DynamoDB transaction is *not* a condition failure by itself: its per-action cancellation
reasons tell, and a throttled action makes the whole of it throttled (a condition that really
failed fails again when retried).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

CONDITION_FAILED = "condition-failed"
CONFLICT = "conflict"
THROTTLED = "throttled"
OTHER = "other"

# Error codes of a whole request that mean "too fast, slow down" (botocore's standard retry
# mode retries the same ones before we see them).
_THROTTLE_CODES = frozenset({
    "ProvisionedThroughputExceededException", "ThrottlingException", "Throttling",
    "RequestLimitExceeded", "TransactionInProgressException", "LimitExceededException",
})
# Cancellation reasons of one action of a TransactWriteItems that mean the same.
_THROTTLE_REASONS = frozenset({"ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded",
                               "TransactionInProgress"})


@dataclass(frozen=True)
class Outcome:
    """What a failed write means: ``kind`` is one of CONDITION_FAILED, CONFLICT, THROTTLED,
    OTHER; ``failed`` are the positions (in the order DynamoDB reports reasons) of the actions
    whose condition failed (``(0,)`` for a single-item write)."""

    kind: str
    failed: tuple[int, ...] = ()

    @property
    def retryable(self) -> bool:
        """Whether the same write may succeed if simply sent again."""
        return self.kind in (CONFLICT, THROTTLED)


def error_code(error: BaseException) -> Optional[str]:
    """The DynamoDB error code of a whole request (e.g. ``TransactionCanceledException``)."""
    code = getattr(error, "cause_response_code", None)  # PynamoDB wraps the ClientError
    if code is None:
        response = getattr(error, "response", None)  # a botocore ClientError itself
        if isinstance(response, dict):
            code = response.get("Error", {}).get("Code")
    return code


def reason_codes(error: BaseException) -> list[Optional[str]]:
    """Per-action cancellation reason codes of a cancelled transaction, in order (``None``
    for an action that was fine); empty for any other error."""
    codes = getattr(error, "codes", None)  # dynamo_json.TransactionCancelled
    if codes is not None:
        return [_normal(c) for c in codes]
    reasons = getattr(error, "cancellation_reasons", None)  # PynamoDB
    if reasons:
        return [_normal(r.code) if r is not None else None for r in reasons]
    cause = getattr(error, "cause", None) or error
    response = getattr(cause, "response", None)
    if isinstance(response, dict):
        return [_normal(r.get("Code")) for r in response.get("CancellationReasons") or []]
    return []


def _normal(code: Any) -> Optional[str]:
    return None if code in (None, "None") else str(code)


def classify_codes(code: Optional[str], reasons: Sequence[Optional[str]]) -> Outcome:
    """:func:`classify` from an error code and cancellation reason codes."""
    if code in _THROTTLE_CODES or any(r in _THROTTLE_REASONS for r in reasons):
        return Outcome(THROTTLED)
    if code == "ConditionalCheckFailedException":
        return Outcome(CONDITION_FAILED, (0,))
    if code == "TransactionConflictException":
        return Outcome(CONFLICT)
    failed = tuple(i for i, r in enumerate(reasons) if r == "ConditionalCheckFailed")
    if failed:
        return Outcome(CONDITION_FAILED, failed)
    if "TransactionConflict" in reasons:
        return Outcome(CONFLICT)
    return Outcome(OTHER)


def classify(error: BaseException) -> Outcome:
    """What a failed DynamoDB write means (see the module docstring)."""
    return classify_codes(error_code(error), reason_codes(error))


def condition_failed(error: BaseException) -> bool:
    """Whether ``error`` is a lost condition (and nothing else: not a throttle, not a conflict)."""
    return classify(error).kind == CONDITION_FAILED
