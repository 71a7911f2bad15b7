"""Output members the service never fills, per read operation, each with the reason: the reviewed
allow-list of tests/integration/test_output_members.py. Filling a member, or ceasing to, means
editing this list (a conscious change). Paths: ``a.b`` a nested member, ``a[]`` each list element.
"""

from __future__ import annotations

from chalicelib.service.absent_resources import NEVER_HELD

# Members of a Table object (a prefix is added per operation below).
_TABLE = {
    "FederatedTable": "federated catalogs (tables of another engine seen through a connection) are not served",
    "IcebergTableMetadata": "AWS's parsed view of an Iceberg table's metadata file: not produced here",
    "RLSProperties": "row-level security policies (Lake Formation permissions) are not served",
    "Status": "only for asynchronous Data Catalog view changes, which complete synchronously here",
    "StorageDescriptor.SchemaReference.SchemaId.SchemaArn": "an alternative to SchemaName+RegistryName; "
                                                            "round-trips as given, like them",
    "StorageDescriptor.SchemaReference.SchemaVersionId": "an alternative to SchemaId; round-trips as given",
}
_VIEW = {
    "ViewDefinition.Representations[].IsStale": "staleness of a dialect against its sub-objects is not tracked",
}
_PARTITION = {
    "StorageDescriptor.SchemaReference.SchemaId.SchemaArn": _TABLE["StorageDescriptor.SchemaReference.SchemaId.SchemaArn"],
    "StorageDescriptor.SchemaReference.SchemaVersionId": _TABLE["StorageDescriptor.SchemaReference.SchemaVersionId"],
}
_STATISTICS = {
    f"ColumnStatisticsList[].StatisticsData.{kind}ColumnStatisticsData":
        "one variant per value, named by StatisticsData.Type (test_column_statistics.py round-trips all seven)"
    for kind in ("Binary", "Boolean", "Date", "Decimal", "Double", "String")
}


def _under(prefix: str, members: dict[str, str]) -> dict[str, str]:
    return {f"{prefix}{path}": reason for path, reason in members.items()}


_CONNECTION = {
    "CompatibleComputeEnvironments": "set by AWS after it validates a connection for compute environments "
                                     "(ValidateForComputeEnvironments): no validation runs here",
    "LastConnectionValidationTime": "connections are never tested here (TestConnection is not served)",
    "LastUpdatedBy": "who changed a connection is not recorded (callers are not authenticated yet)",
    "StatusReason": "a connection is READY at once: there is no failure to explain",
    "AuthenticationConfiguration.OAuth2Properties": "only for AuthenticationType OAUTH2 (the recipe's is "
                                                    "BASIC); stored without its secrets",
}
_ONE_PAGE = "the recipe's catalog fits one page; paging is covered by its own test file"

# Members of a PrincipalResourcePermissions (Lake Formation grants).
_UNGRANTABLE = "grants on LF-Tags, tag policies, data cells filters, RLS policies and functions are not served"
_GRANT = {
    "AdditionalDetails": "Resource Access Manager shares are not modelled",
    "Condition": "grant conditions are refused (InvalidInputException)",
    **{f"Resource.{kind}": _UNGRANTABLE for kind in ("AnyResource", "DataCellsFilter", "LFTag", "LFTagExpression",
                                                     "LFTagPolicy", "RLSPolicy", "UserDefinedFunction")},
    "Resource.Catalog.Id": "a catalog grant is answered as Catalog {} (the catalog is the request's CatalogId)",
}
_VERIFICATION = "nothing checks a registered location's bucket or role here, so there is no status to report"

_CRAWLER = {
    "LastCrawl": "the recipe's crawler never runs (the session server's worker would crawl it with the real "
                 "engine); test_crawlers.py checks LastCrawl after runs",
    **{f"Targets.{kind}": "round-trips as given; the recipe's crawler has S3 targets only"
       for kind in ("CatalogTargets", "DeltaTargets", "DynamoDBTargets", "HudiTargets", "IcebergTargets",
                    "JdbcTargets", "MongoDBTargets")},
    **{f"Targets.S3Targets[].{member}": "round-trips as given; not in the recipe's S3 target"
       for member in ("ConnectionName", "DlqEventQueueArn", "EventQueueArn")},
}


UNFILLED: dict[str, dict[str, str]] = {
    "GetDatabase": {},
    "GetDatabases": {},
    "GetTable": _under("Table.", {**_TABLE, **_VIEW}),
    "GetTables": _under("TableList[].", {**_TABLE, **_VIEW}),
    "SearchTables": _under("TableList[].", {**_TABLE, **_VIEW}),
    "GetTableVersion": _under("TableVersion.Table.", {**_TABLE, **_VIEW}),
    "GetTableVersions": _under("TableVersions[].Table.", {**_TABLE, **_VIEW}),
    "GetPartition": _under("Partition.", _PARTITION),
    "GetPartitions": _under("Partitions[].", _PARTITION),
    "BatchGetPartition": _under("Partitions[].", _PARTITION),
    "GetPartitionIndexes": {
        "NextToken": "a table has at most 3 indexes: every answer is one page",
    },
    "GetColumnStatisticsForTable": _STATISTICS,
    "GetColumnStatisticsForPartition": _STATISTICS,
    "GetTableObjects": {},
    "DescribeTransaction": {},
    "ListTransactions": {},
    "GetConnection": _under("Connection.", _CONNECTION),
    "GetConnections": {**_under("ConnectionList[].", _CONNECTION), "NextToken": _ONE_PAGE},
    "GetUserDefinedFunction": {},
    "GetUserDefinedFunctions": {"NextToken": _ONE_PAGE},
    "GetTags": {},
    "GetDataCatalogEncryptionSettings": {},
    "GetResourcePolicy": {},
    "GetResourcePolicies": {"NextToken": "a catalog has one policy here (no Resource Access Manager shares): one page"},
    "GetCatalogImportStatus": {},
    "GetDataLakeSettings": {},
    "GetDataLakePrincipal": {},
    "ListPermissions": {**_under("PrincipalResourcePermissions[].", _GRANT)},
    "GetEffectivePermissionsForPath": {
        **_under("Permissions[].", {k: v for k, v in _GRANT.items() if k != "Resource.Catalog.Id"}),
        "Permissions[].Resource.Catalog": "a path names a database, a table or a location: catalog grants are "
                                          "not on its path",
    },
    "DescribeResource": {"ResourceInfo.VerificationStatus": _VERIFICATION},
    "ListResources": {"ResourceInfoList[].VerificationStatus": _VERIFICATION},
    "GetCrawler": _under("Crawler.", _CRAWLER),
    "GetCrawlers": {**_under("Crawlers[].", _CRAWLER), "NextToken": _ONE_PAGE},
    "BatchGetCrawlers": _under("Crawlers[].", _CRAWLER),
    "ListCrawlers": {"NextToken": _ONE_PAGE},
    "GetCrawlerMetrics": {"NextToken": _ONE_PAGE},
    "ListCrawls": {"NextToken": _ONE_PAGE},
    "GetClassifier": {},
    "GetClassifiers": {"NextToken": _ONE_PAGE},
    # What the service never holds (service/absent_resources.py): every answer is one empty page.
    **{operation: {"NextToken": "nothing of this kind is ever held: one empty page"} for operation in NEVER_HELD},
}
