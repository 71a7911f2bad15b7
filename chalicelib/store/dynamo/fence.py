"""Fenced writes: every write of a commit's apply lands in a DynamoDB transaction that also
checks that the commit still owns its scope's commit lock (docs/design.md, "Transactions",
"Fencing"). The lock passes from a commit to anyone else only by being deleted after the
commit is fully applied, and never names that commit again, so a committer that stalled past
its lease (or a second applier rolling the same commit forward) cannot land a write after a
later commit's: its transaction fails the check instead, and it stops with :class:`Fenced`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

from pynamodb.exceptions import TransactWriteError
from pynamodb.transactions import TransactWrite

from chalicelib import clock
from chalicelib.store.dynamo.conditions import CONDITION_FAILED, classify
from chalicelib.store.dynamo.config import connection
from chalicelib.store.dynamo.models import CommitStateItem
from chalicelib.store.dynamo.retry import retry
from chalicelib.store.errors import Fenced, OutOfTime  # noqa: F401  (callers reach them here too)

# One TransactWriteItems holds at most 100 actions: the lock check and 99 writes.
WRITES_PER_TRANSACTION = 99

Write = Callable[[TransactWrite], None]


@dataclass(frozen=True)
class Fence:
    """The condition a commit's apply writes carry: the lock item ``lock`` (in
    ``lf_commit_state``) still names ``transaction_id``."""

    lock: str
    transaction_id: str

    def add_check(self, tx: TransactWrite) -> None:
        """Add the lock check to a DynamoDB transaction. Add it before any other condition
        check: PynamoDB sends checks first, so its cancellation reason is the first one."""
        tx.condition_check(CommitStateItem, self.lock,
                           condition=CommitStateItem.transaction_id == self.transaction_id)


def transact(fence: Optional[Fence], build: Callable[[TransactWrite], None]) -> None:
    """Run one DynamoDB transaction made by ``build``, with ``fence``'s check first (if given).

    Fenced when the check fails; a transaction conflict (another request on one of its items at
    the same moment, e.g. a committer polling the lock) or a throttle is retried (store.retry:
    ThrottlingException when a throttle outlasts the retries); any other failure (a condition
    of ``build``'s own, a conflict that outlasts the retries) is raised as the TransactWriteError.
    """
    def send() -> None:
        with TransactWrite(connection=connection()) as tx:
            if fence is not None:
                fence.add_check(tx)
            build(tx)
    try:
        retry(send)
    except TransactWriteError as error:
        outcome = classify(error)
        if fence is not None and outcome.kind == CONDITION_FAILED and 0 in outcome.failed:
            raise Fenced() from None
        raise


def write_all(fence: Fence, writes: Iterable[Write], deadline: Optional[float] = None) -> None:
    """Make unconditional writes under the fence, 99 to a DynamoDB transaction, in order.
    Fenced as soon as one transaction fails the check (the ones before it have landed);
    OutOfTime when ``deadline`` (``clock.monotonic``) has passed with writes still to make.
    ``writes`` is taken a transaction's worth at a time, so a generator builds only what is
    sent (the 40,000 items of a 20,000-write commit take 0.7 s of CPU to build)."""
    pending = iter(writes)
    first = True
    while chunk := list(itertools.islice(pending, WRITES_PER_TRANSACTION)):
        if not first and deadline is not None and clock.monotonic() >= deadline:
            raise OutOfTime()
        first = False

        def build(tx: TransactWrite, chunk: Sequence[Write] = chunk) -> None:
            for write in chunk:
                write(tx)
        transact(fence, build)
