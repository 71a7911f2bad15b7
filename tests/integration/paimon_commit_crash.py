"""A Paimon commit that stopped right after its decision, for test_paimon_commits.py: run in a
child process on the session's store (the store reads its endpoint at import).

    python -m tests.integration.paimon_commit_crash decide <account> <region> <database> <table> <snapshot-json> <statistics-json>
        a commit that crashed right after its decision: the head moved, nothing after it done
        (partition statistics pending, no files).
"""

from __future__ import annotations

import json
import sys

from chalicelib.domain.paimon.snapshots import parse_snapshot, parse_statistics
from chalicelib.service.lookups import require_database, require_table
from chalicelib.store import paimon


def decide(account: str, region: str, database: str, name: str, snapshot_text: str, statistics_text: str) -> None:
    """Only the commit's decision (the head update); prints whether it won."""
    table = require_table(require_database(f"{region}\x01{account}", database), name)
    head = paimon.get_head(table.uid)
    assert head is not None and head.pending is None
    print(paimon.commit_snapshot(head, table.uid, parse_snapshot(json.loads(snapshot_text)),
                                 parse_statistics(json.loads(statistics_text))))


if __name__ == "__main__":
    {"decide": decide}[sys.argv[1]](*sys.argv[2:])
