"""Paimon snapshot, table-snapshot, partition and tag JSON (pure: no store, no wire).

The shapes are pypaimon 2.1.0's (``pypaimon/snapshot/snapshot.py``, ``table_snapshot.py``,
``snapshot_commit.py`` PartitionStatistics, ``api/api_response.py`` Partition,
``tag/tag.py``). A snapshot is kept as the JSON object the client sent, every field included
(unknown ones too: a newer client's fields must survive), and written out the way pypaimon's
``JSON.to_json`` writes it, so the ``snapshot-N`` file is what a filesystem catalog would hold.
"""

from __future__ import annotations

import json
from decimal import Decimal
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping

# Fields pypaimon's Snapshot dataclass requires, with the JSON type each must have.
_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "version": int, "id": int, "schemaId": int, "baseManifestList": str,
    "deltaManifestList": str, "totalRecordCount": int, "deltaRecordCount": int,
    "commitUser": str, "commitIdentifier": int, "commitKind": str, "timeMillis": int,
}
_OPTIONAL: dict[str, type | tuple[type, ...]] = {
    "uuid": str, "baseManifestListSize": int, "deltaManifestListSize": int,
    "changelogManifestList": str, "changelogManifestListSize": int, "indexManifest": str,
    "changelogRecordCount": int, "watermark": int, "statistics": str, "nextRowId": int,
    "properties": dict, "writerVersion": str,
}
_LONG_MIN, _LONG_MAX = -(2 ** 63), 2 ** 63 - 1


class SnapshotFormatError(ValueError):
    """A snapshot, statistics entry or tag that is not what Paimon's JSON allows; the message
    names the field and the rule (the adapter answers 400 with it)."""


def _check(obj: Mapping[str, Any], name: str, kind: type | tuple[type, ...], where: str,
           required: bool) -> None:
    if name not in obj or obj[name] is None:
        if required:
            raise SnapshotFormatError(f"{where}.{name} is required")
        return
    value = obj[name]
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise SnapshotFormatError(f"{where}.{name} must be an integer")
        if not _LONG_MIN <= value <= _LONG_MAX:
            raise SnapshotFormatError(f"{where}.{name} must fit in a 64-bit long")
    elif not isinstance(value, kind):
        raise SnapshotFormatError(f"{where}.{name} must be a {getattr(kind, '__name__', kind)}")


@dataclass(frozen=True)
class Snapshot:
    """A validated snapshot: the fields the catalog acts on, plus the whole object as sent."""

    id: int
    schema_id: int
    uuid: str | None
    time_millis: int
    raw: dict[str, Any]

    def text(self) -> str:
        """The JSON text of the ``snapshot-N`` file (pypaimon's ``JSON.to_json`` layout)."""
        return snapshot_text(self.raw)


def parse_snapshot(obj: Any, where: str = "snapshot") -> Snapshot:
    """Validate a Snapshot JSON object (as decoded from a request or a stored item)."""
    if not isinstance(obj, dict):
        raise SnapshotFormatError(f"{where} must be an object")
    for name, kind in _REQUIRED.items():
        _check(obj, name, kind, where, True)
    for name, kind in _OPTIONAL.items():
        _check(obj, name, kind, where, False)
    if obj["id"] < 1:
        raise SnapshotFormatError(f"{where}.id must be at least 1")
    if obj["schemaId"] < 0:
        raise SnapshotFormatError(f"{where}.schemaId must not be negative")
    return Snapshot(id=obj["id"], schema_id=obj["schemaId"], uuid=obj.get("uuid"),
                    time_millis=obj["timeMillis"], raw=obj)


def snapshot_text(raw: Mapping[str, Any]) -> str:
    """A snapshot object as pypaimon serializes it (``json.dumps(..., ensure_ascii=False)``)."""
    return json.dumps(raw, ensure_ascii=False)


def load_snapshot(text: str | bytes) -> Snapshot:
    """A stored snapshot (item or file text) back into a Snapshot."""
    return parse_snapshot(json.loads(text))


