"""The Lake Formation route table: operation name (``POST /<Operation>``) -> handler.

Plain data, as Glue's (``protocol/glue/routes.py``): a family module is imported on the first call
of one of its handlers. Lake Formation's permissions (grants, revokes, ...) come next, as a family
module and its rows here.
"""

from __future__ import annotations

from chalicelib.protocol.aws_json.wire import Handler
from chalicelib.protocol.routing import families

transactions, table_objects = families("chalicelib.protocol.lakeformation", "transactions", "table_objects")

ROUTES: dict[str, Handler] = {
    # transactions
    "CancelTransaction": transactions.cancel_transaction,
    "CommitTransaction": transactions.commit_transaction,
    "DescribeTransaction": transactions.describe_transaction,
    "ExtendTransaction": transactions.extend_transaction,
    "ListTransactions": transactions.list_transactions,
    "StartTransaction": transactions.start_transaction,
    # table objects
    "DeleteObjectsOnCancel": table_objects.delete_objects_on_cancel,
    "GetTableObjects": table_objects.get_table_objects,
    "UpdateTableObjects": table_objects.update_table_objects,
}
