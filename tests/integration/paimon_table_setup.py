"""Run in a child process on the session's store (it reads its endpoint at import): give a Glue
table created through boto3 its Paimon state (schema 0 and an empty head), as Paimon's create
table does. Used by test_paimon_commits.py until the Paimon create-table call is merged.

    python -m tests.integration.paimon_table_setup <account> <region> <database> <table> <schema-json>
"""

from __future__ import annotations

import sys

from chalicelib.service.lookups import require_database, require_table
from chalicelib.store import paimon


def main(account: str, region: str, database: str, table: str, schema_text: str) -> None:
    """Create the Paimon state of an existing Glue table."""
    item = require_table(require_database(f"{region}\x01{account}", database), table)
    assert paimon.create_table_state(item.uid, schema_text)
    print(item.uid)


if __name__ == "__main__":
    main(*sys.argv[1:6])
