"""The one retry policy: every retry or wait loop of the service and the store runs through
:func:`attempts` (bounded in tries and in time, jittered exponential backoff between them).
The store's ``dynamo.retry`` sends a DynamoDB write again through it."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterator, Protocol

from chalicelib import clock as system_clock


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
