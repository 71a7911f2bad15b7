"""The Lake Formation route table: operation name (``POST /<Operation>``) -> handler.

Plain data, as Glue's (``protocol/glue/routes.py``): a family module is imported on the first call
of one of its handlers.
"""

from __future__ import annotations

from chalicelib.protocol.aws_json.wire import Handler
from chalicelib.protocol.routing import families

transactions, table_objects, permissions = families("chalicelib.protocol.lakeformation", "transactions",
                                                    "table_objects", "permissions")

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
    # data lake settings
    "GetDataLakeSettings": permissions.get_data_lake_settings,
    "PutDataLakeSettings": permissions.put_data_lake_settings,
    "GetDataLakePrincipal": permissions.get_data_lake_principal,
    # grants
    "GrantPermissions": permissions.grant_permissions,
    "RevokePermissions": permissions.revoke_permissions,
    "BatchGrantPermissions": permissions.batch_grant_permissions,
    "BatchRevokePermissions": permissions.batch_revoke_permissions,
    "ListPermissions": permissions.list_permissions,
    "GetEffectivePermissionsForPath": permissions.get_effective_permissions_for_path,
    # registered locations
    "RegisterResource": permissions.register_resource,
    "DeregisterResource": permissions.deregister_resource,
    "UpdateResource": permissions.update_resource,
    "DescribeResource": permissions.describe_resource,
    "ListResources": permissions.list_resources,
}
