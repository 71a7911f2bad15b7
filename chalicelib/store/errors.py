"""The store's errors, in one place: what a store call raises besides the catalog's own AWS
exceptions (``chalicelib.errors``), and what the service catches to retry, fence or stop."""


class TableChanged(Exception):
    """The table was deleted, re-created, or its partition indexes changed: re-read and retry."""


class CommitConflict(Exception):
    """DynamoDB kept reporting a conflicting transaction on the head: retry the request."""


class TransactionStateChanged(Exception):
    """The transaction left COMMIT_IN_PROGRESS under us (aborted by recovery)."""


class ConditionFailed(Exception):
    """A conditional write lost: the item existed, vanished or changed under us."""


class StampConflict(Exception):
    """A stamped write lost only its stamp (the commit counter moved, or a transaction holds
    the table-metadata lock): retry with a fresh stamp, the write itself may still succeed."""


class BudgetSpent(Exception):
    """A purge stopped because its chunk's budget ran out; run it again to go on."""


class Fenced(Exception):
    """The commit no longer owns its scope's lock: another applier finished applying it and
    released the lock (perhaps a later commit holds it now). Nothing of this write landed."""


class OutOfTime(Exception):
    """An apply stopped at its deadline between two DynamoDB transactions: what it wrote landed
    whole, the rest is for the next applier (applying is idempotent)."""
