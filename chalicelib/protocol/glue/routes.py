"""The Glue route table: operation name (``X-Amz-Target: AWSGlue.<Operation>``) -> handler.

Plain data, read by the wire (to dispatch) and by ``protocol.served`` (the operations served, for
docs and tests). One module per API family, one function per operation, named after it; a family
module is imported on the first call of one of its handlers (``protocol.routing``), not with the app.
"""

from __future__ import annotations

from chalicelib.protocol.aws_json.wire import Handler
from chalicelib.protocol.routing import families

(databases, tables, table_versions, partition_reads, partition_writes, partition_indexes, statistics, search,
 user_functions, connections, tags, catalog_settings, crawlers, absent_resources) = families(
    "chalicelib.protocol.glue", "databases", "tables", "table_versions", "partition_reads", "partition_writes",
    "partition_indexes", "statistics", "search", "user_functions", "connections", "tags", "catalog_settings",
    "crawlers", "absent_resources")

ROUTES: dict[str, Handler] = {
    # databases
    "CreateDatabase": databases.create_database,
    "DeleteDatabase": databases.delete_database,
    "GetDatabase": databases.get_database,
    "GetDatabases": databases.get_databases,
    "UpdateDatabase": databases.update_database,
    # tables
    "BatchDeleteTable": tables.batch_delete_table,
    "CreateTable": tables.create_table,
    "DeleteTable": tables.delete_table,
    "GetTable": tables.get_table,
    "GetTables": tables.get_tables,
    "UpdateTable": tables.update_table,
    # table versions
    "BatchDeleteTableVersion": table_versions.batch_delete_table_version,
    "DeleteTableVersion": table_versions.delete_table_version,
    "GetTableVersion": table_versions.get_table_version,
    "GetTableVersions": table_versions.get_table_versions,
    # partition reads
    "BatchGetPartition": partition_reads.batch_get_partition,
    "GetPartition": partition_reads.get_partition,
    "GetPartitions": partition_reads.get_partitions,
    # partition writes
    "BatchCreatePartition": partition_writes.batch_create_partition,
    "BatchDeletePartition": partition_writes.batch_delete_partition,
    "BatchUpdatePartition": partition_writes.batch_update_partition,
    "CreatePartition": partition_writes.create_partition,
    "DeletePartition": partition_writes.delete_partition,
    "UpdatePartition": partition_writes.update_partition,
    # partition indexes
    "CreatePartitionIndex": partition_indexes.create_partition_index,
    "DeletePartitionIndex": partition_indexes.delete_partition_index,
    "GetPartitionIndexes": partition_indexes.get_partition_indexes,
    # statistics
    "DeleteColumnStatisticsForPartition": statistics.delete_column_statistics_for_partition,
    "DeleteColumnStatisticsForTable": statistics.delete_column_statistics_for_table,
    "GetColumnStatisticsForPartition": statistics.get_column_statistics_for_partition,
    "GetColumnStatisticsForTable": statistics.get_column_statistics_for_table,
    "UpdateColumnStatisticsForPartition": statistics.update_column_statistics_for_partition,
    "UpdateColumnStatisticsForTable": statistics.update_column_statistics_for_table,
    # search
    "SearchTables": search.search_tables,
    # user functions
    "CreateUserDefinedFunction": user_functions.create_user_defined_function,
    "DeleteUserDefinedFunction": user_functions.delete_user_defined_function,
    "GetUserDefinedFunction": user_functions.get_user_defined_function,
    "GetUserDefinedFunctions": user_functions.get_user_defined_functions,
    "UpdateUserDefinedFunction": user_functions.update_user_defined_function,
    # connections
    "BatchDeleteConnection": connections.batch_delete_connection,
    "CreateConnection": connections.create_connection,
    "DeleteConnection": connections.delete_connection,
    "GetConnection": connections.get_connection,
    "GetConnections": connections.get_connections,
    "UpdateConnection": connections.update_connection,
    # tags
    "GetTags": tags.get_tags,
    "TagResource": tags.tag_resource,
    "UntagResource": tags.untag_resource,
    # crawlers and classifiers
    "BatchGetCrawlers": crawlers.batch_get_crawlers,
    "CreateClassifier": crawlers.create_classifier,
    "CreateCrawler": crawlers.create_crawler,
    "DeleteClassifier": crawlers.delete_classifier,
    "DeleteCrawler": crawlers.delete_crawler,
    "GetClassifier": crawlers.get_classifier,
    "GetClassifiers": crawlers.get_classifiers,
    "GetCrawler": crawlers.get_crawler,
    "GetCrawlerMetrics": crawlers.get_crawler_metrics,
    "GetCrawlers": crawlers.get_crawlers,
    "ListCrawlers": crawlers.list_crawlers,
    "ListCrawls": crawlers.list_crawls,
    "StartCrawler": crawlers.start_crawler,
    "StartCrawlerSchedule": crawlers.start_crawler_schedule,
    "StopCrawler": crawlers.stop_crawler,
    "StopCrawlerSchedule": crawlers.stop_crawler_schedule,
    "UpdateClassifier": crawlers.update_classifier,
    "UpdateCrawler": crawlers.update_crawler,
    "UpdateCrawlerSchedule": crawlers.update_crawler_schedule,
    # catalog settings
    "DeleteResourcePolicy": catalog_settings.delete_resource_policy,
    "GetCatalogImportStatus": catalog_settings.get_catalog_import_status,
    "GetDataCatalogEncryptionSettings": catalog_settings.get_data_catalog_encryption_settings,
    "GetResourcePolicies": catalog_settings.get_resource_policies,
    "GetResourcePolicy": catalog_settings.get_resource_policy,
    "PutDataCatalogEncryptionSettings": catalog_settings.put_data_catalog_encryption_settings,
    "PutResourcePolicy": catalog_settings.put_resource_policy,
    # resources never held (jobs, triggers, ...): empty listings
    "GetDevEndpoints": absent_resources.get_dev_endpoints,
    "GetJobs": absent_resources.get_jobs,
    "GetMLTransforms": absent_resources.get_m_l_transforms,
    "GetSecurityConfigurations": absent_resources.get_security_configurations,
    "GetTriggers": absent_resources.get_triggers,
    "ListBlueprints": absent_resources.list_blueprints,
    "ListCustomEntityTypes": absent_resources.list_custom_entity_types,
    "ListDataQualityRulesets": absent_resources.list_data_quality_rulesets,
    "ListDevEndpoints": absent_resources.list_dev_endpoints,
    "ListJobs": absent_resources.list_jobs,
    "ListMLTransforms": absent_resources.list_m_l_transforms,
    "ListSessions": absent_resources.list_sessions,
    "ListTriggers": absent_resources.list_triggers,
    "ListUsageProfiles": absent_resources.list_usage_profiles,
    "ListWorkflows": absent_resources.list_workflows,
}