# ------------------------------------------------------------------ partition statistics
@dataclass(frozen=True)
class PartitionDelta:
    """One partition's change in a commit (pypaimon's PartitionStatistics): counts are deltas
    (negative when files are removed), ``last_file_creation_time`` a time in ms."""

    spec: dict[str, str]
    record_count: int = 0
    file_size_in_bytes: int = 0
    file_count: int = 0
    last_file_creation_time: int = 0
    total_buckets: int = 0

    def negated(self) -> "PartitionDelta":
        """The delta that undoes this one (a rollback); the time is kept (max is not undone)."""
        return PartitionDelta(dict(self.spec), -self.record_count, -self.file_size_in_bytes,
                              -self.file_count, self.last_file_creation_time, self.total_buckets)

    def to_json(self) -> dict[str, Any]:
        """As PartitionStatistics JSON."""
        return {"spec": dict(self.spec), "recordCount": self.record_count,
                "fileSizeInBytes": self.file_size_in_bytes, "fileCount": self.file_count,
                "lastFileCreationTime": self.last_file_creation_time, "totalBuckets": self.total_buckets}


def parse_statistics(items: Any, where: str = "statistics") -> list[PartitionDelta]:
    """A commit's ``statistics`` list; entries with the same spec are summed (one update each)."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise SnapshotFormatError(f"{where} must be a list")
    merged: dict[tuple[tuple[str, str], ...], PartitionDelta] = {}
    for n, obj in enumerate(items):
        here = f"{where}[{n}]"
        if not isinstance(obj, dict):
            raise SnapshotFormatError(f"{here} must be an object")
        spec = obj.get("spec") or {}
        if not isinstance(spec, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in spec.items()):
            raise SnapshotFormatError(f"{here}.spec must map partition keys to string values")
        for name in ("recordCount", "fileSizeInBytes", "fileCount", "lastFileCreationTime", "totalBuckets"):
            _check(obj, name, int, here, False)
        delta = PartitionDelta(dict(spec), obj.get("recordCount") or 0, obj.get("fileSizeInBytes") or 0,
                               obj.get("fileCount") or 0, obj.get("lastFileCreationTime") or 0,
                               obj.get("totalBuckets") or 0)
        key = tuple(sorted(spec.items()))
        if key in merged:
            delta = merge_deltas(merged[key], delta)
        merged[key] = delta
    return list(merged.values())


def merge_deltas(a: PartitionDelta, b: PartitionDelta) -> PartitionDelta:
    """Two deltas of the same partition as one."""
    return PartitionDelta(dict(a.spec), a.record_count + b.record_count,
                          a.file_size_in_bytes + b.file_size_in_bytes, a.file_count + b.file_count,
                          max(a.last_file_creation_time, b.last_file_creation_time),
                          max(a.total_buckets, b.total_buckets))


def sum_by_partition(deltas: Iterable[PartitionDelta]) -> list[PartitionDelta]:
    """Deltas of several commits folded into one per partition (in first-seen order)."""
    merged: dict[tuple[tuple[str, str], ...], PartitionDelta] = {}
    for delta in deltas:
        key = tuple(sorted(delta.spec.items()))
        merged[key] = merge_deltas(merged[key], delta) if key in merged else delta
    return list(merged.values())


# ------------------------------------------------------------------ table totals and views
@dataclass(frozen=True)
class Totals:
    """A table's statistics after a snapshot (TableSnapshot's numbers)."""

    record_count: int = 0
    file_size_in_bytes: int = 0
    file_count: int = 0
    last_file_creation_time: int = 0

    def plus(self, deltas: Iterable[PartitionDelta]) -> "Totals":
        """These totals with a commit's deltas added."""
        records, size, files, last = (self.record_count, self.file_size_in_bytes, self.file_count,
                                      self.last_file_creation_time)
        for d in deltas:
            records, size, files = records + d.record_count, size + d.file_size_in_bytes, files + d.file_count
            last = max(last, d.last_file_creation_time)
        return Totals(records, size, files, last)


