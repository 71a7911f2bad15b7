"""Run in a child process on the session's store (it reads its endpoint at import).

    python -m tests.integration.paimon_table_setup create <account> <region> <database> <table> <schema-json>
        give a Glue table created through boto3 its Paimon state (schema 0 and an empty head), as
        Paimon's create table does (used by test_paimon_commits.py until that call is merged);
    python -m tests.integration.paimon_table_setup decide <account> <region> <database> <table> <snapshot-json> <statistics-json>
        a commit that crashed right after its decision: the head moved, nothing after it done
        (partition statistics pending, no files).
"""

from __future__ import annotations

import json
import sys

from chalicelib.domain.paimon.snapshots import parse_snapshot, parse_statistics
from chalicelib.service.lookups import require_database, require_table
from chalicelib.store import paimon


def create(account: str, region: str, database: str, table: str, schema_text: str) -> None:
    """Create the Paimon state of an existing Glue table; prints its uid."""
    item = require_table(require_database(f"{region}\x01{account}", database), table)
    assert paimon.create_table_state(item.uid, schema_text)
    print(item.uid)


def decide(account: str, region: str, database: str, name: str, snapshot_text: str, statistics_text: str) -> None:
    """Only the commit's transaction; prints whether it won."""
    table = require_table(require_database(f"{region}\x01{account}", database), name)
    head = paimon.get_head(table.uid)
    assert head is not None and head.pending is None
    print(paimon.commit_snapshot(table, head, parse_snapshot(json.loads(snapshot_text)),
                                 parse_statistics(json.loads(statistics_text))))


if __name__ == "__main__":
    {"create": create, "decide": decide}[sys.argv[1]](*sys.argv[2:])
