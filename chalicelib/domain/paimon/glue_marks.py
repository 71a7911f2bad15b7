"""How a Glue table document says it is a Paimon table, and an external one: the marks the
Paimon catalog writes into its Glue mirror (``Parameters.table_type`` = ``PAIMON``; an external
table's ``EXTERNAL`` = ``TRUE`` and TableType ``EXTERNAL_TABLE``). Read by the Paimon catalog and
by Glue's UpdateTable, which may not change them (service/tables.py)."""

from __future__ import annotations

from typing import Any

PAIMON = "PAIMON"
TABLE_TYPE = "table_type"


def is_paimon(doc: dict[str, Any]) -> bool:
    """Whether a Glue table document is a Paimon table."""
    return str((doc.get("Parameters") or {}).get(TABLE_TYPE, "")).upper() == PAIMON


def is_external(doc: dict[str, Any]) -> bool:
    """Whether a Glue table document is marked external (``EXTERNAL=TRUE`` or TableType)."""
    return (str((doc.get("Parameters") or {}).get("EXTERNAL", "")).upper() == "TRUE"
            or doc.get("TableType") == "EXTERNAL_TABLE")