def table_snapshot_json(snapshot_raw: Mapping[str, Any], totals: Totals) -> dict[str, Any]:
    """TableSnapshot JSON (the body of GetTableSnapshotResponse's ``snapshot``)."""
    return {"snapshot": dict(snapshot_raw), "recordCount": totals.record_count,
            "fileSizeInBytes": totals.file_size_in_bytes, "fileCount": totals.file_count,
            "lastFileCreationTime": totals.last_file_creation_time}


def partition_json(spec: Mapping[str, str], record_count: int, file_size_in_bytes: int, file_count: int,
                   last_file_creation_time: int, total_buckets: int = 0, done: bool = False,
                   created_at: int | None = None, created_by: str | None = None,
                   updated_at: int | None = None, updated_by: str | None = None,
                   options: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Partition JSON of a list-partitions page (pypaimon's ``api_response.Partition``)."""
    return {"spec": dict(spec), "recordCount": record_count, "fileSizeInBytes": file_size_in_bytes,
            "fileCount": file_count, "lastFileCreationTime": last_file_creation_time,
            "totalBuckets": total_buckets, "done": done, "createdAt": created_at, "createdBy": created_by,
            "updatedAt": updated_at, "updatedBy": updated_by,
            "options": dict(options) if options is not None else None}


# ------------------------------------------------------------------------------- tags
def local_datetime_array(when: datetime) -> list[int]:
    """Java LocalDateTime as Jackson writes it: [y, mo, d, h, mi(, s(, ns))], trailing zeros cut."""
    nanos = when.microsecond * 1000
    out = [when.year, when.month, when.day, when.hour, when.minute]
    if when.second or nanos:
        out.append(when.second)
        if nanos:
            out.append(nanos)
    return out


def tag_json(snapshot_raw: Mapping[str, Any], created: datetime | None = None,
             time_retained_seconds: float | None = None) -> dict[str, Any]:
    """The ``tag/tag-NAME`` file: the snapshot's fields plus ``tagCreateTime`` (local time of the
    server, as Paimon's Java writes a LocalDateTime) and ``tagTimeRetained`` (decimal seconds)."""
    out = dict(snapshot_raw)
    if created is not None:
        local = created.astimezone() if created.tzinfo is not None else created
        out["tagCreateTime"] = local_datetime_array(local.replace(tzinfo=None))
    if time_retained_seconds is not None:
        out["tagTimeRetained"] = float(time_retained_seconds)
    return out


def tag_text(snapshot_raw: Mapping[str, Any], created: datetime | None = None,
             time_retained_seconds: float | None = None) -> str:
    """The tag file's text."""
    return json.dumps(tag_json(snapshot_raw, created, time_retained_seconds), ensure_ascii=False)


def now_utc() -> datetime:
    """The current time (aware), for a tag's creation time."""
    return datetime.now(timezone.utc)


def iso_duration(seconds: float | int | str) -> str:
    """A duration as Java's ``Duration.toString`` writes it (ISO-8601, the form Paimon's REST
    answers carry ``tagTimeRetained`` in): ``PT24H``, ``PT1H30M``, ``PT0.5S``, ``PT0S``."""
    total = Decimal(str(seconds))
    sign = "-" if total < 0 else ""
    total = abs(total)
    whole = int(total)
    hours, minutes, secs = whole // 3600, (whole % 3600) // 60, whole % 60
    fraction = total - whole
    out = "PT"
    if hours:
        out += f"{sign}{hours}H"
    if minutes:
        out += f"{sign}{minutes}M"
    if secs or fraction or (not hours and not minutes):
        text = str(secs) if not fraction else f"{secs}.{format(fraction, 'f').split('.')[1].rstrip('0')}"
        out += f"{sign}{text}S"
    return out


def local_datetime_millis(value: Any) -> int | None:
    """Epoch ms of a Java LocalDateTime array ``[y, mo, d, h, mi(, s(, ns))]`` (the writer's local
    time, read as this server's); None when it is not one."""
    if not isinstance(value, list) or len(value) < 5 or not all(isinstance(v, int) for v in value):
        return None
    parts = list(value) + [0] * (7 - len(value))
    try:
        when = datetime(parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], parts[6] // 1000)
    except ValueError:
        return None
    return int(when.astimezone().timestamp() * 1000)
