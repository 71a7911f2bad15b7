"""DynamoDB writes sent again: :func:`retry` while DynamoDB throttles a write or it meets another
transaction, :func:`conditional` for a conditional write, on the one policy of
``chalicelib.attempts``.

When retries of a throttled write run out the caller gets ``ThrottlingException`` (which AWS
SDKs retry themselves), never a condition failure.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from chalicelib import clock as system_clock
from chalicelib.attempts import DEFAULT, Clock, Policy, attempts
from chalicelib.errors import ConcurrentModificationException, ThrottlingException
from chalicelib.store.dynamo.conditions import CONDITION_FAILED, CONFLICT, THROTTLED, classify

T = TypeVar("T")


def retry(call: Callable[[], T], policy: Policy = DEFAULT, clock: Clock = system_clock) -> T:
    """``call()``, sent again while DynamoDB throttles it or it meets another transaction.
    Out of tries: ThrottlingException for a throttle, the last error itself for a conflict;
    any other error (a failed condition included) is raised at once."""
    error: BaseException | None = None
    for _ in attempts(policy, clock):
        try:
            return call()
        except Exception as failure:  # noqa: BLE001 - classified below, re-raised unless retryable
            if not classify(failure).retryable:
                raise
            error = failure
    assert error is not None
    raise given_up(error, error)


def conditional(call: Callable[[], object], policy: Policy = DEFAULT, clock: Clock = system_clock) -> bool:
    """Run a conditional single-item write: True if it landed, False if its condition failed.
    Throttles and transaction conflicts are retried (see :func:`retry`); a conflict that
    outlasts them is ConcurrentModificationException."""
    try:
        retry(call, policy, clock)
        return True
    except Exception as error:  # noqa: BLE001 - classified, re-raised unless a condition/conflict
        kind = classify(error).kind
        if kind == CONDITION_FAILED:
            return False
        if kind == CONFLICT:
            raise ConcurrentModificationException("The item is being changed by another request; retry") from None
        raise


def given_up(error: BaseException, otherwise: BaseException) -> BaseException:
    """What to raise when retries of ``error`` ran out: ThrottlingException for a throttle,
    else ``otherwise`` (the caller's own "try again" error)."""
    if classify(error).kind == THROTTLED:
        return _throttled(error)
    return otherwise


def _throttled(error: BaseException) -> ThrottlingException:
    exception = ThrottlingException("Rate exceeded: the catalog's store is throttling requests; retry")
    exception.__cause__ = error
    return exception
