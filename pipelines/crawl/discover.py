"""From objects to tables: folders of classified files grouped into tables and partitions.

The rule (AWS's): starting at the include path, if every data folder below a folder sits at the
same depth, has the same format (and format options), and "the majority of schemas at a folder
level are similar", the folder is one table and the folders below it are its partitions;
otherwise each child folder is examined the same way. AWS's knowledge center ("How does the AWS
Glue crawler detect the schema?") puts numbers on that: "the partition threshold is higher than
0.7 (70%)" and "the maximum number of different schemas, also referred to as clusters, doesn't
exceed five". Here: the folders' schemas fall into clusters (a folder joins the first cluster
whose first schema shares more than ``SIMILARITY`` of the larger column set's names with its own,
else starts one), and the level is one table when there are at most ``MAX_CLUSTERS`` clusters
and the largest holds more than ``SIMILARITY`` of the folders. (How AWS measures two schemas'
similarity is not documented: the share of column names is this crawler's measure.) Partition
folders named ``k=v`` give key ``k`` (when every folder at that depth agrees), any other name
gives ``partition_N``. ``TableGroupingPolicy: CombineCompatibleSchemas`` makes the include path one
table whenever the formats agree; ``TableLevelConfiguration: N`` puts the tables at the N-th
level of the S3 path (the bucket is level 1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional
from urllib.parse import unquote

from pipelines.crawl.classify import Classified, merge_columns
from pipelines.layout import parse_segment

SIMILARITY = 0.7
MAX_CLUSTERS = 5


@dataclass
class Folder:
    """A folder holding data files (relative to the include path)."""

    rel: tuple[str, ...]
    schema: Classified
    objects: int = 0
    bytes: int = 0
    records: int = 0


@dataclass
class TablePlan:
    """One table the crawl found: its root folder, schema and partition folders."""

    root: tuple[str, ...]
    location: str
    name: str
    schema: Classified
    columns: list[dict[str, str]]
    keys: list[str]
    folders: list[Folder]
    partitions: list[tuple[tuple[str, ...], Folder]] = field(default_factory=list)  # (values, folder)


def table_name(segment: str) -> str:
    """A catalog table name from a folder name, the crawler's way: lower case, anything but
    letters, digits and underscores turned into underscores."""
    return re.sub(r"[^a-z0-9_]", "_", unquote(segment).lower()) or "_"


def _similar(a: list[dict[str, str]], b: list[dict[str, str]]) -> bool:
    names_a, names_b = {c["Name"].lower() for c in a}, {c["Name"].lower() for c in b}
    if not names_a or not names_b:
        return False
    return len(names_a & names_b) / max(len(names_a), len(names_b)) > SIMILARITY


def clusters(folders: list[Folder]) -> list[list[Folder]]:
    """The folders grouped by similar schemas: each joins the first cluster whose first folder's
    schema it is similar to, in order."""
    found: list[list[Folder]] = []
    for f in folders:
        for cluster in found:
            if _similar(cluster[0].schema.columns, f.schema.columns):
                cluster.append(f)
                break
        else:
            found.append([f])
    return found


def compatible(folders: list[Folder], root: tuple[str, ...], combine: bool = False) -> bool:
    """Whether the folders below ``root`` are partitions of one table rooted there."""
    depths = {len(f.rel) - len(root) for f in folders}
    if len(depths) != 1:
        return False
    first = folders[0].schema
    if any(f.schema.signature() != first.signature() for f in folders):
        return False
    if combine:
        return True
    grouped = clusters(folders)
    return len(grouped) <= MAX_CLUSTERS and max(len(c) for c in grouped) / len(folders) > SIMILARITY


def _under(rel: tuple[str, ...], root: tuple[str, ...]) -> bool:
    return rel[:len(root)] == root


def plan_tables(folders: list[Folder], base_uri: str, base_name: str, *, combine: bool = False,
                level: Optional[int] = None, base_level: int = 1) -> tuple[list[TablePlan], list[Folder]]:
    """Tables for the data folders under one include path (``base_uri``, at absolute S3 level
    ``base_level``), and the folders left out (data beside folders of another table)."""
    plans: list[TablePlan] = []
    left: list[Folder] = []

    def place(root: tuple[str, ...], below: list[Folder]) -> None:
        if not below:
            return
        if level is not None and base_level + len(root) >= level:
            # The configured table level: everything below is one table; if formats differ
            # there, the biggest agreeing group is the table and the rest is left out.
            groups: dict[tuple, list[Folder]] = {}
            for f in below:
                groups.setdefault((f.schema.signature(), len(f.rel)), []).append(f)
            best = max(groups.values(), key=len)
            plans.append(make_plan(root, best, base_uri, base_name))
            left.extend(f for f in below if f not in best)
            return
        if level is None and compatible(below, root, combine=combine and not root):
            plans.append(make_plan(root, below, base_uri, base_name))
            return
        children: dict[str, list[Folder]] = {}
        for f in below:
            if len(f.rel) == len(root):
                left.append(f)  # files beside folders that are tables of their own
            else:
                children.setdefault(f.rel[len(root)], []).append(f)
        for name in sorted(children):
            place(root + (name,), children[name])

    place((), folders)
    return plans, left


def make_plan(root: tuple[str, ...], folders: list[Folder], base_uri: str, base_name: str) -> TablePlan:
    folders = sorted(folders, key=lambda f: f.rel)
    depth = len(folders[0].rel) - len(root)
    keys = []
    for i in range(depth):
        parsed = [parse_segment(f.rel[len(root) + i]) for f in folders]
        names = {p[0] for p in parsed if p is not None}
        keys.append(names.pop() if len(names) == 1 and all(p is not None for p in parsed) else f"partition_{i}")
    columns: list[dict[str, str]] = []
    for f in folders:
        columns = merge_columns(columns, f.schema.columns)
    lowered = {k.lower() for k in keys}
    columns = [c for c in columns if c["Name"].lower() not in lowered]
    partitions = []
    for f in folders:
        values: list[str] = []
        for i, key in enumerate(keys):
            segment = f.rel[len(root) + i]
            pair = parse_segment(segment)
            values.append(pair[1] if pair is not None and not key.startswith("partition_") else unquote(segment))
        partitions.append((tuple(values), f))
    location = "/".join((base_uri.rstrip("/"),) + root) + "/"
    name = table_name(root[-1]) if root else table_name(base_name)
    return TablePlan(root, location, name, folders[0].schema, columns, keys, folders, partitions)
