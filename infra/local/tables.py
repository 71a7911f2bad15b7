"""Create the catalog's DynamoDB tables for the store configured in the environment.

``python -m infra.local.tables`` does it in a fresh process: the store reads
GLUE_DDB_ENDPOINT / GLUE_TABLE_PREFIX / AWS_REGION once, at import, so a process that
already imported it cannot create tables for another endpoint or prefix.
"""

from __future__ import annotations

import sys

# The names an ImportError carries when the store itself is not written yet; any other
# missing module is a real bug and must surface.
_NOT_YET_WRITTEN = {"chalicelib", "chalicelib.store", "chalicelib.store.bootstrap"}


def create_tables() -> bool:
    """Create every table (idempotent). False, with a warning, when the store does not exist yet."""
    try:
        from chalicelib.store.bootstrap import create_tables as bootstrap_create_tables
    except ImportError as exc:
        if exc.name not in _NOT_YET_WRITTEN and "create_tables" not in str(exc):
            raise
        print(f"warning: no tables created, chalicelib.store.bootstrap.create_tables is missing ({exc})",
              file=sys.stderr)
        return False
    bootstrap_create_tables()
    return True


if __name__ == "__main__":
    create_tables()
