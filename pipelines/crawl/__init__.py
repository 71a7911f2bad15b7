"""The crawler: what StartCrawler runs. One run reads the crawler's targets and writes tables and
partitions through the public Glue API, as AWS's crawler does.

- S3Targets: the include path is listed (exclusion globs and Hadoop's hidden names dropped), up
  to SampleSize files of each folder are classified from ranged reads (``classify``), folders are
  grouped into tables and partitions (``discover``), and each table is created or updated by the
  SchemaChangePolicy; partitions are written 100 per BatchCreatePartition.
- CatalogTargets: each table's location is crawled as that one table.
- DeltaTargets / IcebergTargets: the table is registered from its ``_delta_log`` / metadata JSON.

No pyspark here: the same engine runs in a crawler function, from ``python -m pipelines crawl``,
or on a Spark driver (spark-submit, ``pipelines/crawl/spark_driver.py``) for a crawl too large for
a function. Only the classification of files differs there: ``classify_files`` (a thread pool by
default, Spark tasks under the driver); ``hand_off`` lets the caller send a large crawl there
after listing, before anything is written.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional, Sequence

from botocore.exceptions import ClientError

from pipelines.crawl import classify as cls
from pipelines.crawl import discover, s3files

__all__ = ["ClassifyFiles", "CrawlFailed", "run_crawl"]

BATCH_CREATE = 100
BATCH_UPDATE = 100
BATCH_DELETE = 25
INDEX_NAME = "crawler_partition_index"
WORKERS = 16
SERIALIZER = {"CrawlerSchemaSerializerVersion": "1.0", "CrawlerSchemaDeserializerVersion": "1.0"}
# Files classified between two looks at should_stop() and two progress reports.
CLASSIFY_BATCH = 256

# ``classify_files(bucket, [(key, size), ...], custom classifiers)``: each file's classification
# (None: UNKNOWN), in order. A ClientError of S3 fails the crawl as it does in-process.
ClassifyFiles = Callable[[str, list[tuple[str, int]], list[dict[str, Any]]], list[Optional[cls.Classified]]]


class CrawlFailed(Exception):
    """A failure AWS would report in LastCrawl.ErrorMessage (``str(e)``)."""


class _Stopped(Exception):
    pass


@dataclass
class _Stats:
    tables_created: int = 0
    tables_updated: int = 0
    tables_deleted: int = 0
    partitions_created: int = 0
    partitions_updated: int = 0
    partitions_deleted: int = 0
    files_skipped: int = 0
    files_read: int = 0
    log: list[str] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def add_time(self, phase: str, since: float) -> None:
        self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - since


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


class _Run:
    def __init__(self, crawler: dict[str, Any], classifiers: list[dict[str, Any]], glue: Any, s3: Any,
                 should_stop: Callable[[], bool], progress: Callable[[dict[str, Any]], None],
                 classify_files: Optional[ClassifyFiles] = None, classify_batch: int = CLASSIFY_BATCH,
                 hand_off: Optional[Callable[[int], bool]] = None):
        self.crawler, self.glue, self.s3 = crawler, glue, s3
        self.classify_files = classify_files or self.classify_here
        self.classify_batch = max(1, classify_batch)
        self.hand_off = hand_off
        # Listings made to count the files before the hand-off decision, reused by the crawl.
        self.listed: dict[tuple[str, tuple[str, ...]], tuple[str, str, dict[tuple[str, ...], list]]] = {}
        self.name = crawler.get("Name", "")
        self.custom = [c for c in classifiers if "CsvClassifier" in c or "JsonClassifier" in c]
        self.should_stop, self.report = should_stop, progress
        try:
            self.config = json.loads(crawler.get("Configuration") or "{}")
        except ValueError as error:
            raise CrawlFailed(f"Crawler configuration is not valid JSON: {error}") from None
        grouping = self.config.get("Grouping") or {}
        self.combine = grouping.get("TableGroupingPolicy") == "CombineCompatibleSchemas"
        level = grouping.get("TableLevelConfiguration")
        self.level = int(level) if level else None
        output = self.config.get("CrawlerOutput") or {}
        self.inherit = (output.get("Partitions") or {}).get("AddOrUpdateBehavior") == "InheritFromTable"
        self.merge_new = (output.get("Tables") or {}).get("AddOrUpdateBehavior") == "MergeNewColumns"
        # AWS: "If the tables detected by the crawler during its crawl is greater that this input
        # value, the crawl fails and no data is written to the Data Catalog."
        threshold = (output.get("Tables") or {}).get("TableThreshold")
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1):
            raise CrawlFailed(f"TableThreshold must be an integer greater than 0: {threshold!r}")
        self.table_threshold: Optional[int] = threshold
        self.create_index = self.config.get("CreatePartitionIndex", True) is not False
        policy = crawler.get("SchemaChangePolicy") or {}
        self.update = policy.get("UpdateBehavior") or "UPDATE_IN_DATABASE"
        self.delete = policy.get("DeleteBehavior") or "DEPRECATE_IN_DATABASE"
        self.new_only = (crawler.get("RecrawlPolicy") or {}).get("RecrawlBehavior") == "CRAWL_NEW_FOLDERS_ONLY"
        self.database = crawler.get("DatabaseName") or "default"
        self.prefix = crawler.get("TablePrefix") or ""
        self.stats = _Stats()
        self.started = time.perf_counter()
        self.pool = ThreadPoolExecutor(max_workers=WORKERS)
        self.seen_tables: dict[tuple[str, str], str] = {}  # (db, name) -> location, this run
        self.deferred: list[Callable[[], Any]] = []  # planned writes of known tables' new folders

    # ------------------------------------------------------------ plumbing

    def check_stop(self) -> None:
        if self.should_stop():
            raise _Stopped()

    def tick(self, left: Optional[float] = None) -> None:
        s = self.stats
        self.report({"TablesCreated": s.tables_created, "TablesUpdated": s.tables_updated,
                     "TablesDeleted": s.tables_deleted, "PartitionsCreated": s.partitions_created,
                     "TimeLeftSeconds": int(left or 0)})

    def write(self, call: Callable[..., Any], **kwargs: Any) -> Any:
        """A catalog write, timed (the bench reports the share of time spent here)."""
        since = time.perf_counter()
        try:
            return call(**kwargs)
        finally:
            self.stats.add_time("catalog_writes", since)

    def read(self, call: Callable[..., Any], **kwargs: Any) -> Any:
        since = time.perf_counter()
        try:
            return call(**kwargs)
        finally:
            self.stats.add_time("catalog_reads", since)

    def get_table(self, database: str, name: str) -> Optional[dict[str, Any]]:
        try:
            return self.read(self.glue.get_table, DatabaseName=database, Name=name)["Table"]
        except ClientError as error:
            if _code(error) == "EntityNotFoundException":
                return None
            raise

    def partitions_of(self, database: str, name: str) -> dict[tuple[str, ...], dict[str, Any]]:
        since = time.perf_counter()
        found: dict[tuple[str, ...], dict[str, Any]] = {}
        for page in self.glue.get_paginator("get_partitions").paginate(DatabaseName=database, TableName=name):
            for partition in page.get("Partitions", []):
                found[tuple(partition["Values"])] = partition
        self.stats.add_time("catalog_reads", since)
        return found

    def database_exists(self, database: str) -> bool:
        try:
            self.read(self.glue.get_database, Name=database)
            return True
        except ClientError as error:
            if _code(error) != "EntityNotFoundException":
                raise
            return False

    def ensure_database(self, database: str, exists: bool) -> None:
        if not exists:
            try:
                self.write(self.glue.create_database, DatabaseInput={"Name": database})
            except ClientError as again:
                if _code(again) != "AlreadyExistsException":
                    raise

    # ------------------------------------------------------------ the run

    def files_to_classify(self, targets: dict[str, Any]) -> int:
        """The number of files the S3 targets' classification would read (each folder's first
        SampleSize), listing each target once (the crawl reuses the listings)."""
        count = 0
        for target in targets.get("S3Targets") or []:
            exclusions = list(target.get("Exclusions") or [])
            key = (target.get("Path") or "", tuple(exclusions))
            if key not in self.listed:
                self.listed[key] = self.list_target(key[0], exclusions)
            sample = target.get("SampleSize")
            count += sum(min(len(objects), sample) if sample else len(objects)
                         for objects in self.listed[key][2].values())
        return count

    def go(self) -> dict[str, Any]:
        targets = self.crawler.get("Targets") or {}
        cancelled = False
        try:
            if self.hand_off is not None:
                files = self.files_to_classify(targets)
                if self.hand_off(files):
                    # Nothing written: the caller runs the crawl elsewhere (Spark).
                    return {"HandOff": True, "Files": files}
            exists = self.database_exists(self.database)
            # Every S3 target is listed, classified and grouped before anything is written, so a
            # crawl over its TableThreshold fails having written nothing (the database included).
            planned: list[discover.TablePlan] = []
            for target in targets.get("S3Targets") or []:
                self.check_stop()
                planned.extend(self.plan_s3(target, exists))
            if self.table_threshold is not None and len(planned) > self.table_threshold:
                raise CrawlFailed(f"The crawler detected {len(planned)} tables, more than its TableThreshold of "
                                  f"{self.table_threshold}: nothing was written to the Data Catalog")
            self.ensure_database(self.database, exists)
            for write in self.deferred:
                self.check_stop()
                write()
            for plan in planned:
                self.check_stop()
                self.write_plan(plan, self.database)
            for target in targets.get("CatalogTargets") or []:
                self.check_stop()
                self.crawl_catalog(target)
            for target in targets.get("DeltaTargets") or []:
                for path in target.get("DeltaTables") or []:
                    self.check_stop()
                    self.crawl_delta(path, target)
            for target in targets.get("IcebergTargets") or []:
                for path in target.get("Paths") or []:
                    self.check_stop()
                    self.crawl_iceberg(path, target)
            if not self.new_only and (targets.get("S3Targets") or []):
                self.check_stop()
                self.gone_tables([t["Path"] for t in targets["S3Targets"] if t.get("Path")])
        except _Stopped:
            cancelled = True
        except ClientError as error:
            raise CrawlFailed(f"{_code(error)}: {error.response.get('Error', {}).get('Message', error)}") from None
        finally:
            self.pool.shutdown(wait=True)
            self.listed.clear()
        s = self.stats
        s.seconds["total"] = time.perf_counter() - self.started
        self.tick(0)
        summary = {"Database": self.database, "Tables": s.tables, "TablesCreated": s.tables_created,
                   "TablesUpdated": s.tables_updated, "TablesDeleted": s.tables_deleted,
                   "PartitionsCreated": s.partitions_created, "PartitionsUpdated": s.partitions_updated,
                   "PartitionsDeleted": s.partitions_deleted, "FilesRead": s.files_read,
                   "FilesSkipped": s.files_skipped, "Log": s.log[:100],
                   "Seconds": {k: round(v, 3) for k, v in s.seconds.items()}}
        return {"TablesCreated": s.tables_created, "TablesUpdated": s.tables_updated,
                "TablesDeleted": s.tables_deleted, "PartitionsCreated": s.partitions_created,
                "FilesSkipped": s.files_skipped, "Cancelled": cancelled, "Summary": json.dumps(summary)}

    # ------------------------------------------------------------ S3 targets

    def list_target(self, path: str, exclusions: list[str]) -> tuple[str, str, dict[tuple[str, ...], list]]:
        """(bucket, prefix, folder -> visible objects) of an include path."""
        try:
            bucket, prefix = s3files.split_uri(path)
        except ValueError as error:
            raise CrawlFailed(str(error)) from None
        excluded = s3files.Exclusions(exclusions)
        folders: dict[tuple[str, ...], list[s3files.S3Object]] = {}
        since = time.perf_counter()
        try:
            for item in s3files.list_objects(self.s3, bucket, prefix):
                relative = item.key[len(prefix) + 1:] if prefix else item.key
                if not s3files.visible(relative) or excluded(relative):
                    continue
                *parts, _ = relative.split("/")
                folders.setdefault(tuple(parts), []).append(item)
        except ClientError as error:
            if s3files.unreadable(error):
                raise CrawlFailed(f"Cannot read the target path {path}: {_code(error)}") from None
            raise
        self.stats.add_time("listing", since)
        return bucket, prefix, folders

    def classify_folders(self, bucket: str, folders: dict[tuple[str, ...], list], sample: Optional[int]
                         ) -> list[discover.Folder]:
        """Each folder's schema from up to ``sample`` of its files (UNKNOWN files skipped)."""
        jobs = [(rel, obj) for rel, objects in sorted(folders.items())
                for obj in (objects[:sample] if sample else objects)]
        results: dict[tuple[str, ...], list[cls.Classified]] = {}
        sampled: dict[tuple[str, ...], int] = {}
        since = time.perf_counter()
        done = 0
        for batch in _chunks(jobs, self.classify_batch):
            self.check_stop()
            found = self.classify_files(bucket, [(obj.key, obj.size) for _, obj in batch], self.custom)
            for (rel, _), result in zip(batch, found):
                self.stats.files_read += 1
                sampled[rel] = sampled.get(rel, 0) + 1
                if result is None:
                    self.stats.files_skipped += 1
                else:
                    results.setdefault(rel, []).append(result)
            done += len(batch)
            elapsed = time.perf_counter() - since
            self.tick(elapsed / done * (len(jobs) - done) if done else None)
        self.stats.add_time("classify", since)
        out = []
        for rel, agreed in results.items():
            # The folder's schema: the files agreeing with the most common format, merged.
            signatures: dict[tuple, list[cls.Classified]] = {}
            for item in agreed:
                signatures.setdefault(item.signature(), []).append(item)
            agreeing = max(signatures.values(), key=len)
            self.stats.files_skipped += len(agreed) - len(agreeing)
            columns: list[dict[str, str]] = []
            for item in agreeing:
                columns = cls.merge_columns(columns, item.columns)
            schema = cls.Classified(agreeing[0].classification, columns, agreeing[0].compression,
                                    dict(agreeing[0].options))
            objects = folders[rel]
            sizes = sum(o.size for o in objects)
            sampled_records = [i.records for i in agreeing if i.records is not None]
            records = 0
            if sampled_records:
                # Binary formats: exact counts of the files read, scaled to the folder's files.
                # (the share of the folder's files that are data is the sampled files' share).
                data_files = len(objects) * len(agreeing) / max(1, sampled[rel])
                records = round(sum(sampled_records) / len(sampled_records) * data_files)
            out.append(discover.Folder(rel, schema, objects=len(objects), bytes=sizes, records=records))
        return out

    def classify_here(self, bucket: str, files: list[tuple[str, int]], custom: list[dict[str, Any]]
                      ) -> list[Optional[cls.Classified]]:
        """The default ``classify_files``: WORKERS ranged readers of this process."""
        return list(self.pool.map(lambda file: cls.classify(self.s3, bucket, file[0], file[1], custom), files))

    def plan_s3(self, target: dict[str, Any], database_exists: bool = True) -> list[discover.TablePlan]:
        """The tables one S3 target holds (listed, classified and grouped; nothing written).
        CRAWL_NEW_FOLDERS_ONLY's new folders of known tables are added to them here."""
        path = target.get("Path") or ""
        exclusions = list(target.get("Exclusions") or [])
        listed = self.listed.pop((path, tuple(exclusions)), None)
        bucket, prefix, folders = listed or self.list_target(path, exclusions)
        sample = target.get("SampleSize")
        base_uri = f"s3://{bucket}" + (f"/{prefix}" if prefix else "")
        known: dict[str, tuple[dict[str, Any], dict[tuple[str, ...], dict[str, Any]]]] = {}
        if self.new_only and database_exists:
            # Only folders added since the last crawl are read: drop those already in the catalog.
            known = self.crawled_tables(base_uri)
            locations = {loc for _, (table, parts) in known.items() for loc in
                         [table["StorageDescriptor"].get("Location", "")] +
                         [p["StorageDescriptor"].get("Location", "") for p in parts.values()]}
            # Folders above a known table were crawled before too (their files were not data).
            locations |= {loc[:i + 1] for loc in list(locations) for i, ch in enumerate(loc) if ch == "/"}
            folders = {rel: objs for rel, objs in folders.items()
                       if "/".join((base_uri,) + rel) + "/" not in locations}
        classified = self.classify_folders(bucket, folders, sample)
        if not classified:
            self.stats.log.append(f"no data files under {path}")
            return []
        base_name = prefix.rsplit("/", 1)[-1] if prefix else bucket
        base_level = 1 + (len(prefix.split("/")) if prefix else 0)
        if self.new_only and known:
            classified = self.add_to_known(known, classified, base_uri)
            if not classified:
                return []
        plans, left = discover.plan_tables(classified, base_uri, base_name, combine=self.combine,
                                           level=self.level, base_level=base_level)
        for folder in left:
            self.stats.files_skipped += folder.objects
            self.stats.log.append(f"skipped {base_uri}/{'/'.join(folder.rel)}: beside other tables' folders")
        return plans

    def crawled_tables(self, base_uri: str) -> dict[str, tuple[dict[str, Any], dict[tuple[str, ...], dict]]]:
        out = {}
        for table in self.tables_by_crawler(self.database):
            location = (table.get("StorageDescriptor") or {}).get("Location", "")
            if location.startswith(base_uri.rstrip("/") + "/") or location.rstrip("/") == base_uri.rstrip("/"):
                out[table["Name"]] = (table, self.partitions_of(self.database, table["Name"]))
        return out

    def add_to_known(self, known: dict[str, tuple[dict[str, Any], dict]], folders: list[discover.Folder],
                     base_uri: str) -> list[discover.Folder]:
        """CRAWL_NEW_FOLDERS_ONLY: new folders under an existing table become its partitions, with
        the table's schema untouched; the others go through grouping as new tables."""
        rest = []
        by_location = sorted(((t["StorageDescriptor"]["Location"].rstrip("/") + "/", t, parts)
                              for t, parts in known.values()), key=lambda x: -len(x[0]))
        for folder in folders:
            uri = "/".join((base_uri,) + folder.rel) + "/"
            owner = next(((loc, t) for loc, t, _ in by_location if uri.startswith(loc)), None)
            if owner is None:
                rest.append(folder)
                continue
            location, table = owner
            keys = [k["Name"] for k in table.get("PartitionKeys") or []]
            segments = uri[len(location):].strip("/").split("/") if uri != location else []
            if len(segments) != len(keys):
                self.stats.log.append(f"skipped new folder {uri}: does not match {table['Name']}'s partition keys")
                self.stats.files_skipped += folder.objects
                continue
            values = []
            for key, segment in zip(keys, segments):
                parsed = discover.parse_segment(segment)
                values.append(parsed[1] if parsed and parsed[0] == key else discover.unquote(segment))
            # Written after every target is planned (the TableThreshold check comes first).
            self.deferred.append(functools.partial(self.add_partitions, self.database, table,
                                                   [(tuple(values), folder, uri)], {}))
        return rest

    # ------------------------------------------------------------ writing a table

    def stats_parameters(self, folders: Sequence[discover.Folder]) -> dict[str, str]:
        objects = sum(f.objects for f in folders)
        size = sum(f.bytes for f in folders)
        records = sum(f.records for f in folders)
        out = {"objectCount": str(objects), "sizeKey": str(size), "UPDATED_BY_CRAWLER": self.name, **SERIALIZER}
        if records:
            out.update({"recordCount": str(records), "averageRecordSize": str(max(1, size // records))})
        return out

    def unique_name(self, database: str, name: str, location: str) -> str:
        """Two roots with one name: the second gets a hash of its location, as AWS does."""
        taken = self.seen_tables.get((database, name))
        if taken is None or taken == location:
            return name
        return f"{name}_{hashlib.md5(location.encode()).hexdigest()[:8]}"

    def write_plan(self, plan: discover.TablePlan, database: str, fixed_name: Optional[str] = None) -> None:
        name = fixed_name or self.unique_name(database, self.prefix + plan.name, plan.location)
        existing = self.get_table(database, name)
        if existing is not None and not fixed_name:
            old_location = (existing.get("StorageDescriptor") or {}).get("Location", "").rstrip("/")
            if old_location and old_location != plan.location.rstrip("/"):
                name = f"{name}_{hashlib.md5(plan.location.encode()).hexdigest()[:8]}"
                existing = self.get_table(database, name)
        self.seen_tables[(database, name)] = plan.location
        self.stats.tables.append(f"{database}.{name}")
        params = {**cls.format_parameters(plan.schema), **self.stats_parameters(plan.folders)}
        keys = [{"Name": k, "Type": "string"} for k in plan.keys]
        since = time.perf_counter()
        if existing is None:
            table_input = {"Name": name, "TableType": "EXTERNAL_TABLE", "Owner": "owner", "Retention": 0,
                           "StorageDescriptor": cls.storage_descriptor(plan.schema, plan.location, plan.columns, params),
                           "PartitionKeys": keys, "Parameters": dict(params)}
            extra: dict[str, Any] = {}
            if keys and self.create_index:
                extra["PartitionIndexes"] = [{"IndexName": INDEX_NAME, "Keys": [k["Name"] for k in keys]}]
            self.write(self.glue.create_table, DatabaseName=database, TableInput=table_input, **extra)
            self.stats.tables_created += 1
            table: Optional[dict[str, Any]] = {**table_input, "DatabaseName": database}
            registered: dict[tuple[str, ...], dict[str, Any]] = {}
        else:
            table = self.update_table(database, existing, plan, params, keys)
            registered = self.partitions_of(database, name)
        self.stats.add_time("tables", since)
        if table is None:
            return
        if plan.keys:
            rows = [(values, folder, "/".join((plan.location.rstrip("/"),) + folder.rel[len(plan.root):]) + "/")
                    for values, folder in plan.partitions]
            self.add_partitions(database, table, rows, registered)
            if not self.new_only:
                listed = {values for values, _ in plan.partitions}
                self.gone_partitions(database, name, [v for v in registered if v not in listed])
        self.tick()

    def update_table(self, database: str, existing: dict[str, Any], plan: discover.TablePlan,
                     params: dict[str, str], keys: list[dict[str, str]]) -> Optional[dict[str, Any]]:
        """The table after this crawl (its stored shape when the policy keeps it)."""
        old_sd = existing.get("StorageDescriptor") or {}
        old_keys = [k["Name"].lower() for k in existing.get("PartitionKeys") or []]
        if old_keys != [k["Name"].lower() for k in keys]:
            self.stats.log.append(f"{existing['Name']}: the folders' partition keys {[k['Name'] for k in keys]} "
                                  f"differ from the table's {old_keys}; table left as it is")
            return existing if self.update == "LOG" else None
        columns = plan.columns
        if self.merge_new:
            columns = cls.merge_columns(old_sd.get("Columns") or [], plan.columns)
        sd = cls.storage_descriptor(plan.schema, plan.location, columns, params)
        changed = (_shape(old_sd) != _shape(sd)) or existing.get("Parameters", {}).get("DEPRECATED_BY_CRAWLER")
        if not changed:
            return existing
        if self.update == "LOG" or self.new_only:
            self.stats.log.append(f"{existing['Name']}: schema changed, not updated (SchemaChangePolicy LOG)")
            return existing
        # AWS's UPDATE_IN_DATABASE drops the parameters the crawler did not set.
        table_input = {"Name": existing["Name"], "TableType": existing.get("TableType") or "EXTERNAL_TABLE",
                       "StorageDescriptor": sd, "PartitionKeys": existing.get("PartitionKeys") or keys,
                       "Parameters": dict(params)}
        for optional in ("Description", "Owner", "Retention"):
            if existing.get(optional) is not None:
                table_input[optional] = existing[optional]
        self.write(self.glue.update_table, DatabaseName=database, TableInput=table_input)
        self.stats.tables_updated += 1
        return {**table_input, "DatabaseName": database}

    def add_partitions(self, database: str, table: dict[str, Any],
                       rows: list[tuple[tuple[str, ...], discover.Folder, str]],
                       registered: dict[tuple[str, ...], dict[str, Any]]) -> None:
        table_sd = table.get("StorageDescriptor") or {}
        schema_of_table = _classified_of(table)
        new, changed = [], []
        for values, folder, location in rows:
            params = {**cls.format_parameters(folder.schema), **self.stats_parameters([folder])}
            columns = table_sd.get("Columns") or [] if (self.inherit or schema_of_table is None) \
                else [c for c in folder.schema.columns
                      if c["Name"].lower() not in {k["Name"].lower() for k in table.get("PartitionKeys") or []}]
            if self.inherit and schema_of_table is not None:
                sd = cls.storage_descriptor(schema_of_table, location, columns, params)
            else:
                sd = cls.storage_descriptor(folder.schema, location, columns, params)
            entry = {"Values": list(values), "StorageDescriptor": sd, "Parameters": params}
            old = registered.get(values)
            if old is None:
                new.append(entry)
            elif _shape(old.get("StorageDescriptor") or {}) != _shape(sd) and self.update != "LOG" \
                    and not self.new_only:
                changed.append(entry)
        table_name = table["Name"]
        for batch in _chunks(new, BATCH_CREATE):
            self.check_stop()
            answer = self.write(self.glue.batch_create_partition, DatabaseName=database, TableName=table_name,
                                PartitionInputList=list(batch))
            errors = answer.get("Errors") or []
            self.stats.partitions_created += len(batch) - len(errors)
            for error in errors[:5]:
                detail = error.get("ErrorDetail") or {}
                if detail.get("ErrorCode") != "AlreadyExistsException":
                    self.stats.log.append(f"partition {error.get('PartitionValues')}: {detail.get('ErrorCode')}: "
                                          f"{detail.get('ErrorMessage')}")
            self.tick()
        for batch in _chunks(changed, BATCH_UPDATE):
            self.check_stop()
            entries = [{"PartitionValueList": e["Values"], "PartitionInput": e} for e in batch]
            answer = self.write(self.glue.batch_update_partition, DatabaseName=database, TableName=table_name,
                                Entries=entries)
            self.stats.partitions_updated += len(batch) - len(answer.get("Errors") or [])

    def gone_partitions(self, database: str, table: str, gone: list[tuple[str, ...]]) -> None:
        if not gone:
            return
        if self.delete != "DELETE_FROM_DATABASE":
            self.stats.log.append(f"{table}: {len(gone)} partitions' folders are gone (kept: {self.delete})")
            return
        for batch in _chunks(gone, BATCH_DELETE):
            self.check_stop()
            answer = self.write(self.glue.batch_delete_partition, DatabaseName=database, TableName=table,
                                PartitionsToDelete=[{"Values": list(v)} for v in batch])
            self.stats.partitions_deleted += len(batch) - len(answer.get("Errors") or [])

    def tables_by_crawler(self, database: str) -> list[dict[str, Any]]:
        since = time.perf_counter()
        out: list[dict[str, Any]] = []
        for page in self.glue.get_paginator("get_tables").paginate(DatabaseName=database):
            out.extend(t for t in page.get("TableList", [])
                       if (t.get("Parameters") or {}).get("UPDATED_BY_CRAWLER") == self.name)
        self.stats.add_time("catalog_reads", since)
        return out

    def gone_tables(self, paths: list[str]) -> None:
        """Tables this crawler made under its include paths that this run did not find."""
        roots = [p.rstrip("/").replace("s3a://", "s3://").replace("s3n://", "s3://") + "/" for p in paths]
        found = {name for (db, name) in self.seen_tables if db == self.database}
        for table in self.tables_by_crawler(self.database):
            location = ((table.get("StorageDescriptor") or {}).get("Location") or "").rstrip("/") + "/"
            if table["Name"] in found or not any(location.startswith(r) for r in roots):
                continue
            if self.delete == "DELETE_FROM_DATABASE":
                self.write(self.glue.delete_table, DatabaseName=self.database, Name=table["Name"])
                self.stats.tables_deleted += 1
            elif self.delete == "DEPRECATE_IN_DATABASE":
                params = table.get("Parameters") or {}
                if "DEPRECATED_BY_CRAWLER" in params:
                    continue
                table_input = _table_input(table)
                # Epoch milliseconds, as AWS's crawler writes it (e.g. '1758729127916').
                table_input["Parameters"] = {**params, "DEPRECATED_BY_CRAWLER": str(int(time.time() * 1000))}
                self.write(self.glue.update_table, DatabaseName=self.database, TableInput=table_input)
                self.stats.tables_updated += 1
            else:
                self.stats.log.append(f"table {table['Name']}: its data is gone (kept: LOG)")

    # ------------------------------------------------------------ catalog, Delta, Iceberg targets

    def crawl_catalog(self, target: dict[str, Any]) -> None:
        database = target.get("DatabaseName") or self.database
        for name in target.get("Tables") or []:
            self.check_stop()
            table = self.get_table(database, name)
            if table is None:
                raise CrawlFailed(f"Table {name} not found in database {database}")
            location = (table.get("StorageDescriptor") or {}).get("Location") or ""
            bucket, prefix, folders = self.list_target(location, target.get("Exclusions") or [])
            classified = self.classify_folders(bucket, folders, None)
            if not classified:
                self.stats.log.append(f"table {name}: no data files under {location}")
                continue
            base_uri = f"s3://{bucket}" + (f"/{prefix}" if prefix else "")
            groups: dict[tuple, list[discover.Folder]] = {}
            for folder in classified:
                groups.setdefault((folder.schema.signature(), len(folder.rel)), []).append(folder)
            best = max(groups.values(), key=len)
            self.stats.files_skipped += sum(f.objects for f in classified if f not in best)
            plan = discover.make_plan((), best, base_uri, name)
            stored_keys = [k["Name"] for k in table.get("PartitionKeys") or []]
            if len(stored_keys) == len(plan.keys):
                plan.keys = stored_keys
            self.write_plan(plan, database, fixed_name=name)

    def read_json(self, bucket: str, key: str) -> Any:
        return json.loads(self.s3.get_object(Bucket=bucket, Key=key)["Body"].read())

    def crawl_delta(self, path: str, target: dict[str, Any]) -> None:
        bucket, prefix = s3files.split_uri(path)
        log_prefix = (prefix + "/" if prefix else "") + "_delta_log"
        commits = sorted(o.key for o in s3files.list_objects(self.s3, bucket, log_prefix) if o.key.endswith(".json"))
        metadata = None
        for key in commits:
            body = self.s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode()
            for line in body.splitlines():
                if line.strip():
                    action = json.loads(line)
                    if "metaData" in action:
                        metadata = action["metaData"]
        if metadata is None:
            self.stats.log.append(f"{path}: no Delta log with table metadata")
            return
        fields = json.loads(metadata["schemaString"]).get("fields", [])
        part_cols = [c.lower() for c in metadata.get("partitionColumns") or []]
        columns = [{"Name": f["name"].lower(), "Type": _spark_type(f["type"])} for f in fields]
        location = f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}"
        params = {"classification": "delta", "table_type": "delta", "spark.sql.sources.provider": "delta",
                  "EXTERNAL": "TRUE", "UPDATED_BY_CRAWLER": self.name, **SERIALIZER}
        found = cls.Classified("parquet", [c for c in columns if c["Name"] not in part_cols])
        sd = cls.storage_descriptor(found, location + "/", found.columns, params)
        keys = [c for c in columns if c["Name"] in part_cols]
        self.register_format_table(discover.table_name(location.rsplit("/", 1)[-1]), location, sd, keys, params)

    def crawl_iceberg(self, path: str, target: dict[str, Any]) -> None:
        bucket, prefix = s3files.split_uri(path)
        meta_prefix = (prefix + "/" if prefix else "") + "metadata"
        candidates = [o for o in s3files.list_objects(self.s3, bucket, meta_prefix)
                      if o.key.endswith(".metadata.json")]
        if not candidates:
            self.stats.log.append(f"{path}: no Iceberg metadata")
            return

        def version(key: str) -> tuple[int, str]:
            head = key.rsplit("/", 1)[-1].split("-", 1)[0].split(".")[0]
            return (int(head.lstrip("v")) if head.lstrip("v").isdigit() else -1, key)

        latest = max(candidates, key=lambda o: version(o.key)).key
        metadata = self.read_json(bucket, latest)
        current = metadata.get("current-schema-id", 0)
        schemas = metadata.get("schemas") or [metadata.get("schema") or {}]
        schema = next((s for s in schemas if s.get("schema-id", 0) == current), schemas[-1])
        columns = [{"Name": f["name"], "Type": _iceberg_type(f["type"])} for f in schema.get("fields", [])]
        location = metadata.get("location") or (f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}")
        params = {"table_type": "ICEBERG", "metadata_location": f"s3://{bucket}/{latest}",
                  "UPDATED_BY_CRAWLER": self.name}
        sd = {"Columns": columns, "Location": location}
        self.register_format_table(discover.table_name(location.rstrip("/").rsplit("/", 1)[-1]), location, sd, [],
                                   params)

    def register_format_table(self, name: str, location: str, sd: dict[str, Any], keys: list[dict[str, str]],
                              params: dict[str, str]) -> None:
        name = self.unique_name(self.database, self.prefix + name, location)
        self.seen_tables[(self.database, name)] = location
        self.stats.tables.append(f"{self.database}.{name}")
        table_input = {"Name": name, "TableType": "EXTERNAL_TABLE", "StorageDescriptor": sd,
                       "PartitionKeys": keys, "Parameters": params}
        existing = self.get_table(self.database, name)
        if existing is None:
            self.write(self.glue.create_table, DatabaseName=self.database, TableInput=table_input)
            self.stats.tables_created += 1
        elif (_shape(existing.get("StorageDescriptor") or {}) != _shape(sd)
              or (existing.get("Parameters") or {}).get("metadata_location") != params.get("metadata_location")):
            if self.update == "LOG":
                self.stats.log.append(f"{name}: changed, not updated (SchemaChangePolicy LOG)")
                return
            self.write(self.glue.update_table, DatabaseName=self.database, TableInput=table_input)
            self.stats.tables_updated += 1
        self.tick()


def _shape(sd: dict[str, Any]) -> tuple:
    """What a crawl compares: columns (names and types), format and SerDe."""
    columns = tuple((c.get("Name", "").lower(), (c.get("Type") or "").lower()) for c in sd.get("Columns") or [])
    serde = sd.get("SerdeInfo") or {}
    return (columns, sd.get("InputFormat"), serde.get("SerializationLibrary"),
            tuple(sorted((serde.get("Parameters") or {}).items())))


def _classified_of(table: dict[str, Any]) -> Optional[cls.Classified]:
    """The format of a stored table, to build partitions that inherit from it."""
    sd = table.get("StorageDescriptor") or {}
    params = {**(table.get("Parameters") or {}), **(sd.get("Parameters") or {})}
    classification = params.get("classification")
    if classification not in ("parquet", "orc", "avro", "json", "csv"):
        return None
    options: dict[str, str] = {}
    if classification == "csv":
        serde = sd.get("SerdeInfo") or {}
        library = serde.get("SerializationLibrary") or ""
        sp = serde.get("Parameters") or {}
        options = {"delimiter": params.get("delimiter") or sp.get("field.delim") or sp.get("separatorChar") or ",",
                   "header": "true" if params.get("skip.header.line.count", "0") != "0" else "false",
                   "quoted": params.get("areColumnsQuoted", "false"),
                   "serde": "OpenCSVSerDe" if library == cls.OPEN_CSV else "LazySimpleSerDe",
                   "quote": sp.get("quoteChar", '"')}
    if classification == "avro":
        options = {"avro.schema": params.get("avro.schema.literal", "")}
    return cls.Classified(classification, sd.get("Columns") or [], params.get("compressionType", "none"), options)


def _table_input(table: dict[str, Any]) -> dict[str, Any]:
    allowed = ("Name", "Description", "Owner", "Retention", "StorageDescriptor", "PartitionKeys",
               "TableType", "Parameters", "ViewOriginalText", "ViewExpandedText", "TargetTable")
    return {k: table[k] for k in allowed if k in table}


_SPARK = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint", "float": "float",
          "double": "double", "string": "string", "boolean": "boolean", "binary": "binary", "date": "date",
          "timestamp": "timestamp", "timestamp_ntz": "timestamp"}


def _spark_type(t: Any) -> str:
    if isinstance(t, str):
        return _SPARK.get(t, t)
    kind = t.get("type")
    if kind == "struct":
        return "struct<" + ",".join(f"{f['name']}:{_spark_type(f['type'])}" for f in t.get("fields", [])) + ">"
    if kind == "array":
        return f"array<{_spark_type(t['elementType'])}>"
    if kind == "map":
        return f"map<{_spark_type(t['keyType'])},{_spark_type(t['valueType'])}>"
    return "string"


_ICEBERG = {"long": "bigint", "int": "int", "integer": "int", "string": "string", "boolean": "boolean",
            "float": "float", "double": "double", "date": "date", "timestamp": "timestamp",
            "timestamptz": "timestamp", "binary": "binary", "uuid": "string", "time": "string"}


def _iceberg_type(t: Any) -> str:
    if isinstance(t, str):
        if t.startswith("decimal"):
            return t.replace(" ", "")
        if t.startswith("fixed"):
            return "binary"
        return _ICEBERG.get(t, "string")
    kind = t.get("type")
    if kind == "struct":
        return "struct<" + ",".join(f"{f['name']}:{_iceberg_type(f['type'])}" for f in t.get("fields", [])) + ">"
    if kind == "list":
        return f"array<{_iceberg_type(t['element'])}>"
    if kind == "map":
        return f"map<{_iceberg_type(t['key'])},{_iceberg_type(t['value'])}>"
    return "string"


def run_crawl(crawler: dict[str, Any], *, classifiers: list[dict[str, Any]], glue: Any, s3: Any,
              should_stop: Callable[[], bool], progress: Callable[[dict[str, Any]], None],
              classify_files: Optional[ClassifyFiles] = None, classify_batch: int = CLASSIFY_BATCH,
              hand_off: Optional[Callable[[int], bool]] = None) -> dict[str, Any]:
    """Run one crawl of ``crawler`` (GetCrawler's shape); see the module docstring. Returns the
    counts, ``Cancelled`` when ``should_stop()`` turned true, and ``Summary`` (a JSON string:
    the tables written, the log, and seconds by phase, ``catalog_writes`` among them).

    ``classify_files`` classifies a batch of ``classify_batch`` files (default: 16 threads of this
    process). ``hand_off(files)`` is asked once the S3 targets are listed, before any write, with
    the number of files to classify: True returns ``{"HandOff": True, "Files": files}`` at once
    (the caller runs the crawl elsewhere, e.g. on Spark)."""
    return _Run(crawler, classifiers, glue, s3, should_stop, progress, classify_files, classify_batch,
                hand_off).go()
