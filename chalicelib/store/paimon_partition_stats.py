"""Partition statistics a client reports with CreatePartitions (``partitionStatistics``,
``replaceStatistics``; catalog-managed format tables, apache/paimon#9295): folded into the
partition items' ``p_records``, ``p_bytes``, ``p_files``, ``p_last`` (the attributes a Paimon
commit's statistics add up, store/paimon.py).

Paimon's rule (RESTApi.createPartitions, the reference RESTCatalogServer): replacing overwrites
each reported field, adding sums the three counts and keeps the later creation time; a field
reported as unknown (negative) leaves the stored one alone; a report never creates or removes a
partition, and applies all or nothing. Each group of up to ``GROUP`` partitions is one
transaction, conditional on every item's ``revision`` as read (and bumping it, so a Glue
UpdatePartition that read before fails its own condition instead of undoing these).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from chalicelib.attempts import attempts
from chalicelib.store.catalog import get_many
from chalicelib.store.dynamo import dynamo_json as dj
from chalicelib.store.dynamo.conditions import CONDITION_FAILED, classify
from chalicelib.store.dynamo.models import PartitionItem
from chalicelib.store.dynamo.retry import given_up
from chalicelib.store.errors import CommitConflict

GROUP = 100  # TransactWriteItems' limit
_ROUNDS = 5  # re-reads when an item changed between the read and the transaction
_PARTITIONS = PartitionItem.Meta.table_name


@dataclass(frozen=True, slots=True)
class Reported:
    """One partition's reported statistics; None: unknown (reported negative or absent)."""

    records: int | None
    size: int | None
    files: int | None
    last: int | None


def report(table_uid: str, reports: Sequence[tuple[str, Reported]], replace: bool) -> list[str]:
    """Fold ``reports`` (partition sort key, statistics) into the partition items; the keys of
    those that do not exist. When any is missing nothing is written (Paimon's all or nothing);
    otherwise every group of ``GROUP`` is applied atomically, re-read and applied again when an
    item changed meanwhile (CommitConflict after ``_ROUNDS``)."""
    by_key = dict(reports)
    keys = list(by_key)
    found = {item.key: item for item in get_many(PartitionItem, [(table_uid, k) for k in keys])}
    missing = [key for key in keys if key not in found]
    if missing:
        return missing
    for start in range(0, len(keys), GROUP):
        group = keys[start:start + GROUP]
        current = {k: found[k] for k in group}
        for _ in range(_ROUNDS):
            if _apply_group(table_uid, [(k, by_key[k], current[k]) for k in group], replace):
                break
            current = {item.key: item for item in get_many(PartitionItem, [(table_uid, k) for k in group])}
            gone = [k for k in group if k not in current]
            if gone:
                # Deleted since the check: the groups applied before stay (they were whole).
                return gone
        else:
            raise CommitConflict()
    return []


def _number(value: object) -> int | None:
    return None if value is None else int(value)  # type: ignore[call-overload]


def _update(table_uid: str, key: str, stats: Reported, item: object, replace: bool) -> dict:
    sets: list[str] = []
    adds: list[str] = []
    values: dict[str, dict[str, str]] = {":one": dj.n(1)}
    revision = _number(getattr(item, "revision", None))
    for name, reported in (("p_records", stats.records), ("p_bytes", stats.size), ("p_files", stats.files)):
        if reported is None:
            continue
        values[":" + name] = dj.n(reported)
        (sets if replace else adds).append(name)
    if stats.last is not None:
        stored = _number(getattr(item, "p_last", None))
        if replace or stored is None or stats.last > stored:
            values[":p_last"] = dj.n(stats.last)
            sets.append("p_last")
    expression = ""
    if sets:
        expression += "SET " + ", ".join(f"{name} = :{name}" for name in sets) + " "
    expression += "ADD " + ", ".join([f"{name} :{name}" for name in adds] + ["revision :one"])
    if revision is None:
        condition = "attribute_exists(#k) AND attribute_not_exists(revision)"
    else:
        condition = "#r = :r"
        values[":r"] = dj.n(revision)
    action = {"TableName": _PARTITIONS, "Key": {"table_uid": dj.s(table_uid), "key": dj.s(key)},
              "UpdateExpression": expression, "ConditionExpression": condition,
              "ExpressionAttributeNames": {"#k": "key"} if revision is None else {"#r": "revision"},
              "ExpressionAttributeValues": values}
    return {"Update": action}


def _apply_group(table_uid: str, group: Sequence[tuple[str, Reported, object]], replace: bool) -> bool:
    """One transaction: True if applied, False if an item was not as read."""
    actions = [_update(table_uid, key, stats, item, replace) for key, stats, item in group]
    retried: Exception | None = None
    for _ in attempts():
        try:
            dj.transact_write(actions)
            return True
        except Exception as error:  # noqa: BLE001 - classified; anything but a known outcome is re-raised
            outcome = classify(error)
            if outcome.kind == CONDITION_FAILED:
                return False
            if not outcome.retryable:
                raise
            retried = error
    raise given_up(retried, CommitConflict()) if retried is not None else CommitConflict()
