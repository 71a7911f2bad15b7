"""Spark data pipelines for the Glue Data Catalog: register a data lake, compute column
statistics, read with partition pruning by the catalog.

They talk to the catalog only through its public API (boto3), so the same jobs run against
this service or AWS Glue, with ``local[*]`` on one machine or unchanged under ``spark-submit``.
Entry point: ``python -m pipelines {sample,register,stats,read} --help``.
"""
