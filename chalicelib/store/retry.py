"""The one retry policy: every retry or wait loop of the service runs through :func:`attempts`
(bounded in tries and in time, jittered exponential backoff between them), and a store write
that may meet a throttle or another transaction runs through :func:`retry`.

When retries of a throttled write run out the caller gets ``ThrottlingException`` (which AWS
SDKs retry themselves), never a condition failure.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Iterator, Protocol, TypeVar

from chalicelib import clock as system_clock
from chalicelib.errors import ConcurrentModificationException, ThrottlingException
from chalicelib.store.conditions import CONDITION_FAILED, CONFLICT, THROTTLED, classify

T = TypeVar("T")


class Clock(Protocol):
    """What a retry needs of a clock (``chalicelib.clock``; tests pass a fake one)."""

    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


@dataclass(frozen=True)
class Policy:
    """At most ``attempts`` tries within ``total_seconds``; before try ``n`` (from 1) a pause
    of about ``base_delay * 2**(n-1)`` capped at ``max_delay``, of which a random half is
    jitter (so racing writers do not retry in step). ``base_delay=0``: retry at once (loops
    that re-read what changed, rather than wait for someone)."""

    attempts: int = 8
    base_delay: float = 0.005
    max_delay: float = 0.2
    total_seconds: float = 10.0

    def delay(self, number: int) -> float:
        """The pause before try ``number`` (1 = the first retry)."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** min(number - 1, 30))
        return ceiling / 2 + random.uniform(0, ceiling / 2)


DEFAULT = Policy()
REREAD = Policy(base_delay=0.0)


def attempts(policy: Policy = DEFAULT, clock: Clock = system_clock) -> Iterator[int]:
    """Try numbers 0, 1, ... pausing before each retry; ends after ``policy.attempts`` tries,
    or when the next pause would run past ``policy.total_seconds``. Use as
    ``for _ in attempts(policy): ... return/break on success`` and handle giving up after."""
    start = clock.monotonic()
    for number in range(policy.attempts):
        if number:
            pause = policy.delay(number)
            if clock.monotonic() - start + pause > policy.total_seconds:
                return
            if pause > 0:
                clock.sleep(pause)
        yield number


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
